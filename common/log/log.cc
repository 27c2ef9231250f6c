// Log record formatting and the process-wide sink.
#include "common/log/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace trainer::log {
namespace {

std::atomic<int> g_format{static_cast<int>(Format::kText)};
std::atomic<int> g_verbosity{0};
std::mutex g_write_mu;

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kError: return "error";
    case Level::kWarn: return "warn";
    case Level::kInfo: return "info";
    case Level::kDebug: return "debug";
  }
  return "info";
}

std::string Now() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t secs = system_clock::to_time_t(now);
  auto micros = duration_cast<microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(micros));
  return buf;
}

// JSON string escaping (also used for quoted text values); control bytes as \u00XX.
void AppendEscaped(std::string& out, std::string_view s) {
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

bool NeedsQuotes(std::string_view s) {
  if (s.empty()) return true;
  for (unsigned char c : s) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c >= 0x7f) return true;
  }
  return false;
}

void AppendTextValue(std::string& out, std::string_view v) {
  if (!NeedsQuotes(v)) {
    out += v;
    return;
  }
  out += '"';
  AppendEscaped(out, v);
  out += '"';
}

void Write(Level level, std::string_view msg, Fields fields) {
  std::string line =
      FormatRecord(static_cast<Format>(g_format.load()), level, msg, fields, Now());
  line += '\n';
  std::lock_guard<std::mutex> lock(g_write_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

void SetFormat(Format format) { g_format = static_cast<int>(format); }
void SetVerbosity(int v) { g_verbosity = v; }
bool V(int v) { return v <= g_verbosity.load(std::memory_order_relaxed); }

std::string FormatRecord(Format format, Level level, std::string_view msg, Fields fields,
                         std::string_view timestamp) {
  std::string out;
  out.reserve(64 + msg.size());
  if (format == Format::kJson) {
    out += "{\"ts\":\"";
    AppendEscaped(out, timestamp);
    out += "\",\"level\":\"";
    out += LevelName(level);
    out += "\",\"msg\":\"";
    AppendEscaped(out, msg);
    out += '"';
    for (const auto& [k, v] : fields) {
      out += ",\"";
      AppendEscaped(out, k);
      out += "\":\"";
      AppendEscaped(out, v);
      out += '"';
    }
    out += '}';
    return out;
  }
  out += "ts=";
  out += timestamp;
  out += " level=";
  out += LevelName(level);
  out += " msg=";
  AppendTextValue(out, msg);
  for (const auto& [k, v] : fields) {
    out += ' ';
    out += k;
    out += '=';
    AppendTextValue(out, v);
  }
  return out;
}

void Info(std::string_view msg, Fields fields) { Write(Level::kInfo, msg, fields); }
void Warn(std::string_view msg, Fields fields) { Write(Level::kWarn, msg, fields); }
void Error(std::string_view msg, Fields fields) { Write(Level::kError, msg, fields); }
void Debug(int v, std::string_view msg, Fields fields) {
  if (V(v)) Write(Level::kDebug, msg, fields);
}

}  // namespace trainer::log

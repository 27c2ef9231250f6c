// Log record formatting and the process-wide sink. JSON strings are escaped by RapidJSON's
// writer; text values follow logfmt (quoted only when they must be). Invalid UTF-8 becomes
// U+FFFD in both formats so every line stays valid for log shippers.
#include "common/log/log.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

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
    case Level::kError:
      return "error";
    case Level::kWarn:
      return "warn";
    case Level::kInfo:
      return "info";
    case Level::kDebug:
      return "debug";
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

// Length of the valid UTF-8 sequence starting at s[i], or 0.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t min;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// `s` with every invalid UTF-8 byte replaced by U+FFFD.
std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void JsonString(JsonWriter& w, std::string_view s) {
  std::string valid = ValidUtf8(s);
  w.String(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
}

// logfmt: bare when the value has no spaces, quotes, '=' or control bytes; else a JSON string.
bool NeedsQuotes(std::string_view s) {
  if (s.empty()) return true;
  for (unsigned char c : s) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
  }
  return ValidUtf8(s) != s;
}

void AppendTextValue(std::string& out, std::string_view v) {
  if (!NeedsQuotes(v)) {
    out += v;
    return;
  }
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  JsonString(w, v);
  out.append(buf.GetString(), buf.GetSize());
}

// Keys are written bare, so characters that would break the key=value grammar become '_'.
void AppendTextKey(std::string& out, std::string_view k) {
  if (k.empty()) {
    out += '_';
    return;
  }
  for (unsigned char c : k) {
    bool breaks_grammar = c <= ' ' || c == '"' || c == '=' || c >= 0x7f;
    out += breaks_grammar ? '_' : static_cast<char>(c);
  }
}

void Write(Level level, std::string_view msg, Fields fields) {
  try {
    std::string line =
        FormatRecord(static_cast<Format>(g_format.load()), level, msg, fields, Now());
    line += '\n';
    std::lock_guard<std::mutex> lock(g_write_mu);
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  } catch (...) {
    // Logging must never take the process down (bad_alloc, a failing mutex).
  }
}

}  // namespace

void SetFormat(Format format) { g_format = static_cast<int>(format); }
void SetVerbosity(int v) { g_verbosity = v; }
bool V(int v) { return v <= g_verbosity.load(std::memory_order_relaxed); }

std::string FormatRecord(Format format, Level level, std::string_view msg, Fields fields,
                         std::string_view timestamp) {
  if (format == Format::kJson) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("ts");
    JsonString(w, timestamp);
    w.Key("level");
    JsonString(w, LevelName(level));
    w.Key("msg");
    JsonString(w, msg);
    for (const auto& [k, v] : fields) {
      std::string key = ValidUtf8(k);
      w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
      JsonString(w, v);
    }
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize());
  }
  std::string out;
  out.reserve(64 + msg.size());
  out += "ts=";
  out += timestamp;
  out += " level=";
  out += LevelName(level);
  out += " msg=";
  AppendTextValue(out, msg);
  for (const auto& [k, v] : fields) {
    out += ' ';
    AppendTextKey(out, k);
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

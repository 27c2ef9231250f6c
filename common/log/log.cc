// Log record formatting and the process-wide sink. JSON strings are escaped by RapidJSON's
// writer; text values follow logfmt (quoted only when they must be). Invalid UTF-8 becomes
// U+FFFD in both formats so every line stays valid for log shippers.
#include "common/log/log.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <atomic>
#include <charconv>
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

std::atomic<int> g_time_encoding{static_cast<int>(TimeEncoding::kDefault)};

// Go's strconv.FormatFloat(f, 'f', -1, 64): the shortest digits that read back as f.
std::string ShortestFixed(double f) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(f);
}

// "2006-01-02T15:04:05" of t's second, in UTC.
std::string DateTime(int64_t unix_seconds) {
  std::time_t secs = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

// ".123456789" for nanos, with the trailing zeros trimmed; "" for a whole second.
std::string TrimmedNanos(int64_t nanos) {
  if (nanos == 0) return "";
  char buf[16];
  std::snprintf(buf, sizeof(buf), ".%09lld", static_cast<long long>(nanos));
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  return s;
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

void Write(Level level, std::string_view msg, Fields fields, const Where& where, int v = 1) {
  try {
    const auto format = static_cast<Format>(g_format.load());
    const std::string caller = format == Format::kJson ? ShortCaller(where) : std::string();
    std::string line =
        FormatRecord(format, level, msg, fields,
                     FormatTime(static_cast<TimeEncoding>(g_time_encoding.load()),
                                std::chrono::system_clock::now()),
                     Origin{caller, v});
    line += '\n';
    std::lock_guard<std::mutex> lock(g_write_mu);
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  } catch (...) {
    // Logging must never take the process down (bad_alloc, a failing mutex).
  }
}

// zap's name for a level: logr's V(v) is zap level -v, which zap names "debug" for -1 and
// "Level(-v)" below it.
std::string JsonLevelName(Level level, int v) {
  if (level == Level::kDebug && v >= 2) return "Level(-" + std::to_string(v) + ")";
  return std::string(LevelName(level));
}

}  // namespace

void SetFormat(Format format) { g_format = static_cast<int>(format); }
void SetVerbosity(int v) { g_verbosity = v; }
bool V(int v) { return v <= g_verbosity.load(std::memory_order_relaxed); }

std::optional<TimeEncoding> ParseTimeEncoding(std::string_view name) {
  static constexpr std::pair<std::string_view, TimeEncoding> kNames[] = {
      {"epoch", TimeEncoding::kEpoch},     {"millis", TimeEncoding::kMillis},
      {"nano", TimeEncoding::kNano},       {"iso8601", TimeEncoding::kIso8601},
      {"rfc3339", TimeEncoding::kRfc3339}, {"rfc3339nano", TimeEncoding::kRfc3339Nano},
  };
  for (const auto& [n, e] : kNames) {
    if (n == name) return e;
  }
  return std::nullopt;
}

void SetTimeEncoding(TimeEncoding encoding) { g_time_encoding = static_cast<int>(encoding); }

Timestamp FormatTime(TimeEncoding encoding, std::chrono::system_clock::time_point t) {
  const int64_t unix_nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  // Floor division, so times before 1970 keep a non-negative fraction.
  int64_t secs = unix_nanos / 1000000000;
  int64_t nanos = unix_nanos % 1000000000;
  if (nanos < 0) {
    secs -= 1;
    nanos += 1000000000;
  }
  char frac[16];
  switch (encoding) {
    case TimeEncoding::kEpoch:
      return {ShortestFixed(static_cast<double>(unix_nanos) / 1e9), true};
    case TimeEncoding::kMillis:
      return {ShortestFixed(static_cast<double>(unix_nanos) / 1e6), true};
    case TimeEncoding::kNano:
      return {std::to_string(unix_nanos), true};
    case TimeEncoding::kIso8601:
      std::snprintf(frac, sizeof(frac), ".%03lldZ", static_cast<long long>(nanos / 1000000));
      return {DateTime(secs) + frac};
    case TimeEncoding::kRfc3339:
      return {DateTime(secs) + "Z"};
    case TimeEncoding::kRfc3339Nano:
      return {DateTime(secs) + TrimmedNanos(nanos) + "Z"};
    case TimeEncoding::kDefault:
      break;
  }
  std::snprintf(frac, sizeof(frac), ".%06lldZ", static_cast<long long>(nanos / 1000));
  return {DateTime(secs) + frac};
}

std::string FormatRecord(Format format, Level level, std::string_view msg, Fields fields,
                         const Timestamp& timestamp, const Origin& origin) {
  if (format == Format::kJson) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("level");
    JsonString(w, JsonLevelName(level, origin.v));
    w.Key("ts");
    if (timestamp.number) {
      w.RawValue(timestamp.text.data(), timestamp.text.size(), rapidjson::kNumberType);
    } else {
      JsonString(w, timestamp.text);
    }
    if (!origin.caller.empty()) {
      w.Key("caller");
      JsonString(w, origin.caller);
    }
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
  out += timestamp.text;
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

std::string ShortCaller(const Where& where) {
  std::string_view file = where.file;
  size_t last = file.rfind('/');
  if (last != std::string_view::npos && last > 0) {
    size_t dir = file.rfind('/', last - 1);
    file.remove_prefix(dir == std::string_view::npos ? 0 : dir + 1);
  }
  return std::string(file) + ":" + std::to_string(where.line);
}

void Info(std::string_view msg, Fields fields, Where where) {
  Write(Level::kInfo, msg, fields, where);
}
void Warn(std::string_view msg, Fields fields, Where where) {
  Write(Level::kWarn, msg, fields, where);
}
void Error(std::string_view msg, Fields fields, Where where) {
  Write(Level::kError, msg, fields, where);
}
void Debug(int v, std::string_view msg, Fields fields, Where where) {
  if (V(v)) Write(Level::kDebug, msg, fields, where, v);
}

}  // namespace trainer::log

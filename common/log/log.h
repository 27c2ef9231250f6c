// Structured logging for both services: one record per line on stderr, as key=value text or
// JSON lines, with -v verbosity levels like klog/zap's. JSON records are shaped like those of
// upstream's manager (controller-runtime's zap in production mode, with caller annotation):
// {"level":"info","ts":...,"caller":"dir/file.cc:12","msg":...,<fields>}; a debug record of
// verbosity v >= 2 has zap's level name for it, "Level(-v)".
//
//   log::Info("reconciled", {{"trainjob", "ns/name"}, {"duration", "12ms"}});
//   if (log::V(4)) log::Debug(4, "watch event", {{"type", "MODIFIED"}});
//
// Thread-safe (a record is formatted first, then written with one call under a lock) and never
// throws. Text values are bare unless they hold spaces, quotes, '=', '\\' or control bytes, then
// they are JSON-quoted; text keys have such bytes replaced by '_'. JSON lines are escaped by
// RapidJSON. Invalid UTF-8 is replaced by U+FFFD in both formats. Never log Secret data.
#pragma once

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace trainer::log {

enum class Format { kText, kJson };
enum class Level { kError, kWarn, kInfo, kDebug };

void SetFormat(Format format);
// Debug records at level v are printed when v <= verbosity (default 0).
void SetVerbosity(int v);
bool V(int v);

using Fields = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// Where a record is written from: as a defaulted argument, the call site. The compilers'
// builtins, not std::source_location, which the fuzz build's clang lacks with our libstdc++.
struct Where {
  Where(const char* in_file = __builtin_FILE(), int at_line = __builtin_LINE())
      : file(in_file), line(at_line) {}
  const char* file;
  int line;
};

void Info(std::string_view msg, Fields fields = {}, Where where = {});
void Warn(std::string_view msg, Fields fields = {}, Where where = {});
void Error(std::string_view msg, Fields fields = {}, Where where = {});
void Debug(int v, std::string_view msg, Fields fields = {}, Where where = {});

// "dir/file.cc:12": the last directory and name of `where`'s file and its line, as zap's
// ShortCallerEncoder writes a caller.
std::string ShortCaller(const Where& where);

// How the ts field is written: kDefault is RFC 3339 in UTC with microseconds; the others are
// controller-runtime's --zap-time-encoding values with zap's encoders: epoch seconds and
// milliseconds as shortest fractional numbers, nanoseconds as an integer (JSON numbers, not
// strings), ISO 8601 with milliseconds, RFC 3339, and RFC 3339 with nanoseconds whose trailing
// zeros are trimmed (Go's time.RFC3339Nano). Times are UTC, as in a container.
enum class TimeEncoding { kDefault, kEpoch, kMillis, kNano, kIso8601, kRfc3339, kRfc3339Nano };
// The encoding a --zap-time-encoding value names ("epoch", ..., "rfc3339nano"), if any.
std::optional<TimeEncoding> ParseTimeEncoding(std::string_view name);
void SetTimeEncoding(TimeEncoding encoding);

struct Timestamp {
  std::string text;
  bool number = false;  // written bare in JSON
};
Timestamp FormatTime(TimeEncoding encoding, std::chrono::system_clock::time_point t);

// Where a record comes from: its caller (JSON only; none when empty) and, for a debug record,
// its verbosity.
struct Origin {
  std::string_view caller;
  int v = 1;
};

// The formatted record without writing it (for tests).
std::string FormatRecord(Format format, Level level, std::string_view msg, Fields fields,
                         const Timestamp& timestamp, const Origin& origin = {});
inline std::string FormatRecord(Format format, Level level, std::string_view msg, Fields fields,
                                std::string_view timestamp, const Origin& origin = {}) {
  return FormatRecord(format, level, msg, fields, Timestamp{std::string(timestamp)}, origin);
}

}  // namespace trainer::log

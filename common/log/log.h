// Structured logging for both services: one record per line on stderr, as key=value text or
// JSON lines, with -v verbosity levels like klog/zap's.
//
//   log::Info("reconciled", {{"trainjob", "ns/name"}, {"duration", "12ms"}});
//   if (log::V(4)) log::Debug(4, "watch event", {{"type", "MODIFIED"}});
//
// Thread-safe (a record is formatted first, then written with one call under a lock) and never
// throws. Text values are bare unless they hold spaces, quotes, '=', '\\' or control bytes, then
// they are JSON-quoted; text keys have such bytes replaced by '_'. JSON lines are escaped by
// RapidJSON. Invalid UTF-8 is replaced by U+FFFD in both formats. Never log Secret data.
#pragma once

#include <initializer_list>
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

void Info(std::string_view msg, Fields fields = {});
void Warn(std::string_view msg, Fields fields = {});
void Error(std::string_view msg, Fields fields = {});
void Debug(int v, std::string_view msg, Fields fields = {});

// The formatted record without writing it (for tests).
std::string FormatRecord(Format format, Level level, std::string_view msg, Fields fields,
                         std::string_view timestamp);

}  // namespace trainer::log

// Command-line flags for every trainer-cpp binary (trainer-webhook, trainer-controller,
// trainer-render): a declarative table of flags, one parser, one error wording, one --help
// layout, one exit code for bad flags (2). docs/design/options.md says why this is ours and not
// CLI11.
//
// Syntax is Go's flag package (upstream's binaries use it, so their command lines work here):
// "-name" and "--name" are the same flag; values as "--name=value" or "--name value"; a bool
// flag alone means true and takes a value only with "=" ("--leader-elect=false"); "--" ends the
// flags. -h, -help and --help ask for the usage. Positional arguments are errors. Errors name the
// flag as the user wrote it:
//   unknown flag "--nope"
//   flag "--port" needs a value
//   flag "--port": expected an integer, got "x"
//   flag "--port": 70000 is out of range [1, 65535]
//   flag "-o": expected yaml or json, got "xml"
//   unexpected argument "stray"
//
//   Options o;
//   flags::FlagSet fs("trainer-webhook", "Serves the admission webhooks.", {
//       {"port", "Webhook HTTPS port.", flags::Int(&o.port, 1, 65535)},
//       {"filename", "Input file; repeatable.", flags::Append(&o.files, "FILE"), "f"},
//   });
//   RETURN_IF_ERROR(fs.Parse(args));   // defaults are the destinations' values before Parse
//   if (fs.help()) ...                 // print fs.Usage() and exit 0
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status/status.h"

namespace trainer::flags {

// How a flag takes its value. `set` gets the raw text and returns an error saying what was
// expected ("expected an integer, got \"x\""); the parser adds which flag it was.
struct Value {
  std::string placeholder;   // shown in --help: "--port=N"; empty for a bool
  std::string default_text;  // shown as "(default ...)" unless empty, "false" or "0"
  std::function<Status(std::string_view text)> set;
  bool is_bool = false;
};

Value String(std::string* dest, std::string placeholder = "STRING");
// A string that remembers being set (no default).
Value OptionalString(std::optional<std::string>* dest, std::string placeholder = "STRING");
// Repeatable: every occurrence appends.
Value Append(std::vector<std::string>* dest, std::string placeholder = "STRING");
Value Bool(bool* dest);
// One of `choices`: "expected text or json, got \"xml\"".
Value OneOf(std::string* dest, std::vector<std::string> choices);
Value Double(double* dest, double lo, double hi);
// A Go duration ("15s", "1m30s", "500ms"; ParseGoDuration), at least `min`.
Value Duration(std::chrono::milliseconds* dest,
               std::chrono::milliseconds min = std::chrono::milliseconds(0));
// A Go duration to the microsecond ("50us", "50µs", "1ms", "0"), in [min, max].
Value Duration(std::chrono::microseconds* dest, std::chrono::microseconds min,
               std::chrono::microseconds max);
// An integer in [lo, hi] (decimal).
StatusOr<int64_t> ParseInt(std::string_view text, int64_t lo, int64_t hi);
template <typename T>
Value Int(T* dest, int64_t lo, int64_t hi) {
  return {.placeholder = "N",
          .default_text = std::to_string(*dest),
          .set = [dest, lo, hi](std::string_view text) -> Status {
            StatusOr<int64_t> n = ParseInt(text, lo, hi);
            if (!n.ok()) return n.status();
            *dest = static_cast<T>(*n);
            return OkStatus();
          }};
}

// Go's strconv.ParseBool: 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False.
StatusOr<bool> ParseBool(std::string_view text);
// Go's time.ParseDuration for what flags and configuration files use ("15s", "1m30s", "500ms",
// "2h", "0"); errors read `time: invalid duration "15x"` as Go's.
StatusOr<std::chrono::milliseconds> ParseGoDuration(std::string_view text);
// The same to the microsecond (rounded): "50us" is 50 microseconds, not 0 milliseconds.
StatusOr<std::chrono::microseconds> ParseGoDurationMicros(std::string_view text);

struct Flag {
  std::string name;  // as upstream spells it: "health-probe-bind-address", "v"
  std::string help;  // one sentence or more; wrapped in --help
  Value value;
  std::string alias = "";  // another name, usually one letter: "f" for "filename"
};

class FlagSet {
 public:
  // `about` is the paragraph --help prints under the usage line.
  FlagSet(std::string program, std::string about, std::vector<Flag> flags);

  // Parses `args` (without the program name) into the flags' destinations.
  Status Parse(const std::vector<std::string>& args);
  // Whether the flag (by name) was on the command line: explicit flags win over a
  // configuration file.
  bool Given(std::string_view name) const { return given_.count(std::string(name)) > 0; }
  bool help() const { return help_; }
  const std::string& program() const { return program_; }

  // "Usage: <program> [flags]", the about paragraph, then each flag with its help and default.
  std::string Usage() const;

 private:
  const Flag* Find(std::string_view name) const;

  std::string program_;
  std::string about_;
  std::vector<Flag> flags_;
  std::set<std::string> given_;
  bool help_ = false;
};

// Exit codes as upstream's Go mains give them: 2 when the flag package refuses the command line,
// 1 for an error found once the flags are parsed (the configuration file, feature gates, a value
// checked against others). AfterFlags marks an error as such a later one.
inline constexpr int kExitBadFlags = 2;
inline constexpr int kExitBadSettings = 1;
Status AfterFlags(Status s);

// What a main does with a parse result: nullopt to go on; otherwise the exit code, having
// printed the usage to `out` (--help: 0) or "<program>: <error>" to `err` (kExitBadFlags, or
// kExitBadSettings for an error marked by AfterFlags).
std::optional<int> ExitEarly(std::string_view program, const Status& parsed, bool help,
                             const std::string& usage, std::ostream& out, std::ostream& err);

// A small main's flags in one call (the benchmarks' drivers): parses argv[1..] into `fs` and
// checks that each flag of `required` was given (`flag "--file" is required`); then as ExitEarly.
//   if (std::optional<int> code = flags::ParseMain(fs, argc, argv, {"file"})) return *code;
std::optional<int> ParseMain(FlagSet& fs, int argc, const char* const* argv,
                             const std::vector<std::string>& required = {},
                             std::ostream& out = std::cout, std::ostream& err = std::cerr);

// The same for a binary's StatusOr<Options> with a `help` member, on stdout and stderr.
template <typename Options>
std::optional<int> ExitEarly(std::string_view program, const StatusOr<Options>& parsed,
                             std::string (*usage)()) {
  bool help = parsed.ok() && parsed->help;
  return ExitEarly(program, parsed.status(), help, help ? usage() : "", std::cout, std::cerr);
}

}  // namespace trainer::flags

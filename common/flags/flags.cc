// FlagSet and the value kinds (see flags.h).
#include "common/flags/flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ostream>
#include <sstream>

namespace trainer::flags {
namespace {

constexpr size_t kWidth = 100;
constexpr char kIndent[] = "      ";

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

Status Expected(std::string_view what, std::string_view got) {
  return InvalidArgumentError("expected " + std::string(what) + ", got " + Quote(got));
}

// "a", "a or b", "a, b or c".
std::string Alternatives(const std::vector<std::string>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  return out;
}

// `text` wrapped at kWidth, each line starting with `indent`.
std::string Wrap(std::string_view text, std::string_view indent) {
  std::string out, line;
  std::istringstream words{std::string(text)};
  std::string word;
  while (words >> word) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > kWidth) {
      out += std::string(indent) + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += std::string(indent) + line + "\n";
  return out;
}

// "-v", "--filename": one dash for a one-letter name, two otherwise.
std::string Dashed(std::string_view name) {
  return (name.size() == 1 ? "-" : "--") + std::string(name);
}

}  // namespace

Value String(std::string* dest, std::string placeholder) {
  return {.placeholder = std::move(placeholder), .default_text = *dest, .set = [dest](auto text) {
            *dest = std::string(text);
            return OkStatus();
          }};
}

Value OptionalString(std::optional<std::string>* dest, std::string placeholder) {
  return {.placeholder = std::move(placeholder), .set = [dest](auto text) {
            *dest = std::string(text);
            return OkStatus();
          }};
}

Value Append(std::vector<std::string>* dest, std::string placeholder) {
  return {.placeholder = std::move(placeholder), .set = [dest](auto text) {
            dest->emplace_back(text);
            return OkStatus();
          }};
}

Value Bool(bool* dest) {
  return {.default_text = *dest ? "true" : "false",
          .set = [dest](std::string_view text) -> Status {
            StatusOr<bool> b = ParseBool(text);
            if (!b.ok()) return b.status();
            *dest = *b;
            return OkStatus();
          },
          .is_bool = true};
}

Value OneOf(std::string* dest, std::vector<std::string> choices) {
  std::string placeholder;
  for (const std::string& c : choices) placeholder += (placeholder.empty() ? "" : "|") + c;
  return {.placeholder = placeholder,
          .default_text = *dest,
          .set = [dest, choices](std::string_view text) -> Status {
            for (const std::string& c : choices) {
              if (c == text) {
                *dest = c;
                return OkStatus();
              }
            }
            return Expected(Alternatives(choices), text);
          }};
}

Value Double(double* dest, double lo, double hi) {
  std::ostringstream def;
  def << *dest;
  return {.placeholder = "NUMBER",
          .default_text = def.str(),
          .set = [dest, lo, hi](std::string_view text) -> Status {
            std::string s(text);
            char* end = nullptr;
            double d = std::strtod(s.c_str(), &end);
            if (s.empty() || *end != '\0' || !std::isfinite(d)) return Expected("a number", text);
            if (d < lo || d > hi) {
              std::ostringstream range;
              range << s << " is out of range [" << lo << ", " << hi << "]";
              return InvalidArgumentError(range.str());
            }
            *dest = d;
            return OkStatus();
          }};
}

namespace {

// Go's time.Duration.String() for whole milliseconds: "1m30s", "500ms", "0s".
std::string FormatGoDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  if (ms < 1000) return std::to_string(ms) + "ms";
  std::string out;
  if (ms >= 3600000) out += std::to_string(ms / 3600000) + "h";
  if (ms >= 60000) out += std::to_string(ms / 60000 % 60) + "m";
  int64_t rest = ms % 60000;
  out += std::to_string(rest / 1000);
  if (rest % 1000 != 0) {
    std::string frac = std::to_string(1000 + rest % 1000).substr(1);
    while (frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out + "s";
}

// Go's time.Duration.String() for whole microseconds: "50µs", "1.5ms" as "1500µs", "1s".
std::string FormatGoDuration(std::chrono::microseconds d) {
  if (d.count() % 1000 == 0) {
    return FormatGoDuration(std::chrono::duration_cast<std::chrono::milliseconds>(d));
  }
  return std::to_string(d.count()) + "µs";
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// ParseGoDuration in milliseconds, not rounded. Go's time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?
// [a-z]+)+ or "0", with its three messages (invalid, missing unit, unknown unit).
StatusOr<double> ParseGoDurationMs(std::string_view text) {
  const Status invalid = InvalidArgumentError("time: invalid duration " + Quote(text));
  std::string_view s = text;
  const bool negative = !s.empty() && s.front() == '-';
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  if (s == "0") return 0.0;
  if (s.empty()) return invalid;
  double total_ms = 0;
  while (!s.empty()) {
    if (!IsDigit(s.front()) && s.front() != '.') return invalid;
    size_t i = 0;
    while (i < s.size() && IsDigit(s[i])) ++i;
    const bool whole = i > 0;
    bool fraction = false;
    if (i < s.size() && s[i] == '.') {
      const size_t start = ++i;
      while (i < s.size() && IsDigit(s[i])) ++i;
      fraction = i > start;
    }
    if (!whole && !fraction) return invalid;  // "." alone
    const double n = std::strtod(std::string(s.substr(0, i)).c_str(), nullptr);
    s.remove_prefix(i);
    size_t j = 0;
    while (j < s.size() && !IsDigit(s[j]) && s[j] != '.') ++j;
    if (j == 0) return InvalidArgumentError("time: missing unit in duration " + Quote(text));
    const std::string_view unit = s.substr(0, j);
    s.remove_prefix(j);
    static constexpr std::pair<std::string_view, double> kUnits[] = {
        {"ns", 1e-6}, {"us", 1e-3}, {"µs", 1e-3}, {"μs", 1e-3}, {"ms", 1},
        {"s", 1000},  {"m", 60000}, {"h", 3600000}};
    double scale = 0;
    for (const auto& [name, ms] : kUnits) {
      if (unit == name) scale = ms;
    }
    if (scale == 0) {
      return InvalidArgumentError("time: unknown unit " + Quote(unit) + " in duration " +
                                  Quote(text));
    }
    total_ms += n * scale;
  }
  // Go's limit: an int64 of nanoseconds (about 2562047 hours).
  if (total_ms > 9223372036854.775807) return invalid;
  return negative ? -total_ms : total_ms;
}

}  // namespace

Value Duration(std::chrono::microseconds* dest, std::chrono::microseconds min,
               std::chrono::microseconds max) {
  return {.placeholder = "DURATION",
          .default_text = dest->count() == 0 ? "" : FormatGoDuration(*dest),
          .set = [dest, min, max](std::string_view text) -> Status {
            StatusOr<std::chrono::microseconds> d = ParseGoDurationMicros(text);
            if (!d.ok()) return d.status();
            if (*d < min || *d > max) {
              return InvalidArgumentError(std::string(text) + " is out of range [" +
                                          FormatGoDuration(min) + ", " + FormatGoDuration(max) +
                                          "]");
            }
            *dest = *d;
            return OkStatus();
          }};
}

Value Duration(std::chrono::milliseconds* dest, std::chrono::milliseconds min) {
  return {.placeholder = "DURATION",
          .default_text = dest->count() == 0 ? "" : FormatGoDuration(*dest),
          .set = [dest, min](std::string_view text) -> Status {
            StatusOr<std::chrono::milliseconds> d = ParseGoDuration(text);
            if (!d.ok()) return d.status();
            if (*d < min) {
              return InvalidArgumentError(std::string(text) + " is shorter than " +
                                          FormatGoDuration(min));
            }
            *dest = *d;
            return OkStatus();
          }};
}

StatusOr<int64_t> ParseInt(std::string_view text, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return Expected("an integer", text);
  }
  if (v < lo || v > hi) {
    return InvalidArgumentError(std::string(text) + " is out of range [" + std::to_string(lo) +
                                ", " + std::to_string(hi) + "]");
  }
  return v;
}

StatusOr<bool> ParseBool(std::string_view text) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == f) return false;
  }
  return Expected("true or false", text);
}

StatusOr<std::chrono::milliseconds> ParseGoDuration(std::string_view text) {
  ASSIGN_OR_RETURN(double ms, ParseGoDurationMs(text));
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

StatusOr<std::chrono::microseconds> ParseGoDurationMicros(std::string_view text) {
  ASSIGN_OR_RETURN(double ms, ParseGoDurationMs(text));
  return std::chrono::microseconds(std::llround(ms * 1000));
}

FlagSet::FlagSet(std::string program, std::string about, std::vector<Flag> flags)
    : program_(std::move(program)), about_(std::move(about)), flags_(std::move(flags)) {
  // Parse sets help_ itself: a pointer to the member would not survive moving the FlagSet.
  flags_.push_back(
      {"help",
       "Print this help and exit.",
       {.set = [](std::string_view text) { return ParseBool(text).status(); }, .is_bool = true},
       "h"});
}

const Flag* FlagSet::Find(std::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name || (!f.alias.empty() && f.alias == name)) return &f;
  }
  return nullptr;
}

Status FlagSet::Parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      if (i + 1 < args.size())
        return InvalidArgumentError("unexpected argument " + Quote(args[i + 1]));
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      return InvalidArgumentError("unexpected argument " + Quote(arg));
    }
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    const size_t eq = body.find('=');
    const std::string_view written =
        arg.substr(0, arg.size() - body.size() + std::min(eq, body.size()));
    const Flag* flag = Find(body.substr(0, eq));
    if (flag == nullptr) return InvalidArgumentError("unknown flag " + Quote(written));
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (flag->value.is_bool) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return InvalidArgumentError("flag " + Quote(written) + " needs a value");
    }
    if (Status s = flag->value.set(value); !s.ok()) {
      return InvalidArgumentError("flag " + Quote(written) + ": " + s.message());
    }
    given_.insert(flag->name);
    if (flag->name == "help") help_ = *ParseBool(value);
  }
  return OkStatus();
}

std::string FlagSet::Usage() const {
  std::string out = "Usage: " + program_ + " [flags]\n\n" + Wrap(about_, "");
  out += "\nFlags (-name and --name are the same; --name=value or --name value):\n";
  for (const Flag& f : flags_) {
    out += "  " + (f.alias.empty() ? "" : Dashed(f.alias) + ", ") + Dashed(f.name);
    if (!f.value.is_bool) out += "=" + f.value.placeholder;
    out += "\n";
    const std::string& def = f.value.default_text;
    std::string help = f.help;
    if (!def.empty() && def != "false" && def != "0") help += " (default " + def + ")";
    out += Wrap(help, kIndent);
  }
  return out;
}

// The mark is the status code: nothing else in a flag parse fails with kFailedPrecondition.
Status AfterFlags(Status s) {
  if (s.ok()) return s;
  return Status(StatusCode::kFailedPrecondition, s.message());
}

std::optional<int> ExitEarly(std::string_view program, const Status& parsed, bool help,
                             const std::string& usage, std::ostream& out, std::ostream& err) {
  if (!parsed.ok()) {
    err << program << ": " << parsed.message() << "\n";
    return parsed.code() == StatusCode::kFailedPrecondition ? kExitBadSettings : kExitBadFlags;
  }
  if (help) {
    out << usage;
    return 0;
  }
  return std::nullopt;
}

std::optional<int> ParseMain(FlagSet& fs, int argc, const char* const* argv,
                             const std::vector<std::string>& required, std::ostream& out,
                             std::ostream& err) {
  Status parsed = fs.Parse(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
  for (const std::string& name : required) {
    if (!parsed.ok() || fs.help()) break;
    if (!fs.Given(name)) {
      parsed = InvalidArgumentError("flag " + Quote(Dashed(name)) + " is required");
    }
  }
  return ExitEarly(fs.program(), parsed, fs.help(), fs.help() ? fs.Usage() : "", out, err);
}

}  // namespace trainer::flags

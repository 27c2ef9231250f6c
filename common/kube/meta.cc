// Metadata helpers.
#include "common/kube/meta.h"

namespace trainer::kube {

std::string_view MetaString(const json::Value& obj, std::string_view field) {
  const json::Value* meta = obj.Find("metadata");
  const json::Value* v = meta != nullptr ? meta->Find(field) : nullptr;
  if (v == nullptr || !v->IsString()) return {};
  return v->AsString();
}

std::string ObjectKey(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  return key;
}

std::string ObjectKeyOf(const json::Value& obj) { return ObjectKey(Namespace(obj), Name(obj)); }

std::pair<std::string, std::string> SplitObjectKey(std::string_view key) {
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) return {std::string(), std::string(key)};
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

void StripManagedFields(json::Value& obj) {
  if (json::Value* meta = obj.Find("metadata"); meta != nullptr && meta->IsObject()) {
    meta->Erase("managedFields");
  }
}

}  // namespace trainer::kube

#include <cstdio>
#include <ctime>

namespace trainer::kube {
namespace {

std::string Format(std::chrono::system_clock::time_point t, bool micro) {
  using namespace std::chrono;
  const auto secs = time_point_cast<seconds>(t);
  auto frac = duration_cast<microseconds>(t - secs).count();
  time_t tt = system_clock::to_time_t(secs);
  if (frac < 0) {  // before the epoch: keep the fraction positive
    frac += 1000000;
    --tt;
  }
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[96];
  if (micro) {
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long long>(frac));
  } else {
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}

}  // namespace

std::string FormatTime(std::chrono::system_clock::time_point t) { return Format(t, false); }
std::string FormatMicroTime(std::chrono::system_clock::time_point t) { return Format(t, true); }

namespace {

// The number written by the `n` digits at text[pos], or -1 when they are not all there.
int Digits(std::string_view text, size_t pos, size_t n) {
  if (pos + n > text.size()) return -1;
  int value = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// ".123456" (any number of digits, at least one; beyond microseconds they are dropped) at the
// front of `rest`, removed from it. 0 when there is no fraction; nullopt when malformed.
std::optional<int64_t> Fraction(std::string_view& rest) {
  if (rest.empty() || rest.front() != '.') return 0;
  rest.remove_prefix(1);
  int64_t micros = 0;
  int digits = 0;
  for (; !rest.empty() && rest.front() >= '0' && rest.front() <= '9'; rest.remove_prefix(1)) {
    if (digits < 6) micros = micros * 10 + (rest.front() - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  for (; digits < 6; ++digits) micros *= 10;
  return micros;
}

// "Z" (or "z") or "+hh:mm" / "-hh:mm": seconds east of UTC; nullopt when malformed.
std::optional<int> Offset(std::string_view rest) {
  if (rest == "Z" || rest == "z") return 0;
  if (rest.size() != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':') return std::nullopt;
  const int h = Digits(rest, 1, 2);
  const int m = Digits(rest, 4, 2);
  if (h < 0 || h > 23 || m < 0 || m > 59) return std::nullopt;
  return (h * 3600 + m * 60) * (rest[0] == '-' ? -1 : 1);
}

}  // namespace

// By hand, with RFC 3339's field widths and ranges (as metav1.Time's parser, Go's time.Parse,
// checks the date and clock): the controller parses timestamps on every pass, and sscanf +
// timegm showed in its profile.
std::optional<std::chrono::system_clock::time_point> ParseTime(std::string_view text) {
  using namespace std::chrono;
  // 2006-01-02T15:04:05
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  const int y = Digits(text, 0, 4), mo = Digits(text, 5, 2), d = Digits(text, 8, 2);
  const int h = Digits(text, 11, 2), mi = Digits(text, 14, 2), s = Digits(text, 17, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) {
    return std::nullopt;
  }
  const year_month_day date{year(y), month(static_cast<unsigned>(mo)),
                            day(static_cast<unsigned>(d))};
  if (!date.ok()) return std::nullopt;  // month 13, April 31, February 29 of a common year
  std::string_view rest = text.substr(19);
  const std::optional<int64_t> micros = Fraction(rest);
  const std::optional<int> offset = micros ? Offset(rest) : std::nullopt;
  if (!offset) return std::nullopt;
  return system_clock::time_point(sys_days(date) + hours(h) + minutes(mi) + seconds(s) -
                                  seconds(*offset) + microseconds(*micros));
}

}  // namespace trainer::kube

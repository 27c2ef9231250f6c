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

std::optional<std::chrono::system_clock::time_point> ParseTime(std::string_view text) {
  std::tm tm{};
  int consumed = 0;
  const std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::string_view rest = text.substr(consumed);
  int64_t micros = 0;
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    int digits = 0;
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
      if (digits < 6) {
        micros = micros * 10 + (rest.front() - '0');
        ++digits;
      }
      rest.remove_prefix(1);
    }
    for (; digits < 6; ++digits) micros *= 10;
  }
  int64_t offset_seconds = 0;
  if (rest == "Z" || rest == "z") {
    // UTC
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    const int h = (rest[1] - '0') * 10 + (rest[2] - '0');
    const int m = (rest[4] - '0') * 10 + (rest[5] - '0');
    offset_seconds = (h * 3600 + m * 60) * (rest[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  const time_t tt = timegm(&tm);
  return std::chrono::system_clock::from_time_t(tt) - std::chrono::seconds(offset_seconds) +
         std::chrono::microseconds(micros);
}

}  // namespace trainer::kube

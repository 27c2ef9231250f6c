// ASCII case helpers, locale-independent as Go's strings.ToLower and strings.EqualFold are for
// the ASCII names we compare (kinds, flag values, resource names, args).
//
//   AsciiLower("ClusterTrainingRuntime") == "clustertrainingruntime"
//   AsciiEqualFold("True", "true")
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace trainer::strings {

inline char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

inline bool AsciiEqualFold(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return AsciiLower(x) == AsciiLower(y);
         });
}

}  // namespace trainer::strings

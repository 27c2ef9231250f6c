// Helpers shared by the runtime/api unit tests: JSON literals, reading the examples, and a
// failure message that shows both documents.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/files/files.h"
#include "common/json/json.h"
#include "common/yaml/yaml.h"

namespace trainer::api::testing {

// Parses a JSON literal; a bad literal fails the test.
inline json::Value J(std::string_view text) {
  StatusOr<json::Value> v = json::Parse(text);
  INFO(text);
  REQUIRE(v.ok());
  return std::move(v).value();
}

inline std::string ReadFile(const std::string& path) {
  StatusOr<std::string> text = files::ReadFile(path);
  INFO(path);
  REQUIRE(text.ok());
  return *text;
}

inline json::Value ReadYamlFile(const std::string& path) {
  StatusOr<json::Value> v = yaml::ParseYaml(ReadFile(path));
  INFO(path << ": " << v.status().message());
  REQUIRE(v.ok());
  return std::move(v).value();
}

// v[k0][k1]... on a const value; a missing key fails the test.
inline const json::Value& Get(const json::Value& v, std::initializer_list<std::string_view> keys) {
  const json::Value* cur = &v;
  for (std::string_view k : keys) {
    INFO("key " << k);
    cur = cur->Find(k);
    REQUIRE(cur != nullptr);
  }
  return *cur;
}

// The .yaml files of a repo-relative folder, sorted.
inline std::vector<std::string> YamlFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Compares canonically and prints both sides on mismatch.
#define REQUIRE_JSON_EQ(got, want)                                  \
  do {                                                              \
    const std::string _got = ::trainer::json::WritePretty((got));   \
    const std::string _want = ::trainer::json::WritePretty((want)); \
    INFO("got:\n" << _got << "\nwant:\n" << _want);                 \
    REQUIRE(_got == _want);                                         \
  } while (0)

}  // namespace trainer::api::testing

// common/files: whole-file reads and Go's error text.
#include "common/files/files.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "common/files/testing/temp_dir.h"

namespace trainer::files {
namespace {

using testing::TempDir;

TEST_CASE("ReadFile returns every byte", "[file]") {
  TempDir dir;
  const std::string data("line 1\nbinary \0\xff end", 20);
  std::ofstream(dir.path / "f", std::ios::binary) << data;
  StatusOr<std::string> got = ReadFile((dir.path / "f").string());
  REQUIRE(got.ok());
  CHECK(*got == data);
  std::ofstream(dir.path / "empty", std::ios::binary).close();
  CHECK(*ReadFile((dir.path / "empty").string()) == "");
}

TEST_CASE("ReadFile of a missing file is NotFound with Go's text", "[file]") {
  TempDir dir;
  const std::string missing = (dir.path / "missing").string();
  StatusOr<std::string> got = ReadFile(missing);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == StatusCode::kNotFound);
  CHECK(got.status().message() == "open " + missing + ": no such file or directory");
}

}  // namespace
}  // namespace trainer::files

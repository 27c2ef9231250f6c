// TempDir: a fresh directory under the system's temporary directory, removed with everything in
// it on destruction. For unit tests that read files.
//
//   files::testing::TempDir dir;
//   std::string f = dir.Write("a/b.txt", "text");   // creates a/, returns the file's path
#pragma once

#include <filesystem>
#include <string>

namespace trainer::files::testing {

struct TempDir {
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to `rel` under the directory (its parents created); returns its path.
  std::string Write(const std::string& rel, const std::string& text) const;

  std::filesystem::path path;
};

}  // namespace trainer::files::testing

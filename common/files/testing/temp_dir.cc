// TempDir (see temp_dir.h).
#include "common/files/testing/temp_dir.h"

#include <stdlib.h>

#include <fstream>
#include <stdexcept>

namespace trainer::files::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "trainer-test.XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

std::string TempDir::Write(const std::string& rel, const std::string& text) const {
  fs::create_directories((path / rel).parent_path());
  std::ofstream(path / rel, std::ios::binary) << text;
  return (path / rel).string();
}

}  // namespace trainer::files::testing

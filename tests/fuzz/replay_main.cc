// A main for the fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput once on every file
// named on the command line (directories are walked, in sorted order; a missing directory is
// skipped, so tests/fuzz/crashes/<target> may not exist yet). This is how the normal build (gcc,
// no sanitizers required) replays the seed corpus and every saved crash as a unit test, so a
// regression fails `ctest -L unit` without a fuzzing run. A property violation aborts with the
// input's name printed first.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Inputs(const fs::path& arg) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (fs::is_directory(arg, ec)) {
    for (const auto& e : fs::recursive_directory_iterator(arg)) {
      // <name>.cmd files beside saved crashes (hack/fuzz.sh) say how to reproduce them.
      if (e.is_regular_file() && e.path().extension() != ".cmd") {
        out.push_back(e.path());
      }
    }
    std::sort(out.begin(), out.end());
  } else if (fs::exists(arg, ec)) {
    out.push_back(arg);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    for (const fs::path& p : Inputs(argv[i])) {
      std::ifstream in(p, std::ios::binary);
      std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::fprintf(stderr, "replaying %s (%zu bytes)\n", p.c_str(), data.size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
      ++count;
    }
  }
  std::fprintf(stderr, "replayed %zu inputs\n", count);
  // An empty corpus means a wrong path, not a pass.
  return count > 0 ? 0 : 1;
}

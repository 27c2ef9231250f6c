// common/strings/ascii.h: only A-Z change case; bytes outside ASCII pass through unchanged.
#include "common/strings/ascii.h"

#include <catch2/catch.hpp>

namespace trainer::strings {
namespace {

TEST_CASE("AsciiLower lowers A-Z only") {
  CHECK(AsciiLower("ClusterTrainingRuntime") == "clustertrainingruntime");
  CHECK(AsciiLower("nvidia.com/GPU-0 @[`{") == "nvidia.com/gpu-0 @[`{");
  CHECK(AsciiLower("\xc3\x84") == "\xc3\x84");  // not ASCII: unchanged
  CHECK(AsciiLower("") == "");
}

TEST_CASE("AsciiEqualFold compares ignoring ASCII case") {
  CHECK(AsciiEqualFold("True", "tRUE"));
  CHECK(AsciiEqualFold("", ""));
  CHECK_FALSE(AsciiEqualFold("true", "truE "));
  CHECK_FALSE(AsciiEqualFold("@", "`"));  // 0x40 and 0x60 differ by the case bit, not letters
  CHECK_FALSE(AsciiEqualFold("[", "{"));
}

}  // namespace
}  // namespace trainer::strings

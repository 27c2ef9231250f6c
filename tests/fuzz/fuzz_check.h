// Property checks for the fuzz targets in tests/fuzz/. A fuzz target asserts properties of the
// code under test (round trips are stable, replies are well formed), not only that it does not
// crash: a failed FUZZ_CHECK prints what broke and aborts, which libFuzzer reports as a crash
// (and saves the input) and the replay test (replay_main.cc) reports as a failed test.
//
//   FUZZ_CHECK(again.ok(), "re-decoding the encoded TrainJob failed: " +
//   again.status().ToString());
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace trainer::fuzz {

[[noreturn]] inline void Fail(const char* file, int line, const char* cond,
                              const std::string& msg) {
  std::fprintf(stderr, "%s:%d: property violated: %s\n  %s\n", file, line, cond, msg.c_str());
  std::abort();
}

}  // namespace trainer::fuzz

#define FUZZ_CHECK(cond, msg)                                  \
  do {                                                         \
    if (!(cond)) {                                             \
      ::trainer::fuzz::Fail(__FILE__, __LINE__, #cond, (msg)); \
    }                                                          \
  } while (0)

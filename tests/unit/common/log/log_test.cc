// Unit tests for common/log record formatting.
#include "common/log/log.h"

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

namespace trainer::log {
namespace {

TEST_CASE("text records quote only what needs it", "[log]") {
  std::string r = FormatRecord(Format::kText, Level::kInfo, "reconciled job",
                               {{"trainjob", "ns/a"}, {"err", "a \"b\"\n"}, {"empty", ""}}, "T");
  CHECK(r == R"(ts=T level=info msg="reconciled job" trainjob=ns/a err="a \"b\"\n" empty="")");
}

TEST_CASE("json records escape control bytes", "[log]") {
  std::string r = FormatRecord(Format::kJson, Level::kWarn, "x\x01", {{"k", "v\\"}}, "T");
  CHECK(r == R"({"level":"warn","ts":"T","msg":"x\u0001","k":"v\\"})");
}

TEST_CASE("verbosity gates debug records", "[log]") {
  SetVerbosity(2);
  CHECK(V(2));
  CHECK_FALSE(V(3));
  SetVerbosity(0);
}

TEST_CASE("concurrent writers do not crash", "[log]") {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 50; ++i) Debug(9, "never printed", {{"i", "x"}});
    });
  }
  for (auto& th : threads) th.join();
  SUCCEED();
}

}  // namespace
}  // namespace trainer::log

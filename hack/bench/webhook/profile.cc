// trainer-bench-webhook-profile: trainer-webhook's request path without sockets, for instruction
// counts (hack/bench/webhook/callgrind.sh). It wires the webhooks as trainer-webhook does with
// --offline-runtimes (the same reader, runtime registry and metrics) and passes one
// AdmissionReview to AdmissionMux::Serve `--count` times on one path. Under callgrind only
// ServeMany is counted (--toggle-collect), so start-up is left out and the count per request is
// repeatable on a busy machine, where wrk's req/s are not.
//
//   trainer-bench-webhook-profile --runtimes examples/.../torch_distributed.yaml
//       --body hack/bench/webhook/trainjob-create.json --path validate|mutate [--count 1000]
// Prints the first reply (so a run shows what it measured), the count and the mean time per
// request. --evict-bytes N writes over N bytes of other memory before each request (timed apart)
// so every request starts with caches as cold as on a busy host, where the handler's time
// through the apiserver is several times its warm time (docs/benchmarks.md, round 10).
// --floor-lines N (with --evict-bytes) also times, after the same eviction and alternated with
// the requests, reading N cache lines scattered over a 4 MiB buffer with independent loads: the
// least a cold request that misses N lines (cold_lines.sh) could take on this machine, with every
// miss in flight at once.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/files/files.h"
#include "common/flags/flags.h"
#include "common/kube/meta.h"
#include "common/metrics/metrics.h"
#include "runtime/core/registry.h"
#include "webhook/mux.h"
#include "webhook/service.h"
#include "webhook/webhooks.h"

namespace trainer::bench {

// Not inlined: callgrind's --toggle-collect names it.
[[gnu::noinline]] size_t ServeMany(webhook::AdmissionMux& mux, const std::string& path,
                                   const std::string& body, int count) {
  size_t bytes = 0;
  for (int i = 0; i < count; ++i) {
    bytes += mux.Serve(path, "application/json", body).body.size();
  }
  return bytes;
}

void Evict(std::vector<char>& evict, int round) {
  for (size_t at = 0; at < evict.size(); at += 64) evict[at] = static_cast<char>(round + at);
}

// Reads the first byte of every line in `lines` (offsets into `buffer`): the loads do not depend
// on each other, so the core keeps as many misses in flight as it can.
[[gnu::noinline]] uint64_t ReadLines(const std::vector<char>& buffer,
                                     const std::vector<size_t>& lines) {
  uint64_t sum = 0;
  for (size_t at : lines) sum += static_cast<unsigned char>(buffer[at]);
  return sum;
}

// `n` line offsets spread over `buffer` by a fixed pseudo-random walk (the same every run).
std::vector<size_t> ScatteredLines(const std::vector<char>& buffer, int n) {
  std::vector<size_t> lines;
  const size_t count = buffer.size() / 64;
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    lines.push_back((x % count) * 64);
  }
  return lines;
}

struct ColdTimes {
  double request = 0;  // mean seconds per request
  double floor = 0;    // mean seconds to read the floor's lines (0 without them)
};

// `count` requests, each after writing over `evict` (not timed); with `floor_lines`, each followed
// by the same eviction and a timed read of those lines of `floor_buffer`.
ColdTimes ColdMean(webhook::AdmissionMux& mux, const std::string& path, const std::string& body,
                   int count, std::vector<char>& evict, const std::vector<char>& floor_buffer,
                   const std::vector<size_t>& floor_lines) {
  std::chrono::duration<double> request{0}, floor{0};
  volatile uint64_t sink = 0;
  for (int i = 0; i < count; ++i) {
    Evict(evict, i);
    auto start = std::chrono::steady_clock::now();
    mux.Serve(path, "application/json", body);
    request += std::chrono::steady_clock::now() - start;
    if (floor_lines.empty()) continue;
    Evict(evict, i);
    start = std::chrono::steady_clock::now();
    sink = sink + ReadLines(floor_buffer, floor_lines);
    floor += std::chrono::steady_clock::now() - start;
  }
  if (count == 0) return {};
  return {request.count() / count, floor.count() / count};
}

int Main(int argc, char** argv) {
  std::vector<std::string> runtimes;
  std::string body_file, which;
  int count = 1000;
  int evict_bytes = 0;
  int floor_lines = 0;
  flags::FlagSet fs("trainer-bench-webhook-profile",
                    "Serves one AdmissionReview --count times without sockets, for callgrind "
                    "(hack/bench/webhook/callgrind.sh).",
                    {
                        {"runtimes", "Runtimes, as trainer-webhook --offline-runtimes; repeatable.",
                         flags::Append(&runtimes, "FILE")},
                        {"body", "The AdmissionReview.", flags::String(&body_file, "FILE")},
                        {"path", "The webhook.", flags::OneOf(&which, {"validate", "mutate"})},
                        {"count", "Requests.", flags::Int(&count, 0, 1'000'000'000)},
                        {"evict-bytes", "Memory written over before each request.",
                         flags::Int(&evict_bytes, 0, 1 << 30)},
                        {"floor-lines",
                         "With --evict-bytes: also time reading this many scattered cache lines "
                         "after the same eviction.",
                         flags::Int(&floor_lines, 0, 1 << 16)},
                    });
  if (std::optional<int> code = flags::ParseMain(fs, argc, argv, {"runtimes", "body", "path"})) {
    return *code;
  }
  StatusOr<std::string> body = files::ReadFile(body_file);
  if (!body.ok()) {
    std::fprintf(stderr, "%s\n", body.status().ToString().c_str());
    return 1;
  }
  StatusOr<std::unique_ptr<webhook::ClusterReader>> reader = webhook::OfflineReader(runtimes);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
    return 1;
  }
  StatusOr<std::unique_ptr<core::Runtimes>> registry = core::Runtimes::New(**reader, kube::NowTime);
  if (!registry.ok()) {
    std::fprintf(stderr, "%s\n", registry.status().ToString().c_str());
    return 1;
  }
  metrics::Registry metrics_registry;
  webhook::AdmissionMux mux(&metrics_registry);
  webhook::RegisterWebhooks(mux, {.runtimes = registry->get(), .reader = reader->get()});
  const std::string path =
      which == "validate" ? webhook::kValidateTrainJobPath : webhook::kMutateTrainJobPath;
  webhook::HttpReply first = mux.Serve(path, "application/json", *body);
  std::printf("HTTP %d %s\n", first.status, first.body.c_str());
  if (evict_bytes > 0) {
    std::vector<char> evict(static_cast<size_t>(evict_bytes));
    std::vector<char> floor_buffer(floor_lines > 0 ? size_t{4} << 20 : 0, 1);
    const std::vector<size_t> lines = ScatteredLines(floor_buffer, floor_lines);
    const ColdTimes t = ColdMean(mux, path, *body, count, evict, floor_buffer, lines);
    std::printf("served %d requests, %.1f us each after writing %d bytes\n", count,
                1e6 * t.request, evict_bytes);
    if (!lines.empty()) {
      std::printf("read %d scattered lines, %.1f us each time after the same writes\n",
                  floor_lines, 1e6 * t.floor);
    }
    return first.status == 200 ? 0 : 1;
  }
  const auto start = std::chrono::steady_clock::now();
  size_t bytes = ServeMany(mux, path, *body, count);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::printf("served %d requests (%zu bytes), %.1f us each\n", count, bytes,
              count > 0 ? 1e6 * took.count() / count : 0.0);
  return first.status == 200 ? 0 : 1;
}

}  // namespace trainer::bench

int main(int argc, char** argv) { return trainer::bench::Main(argc, argv); }

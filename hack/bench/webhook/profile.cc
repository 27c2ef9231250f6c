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
#include <chrono>
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

// Mean seconds per request of `count` requests, each after writing over `evict` (not timed).
double ColdMean(webhook::AdmissionMux& mux, const std::string& path, const std::string& body,
                int count, std::vector<char>& evict) {
  std::chrono::duration<double> total{0};
  for (int i = 0; i < count; ++i) {
    for (size_t at = 0; at < evict.size(); at += 64) evict[at] = static_cast<char>(i + at);
    const auto start = std::chrono::steady_clock::now();
    mux.Serve(path, "application/json", body);
    total += std::chrono::steady_clock::now() - start;
  }
  return count > 0 ? total.count() / count : 0;
}

int Main(int argc, char** argv) {
  std::vector<std::string> runtimes;
  std::string body_file, which;
  int count = 1000;
  int evict_bytes = 0;
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
    std::printf("served %d requests, %.1f us each after writing %d bytes\n", count,
                1e6 * ColdMean(mux, path, *body, count, evict), evict_bytes);
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

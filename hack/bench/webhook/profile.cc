// trainer-bench-webhook-profile: trainer-webhook's request path without sockets, for instruction
// counts (hack/bench/webhook/callgrind.sh). It wires the webhooks as trainer-webhook does with
// --offline-runtimes (the same reader, runtime registry and metrics) and passes one
// AdmissionReview to AdmissionMux::Serve `--count` times on one path. Under callgrind only
// ServeMany is counted (--toggle-collect), so start-up is left out and the count per request is
// repeatable on a busy machine, where wrk's req/s are not.
//
//   trainer-bench-webhook-profile --runtimes examples/.../torch_distributed.yaml
//       --body hack/bench/webhook/trainjob-create.json --path validate|mutate [--count 1000]
// Prints the first reply (so a run shows what it measured) and the count.
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

int Main(int argc, char** argv) {
  std::vector<std::string> runtimes;
  std::string body_file, which;
  int count = 1000;
  flags::FlagSet fs("trainer-bench-webhook-profile",
                    "Serves one AdmissionReview --count times without sockets, for callgrind "
                    "(hack/bench/webhook/callgrind.sh).",
                    {
                        {"runtimes", "Runtimes, as trainer-webhook --offline-runtimes; repeatable.",
                         flags::Append(&runtimes, "FILE")},
                        {"body", "The AdmissionReview.", flags::String(&body_file, "FILE")},
                        {"path", "The webhook.", flags::OneOf(&which, {"validate", "mutate"})},
                        {"count", "Requests.", flags::Int(&count, 0, 1'000'000'000)},
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
  size_t bytes = ServeMany(mux, path, *body, count);
  std::printf("served %d requests (%zu bytes)\n", count, bytes);
  return first.status == 200 ? 0 : 1;
}

}  // namespace trainer::bench

int main(int argc, char** argv) { return trainer::bench::Main(argc, argv); }

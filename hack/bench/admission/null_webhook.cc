// trainer-bench-null-webhook: the physical floor of the admission benchmark
// (hack/bench/admission/run.py). An admission webhook that does no work: every POST is answered
// "allowed" with the request's uid, on the same HTTP and TLS server as trainer-webhook
// (common/http: TLS 1.2+, the same ciphers, keep-alive, TCP_NODELAY, one TLS record per
// response) and the same thread count. What the kube-apiserver adds around a call to it is the
// least any webhook can cost; trainer-webhook's extra cost over it is its own work and its
// answers (size, patches).
//
//   trainer-bench-null-webhook --cert-dir DIR [--port 0] [--threads 16]
//       [--mutate-patch '[{"op":"add",...}]'] [--pad BYTES] [--status] [--busy-poll 50us]
//       [--spin 30us]
// Prints "listening on PORT" once serving. --mutate-patch answers paths starting with /mutate
// with that JSONPatch (base64, patchType JSONPatch), --pad adds a warning of BYTES characters to
// every answer: both measure what a patch or a bigger response costs the apiserver. --status
// answers what trainer-webhook and upstream's controller-runtime answer an allowed request
// (kind first, "status":{"metadata":{},"code":200}): the same bytes, no work. --busy-poll is
// trainer-webhook's flag of that name (default: the same, the server's default). --spin keeps the
// CPU busy that long before each answer: a server whose handler works that long, to measure
// what a server's own time costs the apiserver per call (admission/run.py). GET /stats
// returns {"requests": N} (requests answered so far).
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "common/encoding/base64.h"
#include "common/flags/flags.h"
#include "common/http/cert_watcher.h"
#include "common/http/server.h"

namespace {

std::atomic<bool> stop{false};

// The request's uid: the first "uid":"..." of the body, which in an AdmissionReview is the
// request's own (its "request" object starts with it; the object's uid comes later).
std::string_view Uid(std::string_view body) {
  constexpr std::string_view kKey = "\"uid\":\"";
  size_t at = body.find(kKey);
  if (at == std::string_view::npos) return {};
  at += kKey.size();
  size_t end = body.find('"', at);
  return end == std::string_view::npos ? std::string_view() : body.substr(at, end - at);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trainer;
  std::string cert_dir, patch;
  int port = 0;
  size_t threads = 16, pad = 0;
  bool status = false;
  std::chrono::microseconds busy_poll = http::kDefaultBusyPoll;
  std::chrono::microseconds spin{0};
  flags::FlagSet fs(
      "trainer-bench-null-webhook",
      "A webhook that answers every review \"allowed\" without reading it (see null_webhook.cc).",
      {
          {"cert-dir", "Directory with tls.crt and tls.key.", flags::String(&cert_dir, "DIR")},
          {"port", "HTTPS port on 127.0.0.1; 0 picks one.", flags::Int(&port, 0, 65535)},
          {"threads", "Server threads (the server keeps them in [1, 512]).",
           flags::Int(&threads, 0, 1'000'000)},
          {"mutate-patch", "A JSONPatch answered on /mutate paths.", flags::String(&patch, "JSON")},
          {"pad", "Adds a warning of this many characters to every answer.",
           flags::Int(&pad, 0, 100'000'000)},
          {"status", "Answer trainer-webhook's exact bytes for an allowed review.",
           flags::Bool(&status)},
          {"busy-poll", "trainer-webhook's --busy-poll (the same default).",
           flags::Duration(&busy_poll, std::chrono::microseconds(0),
                           std::chrono::milliseconds(10))},
          {"spin", "Busy work before each answer.",
           flags::Duration(&spin, std::chrono::microseconds(0), std::chrono::milliseconds(10))},
      });
  if (std::optional<int> code = flags::ParseMain(fs, argc, argv, {"cert-dir"})) return *code;
  http::CertWatcher certs({.cert_dir = cert_dir});
  if (Status s = certs.Load(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  const std::string tail =
      (pad > 0 ? ",\"warnings\":[\"" + std::string(pad, 'x') + "\"]" : std::string()) + "}}";
  // Go's field order (admissionv1.AdmissionResponse: patch, then patchType), as trainer-webhook
  // writes it: with --status the answer is byte for byte ours (hack/bench/webhook/run.sh --null
  // checks that).
  const std::string patch_fields = patch.empty() ? ""
                                                 : ",\"patch\":\"" + encoding::Base64Encode(patch) +
                                                       "\",\"patchType\":\"JSONPatch\"";
  std::atomic<uint64_t> requests{0};
  http::Server server({.address = "127.0.0.1:" + std::to_string(port),
                       .tls = &certs,
                       .threads = threads,
                       .busy_poll = busy_poll});
  auto answer = [&](const http::Request& req, http::Response& res) {
    const auto until = std::chrono::steady_clock::now() + spin;
    while (std::chrono::steady_clock::now() < until) {
    }
    const bool mutate = req.path.rfind("/mutate", 0) == 0;
    std::string body =
        status
            ? R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":")"
            : R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":")";
    body += Uid(req.body);
    body +=
        status ? R"(","allowed":true,"status":{"metadata":{},"code":200})" : R"(","allowed":true)";
    if (mutate) body += patch_fields;
    body += tail;
    res.set_content(body, "application/json");
    requests.fetch_add(1, std::memory_order_relaxed);
  };
  for (const char* path : {"/validate-trainer-kubeflow-org-v1alpha1-trainjob",
                           "/mutate-trainer-kubeflow-org-v1alpha1-trainjob",
                           "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime",
                           "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime"}) {
    server.Post(path, answer);
  }
  server.Get("/stats", [&](const http::Request&, http::Response& res) {
    res.set_content("{\"requests\": " + std::to_string(requests.load()) + "}\n",
                    "application/json");
  });
  if (Status s = server.Start(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::printf("listening on %d\n", server.port());
  std::fflush(stdout);
  std::signal(SIGTERM, [](int) { stop = true; });
  std::signal(SIGINT, [](int) { stop = true; });
  while (!stop) pause();
  server.Stop();
  return 0;
}

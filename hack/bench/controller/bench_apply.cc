// trainer-bench-apply: the apiserver floor of the controller benchmark (hack/bench/controller).
// Sends N copies of one object (named <prefix>-<i>) to the apiserver with C concurrent workers,
// each a server-side apply (or, with --create, a POST), over the same libcurl client the
// controller uses, and prints {"count", "concurrency", "seconds"} as JSON. The benchmark uses it
// both to create the TrainJobs and to measure the floor: applying the same N JobSets the
// controller applies, with the controller's concurrency.
//
//   trainer-bench-apply --kubeconfig K --file jobset.json --namespace ns --prefix floor
//       --count 1000 --concurrency 5 [--create] [--field-manager floor]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/kube/curl/client.h"
#include "common/kube/curl/config.h"
#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"

namespace {

struct Args {
  std::string kubeconfig, file, ns = "default", prefix = "bench", field_manager = "bench-floor";
  int count = 100;
  int concurrency = 5;
  bool create = false;
};

bool ParseArgs(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "--kubeconfig") a->kubeconfig = next();
    else if (k == "--file") a->file = next();
    else if (k == "--namespace") a->ns = next();
    else if (k == "--prefix") a->prefix = next();
    else if (k == "--field-manager") a->field_manager = next();
    else if (k == "--count") a->count = std::stoi(next());
    else if (k == "--concurrency") a->concurrency = std::stoi(next());
    else if (k == "--create") a->create = true;
    else return false;
  }
  return !a->file.empty() && a->count > 0 && a->concurrency > 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trainer;
  Args args;
  if (!ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr, "usage: trainer-bench-apply --file F [--kubeconfig K] [--namespace NS] "
                         "[--prefix P] [--count N] [--concurrency C] [--create]\n");
    return 2;
  }
  std::ifstream in(args.file);
  std::stringstream buf;
  buf << in.rdbuf();
  StatusOr<json::Value> tmpl = json::Parse(buf.str());
  if (!tmpl.ok()) {
    std::fprintf(stderr, "%s\n", tmpl.status().message().c_str());
    return 2;
  }
  StatusOr<const kube::ResourceMapping*> mapping =
      kube::MappingFor(kube::GroupVersionKind::Of(*tmpl));
  StatusOr<kube::RestConfig> cfg = kube::LoadConfig(args.kubeconfig);
  if (!mapping.ok() || !cfg.ok()) {
    std::fprintf(stderr, "%s\n",
                 (!mapping.ok() ? mapping.status() : cfg.status()).message().c_str());
    return 2;
  }
  StatusOr<std::unique_ptr<kube::CurlClient>> client = kube::CurlClient::New(std::move(*cfg));
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().message().c_str());
    return 2;
  }
  // Prepare every body first: only requests are timed.
  std::vector<json::Value> objs;
  objs.reserve(args.count);
  for (int i = 0; i < args.count; ++i) {
    json::Value o = tmpl->Clone();
    o["metadata"].Set("name", args.prefix + "-" + std::to_string(i));
    o["metadata"].Set("namespace", args.ns);
    objs.push_back(std::move(o));
  }
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < args.concurrency; ++w) {
    threads.emplace_back([&] {
      for (int i = next++; i < args.count; i = next++) {
        Status s = args.create
                       ? (*client)->Create((*mapping)->gvr, args.ns, objs[i], {}).status()
                       : (*client)
                             ->Apply((*mapping)->gvr, args.ns, objs[i],
                                     {.field_manager = args.field_manager, .force = true})
                             .status();
        if (!s.ok()) {
          if (++failures <= 3) std::fprintf(stderr, "%s\n", s.message().c_str());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"count\": %d, \"concurrency\": %d, \"seconds\": %.3f, \"failures\": %d}\n",
              args.count, args.concurrency, seconds, failures.load());
  return failures.load() == 0 ? 0 : 1;
}

// trainer-bench-apply: the apiserver floor of the controller benchmark (hack/bench/controller).
// Sends N sets of objects to the apiserver with C concurrent workers, each a server-side apply
// (or, with --create, a POST), over the same libcurl client the controller uses, and prints
// {"count", "objects", "concurrency", "seconds"} as JSON. Set i holds one object per --file; each
// object is named after its template's metadata.name with "{name}" replaced by <prefix>-<i> (a
// name without "{name}" is replaced whole). A worker sends the objects of one set concurrently,
// one thread each, and moves on when all are answered: what a controller worker does in one
// reconcile pass. With --in-order it sends them one after another in --file order instead, as
// a controller that keeps upstream's apply order does (snapshot ConfigMap, then the JobSet). The
// benchmark uses it to create the TrainJobs and to measure the floor: the controller's writes
// (snapshot ConfigMap + JobSet per TrainJob) or the JobSets alone; the admission benchmark
// (hack/bench/admission) sends server-side dry-run creates (--dry-run: admission runs, nothing is
// stored). The output also has each request's latency: mean, p50, p90, p99 and max in milliseconds.
// With --owners FILE (lines "<name> <uid>"), an ownerReference named "{name}" in a template is
// given set i's name and that name's uid from FILE: objects owned by existing TrainJobs, as the
// controller writes them (ownerReferences are what the garbage collector tracks).
// With --namespace given K > 1 times, the sets go to the namespaces in blocks of K, each block a
// shuffled order of all K (--seed): the admission benchmark's interleaved configurations, one
// per namespace, measured at the same moments; the output adds each namespace's latencies
// ("by_namespace") and every set's namespace index and latency in set order ("sets").
//
//   trainer-bench-apply --kubeconfig K --file cm.json --file jobset.json --namespace ns
//       --prefix floor --count 1000 --concurrency 5 [--create [--dry-run]] [--field-manager floor]
//       [--in-order] [--owners uids.txt] [--namespace ns2 ... [--seed 1]]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/files/files.h"
#include "common/flags/flags.h"
#include "common/kube/curl/client.h"
#include "common/kube/curl/config.h"
#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"

namespace {

struct Args {
  std::string kubeconfig, prefix = "bench", field_manager = "bench-floor";
  std::string owners;
  std::vector<std::string> files, namespaces;
  int count = 100;
  int seed = 1;
  int concurrency = 5;
  bool create = false;
  bool dry_run = false;
  bool in_order = false;
};

// "<name> <uid>" per line.
std::map<std::string, std::string> ReadOwners(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string name, uid;
  while (in >> name >> uid) out[name] = uid;
  return out;
}

// Names the template's "{name}" ownerReferences after set `base`; false when FILE lacks it.
bool SetOwners(trainer::json::Value& obj, const std::string& base,
               const std::map<std::string, std::string>& uids) {
  trainer::json::Value* refs = obj["metadata"].Find("ownerReferences");
  if (refs == nullptr || !refs->IsArray()) return true;
  for (trainer::json::Value& ref : refs->elements()) {
    const trainer::json::Value* name = ref.Find("name");
    if (name == nullptr || name->AsString() != "{name}") continue;
    auto it = uids.find(base);
    if (it == uids.end()) return false;
    ref.Set("name", base);
    ref.Set("uid", it->second);
  }
  return true;
}

// Set i's namespace index: blocks of k sets, each block a shuffled order of 0..k-1, so every
// namespace is measured as often, at the same moments, and in every position.
std::vector<size_t> NamespaceOrder(int count, size_t k, int seed) {
  std::vector<size_t> order, block(k);
  std::iota(block.begin(), block.end(), 0);
  std::mt19937 rng(static_cast<unsigned>(seed));
  while (order.size() < static_cast<size_t>(count)) {
    std::shuffle(block.begin(), block.end(), rng);
    order.insert(order.end(), block.begin(), block.end());
  }
  order.resize(static_cast<size_t>(count));
  return order;
}

// {"mean": .., "p50": .., "p90": .., "p99": .., "max": ..} of latencies in milliseconds.
std::string LatencyJson(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) {
    if (ms.empty()) return 0.0;
    size_t i = static_cast<size_t>(p / 100 * static_cast<double>(ms.size() - 1) + 0.5);
    return ms[i];
  };
  const double mean =
      ms.empty() ? 0.0 : std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "{\"mean\": %.3f, \"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f, \"max\": %.3f}",
                mean, pct(50), pct(90), pct(99), ms.empty() ? 0.0 : ms.back());
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trainer;
  Args args;
  flags::FlagSet fs(
      "trainer-bench-apply",
      "Sends --count sets of objects (one per --file) to the apiserver with --concurrency "
      "workers and prints the seconds and latencies as JSON (see bench_apply.cc).",
      {
          {"kubeconfig", "The kubeconfig; default: $KUBECONFIG, in-cluster, ~/.kube/config.",
           flags::String(&args.kubeconfig, "FILE")},
          {"file", "An object template; repeatable, one object of each per set.",
           flags::Append(&args.files, "FILE")},
          {"namespace",
           "The objects' namespace (default: default); repeated, the sets are interleaved "
           "across the namespaces.",
           flags::Append(&args.namespaces, "NS")},
          {"seed", "The interleaving's shuffle seed.", flags::Int(&args.seed, 0, 1'000'000'000)},
          {"prefix", "Set i's objects are named <prefix>-<i>.", flags::String(&args.prefix, "P")},
          {"field-manager", "The server-side apply field manager.",
           flags::String(&args.field_manager, "NAME")},
          {"count", "Sets.", flags::Int(&args.count, 1, 100'000'000)},
          {"concurrency", "Workers.", flags::Int(&args.concurrency, 1, 100'000)},
          {"create", "POST instead of a server-side apply.", flags::Bool(&args.create)},
          {"dry-run", "Server-side dry run: admission runs, nothing is stored.",
           flags::Bool(&args.dry_run)},
          {"in-order", "Send a set's objects one after another in --file order.",
           flags::Bool(&args.in_order)},
          {"owners", "Lines \"<name> <uid>\": the uids of the \"{name}\" ownerReferences.",
           flags::String(&args.owners, "FILE")},
      });
  if (std::optional<int> code = flags::ParseMain(fs, argc, argv, {"file"})) return *code;
  struct Template {
    json::Value obj;
    const kube::ResourceMapping* mapping = nullptr;
  };
  std::vector<Template> templates;
  for (const std::string& file : args.files) {
    StatusOr<std::string> text = files::ReadFile(file);
    if (!text.ok()) {
      std::fprintf(stderr, "%s\n", text.status().message().c_str());
      return 2;
    }
    StatusOr<json::Value> tmpl = json::Parse(*text);
    if (!tmpl.ok()) {
      std::fprintf(stderr, "%s: %s\n", file.c_str(), tmpl.status().message().c_str());
      return 2;
    }
    StatusOr<const kube::ResourceMapping*> mapping =
        kube::MappingFor(kube::GroupVersionKind::Of(*tmpl));
    if (!mapping.ok()) {
      std::fprintf(stderr, "%s: %s\n", file.c_str(), mapping.status().message().c_str());
      return 2;
    }
    templates.push_back({std::move(*tmpl), *mapping});
  }
  StatusOr<kube::RestConfig> cfg = kube::LoadConfig(args.kubeconfig);
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().message().c_str());
    return 2;
  }
  StatusOr<std::unique_ptr<kube::CurlClient>> client = kube::CurlClient::New(std::move(*cfg));
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().message().c_str());
    return 2;
  }
  std::map<std::string, std::string> owners;
  if (!args.owners.empty()) owners = ReadOwners(args.owners);
  if (args.namespaces.empty()) args.namespaces.push_back("default");
  const std::vector<size_t> ns_of = NamespaceOrder(args.count, args.namespaces.size(), args.seed);
  // Prepare every body first: only requests are timed.
  std::vector<std::vector<json::Value>> sets(args.count);
  for (int i = 0; i < args.count; ++i) {
    const std::string base = args.prefix + "-" + std::to_string(i);
    for (const Template& t : templates) {
      json::Value o = t.obj.Clone();
      std::string name(kube::Name(o));
      const size_t at = name.find("{name}");
      name = at == std::string::npos ? base : name.replace(at, 6, base);
      o["metadata"].Set("name", name);
      o["metadata"].Set("namespace", args.namespaces[ns_of[i]]);
      if (!args.owners.empty() && !SetOwners(o, base, owners)) {
        std::fprintf(stderr, "%s: no uid for owner %s\n", args.owners.c_str(), base.c_str());
        return 2;
      }
      sets[i].push_back(std::move(o));
    }
  }
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  // Each request's latency, by set: a set's objects are one request each.
  std::vector<std::vector<double>> set_ms(args.count, std::vector<double>(templates.size()));
  auto start = std::chrono::steady_clock::now();
  auto send = [&](int i, size_t t) {
    const json::Value& obj = sets[i][t];
    const kube::ResourceMapping& m = *templates[t].mapping;
    const std::string ns = m.namespaced ? std::string(kube::Namespace(obj)) : "";
    auto begin = std::chrono::steady_clock::now();
    Status s =
        args.create
            ? (*client)->Create(m.gvr, ns, obj, {.dry_run = args.dry_run}).status()
            : (*client)
                  ->Apply(
                      m.gvr, ns, obj,
                      {.field_manager = args.field_manager, .force = true, .dry_run = args.dry_run})
                  .status();
    set_ms[i][t] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    if (!s.ok() && ++failures <= 3) std::fprintf(stderr, "%s\n", s.message().c_str());
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < args.concurrency; ++w) {
    threads.emplace_back([&] {
      for (int i = next++; i < args.count; i = next++) {
        if (args.in_order) {
          for (size_t t = 0; t < sets[i].size(); ++t) send(i, t);
          continue;
        }
        // As the controller's pass: extra objects on their own threads, the first inline.
        std::vector<std::thread> extra;
        for (size_t t = 1; t < sets[i].size(); ++t) {
          extra.emplace_back([&send, i, t] { send(i, t); });
        }
        send(i, 0);
        for (std::thread& e : extra) e.join();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  std::vector<std::vector<double>> by_ns(args.namespaces.size());
  for (int i = 0; i < args.count; ++i) {
    all.insert(all.end(), set_ms[i].begin(), set_ms[i].end());
    by_ns[ns_of[i]].insert(by_ns[ns_of[i]].end(), set_ms[i].begin(), set_ms[i].end());
  }
  std::string out = "{\"count\": " + std::to_string(args.count) +
                    ", \"objects\": " + std::to_string(all.size()) +
                    ", \"concurrency\": " + std::to_string(args.concurrency) +
                    ", \"seconds\": " + std::to_string(seconds) +
                    ", \"failures\": " + std::to_string(failures.load()) +
                    ", \"latency_ms\": " + LatencyJson(all);
  if (args.namespaces.size() > 1) {
    out += ", \"by_namespace\": {";
    for (size_t n = 0; n < args.namespaces.size(); ++n) {
      out += (n ? ", \"" : "\"") + args.namespaces[n] + "\": " + LatencyJson(by_ns[n]);
    }
    out += "}, \"sets\": [";
    char buf[64];
    for (int i = 0; i < args.count; ++i) {
      double ms = std::accumulate(set_ms[i].begin(), set_ms[i].end(), 0.0);
      std::snprintf(buf, sizeof buf, "%s[%zu, %.4f]", i ? ", " : "", ns_of[i], ms);
      out += buf;
    }
    out += "]";
  }
  std::printf("%s}\n", out.c_str());
  return failures.load() == 0 ? 0 : 1;
}

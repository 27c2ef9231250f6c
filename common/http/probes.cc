// HealthChecks and MountMetrics (see probes.h); the text format follows controller-runtime's
// pkg/healthz/healthz.go.
#include "common/http/probes.h"

#include <httplib.h>

#include <algorithm>
#include <set>

#include "common/log/log.h"

namespace trainer::http {
namespace {

constexpr char kTextPlain[] = "text/plain; charset=utf-8";

Status RunCheck(const Check& check) {
  try {
    return check();
  } catch (const std::exception& e) {
    return InternalError(std::string("check threw: ") + e.what());
  } catch (...) {
    return InternalError("check threw");
  }
}

}  // namespace

void HealthChecks::AddHealthz(std::string name, Check check) {
  std::lock_guard<std::mutex> lock(mu_);
  healthz_.push_back({std::move(name), std::move(check)});
}

void HealthChecks::AddReadyz(std::string name, Check check) {
  std::lock_guard<std::mutex> lock(mu_);
  readyz_.push_back({std::move(name), std::move(check)});
}

Status HealthChecks::Ready() const {
  List list;
  {
    std::lock_guard<std::mutex> lock(mu_);
    list = readyz_;
  }
  for (const Named& n : list) {
    if (Status s = RunCheck(n.check); !s.ok()) return s.WithContext(n.name);
  }
  return OkStatus();
}

void HealthChecks::Serve(const List& list_ref, std::string_view endpoint, const Request& req,
                         Response& res) const {
  List list;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Named& n : list_ref) {
      list.push_back(n);
    }
  }
  res.set_header("X-Content-Type-Options", "nosniff");
  std::string prefix = "/";  // not "/" + string: GCC 12 -O3 warns (-Wrestrict false positive)
  prefix += endpoint;
  // One check: /healthz/<name>.
  if (req.path.size() > prefix.size() + 1) {
    std::string name = req.path.substr(prefix.size() + 1);
    auto it =
        std::find_if(list.begin(), list.end(), [&](const Named& n) { return n.name == name; });
    if (it == list.end()) {
      if (!(list.empty() && name == "ping")) {
        res.status = 404;
        res.set_content("404 page not found\n", kTextPlain);
        return;
      }
      res.set_content("ok", kTextPlain);
      return;
    }
    Status s = RunCheck(it->check);
    if (!s.ok()) {
      res.status = 500;
      res.set_content("internal server error: " + s.message() + "\n", kTextPlain);
      return;
    }
    res.set_content("ok", kTextPlain);
    return;
  }
  // Aggregated, sorted by name; the default check is "ping".
  std::set<std::string> excluded;
  for (size_t i = 0; i < req.get_param_value_count("exclude"); ++i) {
    excluded.insert(req.get_param_value("exclude", i));
  }
  if (list.empty()) {
    list.push_back({"ping", Ping});
  }
  std::sort(list.begin(), list.end(),
            [](const Named& a, const Named& b) { return a.name < b.name; });
  bool failed = false;
  std::string body;
  for (const Named& n : list) {
    if (excluded.erase(n.name) > 0) {
      body += "[+]" + n.name + " excluded: ok\n";
      continue;
    }
    Status s = RunCheck(n.check);
    if (s.ok()) {
      body += "[+]" + n.name + " ok\n";
    } else {
      failed = true;
      body += "[-]" + n.name + " failed: reason withheld\n";
      log::Info(std::string(endpoint) + " check failed",
                {{"checker", n.name}, {"error", s.message()}});
    }
  }
  for (const std::string& name : excluded) {
    body += "warn: some health checks cannot be excluded: no matches for \"" + name + "\"\n";
  }
  if (failed) {
    res.status = 500;
    res.set_content(body + "healthz check failed\n", kTextPlain);
  } else if (req.has_param("verbose")) {
    res.set_content(body + "healthz check passed\n", kTextPlain);
  } else {
    res.set_content("ok", kTextPlain);
  }
}

void HealthChecks::Mount(Server& server) {
  for (auto [endpoint, list] : {std::pair<std::string, const List*>{"healthz", &healthz_},
                                std::pair<std::string, const List*>{"readyz", &readyz_}}) {
    // Init-captures: clang 14 cannot capture structured bindings.
    Handler h = [this, endpoint = endpoint, list = list](const Request& req, Response& res) {
      Serve(*list, endpoint, req, res);
    };
    server.Get("/" + endpoint, h);
    server.GetPrefix("/" + endpoint + "/", h);
  }
}

void MountMetrics(Server& server, metrics::Registry& registry, const std::string& path) {
  server.Get(path, [&registry](const Request&, Response& res) {
    res.set_content(registry.Text(), std::string(metrics::kTextContentType));
  });
}

}  // namespace trainer::http

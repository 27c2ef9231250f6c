// FakeCluster: an in-memory stand-in for the apiserver and the informer caches in controller
// unit tests. It is a framework::Reader (what the reconciler reads) and a kube::Writer (what it
// writes): applies store the object with a `trainer` managedFields entry, status merge patches
// change the stored TrainJob, deletes remove. Every write is also recorded, so tests assert on
// both the resulting state and the number of requests (the "skip unchanged" rule).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "common/kube/client.h"
#include "common/kube/meta.h"
#include "runtime/framework/reader.h"

namespace trainer::controller::testing {

struct Write {
  std::string verb;  // apply | patch-status | delete | create
  std::string resource;
  std::string key;  // ns/name
  json::Value body;
};

class FakeCluster final : public framework::Reader, public kube::Writer {
 public:
  using Key = std::tuple<std::string, std::string, std::string>;  // kind, ns, name

  void Put(json::Value obj) {
    Key k{kube::GroupVersionKind::Of(obj).kind, std::string(kube::Namespace(obj)),
          std::string(kube::Name(obj))};
    objects_[k] = std::move(obj);
  }
  json::Value* Find(std::string_view kind, std::string_view ns, std::string_view name) {
    auto it = objects_.find(Key{std::string(kind), std::string(ns), std::string(name)});
    return it == objects_.end() ? nullptr : &it->second;
  }
  void Remove(std::string_view kind, std::string_view ns, std::string_view name) {
    objects_.erase(Key{std::string(kind), std::string(ns), std::string(name)});
  }
  void FailApplies(std::string_view kind, Status error) {
    apply_errors_[std::string(kind)] = std::move(error);
  }
  void ClearApplyErrors() { apply_errors_.clear(); }

  std::vector<Write>& writes() { return writes_; }
  size_t Count(std::string_view verb) const {
    size_t n = 0;
    for (const Write& w : writes_) n += w.verb == verb ? 1 : 0;
    return n;
  }

  // framework::Reader
  StatusOr<json::Value> Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override {
    auto it = objects_.find(Key{gvk.kind, std::string(ns), std::string(name)});
    if (it == objects_.end()) return NotFoundError(framework::NotFoundMessage(gvk, name));
    return it->second.Clone();
  }

  // kube::Writer
  StatusOr<json::Value> Create(const kube::GroupVersionResource& gvr, std::string_view ns,
                               const json::Value& obj, const kube::CreateOptions&) override {
    writes_.push_back({"create", gvr.resource, kube::ObjectKey(ns, kube::Name(obj)), obj.Clone()});
    return obj.Clone();
  }
  StatusOr<json::Value> Update(const kube::GroupVersionResource&, std::string_view,
                               const json::Value&, const kube::UpdateOptions&) override {
    return UnimplementedError("update");
  }
  Status Delete(const kube::GroupVersionResource& gvr, std::string_view ns, std::string_view name,
                const kube::DeleteOptions&) override {
    writes_.push_back({"delete", gvr.resource, kube::ObjectKey(ns, name), json::Value()});
    for (auto it = objects_.begin(); it != objects_.end(); ++it) {
      if (std::get<1>(it->first) == ns && std::get<2>(it->first) == name &&
          Plural(std::get<0>(it->first)) == gvr.resource) {
        objects_.erase(it);
        return OkStatus();
      }
    }
    return NotFoundError("not found");
  }
  StatusOr<json::Value> Patch(const kube::GroupVersionResource& gvr, std::string_view ns,
                              std::string_view name, kube::PatchType, const json::Value& patch,
                              const kube::PatchOptions&) override {
    writes_.push_back({"patch", gvr.resource, kube::ObjectKey(ns, name), patch.Clone()});
    return patch.Clone();
  }
  StatusOr<json::Value> Apply(const kube::GroupVersionResource& gvr, std::string_view ns,
                              const json::Value& obj, const kube::ApplyOptions& options) override {
    // The reconciler applies a pass's objects concurrently.
    std::lock_guard<std::mutex> lock(mu_);
    std::string kind = kube::GroupVersionKind::Of(obj).kind;
    writes_.push_back({"apply", gvr.resource, kube::ObjectKey(ns, kube::Name(obj)), obj.Clone()});
    last_apply_options_ = options;
    if (auto it = apply_errors_.find(kind); it != apply_errors_.end()) return it->second;
    json::Value stored = obj.Clone();
    // Keep what the live object had beyond our fields (status, someone else's labels).
    if (json::Value* old = Find(kind, ns, kube::Name(obj))) {
      if (const json::Value* st = old->Find("status")) stored.Set("status", st->Clone());
    }
    json::Value mf = json::Value::Array();
    json::Value entry = json::Value::Object();
    entry.Set("manager", options.field_manager);
    entry.Set("operation", "Apply");
    mf.PushBack(std::move(entry));
    stored["metadata"].Set("managedFields", std::move(mf));
    stored["metadata"].Set("resourceVersion", std::to_string(++rv_));
    Put(stored.Clone());
    return stored;
  }
  StatusOr<json::Value> PatchStatus(const kube::GroupVersionResource& gvr, std::string_view ns,
                                    std::string_view name, kube::PatchType,
                                    const json::Value& patch, const kube::PatchOptions&) override {
    writes_.push_back({"patch-status", gvr.resource, kube::ObjectKey(ns, name), patch.Clone()});
    json::Value* obj = Find("TrainJob", ns, name);
    if (obj == nullptr) return NotFoundError("not found");
    if (const json::Value* st = patch.Find("status"); st != nullptr && st->IsNull()) {
      obj->Erase("status");
    } else if (st != nullptr) {
      json::Value& live = (*obj)["status"];
      for (const json::Member& m : st->members()) {
        if (m.second.IsNull()) {
          live.Erase(m.first);
        } else {
          live.Set(m.first, m.second.Clone());
        }
      }
      // What the apiserver enforces for TrainJob status (minProperties: 1).
      if (live.IsObject() && live.empty()) {
        return InvalidError("TrainJob.trainer.kubeflow.org \"" + std::string(name) +
                            "\" is invalid: status: Invalid value: 0: status in body should have "
                            "at least 1 properties");
      }
    }
    return obj->Clone();
  }
  StatusOr<json::Value> ApplyStatus(const kube::GroupVersionResource&, std::string_view,
                                    const json::Value&, const kube::ApplyOptions&) override {
    return UnimplementedError("apply status");
  }

  const kube::ApplyOptions& last_apply_options() const { return last_apply_options_; }

 private:
  static std::string Plural(const std::string& kind) {
    std::string p;
    for (char c : kind) p += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return p + "s";
  }

  std::mutex mu_;
  std::map<Key, json::Value> objects_;
  std::map<std::string, Status> apply_errors_;
  std::vector<Write> writes_;
  kube::ApplyOptions last_apply_options_;
  int rv_ = 0;
};

}  // namespace trainer::controller::testing

// Cache shaping and owner mapping of the controller's watched kinds (see caches.h).
#include "controller/caches.h"

#include "certs/state.h"
#include "common/kube/meta.h"
#include "runtime/api/kinds.h"
#include "runtime/api/types.h"

namespace trainer::controller {

std::string ControllerTrainJob(const json::Value& obj) {
  const json::Value* meta = obj.Find("metadata");
  const json::Value* refs = meta != nullptr ? meta->Find("ownerReferences") : nullptr;
  if (refs == nullptr || !refs->IsArray()) return "";
  for (const json::Value& ref : refs->elements()) {
    const json::Value* controller = ref.Find("controller");
    const json::Value* kind = ref.Find("kind");
    const json::Value* api_version = ref.Find("apiVersion");
    const json::Value* name = ref.Find("name");
    if (controller == nullptr || !controller->AsBool() || kind == nullptr || !kind->IsString() ||
        kind->AsString() != api::kTrainJobKind || api_version == nullptr ||
        !api_version->IsString() || name == nullptr || !name->IsString()) {
      continue;
    }
    if (api_version->AsString().rfind(std::string(api::kGroup) + "/", 0) != 0) continue;
    return kube::ObjectKey(kube::Namespace(obj), name->AsString());
  }
  return "";
}

void SlimManagedFields(json::Value& obj) {
  json::Value* meta = obj.Find("metadata");
  json::Value* mf = meta != nullptr ? meta->Find("managedFields") : nullptr;
  if (mf == nullptr || !mf->IsArray()) return;
  json::Value slim = json::Value::Array();
  for (json::Value& e : mf->elements()) {
    json::Value s = json::Value::Object();
    for (const char* k : {"manager", "operation", "subresource"}) {
      if (json::Value* v = e.Find(k)) s.Set(k, std::move(*v));
    }
    slim.PushBack(std::move(s));
  }
  *mf = std::move(slim);
}

// JobSets keep what the controller reads (metadata, spec.suspend, replicatedJobs names and
// replicas, status); the rest of spec (pod templates, network and policies) is never read back.
void TrimJobSet(json::Value& js) {
  SlimManagedFields(js);
  if (json::Value* spec = js.Find("spec"); spec != nullptr && spec->IsObject()) {
    json::Value slim = json::Value::Object();
    if (json::Value* suspend = spec->Find("suspend")) slim.Set("suspend", std::move(*suspend));
    if (json::Value* rjobs = spec->Find("replicatedJobs"); rjobs != nullptr && rjobs->IsArray()) {
      json::Value kept = json::Value::Array();
      for (json::Value& rj : rjobs->elements()) {
        json::Value k = json::Value::Object();
        for (const char* f : {"name", "replicas"}) {
          if (json::Value* v = rj.Find(f)) k.Set(f, std::move(*v));
        }
        kept.PushBack(std::move(k));
      }
      slim.Set("replicatedJobs", std::move(kept));
    }
    *spec = std::move(slim);
  }
}

// ConfigMaps and Secrets not controlled by a TrainJob are cached as bare metadata: the cache must
// watch them all (an owner filter is not a selector) but never reads their data.
void TrimUnowned(json::Value& obj) {
  if (!ControllerTrainJob(obj).empty()) {
    SlimManagedFields(obj);
    return;
  }
  if (json::Value* meta = obj.Find("metadata")) meta->Erase("managedFields");
  obj.Erase("data");
  obj.Erase("binaryData");
  obj.Erase("stringData");
}

void KeepCACertOnly(json::Value& secret) {
  if (json::Value* meta = secret.Find("metadata")) meta->Erase("managedFields");
  json::Value kept = json::Value::Object();
  if (json::Value* data = secret.Find("data")) {
    for (std::string_view key : {certs::kCACertKey, certs::kCABundleKey}) {
      if (json::Value* v = data->Find(key)) kept.Set(std::string(key), std::move(*v));
    }
  }
  secret.Erase("binaryData");
  secret.Erase("stringData");
  secret.Set("data", std::move(kept));
}

std::string PublishedCAsOf(const json::Value& secret) {
  const json::Value* data = secret.Find("data");
  std::string out;
  for (std::string_view key : {certs::kCACertKey, certs::kCABundleKey}) {
    const json::Value* v = data != nullptr ? data->Find(key) : nullptr;
    out += v != nullptr && v->IsString() ? v->AsString() : std::string();
    out += '\n';
  }
  return out;
}

void NamespaceMetadata(json::Value& ns) {
  json::Value* meta = ns.Find("metadata");
  json::Value slim = json::Value::Object();
  if (meta != nullptr) {
    for (const char* k :
         {"name", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"}) {
      if (json::Value* v = meta->Find(k)) slim.Set(k, std::move(*v));
    }
  }
  ns.Erase("spec");
  ns.Erase("status");
  ns.Set("metadata", std::move(slim));
}

informer::InformerOptions CacheOptions(const framework::Watch& watch,
                                       const kube::GroupVersionResource& gvr) {
  informer::InformerOptions io;
  io.gvr = gvr;  // named "<resource>.<group>" (Informer::Name): both PodGroups are "podgroups"
  if (!watch.owned_by_trainjob) {
    return io;  // managedFields stripped (the default)
  }
  io.strip_managed_fields = false;
  // Every transform below slims managedFields to the managers, so their field sets are never
  // built; nor are JobSets' pod templates, which TrimJobSet drops.
  for (const char* field : {"fieldsV1", "time", "apiVersion"}) {
    io.skip.Add({"metadata", "managedFields", "*", field});
  }
  if (watch.gvk == api::kJobSetGVK) {
    io.transform = TrimJobSet;
    io.skip.Add({"spec", "replicatedJobs", "*", "template"});
  } else if (watch.gvk == api::kConfigMapGVK || watch.gvk == api::kSecretGVK) {
    io.transform = TrimUnowned;
  } else {
    io.transform = SlimManagedFields;
  }
  return io;
}

}  // namespace trainer::controller

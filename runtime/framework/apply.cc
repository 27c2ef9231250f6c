// Keyed upserts and small object builders (upstream pkg/apply/apply.go).
#include "runtime/framework/apply.h"

#include <functional>

#include "runtime/framework/constants.h"

namespace trainer::framework {

namespace {

using Match = std::function<bool(const json::Value&, const json::Value&)>;

// Go's ptr.Equal on optional string/int fields: equal if both absent or both present and equal.
bool OptionalEqual(const json::Value& a, const json::Value& b, std::string_view key) {
  const json::Value* x = a.Find(key);
  const json::Value* y = b.Find(key);
  if (x != nullptr && x->IsNull()) {
    x = nullptr;
  }
  if (y != nullptr && y->IsNull()) {
    y = nullptr;
  }
  if (x == nullptr || y == nullptr) {
    return x == y;
  }
  return *x == *y;
}

void Upsert(json::Value& list, json::Value item, const Match& match) {
  if (!list.IsArray()) {
    list = json::Value::Array();
  }
  for (json::Value& e : list.elements()) {
    if (match(e, item)) {
      e = std::move(item);
      return;
    }
  }
  list.PushBack(std::move(item));
}

void UpsertAll(json::Value& list, const json::Value& items, const Match& match) {
  if (!items.IsArray()) {
    return;
  }
  for (const json::Value& item : items.elements()) {
    Upsert(list, item.Clone(), match);
  }
}

bool ByName(const json::Value& a, const json::Value& b) { return OptionalEqual(a, b, "name"); }
bool ByPortOrName(const json::Value& a, const json::Value& b) {
  return OptionalEqual(a, b, "containerPort") || OptionalEqual(a, b, "name");
}
bool ByMountPath(const json::Value& a, const json::Value& b) {
  return OptionalEqual(a, b, "mountPath");
}

}  // namespace

void UpsertEnvVars(json::Value& env, const json::Value& items) { UpsertAll(env, items, ByName); }
void UpsertEnvVar(json::Value& env, json::Value item) { Upsert(env, std::move(item), ByName); }
void UpsertPorts(json::Value& ports, const json::Value& items) {
  UpsertAll(ports, items, ByPortOrName);
}
void UpsertPort(json::Value& ports, json::Value item) {
  Upsert(ports, std::move(item), ByPortOrName);
}
void UpsertVolumes(json::Value& volumes, const json::Value& items) {
  UpsertAll(volumes, items, ByName);
}
void UpsertVolumeMounts(json::Value& mounts, const json::Value& items) {
  UpsertAll(mounts, items, ByMountPath);
}

void UpsertTrainerPort(json::Value& ports) {
  json::Value port = json::Value::Object();
  port.Set("containerPort", json::Value(kContainerTrainerPort));
  UpsertPort(ports, std::move(port));
}

json::Value EnvVar(std::string_view name, std::string_view value) {
  json::Value e = json::Value::Object();
  e.Set("name", json::Value(name));
  e.Set("value", json::Value(value));
  return e;
}

json::Value EnvVarFromField(std::string_view name, std::string_view field_path) {
  json::Value e = json::Value::Object();
  e.Set("name", json::Value(name));
  e["valueFrom"]["fieldRef"].Set("fieldPath", json::Value(field_path));
  return e;
}

namespace {
std::string Str(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v != nullptr && v->IsString() ? v->AsString() : "";
}

json::Value KeySelector(const json::Value& ref) {
  json::Value out = json::Value::Object();
  out.Set("key", json::Value(Str(ref, "key")));
  out.Set("name", json::Value(Str(ref, "name")));
  if (const json::Value* opt = ref.Find("optional"); opt != nullptr && opt->IsBool()) {
    out.Set("optional", json::Value(opt->AsBool()));
  }
  return out;
}
}  // namespace

json::Value NormalizeEnvVar(const json::Value& env) {
  json::Value out = json::Value::Object();
  out.Set("name", json::Value(Str(env, "name")));
  const json::Value* from = env.Find("valueFrom");
  if (from == nullptr || !from->IsObject()) {
    out.Set("value", json::Value(Str(env, "value")));
    return out;
  }
  json::Value source = json::Value::Object();
  if (const json::Value* ref = from->Find("fieldRef"); ref != nullptr && ref->IsObject()) {
    source["fieldRef"].Set("fieldPath", json::Value(Str(*ref, "fieldPath")));
  }
  if (const json::Value* ref = from->Find("resourceFieldRef"); ref != nullptr && ref->IsObject()) {
    json::Value& r = source["resourceFieldRef"];
    r.Set("containerName", json::Value(Str(*ref, "containerName")));
    r.Set("resource", json::Value(Str(*ref, "resource")));
    const json::Value* divisor = ref->Find("divisor");
    r.Set("divisor",
          divisor != nullptr && !divisor->IsNull() ? divisor->Clone() : json::Value("0"));
  }
  if (const json::Value* ref = from->Find("configMapKeyRef"); ref != nullptr && ref->IsObject()) {
    source.Set("configMapKeyRef", KeySelector(*ref));
  }
  if (const json::Value* ref = from->Find("secretKeyRef"); ref != nullptr && ref->IsObject()) {
    source.Set("secretKeyRef", KeySelector(*ref));
  }
  out.Set("valueFrom", std::move(source));
  return out;
}

json::Value NormalizeEnvVars(const json::Value& env) {
  json::Value out = json::Value::Array();
  if (env.IsArray()) {
    for (const json::Value& e : env.elements()) {
      out.PushBack(NormalizeEnvVar(e));
    }
  }
  return out;
}

json::Value TrainJobOwnerReference(const api::TrainJob& job) {
  json::Value ref = json::Value::Object();
  ref.Set("apiVersion", json::Value(api::kAPIVersion));
  ref.Set("kind", json::Value(api::kTrainJobKind));
  ref.Set("name", json::Value(job.metadata.name));
  if (!job.metadata.uid.empty()) {
    ref.Set("uid", json::Value(job.metadata.uid));
  }
  ref.Set("controller", json::Value(true));
  ref.Set("blockOwnerDeletion", json::Value(true));
  return ref;
}

json::Value NewOwnedObject(const kube::GroupVersionKind& gvk, std::string_view name,
                           const api::TrainJob& job,
                           const std::map<std::string, std::string>& labels,
                           const std::map<std::string, std::string>& annotations) {
  json::Value obj = json::Value::Object();
  obj.Set("apiVersion", json::Value(gvk.ApiVersion()));
  obj.Set("kind", json::Value(gvk.kind));
  json::Value& meta = obj["metadata"];
  meta.Set("name", json::Value(name));
  meta.Set("namespace", json::Value(job.metadata.namespace_));
  if (!labels.empty()) {
    meta.Set("labels", json::Value::StringMap(labels));
  }
  if (!annotations.empty()) {
    meta.Set("annotations", json::Value::StringMap(annotations));
  }
  json::Value owners = json::Value::Array();
  owners.PushBack(TrainJobOwnerReference(job));
  meta.Set("ownerReferences", std::move(owners));
  return obj;
}

}  // namespace trainer::framework

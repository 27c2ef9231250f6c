// InformerPodDirectory (pods.h).
#include "webhook/statusserver/pods.h"

#include "common/kube/rest_mapper.h"

namespace trainer::statusserver {
namespace {

std::string StringAt(const json::Value& obj, std::string_view a, std::string_view b) {
  const json::Value* v = obj.Find(a);
  v = v != nullptr ? v->Find(b) : nullptr;
  return v != nullptr && v->IsString() ? v->AsString() : std::string();
}

std::string JobSetName(const json::Value& pod) {
  const json::Value* meta = pod.Find("metadata");
  return meta != nullptr ? StringAt(*meta, "labels", kJobSetNameLabel) : std::string();
}

// Keeps metadata.{name, namespace, uid, resourceVersion, labels[jobset-name]} and status.phase.
void Trim(json::Value& pod) {
  json::Value meta = json::Value::Object();
  for (const char* k : {"name", "namespace", "uid", "resourceVersion"}) {
    std::string v = StringAt(pod, "metadata", k);
    if (!v.empty()) meta.Set(k, json::Value(v));
  }
  if (std::string job = JobSetName(pod); !job.empty()) {
    meta.Set("labels", json::Value::Object()).Set(kJobSetNameLabel, json::Value(job));
  }
  json::Value status = json::Value::Object();
  if (std::string phase = StringAt(pod, "status", "phase"); !phase.empty()) {
    status.Set("phase", json::Value(phase));
  }
  json::Value out = json::Value::Object();
  out.Set("metadata", std::move(meta));
  out.Set("status", std::move(status));
  pod = std::move(out);
}

}  // namespace

InformerPodDirectory::InformerPodDirectory(kube::Client& client)
    : informer_(client, {.gvr = kube::kPods,
                         .label_selector = kJobSetNameLabel,
                         .transform = Trim,
                         .name = "pods (status server)"}) {}

std::optional<std::string> InformerPodDirectory::TrainJobOf(std::string_view ns,
                                                            std::string_view name,
                                                            std::string_view uid) const {
  std::optional<json::Value> pod = informer_.store().GetCopy(ns, name);
  if (!pod || StringAt(*pod, "metadata", "uid") != uid) return std::nullopt;
  std::string phase = StringAt(*pod, "status", "phase");
  if (phase == "Succeeded" || phase == "Failed") return std::nullopt;
  std::string job = JobSetName(*pod);
  if (job.empty()) return std::nullopt;
  return job;
}

}  // namespace trainer::statusserver

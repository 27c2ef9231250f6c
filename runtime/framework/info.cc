// Info lookups and the resource helpers of upstream pkg/runtime/runtime.go.
#include "runtime/framework/info.h"

#include <algorithm>

#include "common/quantity/quantity.h"
#include "common/strings/ascii.h"
#include "runtime/api/labels.h"
#include "runtime/framework/constants.h"

namespace trainer::framework {

std::string StringField(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v != nullptr && v->IsString() ? v->AsString() : "";
}

namespace {
json::Value ArrayOrEmpty(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v != nullptr && v->IsArray() ? v->Clone() : json::Value::Array();
}
}  // namespace

Container Container::Clone() const {
  Container c;
  c.name = name;
  c.image = image;
  c.command = command;
  c.env = env.Clone();
  c.ports = ports.Clone();
  c.volume_mounts = volume_mounts.Clone();
  return c;
}

Container Container::FromJson(const json::Value& j) {
  Container c;
  c.name = StringField(j, "name");
  c.image = StringField(j, "image");
  if (const json::Value* cmd = j.Find("command"); cmd != nullptr && cmd->IsArray()) {
    for (const json::Value& s : cmd->elements()) {
      c.command.push_back(s.IsString() ? s.AsString() : "");
    }
  }
  c.env = ArrayOrEmpty(j, "env");
  c.ports = ArrayOrEmpty(j, "ports");
  c.volume_mounts = ArrayOrEmpty(j, "volumeMounts");
  return c;
}

PodSet PodSet::Clone() const {
  PodSet p;
  p.name = name;
  p.ancestor = ancestor;
  p.count = count;
  for (const Container& c : init_containers) {
    p.init_containers.push_back(c.Clone());
  }
  for (const Container& c : containers) {
    p.containers.push_back(c.Clone());
  }
  p.volumes = volumes.Clone();
  p.network = network;
  p.single_pod_requests = single_pod_requests.Clone();
  return p;
}

std::vector<std::string> PodSet::Endpoints() const {
  std::vector<std::string> out;
  if (!network) {
    return out;
  }
  int32_t pods = count.value_or(1);
  for (int64_t replica = 0; replica < network->replicas; ++replica) {
    for (int32_t pod = 0; pod < pods; ++pod) {
      out.push_back(network->trainjob_name + "-" + name + "-" + std::to_string(replica) + "-" +
                    std::to_string(pod) + "." + network->subdomain);
    }
  }
  return out;
}

Info Info::Clone() const {
  Info i;
  i.labels = labels;
  i.annotations = annotations;
  i.runtime_policy = runtime_policy;
  i.scheduler = scheduler;
  i.template_spec.jobset_spec = template_spec.jobset_spec.Clone();
  for (const PodSet& ps : template_spec.pod_sets) {
    i.template_spec.pod_sets.push_back(ps.Clone());
  }
  return i;
}

PodSet* Info::FindPodSetByAncestor(std::string_view ancestor) {
  for (PodSet& ps : template_spec.pod_sets) {
    if (ps.ancestor && *ps.ancestor == ancestor) {
      return &ps;
    }
  }
  return nullptr;
}

const PodSet* Info::FindPodSetByAncestor(std::string_view ancestor) const {
  return const_cast<Info*>(this)->FindPodSetByAncestor(ancestor);
}

PodSet* Info::ApplyTrainerNumNodes(const api::TrainJob& job) {
  PodSet* trainer = FindPodSetByAncestor(kAncestorTrainer);
  if (trainer != nullptr && trainer->count && job.spec.trainer && job.spec.trainer->num_nodes) {
    trainer->count = *job.spec.trainer->num_nodes;
  }
  return trainer;
}

Container* Info::TrainerNode() {
  return FindContainerByPodSetAncestorContainerName(kAncestorTrainer, kNode);
}

PodSet* Info::FindPodSetByName(std::string_view name) {
  for (PodSet& ps : template_spec.pod_sets) {
    if (ps.name == name) {
      return &ps;
    }
  }
  return nullptr;
}

const PodSet* Info::FindPodSetByName(std::string_view name) const {
  return const_cast<Info*>(this)->FindPodSetByName(name);
}

Container* Info::FindContainerByPodSetAncestorContainerName(std::string_view ancestor,
                                                            std::string_view container) {
  PodSet* ps = FindPodSetByAncestor(ancestor);
  if (ps == nullptr) {
    return nullptr;
  }
  for (Container& c : ps->containers) {
    if (c.name == container) {
      return &c;
    }
  }
  return nullptr;
}

Container* Info::FindContainerByPodSetName(std::string_view pod_set, std::string_view container) {
  PodSet* ps = FindPodSetByName(pod_set);
  if (ps == nullptr) {
    return nullptr;
  }
  for (Container& c : ps->containers) {
    if (c.name == container) {
      return &c;
    }
  }
  for (Container& c : ps->init_containers) {
    if (c.name == container) {
      return &c;
    }
  }
  return nullptr;
}

const Container* Info::FindContainerByPodSetName(std::string_view pod_set,
                                                 std::string_view container) const {
  return const_cast<Info*>(this)->FindContainerByPodSetName(pod_set, container);
}

json::Value* PodSpecOf(json::Value& rjob) {
  json::Value* v = rjob.Find("template");
  for (std::string_view key : {"spec", "template", "spec"}) {
    if (v == nullptr) {
      return nullptr;
    }
    v = v->Find(key);
  }
  return v != nullptr && v->IsObject() ? v : nullptr;
}

const json::Value* PodSpecOf(const json::Value& rjob) {
  return PodSpecOf(const_cast<json::Value&>(rjob));
}

json::Value* ContainersOf(json::Value& rjob) {
  json::Value* pod = PodSpecOf(rjob);
  json::Value* containers = pod != nullptr ? pod->Find("containers") : nullptr;
  return containers != nullptr && containers->IsArray() ? containers : nullptr;
}

const json::Value* ContainersOf(const json::Value& rjob) {
  return ContainersOf(const_cast<json::Value&>(rjob));
}

std::optional<std::string> AncestorOf(const json::Value& rjob) {
  const json::Value* v = rjob.Find("template");
  v = v != nullptr ? v->Find("metadata") : nullptr;
  v = v != nullptr ? v->Find("labels") : nullptr;
  v = v != nullptr ? v->Find(api::kLabelTrainJobAncestor) : nullptr;
  if (v == nullptr || !v->IsString()) {
    return std::nullopt;
  }
  return v->AsString();
}

json::Value ExtractResourcePerNodeFromRuntime(const Info& info) {
  const json::Value* rjobs = info.template_spec.jobset_spec.Find("replicatedJobs");
  if (rjobs == nullptr || !rjobs->IsArray()) {
    return json::Value();
  }
  for (const json::Value& rjob : rjobs->elements()) {
    if (StringField(rjob, "name") != kNode && AncestorOf(rjob) != kAncestorTrainer) {
      continue;
    }
    const json::Value* containers = ContainersOf(rjob);
    if (containers == nullptr) {
      continue;
    }
    for (const json::Value& c : containers->elements()) {
      const json::Value* res = c.Find("resources");
      if (StringField(c, "name") != kNode || res == nullptr || !res->IsObject()) {
        continue;
      }
      json::Value out = json::Value::Object();
      const json::Value* limits = res->Find("limits");
      const json::Value* requests = res->Find("requests");
      out.Set("limits",
              limits != nullptr && limits->IsObject() ? limits->Clone() : json::Value::Object());
      out.Set("requests", requests != nullptr && requests->IsObject() ? requests->Clone()
                                                                      : json::Value::Object());
      return out;
    }
  }
  return json::Value();
}

namespace {
int64_t NumGPU(const json::Value* list) {
  if (list == nullptr || !list->IsObject()) {
    return 0;
  }
  for (const auto& [name, q] : list->members()) {
    if (strings::AsciiLower(name).find("gpu") == std::string::npos) {
      continue;
    }
    StatusOr<quantity::Quantity> parsed = quantity::Quantity::FromJson(q);
    return parsed.ok() ? parsed->Value() : 0;
  }
  return 0;
}
}  // namespace

int64_t GetNumGPUPerNode(const json::Value& resources) {
  if (!resources.IsObject()) {
    return 0;
  }
  int64_t gpu = NumGPU(resources.Find("requests"));
  if (int64_t limit_gpu = NumGPU(resources.Find("limits")); gpu == 0 && limit_gpu > 0) {
    gpu = limit_gpu;
  }
  return gpu;
}

}  // namespace trainer::framework

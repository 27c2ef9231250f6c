// Volcano EnforcePodGroupPolicy, Build, Validate and watches (upstream
// plugins/volcano/volcano.go).
#include "runtime/plugins/volcano/volcano.h"

#include <optional>
#include <string>
#include <vector>

#include "runtime/api/kinds.h"
#include "runtime/plugins/podgroup/podgroup.h"

namespace trainer::plugins {

StatusOr<std::unique_ptr<framework::Plugin>> Volcano::New(const framework::PluginContext& ctx) {
  if (ctx.reader == nullptr) {
    return InvalidArgumentError("volcano plugin: a reader is required");
  }
  return std::unique_ptr<framework::Plugin>(new Volcano(ctx.reader));
}

namespace {

bool HasVolcano(const framework::Info* info) {
  return info != nullptr && info->runtime_policy.pod_group_policy &&
         info->runtime_policy.pod_group_policy->volcano;
}

// The priorityClassName of each replicatedJob's pod template that sets one, in order.
std::vector<std::string> PriorityClassNames(const framework::Info& info) {
  std::vector<std::string> out;
  const json::Value* rjobs = info.template_spec.jobset_spec.IsObject()
                                 ? info.template_spec.jobset_spec.Find("replicatedJobs")
                                 : nullptr;
  if (rjobs == nullptr || !rjobs->IsArray()) {
    return out;
  }
  for (const json::Value& rjob : rjobs->elements()) {
    const json::Value* pod = framework::PodSpecOf(rjob);
    const json::Value* pc = pod != nullptr ? pod->Find("priorityClassName") : nullptr;
    if (pc != nullptr && pc->IsString()) {
      out.push_back(pc->AsString());
    }
  }
  return out;
}

}  // namespace

Status Volcano::EnforcePodGroupPolicy(framework::Info* info, const api::TrainJob& job) {
  if (HasVolcano(info)) {
    info->scheduler.pod_annotations[volcano::kGroupNameAnnotation] = job.metadata.name;
  }
  return OkStatus();
}

StatusOr<std::vector<json::Value>> Volcano::Build(framework::Info* info, const api::TrainJob& job) {
  std::vector<json::Value> out;
  if (!HasVolcano(info)) {
    return out;
  }
  ASSIGN_OR_RETURN(bool build, podgroup::ShouldBuild(*reader_, api::kVolcanoPodGroupGVK, job));
  if (!build) {
    return out;
  }
  ASSIGN_OR_RETURN(podgroup::Size size, podgroup::SizeOf(*info));
  json::Value pg = podgroup::NewObject(api::kVolcanoPodGroupGVK, job);
  json::Value& spec = pg["spec"];
  spec.Set("minMember", json::Value(size.min_member));
  if (auto it = info->annotations.find(volcano::kQueueNameAnnotation);
      it != info->annotations.end()) {
    spec.Set("queue", json::Value(it->second));
  }
  // The last replicatedJob that sets one wins, as upstream.
  if (std::vector<std::string> pcs = PriorityClassNames(*info); !pcs.empty()) {
    spec.Set("priorityClassName", json::Value(pcs.back()));
  }
  spec.Set("minResources", std::move(size.min_resources));
  const auto& topology = info->runtime_policy.pod_group_policy->volcano->network_topology;
  if (topology) {
    json::Value& nt = spec["networkTopology"];
    nt = json::Value::Object();
    if (topology->mode) {
      nt.Set("mode", json::Value(*topology->mode));
    }
    // Upstream dereferences a nil highestTierAllowed (a panic); we omit it.
    if (topology->highest_tier_allowed) {
      nt.Set("highestTierAllowed", json::Value(*topology->highest_tier_allowed));
    }
  }
  out.push_back(std::move(pg));
  return out;
}

field::ValidationResult Volcano::Validate(const framework::Info* info, const api::TrainJob*,
                                          const api::TrainJob&) {
  field::ValidationResult result;
  if (!HasVolcano(info)) {
    return result;
  }
  field::Path spec = field::NewPath("spec");
  if (auto it = info->annotations.find(volcano::kQueueNameAnnotation);
      it != info->annotations.end() && it->second.empty()) {
    result.errors.push_back(
        field::Invalid(spec.Child("annotations").Key(volcano::kQueueNameAnnotation),
                       field::String(""), "Volcano queue name must not be empty"));
  }
  for (const std::string& pc : PriorityClassNames(*info)) {
    // The two built-in classes always exist; upstream stops checking at the first one.
    if (pc == "system-cluster-critical" || pc == "system-node-critical") {
      break;
    }
    StatusOr<json::Value> got = reader_->Get(api::kPriorityClassGVK, "", pc);
    if (!got.ok()) {
      result.errors.push_back(field::Invalid(
          spec.Child("templateSpec", "priorityClassName"), field::String(pc),
          "PriorityClass " + field::GoQuote(pc) + " doesn't exist: " + got.status().message()));
    }
  }
  return result;
}

std::vector<framework::Watch> Volcano::Watches() const {
  return podgroup::Watches(api::kVolcanoPodGroupGVK);
}

std::vector<framework::Index> Volcano::Indexes() const { return podgroup::Indexes(); }

}  // namespace trainer::plugins

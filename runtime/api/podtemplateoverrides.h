// Translation of the deprecated spec.podTemplateOverrides (Kubeflow Trainer v2.0/v2.1, upstream
// v2.1.0 pkg/apis/trainer/v1alpha1/trainjob_types.go PodTemplateOverride) into the
// spec.runtimePatches entry (v2.2+) that has the same effect, so older manifests keep working.
//
// How v2.1 applied them (v2.1.0 pkg/runtime/core/trainingruntime.go mergePodTemplateOverrides):
// for each override in list order, for each replicatedJob named in targetJobs, a strategic merge
// patch {metadata: {labels, annotations}, spec: <override spec>} against that job's Pod template.
// Only labels and annotations of the override's metadata were used, and the API server pruned any
// field outside the v2.1 schema (e.g. a container's image).
//
// The translation is ONE RuntimePatch, manager kPodTemplateOverridesManager, with one
// replicatedJobs entry per target job (in order of first mention):
//   {name: <job>, template: {spec: {template: {metadata: {labels, annotations}, spec: {...}}}}}
// When several overrides target the same job, their pod-template patches are combined with the
// Kubernetes strategic merge (common/json/patch.h StrategicMerge), later over earlier: applying the
// combined patch equals applying them one after another, which is v2.1's "later entries win"
// (maps merge, keyed lists -- containers, env, volumes ... -- merge by key, atomic lists such as
// tolerations are replaced by the later override).
// Values are copied as a Go client would re-encode them: nulls dropped, and fields outside the
// v2.1 schema dropped with a warning (`unknown field "spec.podTemplateOverrides[0].spec.foo"`,
// the apiserver's wording for pruned fields).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"
#include "runtime/api/types.h"

namespace trainer::api {

// The runtimePatches manager the translation writes under. A domain-prefixed path, as the
// webhook requires of every manager; it names the legacy field it came from.
inline constexpr char kPodTemplateOverridesManager[] = "trainer.kubeflow.org/podtemplateoverrides";

struct TranslationResult {
  // JSON array of RuntimePatch objects ({manager, trainingRuntimeSpec}, no time: defaulting sets
  // it): one entry when spec.podTemplateOverrides has entries, empty otherwise.
  json::Value runtime_patches = json::Value::Array();
  // Where the entry goes in spec.runtimePatches: the index of an existing entry of
  // kPodTemplateOverridesManager (a previous translation, replaced in place), else the end.
  size_t index = 0;
  // The deprecation notice, then one line per dropped field. Empty when nothing was translated.
  std::vector<std::string> warnings;
};

// Translates trainjob_spec["podTemplateOverrides"] (the TrainJob's `spec` object). Errors name the
// field as the user wrote it: "spec.podTemplateOverrides[0].targetJobs[1].name: Required value",
// "spec.podTemplateOverrides[0].spec.containers[0].name: Required value",
// "spec.podTemplateOverrides[0].spec.volumes: expected array, got object".
// The warning reads: spec.podTemplateOverrides is deprecated; it was translated into
// spec.runtimePatches[N] (manager "trainer.kubeflow.org/podtemplateoverrides")
StatusOr<TranslationResult> TranslatePodTemplateOverrides(const json::Value& trainjob_spec);

// v2.1's admission checks of podTemplateOverrides against the runtime's JobSet template
// (`runtime_template` = the runtime's spec.template), from upstream v2.1.0
// plugins/jobset/jobset.go Validate. The translated runtimePatches entry cannot carry them: v2.3
// checks patches against the already-patched template, where an unknown job or container has
// been added by the merge. Returns the details of field.Invalid errors on path
// spec.podTemplateOverrides (value: the whole list), in v2.1's order:
//   "must not have targetJob that doesn't exist in the runtime job template"
//   "must not have initContainer that doesn't exist in the runtime job <job>"
//   "must not have container that doesn't exist in the runtime job <job>"
//   "must not have envs for the dataset-initializer, model-initializer, node containers"
// Call it on a spec TranslatePodTemplateOverrides accepted; malformed entries are skipped.
std::vector<std::string> ValidatePodTemplateOverrides(const json::Value& trainjob_spec,
                                                      const json::Value& runtime_template);

// Applies the translation to a decoded TrainJob: upserts the RuntimePatch into
// job.spec.runtime_patches (by manager, time unset) and removes spec.podTemplateOverrides from
// job.raw, so EncodeTrainJob(job) is the v2.3 form. Appends warnings to `warnings` (may be null).
// A job without podTemplateOverrides is left unchanged.
Status ApplyPodTemplateOverrides(TrainJob& job, std::vector<std::string>* warnings);

}  // namespace trainer::api

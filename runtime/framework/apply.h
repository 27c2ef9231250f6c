// Keyed list edits of pod specs, as upstream pkg/apply/apply.go: plugins never edit lists by
// index. Also builders for the small JSON objects plugins emit (env vars, owner references).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/kube/types.h"
#include "runtime/api/types.h"

namespace trainer::framework {

// Each upsert replaces the first element matching the item (keeping its position) or appends.
// env: by name.
void UpsertEnvVars(json::Value& env, const json::Value& items);
void UpsertEnvVar(json::Value& env, json::Value item);
// ports: by containerPort, or by name. As upstream (ptr.Equal on optional names), two ports
// without a name match each other.
void UpsertPorts(json::Value& ports, const json::Value& items);
void UpsertPort(json::Value& ports, json::Value item);
// volumes: by name. volumeMounts: by mountPath.
void UpsertVolumes(json::Value& volumes, const json::Value& items);
void UpsertVolumeMounts(json::Value& mounts, const json::Value& items);

// The trainer's port, {containerPort: 29500}, by containerPort.
void UpsertTrainerPort(json::Value& ports);

// {name, value}.
json::Value EnvVar(std::string_view name, std::string_view value);
// {name, valueFrom: {fieldRef: {fieldPath}}}.
json::Value EnvVarFromField(std::string_view name, std::string_view field_path);
// A corev1.EnvVar as upstream's apply.EnvVar converts it: `value` is always written (""
// when unset) unless valueFrom is set; valueFrom keeps fieldRef.fieldPath,
// resourceFieldRef{containerName, resource, divisor}, configMapKeyRef and secretKeyRef
// {key, name, optional}.
json::Value NormalizeEnvVar(const json::Value& env);
// apply.EnvVars over a TrainJob env list (null → empty array).
json::Value NormalizeEnvVars(const json::Value& env);

// The controller reference every object built for a TrainJob carries. `uid` is omitted when
// the TrainJob has none (offline rendering).
json::Value TrainJobOwnerReference(const api::TrainJob& job);

// The start of every object built for a TrainJob, in the TrainJob's namespace:
//   {apiVersion, kind, metadata: {name, namespace, labels, annotations,
//                                 ownerReferences: [TrainJobOwnerReference(job)]}}
// Empty label and annotation maps are left out. The caller adds the body (data, spec ...).
json::Value NewOwnedObject(const kube::GroupVersionKind& gvk, std::string_view name,
                           const api::TrainJob& job,
                           const std::map<std::string, std::string>& labels = {},
                           const std::map<std::string, std::string>& annotations = {});

}  // namespace trainer::framework

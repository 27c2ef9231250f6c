// Patches over json::Value: RFC 6902 JSON Patch (create and apply), RFC 7386 JSON Merge Patch,
// and Kubernetes strategic merge patch for pod and JobSet templates.
//
// CreateJsonPatch is what an admission webhook answers with (controller-runtime's
// PatchResponseFromRaw); StrategicMerge is how runtime patches and podTemplateOverrides apply to
// templates, following k8s.io/apimachinery/pkg/util/strategicpatch for the fields we meet.
//
//   ASSIGN_OR_RETURN(json::Value ops, json::CreateJsonPatch(original, defaulted));
//   RETURN_IF_ERROR(json::ApplyJsonPatch(doc, ops));    // all or nothing
//   RETURN_IF_ERROR(json::StrategicMerge(pod_template, override));
#pragma once

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::json {

// The RFC 6902 operations (an array of {"op","path"[,"value"]}) turning `from` into `to`:
// objects are diffed key by key ("remove" for keys only in `from`, "add" for keys only in `to`),
// arrays element by element by index with trailing "add"s or "remove"s (highest index first),
// and a changed type or scalar is a "replace". Equal documents give []. Pointer tokens escape
// '~' as "~0" and '/' as "~1" (RFC 6901). ApplyJsonPatch(from, result) yields `to`.
StatusOr<json::Value> CreateJsonPatch(const json::Value& from, const json::Value& to);

// The same operations for one member of a larger document: `from` is the member's current value
// at pointer `at` (null when the member is absent: one "add"), `to` its new value. Equals
// CreateJsonPatch over the whole documents when nothing else differs, without walking or copying
// the rest of them.
StatusOr<json::Value> CreateJsonPatchAt(std::string_view at, const json::Value* from,
                                        const json::Value& to);

// Applies RFC 6902 operations (add, remove, replace, move, copy, test) in order. Atomic: on any
// error `doc` is left unchanged. Paths are RFC 6901 pointers; "-" appends to an array in "add".
// Errors name the operation: "json patch operation 1 (remove /a/b): path not found".
Status ApplyJsonPatch(json::Value& doc, const json::Value& ops);

// RFC 7386: objects merge recursively, null deletes a key, anything else replaces.
Status MergePatch(json::Value& target, const json::Value& patch);

// Kubernetes strategic merge patch (strategicpatch.StrategicMergePatch with the core/v1 and
// JobSet struct tags), for pod templates and JobSet specs. Maps merge recursively and a null
// deletes a key. Lists merge by key according to their field name (the patchMergeKey tags):
//   name:          containers, initContainers, ephemeralContainers, env, volumes,
//                  imagePullSecrets, schedulingGates, resourceClaims, replicatedJobs
//   ip:            hostAliases
//   mountPath:     volumeMounts          devicePath:  volumeDevices
//   containerPort: ports (with protocol, default "TCP", as the list-map key; upstream's SMP
//                  compares containerPort only)
//   topologyKey:   topologySpreadConstraints
// Every other list is replaced. A merged list is ordered as upstream's normalizeElementOrder
// does: the items the patch names, in patch order, interleaved with the target's other items in
// target order, where a target item goes first only if it preceded, in the target, the patch item
// it meets. So a new item lands before untouched ones ([A,B] + [C] -> [C,A,B]) and a changed item
// keeps its place ([A,B,C] + [B'] -> [A,B',C]).
// Directives: `$patch: replace` (a map, or as a list item the whole list), `$patch: delete`
// (a list item by key; on a map it leaves an empty map, as upstream), `$retainKeys` (keys to
// keep; every key the patch sets must be listed), `$deleteFromPrimitiveList/<field>`;
// `$setElementOrder/<field>` is accepted and ignored. Directives and unmatched nulls never
// appear in the result. A keyed-list patch item lacking its key, `$patch: merge`, an unknown
// `$patch`, or non-object items in a keyed list are InvalidArgument errors, as upstream. Atomic:
// on an error `target` is left unchanged.
Status StrategicMerge(json::Value& target, const json::Value& patch);
// The same without the copy of `target` that atomicity takes, for a caller that discards
// `target` on an error (it is then partly merged): the copy cost more than the merge itself.
Status StrategicMergeNonAtomic(json::Value& target, const json::Value& patch);

}  // namespace trainer::json

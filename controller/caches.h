// How the controller caches the kinds it watches, and which TrainJob an owned object's event
// concerns. Caches hold what the controller reads and no more (memory at 100k TrainJobs):
//   JobSet           metadata (with the managers list), spec.suspend, replicatedJobs names and
//                    replicas, status;
//   ConfigMap/Secret of a TrainJob: everything but the managedFields beyond their managers;
//                    of anyone else (they are all watched: an owner is not a selector): metadata;
//   other owned kinds (PodGroups): everything, managedFields slimmed to the managers;
//   kinds watched for a mapping (LimitRange, RuntimeClass): everything but managedFields;
//   the webhook certificate Secret (TrainJobStatus): metadata and ca.crt.
// The managers list stays on owned objects for the applied-hash rule (UpToDate): without it an
// edit by someone else would look up to date and never be taken back.
#pragma once

#include <string>

#include "common/informer/informer.h"
#include "common/json/json.h"
#include "common/kube/types.h"
#include "runtime/framework/interface.h"

namespace trainer::controller {

// The TrainJob controlling `obj` ("ns/name"), or "" (upstream handler.EnqueueRequestForOwner
// with OnlyControllerOwner).
std::string ControllerTrainJob(const json::Value& obj);

// The informer options of a watched kind: its resource, what its cache keeps (above).
informer::InformerOptions CacheOptions(const framework::Watch& watch,
                                       const kube::GroupVersionResource& gvr);

// Namespaces: name, uid, resourceVersion, creationTimestamp and deletionTimestamp, all the
// reconciler reads (TrainJobReconciler::BeingDeleted).
void NamespaceMetadata(json::Value& ns);
void SlimManagedFields(json::Value& obj);
void TrimJobSet(json::Value& jobset);
void TrimUnowned(json::Value& obj);
// The webhook's certificate Secret with TrainJobStatus, whose CAs the TrainJobStatus plugin
// copies into every TrainJob's <trainjob>-tls-config ConfigMap: cached with ca.crt and
// ca-bundle.crt only (never a private key).
void KeepCACertOnly(json::Value& secret);
// Those two, as one string: when it changes, every tls-config ConfigMap is applied again.
std::string PublishedCAsOf(const json::Value& secret);

}  // namespace trainer::controller

// Value types of the Kubernetes client interfaces (common/kube/client.h): group/version/kind and
// group/version/resource names, per-verb options mirroring metav1.{List,Create,Patch,Delete}
// Options, and watch events. Plain structs; no I/O.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/json/json.h"

namespace trainer::kube {

struct GroupVersionKind {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;

  // "v1" for the core group, otherwise "group/version".
  std::string ApiVersion() const;
  // Splits an object's apiVersion ("jobset.x-k8s.io/v1alpha2" or "v1") and pairs it with kind.
  static GroupVersionKind FromApiVersion(std::string_view api_version, std::string_view kind);
  // Reads apiVersion and kind of an object (empty fields when absent).
  static GroupVersionKind Of(const json::Value& obj);
  std::string ToString() const;  // "TrainJob.v1alpha1.trainer.kubeflow.org" (Go's String form)
  auto operator<=>(const GroupVersionKind&) const = default;
};

struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;  // lower-case plural: "trainjobs"

  std::string ToString() const;  // "trainjobs.v1alpha1.trainer.kubeflow.org"
  auto operator<=>(const GroupVersionResource&) const = default;
};

// metav1.ListOptions. A page is one List call; ListAll (client.h) follows `continue`.
struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;  // page size; 0 = everything in one response
  std::string continue_token;
  // "" = most recent (a quorum read); "0" = any version (served from the watch cache).
  std::string resource_version;
  std::string resource_version_match;  // "NotOlderThan" | "Exact" | ""
  // Parts of each item (paths from the item's root, e.g. {"metadata", "managedFields"}) the
  // caller drops anyway: a client may leave them out while decoding, or not. Must outlive the
  // call.
  const json::SkipPaths* skip = nullptr;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // start after this version; "" = from now, with synthetic ADDs
  bool allow_bookmarks = true;
  // Server-side timeout. 0 = a random value in [5, 10) minutes, as client-go's reflector picks,
  // so a fleet of watches does not reconnect in lock-step.
  std::chrono::seconds timeout{0};
  // Dead-connection detector: the stream is abandoned (kUnavailable) if no byte arrives for this
  // long. 0 = the server timeout plus 30 s, i.e. only a connection that outlived its own server
  // deadline without being closed; TCP keepalive catches silently dropped peers earlier.
  std::chrono::milliseconds idle_timeout{0};
  // Parts of each event's object (paths from the object's root) the caller drops anyway, as
  // ListOptions::skip. Must outlive the call.
  const json::SkipPaths* skip = nullptr;
};

struct CreateOptions {
  std::string field_manager;
  bool dry_run = false;
};

using UpdateOptions = CreateOptions;

struct DeleteOptions {
  std::optional<std::string> propagation_policy;  // "Foreground" | "Background" | "Orphan"
  std::optional<int64_t> grace_period_seconds;
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  bool dry_run = false;
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
};
std::string_view PatchContentType(PatchType type);

struct PatchOptions {
  std::string field_manager;
  bool dry_run = false;
};

// Server-side apply (application/apply-patch+yaml).
struct ApplyOptions {
  std::string field_manager;  // required by the apiserver
  bool force = false;         // take ownership of conflicting fields
  bool dry_run = false;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
std::string_view WatchEventTypeName(WatchEventType t);

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  // The object (for kBookmark only metadata.resourceVersion is meaningful; for kError a
  // metav1.Status).
  json::Value object;
};

}  // namespace trainer::kube

// FakeClient: an in-memory kube::Client for unit tests of code that talks to the apiserver
// (controllers, leader election, informers). It keeps objects per resource, assigns
// resourceVersions from one counter, uid and creationTimestamp on create, answers with the
// apiserver's error codes and message texts (NotFound, AlreadyExists, Conflict on a stale
// resourceVersion in an update or a merge patch, or on a failed delete precondition), and
// serves watches from an event log, with Compact() to make old versions answer 410 Gone. Not
// modelled: field ownership (Apply merges like a merge patch and never conflicts), strategic
// merge (treated as a merge patch), JSON patch, admission, defaulting, garbage collection.
// Thread-safe.
//
//   kube::testing::FakeClient c;
//   c.Seed(kube::kConfigMaps, cm);
//   c.FailNext("update", ConflictError("..."));   // inject one failure
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/kube/client.h"

namespace trainer::kube::testing {

class FakeClient : public Client {
 public:
  FakeClient() = default;

  // Stores `obj` as if created (metadata.namespace decides the namespace).
  void Seed(const GroupVersionResource& gvr, json::Value obj);
  // The next call of `verb` ("get", "list", "create", "update", "delete", "patch", "apply",
  // "watch") fails with `status` instead of running. "list-continue" is the next list call that
  // carries a continue token (a later page), e.g. a continuation expired with 410 Gone; it counts
  // in Calls("list-continue").
  void FailNext(const std::string& verb, Status status);
  // Forgets the event log: watches from any earlier resourceVersion get 410 Gone.
  void Compact();
  // Ends every open watch (as a server timeout would); they return OK.
  void CloseWatches();
  // While down, open watches end and new ones fail with kUnavailable (an apiserver outage as
  // watchers see it); reads and writes keep working so tests can change state meanwhile.
  void SetWatchesDown(bool down);
  // While held, lists of `gvr` wait (a list that takes long, as a large collection's does);
  // other requests are served. Held lists give up after 30 s, so a failed test cannot hang.
  void HoldLists(const GroupVersionResource& gvr, bool hold);
  // Discovery (GetPath of /api/<v> or /apis/<group>/<v>) lists `kind` as served by `gvr`;
  // without it a group version is not found, as for a CRD that is not installed.
  void Serve(const GroupVersionResource& gvr, const std::string& kind);
  int Calls(const std::string& verb) const;
  std::string CurrentResourceVersion() const;

  StatusOr<json::Value> Get(const GroupVersionResource& gvr, std::string_view ns,
                            std::string_view name) override;
  StatusOr<json::Value> List(const GroupVersionResource& gvr, std::string_view ns,
                             const ListOptions& options) override;
  StatusOr<json::Value> Create(const GroupVersionResource& gvr, std::string_view ns,
                               const json::Value& obj, const CreateOptions& options = {}) override;
  StatusOr<json::Value> Update(const GroupVersionResource& gvr, std::string_view ns,
                               const json::Value& obj, const UpdateOptions& options = {}) override;
  Status Delete(const GroupVersionResource& gvr, std::string_view ns, std::string_view name,
                const DeleteOptions& options = {}) override;
  StatusOr<json::Value> Patch(const GroupVersionResource& gvr, std::string_view ns,
                              std::string_view name, PatchType type, const json::Value& patch,
                              const PatchOptions& options = {}) override;
  StatusOr<json::Value> Apply(const GroupVersionResource& gvr, std::string_view ns,
                              const json::Value& obj, const ApplyOptions& options) override;
  StatusOr<json::Value> PatchStatus(const GroupVersionResource& gvr, std::string_view ns,
                                    std::string_view name, PatchType type, const json::Value& patch,
                                    const PatchOptions& options = {}) override;
  StatusOr<json::Value> ApplyStatus(const GroupVersionResource& gvr, std::string_view ns,
                                    const json::Value& obj, const ApplyOptions& options) override;
  Status Watch(const GroupVersionResource& gvr, std::string_view ns, const WatchOptions& options,
               const WatchHandler& handler, std::stop_token stop = {}) override;
  StatusOr<json::Value> GetPath(std::string_view path) override;

 private:
  using Key = std::tuple<GroupVersionResource, std::string, std::string>;  // gvr, ns, name
  struct LoggedEvent {
    int64_t rv;
    GroupVersionResource gvr;
    std::string ns;
    WatchEventType type;
    json::Value object;
  };

  Status TakeFailure(const std::string& verb);  // mu_ held
  StatusOr<json::Value> StoreLocked(const GroupVersionResource& gvr, std::string_view ns,
                                    json::Value obj, bool create);
  StatusOr<json::Value> MergeLocked(const GroupVersionResource& gvr, std::string_view ns,
                                    std::string_view name, const json::Value& patch,
                                    bool create_if_missing);
  void LogLocked(const GroupVersionResource& gvr, std::string_view ns, WatchEventType type,
                 const json::Value& obj);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, json::Value> objects_;
  std::map<std::string, json::Value> discovery_;  // path -> APIResourceList
  std::deque<LoggedEvent> log_;
  int64_t rv_ = 1;
  int64_t compacted_rv_ = 0;
  int64_t uid_ = 0;
  uint64_t close_generation_ = 0;
  bool watches_down_ = false;
  std::set<GroupVersionResource> held_lists_;
  std::map<std::string, std::deque<Status>> failures_;
  std::map<std::string, int> calls_;
};

// RFC 7386 merge patch (null deletes a key, objects merge, everything else replaces).
void ApplyMergePatch(json::Value& target, const json::Value& patch);

// The apiserver's messages: `configmaps "x" not found`, `jobsets.jobset.x-k8s.io "x" already
// exists`, `Operation cannot be fulfilled on ...: the object has been modified; ...`.
std::string QualifiedResource(const GroupVersionResource& gvr);

}  // namespace trainer::kube::testing

// The Kubernetes client interfaces of trainer-cpp: Reader (get, list), Writer (create, update,
// delete, patch, server-side apply, status subresource), Watcher (a watch stream) and Client
// (all three plus raw GETs for discovery). common/kube/curl implements them over libcurl; tests
// and the runtime library can implement them in memory.
//
// Objects travel as json::Value. Resources are named by GroupVersionResource plus namespace
// ("" for cluster-scoped kinds or all namespaces in List/Watch) and name. Errors are Status values
// whose code follows the apiserver's Status reason (common/kube/api_error.h): kNotFound,
// kAlreadyExists, kConflict, kInvalid, kGone, kTooManyRequests (retry_after_seconds set),
// kForbidden, kUnauthorized, kUnavailable ...; http_code() is the HTTP status and message() is the
// apiserver's message verbatim, e.g.
//   TrainJob.trainer.kubeflow.org "x" is invalid: spec.trainer.numNodes: Invalid value: -1: ...
//
//   kube::Client& c = ...;
//   ASSIGN_OR_RETURN(json::Value cm, c.Get(kube::kConfigMaps, "default", "settings"));
//   ASSIGN_OR_RETURN(json::Value applied,
//                    c.Apply(kube::kJobSets, ns, desired, {.field_manager = "trainer", .force =
//                    true}));
//   Status s = c.Watch(kube::kConfigMaps, "default", {}, [](kube::WatchEvent& e) { ...; return
//   true; });
#pragma once

#include <functional>
#include <stop_token>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/kube/types.h"
#include "common/status/status.h"

namespace trainer::kube {

class Reader {
 public:
  virtual ~Reader() = default;

  // The object, or kNotFound.
  virtual StatusOr<json::Value> Get(const GroupVersionResource& gvr, std::string_view ns,
                                    std::string_view name) = 0;
  // One page of a list: the List object ({"kind": "...List", "metadata": {"resourceVersion",
  // "continue"}, "items": [...]}). Use ListAll to follow `continue` tokens.
  virtual StatusOr<json::Value> List(const GroupVersionResource& gvr, std::string_view ns,
                                     const ListOptions& options) = 0;
  // A list whose items are handed to `on_item` one by one rather than returned; returns the List
  // without them ("items": [], metadata with resourceVersion and continue). A client that
  // decodes the response as it arrives (CurlClient) never holds all items at once, so this
  // suits unpaged lists of large collections. An error of `on_item` ends the list with it.
  // This default lists, then hands over the items.
  virtual StatusOr<json::Value> ListEach(const GroupVersionResource& gvr, std::string_view ns,
                                         const ListOptions& options,
                                         const std::function<Status(json::Value& item)>& on_item);
};

class Writer {
 public:
  virtual ~Writer() = default;

  // POST. Returns the object as stored. kAlreadyExists if the name is taken.
  virtual StatusOr<json::Value> Create(const GroupVersionResource& gvr, std::string_view ns,
                                       const json::Value& obj,
                                       const CreateOptions& options = {}) = 0;
  // PUT of a whole object (name and resourceVersion from its metadata): kConflict when the
  // resourceVersion is stale. Only for objects we own entirely (Leases); everything else is
  // applied or patched.
  virtual StatusOr<json::Value> Update(const GroupVersionResource& gvr, std::string_view ns,
                                       const json::Value& obj,
                                       const UpdateOptions& options = {}) = 0;
  // DELETE. kNotFound if absent; kConflict if a precondition fails.
  virtual Status Delete(const GroupVersionResource& gvr, std::string_view ns, std::string_view name,
                        const DeleteOptions& options = {}) = 0;
  // PATCH with a merge, JSON or strategic-merge patch document.
  virtual StatusOr<json::Value> Patch(const GroupVersionResource& gvr, std::string_view ns,
                                      std::string_view name, PatchType type,
                                      const json::Value& patch,
                                      const PatchOptions& options = {}) = 0;
  // Server-side apply of `obj` (its metadata.name names the target). kConflict lists the fields
  // another manager owns unless options.force.
  virtual StatusOr<json::Value> Apply(const GroupVersionResource& gvr, std::string_view ns,
                                      const json::Value& obj, const ApplyOptions& options) = 0;
  // The same on the /status subresource.
  virtual StatusOr<json::Value> PatchStatus(const GroupVersionResource& gvr, std::string_view ns,
                                            std::string_view name, PatchType type,
                                            const json::Value& patch,
                                            const PatchOptions& options = {}) = 0;
  virtual StatusOr<json::Value> ApplyStatus(const GroupVersionResource& gvr, std::string_view ns,
                                            const json::Value& obj,
                                            const ApplyOptions& options) = 0;
};

// Called for each event in stream order, on the watching thread. Return false to end the watch.
// The handler may move the event's object out.
using WatchHandler = std::function<bool(WatchEvent& event)>;

class Watcher {
 public:
  virtual ~Watcher() = default;

  // Opens one watch stream and delivers its events until:
  //  - the server ends the stream (its timeout): returns OK; watch again from the last
  //    resourceVersion seen;
  //  - the handler returns false, or `stop` is requested: returns kCancelled;
  //  - an ERROR event arrives: returns its Status (kGone for "too old resource version": relist);
  //  - the connection fails or goes idle (options.idle_timeout): kUnavailable.
  // There is no overall request timeout on a watch.
  virtual Status Watch(const GroupVersionResource& gvr, std::string_view ns,
                       const WatchOptions& options, const WatchHandler& handler,
                       std::stop_token stop = {}) = 0;
};

class Client : public Reader, public Writer, public Watcher {
 public:
  // GET of an absolute API path ("/apis/jobset.x-k8s.io/v1alpha2", "/version"), parsed as JSON.
  virtual StatusOr<json::Value> GetPath(std::string_view path) = 0;
};

// Lists every page (`limit` is the page size; 500 when unset) into one List object whose
// metadata.resourceVersion is the first page's (continue tokens pin that snapshot). If a continue
// token expires mid-way (kGone) the list is redone once as a single unpaginated request, as
// client-go's pager falls back to a full list.
StatusOr<json::Value> ListAll(Reader& reader, const GroupVersionResource& gvr, std::string_view ns,
                              ListOptions options);

}  // namespace trainer::kube

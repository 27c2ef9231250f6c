// TrainJobReconciler: one level-triggered pass over one TrainJob, as upstream's
// TrainJobReconciler.Reconcile (pkg/controller/trainjob_controller.go, v2.3.0) in upstream's
// steps, with its known bugs fixed:
//   - GetTrainJob, then skip TrainJobs whose spec.managedBy is not
//     trainer.kubeflow.org/trainjob-controller (no objects, no status);
//   - ReconcileObjects: build the objects with the runtime library (NewObjects) and apply them
//     as server-side apply (field manager `trainer`, force), concurrently on a bounded executor
//     the reconciler owns (the objects do not depend on each other; the JobSet goes in a second
//     wave, last); the first failure in NewObjects order is the pass's error; an object whose
//     desired content hashes to the `trainer.kubeflow.org/applied-hash` annotation of its live
//     copy, and that no other manager has written, is not re-applied; a build or apply error is
//     an Event (TrainJobResourcesCreationFailed) and, while it lasts, a `ResourcesCreationFailed`
//     condition naming the failing object (upstream #2351, #3671);
//   - SetSuspendedCondition, SetTrainJobStatus (JobSet conditions, jobsStatus; a deadline
//     Failed condition survives), ReconcileDeadline (activeDeadlineSeconds); Failed is terminal
//     (upstream HEAD, #3891); an unsupported runtime is a Failed condition (upstream panics);
//   - status goes out as a JSON merge patch on /status, only when it changed.
// Reads come from a framework::Reader (the informer caches in the binary, a MapReader in tests);
// writes go to a kube::Writer. The only threads it owns are the apply executor's.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/executor/executor.h"
#include "common/json/json.h"
#include "common/kube/client.h"
#include "common/kube/events.h"
#include "common/status/status.h"
#include "controller/overlay_reader.h"
#include "controller/reconcile.h"
#include "runtime/api/labels.h"
#include "runtime/api/types.h"
#include "runtime/core/runtime.h"
#include "runtime/framework/reader.h"

namespace trainer::controller {

inline constexpr char kTrainJobControllerName[] = "trainjob_controller";
inline constexpr char kTrainJobReportingController[] = "trainer-trainjob-controller";
// The one Event the controller emits, as upstream's TrainJob reconciler records it when
// applying the objects fails (type Warning).
inline constexpr char kEventReasonCreationFailed[] = "TrainJobResourcesCreationFailed";
inline constexpr char kEventActionReconciling[] = "Reconciling";

struct ReconcilerOptions {
  bool lifecycle_conditions = false;
  // Threads applying objects beside the reconcile workers (each worker applies too).
  size_t apply_threads = 8;
};

class TrainJobReconciler {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;
  struct Deps {
    // Reads TrainJobs and owned objects. When it is an OverlayReader (overlay_reader.h), objects
    // applied in this pass are visible to the status computation of the same pass.
    const framework::Reader* reader = nullptr;
    OverlayReader* overlay = nullptr;  // optional
    kube::Writer* writer = nullptr;
    // The runtime for a registry key (api::RuntimeRegistryKey), or null when unsupported.
    std::function<core::Runtime*(std::string_view key)> runtimes;
    kube::EventRecorder* events = nullptr;  // optional
    ReconcileObserver* observer = nullptr;  // optional
    Clock now;                              // default: system_clock::now
    // The TrainJob as the apiserver has it now (a quorum read), or kNotFound; optional. Read
    // only after ConfirmNextPass.
    std::function<StatusOr<json::Value>(std::string_view ns, std::string_view name)> get_live;
  };

  TrainJobReconciler(Deps deps, ReconcilerOptions options);

  // Reconciles TrainJob ns/name. Thread-safe for distinct keys (the workqueue never hands the
  // same key to two workers).
  ReconcileResult Reconcile(std::string_view ns, std::string_view name);

  // The next pass for TrainJob `key` ("ns/name") reads the TrainJob from the apiserver before
  // applying. For passes that could re-create objects from a stale cache: after a relist the
  // caches of owned objects and runtimes can be newer than the TrainJob cache, which may still
  // hold a TrainJob deleted meanwhile; applying from it would re-create its snapshot and JobSet
  // (and start its pods). The manager calls this when an owned object is deleted, and when a
  // runtime event retries a TrainJob that has no snapshot (waiting for its runtime, or its
  // snapshot deleted with it).
  void ConfirmNextPass(const std::string& key);

 private:
  // What ReconcileObjects did.
  struct ObjectsOutcome {
    Status error;
    bool build_failed = false;    // NewObjects failed (else an apply did, if error)
    std::string failed_object;    // "JobSet ns/name" whose apply failed
    bool jobset_created = false;  // the JobSet did not exist before this pass
    bool failed() const { return !error.ok(); }
  };
  struct Pending;

  // The TrainJob from the cache; from the apiserver when ConfirmNextPass marked it.
  StatusOr<json::Value> GetTrainJob(std::string_view ns, std::string_view name,
                                    const std::string& key);
  // The TrainJob is being deleted: its own deletionTimestamp, or its namespace's (from the
  // reader's Namespace cache, when there is one) set after the TrainJob was created.
  bool BeingDeleted(const json::Value& trainjob) const;
  // Everything after the skip: objects, conditions, status, deadline, the status patch. The
  // live document is job.raw, which the pass only reads.
  ReconcileResult ReconcileTrainJob(const std::string& key, api::TrainJob& job);
  // Upstream's reconcileObjects (build, then apply), plus our ResourcesCreationFailed
  // condition and the event.
  ObjectsOutcome ReconcileObjects(core::Runtime& runtime, api::TrainJob& job);
  ObjectsOutcome ApplyObjects(std::vector<json::Value> objects);
  // Applies `wave` concurrently; false (and `out` says why) when one failed.
  bool ApplyWave(const std::vector<Pending*>& wave, ObjectsOutcome& out);
  void Send(Pending& p);
  // The live copy of an object about to be applied: none, another content, or this content.
  enum class Live { kAbsent, kOutdated, kCurrent };
  // Sets the applied-hash annotation and compares it with the live copy (read once per object:
  // a JobSet is also created when it was absent).
  Live PrepareApply(json::Value& obj);
  void RecordFailure(const json::Value& trainjob, const Status& error);

  // Condition steps, as upstream names them (setSuspendedCondition, setTrainJobStatus,
  // reconcileDeadline), and our opt-in lifecycle conditions.
  void SetCondition(api::TrainJob& job, std::string_view type, std::string_view status,
                    std::string_view reason, std::string message);
  void SetSuspendedCondition(api::TrainJob& job);
  Status SetTrainJobStatus(core::Runtime& runtime, api::TrainJob& job);
  void SetLifecycleConditions(api::TrainJob& job);
  std::optional<std::chrono::milliseconds> ReconcileDeadline(api::TrainJob& job);
  Status PatchStatus(const api::TrainJob& job, const api::TrainJobStatus& prev);
  void ReportState(const std::string& key, const api::TrainJob& job);
  std::string Now() const;

  bool TakeConfirmMark(const std::string& key);
  // The cached TrainJob replaced by the apiserver's copy; kNotFound when it is gone there.
  Status ConfirmLive(std::string_view ns, std::string_view name, json::Value& cached);

  Deps deps_;
  ReconcilerOptions options_;
  executor::Executor applies_;
  std::mutex confirm_mu_;
  std::unordered_set<std::string> confirm_marks_;  // keys waiting for a confirming read
};

// The JSON merge patch {"status": {...}} turning `prev` into `next` at the level of status
// fields (lists are replaced whole, as merge patches do); {"status": null} when `next` is empty
// (the CRD rejects an empty status object); null when nothing changed.
json::Value StatusMergePatch(const api::TrainJobStatus& prev, const api::TrainJobStatus& next);

// The event note: "TrainJob resources reconciliation failed: <err>" with the error cut at 950
// characters (runes) and " ..." appended when cut, as upstream's "%.950v".
std::string CreationFailedNote(std::string_view error);

// True when `live` carries `hash` in api::kAnnotationAppliedHash and its managedFields (when
// present) show no manager other than `trainer` on the main resource, so re-applying cannot change
// it.
bool UpToDate(const json::Value& live, std::string_view hash);

// The JobSet counts every replicated job ready (ready + succeeded >= replicas).
bool JobSetAllReady(const json::Value& jobset);

}  // namespace trainer::controller

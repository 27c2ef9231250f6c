// TrainJobReconciler: one level-triggered pass over one TrainJob, as upstream's
// TrainJobReconciler.Reconcile (pkg/controller/trainjob_controller.go, v2.3.0) with its known
// bugs fixed (reference §5.1, §10.11, §10.12):
//   - TrainJobs whose spec.managedBy is not trainer.kubeflow.org/trainjob-controller are skipped;
//   - objects come from the runtime library (NewObjects) and go out as server-side apply
//     (field manager `trainer`, force), concurrently (they do not depend on each other); the
//     first failure in NewObjects order is the pass's error; an object whose
//     desired content hashes to the `trainer.kubeflow.org/applied-hash` annotation of its live
//     copy, and that no other manager has written, is not re-applied;
//   - Suspended condition and resume, status from the runtime (JobSet conditions, jobsStatus),
//     activeDeadlineSeconds; Failed is terminal (upstream HEAD, #3891);
//   - an apply or build error is an Event (TrainJobResourcesCreationFailed) and, while it lasts,
//     a `ResourcesCreationFailed` condition naming the failing object (upstream #2351, #3671);
//   - status goes out as a JSON merge patch on /status, only when it changed.
// Reads come from a framework::Reader (the informer caches in the binary, a MapReader in tests);
// writes go to a kube::Writer. Nothing here owns a thread.
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

#include "common/json/json.h"
#include "common/kube/client.h"
#include "common/kube/events.h"
#include "common/status/status.h"
#include "controller/overlay_reader.h"
#include "runtime/api/types.h"
#include "runtime/core/runtime.h"
#include "runtime/framework/reader.h"

namespace trainer::controller {

inline constexpr char kTrainJobControllerName[] = "trainjob_controller";
inline constexpr char kTrainJobReportingController[] = "trainer-trainjob-controller";
// Annotation on every applied object: the hash of the content trainer applied (see
// docs/design/controller.md). Lets a restarted controller skip objects that are already right.
inline constexpr char kAppliedHashAnnotation[] = "trainer.kubeflow.org/applied-hash";

// Condition vocabulary (upstream pkg/apis/trainer/v1alpha1/trainjob_types.go, constants.go).
inline constexpr char kConditionSuspended[] = "Suspended";
inline constexpr char kConditionComplete[] = "Complete";
inline constexpr char kConditionFailed[] = "Failed";
inline constexpr char kReasonSuspended[] = "Suspended";
inline constexpr char kReasonResumed[] = "Resumed";
inline constexpr char kReasonDeadlineExceeded[] = "DeadlineExceeded";
inline constexpr char kReasonRuntimeNotSupported[] = "TrainingRuntimeNotSupported";
inline constexpr char kMessageSuspended[] = "TrainJob is suspended";
inline constexpr char kMessageResumed[] = "TrainJob is resumed";
inline constexpr char kMessageDeadlineExceeded[] = "TrainJob exceeded its active deadline";
// Beyond upstream: present (True) only while building or applying the objects fails.
inline constexpr char kConditionResourcesCreationFailed[] = "ResourcesCreationFailed";
inline constexpr char kReasonBuildFailed[] = "BuildFailed";
inline constexpr char kReasonApplyFailed[] = "ApplyFailed";
// Opt-in (--lifecycle-conditions): the Kubeflow SDK (0.5.0) reports "Running" only while a
// TrainJob has no conditions at all, so these change what `get_job` shows.
inline constexpr char kConditionCreated[] = "Created";
inline constexpr char kConditionRunning[] = "Running";
// Event (upstream §5.6).
inline constexpr char kEventReasonCreationFailed[] = "TrainJobResourcesCreationFailed";
inline constexpr char kEventActionReconciling[] = "Reconciling";

// What the reconciler reports for metrics; every method is optional to implement.
class ReconcileObserver {
 public:
  virtual ~ReconcileObserver() = default;
  // The objects of a TrainJob were applied for the first time (its JobSet did not exist before).
  virtual void ObjectsApplied(const api::TrainJob& /*job*/) {}
  virtual void ApplyError(std::string_view /*kind*/) {}
  // The JobSet reported every replicated job ready for the first time.
  virtual void JobSetReady(const api::TrainJob& /*job*/) {}
  // The state the TrainJob is in after this pass ("" when it is gone or not ours).
  virtual void State(std::string_view /*key*/, std::string_view /*state*/) {}
  virtual void ApplySkipped() {}
};

struct ReconcileResult {
  Status error;  // not OK: requeue with backoff
  std::optional<std::chrono::milliseconds> requeue_after;
};

struct ReconcilerOptions {
  bool lifecycle_conditions = false;
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
  struct Applied {
    bool jobset_created = false;  // the JobSet did not exist before this pass
    bool any = false;
  };
  Status ApplyObjects(core::Runtime& runtime, const api::TrainJob& job, Applied* applied,
                      std::string* failed_object, bool* build_failed);
  // Sets the applied-hash annotation; false when the live object already carries that content.
  bool PrepareApply(json::Value& obj);
  void RecordFailure(const json::Value& trainjob, const Status& error);
  std::optional<std::chrono::milliseconds> ReconcileDeadline(api::TrainJob& job);
  Status PatchStatus(const api::TrainJob& job, const api::TrainJobStatus& prev);
  std::string Now() const;

  bool TakeConfirmMark(const std::string& key);
  // The cached TrainJob replaced by the apiserver's copy; kNotFound when it is gone there.
  Status ConfirmLive(std::string_view ns, std::string_view name, json::Value& cached);

  Deps deps_;
  ReconcilerOptions options_;
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

// True when `live` carries `hash` in kAppliedHashAnnotation and its managedFields (when present)
// show no manager other than `trainer` on the main resource, so re-applying cannot change it.
bool UpToDate(const json::Value& live, std::string_view hash);

// The JobSet counts every replicated job ready (ready + succeeded >= replicas).
bool JobSetAllReady(const json::Value& jobset);

}  // namespace trainer::controller

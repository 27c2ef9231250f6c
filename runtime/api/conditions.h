// TrainJob status conditions: every type, reason and message trainer-cpp writes, spelled once,
// as upstream spells them (pkg/apis/trainer/v1alpha1/trainjob_types.go, pkg/constants/
// constants.go), plus the JobSet condition types the JobSet plugin mirrors and our own
// additions (marked). Who sets each one is said in docs/state-machine.md.
#pragma once

namespace trainer::api {

// Upstream's condition types.
inline constexpr char kConditionSuspended[] = "Suspended";
inline constexpr char kConditionComplete[] = "Complete";
inline constexpr char kConditionFailed[] = "Failed";

// Upstream's reasons and messages.
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

// Beyond upstream, opt-in (the controller's --lifecycle-conditions): Created once the JobSet
// exists, Running while a job has active pods. Opt-in because the Kubeflow SDK (0.5.0) reports
// "Running" only while a TrainJob has no conditions at all, so these change what `get_job` shows.
inline constexpr char kConditionCreated[] = "Created";
inline constexpr char kConditionRunning[] = "Running";
inline constexpr char kReasonResourcesCreated[] = "ResourcesCreated";
inline constexpr char kMessageResourcesCreated[] = "TrainJob resources are created";
inline constexpr char kReasonJobsRunning[] = "JobsRunning";
inline constexpr char kMessageJobsRunning[] = "TrainJob is running";
inline constexpr char kReasonJobsNotRunning[] = "JobsNotRunning";
inline constexpr char kMessageJobsNotRunning[] = "TrainJob is not running";

// The JobSet conditions (jobset.x-k8s.io/v1alpha2) copied into Complete and Failed.
inline constexpr char kJobSetConditionCompleted[] = "Completed";
inline constexpr char kJobSetConditionFailed[] = "Failed";

}  // namespace trainer::api

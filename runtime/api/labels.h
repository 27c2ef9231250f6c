// Label, annotation and finalizer keys trainer-cpp reads or writes on objects it shares with
// users, the apiserver or other components, spelled once as upstream spells them
// (pkg/constants/constants.go). A key that only one plugin writes, on objects only that plugin
// builds (the PodGroup label, Volcano's annotations), lives in that plugin's header.
#pragma once

namespace trainer::api {

// Labels.
// On a runtime template's replicated job: which TrainJob step it runs (trainer, initializers).
inline constexpr char kLabelTrainJobAncestor[] = "trainer.kubeflow.org/trainjob-ancestor-step";
// On a runtime: its support level; kSupportDeprecated makes admission warn.
inline constexpr char kLabelSupport[] = "trainer.kubeflow.org/support";
inline constexpr char kSupportDeprecated[] = "deprecated";
// On the shipped runtimes: the framework they run (torch, deepspeed, torchtune ...).
inline constexpr char kLabelFramework[] = "trainer.kubeflow.org/framework";

// Annotations.
// Set by the Job controller on an indexed Job's pods; read back into rank env vars.
inline constexpr char kAnnotationJobCompletionIndex[] = "batch.kubernetes.io/job-completion-index";
// Beyond upstream: on every object the controller applies, the hash of what it applied, so a
// restarted controller skips objects that are already right (docs/design/controller.md).
inline constexpr char kAnnotationAppliedHash[] = "trainer.kubeflow.org/applied-hash";

// Finalizers.
// On a runtime some TrainJob references, with --protect-runtimes-in-use (v2.2 behaviour).
inline constexpr char kFinalizerResourceInUse[] = "trainer.kubeflow.org/resource-in-use";

}  // namespace trainer::api

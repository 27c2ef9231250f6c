// trainer-render: renders offline what trainer-cpp's controller would apply for a TrainJob, or
// what its admission webhook would answer, from manifests on disk.
//
//   trainer-render [-n NAMESPACE] -f FILE [-f FILE ...] [-o yaml|json] [--now RFC3339]
//                  [--mpi-ssh-key PEM_FILE] [--feature-gates K=V,...]
//                  [--validate | --status-from JOBSET_FILE]
//
// The files ("-": standard input) hold (multi-document YAML or JSON, `kind: List` expanded)
// TrainingRuntimes, ClusterTrainingRuntimes and exactly one TrainJob. The TrainJob gets what the
// apiserver and the mutating webhook would give it: podTemplateOverrides translated (warning on
// stderr), CRD schema defaults, runtimePatches[].time = --now. Runtimes get their schema defaults. Then:
//   default       the objects of Runtime::NewObjects, with no cluster state: the runtime snapshot
//                 ConfigMap and the JobSet, each owned by the TrainJob (uid omitted unless the
//                 TrainJob has one). -o yaml: a multi-document stream; -o json: one v1 List.
//   --validate    the admission result (allowed, or denied with upstream's message; warnings).
//                 Exit code 1 when denied.
//   --status-from the TrainJob status implied by the JobSet (with status) in the file.
// The files may also hold PriorityClasses (scheduling.k8s.io/v1), which Volcano's admission
// check reads, and Secrets: with --feature-gates=TrainJobStatus=true the TrainJobStatus plugin
// reads the serving certificate Secret kubeflow-system/kubeflow-trainer-webhook-cert. --mpi-ssh-key
// replaces the MPI plugin's fresh P-521 key by the key in the PEM file (SEC1 or PKCS#8), so MPI
// goldens are deterministic; for tests only. -n sets the namespace of a TrainJob (and
// TrainingRuntimes) without one; default "default". Bad input is one line naming file, document and
// field, exit code 2.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace trainer::render {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // pipeline error, or --validate denied
inline constexpr int kExitBadInput = 2;

// Runs the tool on argv[1..] and returns the exit code.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace trainer::render

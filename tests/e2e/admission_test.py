#!/usr/bin/env python3
"""Admission through the installed webhook's Service: kubectl users read upstream's messages.
A TrainJob with an env name the Torch plugin reserves and one naming a runtime that does not
exist are denied with upstream v2.3.0's text; a good TrainJob is admitted and defaulted.
"""
import sys

import e2e

NS = "e2e-admission"

DENIALS = {
    "reserved-env": ("""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: reserved-env, namespace: e2e-admission}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    env: [{name: PET_NNODES, value: "4"}]
""", 'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
     'spec.trainer.env: Invalid value: []v1.EnvVar{v1.EnvVar{Name:"PET_NNODES", Value:"4", '
     'ValueFrom:(*v1.EnvVarSource)(nil)}}: must not have reserved envs, invalid envs configured: '
     '[PET_NNODES]'),
    "no-such-runtime": ("""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: no-such-runtime, namespace: e2e-admission}
spec:
  runtimeRef: {name: torch-distributed-v2}
""", 'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
     'spec.RuntimeRef: Invalid value: v1alpha1.RuntimeRef{Name:"torch-distributed-v2", '
     'APIGroup:(*string)("trainer.kubeflow.org"), Kind:(*string)("ClusterTrainingRuntime")}: '
     'clustertrainingruntimes.trainer.kubeflow.org "torch-distributed-v2" not found: specified '
     'clusterTrainingRuntime must be created before the TrainJob is created'),
}

GOOD = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: good, namespace: e2e-admission}
spec:
  suspend: true
  runtimeRef: {name: torch-distributed}
"""


def main():
    e2e.require_machine()
    k = e2e.kubectl()
    k.fresh_namespace(NS)
    failures = []
    for name, (manifest, want) in DENIALS.items():
        p = k.run("create", "-f", "-", stdin=manifest, check=False)
        got = p.stderr.strip()
        ok = p.returncode != 0 and want in got
        print(("ok   " if ok else "FAIL ") + f"{name}: {got}", flush=True)
        if not ok:
            failures.append(f"{name}: want {want!r}")
    p = k.run("create", "-f", "-", stdin=GOOD, check=False)
    kind = k.run("get", "trainjob", "good", "-n", NS, "-o", "jsonpath={.spec.runtimeRef.kind}",
                 check=False).stdout
    ok = p.returncode == 0 and kind == "ClusterTrainingRuntime"
    print(("ok   " if ok else "FAIL ") + f"a good TrainJob is admitted and defaulted (kind {kind!r}; "
          f"{p.stderr.strip()})", flush=True)
    if not ok:
        failures.append("good TrainJob")
    k.run("delete", "namespace", NS, "--wait=false")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

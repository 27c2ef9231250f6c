#!/usr/bin/env python3
"""Two trainer-webhook replicas behind their Service keep admission available while one goes:
TrainJobs are created in a loop (each through the apiserver, which calls the webhook through
the Service), and one webhook pod is deleted in the middle; no create may fail. The Deployment's
preStop keeps the going replica serving until its endpoint is gone from kube-proxy's rules.
Prints the count of creates, failures and how long the replacement took.
"""
import concurrent.futures
import sys
import time

import e2e

NS = "e2e-replicas"
SYSTEM = "kubeflow-system"
CREATES = 120

TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: loop-{i}, namespace: e2e-replicas}}
spec:
  suspend: true
  runtimeRef: {{name: torch-distributed}}
"""


def webhook_pods(k):
    return k.out("get", "pods", "-n", SYSTEM, "-l", "app.kubernetes.io/component=webhook",
                 "--field-selector=status.phase=Running", "-o",
                 "jsonpath={.items[*].metadata.name}").split()


def main():
    e2e.require_machine()
    k = e2e.kubectl()
    k.fresh_namespace(NS)
    before = webhook_pods(k)
    assert len(before) == 2, f"want two webhook replicas, found {before}"
    failures = []
    deleted_at = None
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        deletion = None
        start = time.time()
        for i in range(CREATES):
            if i == CREATES // 4:
                victim = before[0]
                deleted_at = time.time()
                print(f"deleting webhook pod {victim} after {i} creates", flush=True)
                deletion = pool.submit(k.run, "delete", "pod", victim, "-n", SYSTEM, "--wait=true")
            p = k.run("create", "-f", "-", stdin=TRAINJOB.format(i=i), check=False)
            if p.returncode != 0:
                failures.append(f"loop-{i}: {p.stderr.strip()}")
        deletion.result()
    elapsed = time.time() - start
    after = e2e.wait_for("two webhook replicas again", 120,
                         lambda: (lambda p: len(p) == 2 and p)(webhook_pods(k)))
    print(f"{CREATES} creates in {elapsed:.1f}s, {len(failures)} failed; the deleted replica "
          f"was replaced ({before} -> {after}) {time.time() - deleted_at:.0f}s after its deletion")
    for f in failures:
        print("FAIL", f)
    k.run("delete", "namespace", NS, "--wait=false")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

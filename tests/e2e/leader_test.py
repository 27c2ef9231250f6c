#!/usr/bin/env python3
"""trainer-controller hands over leadership when the leader's pod goes: with a second replica
as warm standby, the leader pod is deleted; another pod takes Lease trainer.kubeflow.org (the
leader releases it on SIGTERM, so the standby or the ReplicaSet's replacement, whichever
campaigns first, gets it within seconds) and reconciles a TrainJob created after the hand-over
(its JobSet appears). Prints how long the hand-over took and who took it. The Deployment is
scaled back to one replica at the end.
"""
import sys
import time

import e2e

SYSTEM = "kubeflow-system"
NS = "e2e-leader"

TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: after-handover, namespace: e2e-leader}
spec:
  suspend: true
  runtimeRef: {name: torch-distributed}
"""


def holder(k):
    return k.out("get", "lease", "trainer.kubeflow.org", "-n", SYSTEM, "-o",
                 "jsonpath={.spec.holderIdentity}")


def controller_pods(k):
    return k.out("get", "pods", "-n", SYSTEM, "-l", "app.kubernetes.io/component=controller",
                 "-o", "jsonpath={.items[*].metadata.name}").split()


def main():
    e2e.require_machine()
    k = e2e.kubectl()
    k.run("scale", "deployment", "trainer-controller", "-n", SYSTEM, "--replicas=2")
    try:
        e2e.wait_for("two ready controller replicas", 180, lambda: k.out(
            "get", "deployment", "trainer-controller", "-n", SYSTEM, "-o",
            "jsonpath={.status.readyReplicas}") == "2")
        leader = holder(k)
        pods = controller_pods(k)
        leader_pod = next(p for p in pods if leader.startswith(p))
        standby = next(p for p in pods if p != leader_pod)
        print(f"leader {leader} (pod {leader_pod}), standby {standby}; deleting the leader's pod",
              flush=True)
        t0 = time.time()
        k.run("delete", "pod", leader_pod, "-n", SYSTEM, "--wait=false")
        new = e2e.wait_for("another pod to take the Lease", 120,
                           lambda: (lambda h: h and not h.startswith(leader_pod) and h)(holder(k)))
        handover = time.time() - t0
        who = "the standby" if new.startswith(standby) else "the replacement pod"
        print(f"ok   the Lease went to {new} ({who}) {handover:.1f}s after the leader pod's deletion")
        k.fresh_namespace(NS)
        k.run("create", "-f", "-", stdin=TRAINJOB)
        e2e.wait_for("the new leader to create the TrainJob's JobSet", 60,
                     lambda: k.run("get", "jobset", "after-handover", "-n", NS, check=False).returncode == 0)
        print("ok   the new leader reconciled a TrainJob created after the hand-over")
    finally:
        k.run("scale", "deployment", "trainer-controller", "-n", SYSTEM, "--replicas=1", check=False)
        k.run("delete", "namespace", NS, "--wait=false", "--ignore-not-found", check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

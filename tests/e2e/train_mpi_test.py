#!/usr/bin/env python3
"""Real MPI through the whole path: a ClusterTrainingRuntime shaped as upstream's MPI runtimes
(deepspeed-distributed: OpenMPI, a launcher that is also rank 0, SSH nodes running sshd as
mpiuser on port 2222) on the node's Debian OpenMPI image, and a TrainJob on it with two nodes.
trainer-cpp's MPI plugin creates the SSH key Secret and the hostfile ConfigMap; the launcher's
`mpirun` reads the hostfile from OMPI_MCA_orte_default_hostfile, starts the remote rank over SSH
with the plugin's key, and the two ranks allreduce with mpi4py. Pass: the TrainJob is Complete
and the launcher's log shows both ranks of size 2, on two hosts, and the allreduced sum.
"""
import json
import re
import sys
import time

import e2e

NS = "e2e-train-mpi"
NAME = "mpi-e2e"
RUNTIME = "e2e-openmpi"

PROGRAM = """
import socket
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
print(f"mpi rank {rank} of {size} on {socket.gethostname()}: allreduce sum {total}", flush=True)
"""


def runtime(image):
    return f"""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {{name: {RUNTIME}}}
spec:
  mlPolicy:
    numNodes: 1
    mpi:
      numProcPerNode: 1
      mpiImplementation: OpenMPI
      sshAuthMountPath: /home/mpiuser/.ssh
      runLauncherAsNode: true
  template:
    spec:
      network: {{publishNotReadyAddresses: true}}
      successPolicy: {{operator: All, targetReplicatedJobs: [launcher]}}
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  securityContext: {{fsGroup: 1000}}
                  terminationGracePeriodSeconds: 1
                  containers:
                    - name: node
                      image: {image}
                      securityContext: {{runAsUser: 1000}}
                      command: [/usr/sbin/sshd]
                      args: [-De, -f, /home/mpiuser/.sshd_config]
                      readinessProbe:
                        tcpSocket: {{port: 2222}}
                        periodSeconds: 1
        - name: launcher
          dependsOn: [{{name: node, status: Ready}}]
          template:
            metadata:
              labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  securityContext: {{fsGroup: 1000}}
                  terminationGracePeriodSeconds: 1
                  containers:
                    - name: node
                      image: {image}
                      securityContext: {{runAsUser: 1000}}
"""


TRAINJOB = f"""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: {NAME}, namespace: {NS}}}
spec:
  runtimeRef: {{name: {RUNTIME}}}
  trainer:
    numNodes: 2
    command: [mpirun, -np, "2", python3, -c, {json.dumps(PROGRAM)}]
"""


def condition(k, name, ctype):
    return k.out("get", "trainjob", name, "-n", NS, "-o",
                 f'jsonpath={{.status.conditions[?(@.type=="{ctype}")].status}}')


def main():
    e2e.require_machine()
    env = e2e.e2e_env()
    k = e2e.kubectl()
    k.fresh_namespace(NS)
    k.run("apply", "--server-side", "-f", "-", stdin=runtime(env["TRAINER_MPI_IMAGE"]))
    t0 = time.time()
    k.run("create", "-f", "-", stdin=TRAINJOB)
    try:
        e2e.wait_for(f"TrainJob {NAME} to finish", 300, lambda: "True" in (
            condition(k, NAME, "Complete"), condition(k, NAME, "Failed")))
    finally:
        print(k.run("get", "trainjob,jobset,jobs,pods,secrets,configmaps", "-n", NS, "-o", "wide",
                    check=False).stdout)
    elapsed = time.time() - t0
    failures = []
    if condition(k, NAME, "Complete") != "True":
        failures.append("the TrainJob is not Complete: " + k.out(
            "get", "trainjob", NAME, "-n", NS, "-o", "jsonpath={.status}"))
    hostfile = k.out("get", "configmap", f"{NAME}-mpi-hostfile", "-n", NS, "-o",
                     "jsonpath={.data.hostfile}")
    print(f"hostfile:\n{hostfile}")
    secret_type = k.out("get", "secret", f"{NAME}-mpi-ssh-auth", "-n", NS, "-o", "jsonpath={.type}")
    if secret_type != "kubernetes.io/ssh-auth":
        failures.append(f"the SSH Secret's type is {secret_type!r}")
    launcher = k.out("get", "pods", "-n", NS, "-l", "jobset.sigs.k8s.io/replicatedjob-name=launcher",
                     "-o", "jsonpath={.items[0].metadata.name}")
    log = k.out("logs", launcher, "-n", NS)
    print(f"--- {launcher}\n{log}")
    lines = re.findall(r"^mpi rank (\d) of (\d) on (\S+): allreduce sum (\d+)$", log, re.M)
    if sorted(r for r, _, _, _ in lines) != ["0", "1"] or any(s != "2" or t != "3" for _, s, _, t in lines):
        failures.append(f"want ranks 0 and 1 of size 2 with sum 3 in the launcher's log, found {lines}")
    elif len({h for _, _, h, _ in lines}) != 2:
        failures.append(f"both ranks ran on one host: {lines}")
    else:
        print(f"ok   mpirun ran 2 ranks on {sorted(h for _, _, h, _ in lines)}; allreduce sum 3")
    print(f"TrainJob {NAME}: {'Complete' if not failures else 'FAILED'} after {elapsed:.0f}s")
    for f in failures:
        print("FAIL", f)
    if not failures:
        k.run("delete", "namespace", NS, "--wait=false")
        k.run("delete", "clustertrainingruntime", RUNTIME, "--wait=false")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""The Kubeflow Python SDK's TrainerClient (kubeflow 0.5.0) against the local run.

Runs what a data scientist runs: list/get runtimes (the SDK keeps only runtimes with the
trainer.kubeflow.org/framework label), train() with a CustomTrainer (the SDK turns the function
into the container command and sends resources as JSON numbers, {"cpu": 1.0}), wait for
Complete, get_job, list_jobs, delete_job. KUBECONFIG is the local run's admin kubeconfig.

With the local run's TrainJobStatus gate on (TRAINER_STATUS_URL in its env), the job also reports
progress through examples/progress/kubeflow_progress.py as soon as it exists, and the SDK must
read the job the same way with status.trainerStatus present.
"""
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

from kubeflow.common.types import KubernetesBackendConfig
from kubeflow.trainer import CustomTrainer, TrainerClient

NAMESPACE = "sdk-test"
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)


def train_fn():
    print("hello from the SDK")


def report_progress(kubectl, name):
    """Reports 50% for TrainJob `name` as its trainer would, with a token of the namespace's
    default ServiceAccount for the TrainJob's audience."""
    path = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NAMESPACE}/trainjobs/{name}/status"
    token = subprocess.run(kubectl + ["-n", NAMESPACE, "create", "token", "default",
                                      "--audience=trainer.kubeflow.org/v1alpha1/namespaces/"
                                      f"{NAMESPACE}/trainjobs/{name}/status"],
                           capture_output=True, text=True)
    check(token.returncode == 0, f"kubectl create token: {token.stderr.strip()}")
    token_file = os.path.join(os.environ["TRAINER_LOCAL_DIR"], "sdk-progress-token")
    with open(token_file, "w") as f:
        f.write(token.stdout)
    env = dict(os.environ, KUBEFLOW_TRAINER_SERVER_URL=os.environ["TRAINER_STATUS_URL"] + path,
               KUBEFLOW_TRAINER_SERVER_CA_CERT=os.environ["TRAINER_STATUS_CA"],
               KUBEFLOW_TRAINER_SERVER_TOKEN=token_file)
    sent = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "progress",
                                                        "kubeflow_progress.py"),
                           "--progress", "50", "--eta", "30", "--metric", "loss=0.25"],
                          env=env, capture_output=True, text=True)
    check(sent.returncode == 0, f"the example reporter reported: {sent.stderr.strip()}")
    got = subprocess.run(kubectl + ["-n", NAMESPACE, "get", "trainjob", name, "-o",
                                    "jsonpath={.status.trainerStatus.progressPercentage}"],
                         capture_output=True, text=True)
    check(got.stdout == "50", f"status.trainerStatus.progressPercentage is {got.stdout!r}")


def main():
    kubectl = [os.path.join(os.environ["TESTBED_BIN_DIR"], "kubectl"),
               "--kubeconfig", os.environ["KUBECONFIG"]]
    subprocess.run(kubectl + ["create", "namespace", NAMESPACE], check=False,
                   capture_output=True)
    client = TrainerClient(backend_config=KubernetesBackendConfig(
        namespace=NAMESPACE, config_file=os.environ["KUBECONFIG"]))

    runtimes = client.list_runtimes()
    names = sorted(r.name for r in runtimes)
    print("runtimes:", names)
    check("torch-distributed" in names, "list_runtimes() lists torch-distributed")
    check(len(names) >= 8, "list_runtimes() lists the default runtimes")
    rt = client.get_runtime("torch-distributed")
    check(rt.name == "torch-distributed" and rt.trainer.framework == "torch",
          f"get_runtime(torch-distributed): framework {rt.trainer.framework}")

    name = client.train(runtime=rt, trainer=CustomTrainer(
        func=train_fn, num_nodes=2, resources_per_node={"cpu": 1.0, "memory": "1Gi"}))
    print("train() ->", name)
    raw = subprocess.run(kubectl + ["-n", NAMESPACE, "get", "trainjob", name, "-o",
                                    "jsonpath={.spec.trainer.resourcesPerNode.requests.cpu}"],
                         capture_output=True, text=True)
    check(raw.returncode == 0 and raw.stdout != "", f"TrainJob stored with cpu {raw.stdout!r}")
    if os.environ.get("TRAINER_STATUS_URL"):
        report_progress(kubectl, name)
    job = client.wait_for_job_status(name, status={"Complete"}, timeout=180, polling_interval=1)
    check(job.status == "Complete", f"wait_for_job_status: {job.status}")
    job = client.get_job(name)
    check(job.name == name and job.status == "Complete" and job.num_nodes == 2,
          f"get_job: status {job.status}, num_nodes {job.num_nodes}")
    check(name in [j.name for j in client.list_jobs()], "list_jobs() lists the job")
    client.delete_job(name)
    deadline = time.time() + 60
    while time.time() < deadline and name in [j.name for j in client.list_jobs()]:
        time.sleep(0.5)
    check(name not in [j.name for j in client.list_jobs()], "delete_job() removed the job")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Migration from upstream Kubeflow Trainer v2.3.0 to trainer-cpp and back, on one cluster, as
docs/install.md's runbook does it.

A private test bed with the JobSet controller, kube-scheduler and KWOK (pods run and complete).
Upstream's manager (built from its Go module by hack/bench/webhook/upstream.sh) runs against it
with upstream's CRDs and runtimes (from the same module) and creates a wave of TrainJobs of
three runtimes: two finished, four running (their pods held Pending by a runtime patch's
nodeSelector no node has yet), two suspended. It is stopped, and trainer-cpp takes over on the
same cluster (our CRDs, the services under deploy/'s ServiceAccounts, the webhook configurations
re-pointed); later trainer-cpp is stopped and upstream takes over again. After each takeover:

  - no owned object (JobSet, runtime snapshot ConfigMap, MPI Secret and ConfigMap, PodGroup) is
    re-created or added: the same uids;
  - no JobSet's spec changed: the same generation;
  - every TrainJob's conditions and jobsStatus are as they were;
then, under the new control plane: a gate is opened (the KWOK node gets the label the held pods
wait for) and their TrainJobs become Complete, following their JobSets; a suspended TrainJob is
resumed and completes; a new TrainJob completes.

Services run as local processes (no kubelet runs the images): trainer-cpp as hack/run-local.sh
runs it, upstream with the admin kubeconfig and its Configuration file, each serving the webhook
configurations (deploy/'s, the same names and paths as upstream's) registered by URL.
"""

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "common", "py"))
sys.path.insert(0, os.path.join(ROOT, "hack", "testbed"))
import testbed  # noqa: E402
import webhooks  # noqa: E402

import yaml  # noqa: E402

NS = "kubeflow-system"
JOBS = "migration"
NODE = "kwok-node-0"
GATE = "migration.test/gate"
OWNED = [("jobset", "jobset.x-k8s.io"), ("configmap", ""), ("secret", ""),
         ("podgroup", "scheduling.x-k8s.io")]


def log(msg):
    print(f"[migration_test {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sh(*args, env=None, stdin=None):
    p = subprocess.run(list(args), env=env, input=stdin, capture_output=True, text=True,
                       timeout=900)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def metric_sum(url, name, labels):
    """The sum of a metric family's samples whose labels include `labels`; None if unreachable."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    total = 0.0
    for line in text.splitlines():
        m = re.match(r"^" + name + r"\{([^}]*)\} (\S+)$", line)
        if m and all(f'{k}="{v}"' in m.group(1) for k, v in labels.items()):
            total += float(m.group(2))
    return total


def settle(url, at_least, what):
    """Waits until the TrainJob controller has reconciled at least `at_least` times and then
    nothing for 5 s: the control plane has caught up with the cluster."""
    last, since, deadline = None, time.time(), time.time() + 180
    while time.time() < deadline:
        n = metric_sum(url, "controller_runtime_reconcile_total", {"controller": "trainjob_controller"})
        if n != last:
            last, since = n, time.time()
        elif n is not None and n >= at_least and time.time() - since >= 5:
            log(f"{what} settled after {n:.0f} TrainJob reconciles")
            return
        time.sleep(0.5)
    raise AssertionError(f"{what} did not settle (reconciles: {last})")


class Cluster:
    def __init__(self, build_dir):
        self.dir = os.path.join(build_dir, "migration-testbed")
        self.env = dict(os.environ, TESTBED_DIR=self.dir)
        self.work = tempfile.mkdtemp(prefix="migration-test-")
        self.upstream_bin, self.upstream_src = testbed.upstream_build()
        subprocess.run([os.path.join(ROOT, "hack", "testbed", "down.sh")], env=self.env,
                       capture_output=True, check=False)
        log(f"starting a test bed in {self.dir} (JobSet controller, scheduler, KWOK)")
        sh(os.path.join(ROOT, "hack", "testbed", "up.sh"), "--all", env=self.env)
        self.k = testbed.Kubectl(self.dir)
        self.pki = os.path.join(self.dir, "pki")
        self.ca = os.path.join(self.pki, "ca.crt")
        self.crt, self.key = testbed.sign_cert(self.pki, self.work, "webhook")

    def apply(self, text, manager="migration-test"):
        self.k.run("apply", "--server-side", "--force-conflicts", f"--field-manager={manager}",
                   "-f", "-", stdin=text)

    def point_webhooks_at(self, port):
        """deploy/'s webhook configurations (upstream's names, webhooks, paths and selectors)
        calling https://127.0.0.1:port, as an admin's install of either control plane would point
        them at its Service."""
        with open(os.path.join(ROOT, "deploy", "base", "webhook", "webhook-configurations.yaml")) as f:
            configs = [d for d in yaml.safe_load_all(f) if d]
        with open(self.ca, "rb") as f:
            bundle = base64.b64encode(f.read()).decode()
        for cfg in configs:
            webhooks.point_at_url(cfg, f"https://127.0.0.1:{port}", bundle)
        self.apply(json.dumps({"apiVersion": "v1", "kind": "List", "items": configs}))

    def down(self, ok):
        if not ok:
            testbed.keep_logs(self.dir, self.work)
        subprocess.run([os.path.join(ROOT, "hack", "testbed", "down.sh")], env=self.env,
                       capture_output=True, check=False)
        shutil.rmtree(self.work, ignore_errors=True)


class Upstream:
    """Upstream's manager (controllers and webhooks), as a Deployment of its manifests runs it."""

    def __init__(self, c, name):
        self.c = c
        self.port, self.health, self.metrics = (testbed.free_port() for _ in range(3))
        tmp = os.path.join(c.work, f"{name}-tmp")
        certs = os.path.join(tmp, "k8s-webhook-server", "serving-certs")
        os.makedirs(certs)
        shutil.copy(c.crt, os.path.join(certs, "tls.crt"))
        shutil.copy(c.key, os.path.join(certs, "tls.key"))
        cfg = os.path.join(c.work, f"{name}.yaml")
        with open(cfg, "w") as f:
            f.write(f"""apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
health:
  healthProbeBindAddress: 127.0.0.1:{self.health}
metrics:
  bindAddress: 127.0.0.1:{self.metrics}
  secureServing: false
webhook:
  port: {self.port}
  host: 127.0.0.1
leaderElection:
  leaderElect: true
  resourceName: trainer.kubeflow.org
  resourceNamespace: {NS}
  leaseDuration: 15s
  renewDeadline: 10s
  retryPeriod: 2s
certManagement:
  enable: false
""")
        self.log = open(os.path.join(c.work, f"{name}.log"), "w")
        # controller-runtime's webhook server reads its certificate from $TMPDIR.
        env = dict(os.environ, TMPDIR=tmp, KUBECONFIG=c.k.kubeconfig)
        self.proc = subprocess.Popen([c.upstream_bin, f"--config={cfg}"], env=env,
                                     stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        testbed.wait_for("upstream's manager ready", lambda: self.alive() and testbed.http_get(
            f"http://127.0.0.1:{self.health}/readyz")[0] == 200, timeout=120)
        c.point_webhooks_at(self.port)
        self.metrics_url = f"http://127.0.0.1:{self.metrics}/metrics"
        log(f"upstream's manager runs ({name}); the webhook configurations call it")

    def alive(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"upstream's manager exited with {self.proc.returncode}")
        return True

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(60)
        self.log.close()


class TrainerCpp:
    """trainer-webhook and trainer-controller under deploy/'s ServiceAccounts and RBAC."""

    def __init__(self, c):
        k = c.k
        wh_kc = testbed.service_account_kubeconfig(k, NS, "trainer-webhook",
                                                   os.path.join(c.work, "wh.kubeconfig"))
        ctl_kc = testbed.service_account_kubeconfig(k, NS, "trainer-controller",
                                                    os.path.join(c.work, "ctl.kubeconfig"))
        os.makedirs(os.path.join(c.work, "webhook"), exist_ok=True)
        self.webhook = testbed.Webhook(k, os.path.join(c.work, "webhook"), kubeconfig=wh_kc)
        assert self.webhook.probe("/readyz")[0] == 200, self.webhook.tail_log()
        self.controller = testbed.Controller("--leader-elect", f"--leader-election-namespace={NS}",
                                             "--metrics-secure-serving=false", kubeconfig=ctl_kc,
                                             log_dir=c.work)
        c.point_webhooks_at(self.webhook.port)
        self.metrics_url = f"http://127.0.0.1:{self.controller.metrics}/metrics"
        log("trainer-webhook and trainer-controller run; the webhook configurations call them")

    def stop(self):
        self.controller.stop()
        self.webhook.stop()


# --- the wave ----------------------------------------------------------------------------------

def gate_patch(gate, jobs):
    """A runtimePatches entry holding the pods of `jobs` until the node has label GATE=gate."""
    return {"manager": "migration.test/gate",
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                {"name": j, "template": {"spec": {"template": {"spec": {
                    "nodeSelector": {GATE: gate}}}}}} for j in jobs]}}}}


def trainjob(name, runtime, suspend=False, gate=None):
    mpi = runtime.startswith("deepspeed")
    job = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
           "metadata": {"name": name, "namespace": JOBS},
           "spec": {"runtimeRef": {"name": runtime},
                    "trainer": {"numNodes": 1, "command": ["echo", name]}}}
    if suspend:
        job["spec"]["suspend"] = True
    if gate:
        job["spec"]["runtimePatches"] = [gate_patch(gate, ["node", "launcher"] if mpi else ["node"])]
    return job


WAVE = [
    # name, runtime, suspended, gate: None = runs at once, "b"/"c" = held until that phase
    ("done-torch", "torch-distributed", False, None),
    ("done-mpi", "deepspeed-distributed", False, None),
    ("run-b-torch", "torch-distributed", False, "b"),
    ("run-b-mpi", "deepspeed-distributed", False, "b"),
    ("run-c-gang", "torch-gang", False, "c"),
    ("run-c-torch", "torch-distributed", False, "c"),
    ("susp-b", "torch-distributed", True, None),
    ("susp-c-gang", "torch-gang", True, None),
]


def gang_runtime(src):
    """torch-distributed with gang scheduling (scheduler-plugins PodGroup)."""
    with open(os.path.join(src, "manifests", "base", "runtimes", "torch_distributed.yaml")) as f:
        rt = yaml.safe_load(f)
    rt["metadata"] = {"name": "torch-gang", "labels": rt["metadata"].get("labels", {})}
    rt["spec"]["podGroupPolicy"] = {"coscheduling": {"scheduleTimeoutSeconds": 120}}
    return rt


def condition(obj, ctype):
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == ctype:
            return c["status"]
    return None


def wait_complete(k, names, under):
    def done():
        return all(condition(k.get("trainjob", n, JOBS), "Complete") == "True" for n in names)
    testbed.wait_for(f"{', '.join(names)} Complete under {under}", done, timeout=180)
    log(f"ok: {', '.join(names)} Complete under {under}, following their JobSets")


# --- what must not change across a takeover ----------------------------------------------------

def snapshot(k):
    """uids and generations of every owned object, and the TrainJobs' status."""
    owned = {}
    for kind, group in OWNED:
        resource = f"{kind}.{group}" if group else kind
        for o in json.loads(k.run("get", resource, "-n", JOBS, "-o", "json").stdout)["items"]:
            refs = [r for r in o["metadata"].get("ownerReferences", []) if r["kind"] == "TrainJob"]
            if refs:
                owned[(kind, o["metadata"]["name"])] = (o["metadata"]["uid"],
                                                        o["metadata"].get("generation"))
    status = {}
    for tj in json.loads(k.run("get", "trainjobs", "-n", JOBS, "-o", "json").stdout)["items"]:
        st = tj.get("status", {})
        status[tj["metadata"]["name"]] = {
            "conditions": sorted((c["type"], c["status"], c.get("reason", ""), c.get("message", ""))
                                 for c in st.get("conditions", [])),
            "jobsStatus": st.get("jobsStatus")}
    return {"owned": owned, "status": status}


def compare(before, after, what):
    b, a = before["owned"], after["owned"]
    recreated = sorted(f"{kind}/{n}" for (kind, n), (uid, _) in b.items() if a.get((kind, n), (None,))[0] != uid)
    added = sorted(f"{kind}/{n}" for (kind, n) in a if (kind, n) not in b)
    regenerated = sorted(f"{kind}/{n} {b[(kind, n)][1]}->{a[(kind, n)][1]}" for (kind, n) in b
                         if (kind, n) in a and b[(kind, n)][1] != a[(kind, n)][1])
    assert not recreated, f"{what}: re-created or deleted {recreated}"
    assert not added, f"{what}: created {added} for TrainJobs that had everything"
    assert not regenerated, f"{what}: JobSet specs changed (generation) {regenerated}"
    changed = sorted(n for n in before["status"] if before["status"][n] != after["status"].get(n))
    assert not changed, (f"{what}: status changed for {changed}:\n" + "\n".join(
        f"  {n}: {before['status'][n]}\n   -> {after['status'].get(n)}" for n in changed))
    jobsets = sum(1 for (kind, _) in b if kind == "jobset")
    log(f"ok: {what}: {len(b)} owned objects ({jobsets} JobSets) kept their uids and "
        f"generations; {len(before['status'])} TrainJob statuses unchanged")


def open_gate(k, gate):
    k.run("label", "node", NODE, f"{GATE}={gate}", "--overwrite")


def resume(k, name):
    k.run("patch", "trainjob", name, "-n", JOBS, "--type=merge", "-p", '{"spec":{"suspend":false}}')


def main():
    build_dir = os.environ.get("TRAINER_BUILD_DIR") or os.path.join(ROOT, "build")
    c = Cluster(build_dir)
    k = c.k
    running = []
    ok = False
    try:
        # --- upstream v2.3.0, as its manifests install it
        src = c.upstream_src
        k.run("create", "namespace", NS)
        c.apply(k.run("kustomize", os.path.join(src, "manifests", "base", "crds")).stdout,
                manager="kubectl")
        for crd in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
            testbed.wait_for(f"upstream's CRD {crd}", lambda n=crd: condition(
                k.get("crd", f"{n}.trainer.kubeflow.org"), "Established") == "True", timeout=60)
        c.apply(k.run("kustomize", os.path.join(src, "manifests", "overlays", "runtimes")).stdout,
                manager="upstream-install")
        up = Upstream(c, "upstream")
        running = [up]
        k.run("apply", "-f", "-", stdin=json.dumps(gang_runtime(src)))  # through upstream's webhook
        k.run("create", "namespace", JOBS)
        for name, runtime, suspend, gate in WAVE:
            p = k.create(trainjob(name, runtime, suspend, gate))
            assert p.returncode == 0, f"upstream admitted no {name}: {p.stderr}"
        wait_complete(k, ["done-torch", "done-mpi"], "upstream")
        testbed.wait_for("upstream's objects of every TrainJob", lambda: (
            lambda s: sum(1 for (kind, _) in s["owned"] if kind == "jobset") == len(WAVE)
            and ("podgroup", "run-c-gang") in s["owned"]
            and ("secret", "run-b-mpi-mpi-ssh-auth") in s["owned"])(snapshot(k)), timeout=60)
        settle(up.metrics_url, len(WAVE), "upstream")
        before = snapshot(k)
        log(f"upstream built the wave: {len(before['owned'])} owned objects")
        up.stop()
        running = []

        # --- trainer-cpp takes over (docs/install.md, "Migrating from upstream")
        c.apply(k.run("kustomize", os.path.join(ROOT, "deploy", "crds")).stdout, manager="kubectl")
        base = yaml.load_all(k.run("kustomize", os.path.join(ROOT, "deploy", "base")).stdout,
                             Loader=yaml.CSafeLoader)
        keep = {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                "RoleBinding", "ConfigMap"}
        c.apply(yaml.safe_dump_all([d for d in base if d and d["kind"] in keep]), manager="trainer-deploy")
        ours = TrainerCpp(c)
        running = [ours]
        settle(ours.metrics_url, len(WAVE), "trainer-cpp")
        compare(before, snapshot(k), "upstream -> trainer-cpp")
        open_gate(k, "b")
        wait_complete(k, ["run-b-torch", "run-b-mpi"], "trainer-cpp")
        resume(k, "susp-b")
        wait_complete(k, ["susp-b"], "trainer-cpp (resumed)")
        k.run("apply", "-f", "-", stdin=json.dumps(trainjob("new-b", "deepspeed-distributed")))
        wait_complete(k, ["new-b"], "trainer-cpp (created by it)")
        settle(ours.metrics_url, 0, "trainer-cpp")
        before = snapshot(k)
        ours.stop()
        running = []

        # --- and back: upstream takes over again, with its own CRDs
        c.apply(k.run("kustomize", os.path.join(src, "manifests", "base", "crds")).stdout,
                manager="kubectl")
        up = Upstream(c, "upstream-again")
        running = [up]
        settle(up.metrics_url, len(WAVE) + 1, "upstream")
        compare(before, snapshot(k), "trainer-cpp -> upstream")
        open_gate(k, "c")
        wait_complete(k, ["run-c-gang", "run-c-torch"], "upstream")
        resume(k, "susp-c-gang")
        wait_complete(k, ["susp-c-gang"], "upstream (resumed)")
        k.run("apply", "-f", "-", stdin=json.dumps(trainjob("new-c", "torch-gang")))
        wait_complete(k, ["new-c"], "upstream (created by it)")
        ok = True
    finally:
        for r in running:
            r.stop()
        c.down(ok)
    print("PASS")


if __name__ == "__main__":
    main()

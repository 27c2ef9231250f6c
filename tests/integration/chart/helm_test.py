#!/usr/bin/env python3
"""helm install, helm upgrade and helm uninstall of charts/trainer-cpp on a private test bed,
with trainer-webhook and trainer-controller running as local processes as hack/run-local.sh runs
them: each under the ServiceAccount the release created (a TokenRequest token, so the chart's
RBAC is what they get) and with the Configuration file from the release's ConfigMap (so both
binaries parse what the chart renders). The test bed runs no kubelet, so the Deployments' pods
never start; a Helm post-renderer (post_render_local.py) points the two webhook configurations
at the local trainer-webhook, as run-local registers deploy/'s by URL.

  install    CRDs from crds/ Established, every object of the release present, the default
             runtimes created; a TrainJob is admitted (and a bad one denied) by the webhooks and
             gets its JobSet from trainer-controller
  upgrade    changed values take effect (replicas, log level, runtimes pruned to one); the
             TrainJob and its JobSet are the same objects; admission still works. The upgrade
             also turns on upstream's TrainJobStatus gate (manager.config.featureGates): with
             the services restarted as the upgraded Deployments run them, a new TrainJob's pods
             get a URL naming the release's webhook Service and port, and the status server
             writes a report under the release's RBAC
  uninstall  every object of the release is gone; the CRDs, the TrainJobs and their JobSets stay
"""

import base64
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "common", "py"))
import testbed  # noqa: E402

import yaml  # noqa: E402

NS = "kubeflow-system"
RELEASE = "trainer-cpp"
JOB_NS = "helm-test"


def log(msg):
    print(f"[helm_test {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sh(*args, env=None, cwd=ROOT):
    p = subprocess.run(list(args), env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


class Setup:
    def __init__(self, build_dir, name="helm-testbed"):
        self.dir = os.path.join(build_dir, name)
        self.env = dict(os.environ, TESTBED_DIR=self.dir)
        self.work = tempfile.mkdtemp(prefix="helm-test-")
        self.helm_bin = sh(os.path.join(ROOT, "hack", "tools", "helm.sh")).strip()
        self.down()
        log(f"starting a test bed in {self.dir}")
        sh(os.path.join(ROOT, "hack", "testbed", "up.sh"), env=self.env)
        self.k = testbed.Kubectl(self.dir)
        sh("bash", "-c", 'source hack/testbed/lib.sh && source tests/integration/deploy/lib.sh && '
           'source tests/integration/chart/lib.sh && chart_with_local_jobset "$1"', "_", self.work,
           env=self.env)
        self.chart = os.path.join(self.work, "trainer-cpp")
        self.helm_env = dict(os.environ, KUBECONFIG=self.k.kubeconfig,
                             HELM_CACHE_HOME=os.path.join(self.work, "helm", "cache"),
                             HELM_CONFIG_HOME=os.path.join(self.work, "helm", "config"),
                             HELM_DATA_HOME=os.path.join(self.work, "helm", "data"))
        # The local trainer-webhook: a serving certificate of the test bed CA for 127.0.0.1.
        self.webhook_port = testbed.free_port()
        self.pki = os.path.join(self.dir, "pki")

    def helm(self, *args):
        return sh(self.helm_bin, *args, env=self.helm_env)

    def helm_deploy(self, verb, *values):
        """helm install|upgrade with the local post-renderer."""
        return self.helm(verb, RELEASE, self.chart, "--namespace", NS, *values,
                         "--post-renderer", os.path.join(HERE, "post_render_local.py"),
                         "--post-renderer-args", f"--url=https://127.0.0.1:{self.webhook_port}",
                         "--post-renderer-args", f"--ca={os.path.join(self.pki, 'ca.crt')}")

    def down(self):
        subprocess.run([os.path.join(ROOT, "hack", "testbed", "down.sh")], env=self.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

    def finish(self, ok):
        """Stops the test bed and removes the work directory; when the test failed, first keeps
        the test bed's and the services' logs in <test bed directory>-logs."""
        if not ok:
            testbed.keep_logs(self.dir, self.work)
        self.down()
        shutil.rmtree(self.work, ignore_errors=True)


def release_objects(s):
    """(kind, namespace, name) of everything `helm get manifest` lists."""
    text = s.helm("get", "manifest", RELEASE, "-n", NS)
    docs = [d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d]
    return [(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"],
             d["apiVersion"]) for d in docs]


def exists(k, kind, ns, name, api):
    group = api.split("/")[0] if "/" in api else ""
    resource = f"{kind.lower()}.{group}" if group else kind.lower()
    args = ["get", resource, name, "-o", "name", "--ignore-not-found"]
    if ns:
        args += ["-n", ns]
    p = k.run(*args, check=False)
    if p.returncode != 0 and "doesn't have a resource type" in p.stderr:
        return False
    if p.returncode != 0:
        raise AssertionError(p.stderr)
    return bool(p.stdout.strip())


def config_file(s):
    """The release's Configuration file, as the Deployments mount it."""
    data = s.k.get("configmap", f"{RELEASE}-config", NS)["data"]
    path = os.path.join(s.work, "controller_manager_config.yaml")
    with open(path, "w") as f:
        f.write(data["controller_manager_config.yaml"])
    return path


def deployment_args(s, component):
    """The container arguments of the release's Deployment, without the in-cluster paths."""
    dep = s.k.get("deployment", f"{RELEASE}-{component}", NS)
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    return [a for a in args if not a.startswith(("--config=", "--cert-dir="))]


class Services:
    """trainer-webhook and trainer-controller as local processes under the release's identities."""

    def __init__(self, s, status_port=None):
        cfg = config_file(s)
        wh_kc = testbed.service_account_kubeconfig(s.k, NS, f"{RELEASE}-webhook",
                                                   os.path.join(s.work, "webhook.kubeconfig"))
        ctl_kc = testbed.service_account_kubeconfig(s.k, NS, f"{RELEASE}-controller",
                                                    os.path.join(s.work, "controller.kubeconfig"))
        certs = os.path.join(s.work, "certs")
        os.makedirs(certs, exist_ok=True)
        crt, key = testbed.sign_cert(s.pki, s.work, "trainer-webhook")
        shutil.copy(crt, os.path.join(certs, "tls.crt"))
        shutil.copy(key, os.path.join(certs, "tls.key"))
        self.wh_health = testbed.free_port()
        self.wh_log = open(os.path.join(s.work, "webhook.log"), "w")
        # The Deployments' own arguments; only the paths and ports differ (explicit flags win over
        # the file, and the last of a repeated flag wins).
        self.webhook = subprocess.Popen(
            [os.path.join(testbed.bin_dir(), "trainer-webhook"), *deployment_args(s, "webhook"),
             f"--config={cfg}", f"--port={s.webhook_port}", f"--cert-dir={certs}",
             # Called by URL at 127.0.0.1 (the test's own certificate for it), not through the
             # Service the builtin mode's certificate names.
             "--cert-management=false",
             "--metrics-bind-address=0", f"--health-probe-bind-address=127.0.0.1:{self.wh_health}",
             f"--kubeconfig={wh_kc}",
             # With TrainJobStatus: a free port instead of the shared machine's 10443.
             *([f"--status-server-port={status_port}"] if status_port else [])],
            stdin=subprocess.DEVNULL, stdout=self.wh_log, stderr=subprocess.STDOUT)
        self.controller = testbed.Controller(*deployment_args(s, "controller"), f"--config={cfg}",
                                             kubeconfig=ctl_kc, log_dir=s.work)
        testbed.wait_for("trainer-webhook ready", lambda: testbed.http_get(
            f"http://127.0.0.1:{self.wh_health}/readyz")[0] == 200, timeout=60)
        log("trainer-webhook and trainer-controller run under the release's ServiceAccounts, "
            "with its Configuration file")

    def stop(self):
        if self.webhook.poll() is None:
            self.webhook.terminate()
            self.webhook.wait(30)
        self.wh_log.close()
        self.controller.stop()


def trainjob(name):
    with open(os.path.join(ROOT, "examples", "trainjobs", "torch-distributed.yaml")) as f:
        job = yaml.safe_load(f)
    job["metadata"] = {"name": name, "namespace": JOB_NS}
    return job


def admit(k, name):
    """Creates a TrainJob through the release's webhooks (after checking they deny a bad one)
    and waits for its JobSet; returns (TrainJob uid, JobSet uid)."""
    bad = trainjob(f"{name}-bad")
    bad["spec"]["runtimeRef"]["name"] = "no-such-runtime"
    testbed.wait_for("the webhooks to deny a TrainJob of a missing runtime", lambda: (
        lambda p: p.returncode != 0 and "denied the request" in p.stderr)(
            k.create(bad, "--dry-run=server")), timeout=30)
    p = k.create(trainjob(name))
    assert p.returncode == 0, f"creating TrainJob {name}: {p.stderr}"
    testbed.wait_for(f"the JobSet of {name}",
                     lambda: k.get_or_none("jobset", name, JOB_NS) is not None, timeout=60)
    return k.get("trainjob", name, JOB_NS)["metadata"]["uid"], \
        k.get("jobset", name, JOB_NS)["metadata"]["uid"]


def report_progress(s, port, name, percent):
    """POSTs a progress report for TrainJob JOB_NS/name to the local status server with a token
    of ServiceAccount reporter for that TrainJob's audience; (HTTP status, body)."""
    aud = f"trainer.kubeflow.org/v1alpha1/namespaces/{JOB_NS}/trainjobs/{name}/status"
    token = s.k.run("create", "token", "reporter", "-n", JOB_NS, f"--audience={aud}",
                    "--duration=1h").stdout.strip()
    ctx = ssl.create_default_context(cafile=os.path.join(s.pki, "ca.crt"))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    try:
        conn.request("POST", f"/apis/{aud}",
                     json.dumps({"trainerStatus": {
                         "progressPercentage": percent,
                         "lastUpdatedTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}),
                     {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def trainer_env(k, name):
    """The env of the first container of the first replicated job of JobSet JOB_NS/name."""
    rjob = k.get("jobset", name, JOB_NS)["spec"]["replicatedJobs"][0]
    container = rjob["template"]["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def runtimes(k):
    items = json.loads(k.run("get", "clustertrainingruntimes", "-o", "json").stdout)["items"]
    return sorted(i["metadata"]["name"] for i in items)


def main():
    build_dir = os.environ.get("TRAINER_BUILD_DIR") or os.path.join(ROOT, "build")
    s = Setup(build_dir)
    k = s.k
    services = None
    ok = False
    try:
        # --- install
        s.helm_deploy("install", "--create-namespace", "--set", "jobset.install=false",
                      "--set", "runtimes.defaultEnabled=true")
        for crd in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
            testbed.wait_for(f"CRD {crd}", lambda c=crd: (lambda o: any(
                x["type"] == "Established" and x["status"] == "True"
                for x in o["status"].get("conditions", [])))(
                    k.get("crd", f"{c}.trainer.kubeflow.org")), timeout=60)
        objs = release_objects(s)
        missing = [o[:3] for o in objs if not exists(k, *o)]
        assert not missing, f"helm install: missing {missing}"
        assert len(runtimes(k)) == 8, f"helm install: runtimes {runtimes(k)}"
        log(f"ok: helm install: {len(objs)} objects of the release, the CRDs Established, "
            "8 default runtimes")
        services = Services(s)
        k.run("create", "namespace", JOB_NS)
        tj, js = admit(k, "first")
        log("ok: a TrainJob was admitted by the release's webhooks and got its JobSet")

        # --- upgrade
        s.helm_deploy("upgrade", "--set", "jobset.install=false",
                      "--set", "runtimes.torchDistributed.enabled=true",
                      "--set", "webhook.replicas=3", "--set", "controller.logLevel=2",
                      "--set", "manager.config.featureGates.TrainJobStatus=true")
        dep = k.get("deployment", f"{RELEASE}-webhook", NS)
        assert dep["spec"]["replicas"] == 3, f"upgrade: webhook replicas {dep['spec']['replicas']}"
        args = k.get("deployment", f"{RELEASE}-controller", NS)["spec"]["template"]["spec"][
            "containers"][0]["args"]
        assert "-v=2" in args, f"upgrade: controller args {args}"
        assert runtimes(k) == ["torch-distributed"], f"upgrade: runtimes {runtimes(k)}"
        assert k.get("trainjob", "first", JOB_NS)["metadata"]["uid"] == tj
        assert k.get("jobset", "first", JOB_NS)["metadata"]["uid"] == js
        ports = k.get("service", f"{RELEASE}-webhook", NS)["spec"]["ports"]
        assert any(p["name"] == "status-server" and p["port"] == 10443 for p in ports), \
            f"upgrade: webhook Service ports {ports}"
        # The services as the upgraded Deployments run them (the gate, trainer-controller's
        # --webhook-service-name/-secret-name/-secret-namespace), under the release's RBAC. The
        # test's webhook does not manage its certificate (--cert-management=false), so the ca.crt
        # that trainer pods trust goes into the release's Secret here, as the builtin mode would.
        services.stop()
        services = None
        with open(os.path.join(s.pki, "ca.crt"), "rb") as f:
            ca = base64.b64encode(f.read()).decode()
        k.run("patch", "secret", "kubeflow-trainer-webhook-cert", "-n", NS, "--type=merge",
              "-p", json.dumps({"data": {"ca.crt": ca}}))
        status_port = testbed.free_port()
        services = Services(s, status_port=status_port)
        admit(k, "second")
        log("ok: helm upgrade: replicas, log level and runtimes changed; the TrainJob and its "
            "JobSet are the same objects; admission and reconciliation still work")
        url = trainer_env(k, "second").get("KUBEFLOW_TRAINER_SERVER_URL")
        want = (f"https://{RELEASE}-webhook.{NS}.svc:10443/apis/trainer.kubeflow.org/v1alpha1/"
                f"namespaces/{JOB_NS}/trainjobs/second/status")
        assert url == want, f"TrainJobStatus: KUBEFLOW_TRAINER_SERVER_URL {url}, want {want}"
        k.run("create", "serviceaccount", "reporter", "-n", JOB_NS)
        answers = []
        try:
            testbed.wait_for("the status server to accept a report", lambda: answers.append(
                report_progress(s, status_port, "second", 42)) or answers[-1][0] == 200,
                timeout=60, interval=1)
        except AssertionError as e:
            raise AssertionError(f"TrainJobStatus: {e}; the status server answered "
                                 f"{answers[-1:]}") from None
        got = k.get("trainjob", "second", JOB_NS)["status"].get("trainerStatus", {})
        assert got.get("progressPercentage") == 42, f"TrainJobStatus: trainerStatus {got}"
        log("ok: TrainJobStatus through the chart's values: the pods' URL names the release's "
            "webhook Service, and a report is written under the release's RBAC")

        # --- uninstall
        services.stop()
        services = None
        objs = release_objects(s)
        s.helm("uninstall", RELEASE, "--namespace", NS, "--wait", "--timeout", "120s")
        left = [o[:3] for o in objs if exists(k, *o)]
        assert not left, f"helm uninstall left {left}"
        for crd in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
            k.get("crd", f"{crd}.trainer.kubeflow.org")
        for name in ("first", "second"):
            k.get("trainjob", name, JOB_NS)
            k.get("jobset", name, JOB_NS)
        assert k.get("trainjob", "first", JOB_NS)["metadata"]["uid"] == tj
        assert k.get("jobset", "first", JOB_NS)["metadata"]["uid"] == js
        log("ok: helm uninstall removed the release's objects and kept the CRDs, TrainJobs "
            "and JobSets")
        ok = True
    finally:
        if services is not None:
            services.stop()
        s.finish(ok)
    print("PASS")


if __name__ == "__main__":
    main()

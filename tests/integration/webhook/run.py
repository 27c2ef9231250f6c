#!/usr/bin/env python3
"""Integration test of trainer-webhook against the test bed's kube-apiserver (admission over TLS).

1. Applies deploy/crds, starts trainer-webhook (cert dir laid out like a Secret volume, signed by
   the test bed CA; its kubeconfig) and waits for /readyz.
2. Registers the four webhooks by URL (the shipped deploy/base/webhook/webhook-configurations.yaml
   via hack/testbed/webhooks.py), scoped to this test: TrainJobs and TrainingRuntimes in a namespace
   labelled for it, ClusterTrainingRuntimes carrying its label, so tests sharing the test bed are
   not affected.
3. Checks through kubectl what users see: denials (403 Forbidden, upstream's texts), warnings,
   runtimePatches time defaulting, podTemplateOverrides translation, server-side dry run, the
   objectSelector opt-out, UPDATE rules, a certificate rotation under a stream of creates with
   zero failures, and /metrics (controller-runtime families, promtool-clean).

Environment: TESTBED_DIR (kubeconfig, pki/), TRAINER_BIN_DIR (trainer-webhook), optional KUBECTL.
"""

import base64
import glob
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
RUN_ID = f"{os.getpid()}"
NS = f"webhook-test-{RUN_ID}"
LABEL = "trainer-cpp.webhook-test/run"
VALIDATE_TJ = "/validate-trainer-kubeflow-org-v1alpha1-trainjob"

failures = []


def check(cond, what):
    if cond:
        print(f"ok   {what}")
    else:
        print(f"FAIL {what}")
        failures.append(what)


class Kubectl:
    def __init__(self, testbed):
        self.kubeconfig = os.path.join(testbed, "kubeconfig")
        binary = os.environ.get("KUBECTL")
        if not binary:
            bin_dir = subprocess.run([os.path.join(ROOT, "hack", "testbed", "build.sh"),
                                      "--print-bin-dir"], check=True, capture_output=True,
                                     text=True).stdout.strip()
            binary = os.path.join(bin_dir, "kubectl")
        self.binary = binary

    def run(self, *args, stdin=None, check=True):
        p = subprocess.run([self.binary, "--kubeconfig", self.kubeconfig, *args], input=stdin,
                           capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed: {p.stderr.strip()}")
        return p

    def create(self, obj, *extra):
        return self.run("create", "-f", "-", *extra, stdin=json.dumps(obj), check=False)

    def get(self, kind, name, ns=None):
        args = ["get", kind, name, "-o", "json"] + (["-n", ns] if ns else [])
        return json.loads(self.run(*args).stdout)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def sign_cert(pki, out_dir, cn):
    """A serving certificate for 127.0.0.1 signed by the test bed CA."""
    key, csr, crt = (os.path.join(out_dir, f"{cn}.{e}") for e in ("key", "csr", "crt"))
    ext = os.path.join(out_dir, f"{cn}.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-subj", f"/CN={cn}",
                    "-out", csr], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.crt"),
                    "-CAkey", os.path.join(pki, "ca.key"), "-CAcreateserial", "-days", "1",
                    "-sha256", "-extfile", ext, "-out", crt], check=True, capture_output=True)
    return crt, key


class SecretDir:
    """tls.crt / tls.key through a `..data` symlink, swapped atomically like the kubelet does."""

    def __init__(self, path):
        self.path = path
        self.version = 0

    def publish(self, crt, key):
        self.version += 1
        v = f"..v{self.version}"
        os.mkdir(os.path.join(self.path, v))
        shutil.copy(crt, os.path.join(self.path, v, "tls.crt"))
        shutil.copy(key, os.path.join(self.path, v, "tls.key"))
        tmp = os.path.join(self.path, "..data_tmp")
        os.symlink(v, tmp)
        os.replace(tmp, os.path.join(self.path, "..data"))
        for name in ("tls.crt", "tls.key"):
            link = os.path.join(self.path, name)
            if not os.path.islink(link):
                os.symlink(os.path.join("..data", name), link)


def served_cn(port, ca):
    ctx = ssl.create_default_context(cafile=ca)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
            cert = t.getpeercert()
    for rdn in cert.get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                return v
    return ""


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


def scoped_configurations(port, ca):
    """The configurations rewritten to our URL, prefixed, and scoped to this run."""
    with open(os.path.join(ROOT, "deploy", "base", "webhook", "webhook-configurations.yaml")) as f:
        docs = json.dumps({"kind": "List", "items": [d for d in yaml.safe_load_all(f) if d]})
    out = subprocess.run([sys.executable, os.path.join(ROOT, "hack", "testbed", "webhooks.py"),
                          "--url", f"https://127.0.0.1:{port}", "--ca", ca,
                          "--prefix", f"webhook-test-{RUN_ID}-"],
                         input=docs, capture_output=True, text=True, check=True).stdout
    lst = json.loads(out)
    for item in lst["items"]:
        for wh in item["webhooks"]:
            if "clustertrainingruntime" in wh["name"]:
                sel = wh.setdefault("objectSelector", {}).setdefault("matchExpressions", [])
                sel.append({"key": LABEL, "operator": "In", "values": [RUN_ID]})
            else:
                wh["namespaceSelector"] = {"matchLabels": {LABEL: RUN_ID}}
    return lst


def runtime(kind, name, labels=None, replicas=1, container="node"):
    md = {"name": name, "labels": {LABEL: RUN_ID, **(labels or {})}}
    if kind == "TrainingRuntime":
        md["namespace"] = NS
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": md,
            "spec": {"mlPolicy": {"numNodes": 1, "torch": {}},
                     "template": {"spec": {"replicatedJobs": [{
                         "name": "node", "replicas": replicas,
                         "template": {"metadata": {"labels": {
                             "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                             "spec": {"template": {"spec": {"containers": [
                                 {"name": container, "image": "pytorch/pytorch"}]}}}}}]}}}}


def trainjob(name, runtime_name, kind="ClusterTrainingRuntime", **spec):
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"runtimeRef": {"name": runtime_name, "kind": kind}, **spec}}


def main():
    testbed = os.environ.get("TESTBED_DIR") or os.path.join(ROOT, ".local", "testbed")
    bin_dir = os.environ.get("TRAINER_BIN_DIR") or os.path.join(ROOT, "build", "bin")
    binary = os.path.join(bin_dir, "trainer-webhook")
    pki = os.path.join(testbed, "pki")
    ca = os.path.join(pki, "ca.crt")
    for path in (os.path.join(testbed, "kubeconfig"), binary, ca):
        if not os.path.exists(path):
            sys.exit(f"webhook test: missing {path}")
    k = Kubectl(testbed)
    crd_files = sorted(glob.glob(os.path.join(ROOT, "deploy", "crds", "trainer.kubeflow.org_*.yaml")))
    k.run("apply", "--server-side", "--force-conflicts", "--field-manager=webhook-test",
          *[a for f in crd_files for a in ("-f", f)])
    # Poll: `kubectl wait` fails on a CRD whose status is still empty.
    for crd in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
        deadline = time.time() + 60
        while True:
            conds = k.get("crd", f"{crd}.trainer.kubeflow.org").get("status", {}).get(
                "conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conds):
                break
            if time.time() > deadline:
                sys.exit(f"webhook test: CRD {crd} not Established")
            time.sleep(0.2)

    work = tempfile.mkdtemp(prefix="webhook-it-")
    certs = SecretDir(os.path.join(work, "certs"))
    os.mkdir(certs.path)
    certs.publish(*sign_cert(pki, work, "trainer-webhook-1"))
    port, metrics_port, probe_port = free_port(), free_port(), free_port()
    log = open(os.path.join(work, "webhook.log"), "w")
    proc = subprocess.Popen([binary, f"--port={port}", f"--cert-dir={certs.path}",
                             f"--metrics-bind-address=127.0.0.1:{metrics_port}",
                             f"--health-probe-bind-address=127.0.0.1:{probe_port}",
                             f"--kubeconfig={k.kubeconfig}"],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    configs = None
    try:
        deadline = time.time() + 30
        while time.time() < deadline and http_get(f"http://127.0.0.1:{probe_port}/readyz")[0] != 200:
            time.sleep(0.2)
        check(http_get(f"http://127.0.0.1:{probe_port}/readyz") == (200, "ok"), "/readyz ok")
        check(http_get(f"http://127.0.0.1:{probe_port}/healthz") == (200, "ok"), "/healthz ok")

        k.run("create", "namespace", NS)
        k.run("label", "namespace", NS, f"{LABEL}={RUN_ID}")
        configs = scoped_configurations(port, ca)
        k.run("apply", "-f", "-", stdin=json.dumps(configs))
        # The apiserver picks configurations up asynchronously: wait until a denial shows.
        bad = trainjob("probe", "does-not-exist")
        deadline = time.time() + 30
        while time.time() < deadline:
            p = k.create(bad, "--dry-run=server")
            if p.returncode != 0 and "denied the request" in p.stderr:
                break
            time.sleep(0.5)

        # ---- runtimes ----
        p = k.create(runtime("ClusterTrainingRuntime", f"torch-{RUN_ID}"))
        check(p.returncode == 0, "valid ClusterTrainingRuntime created")
        p = k.create(runtime("ClusterTrainingRuntime", f"bad-{RUN_ID}", replicas=2))
        check(p.returncode != 0 and 'admission webhook "validator.clustertrainingruntime.trainer.'
              'kubeflow.org" denied the request: spec.template.spec.replicatedJobs[0].replicas: '
              'Invalid value: 2: always must be 1' in p.stderr,
              "ClusterTrainingRuntime with replicas 2 denied with upstream's text")
        p = k.create(runtime("ClusterTrainingRuntime", f"optout-{RUN_ID}", replicas=2,
                             labels={"trainer.kubeflow.org/webhook-validation": "disabled"}))
        check(p.returncode == 0, "webhook-validation=disabled runtime bypasses validation")
        p = k.create(runtime("ClusterTrainingRuntime", f"old-{RUN_ID}",
                             labels={"trainer.kubeflow.org/support": "deprecated"}))
        check(p.returncode == 0 and f'Warning: ClusterTrainingRuntime "old-{RUN_ID}" is deprecated'
              in p.stderr, "deprecated ClusterTrainingRuntime created with a warning")
        p = k.create(runtime("TrainingRuntime", "team", container="trainer"))
        check(p.returncode != 0 and "must contain the required container for the ancestor: "
              "trainer" in p.stderr, "TrainingRuntime without node container denied")
        p = k.create(runtime("TrainingRuntime", "team"))
        check(p.returncode == 0, "valid TrainingRuntime created")
        p = k.run("patch", "trainingruntime", "team", "-n", NS, "--type=json", "-p",
                  '[{"op":"replace","path":"/spec/template/spec/replicatedJobs/0/replicas",'
                  '"value":3}]', check=False)
        check(p.returncode == 0, "TrainingRuntime UPDATE is not validated (as upstream)")

        # ---- TrainJobs ----
        p = k.create(trainjob("missing", "nope"))
        check(p.returncode != 0 and "(Forbidden)" in p.stderr and
              'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
              'spec.RuntimeRef: Invalid value' in p.stderr and
              "specified clusterTrainingRuntime must be created before the TrainJob is created"
              in p.stderr, "TrainJob of a missing runtime denied")
        p = k.create(trainjob("unsupported", "x", kind="MyRuntime"))
        check(p.returncode != 0 and "unsupported runtime: MyRuntime.trainer.kubeflow.org"
              in p.stderr, "unsupported runtime kind denied")
        p = k.create(trainjob("reserved", f"torch-{RUN_ID}",
                              trainer={"env": [{"name": "PET_NNODES", "value": "2"}]}))
        check(p.returncode != 0 and "must not have reserved envs, invalid envs configured: "
              "[PET_NNODES]" in p.stderr, "reserved torch env denied")
        p = k.create(trainjob("dry", f"torch-{RUN_ID}"), "--dry-run=server")
        check(p.returncode == 0, "server-side dry run admitted")
        check(k.run("get", "trainjob", "dry", "-n", NS, check=False).returncode != 0,
              "dry run not persisted")

        p = k.create(trainjob("job", f"torch-{RUN_ID}", suspend=True, runtimePatches=[
            {"manager": "example.com/a", "trainingRuntimeSpec": {
                "template": {"metadata": {"labels": {"team": "a"}}}}}]))
        check(p.returncode == 0, "valid TrainJob created")
        job = k.get("trainjob", "job", NS)
        t = job["spec"]["runtimePatches"][0].get("time", "")
        check(t != "", f"runtimePatches[0].time defaulted ({t})")
        check(job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["metadata"]
              ["labels"] == {"team": "a"}, "runtime patch content untouched")
        p = k.run("label", "trainjob", "job", "-n", NS, "x=y", check=False)
        job2 = k.get("trainjob", "job", NS)
        check(p.returncode == 0 and job2["spec"]["runtimePatches"][0]["time"] == t,
              "metadata-only UPDATE keeps the patch time")

        p = k.create(trainjob("running", f"torch-{RUN_ID}"))
        check(p.returncode == 0, "running TrainJob created")
        p = k.run("patch", "trainjob", "running", "-n", NS, "--type=merge", "-p",
                  json.dumps({"spec": {"runtimePatches": [{"manager": "example.com/b"}]}}),
                  check=False)
        check(p.returncode != 0 and "RuntimePatches can only be modified when the TrainJob is "
              "suspended before or after the update" in p.stderr,
              "runtimePatches change on a running TrainJob denied")

        p = k.create(trainjob("deprecated", f"old-{RUN_ID}"))
        check(p.returncode == 0 and f'Warning: Referenced ClusterTrainingRuntime "old-{RUN_ID}" '
              'is deprecated' in p.stderr, "TrainJob of a deprecated runtime warns")

        p = k.create(trainjob("legacy", f"torch-{RUN_ID}", podTemplateOverrides=[
            {"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"pool": "gpu"}}}]))
        check(p.returncode == 0 and "spec.podTemplateOverrides is deprecated" in p.stderr,
              "podTemplateOverrides TrainJob created with a deprecation warning")
        if p.returncode == 0:
            legacy = k.get("trainjob", "legacy", NS)
            patches = legacy["spec"].get("runtimePatches", [])
            check(len(patches) == 1 and patches[0]["manager"] ==
                  "trainer.kubeflow.org/podtemplateoverrides" and patches[0].get("time"),
                  "podTemplateOverrides translated into a timed runtimePatches entry")

        # ---- certificate rotation under load ----
        check(served_cn(port, ca) == "trainer-webhook-1", "serving the first certificate")
        results = []
        stop_at = time.time() + 8
        rotated = False
        i = 0
        while time.time() < stop_at:
            p = k.create(trainjob(f"rot-{i}", f"torch-{RUN_ID}"), "--dry-run=server")
            if p.returncode != 0:
                print(p.stderr.strip())
            results.append(p.returncode == 0)
            i += 1
            if not rotated and time.time() > stop_at - 6:
                certs.publish(*sign_cert(pki, work, "trainer-webhook-2"))
                rotated = True
        deadline = time.time() + 10
        while time.time() < deadline and served_cn(port, ca) != "trainer-webhook-2":
            time.sleep(0.2)
        check(served_cn(port, ca) == "trainer-webhook-2", "rotated certificate served")
        check(len(results) > 5 and all(results),
              f"no admission failed across the rotation ({sum(results)}/{len(results)})")
        p = k.create(trainjob("after-rotation", f"torch-{RUN_ID}"), "--dry-run=server")
        check(p.returncode == 0, "admission works after the rotation")

        # ---- metrics ----
        status, text = http_get(f"http://127.0.0.1:{metrics_port}/metrics")
        check(status == 200, "/metrics served")
        check(f'controller_runtime_webhook_requests_total{{code="200",webhook="{VALIDATE_TJ}"}}'
              in text, "requests_total by webhook and code")
        check("trainer_webhook_denials_total{reason=\"Forbidden\"" in text, "denials counted")
        check("controller_runtime_webhook_latency_seconds_bucket" in text, "latency histogram")
        check("certwatcher_read_certificate_total 2" in text, "two certificate reads")
        check("trainer_webhook_certificate_expiry_timestamp_seconds " in text, "expiry gauge")
        if shutil.which("promtool"):
            p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                               text=True)
            check(p.returncode == 0, f"promtool check metrics {p.stdout}{p.stderr}".strip())

        proc.terminate()
        try:
            proc.wait(timeout=15)
            check(proc.returncode == 0, "graceful stop on SIGTERM")
        except subprocess.TimeoutExpired:
            check(False, "graceful stop on SIGTERM within 15 s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if configs is not None:
            for item in configs["items"]:
                k.run("delete", item["kind"].lower(), item["metadata"]["name"],
                      "--ignore-not-found", check=False)
        for name in (f"torch-{RUN_ID}", f"optout-{RUN_ID}", f"old-{RUN_ID}"):
            k.run("delete", "clustertrainingruntime", name, "--ignore-not-found", check=False)
        k.run("delete", "namespace", NS, "--ignore-not-found", "--wait=false", check=False)
        log.close()
        if failures:
            print(open(os.path.join(work, "webhook.log")).read()[-6000:])
        shutil.rmtree(work, ignore_errors=True)

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

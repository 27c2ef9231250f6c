"""Helpers the Python integration tests share: kubectl on a test bed, polling, and our two
binaries started against it (trainer-controller; trainer-webhook with a serving certificate from
the test bed CA and its webhook configurations registered by URL, scoped to one test).

Import with
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "common", "py"))
    import testbed
Defaults come from the environment ctest sets: TESTBED_DIR (kubeconfig, pki/), TRAINER_BIN_DIR;
KUBECTL overrides the test bed's kubectl.
"""

import glob
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                    ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "testbed"))
import free_port as _free_port  # noqa: E402


def testbed_dir():
    return os.environ.get("TESTBED_DIR") or os.path.join(ROOT, ".local", "testbed")


def bin_dir():
    return os.environ.get("TRAINER_BIN_DIR") or os.path.join(ROOT, "build", "bin")


def kubectl_binary():
    if os.environ.get("KUBECTL"):
        return os.environ["KUBECTL"]
    out = subprocess.run([os.path.join(ROOT, "hack", "testbed", "build.sh"), "--print-bin-dir"],
                         capture_output=True, text=True, check=True)
    return os.path.join(out.stdout.strip(), "kubectl")


class Kubectl:
    """kubectl against one test bed's admin kubeconfig."""

    def __init__(self, testbed=None):
        self.testbed = testbed or testbed_dir()
        self.kubeconfig = os.path.join(self.testbed, "kubeconfig")
        self.binary = kubectl_binary()

    def run(self, *args, stdin=None, check=True):
        p = subprocess.run([self.binary, "--kubeconfig", self.kubeconfig, *args], input=stdin,
                           capture_output=True, text=True, timeout=180)
        if check and p.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed: {p.stderr.strip()}")
        return p

    def create(self, obj, *extra):
        """`kubectl create -f -`; the CompletedProcess, whatever the outcome."""
        return self.run("create", "-f", "-", *extra, stdin=json.dumps(obj), check=False)

    def apply(self, obj, manager="it-test"):
        """Server-side apply (force) of one object or a v1 List."""
        return self.run("apply", "--server-side", "--force-conflicts", "--field-manager", manager,
                        "-f", "-", stdin=json.dumps(obj))

    def get(self, kind, name, ns=None):
        """The object; raises when it cannot be read."""
        args = ["get", kind, name, "-o", "json"] + (["-n", ns] if ns else [])
        return json.loads(self.run(*args).stdout)

    def get_or_none(self, kind, name, ns=None, managed_fields=False):
        """The object, or None when it does not exist."""
        args = ["get", kind, name, "-o", "json"] + (["-n", ns] if ns else [])
        if managed_fields:
            args.append("--show-managed-fields")
        p = self.run(*args, check=False)
        if p.returncode != 0:
            if "NotFound" in p.stderr or "not found" in p.stderr:
                return None
            raise RuntimeError(p.stderr)
        return json.loads(p.stdout)

    def items(self, kind, ns):
        return json.loads(self.run("get", kind, "-n", ns, "-o", "json").stdout)["items"]

    def delete_namespace(self, ns):
        """A test's cleanup: the namespace's TrainJobs are deleted now, the rest is left to the
        namespace controller (--wait=false). kube-controller-manager's watches can take a minute
        to come back after an apiserver restart, and TrainJobs left meanwhile are reconciled by
        every later test's controller (they watch all namespaces): with their runtime deleted they
        fail and retry, spending a rate-limited controller's budget (a wave test then stalled)."""
        self.run("delete", "trainjobs", "--all", "-n", ns, "--wait=false", "--ignore-not-found",
                 check=False)
        self.run("delete", "namespace", ns, "--wait=false", "--ignore-not-found", check=False)


def free_port():
    """A port on 127.0.0.1 nobody listens on, never one this test bed handed out before (its
    ledger is shared with hack/testbed/lib.sh testbed_free_port)."""
    bed = os.environ.get("TESTBED_DIR", "")
    return _free_port.free_port(os.path.join(bed, "ports") if bed and os.path.isdir(bed) else None)


def wait_for(what, fn, timeout=30.0, interval=0.1):
    """Polls fn every `interval` s until it returns something truthy, which it returns; raises
    on the deadline."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = fn()
            if last:
                return last
        except Exception as e:  # noqa: BLE001 - keep polling; report the last error
            last = e
        time.sleep(interval)
    raise AssertionError("timed out after %.0fs waiting for %s (last: %r)" % (timeout, what, last))


def condition(obj, ctype):
    for c in (obj or {}).get("status", {}).get("conditions", []) or []:
        if c["type"] == ctype:
            return c
    return None


def http_get(url, timeout=5):
    """(status, body); (0, "") when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


def subset(want, have, path=""):
    """None when every field of `want` is in `have` with the same value (lists element-wise),
    else the first difference."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return "%s: want object, have %r" % (path, have)
        for k, v in want.items():
            if v in ({}, [], None) and k not in have:
                continue  # the apiserver drops empty values
            if k not in have:
                return "%s.%s: missing" % (path, k)
            err = subset(v, have[k], path + "." + k)
            if err:
                return err
        return None
    if isinstance(want, list):
        if not isinstance(have, list) or len(want) != len(have):
            return "%s: want list of %d, have %r" % (path, len(want), have)
        for i, (a, b) in enumerate(zip(want, have)):
            err = subset(a, b, "%s[%d]" % (path, i))
            if err:
                return err
        return None
    return None if want == have else "%s: want %r, have %r" % (path, want, have)


def install_trainer_crds(k, manager="it-test"):
    """Applies deploy/crds (our three CRDs) and waits until they are Established."""
    files = sorted(glob.glob(os.path.join(ROOT, "deploy", "crds", "trainer.kubeflow.org_*.yaml")))
    k.run("apply", "--server-side", "--force-conflicts", f"--field-manager={manager}",
          *[a for f in files for a in ("-f", f)])
    # Poll: `kubectl wait` fails on a CRD whose status is still empty.
    for crd in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
        wait_for(f"CRD {crd} established", lambda: any(
            c["type"] == "Established" and c["status"] == "True"
            for c in k.get("crd", f"{crd}.trainer.kubeflow.org").get("status", {}).get(
                "conditions") or []), 60)


def keep_logs(bed_dir, work_dir):
    """After a failed test: the test bed's logs and the *.log files of the test's work directory
    (its services') copied to <bed_dir>-logs, which outlives both."""
    kept = bed_dir.rstrip("/") + "-logs"
    shutil.rmtree(kept, ignore_errors=True)
    shutil.copytree(os.path.join(bed_dir, "logs"), kept, dirs_exist_ok=True)
    for f in os.listdir(work_dir):
        if f.endswith(".log"):
            shutil.copy(os.path.join(work_dir, f), kept)
    print(f"logs copied to {kept}", file=sys.stderr)


def upstream_build():
    """(manager binary, module directory) of upstream Kubeflow Trainer v2.3.0, built through the
    Go module proxy by hack/bench/webhook/upstream.sh (cached): the binary, and its module's
    sources in the module cache it built from (manifests/, charts/, ...)."""
    p = subprocess.run([os.path.join(ROOT, "hack", "bench", "webhook", "upstream.sh")],
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise AssertionError(f"hack/bench/webhook/upstream.sh failed:\n{p.stdout}{p.stderr}")
    binary = p.stdout.strip()
    d = os.path.join(os.path.dirname(os.path.dirname(binary)), "gopath", "pkg", "mod",
                     "github.com", "kubeflow", "trainer", "v2@v2.3.0")
    assert os.path.isdir(os.path.join(d, "manifests")), f"no upstream manifests in {d}"
    return binary, d


class Controller:
    """trainer-controller on the test bed, started ready (/readyz ok) unless wait_ready=False."""

    def __init__(self, *flags, kubeconfig=None, log_dir=None, wait_ready=True):
        self.health = free_port()
        self.metrics = free_port()
        kubeconfig = kubeconfig or os.path.join(testbed_dir(), "kubeconfig")
        self.log_path = os.path.join(log_dir or tempfile.gettempdir(),
                                     "controller-%d.log" % time.time_ns())
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir(), "trainer-controller"), "--kubeconfig", kubeconfig,
             "--health-probe-bind-address", "127.0.0.1:%d" % self.health,
             "--metrics-bind-address", "127.0.0.1:%d" % self.metrics, "-v=1", *flags],
            stdout=self.log, stderr=subprocess.STDOUT)
        if not wait_ready:
            return
        try:
            wait_for("controller ready", lambda: self.http(self.health, "/readyz") == "ok")
        except Exception:
            self.proc.kill()
            self.proc.wait()
            raise

    def http(self, port, path):
        status, body = http_get("http://127.0.0.1:%d%s" % (port, path))
        return body if status == 200 else None

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout)
        self.log.close()
        return self.proc.returncode


def sign_cert(pki, out_dir, cn, dns=("localhost",)):
    """A serving certificate for 127.0.0.1 and the `dns` names signed by the test bed CA:
    (crt path, key path)."""
    key, csr, crt = (os.path.join(out_dir, f"{cn}.{e}") for e in ("key", "csr", "crt"))
    ext = os.path.join(out_dir, f"{cn}.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1" + "".join(f",DNS:{d}" for d in dns) +
                "\nextendedKeyUsage=serverAuth\n")
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
    """The commonName of the certificate served on 127.0.0.1:port (verified against `ca`)."""
    ctx = ssl.create_default_context(cafile=ca)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
            cert = t.getpeercert()
    for rdn in cert.get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                return v
    return ""


def scoped_webhook_configurations(port, ca, prefix, label, run_id):
    """The shipped deploy/base/webhook configurations rewritten to https://127.0.0.1:<port>,
    names prefixed, and scoped to one test: TrainJobs and TrainingRuntimes in namespaces labelled
    label=run_id, ClusterTrainingRuntimes carrying that label. A v1 List."""
    with open(os.path.join(ROOT, "deploy", "base", "webhook", "webhook-configurations.yaml")) as f:
        docs = json.dumps({"kind": "List", "items": [d for d in yaml.safe_load_all(f) if d]})
    out = subprocess.run([sys.executable, os.path.join(ROOT, "hack", "testbed", "webhooks.py"),
                          "--url", f"https://127.0.0.1:{port}", "--ca", ca, "--prefix", prefix],
                         input=docs, capture_output=True, text=True, check=True).stdout
    lst = json.loads(out)
    for item in lst["items"]:
        for wh in item["webhooks"]:
            if "clustertrainingruntime" in wh["name"]:
                sel = wh.setdefault("objectSelector", {}).setdefault("matchExpressions", [])
                sel.append({"key": label, "operator": "In", "values": [run_id]})
            else:
                wh["namespaceSelector"] = {"matchLabels": {label: run_id}}
    return lst


def service_account_kubeconfig(k, namespace, name, path):
    """Writes a kubeconfig for the test bed's apiserver that authenticates as ServiceAccount
    namespace/name (a TokenRequest token, 1 h), so a binary runs with only its RBAC."""
    token = k.run("create", "token", name, "-n", namespace, "--duration=1h").stdout.strip()
    admin = json.loads(k.run("config", "view", "--raw", "--minify", "-o", "json").stdout)
    cluster = admin["clusters"][0]["cluster"]
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "sa",
              "clusters": [{"name": "testbed", "cluster": cluster}],
              "users": [{"name": name, "user": {"token": token}}],
              "contexts": [{"name": "sa", "context": {"cluster": "testbed", "user": name,
                                                      "namespace": namespace}}]}
    with open(path, "w") as f:
        json.dump(config, f)
    return path


class Webhook:
    """trainer-webhook on the test bed: its cert dir laid out like a Secret volume (`certs`, a
    SecretDir) with a certificate signed by the test bed CA, the admin kubeconfig (or the given
    one, e.g. service_account_kubeconfig's) and any further `flags`, ready
    (/readyz). `register(...)` installs the scoped webhook configurations; `stop()` removes them."""

    def __init__(self, k, work, cn="trainer-webhook-1", kubeconfig=None, dns=("localhost",),
                 flags=()):
        self.k = k
        self.work = work
        self.pki = os.path.join(k.testbed, "pki")
        self.ca = os.path.join(self.pki, "ca.crt")
        self.certs = SecretDir(os.path.join(work, "certs"))
        os.mkdir(self.certs.path)
        self.certs.publish(*sign_cert(self.pki, work, cn, dns))
        self.port, self.metrics_port, self.probe_port = free_port(), free_port(), free_port()
        self.log_path = os.path.join(work, "webhook.log")
        self.log = open(self.log_path, "w")
        self.configs = None
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir(), "trainer-webhook"), f"--port={self.port}",
             f"--cert-dir={self.certs.path}",
             f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
             f"--health-probe-bind-address=127.0.0.1:{self.probe_port}",
             f"--kubeconfig={kubeconfig or k.kubeconfig}", *flags],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline and self.probe("/readyz")[0] != 200:
            time.sleep(0.2)

    def probe(self, path):
        return http_get(f"http://127.0.0.1:{self.probe_port}{path}")

    def register(self, prefix, label, run_id, probe_trainjob=None):
        """Installs the configurations scoped to label=run_id. With probe_trainjob (one the
        webhook denies), waits until the apiserver calls the webhook for it: configurations are
        picked up asynchronously."""
        self.configs = scoped_webhook_configurations(self.port, self.ca, prefix, label, run_id)
        self.k.run("apply", "-f", "-", stdin=json.dumps(self.configs))
        if probe_trainjob is None:
            return
        deadline = time.time() + 30
        while time.time() < deadline:
            p = self.k.create(probe_trainjob, "--dry-run=server")
            if p.returncode != 0 and "denied the request" in p.stderr:
                return
            time.sleep(0.5)
        raise AssertionError("the webhook was not called within 30s of registering it")

    def unregister(self):
        if self.configs is not None:
            for item in self.configs["items"]:
                self.k.run("delete", item["kind"].lower(), item["metadata"]["name"],
                           "--ignore-not-found", check=False)
            self.configs = None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        """Unregisters, kills if still running, closes the log."""
        self.unregister()
        self.kill()
        self.log.close()

    def tail_log(self, n=6000):
        with open(self.log_path) as f:
            return f.read()[-n:]

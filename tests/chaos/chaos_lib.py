"""What the chaos tests (tests/chaos/*.py) share beyond tests/integration/common/py/testbed.py:
result reporting with figures, a keep-alive HTTPS client of the apiserver for load loops (kubectl
costs ~0.1 s of process start per call, seconds on a loaded machine), TrainJob waves, the audit
of the objects the controller owns (every TrainJob has exactly one of each expected object, every
owned object has a live owner), and AdmissionReviews sent straight to a webhook port.
"""

import contextlib
import http.client
import json
import os
import socket
import ssl
import sys
import threading
import time
import uuid

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration",
                                "common", "py"))
import testbed as tb  # noqa: E402  (re-exported for the tests)

GROUP = "trainer.kubeflow.org"
VALIDATE = "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
# The ClusterTrainingRuntime review() refers to (a test sets it).
RUNTIME = "torch-distributed"
# Kinds the controller creates for a TrainJob, as `kubectl get` resource names.
OWNED = ["jobsets.jobset.x-k8s.io", "configmaps", "secrets", "podgroups.scheduling.x-k8s.io"]


class Result:
    """Collects checks; each prints one line. finish() prints PASS/FAIL with the test's name."""

    def __init__(self, name):
        self.name = name
        self.failures = []
        self.started = time.time()

    def check(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            self.failures.append(what)
        return cond

    def figure(self, text):
        print("     " + text, flush=True)

    def finish(self, logs=()):
        secs = time.time() - self.started
        if self.failures:
            for path in logs:
                try:
                    print(f"--- last lines of {path}:\n" + open(path).read()[-3000:])
                except OSError:
                    pass
            print(f"FAIL {self.name} in {secs:.0f}s: {len(self.failures)} check(s) failed: "
                  + "; ".join(self.failures), flush=True)
            return 1
        print(f"PASS {self.name} in {secs:.0f}s", flush=True)
        return 0


def metric(ctl, name):
    """The sum of metric `name` over its label sets on a testbed.Controller's /metrics; None
    when it does not answer or has no such line."""
    total = None
    for line in (ctl.http(ctl.metrics, "/metrics") or "").splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total = (total or 0) + float(line.split()[-1])
    return total


def example_runtime(file, name, labels=None):
    """A ClusterTrainingRuntime of examples/runtimes/ renamed (and labelled)."""
    with open(os.path.join(tb.ROOT, "examples", "runtimes", file)) as f:
        rt = yaml.safe_load(f)
    rt["metadata"]["name"] = name
    if labels:
        rt["metadata"].setdefault("labels", {}).update(labels)
    return rt


def restart_apiserver(*args):
    """hack/testbed/restart-apiserver.sh ARGS; (ok, stderr tail)."""
    import subprocess
    p = subprocess.run([os.path.join(tb.ROOT, "hack", "testbed", "restart-apiserver.sh"), *args],
                       capture_output=True, text=True)
    return p.returncode == 0, p.stderr.strip()[-300:]


def set_apiserver_flag(flag):
    """Restarts the test bed's apiserver at once with one flag changed ("name=value")."""
    ok, err = restart_apiserver("--down-seconds", "0", "--set-flag", flag)
    if not ok:
        raise RuntimeError("restart-apiserver.sh: " + err)


@contextlib.contextmanager
def aggregator_routing():
    """The apiserver picks a ready endpoint of a Service's EndpointSlices for each webhook
    connection (--enable-aggregator-routing), as the webhook client does in a cluster; the flag
    is switched off again afterwards."""
    set_apiserver_flag("enable-aggregator-routing=true")
    try:
        yield
    finally:
        set_apiserver_flag("enable-aggregator-routing=false")


@contextlib.contextmanager
def run_namespace(k, ns, runtime, label, run_id):
    """A namespace and a ClusterTrainingRuntime (the torch-distributed example) of this run,
    labelled label=run_id; both deleted afterwards."""
    k.apply(example_runtime("torch-distributed.yaml", runtime, {label: run_id}))
    k.run("create", "namespace", ns)
    k.run("label", "namespace", ns, f"{label}={run_id}")
    try:
        yield
    finally:
        k.delete_namespace(ns)
        k.run("delete", "clustertrainingruntime", runtime, "--ignore-not-found", check=False)


def host_ip():
    """This machine's first non-loopback IPv4 address: EndpointSlice validation refuses
    127.0.0.0/8, and the webhook listens on every interface."""
    import subprocess
    for addr in subprocess.run(["hostname", "-I"], capture_output=True, text=True,
                               check=True).stdout.split():
        if "." in addr and not addr.startswith("127."):
            return addr
    raise RuntimeError("no non-loopback IPv4 address for the EndpointSlices")


def endpoint_slice(ns, service, name, port, ready=True):
    """An EndpointSlice of Service ns/service with one endpoint, this machine at `port`: how the
    chaos tests list a webhook replica (a local process) behind a Service. With the apiserver's
    --enable-aggregator-routing it dials a ready endpoint of the slices for each new connection."""
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kubernetes.io/service-name": service,
                                    "endpointslice.kubernetes.io/managed-by": "chaos-test"}},
            "addressType": "IPv4",
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            "endpoints": [{"addresses": [host_ip()], "conditions": {"ready": ready}}]}


class ApiClient:
    """A keep-alive HTTPS client of the test bed's apiserver as the admin user (a create with
    ?dryRun=All goes through admission and persists nothing)."""

    def __init__(self, testbed=None, timeout=30):
        d = testbed or tb.testbed_dir()
        cfg = yaml.safe_load(open(os.path.join(d, "kubeconfig")))
        server = cfg["clusters"][0]["cluster"]["server"]
        self.host, port = server[len("https://"):].rsplit(":", 1)
        self.port = int(port)
        pki = os.path.join(d, "pki")
        self.ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        self.ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.timeout = timeout
        self.conn = None

    def request(self, method, path, body=None):
        """(status, parsed JSON or text); (0, error text) when the connection failed. A request
        on a keep-alive connection the server closed is sent once more on a new one."""
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                        timeout=self.timeout)
            try:
                self.conn.request(method, path, body=data,
                                  headers={"Content-Type": "application/json"})
                r = self.conn.getresponse()
                text = r.read().decode()
            except (OSError, http.client.HTTPException) as e:
                self.conn.close()
                self.conn = None
                if attempt == 0 and isinstance(e, (http.client.RemoteDisconnected,
                                                   BrokenPipeError, ConnectionResetError)):
                    continue
                return 0, str(e)
            try:
                return r.status, json.loads(text)
            except ValueError:
                return r.status, text
        return 0, "unreachable"

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def trainjob(name, ns, runtime, **spec):
    tj = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "TrainJob",
          "metadata": {"name": name, "namespace": ns},
          "spec": {"runtimeRef": {"name": runtime},
                   "trainer": {"numNodes": 2, "command": ["python3", "-c", "print(1)"]}}}
    tj["spec"].update(spec)
    return tj


def probe_trainjob(ns):
    """A TrainJob our webhook denies (its runtime does not exist): testbed.Webhook.register's
    probe that the configurations are active."""
    return trainjob("probe", ns, "does-not-exist-probe")


def create_wave(ns, runtime, prefix, n, threads=6, testbed=None):
    """Creates n TrainJobs prefix-0000.. through the apiserver, `threads` keep-alive clients in
    parallel (kubectl creates ~4 a second on a loaded machine). Returns the failures as
    [(name, status, message)]."""
    failures = []
    lock = threading.Lock()

    def worker(w):
        client = ApiClient(testbed)
        for i in range(w, n, threads):
            name = "%s-%04d" % (prefix, i)
            status, body = client.request(
                "POST", f"/apis/{GROUP}/v1alpha1/namespaces/{ns}/trainjobs",
                trainjob(name, ns, runtime))
            if status != 201:
                with lock:
                    failures.append((name, status, str(body)[:300]))
        client.close()
    pool = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return failures


def owned_objects(k, ns, kinds=OWNED):
    """{kind: [objects with a TrainJob controller reference]} in ns."""
    out = {}
    for kind in kinds:
        items = k.items(kind, ns)
        out[kind] = [o for o in items if any(
            r.get("kind") == "TrainJob" for r in o["metadata"].get("ownerReferences", []))]
    return out


def audit(k, ns, expected_per_job, prefix=None):
    """Checks the controller's objects in ns against the TrainJobs there. Returns (problems,
    counts): problems lists missing objects, duplicates (more than expected of a kind for one
    TrainJob), orphans (owner gone or uid mismatch) and objects with several owners."""
    jobs = {t["metadata"]["name"]: t for t in k.items("trainjobs", ns)
            if prefix is None or t["metadata"]["name"].startswith(prefix)}
    objs = owned_objects(k, ns, list(expected_per_job))
    problems = []
    per_job = {name: {kind: 0 for kind in expected_per_job} for name in jobs}
    counts = {}
    all_jobs = {t["metadata"]["name"]: t for t in k.items("trainjobs", ns)}
    for kind, items in objs.items():
        counts[kind] = len(items)
        for o in items:
            refs = [r for r in o["metadata"].get("ownerReferences", []) if r.get("kind") == "TrainJob"]
            name = o["metadata"]["name"]
            if len(refs) != 1 or not refs[0].get("controller"):
                problems.append(f"{kind} {name}: {len(refs)} TrainJob owners")
                continue
            owner = all_jobs.get(refs[0]["name"])
            if owner is None or owner["metadata"]["uid"] != refs[0]["uid"]:
                problems.append(f"orphan {kind} {name} (owner {refs[0]['name']} gone)")
                continue
            if refs[0]["name"] in per_job:
                per_job[refs[0]["name"]][kind] += 1
    for job, kinds in per_job.items():
        for kind, n in kinds.items():
            want = expected_per_job[kind]
            if n < want:
                problems.append(f"TrainJob {job}: {n}/{want} {kind}")
            elif n > want:
                problems.append(f"TrainJob {job}: duplicate {kind} ({n}, want {want})")
    return problems, counts


def expected_objects(k, ns, job):
    """{kind: count} the controller made for one converged TrainJob (the reference)."""
    objs = owned_objects(k, ns)
    out = {}
    for kind, items in objs.items():
        n = sum(1 for o in items
                if any(r["name"] == job for r in o["metadata"]["ownerReferences"]))
        if n:
            out[kind] = n
    return out


# ---- AdmissionReviews straight to the webhook port (no apiserver) ----

def tls_context(ca):
    ctx = ssl.create_default_context(cafile=ca)
    return ctx


def review(name="valid"):
    uid = str(uuid.uuid4())
    tj = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
          "metadata": {"name": name, "namespace": "default"},
          "spec": {"runtimeRef": {"name": RUNTIME, "apiGroup": "trainer.kubeflow.org",
                                   "kind": "ClusterTrainingRuntime"}}}
    return uid, {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                 "request": {"uid": uid,
                             "kind": {"group": "trainer.kubeflow.org", "version": "v1alpha1",
                                      "kind": "TrainJob"},
                             "resource": {"group": "trainer.kubeflow.org", "version": "v1alpha1",
                                          "resource": "trainjobs"},
                             "name": name, "namespace": "default", "operation": "CREATE",
                             "userInfo": {"username": "chaos"}, "object": tj}}


def request_bytes(body, path=None, content_type="application/json", extra=""):
    path = path or VALIDATE
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n")
    return head.encode() + body


def read_response(sock, deadline):
    """Reads until the server closes or a full response (by Content-Length) arrived. Returns
    (status or None, body bytes, closed_by_server)."""
    data = b""
    while True:
        left = deadline - time.time()
        if left <= 0:
            return None, data, False
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return None, data, False
        except (ssl.SSLError, OSError):
            chunk = b""
        if not chunk:
            return parse_status(data), body_of(data), True
        data += chunk
        status = parse_status(data)
        if status is not None and b"\r\n\r\n" in data:
            head, _, body = data.partition(b"\r\n\r\n")
            length = None
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is not None and len(body) >= length:
                return status, body[:length], False


def parse_status(data):
    if not data.startswith(b"HTTP/1.1 "):
        return None
    try:
        return int(data[9:12])
    except ValueError:
        return None


def body_of(data):
    return data.partition(b"\r\n\r\n")[2]


class Conn:
    """One TLS connection to the webhook. A test may write on it from one thread while another
    waits for the server's answer: OpenSSL forbids using one connection from two threads at
    once, and Python's ssl module runs both calls without the GIL (a crash of the test, seen
    once in CI), so every call on the socket holds the connection's lock."""

    def __init__(self, port, ctx, handshake=True):
        self.raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock = ctx.wrap_socket(self.raw, server_hostname="127.0.0.1") if handshake \
            else self.raw
        self.lock = threading.Lock()
        self.closing = False

    def send(self, data):
        with self.lock:
            self.sock.sendall(data)

    def wait_answer_or_close(self, timeout):
        """Returns once the server sends something or closes (or after `timeout`). Reads in
        short turns, so that a writer on another thread gets the connection in between."""
        deadline = time.time() + timeout
        while time.time() < deadline and not self.closing:
            with self.lock:
                writers_timeout = self.sock.gettimeout()  # send() keeps the connection's own
                self.sock.settimeout(0.2)
                try:
                    self.sock.recv(4096)  # data, or b"" on a close
                    return
                except socket.timeout:
                    pass
                except (ssl.SSLError, OSError):
                    return
                finally:
                    self.sock.settimeout(writers_timeout)
            time.sleep(0.01)  # the lock is not fair: let a waiting writer take it

    def close(self):
        self.closing = True  # a waiting reader lets go of the lock within its turn
        with self.lock:
            try:
                self.sock.close()
            except OSError:
                pass


def one_shot(port, ctx, payload, bound=5.0):
    """Sends `payload` on a fresh TLS connection: (status, body, seconds, closed)."""
    start = time.time()
    c = Conn(port, ctx)
    try:
        try:
            c.send(payload)
        except (ssl.SSLError, OSError):
            pass  # the server may answer and close before reading everything (413)
        status, body, closed = read_response(c.sock, start + bound)
        return status, body, time.time() - start, closed
    finally:
        c.close()


def valid_admission(port, ctx, bound):
    uid, rv = review()
    status, body, secs, _ = one_shot(port, ctx, request_bytes(json.dumps(rv).encode()), bound)
    ok = False
    if status == 200:
        try:
            resp = json.loads(body)["response"]
            ok = resp["uid"] == uid and resp["allowed"] is True
        except (ValueError, KeyError, TypeError):
            ok = False
    return ok, secs

"""Helpers the Python benchmarks under hack/bench/ share: test beds (start, install trainer's CRDs
and runtime, stop), a small REST client on a test bed's certificates, object counts, free loopback
ports, plain-HTTP probes and /metrics values, a process's CPU seconds and memory from /proc, the
trainer and upstream processes under test, and the JSON results every benchmark writes next to its
text output (hack/bench/plot.py draws docs/benchmarks/ from them).

Import it from a benchmark with
    sys.path.insert(0, os.path.join(ROOT, "hack", "bench")); import benchlib
"""

import base64
import contextlib
import datetime
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "testbed"))
import free_port as _free_port  # noqa: E402
TRAINJOBS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/%s/trainjobs"
JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/%s/jobsets"
CONFIGMAPS = "/api/v1/namespaces/%s/configmaps"
RUNTIME_FILE = os.path.join(ROOT, "examples/runtimes/torch-distributed.yaml")


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def log(*parts):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), " ".join(str(p) for p in parts)),
          flush=True)


class Bed:
    """kubectl (built by hack/testbed/build.sh) on a test bed's admin kubeconfig."""

    def __init__(self, testbed_dir, kubeconfig=None):
        self.dir = testbed_dir
        self.kubeconfig = kubeconfig or os.path.join(testbed_dir, "kubeconfig")
        self.pki = os.path.join(testbed_dir, "pki")
        self.bin_dir = sh(os.path.join(ROOT, "hack/testbed/build.sh"), "--print-bin-dir").strip()
        self.kubectl_bin = os.path.join(self.bin_dir, "kubectl")
        self._api = None

    def kubectl(self, *args, stdin=None, check=True):
        p = subprocess.run([self.kubectl_bin, "--kubeconfig", self.kubeconfig, *args],
                           input=stdin, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), p.stderr))
        return p.stdout

    def api(self):
        """A keep-alive REST client as the admin (one per Bed; not shared between threads)."""
        if self._api is None:
            self._api = Api(self.kubeconfig)
        return self._api

    def etcd_db_mb(self):
        """etcd's database file size and the part of it in use, in MB."""
        with open(os.path.join(self.dir, "env")) as f:
            url = re.search(r"TESTBED_ETCD_URL='([^']*)'", f.read()).group(1)
        with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
            text = r.read().decode()
        return (mb(metric(text, "etcd_mvcc_db_total_size_in_bytes")),
                mb(metric(text, "etcd_mvcc_db_total_size_in_use_in_bytes")))

    def pid(self, name):
        """The pid of a test-bed process (pids/<name>), e.g. "kube-apiserver"."""
        with open(os.path.join(self.dir, "pids", name)) as f:
            return int(f.read().split()[0])

    def cpu_seconds(self):
        """{name: CPU seconds} of every test-bed process still running (pids/<name>): take it
        before and after a phase to see which process paid for it."""
        out = {}
        for name in sorted(os.listdir(os.path.join(self.dir, "pids"))):
            try:
                out[name] = proc_cpu_rss(self.pid(name))[0]
            except (OSError, ValueError, IndexError):
                pass
        return out

    def apiserver_counts(self):
        """{"<VERB> <resource>": requests, "watch events <resource>": events} from the
        kube-apiserver's own counters: take it before and after a phase for what the phase
        asked of the apiserver (counts hold on a busy machine)."""
        text = self.kubectl("get", "--raw", "/metrics")
        out = {}
        for m in re.finditer(r"^(apiserver_request_total|apiserver_watch_events_total)"
                             r"\{([^}]*)\} ([0-9.e+-]+)$", text, re.M):
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            if m.group(1) == "apiserver_request_total":
                key = "%s %s" % (labels.get("verb", ""), labels.get("resource", ""))
            else:
                key = "watch events %s" % (labels.get("resource") or labels.get("kind", ""))
            out[key] = out.get(key, 0) + float(m.group(3))
        return out

    def user_kubeconfig(self, user, path):
        """A kubeconfig for USER (client certificate from the test bed's CA, group
        system:masters): requests carry that user name, so the apiserver's audit log tells the
        clients apart. Returns PATH."""
        key, crt = path + ".key", path + ".crt"
        pki = self.pki
        sh("openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
           "-nodes", "-keyout", key, "-subj", "/O=system:masters/CN=%s" % user, "-out",
           path + ".csr")
        ext = path + ".ext"
        with open(ext, "w") as f:
            f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                    "extendedKeyUsage=clientAuth\n")
        sh("openssl", "x509", "-req", "-in", path + ".csr", "-CA", os.path.join(pki, "ca.crt"),
           "-CAkey", os.path.join(pki, "ca.key"), "-CAcreateserial", "-days", "2", "-sha256",
           "-extfile", ext, "-out", crt)
        with open(self.kubeconfig) as f:
            kc = yaml.safe_load(f)
        for u in kc["users"]:
            u["user"] = {"client-certificate-data": b64file(crt), "client-key-data": b64file(key)}
        with open(path, "w") as f:
            yaml.safe_dump(kc, f)
        os.chmod(path, 0o600)
        return path


def b64file(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


class TestBed:
    """A fresh test bed in DIR (hack/testbed/up.sh, CRDs of JobSet and PodGroups), trainer's CRDs
    and the torch-distributed ClusterTrainingRuntime installed; `with TestBed(dir) as bed:` stops
    it (hack/testbed/down.sh) on the way out."""

    def __init__(self, testbed_dir, up_args=()):
        self.dir = testbed_dir
        self.env = dict(os.environ, TESTBED_DIR=testbed_dir)
        self.up_args = list(up_args)

    def __enter__(self):
        subprocess.run([os.path.join(ROOT, "hack/testbed/up.sh"), *self.up_args], env=self.env,
                       check=True, stdout=subprocess.DEVNULL)
        try:
            bed = Bed(self.dir)
            install_trainer(bed)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return bed

    def __exit__(self, *exc):
        subprocess.run([os.path.join(ROOT, "hack/testbed/down.sh")], env=self.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return False


def install_trainer(bed, runtimes=(RUNTIME_FILE,)):
    """trainer's CRDs (deploy/crds), Established, and the given runtime files."""
    crds = sorted(f for f in os.listdir(os.path.join(ROOT, "deploy/crds"))
                  if f.startswith("trainer.kubeflow.org_"))
    bed.kubectl("apply", "--server-side", "--force-conflicts",
                *sum((["-f", os.path.join(ROOT, "deploy/crds", f)] for f in crds), []))
    for crd in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
        wait_for(lambda: "True" in bed.kubectl(
            "get", "crd/%s.trainer.kubeflow.org" % crd, "-o",
            "jsonpath={.status.conditions[?(@.type=='Established')].status}", check=False),
            60, "CRD %s Established" % crd)
    for r in runtimes:
        bed.kubectl("apply", "--server-side", "-f", r)


@contextlib.contextmanager
def work_dir(prefix):
    """A temporary directory for a run's test bed and logs: removed when the run succeeds, kept
    (and named) when it fails, for its logs."""
    d = tempfile.mkdtemp(prefix=prefix)
    try:
        yield d
    except BaseException:
        log("logs kept in %s" % d)
        raise
    shutil.rmtree(d, ignore_errors=True)


def wait_for(cond, timeout, what, every=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(every)
    raise RuntimeError("timed out after %ss waiting for %s" % (timeout, what))


class Api:
    """A small Kubernetes REST client: one keep-alive HTTPS connection, the kubeconfig's client
    certificate (embedded, as test-bed kubeconfigs have them)."""

    def __init__(self, kubeconfig, timeout=60):
        with open(kubeconfig) as f:
            kc = yaml.safe_load(f)
        cluster = kc["clusters"][0]["cluster"]
        user = kc["users"][0]["user"]
        # ssl reads certificates from files only; they are gone once loaded.
        tmp = tempfile.mkdtemp(prefix="bench-api-")
        try:
            files = {}
            for key in ("certificate-authority-data", "client-certificate-data",
                        "client-key-data"):
                path = os.path.join(tmp, key)
                with open(path, "wb") as f:
                    f.write(base64.b64decode(cluster.get(key) or user.get(key)))
                files[key] = path
            self.ctx = ssl.create_default_context(cafile=files["certificate-authority-data"])
            self.ctx.load_cert_chain(files["client-certificate-data"], files["client-key-data"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        server = cluster["server"].split("://", 1)[1]
        self.host, self.port = server.rsplit(":", 1)
        self.timeout = timeout
        self.conn = None

    def connect(self):
        return http.client.HTTPSConnection(self.host, int(self.port), context=self.ctx,
                                           timeout=self.timeout)

    def call(self, method, path, body=None, content_type="application/json"):
        """(status, decoded JSON body or None). Reconnects once on a dropped connection."""
        data = json.dumps(body).encode() if body is not None else None
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = self.connect()
            try:
                self.conn.request(method, path, body=data,
                                  headers={"Content-Type": content_type} if data else {})
                r = self.conn.getresponse()
                raw = r.read()
                return r.status, (json.loads(raw) if raw else None)
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        return 0, None

    def count(self, path):
        """How many objects the collection PATH holds: one list with limit=1 (the apiserver
        answers remainingItemCount), cheap at any size."""
        status, body = self.call("GET", path + "?limit=1")
        if status != 200:
            raise RuntimeError("GET %s: %s %s" % (path, status, body))
        meta = body.get("metadata") or {}
        return len(body.get("items") or []) + int(meta.get("remainingItemCount") or 0)

    def create_namespace(self, name, labels=None):
        meta = {"name": name, **({"labels": labels} if labels else {})}
        status, body = self.call("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": meta})
        if status != 201:
            raise RuntimeError("creating namespace %s: %s %s" % (name, status, body))


class Watches:
    """Watches each collection of PATHS from its current resourceVersion and reads every event,
    discarding it, until the context exits: the apiserver's side of serving an informer, with
    no client work beyond reading bytes. events() counts the events read, bytes() their size."""

    def __init__(self, bed, paths):
        self.api, self.paths = Api(bed.kubeconfig, timeout=None), paths
        self.conns, self.threads, self._events, self._bytes = [], [], 0, 0

    def __enter__(self):
        for path in self.paths:
            status, body = self.api.call("GET", path + "?limit=1")
            if status != 200:
                raise RuntimeError("GET %s: %s %s" % (path, status, body))
            conn = self.api.connect()
            conn.request("GET", "%s?watch=true&resourceVersion=%s" % (
                path, body["metadata"]["resourceVersion"]))
            resp = conn.getresponse()
            if resp.status != 200:
                raise RuntimeError("watch %s: %s" % (path, resp.status))
            self.conns.append(conn)
            self.threads.append(threading.Thread(target=self._read, args=(resp,), daemon=True))
            self.threads[-1].start()
        return self

    def _read(self, resp):
        try:
            while True:
                chunk = resp.read1(1 << 16)
                if not chunk:
                    return
                self._events += chunk.count(b"\n")  # one event per line
                self._bytes += len(chunk)
        except (OSError, ValueError, http.client.HTTPException):
            return  # closed by __exit__

    def events(self):
        return self._events

    def bytes(self):
        return self._bytes

    def __exit__(self, *exc):
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
            conn.close()
        for t in self.threads:
            t.join(5)


@contextlib.contextmanager
def apiserver_profile(bed, path, seconds):
    """A CPU profile of the test bed's kube-apiserver (started with TESTBED_PROFILING=1) over
    the first SECONDS of the block, written to PATH (`go tool pprof -top PATH` reads it). The
    exit waits for the profile to end. No-op when SECONDS is 0."""
    if not seconds:
        yield
        return
    with open(path, "wb") as out:
        proc = subprocess.Popen(
            [bed.kubectl_bin, "--kubeconfig", bed.kubeconfig, "get", "--raw",
             "/debug/pprof/profile?seconds=%d" % seconds], stdout=out, stderr=subprocess.PIPE)
        try:
            yield
        finally:
            _, err = proc.communicate(timeout=seconds + 60)
    if proc.returncode != 0:  # only when the block itself went well: its error comes first
        raise RuntimeError("apiserver profile: %s (is TESTBED_PROFILING=1 set?)" %
                           err.decode(errors="replace").strip())


def free_port():
    """A port on 127.0.0.1 nobody listens on, never the same twice in one process."""
    return _free_port.free_port()


def http_get(port, path):
    """The body of http://127.0.0.1:PORT/PATH, or None when it cannot be fetched."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=2) as r:
            return r.read().decode()
    except Exception:  # noqa: BLE001
        return None



def metric(text, name):
    """The value of the unlabelled (or exactly labelled) series NAME in a /metrics text, or 0."""
    m = re.search(r"^%s(?:\{\})? ([0-9.e+]+)$" % re.escape(name), text or "", re.M)
    return float(m.group(1)) if m else 0.0


def metric_sum(text, family, **labels):
    """The sum of every series of FAMILY whose labels include LABELS (exact values)."""
    total = 0.0
    for m in re.finditer(r"^%s(\{[^}]*\})? ([0-9.e+-]+)$" % re.escape(family), text or "", re.M):
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m.group(2))
    return total


def proc_cpu_rss(pid):
    """(CPU seconds utime+stime, peak RSS VmHWM bytes, RSS VmRSS bytes) of a live process."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    hwm = rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return cpu, hwm, rss


def mb(b):
    return round(b / 2**20, 1)


class Service:
    """A process under test: its start time, log, /proc figures and a SIGTERM stop."""

    def __init__(self, cmd, log_path, env=None, health_port=0, metrics_port=0):
        self.health, self.metrics = health_port, metrics_port
        self.log = open(log_path, "a")
        self.start = time.time()
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    @property
    def pid(self):
        return self.proc.pid

    def wait_ready(self, timeout=600, path="/readyz"):
        """Seconds from start until the health port answers PATH with 200."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if http_get(self.health, path) is not None:
                return time.time() - self.start
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited %d (log: %s)" % (
                    os.path.basename(self.proc.args[0]), self.proc.returncode, self.log.name))
            time.sleep(0.02)
        raise RuntimeError("%s not ready after %d s" % (self.proc.args[0], timeout))

    def scrape(self):
        return http_get(self.metrics, "/metrics")

    def usage(self):
        """{cpu_seconds, peak_rss_mb, rss_mb} now."""
        cpu, hwm, rss = proc_cpu_rss(self.pid)
        return {"cpu_seconds": round(cpu, 2), "peak_rss_mb": mb(hwm), "rss_mb": mb(rss)}

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def our_controller(binary, kubeconfig, workers, log_path):
    health, metrics = free_port(), free_port()
    return Service([binary, "--kubeconfig", kubeconfig, "--trainjob-workers", str(workers),
                    "--health-probe-bind-address", "127.0.0.1:%d" % health,
                    "--metrics-bind-address", "127.0.0.1:%d" % metrics, "-v=1",
                    "--log-format=text"],  # restart.py reads its lines
                   log_path, health_port=health, metrics_port=metrics)


def upstream_binary(explicit=""):
    """Upstream's manager: EXPLICIT, or what hack/bench/webhook/upstream.sh builds and caches."""
    if explicit:
        return explicit
    return sh(os.path.join(ROOT, "hack/bench/webhook/upstream.sh")).strip()


def upstream_manager(binary, kubeconfig, work, cert_dir, log_path, qps=None, burst=None):
    """Upstream Kubeflow Trainer v2.3.0's manager (controllers and webhooks) with its shipped
    Configuration (manifests/base/manager/controller_manager_config.yaml: 5 TrainJob workers,
    client QPS 50 / burst 100) except what a local run must change: leader election and cert
    management off, loopback ports, plain-HTTP metrics, and the serving certificate from CERT_DIR
    (tls.crt, tls.key) in controller-runtime's default cert dir. QPS/BURST override the client
    rate limit. Returns the Service; .webhook_port is its webhook server's port."""
    health, metrics, webhook = free_port(), free_port(), free_port()
    tmp = os.path.join(work, "upstream-tmp-%d" % webhook)
    certs = os.path.join(tmp, "k8s-webhook-server", "serving-certs")
    os.makedirs(certs)
    for f in ("tls.crt", "tls.key"):
        with open(os.path.join(cert_dir, f), "rb") as src, open(os.path.join(certs, f), "wb") as d:
            d.write(src.read())
    config = {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1", "kind": "Configuration",
        "health": {"healthProbeBindAddress": "127.0.0.1:%d" % health,
                   "readinessEndpointName": "readyz", "livenessEndpointName": "healthz"},
        "metrics": {"bindAddress": "127.0.0.1:%d" % metrics, "secureServing": False},
        "webhook": {"port": webhook, "host": "127.0.0.1"},
        "leaderElection": {"leaderElect": False},
        "controller": {"groupKindConcurrency": {
            "TrainJob.trainer.kubeflow.org": 5, "TrainingRuntime.trainer.kubeflow.org": 1,
            "ClusterTrainingRuntime.trainer.kubeflow.org": 1}},
        "certManagement": {"enable": False},
        "clientConnection": {"qps": qps if qps is not None else 50,
                             "burst": burst if burst is not None else 100},
    }
    path = os.path.join(tmp, "config.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(config, f)
    env = dict(os.environ, TMPDIR=tmp, KUBECONFIG=kubeconfig)
    s = Service([binary, "--config=%s" % path], log_path, env=env, health_port=health,
                metrics_port=metrics)
    s.webhook_port = webhook
    return s


# --- results ---------------------------------------------------------------------------------


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) // 1024
    return {"cpus": os.cpu_count(), "cpu_model": model, "memory_mb": mem,
            "kernel": platform.release()}


def commit():
    """The checkout's commit (short), with "-dirty" when tracked files differ from it."""
    try:
        rev = sh("git", "-C", ROOT, "rev-parse", "--short", "HEAD").strip()
        dirty = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD", "--"],
                               capture_output=True).returncode != 0
        return rev + ("-dirty" if dirty else "")
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def envelope(benchmark, args):
    """The common head of a results document; add "results" and call write_results."""
    return {"benchmark": benchmark,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": commit(), "machine": machine(),
            "load_average_start": [round(x, 2) for x in os.getloadavg()],
            "args": {k: v for k, v in vars(args).items()} if args is not None else {}}


def default_out(benchmark):
    """Where a benchmark writes by default: .local/bench/<benchmark>-<UTC time>.{json,txt}."""
    d = os.path.join(ROOT, ".local", "bench")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "%s-%s" % (benchmark, time.strftime("%Y%m%d-%H%M%S", time.gmtime())))


def _scalar(value):
    return not isinstance(value, (dict, list))


def _flat(value):
    """Whether VALUE is a scalar, or a list of scalars or of lists of scalars."""
    if isinstance(value, list):
        return all(_scalar(v) or (isinstance(v, list) and all(map(_scalar, v))) for v in value)
    return _scalar(value)


def dumps_results(doc, depth=0):
    """DOC as json.dumps(indent=1) writes it, except that a list of scalars, or of lists of
    scalars, takes one line: a run's samples (thousands of [config, ms] pairs) would otherwise
    take a line per number."""
    if _flat(doc):
        return json.dumps(doc)
    pad, inner = " " * depth, " " * (depth + 1)
    if isinstance(doc, dict):
        items = ["%s%s: %s" % (inner, json.dumps(k), dumps_results(v, depth + 1))
                 for k, v in doc.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}" if items else "{}"
    items = [inner + dumps_results(v, depth + 1) for v in doc]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def write_results(doc, out_base, text):
    """Writes OUT_BASE.json (DOC, with the end load average) and OUT_BASE.txt (TEXT)."""
    doc["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    os.makedirs(os.path.dirname(os.path.abspath(out_base)), exist_ok=True)
    with open(out_base + ".json", "w") as f:
        f.write(dumps_results(doc))
        f.write("\n")
    with open(out_base + ".txt", "w") as f:
        f.write(text)
    print("results: %s.json, %s.txt" % (out_base, out_base), flush=True)


# --- TrainJobs and controllers under test ----------------------------------------------------


def bench_spec():
    """The spec of every benchmark TrainJob: upstream's torch-distributed runtime, 2 nodes."""
    return {"runtimeRef": {"name": "torch-distributed"},
            "trainer": {"numNodes": 2, "command": ["python3", "-c", "print(1)"]}}


def bench_apply(bin_dir, bed, files, ns, n, concurrency, *flags, prefix="tj"):
    """trainer-bench-apply (hack/bench/controller/bench_apply.cc): N sets of FILES into NS (a
    namespace, or a list of them to interleave the sets across), named PREFIX-<i>; returns its
    JSON line (seconds, failures, latency_ms; by_namespace and sets when interleaved)."""
    namespaces = [ns] if isinstance(ns, str) else ns
    out = sh(os.path.join(bin_dir, "trainer-bench-apply"), "--kubeconfig", bed.kubeconfig,
             *sum((["--file", f] for f in files), []),
             *sum((["--namespace", name] for name in namespaces), []), "--prefix", prefix,
             "--count", str(n), "--concurrency", str(concurrency), *flags)
    return json.loads(out)


def create_trainjobs(bin_dir, bed, ns, n, work):
    """Creates N TrainJobs tj-0 ... tj-<N-1> in NS (16 at a time); returns the seconds taken."""
    path = os.path.join(work, "tj-template.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                   "metadata": {}, "spec": bench_spec()}, f)
    t = time.time()
    bench_apply(bin_dir, bed, [path], ns, n, 16, "--create")
    return time.time() - t


def serving_cert_dir(bed, work):
    """The test bed's webhook serving certificate as WORK/serving-certs/tls.{crt,key}."""
    d = os.path.join(work, "serving-certs")
    os.makedirs(d, exist_ok=True)
    for src, dst in (("webhook.crt", "tls.crt"), ("webhook.key", "tls.key")):
        with open(os.path.join(bed.pki, src), "rb") as f, open(os.path.join(d, dst), "wb") as o:
            o.write(f.read())
    return d


class Controllers:
    """Starts the controller under test, IMPL "ours" (trainer-controller, --trainjob-workers
    WORKERS) or "upstream" (upstream's manager, upstream_manager), on a test bed."""

    def __init__(self, impl, bin_dir, workers=5, upstream_bin="", upstream_qps=None,
                 upstream_burst=None):
        self.impl, self.bin_dir, self.workers = impl, bin_dir, workers
        self.upstream_bin, self.qps, self.burst = upstream_bin, upstream_qps, upstream_burst

    def describe(self):
        if self.impl == "ours":
            return {"impl": "ours", "workers": self.workers}
        return {"impl": "upstream", "workers": 5,
                "client_qps": self.qps if self.qps is not None else 50,
                "client_burst": self.burst if self.burst is not None else 100}

    def start(self, bed, work, log_path, kubeconfig=None):
        kubeconfig = kubeconfig or bed.kubeconfig
        if self.impl == "ours":
            return our_controller(os.path.join(self.bin_dir, "trainer-controller"), kubeconfig,
                                  self.workers, log_path)
        return upstream_manager(self.upstream_bin, kubeconfig, work, serving_cert_dir(bed, work),
                                log_path, qps=self.qps, burst=self.burst)


def reconciles(ctrl):
    """(TrainJob reconciles so far, any result; its work queue's depth), from /metrics. Both
    controllers export controller-runtime's names."""
    text = ctrl.scrape()
    return (metric_sum(text, "controller_runtime_reconcile_total",
                       controller="trainjob_controller"),
            metric_sum(text, "workqueue_depth", name="trainjob_controller"))


def wait_settled(ctrl, at_least, timeout, quiet=3.0):
    """Waits until AT_LEAST TrainJob reconciles happened, the queue is empty and no reconcile
    happened for QUIET seconds; returns the seconds from the process's start to its last
    reconcile."""
    deadline = time.time() + timeout
    last, since = -1.0, time.time()
    while time.time() < deadline:
        total, depth = reconciles(ctrl)
        if total != last:
            last, since = total, time.time()
        elif total >= at_least and depth == 0 and time.time() - since >= quiet:
            return since - ctrl.start
        time.sleep(0.2)
    raise RuntimeError("controller did not settle within %d s (%d reconciles)" % (timeout, last))


def wait_count(api, path, n, ctrl, timeout, at_most=False):
    """Seconds from the controller CTRL's start (or from the call, without one) until the
    collection PATH holds N objects (at least; with AT_MOST, at most). Polls a count (one list
    with limit=1), rarely while far from N and every 50 ms near it."""
    deadline = time.time() + timeout
    first, t0 = None, time.time()
    while time.time() < deadline:
        have = api.count(path)
        if (have <= n) if at_most else (have >= n):
            return time.time() - (ctrl.start if ctrl is not None else t0)
        if ctrl is not None and ctrl.proc.poll() is not None:
            raise RuntimeError("controller exited %d (log: %s)" % (ctrl.proc.returncode,
                                                                   ctrl.log.name))
        first = have if first is None else first
        done, left = abs(have - first), abs(n - have)
        rate = done / max(time.time() - t0, 1e-3)
        eta = left / rate if rate > 0 else 1.0
        time.sleep(min(1.0, max(0.05, eta / 2)))
    raise RuntimeError("%s holds %d objects, not %d, after %d s" % (path, have, n, timeout))

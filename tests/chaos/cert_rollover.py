#!/usr/bin/env python3
"""Chaos: certificates that roll with zero failed admissions.

Two trainer-webhook replicas run with --cert-management (the built-in certificate lifecycle,
certs/): they issue the CA and serving certificate into Secret kubeflow-trainer-webhook-cert
themselves, keep caBundle of both webhook configurations, and serve the Secret's pair
in-process. The configurations (the shipped ones, scoped to this test, with no caBundle) call
Service trainer-webhook; as in chaos_replicas, the apiserver runs with
--enable-aggregator-routing and picks a ready endpoint of the Service's EndpointSlices (one per
replica: this machine's address and the replica's port) for each new connection.

While `kubectl create` makes TrainJobs in a loop and keep-alive clients send dry-run creates,
the test walks four phases:
  steady            both replicas serving
  serving-renewal   `kubectl annotate secret ... cert.trainer.kubeflow.org/rotate=serving`: a new
                    serving certificate of the same CA, served by both replicas
  ca-rotation       `... rotate=ca`: the CA is replaced with an overlap (TrustNext, SignNext,
                    Stable); ends when the old CA has left every caBundle and both replicas serve
                    certificates of the new one
  rolling-restart   each replica in turn: a new one starts (its own pod name and port), is listed
                    once ready; the old one is marked not ready, stops 2 s later (the preStop
                    drain), and its endpoint goes
Every admission is counted by the phase in which it completed; the test prints the counts and
fails unless every phase has admissions and none failed. The replicas run with short rotation
timings (--cert-propagation-delay=3s, --cert-report-interval=3s: a replica silent for 9 s counts
as gone; with 1 s a replica starved for 5 s on this busy machine did, and 4 admissions failed).
(A replica killed while its endpoint is still listed fails the calls that land on it, since the
apiserver does not retry: that is chaos_replicas' dead-listed phase, not repeated here.)
"""

import base64
import hashlib
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos_lib as cl  # noqa: E402

tb = cl.tb
LOADERS = int(os.environ.get("LOADERS", "2"))
SETTLE = float(os.environ.get("SETTLE", "4"))
RUN_ID = str(os.getpid())
NS = f"chaos-roll-{RUN_ID}"
LABEL = "trainer-cpp.chaos/run"
RUNTIME = f"chaos-roll-{RUN_ID}"
SVC = "trainer-webhook"
SECRET = "kubeflow-trainer-webhook-cert"
PHASES = ("steady", "serving-renewal", "ca-rotation", "rolling-restart")




def replica_log(work, name):
    return os.path.join(work, f"{name}.log")


class Replica:
    """trainer-webhook --cert-management as pod `name` (POD_NAME), listed in the Service once
    ready."""

    def __init__(self, k, work, name, configs):
        self.k, self.name = k, name
        self.port, self.metrics_port, self.probe_port = (tb.free_port(), tb.free_port(),
                                                         tb.free_port())
        self.log_path = replica_log(work, name)
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [os.path.join(tb.bin_dir(), "trainer-webhook"), f"--port={self.port}",
             f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
             f"--health-probe-bind-address=127.0.0.1:{self.probe_port}",
             f"--kubeconfig={k.kubeconfig}", "--cert-management",
             f"--webhook-secret-namespace={NS}", f"--webhook-service-name={SVC}",
             f"--mutating-webhook-configuration={configs['MutatingWebhookConfiguration']}",
             f"--validating-webhook-configuration={configs['ValidatingWebhookConfiguration']}",
             "--cert-propagation-delay=3s", "--cert-report-interval=3s"],
            env={**os.environ, "POD_NAME": name},
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        try:
            tb.wait_for(f"{name} ready", lambda: tb.http_get(
                f"http://127.0.0.1:{self.probe_port}/readyz")[0] == 200, 60, 0.2)
        except AssertionError:
            self.kill()  # not listed in run's replicas, so stopped here
            raise
        self.list(True)

    def list(self, ready):
        self.k.run("apply", "-f", "-", stdin=json.dumps(
            cl.endpoint_slice(NS, SVC, f"{SVC}-{self.name}", self.port, ready)))

    def served_pem(self):
        """The certificate this replica serves to a new connection (not verified)."""
        return ssl.get_server_certificate(("127.0.0.1", self.port), timeout=5)

    def requests(self):
        _, text = tb.http_get(f"http://127.0.0.1:{self.metrics_port}/metrics")
        return int(sum(float(line.split()[-1]) for line in text.splitlines()
                       if line.startswith("controller_runtime_webhook_requests_total{")))

    def metric(self, name):
        _, text = tb.http_get(f"http://127.0.0.1:{self.metrics_port}/metrics")
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return None

    def drain_and_stop(self):
        """A rolling update done right: the endpoint leaves, the apiserver sees it, SIGTERM."""
        self.list(False)
        time.sleep(2)
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(30)
        self.k.run("delete", "endpointslice", f"{SVC}-{self.name}", "-n", NS,
                   "--ignore-not-found", check=False)
        self.log.close()
        return code

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self.log.closed:
            self.log.close()


def secret(k):
    return json.loads(k.run("get", "secret", SECRET, "-n", NS, "-o", "json").stdout)


def secret_pem(s, key):
    return base64.b64decode(s.get("data", {}).get(key, "")).decode()


def fingerprint(pem):
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest()


def ca_bundles(k, configs):
    """The caBundle of every webhook of both configurations, decoded."""
    out = []
    for kind, name in configs.items():
        obj = json.loads(k.run("get", kind.lower(), name, "-o", "json").stdout)
        out += [base64.b64decode(w["clientConfig"].get("caBundle", "")).decode()
                for w in obj["webhooks"]]
    return out


def issuer_verifies(ca_pem, cert_pem, work):
    """openssl verify: is cert_pem signed by ca_pem?"""
    ca, crt = os.path.join(work, "v-ca.pem"), os.path.join(work, "v-crt.pem")
    open(ca, "w").write(ca_pem)
    open(crt, "w").write(cert_pem)
    return subprocess.run(["openssl", "verify", "-CAfile", ca, crt],
                          capture_output=True).returncode == 0


class SecretLog:
    """Every version of the Secret in `ns`, polled every 20 ms on a keep-alive connection: the
    phase timeline and, on failure, what the replicas wrote."""

    def __init__(self, ns=NS):
        self.ns = ns
        self.versions = []  # (time, resourceVersion, phase, annotations)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        client = cl.ApiClient()
        while not self.stop.is_set():
            status, s = client.request("GET", f"/api/v1/namespaces/{self.ns}/secrets/{SECRET}")
            if status == 200:
                rv = s["metadata"]["resourceVersion"]
                if not self.versions or self.versions[-1][1] != rv:
                    self.versions.append((time.time(), rv, phase_of(s),
                                          s["metadata"].get("annotations", {})))
            time.sleep(0.02)
        client.close()

    def phases(self, since):
        out = []
        for t, _, phase, _ in self.versions:
            if t >= since and (not out or out[-1][0] != phase):
                out.append((phase, t - since))
        return out

    def finish(self):
        self.stop.set()
        self.thread.join(10)


def phase_of(s):
    if secret_pem(s, "ca-next.crt"):
        return "TrustNext"
    return "SignNext" if secret_pem(s, "ca-bundle.crt").count("BEGIN CERTIFICATE") > 1 else "Stable"


class Load:
    """kubectl creates in a loop plus keep-alive dry-run creates of TrainJobs of `runtime` in
    `ns` (`spec`: more TrainJob spec fields); results by phase."""

    def __init__(self, k, ns=NS, runtime=RUNTIME, **spec):
        self.k, self.ns, self.runtime, self.spec = k, ns, runtime, spec
        self.phase = PHASES[0]
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.results = {}  # phase -> [ok, failed, {message: count}]
        self.created = 0
        self.threads = [threading.Thread(target=self.kubectl_loop, daemon=True)]
        self.threads += [threading.Thread(target=self.dry_run_loop, daemon=True)
                         for _ in range(LOADERS)]
        for t in self.threads:
            t.start()

    def record(self, ok, message=""):
        with self.lock:
            res = self.results.setdefault(self.phase, [0, 0, {}])
            if ok:
                res[0] += 1
            else:
                res[1] += 1
                msg = message.split("failed to call webhook:")[-1].strip()[-160:]
                res[2][msg] = res[2].get(msg, 0) + 1

    def kubectl_loop(self):
        i = 0
        while not self.stop.is_set():
            p = self.k.create(cl.trainjob(f"roll-{i:05d}", self.ns, self.runtime, **self.spec))
            i += 1
            if p.returncode == 0:
                with self.lock:
                    self.created += 1
            self.record(p.returncode == 0, p.stderr)

    def dry_run_loop(self):
        client = cl.ApiClient()
        i = 0
        while not self.stop.is_set():
            status, body = client.request(
                "POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{self.ns}/trainjobs"
                "?dryRun=All", cl.trainjob(f"dry-{threading.get_ident()}-{i}", self.ns,
                                           self.runtime, **self.spec))
            i += 1
            self.record(status == 201,
                        body.get("message", str(body)) if isinstance(body, dict) else str(body))
        client.close()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(120)


def check_load(r, k, load):
    """The rule of this test: every phase has admissions and none failed; every TrainJob kubectl
    created is stored. Prints the counts per phase."""
    for ph in PHASES:
        ok, failed, msgs = load.results.get(ph, [0, 0, {}])
        r.figure(f"phase {ph}: {ok} admitted, {failed} failed "
                 f"{sorted(msgs.items(), key=lambda kv: -kv[1])[:2]}")
        r.check(ok > 0 and failed == 0, f"{ph}: {ok} admissions, {failed} failed")
    total_ok = sum(v[0] for v in load.results.values())
    total_failed = sum(v[1] for v in load.results.values())
    r.figure(f"all phases: {total_ok} admitted, {total_failed} failed "
             f"({load.created} TrainJobs created by kubectl)")
    stored = len([t for t in k.items("trainjobs", load.ns)
                  if t["metadata"]["name"].startswith("roll-")])
    r.check(stored == load.created, f"{stored} TrainJobs stored = {load.created} created")


def run(r, k, work):
    # The shipped configurations, scoped to this test, calling the Service, with no caBundle:
    # the replicas write it.
    scoped = tb.scoped_webhook_configurations(1, os.path.join(k.testbed, "pki", "ca.crt"),
                                              f"chaos-roll-{RUN_ID}-", LABEL, RUN_ID)
    base = "https://127.0.0.1:1"
    names = {}
    for item in scoped["items"]:
        names[item["kind"]] = item["metadata"]["name"]
        for wh in item["webhooks"]:
            path = wh["clientConfig"]["url"][len(base):]
            wh["clientConfig"] = {"service": {"name": SVC, "namespace": NS, "port": 443,
                                              "path": path}}
    k.run("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": SVC, "namespace": NS},
         "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]}},
        {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
         "metadata": {"name": SECRET, "namespace": NS}}]}))
    k.run("apply", "-f", "-", stdin=json.dumps(scoped))
    replicas = []
    # Every replica's log, listed before it starts: one that never becomes ready is the one whose
    # log a failure needs.
    logs = [replica_log(work, f"replica-{c}") for c in "abcd"]
    load = None
    secrets = None
    try:
        # Two replicas starting together on the empty Secret (as a Deployment starts its pods).
        starters = [threading.Thread(target=lambda n=n: replicas.append(
            Replica(k, work, n, names))) for n in ("replica-a", "replica-b")]
        for t in starters:
            t.start()
        for t in starters:
            t.join()
        r.check(len(replicas) == 2, "two replicas started together and became ready")
        s = secret(k)
        first_ca = secret_pem(s, "ca.crt")
        r.check(all(b == first_ca for b in ca_bundles(k, names)),
                "every webhook's caBundle is the CA in the Secret")
        r.check(all(fingerprint(x.served_pem()) == fingerprint(secret_pem(s, "tls.crt"))
                    for x in replicas), "both replicas serve the Secret's certificate")
        passes = 'controller_runtime_reconcile_total{controller="cert-rotator",result="success"}'
        r.check(all((x.metric(passes) or 0) >= 1 for x in replicas),
                "each replica counts its rotator's passes as reconciles of cert-rotator")
        queued = 'workqueue_adds_total{controller="cert-rotator",name="cert-rotator"}'
        r.check(all((x.metric(queued) or 0) >= 1 for x in replicas),
                "each replica exports its rotator's workqueue as upstream's cert-rotator")
        tb.wait_for("the apiserver to call the webhooks through the Service", lambda:
                    "denied the request" in k.create(cl.probe_trainjob(NS),
                                                     "--dry-run=server").stderr, 60, 0.5)

        secrets = SecretLog()
        load = Load(k)
        time.sleep(SETTLE)

        # Serving renewal.
        load.phase = "serving-renewal"
        old_tls = secret_pem(secret(k), "tls.crt")
        k.run("annotate", "secret", SECRET, "-n", NS, "cert.trainer.kubeflow.org/rotate=serving")
        started = time.time()

        def renewed():
            tls = secret_pem(secret(k), "tls.crt")
            return tls != old_tls and all(
                fingerprint(x.served_pem()) == fingerprint(tls) for x in replicas)
        tb.wait_for("both replicas to serve the renewed certificate", renewed, 60, 0.2)
        r.figure(f"serving renewal: both replicas serve the new certificate after "
                 f"{time.time() - started:.1f}s")
        r.check(all(b == first_ca for b in ca_bundles(k, names)),
                "the serving renewal left caBundle unchanged")
        time.sleep(SETTLE)

        # CA rotation.
        load.phase = "ca-rotation"
        k.run("annotate", "secret", SECRET, "-n", NS, "cert.trainer.kubeflow.org/rotate=ca")
        started = time.time()

        def rotated():
            s = secret(k)
            ca = secret_pem(s, "ca.crt")
            return (phase_of(s) == "Stable" and ca != first_ca and
                    all(b == ca for b in ca_bundles(k, names)) and
                    all(issuer_verifies(ca, x.served_pem(), work) for x in replicas))
        tb.wait_for("the CA rotation to finish", rotated, 120, 0.2)
        seen = secrets.phases(started)
        r.figure("CA rotation: " + ", ".join(f"{p} at {t:.1f}s" for p, t in seen))
        # (The first version after `started` may be the annotation itself, still Stable.)
        r.check([p for p, _ in seen][-3:] == ["TrustNext", "SignNext", "Stable"],
                "the CA rotation went through TrustNext, SignNext, Stable")
        new_ca_expiry = replicas[0].metric("trainer_webhook_ca_expiry_timestamp_seconds")
        r.check(new_ca_expiry is not None and new_ca_expiry > time.time() + 9 * 365 * 86400,
                f"trainer_webhook_ca_expiry_timestamp_seconds is the new CA's (in "
                f"{((new_ca_expiry or 0) - time.time()) / 86400 / 365:.1f} years)")
        time.sleep(SETTLE)

        # Rolling restart.
        load.phase = "rolling-restart"
        per_replica = [x.requests() for x in replicas]
        for i, old in enumerate(list(replicas)):
            new = Replica(k, work, f"replica-{'cd'[i]}", names)
            replicas.append(new)
            time.sleep(1)  # the apiserver's EndpointSlice informer
            code = old.drain_and_stop()
            replicas.remove(old)
            r.check(code == 0, f"{old.name} stopped gracefully (exit {code})")
        time.sleep(SETTLE)
        load.finish()

        r.check(min(per_replica) > 0,
                f"the apiserver spread webhook calls over both replicas: {per_replica}")
        check_load(r, k, load)
        s = secret(k)
        r.check(not s["metadata"].get("annotations", {}).get("cert.trainer.kubeflow.org/replicas"),
                "no replica reports left in the Secret once Stable")
        r.check(all(x.proc.poll() is None for x in replicas), "the new replicas are running")
    except Exception as e:  # noqa: BLE001 - a failed check, so the logs are printed
        traceback.print_exc()
        r.check(False, f"{type(e).__name__}: {e}")
    finally:
        if load is not None:
            load.finish()
        if secrets is not None:
            secrets.finish()
            if r.failures:
                with open(os.path.join(work, "secret-versions.log"), "w") as f:
                    for t, rv, phase, ann in secrets.versions:
                        f.write(f"{t:.3f} rv={rv} {phase} {json.dumps(ann)}\n")
                logs.append(os.path.join(work, "secret-versions.log"))
        for x in replicas:
            x.kill()
        for kind, name in names.items():
            k.run("delete", kind.lower(), name, "--ignore-not-found", check=False)
    return logs


def main():
    r = cl.Result("chaos_cert_rollover")
    k = tb.Kubectl()
    tb.install_trainer_crds(k)
    work = tempfile.mkdtemp(prefix="chaos-roll-")
    with cl.run_namespace(k, NS, RUNTIME, LABEL, RUN_ID), cl.aggregator_routing():
        logs = run(r, k, work)
    return r.finish(logs)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Certificates that roll with zero failed admissions, on the real node: tests/chaos/
cert_rollover.py's four phases against trainer-cpp as installed (e2e_installed: Deployment
trainer-webhook, two replicas with --cert-management and the shipped rotation timings, behind
Service trainer-webhook and kube-proxy).

While `kubectl create` makes suspended TrainJobs in a loop and keep-alive clients send dry-run
creates (each through the apiserver, which calls the webhook through the Service):
  steady            both replicas serving
  serving-renewal   `kubectl annotate secret ... cert.trainer.kubeflow.org/rotate=serving`: a new
                    serving certificate of the same CA, served by both pods
  ca-rotation       `... rotate=ca`: TrustNext, SignNext, Stable (about two minutes with the
                    shipped 60 s propagation and 20 s reports); ends when the old CA has left
                    both caBundles and both pods serve certificates of the new one
  rolling-restart   `kubectl rollout restart deployment/trainer-webhook`, waited for with
                    `kubectl rollout status`, until the old pods are gone
Every admission is counted by the phase in which it completed (cert_rollover.py's Load); the
test prints the counts and, as cert_rollover.py, fails unless every phase has admissions and
none failed. The pods' certificates are read on their pod IPs (the host routes the pod bridge).
"""
import json
import os
import ssl
import sys
import tempfile
import time
import urllib.request

import e2e

sys.path.insert(0, os.path.join(e2e.ROOT, "tests", "chaos"))
import cert_rollover as cr  # noqa: E402  (the phases' rules, the load and the Secret's timeline)
import chaos_lib as cl  # noqa: E402

NS = "e2e-cert-rollover"
SYSTEM = "kubeflow-system"
RUNTIME = "torch-distributed"
SETTLE = 5
CONFIGS = {"MutatingWebhookConfiguration": "defaulter.trainer.kubeflow.org",
           "ValidatingWebhookConfiguration": "validator.trainer.kubeflow.org"}
REPORTS = "cert.trainer.kubeflow.org/replicas"


def webhook_pods(k):
    """{name: pod IP} of the webhook's Running pods that are not being deleted."""
    pods = json.loads(k.out("get", "pods", "-n", SYSTEM, "-l",
                            "app.kubernetes.io/component=webhook", "-o", "json"))["items"]
    return {p["metadata"]["name"]: p["status"].get("podIP") for p in pods
            if p["status"].get("phase") == "Running" and "deletionTimestamp" not in p["metadata"]}


def all_webhook_pods(k):
    return k.out("get", "pods", "-n", SYSTEM, "-l", "app.kubernetes.io/component=webhook", "-o",
                 "jsonpath={.items[*].metadata.name}").split()


def secret(k):
    return json.loads(k.out("get", "secret", cr.SECRET, "-n", SYSTEM, "-o", "json"))


def served_pem(ip):
    """The certificate a pod serves to a new connection (not verified)."""
    return ssl.get_server_certificate((ip, 9443), timeout=5)


def metrics(ip):
    with urllib.request.urlopen(f"http://{ip}:8080/metrics", timeout=5) as r:
        return r.read().decode()


def requests_total(ip):
    return int(sum(float(line.split()[-1]) for line in metrics(ip).splitlines()
                   if line.startswith("controller_runtime_webhook_requests_total{")))


def metric(ip, name):
    for line in metrics(ip).splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


def run(r, k, work):
    pods = webhook_pods(k)
    r.check(len(pods) == 2, f"two webhook replicas run: {sorted(pods)}")
    s = secret(k)
    first_ca = cr.secret_pem(s, "ca.crt")
    r.check(all(b == first_ca for b in cr.ca_bundles(k, CONFIGS)),
            "every webhook's caBundle is the CA in the Secret")
    r.check(all(cr.fingerprint(served_pem(ip)) == cr.fingerprint(cr.secret_pem(s, "tls.crt"))
                for ip in pods.values()), "both pods serve the Secret's certificate")
    requests_before = {name: requests_total(ip) for name, ip in pods.items()}

    secrets = cr.SecretLog(SYSTEM)
    load = cr.Load(k, NS, RUNTIME, suspend=True)
    new_pods = {}
    try:
        time.sleep(SETTLE)

        load.phase = "serving-renewal"
        old_tls = cr.secret_pem(secret(k), "tls.crt")
        k.run("annotate", "secret", cr.SECRET, "-n", SYSTEM,
              "cert.trainer.kubeflow.org/rotate=serving")
        started = time.time()

        def renewed():
            tls = cr.secret_pem(secret(k), "tls.crt")
            return tls != old_tls and all(cr.fingerprint(served_pem(ip)) == cr.fingerprint(tls)
                                          for ip in pods.values())
        e2e.wait_for("both pods to serve the renewed certificate", 120, renewed)
        r.figure(f"serving renewal: both pods serve the new certificate after "
                 f"{time.time() - started:.1f}s")
        r.check(all(b == first_ca for b in cr.ca_bundles(k, CONFIGS)),
                "the serving renewal left caBundle unchanged")
        time.sleep(SETTLE)

        load.phase = "ca-rotation"
        k.run("annotate", "secret", cr.SECRET, "-n", SYSTEM, "cert.trainer.kubeflow.org/rotate=ca")
        started = time.time()

        def rotated():
            s = secret(k)
            ca = cr.secret_pem(s, "ca.crt")
            return (cr.phase_of(s) == "Stable" and ca != first_ca and
                    all(b == ca for b in cr.ca_bundles(k, CONFIGS)) and
                    all(cr.issuer_verifies(ca, served_pem(ip), work) for ip in pods.values()))
        e2e.wait_for("the CA rotation to finish", 420, rotated, interval=1)
        seen = secrets.phases(started)
        r.figure("CA rotation: " + ", ".join(f"{p} at {t:.1f}s" for p, t in seen))
        r.check([p for p, _ in seen][-3:] == ["TrustNext", "SignNext", "Stable"],
                "the CA rotation went through TrustNext, SignNext, Stable")
        expiry = [metric(ip, "trainer_webhook_ca_expiry_timestamp_seconds")
                  for ip in pods.values()]
        r.check(all(e is not None and e > time.time() + 9 * 365 * 86400 for e in expiry),
                "trainer_webhook_ca_expiry_timestamp_seconds is the new CA's on both pods")
        requests_after = {name: requests_total(ip) for name, ip in pods.items()}
        r.figure("webhook calls per pod until the restart: " + ", ".join(
            f"{n} {requests_after[n] - requests_before[n]}" for n in sorted(pods)))
        time.sleep(SETTLE)

        load.phase = "rolling-restart"
        started = time.time()
        k.run("rollout", "restart", "deployment/trainer-webhook", "-n", SYSTEM)
        k.run("rollout", "status", "deployment/trainer-webhook", "-n", SYSTEM, "--timeout=170s")
        e2e.wait_for("the old webhook pods to be gone", 120,
                     lambda: not set(pods) & set(all_webhook_pods(k)))
        new_pods = webhook_pods(k)
        r.figure(f"rolling restart: {sorted(pods)} -> {sorted(new_pods)} in "
                 f"{time.time() - started:.0f}s")
        time.sleep(SETTLE)
    except AssertionError as e:  # a phase that never ended: the counts are still printed below
        r.check(False, str(e))
    finally:
        load.finish()
        secrets.finish()

    cr.check_load(r, k, load)
    s = secret(k)
    r.check(not s["metadata"].get("annotations", {}).get(REPORTS),
            "no replica reports left in the Secret once Stable")
    r.check(len(new_pods) == 2 and all(
        cr.fingerprint(served_pem(ip)) == cr.fingerprint(cr.secret_pem(s, "tls.crt"))
        for ip in new_pods.values()), "both new pods serve the Secret's certificate")
    if r.failures:
        with open(os.path.join(work, "secret-versions.log"), "w") as f:
            for t, rv, phase, ann in secrets.versions:
                f.write(f"{t:.3f} rv={rv} {phase} {json.dumps(ann)}\n")
        return [os.path.join(work, "secret-versions.log")]
    return []


def main():
    e2e.require_machine()
    r = cl.Result("e2e_cert_rollover")
    k = e2e.kubectl()
    k.fresh_namespace(NS)
    work = tempfile.mkdtemp(prefix="e2e-cert-rollover-")
    try:
        logs = run(r, k, work)
    except Exception:
        for pod in all_webhook_pods(k):
            print(f"--- logs of {pod}:\n" + k.run("logs", "-n", SYSTEM, pod, "--tail=40",
                                                 check=False).stdout)
        raise
    k.run("delete", "namespace", NS, "--wait=false", check=False)
    return r.finish(logs)


if __name__ == "__main__":
    sys.exit(main())

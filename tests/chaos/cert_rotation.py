#!/usr/bin/env python3
"""Chaos: trainer-webhook's serving certificate rotated ROTATIONS times while TrainJobs are
created through the apiserver in a loop: zero failed admissions.

The certificate directory is laid out like a mounted Secret (tls.crt -> ..data/tls.crt, ..data ->
..vN) and each rotation swaps ..data atomically to a new certificate (new key, new CN, same CA)
and removes the previous version, as the kubelet does. Two loads run during the rotations:
  kubectl   `kubectl create` of a TrainJob in a namespace our webhooks are registered for (the
            apiserver calls the webhook over its keep-alive connections)
  direct    an AdmissionReview on a new TLS connection each time (a handshake per request, so
            every rotation meets handshakes in flight); each answer is checked (allowed, uid)
After each rotation the new CN must be served within 10 s. Bound: ROTATIONS x PERIOD seconds
of load (default 5 x 4 s). Figures: admissions per load, failures, time to serve each new cert.
"""

import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos_lib as cl  # noqa: E402

tb = cl.tb
ROTATIONS = int(os.environ.get("ROTATIONS", "5"))
PERIOD = float(os.environ.get("PERIOD", "4"))
RUN_ID = str(os.getpid())
NS = f"chaos-rot-{RUN_ID}"
LABEL = "trainer-cpp.chaos/run"


def publish(wh, cert):
    """A new ..data version, then the previous one removed, as the kubelet does."""
    old = os.path.join(wh.certs.path, f"..v{wh.certs.version}")
    wh.certs.publish(*cert)
    shutil.rmtree(old)


def main():
    r = cl.Result("chaos_cert_rotation")
    k = tb.Kubectl()
    tb.install_trainer_crds(k)
    work = tempfile.mkdtemp(prefix="chaos-rot-")
    runtime = f"chaos-rot-{RUN_ID}"
    cl.RUNTIME = runtime
    k.apply(cl.example_runtime("torch-distributed.yaml", runtime, {LABEL: RUN_ID}))
    wh = tb.Webhook(k, work, cn="chaos-rot-0")
    ca = wh.ca
    try:
        k.run("create", "namespace", NS)
        k.run("label", "namespace", NS, f"{LABEL}={RUN_ID}")
        wh.register(f"chaos-rot-{RUN_ID}-", LABEL, RUN_ID, cl.probe_trainjob(NS))
        ctx = cl.tls_context(ca)
        tb.wait_for("the webhook to see the runtime",
                    lambda: cl.valid_admission(wh.port, ctx, 5)[0], 30, 0.3)

        stop = threading.Event()
        direct = {"ok": 0, "failed": 0}

        def direct_loop():
            while not stop.is_set():
                ok, _ = cl.valid_admission(wh.port, ctx, 10)
                direct["ok" if ok else "failed"] += 1
        t = threading.Thread(target=direct_loop, daemon=True)
        t.start()

        kubectl_ok, kubectl_failed, i = 0, [], 0
        swap_secs = []
        for rot in range(1, ROTATIONS + 1):
            until = time.time() + PERIOD
            while time.time() < until:
                p = k.create(cl.trainjob(f"rot-{i:04d}", NS, runtime))
                i += 1
                if p.returncode == 0:
                    kubectl_ok += 1
                else:
                    kubectl_failed.append(p.stderr.strip())
            cn = f"chaos-rot-{rot}"
            publish(wh, tb.sign_cert(wh.pki, work, cn))
            swapped = time.time()
            try:
                tb.wait_for(f"{cn} served", lambda: tb.served_cn(wh.port, ca) == cn, 10, 0.05)
                swap_secs.append(time.time() - swapped)
            except AssertionError as e:
                r.check(False, str(e))
        stop.set()
        t.join(15)
        r.figure(f"{ROTATIONS} rotations; new certificate served after " +
                 ", ".join(f"{s * 1000:.0f}" for s in swap_secs) + " ms")
        r.check(len(swap_secs) == ROTATIONS, f"each of the {ROTATIONS} new certificates served "
                "within 10 s")
        r.check(not kubectl_failed and kubectl_ok > ROTATIONS,
                f"kubectl creates across the rotations: {kubectl_ok} admitted, "
                f"{len(kubectl_failed)} failed {kubectl_failed[:3]}")
        r.check(direct["failed"] == 0 and direct["ok"] > ROTATIONS * 5,
                f"direct AdmissionReviews, a TLS handshake each: {direct['ok']} answered, "
                f"{direct['failed']} failed")
        stored = len(k.items("trainjobs", NS))
        r.check(stored == kubectl_ok, f"{stored} TrainJobs stored = {kubectl_ok} admitted")
        r.check(wh.proc.poll() is None, f"trainer-webhook still running (pid {wh.proc.pid})")
    finally:
        wh.stop()
        k.delete_namespace(NS)
        k.run("delete", "clustertrainingruntime", runtime, "--ignore-not-found", check=False)
    return r.finish([wh.log_path])


if __name__ == "__main__":
    sys.exit(main())

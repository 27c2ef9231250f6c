#!/usr/bin/env python3
"""The status server's write coalescing (trainer-webhook --status-write-interval): N TrainJobs,
each with M reporters (the ranks of a job) sending R reports/s each, against the same load with
upstream's one write per report.

On a fresh test bed (hack/testbed/up.sh; trainer's CRDs and the torch-distributed runtime), N
TrainJobs exist (no controller runs: a report only needs its TrainJob) and every reporter holds a
real service-account token for its TrainJob's audience (`kubectl create token`). trainer-webhook
runs with --feature-gates=TrainJobStatus=true, once per mode:
  per-report  --status-write-interval=0 (the default; upstream's one apply per report)
  coalesced   --status-write-interval=INTERVAL (at most one apply per TrainJob per interval)
Each reporter keeps one keep-alive HTTPS connection and posts on its own schedule (R per second,
the start spread over the first second), for SECONDS.

Measured per mode: reports answered (by code), their latency as the reporter sees it (p50, p99),
and the apiserver's own count of status writes to trainjobs in that window
(apiserver_request_total{resource="trainjobs",subresource="status"}, write verbs) from the first
report to the last flush. The bound coalescing promises: at most N x (window / INTERVAL + 1)
writes. Printed as ratios to the per-report mode of the same run (writes/s, p99); not a
measurement while others use the machine. Exit status 1 when the bound is exceeded.

Usage: hack/bench/statusserver/run.py [--trainjobs 4] [--reporters 16] [--rate 1]
         [--seconds 20] [--interval 1s] [--bin build/bin] [--out BASE]
Writes BASE.json and BASE.txt (default .local/bench/statusserver-<time>); about a minute at the
defaults.
"""

import argparse
import datetime
import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "bench"))
import benchlib  # noqa: E402

NS = "bench-status"
WRITE_VERBS = ("APPLY", "PATCH", "UPDATE")


def status_path(name):
    return "/apis/trainer.kubeflow.org/v1alpha1/namespaces/%s/trainjobs/%s/status" % (NS, name)


def audience(name):
    return "trainer.kubeflow.org/v1alpha1/namespaces/%s/trainjobs/%s/status" % (NS, name)


def apiserver_status_writes(bed):
    """The apiserver's count of write requests to trainjobs/status so far."""
    api = bed.api()
    conn = api.connect()
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    return sum(benchlib.metric_sum(text, "apiserver_request_total", resource="trainjobs",
                                   subresource="status", verb=v) for v in WRITE_VERBS)


class Webhook:
    """trainer-webhook with the gate, as the test bed's admin (this measures writes, not RBAC)."""

    def __init__(self, bin_dir, bed, work, mode, interval):
        self.port = benchlib.free_port()
        self.metrics_port = benchlib.free_port()
        self.probe_port = benchlib.free_port()
        self.log_path = os.path.join(work, "webhook-%s.log" % mode)
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "trainer-webhook"), "--port=%d" % benchlib.free_port(),
             "--cert-dir=%s" % benchlib.serving_cert_dir(bed, work),
             "--metrics-bind-address=127.0.0.1:%d" % self.metrics_port,
             "--health-probe-bind-address=127.0.0.1:%d" % self.probe_port,
             "--kubeconfig=%s" % bed.kubeconfig, "--feature-gates=TrainJobStatus=true",
             "--status-server-port=%d" % self.port, "--status-write-interval=%s" % interval],
            stdin=subprocess.DEVNULL, stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Reporter(threading.Thread):
    def __init__(self, port, ctx, name, token, rate, start, seconds, rank):
        super().__init__(daemon=True)
        self.port, self.ctx, self.name, self.token = port, ctx, name, token
        self.period = 1.0 / rate
        self.start_at = start + (rank % 100) / 100.0 * min(1.0, self.period)
        self.end_at = start + seconds
        self.rank = rank
        self.latencies = []
        self.codes = {}

    def run(self):
        conn = None
        headers = {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"}
        n = 0
        while True:
            at = self.start_at + n * self.period
            if at >= self.end_at:
                break
            time.sleep(max(0.0, at - time.time()))
            n += 1
            now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            body = json.dumps({"trainerStatus": {
                "progressPercentage": min(100, n), "estimatedRemainingSeconds": 1000 - n,
                "metrics": [{"name": "rank", "value": str(self.rank)}],
                "lastUpdatedTime": now}})
            t0 = time.perf_counter()
            try:
                if conn is None:
                    conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx,
                                                       timeout=30)
                conn.request("POST", status_path(self.name), body=body, headers=headers)
                r = conn.getresponse()
                r.read()
                code = r.status
            except (OSError, http.client.HTTPException):
                code = 0
                if conn is not None:
                    conn.close()
                conn = None
            self.latencies.append(time.perf_counter() - t0)
            self.codes[code] = self.codes.get(code, 0) + 1
        if conn is not None:
            conn.close()


def percentile(xs, p):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def run_mode(args, bed, work, tokens, mode, interval):
    wh = Webhook(args.bin, bed, work, mode, interval)
    try:
        ctx = ssl.create_default_context(cafile=os.path.join(bed.pki, "ca.crt"))
        ctx.check_hostname = False  # the serving certificate names the webhook Service

        def ready():
            try:
                c = http.client.HTTPSConnection("127.0.0.1", wh.port, context=ctx, timeout=5)
                c.request("POST", status_path("job-0"), body="{}",
                          headers={"Authorization": "Bearer " + tokens["job-0"]})
                ok = c.getresponse().status == 200
                c.close()
                return ok
            except OSError:
                return False
        benchlib.wait_for(ready, 60, "the status server to verify tokens", every=0.5)
        writes0 = apiserver_status_writes(bed)
        start = time.time() + 0.5
        reporters = [Reporter(wh.port, ctx, name, tokens[name], args.rate, start, args.seconds,
                              rank)
                     for name in sorted(tokens) for rank in range(args.reporters)]
        for r in reporters:
            r.start()
        for r in reporters:
            r.join()
        # Held reports are written when their interval ends.
        time.sleep(go_seconds(interval) + 0.5)
        writes = apiserver_status_writes(bed) - writes0
        window = time.time() - start
    finally:
        wh.stop()
    lat = [x for r in reporters for x in r.latencies]
    codes = {}
    for r in reporters:
        for c, n in r.codes.items():
            codes[str(c)] = codes.get(str(c), 0) + n
    return {"mode": mode, "interval": interval, "reports": len(lat), "codes": codes,
            "reports_per_s": round(len(lat) / args.seconds, 1),
            "apiserver_writes": int(writes), "window_s": round(window, 2),
            "writes_per_s": round(writes / window, 2),
            "p50_ms": round(percentile(lat, 50) * 1000, 2),
            "p99_ms": round(percentile(lat, 99) * 1000, 2)}


def go_seconds(interval):
    """Seconds of a Go-style duration ("500ms", "1s", "2m", "0")."""
    units = {"ms": 0.001, "s": 1, "m": 60}
    for u in ("ms", "s", "m"):
        if interval.endswith(u):
            return float(interval[:-len(u)]) * units[u]
    return float(interval)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trainjobs", type=int, default=4)
    ap.add_argument("--reporters", type=int, default=16, help="per TrainJob")
    ap.add_argument("--rate", type=float, default=1.0, help="reports/s per reporter")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--interval", default="1s", help="--status-write-interval of coalesced")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    out_base = args.out or benchlib.default_out("statusserver")
    doc = benchlib.envelope("statusserver", args)
    with benchlib.work_dir("bench-statusserver-") as work:
        with benchlib.TestBed(os.path.join(work, "testbed")) as bed:
            benchlib.log("%d TrainJobs x %d reporters x %g reports/s for %gs" %
                         (args.trainjobs, args.reporters, args.rate, args.seconds))
            bed.kubectl("create", "namespace", NS)
            bed.kubectl("-n", NS, "create", "serviceaccount", "reporter")
            names = ["job-%d" % i for i in range(args.trainjobs)]
            bed.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps({
                "apiVersion": "v1", "kind": "List", "items": [
                    {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                     "metadata": {"name": n, "namespace": NS},
                     "spec": {"runtimeRef": {"name": "torch-distributed"}}} for n in names]}))
            tokens = {n: bed.kubectl("-n", NS, "create", "token", "reporter", "--duration=1h",
                                     "--audience=" + audience(n)).strip() for n in names}
            results = []
            for mode, interval in (("per-report", "0"), ("coalesced", args.interval)):
                benchlib.log("mode %s (--status-write-interval=%s)" % (mode, interval))
                results.append(run_mode(args, bed, work, tokens, mode, interval))
    base, co = results
    # At most one write per TrainJob per interval over the window (reports, then the last flush).
    bound = args.trainjobs * (co["window_s"] / go_seconds(args.interval) + 1)
    ratios = {"writes_coalesced_per_report": round(co["writes_per_s"] /
                                                   max(base["writes_per_s"], 1e-9), 3),
              "p99_coalesced_per_report": round(co["p99_ms"] / max(base["p99_ms"], 1e-9), 3),
              "coalesced_writes_bound": int(bound),
              "coalesced_within_bound": co["apiserver_writes"] <= bound}
    doc["results"] = results
    doc["ratios"] = ratios
    lines = ["status server: %d TrainJobs x %d reporters x %g reports/s, %gs per mode" %
             (args.trainjobs, args.reporters, args.rate, args.seconds),
             "%-11s %9s %10s %10s %9s %9s  %s" % ("mode", "reports", "reports/s", "writes/s",
                                                  "p50 ms", "p99 ms", "codes")]
    for r in results:
        lines.append("%-11s %9d %10.1f %10.2f %9.2f %9.2f  %s" % (
            r["mode"], r["reports"], r["reports_per_s"], r["writes_per_s"], r["p50_ms"],
            r["p99_ms"], json.dumps(r["codes"], sort_keys=True)))
    lines.append("coalesced/per-report: writes/s %.3f, p99 %.3f; coalesced writes %d, bound %d "
                 "(N x (window / interval + 1)): %s" % (
                     ratios["writes_coalesced_per_report"], ratios["p99_coalesced_per_report"],
                     co["apiserver_writes"], int(bound),
                     "within" if ratios["coalesced_within_bound"] else "EXCEEDED"))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    benchlib.write_results(doc, out_base, text)
    return 0 if ratios["coalesced_within_bound"] else 1


if __name__ == "__main__":
    sys.exit(main())

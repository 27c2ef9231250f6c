#!/usr/bin/env python3
"""Soak benchmark: trainer-webhook and trainer-controller under a steady TrainJob churn, with
their memory sampled over time, to show that it stays flat (or to catch what grows).

Set-up: `hack/run-local.sh up --no-jobset-controller` in a private state dir: a fresh test bed
(hack/testbed/up.sh), deploy/ installed (CRDs, RBAC, the default runtimes), trainer-webhook
registered by URL with the shipped webhook configurations and trainer-controller with leader
election, both as their ServiceAccounts. No JobSet controller: JobSets stay as trainer wrote
them, and this script writes the status of some of them by hand.

Churn, for --minutes (default 10): a TrainJob is created every 1/--rate seconds (names never
reused; runtimes rotate over --runtimes), and once more than --live TrainJobs exist the oldest
is deleted (background propagation: the garbage collector removes its JobSet and ConfigMap), so
the live count stays constant. Every --complete-every-th TrainJob gets its JobSet's status
patched to Completed a few seconds after it is created, so the status path runs too (the
controller writes jobsStatus and the Complete condition). All requests go over one keep-alive
HTTPS connection with the test bed's admin certificate, so the client costs little CPU.

Bursts (--burst N, every --burst-every seconds): N creates sent at once over N further
connections, on top of the steady rate, so that both services see more concurrent requests than
usual (more webhook connections from the apiserver, more controller requests in flight) and must
give the extra connections, threads and memory back afterwards.

Sampling: every --sample-seconds, each service's VmRSS, CPU (utime+stime, shown as % of one
core over the interval), threads and open fds from /proc.

Verdict: a least-squares line through RSS over the second half of the run (the first half is
warm-up: caches fill, allocator arenas settle). "flat" when its slope is below
--threshold-mb-per-hour for both services, else "growing" and exit status 1. The threshold is
printed with the result. Run 20 minutes or more for a verdict: most of the warm-up is over after
10 minutes, and a shorter run's second half still climbs with it; the controller's last ~1 MB
comes by about minute 55, so a 30-minute slope is an upper bound (docs/benchmarks-history.md,
"soak", round 17).

Usage: hack/bench/soak/run.py [--minutes 10] [--rate 2] [--live 60] [--complete-every 2]
         [--burst 0] [--burst-every 240]
         [--sample-seconds 5] [--threshold-mb-per-hour 5] [--bin build/bin] [--csv FILE]
         [--out BASE] [--keep]
--keep leaves the local run up afterwards (stop it with the printed command).
Writes the samples and the verdict to BASE.json and the report to BASE.txt (default
.local/bench/soak-<UTC time>; hack/bench/plot.py draws RSS over time from it).
--bin may point at a sanitizer build (build-asan/bin): ASAN_OPTIONS etc. are passed through to
the services, so a leak report at their exit lands wherever ASAN_OPTIONS=log_path says.
"""

import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import threading
import time


ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "bench"))
import benchlib  # noqa: E402
from benchlib import Api, proc_cpu_rss  # noqa: E402

SERVICES = ("trainer-webhook", "trainer-controller")
NS = "soak"
TRAINER_API = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/%s/trainjobs" % NS
JOBSET_API = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/%s/jobsets" % NS


def trainjob(name, runtime):
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": NS, "labels": {"soak": "true"}},
            "spec": {"runtimeRef": {"name": runtime},
                     "trainer": {"numNodes": 2, "command": ["python3", "-c", "print(1)"]}}}


def completed_status():
    return {"status": {
        "replicatedJobsStatus": [{"name": "node", "ready": 0, "succeeded": 2, "failed": 0,
                                  "active": 0, "suspended": 0}],
        "conditions": [{"type": "Completed", "status": "True", "reason": "AllJobsCompleted",
                        "message": "jobset completed successfully",
                        "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}}


class Churn:
    """Creates, completes and deletes TrainJobs at a fixed rate on a pool of --clients threads
    (each its own connection, so one slow admission does not hold the rate back); counts what
    happened and how long each kind of request took."""

    def __init__(self, kubeconfig, work, args):
        self.kubeconfig, self.work, self.args = kubeconfig, work, args
        self.runtimes = args.runtimes.split(",")
        self.local = threading.local()
        self.pool = concurrent.futures.ThreadPoolExecutor(args.clients)
        self.burst_pool = (concurrent.futures.ThreadPoolExecutor(args.burst)
                           if args.burst > 0 else None)
        self.mu = threading.Lock()
        self.live = collections.deque()  # names, oldest first
        self.to_complete = collections.deque()  # (due time, name, first due time)
        self.completed = []  # names whose JobSet status was patched to Completed
        self.counts = collections.Counter()
        self.seconds = collections.Counter()  # request kind -> total seconds
        self.seq = 0

    def api(self):
        if not hasattr(self.local, "api"):
            self.local.api = Api(self.kubeconfig, timeout=30)
        return self.local.api

    def call(self, kind, *args):
        t = time.time()
        status, body = self.api().call(*args)
        with self.mu:
            self.seconds[kind] += time.time() - t
            self.counts[kind + "_requests"] += 1
        return status, body

    def tick(self):
        """Submits the next create and the JobSet status patches now due; returns the number of
        requests waiting for a client."""
        self.seq += 1
        self.pool.submit(self.create, self.seq)
        now = time.time()
        with self.mu:
            due = [self.to_complete.popleft() for _ in range(len(self.to_complete))
                   if self.to_complete[0][0] <= now]
        for d in due:
            self.pool.submit(self.complete, *d)
        return self.pool._work_queue.qsize()

    def burst(self):
        """Submits --burst creates at once, each on its own connection."""
        for _ in range(self.args.burst):
            self.seq += 1
            self.burst_pool.submit(self.create, self.seq)
        with self.mu:
            self.counts["bursts"] += 1

    def create(self, seq):
        name = "soak-%06d" % seq
        status, body = self.call("create", "POST", TRAINER_API,
                                 trainjob(name, self.runtimes[seq % len(self.runtimes)]))
        if status != 201:
            self.error("create", "%s: %s %s" % (name, status, (body or {}).get("message")))
            return
        with self.mu:
            self.counts["created"] += 1
            self.live.append(name)
            old = []
            while len(self.live) > self.args.live:
                old.append(self.live.popleft())
        if seq % self.args.complete_every == 0:
            due = time.time() + 3
            with self.mu:
                self.to_complete.append((due, name, due))
        for n in old:
            status, body = self.call("delete", "DELETE", "%s/%s" % (TRAINER_API, n),
                                     {"propagationPolicy": "Background"})
            if status in (200, 202):
                with self.mu:
                    self.counts["deleted"] += 1
            else:
                self.error("delete", "%s: %s %s" % (n, status, (body or {}).get("message")))

    def complete(self, due, name, first_due):
        """Patches the JobSet of `name` to Completed; retried a second later while it does not
        exist yet (the controller applies it shortly after the create), for up to a minute."""
        status, body = self.call("complete", "PATCH", "%s/%s/status" % (JOBSET_API, name),
                                 completed_status(), "application/merge-patch+json")
        with self.mu:
            if status == 200:
                self.counts["jobsets_completed"] += 1
                self.completed.append(name)
                return
            alive = name in self.live
            if status == 404 and alive and time.time() < first_due + 60:
                self.to_complete.append((time.time() + 1, name, first_due))
                return
        if alive:
            self.error("complete", "JobSet %s status: %s %s" % (
                name, status, (body or {}).get("message")))

    def error(self, kind, msg):
        with self.mu:
            self.counts[kind + "_errors"] += 1
            self.counts["notes"] += 1
            if self.counts["notes"] > 20:
                return
        print("  churn: %s %s" % (kind, msg), file=sys.stderr, flush=True)

    def finish(self):
        self.pool.shutdown(wait=True)
        if self.burst_pool is not None:
            self.burst_pool.shutdown(wait=True)

    def mean_ms(self, kind):
        n = self.counts[kind + "_requests"]
        return 1000 * self.seconds[kind] / n if n else 0.0

    def completed_and_live(self):
        """How many live TrainJobs whose JobSet was completed carry Complete=True."""
        live = set(self.live)
        names = [n for n in self.completed if n in live]
        ok = 0
        for n in names:
            _, tj = self.api().call("GET", "%s/%s" % (TRAINER_API, n))
            conds = ((tj or {}).get("status") or {}).get("conditions") or []
            ok += any(c["type"] == "Complete" and c["status"] == "True" for c in conds)
        return ok, len(names)


def pid_of(testbed_dir, name):
    with open(os.path.join(testbed_dir, "pids", name)) as f:
        return int(f.read().split()[0])


def threads_fds(pid):
    threads = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                threads = int(line.split()[1])
    return threads, len(os.listdir("/proc/%d/fd" % pid))


class Sampler(threading.Thread):
    def __init__(self, pids, every):
        super().__init__(daemon=True)
        self.pids, self.every = pids, every
        self.rows = []  # (seconds since start, {service: (rss MB, cpu %, threads, fds)})
        self.stop = threading.Event()
        self.start_time = time.time()

    def run(self):
        last = {s: (self.start_time, proc_cpu_rss(p)[0]) for s, p in self.pids.items()}
        while True:
            now = time.time()
            row = {}
            for s, pid in self.pids.items():
                cpu, _, rss = proc_cpu_rss(pid)
                t0, cpu0 = last[s]
                last[s] = (now, cpu)
                pct = 100 * (cpu - cpu0) / max(now - t0, 1e-3)
                row[s] = (rss / 2**20, pct) + threads_fds(pid)
            self.rows.append((now - self.start_time, row))
            if self.stop.wait(self.every):
                return


def slope_mb_per_hour(points):
    """Least-squares slope of (seconds, MB) points, in MB per hour."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in points)
    return (sxy / sxx) * 3600 if sxx else 0.0


def report(sampler, churn, args, elapsed, load_start, load_end):
    rows = sampler.rows
    said = []

    def say(text=""):
        print(text)
        said.append(text)

    lines = ["t_s," + ",".join("%s_%s" % (s, k) for s in SERVICES
                               for k in ("rss_mb", "cpu_pct", "threads", "fds"))]
    for t, row in rows:
        lines.append("%.0f," % t + ",".join("%.1f,%.1f,%d,%d" % row[s] for s in SERVICES))
    csv_text = "\n".join(lines) + "\n"
    if args.csv:
        with open(args.csv, "w") as f:
            f.write(csv_text)
    say("\n# RSS over time (MB; CPU %% of one core over the last %ds)" % args.sample_seconds)
    say("%8s  %12s %8s  %12s %8s" % ("t (s)", "webhook RSS", "CPU %", "ctrl RSS", "CPU %"))
    stride = max(1, len(rows) // 40)
    for i, (t, row) in enumerate(rows):
        if i % stride == 0 or i == len(rows) - 1:
            w, c = row["trainer-webhook"], row["trainer-controller"]
            say("%8.0f  %12.1f %8.1f  %12.1f %8.1f" % (t, w[0], w[1], c[0], c[1]))
    half = [r for r in rows if r[0] >= rows[-1][0] / 2]
    creates_per_s = churn.counts["created"] / elapsed
    done, patched = churn.completed_and_live()
    say("\n# summary")
    say("date %s UTC, %.1f min, load average %s at start, %s at end, %d CPUs" % (
        time.strftime("%Y-%m-%d %H:%M", time.gmtime(sampler.start_time)), elapsed / 60,
        load_start, load_end, os.cpu_count()))
    say("churn: %d created (%.2f/s, %d bursts of %d), %d deleted, %d JobSets patched "
          "Completed, live %d; errors: create %d, delete %d, complete %d" % (
              churn.counts["created"], creates_per_s, churn.counts["bursts"], args.burst,
              churn.counts["deleted"],
              churn.counts["jobsets_completed"], len(churn.live), churn.counts["create_errors"],
              churn.counts["delete_errors"], churn.counts["complete_errors"]))
    say("status path: %d/%d live TrainJobs with a Completed JobSet carry Complete=True" % (
        done, patched))
    say("mean request ms: create %.0f, delete %.0f, JobSet status %.0f" % (
        churn.mean_ms("create"), churn.mean_ms("delete"), churn.mean_ms("complete")))
    verdict = {}
    services = {}
    say("| service | RSS start MB | RSS end MB | RSS max MB | slope over 2nd half MB/h | "
          "per created TrainJob KB | CPU s/min | threads (start→max→end) | fds (start→max→end) | "
          "verdict |")
    say("|---|---|---|---|---|---|---|---|---|---|")
    for s in SERVICES:
        slope = slope_mb_per_hour([(t, row[s][0]) for t, row in half])
        per_tj_kb = slope / 3600 / creates_per_s * 1024 if creates_per_s else 0.0
        grows = slope >= args.threshold_mb_per_hour
        verdict[s] = "growing" if grows else "flat"
        cpu_avg = sum(row[s][1] for _, row in rows) / len(rows) / 100 * 60
        def span(i):
            return "%d→%d→%d" % (rows[0][1][s][i], max(row[s][i] for _, row in rows),
                                 rows[-1][1][s][i])
        services[s] = {"rss_start_mb": rows[0][1][s][0], "rss_end_mb": rows[-1][1][s][0],
                       "rss_max_mb": max(row[s][0] for _, row in rows),
                       "slope_mb_per_hour": round(slope, 2),
                       "cpu_seconds_per_minute": round(cpu_avg, 2),
                       "verdict": verdict[s]}
        say("| %s | %.1f | %.1f | %.1f | %+.2f | %+.3f | %.1f | %s | %s | %s |" % (
            s, rows[0][1][s][0], rows[-1][1][s][0], max(row[s][0] for _, row in rows), slope,
            per_tj_kb, cpu_avg, span(2), span(3), verdict[s]))
    say("threshold: flat when the slope is below %.1f MB/h" % args.threshold_mb_per_hour)
    ok = all(v == "flat" for v in verdict.values())
    errors = sum(churn.counts[k] for k in ("create_errors", "delete_errors", "complete_errors"))
    say("verdict: %s%s" % ("flat" if ok else "growing (%s)" % ", ".join(
        s for s, v in verdict.items() if v != "flat"),
        "" if not errors and done == patched else " (churn errors or status not written)"))
    summary = {"minutes": round(elapsed / 60, 1), "services": services,
               "churn": {k: v for k, v in churn.counts.items() if k != "notes"},
               "status_complete": [done, patched],
               "threshold_mb_per_hour": args.threshold_mb_per_hour,
               "samples": [{"t": round(t, 1), **{s: {"rss_mb": round(row[s][0], 1),
                                                    "cpu_pct": round(row[s][1], 1),
                                                    "threads": row[s][2], "fds": row[s][3]}
                                                for s in SERVICES}} for t, row in rows]}
    return ok and not errors and done == patched, "\n".join(said) + "\n", summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--rate", type=float, default=2.0, help="TrainJobs created per second")
    ap.add_argument("--live", type=int, default=60, help="TrainJobs kept alive")
    ap.add_argument("--complete-every", type=int, default=2,
                    help="patch the JobSet of every N-th TrainJob to Completed")
    ap.add_argument("--runtimes", default="torch-distributed,deepspeed-distributed,"
                    "jax-distributed,xgboost-distributed")
    ap.add_argument("--clients", type=int, default=6, help="concurrent API connections")
    ap.add_argument("--burst", type=int, default=0,
                    help="creates sent at once every --burst-every seconds (0: none)")
    ap.add_argument("--burst-every", type=float, default=240)
    ap.add_argument("--sample-seconds", type=int, default=5)
    ap.add_argument("--threshold-mb-per-hour", type=float, default=5.0)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--csv", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    for s in SERVICES:
        if not os.access(os.path.join(args.bin, s), os.X_OK):
            sys.exit("soak: no %s in %s (build it or pass --bin)" % (s, args.bin))

    out_base = args.out or benchlib.default_out("soak")
    doc = benchlib.envelope("soak", args)
    work = tempfile.mkdtemp(prefix="bench-soak-")
    env = dict(os.environ, TRAINER_LOCAL_DIR=os.path.join(work, "local"),
               TRAINER_BIN_DIR=os.path.abspath(args.bin))
    down = [os.path.join(ROOT, "hack/run-local.sh"), "down"]
    print("[soak] starting the local run in %s" % env["TRAINER_LOCAL_DIR"], flush=True)
    up = subprocess.run([os.path.join(ROOT, "hack/run-local.sh"), "up", "--no-jobset-controller"],
                        env=env, capture_output=True, text=True)
    if up.returncode != 0:
        print(up.stdout + up.stderr, file=sys.stderr)
        subprocess.run(down, env=env, capture_output=True)
        sys.exit("soak: hack/run-local.sh up failed")
    testbed = os.path.join(env["TRAINER_LOCAL_DIR"], "testbed")
    ok = False
    kubeconfig = os.path.join(env["TRAINER_LOCAL_DIR"], "kubeconfig")
    try:
        api = Api(kubeconfig, timeout=30)
        status, body = api.call("POST", "/api/v1/namespaces",
                                {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": NS}})
        if status != 201:
            raise RuntimeError("creating namespace %s: %s %s" % (NS, status, body))
        pids = {s: pid_of(testbed, s) for s in SERVICES}
        load_start = "%.2f" % os.getloadavg()[0]
        sampler = Sampler(pids, args.sample_seconds)
        sampler.start()
        churn = Churn(kubeconfig, work, args)
        start = time.time()
        end = start + args.minutes * 60
        next_tick = start
        last_print = start
        print("[soak] churn: %.2f TrainJobs/s, %d live, for %.1f min (pids %s)" % (
            args.rate, args.live, args.minutes, pids), flush=True)
        backlog = 0
        next_burst = start + args.burst_every
        while time.time() < end:
            if args.burst > 0 and time.time() >= next_burst:
                churn.burst()
                next_burst += args.burst_every
            if backlog < 4 * args.clients:  # behind by more than that: skip, report the rate
                backlog = churn.tick()
            else:
                backlog = churn.pool._work_queue.qsize()
            next_tick += 1 / args.rate
            if time.time() - last_print >= 60:
                last_print = time.time()
                t, row = sampler.rows[-1]
                print("[soak] %4.0f s: created %d, webhook %.1f MB, controller %.1f MB, "
                      "backlog %d" % (t, churn.counts["created"], row["trainer-webhook"][0],
                                      row["trainer-controller"][0], backlog), flush=True)
            time.sleep(max(0.0, next_tick - time.time()))
        elapsed = time.time() - start
        churn.finish()
        time.sleep(5)  # let the last status writes land before checking them
        sampler.stop.set()
        sampler.join()
        for s, pid in pids.items():
            if not os.path.exists("/proc/%d" % pid):
                raise RuntimeError("%s (pid %d) exited during the soak; logs in %s/logs" % (
                    s, pid, testbed))
        ok, text, doc["results"] = report(sampler, churn, args, elapsed, load_start,
                                          "%.2f" % os.getloadavg()[0])
        doc["results"]["ok"] = ok
        benchlib.write_results(doc, out_base, text)
    finally:
        if args.keep:
            print("[soak] left running; stop with: TRAINER_LOCAL_DIR=%s hack/run-local.sh down"
                  % env["TRAINER_LOCAL_DIR"])
        else:
            subprocess.run(down, env=env, capture_output=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

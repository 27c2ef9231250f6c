#!/usr/bin/env python3
"""trainer-controller restarting with N converged TrainJobs, repeatable on one kept test bed:
what hack/bench/scale.py measures once per size (step 3), here for several builds, alternated,
without rebuilding the cluster each time (at 100,000 that takes ~15 minutes).

  hack/bench/restart.py prepare --bed DIR --n 100000 [--bin build/bin] [--workers 5]
      Starts a test bed in DIR and keeps it running (hack/testbed, no JobSet controller),
      creates N TrainJobs of the torch-distributed runtime (2 nodes), runs the controller until
      the apiserver holds N JobSets and it settled, and stops it.
  hack/bench/restart.py measure --bed DIR --bin A [--bin B ...] [--rounds 2] [--burst K]
                                [--out BASE]
      Per round, each --bin in turn (the order reversed every other round): start the controller;
      seconds until /readyz and its CPU seconds by then, with each test-bed process's; seconds
      until a new TrainJob's JobSet is seen (from just before its create); RSS 2 s later; the
      seconds until every cache had listed (its log's `caches synced`); the seconds until every
      TrainJob was reconciled again and the queue stayed empty for 3 s, with RSS, peak RSS and
      CPU seconds then. Prints a table, writes BASE.{txt,json}.
      --burst K: right after the new TrainJob, K more are created at once (16 at a time, in a
      namespace of their own): seconds from the first create until all K JobSets exist (and
      the creates' own), and that moment from the controller's start, beside the seconds until
      every cache had listed: live events served while the owned kinds may still be listing.
  hack/bench/restart.py down --bed DIR
      Stops the test bed.

Measure on an idle machine: readiness at this size costs the apiserver (serving the lists) and
the controller (decoding them) CPU seconds on the same cores.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "bench"))
import benchlib  # noqa: E402
from benchlib import JOBSETS, log  # noqa: E402
from scale import cpu_delta, new_trainjob_timing  # noqa: E402

NS = "bench"


def prepare(args):
    env = dict(os.environ, TESTBED_DIR=args.bed)
    subprocess.run([os.path.join(ROOT, "hack/testbed/up.sh")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    bed = benchlib.Bed(args.bed)
    benchlib.install_trainer(bed)
    bed.api().create_namespace(NS)
    timeout = max(600, args.n // 10)
    with benchlib.work_dir("bench-restart-") as work:
        log("creating %d TrainJobs" % args.n)
        benchlib.create_trainjobs(args.bin, bed, NS, args.n, work)
        log("first wave")
        c = benchlib.our_controller(os.path.join(args.bin, "trainer-controller"),
                                    bed.kubeconfig, args.workers,
                                    os.path.join(args.bed, "prepare-controller.log"))
        try:
            c.wait_ready(timeout)
            benchlib.wait_count(bed.api(), JOBSETS % NS, args.n, c, timeout * 6)
            benchlib.wait_settled(c, args.n, timeout)
        finally:
            c.stop()
    with open(os.path.join(args.bed, "restart-bench.json"), "w") as f:
        json.dump({"n": args.n}, f)
    log("prepared %d converged TrainJobs in %s" % (args.n, args.bed))


def log_seconds(log_path, msg):
    """Seconds from the log's first line to its first line with msg="MSG", or None."""
    first = None
    with open(log_path) as f:
        for line in f:
            if not line.startswith("ts="):
                continue
            ts = datetime.datetime.strptime(line[3:line.index(" ")], "%Y-%m-%dT%H:%M:%S.%fZ")
            first = first or ts
            if ('msg="%s"' % msg) in line:
                return round((ts - first).total_seconds(), 2)
    return None


def burst_timing(bed, bin_dir, ctrl, ns, k, timeout):
    """Creates K TrainJobs in NS at once; (seconds until all K JobSets exist, from the first
    create; of them, the creates' own; the end in seconds from CTRL's start)."""
    with benchlib.work_dir("bench-restart-burst-") as work:
        t = time.time()
        created = benchlib.create_trainjobs(bin_dir, bed, ns, k, work)
        benchlib.wait_count(bed.api(), JOBSETS % ns, k, None, timeout)
        done = time.time()
    return done - t, created, done - ctrl.start


def measure_one(bed, bin_dir, workers, n, name, log_path, burst=0, burst_ns=""):
    r = {"bin": bin_dir}
    timeout = max(600, n // 10)
    if burst:
        bed.api().create_namespace(burst_ns)  # before the start: the timed part is TrainJobs
    cpu0 = bed.cpu_seconds()
    c = benchlib.our_controller(os.path.join(bin_dir, "trainer-controller"), bed.kubeconfig,
                                workers, log_path)
    try:
        r["ready_seconds"] = round(c.wait_ready(timeout), 2)
        r["ready_cpu_seconds"] = c.usage()["cpu_seconds"]
        r["ready_testbed_cpu_seconds"] = cpu_delta(cpu0, bed.cpu_seconds())
        total, created = new_trainjob_timing(bed, NS, name)
        r["new_trainjob_seconds"] = round(total, 3)
        r["new_trainjob_create_seconds"] = round(created, 3)  # kubectl create's start-up and call
        if burst:
            took, burst_created, after_start = burst_timing(bed, bin_dir, c, burst_ns, burst,
                                                            timeout)
            r.update(burst=burst, burst_seconds=round(took, 2),
                     burst_create_seconds=round(burst_created, 2),
                     burst_done_after_start_seconds=round(after_start, 2))
        time.sleep(2)
        r["rss_mb"] = c.usage()["rss_mb"]
        r["settled_seconds"] = round(benchlib.wait_settled(c, n, timeout), 2)
        # Every cache listed (the owned kinds' too; ready may come before, see
        # docs/design/controller.md).
        r["synced_seconds"] = log_seconds(log_path, "caches synced")
        u = c.usage()
        r.update(settled_rss_mb=u["rss_mb"], peak_rss_mb=u["peak_rss_mb"],
                 cpu_seconds=u["cpu_seconds"])
    finally:
        c.stop()
    return r


def measure(args):
    state_path = os.path.join(args.bed, "restart-bench.json")
    with open(state_path) as f:
        state = json.load(f)
    bed = benchlib.Bed(args.bed)
    doc = benchlib.envelope("restart", args)
    doc["n"] = state["n"]
    results = []
    for rnd in range(args.rounds):
        bins = args.bin if rnd % 2 == 0 else list(reversed(args.bin))
        for b in bins:
            # Every measurement adds one TrainJob, and --burst's K (kept in the bed's state
            # across runs: "added", "burst_total"): the next restart has them to reconcile.
            added = state.get("added", 0)
            n = state["n"] + added + state.get("burst_total", 0)
            name = "after-restart-%d" % added
            log("round %d, %s (load average %.1f)" % (rnd, b, os.getloadavg()[0]))
            r = measure_one(bed, b, args.workers, n, name,
                            os.path.join(args.bed, "restart-%d.log" % added), args.burst,
                            "burst-%d" % added)
            state["added"] = added + 1
            state["burst_total"] = state.get("burst_total", 0) + args.burst
            with open(state_path, "w") as f:
                json.dump(state, f)
            r.update(round=rnd, n=n)
            log(json.dumps(r))
            results.append(r)
    doc["results"] = results
    lines = ["| bin | round | N | ready s | CPU s at ready | new TrainJob s (kubectl create) | RSS MB "
             "| burst: K, s (creates s; done after start s) | all caches synced s | settled s "
             "| settled RSS MB (peak) | CPU s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        synced = r.get("synced_seconds")
        burst = ("%d, %.2f (%.2f; %.2f)" % (r["burst"], r["burst_seconds"],
                                            r["burst_create_seconds"],
                                            r["burst_done_after_start_seconds"])
                 if r.get("burst") else "-")
        lines.append("| %s | %d | %d | %.2f | %.2f | %.3f (%s) | %.1f | %s | %s | %.2f | %.1f (%.1f) | %.2f |" % (
            r["bin"], r["round"], r["n"], r["ready_seconds"], r["ready_cpu_seconds"],
            r["new_trainjob_seconds"], r.get("new_trainjob_create_seconds", "-"), r["rss_mb"],
            burst, "-" if synced is None else "%.2f" % synced,
            r["settled_seconds"], r["settled_rss_mb"],
            r["peak_rss_mb"], r["cpu_seconds"]))
    text = "\n".join(lines) + "\n"
    print(text)
    benchlib.write_results(doc, args.out or benchlib.default_out("restart"), text)


def down(args):
    subprocess.run([os.path.join(ROOT, "hack/testbed/down.sh")],
                   env=dict(os.environ, TESTBED_DIR=args.bed), check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("prepare", "measure", "down"))
    ap.add_argument("--bed", required=True, help="the kept test bed's directory")
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--bin", action="append", default=[])
    ap.add_argument("--workers", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--burst", type=int, default=0,
                    help="measure: K TrainJobs created at once right after the new one")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    args.bed = os.path.abspath(args.bed)
    args.bin = [os.path.abspath(b) for b in args.bin] or [os.path.join(ROOT, "build", "bin")]
    if args.what == "prepare":
        args.bin = args.bin[0]
        prepare(args)
    elif args.what == "measure":
        measure(args)
    else:
        down(args)


if __name__ == "__main__":
    main()

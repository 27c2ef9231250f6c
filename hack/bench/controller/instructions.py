#!/usr/bin/env python3
"""Instructions trainer-controller spends converging N TrainJobs, counted by `perf stat`: the
measure for comparing two builds of the controller on a busy machine, where the seconds of
hack/bench/scale.py move with the load while user-space instruction counts repeat to about a
percent (the exact number of reconciles and watch events still varies a little with timing).

One private test bed (hack/testbed, no JobSet controller) per binary: N TrainJobs of the
torch-distributed runtime (2 nodes) are created while no controller runs; the controller starts
under `perf stat -e instructions:u,task-clock,context-switches`, and is stopped (SIGTERM) once
the apiserver holds N JobSets and its work queue stayed empty for 3 s.

  hack/bench/controller/instructions.py [--n 1000] [--workers 5] [--bin build/bin ...]
                                       [--callgrind DIR] [--env KEY=VALUE ...]
Prints one line per binary: instructions, per TrainJob, task-clock ms, context switches,
reconciles. Several --bin directories are measured in turn, each on a fresh test bed. With
--callgrind the controller runs under valgrind's callgrind instead (about 50x slower; use a
smaller --n) and DIR keeps callgrind.out.<n> for callgrind_annotate.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "bench"))
import benchlib  # noqa: E402
from benchlib import JOBSETS, log  # noqa: E402


def perf_counts(path):
    """{event: count} from a `perf stat -x,` output file."""
    counts = {}
    with open(path) as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) < 3 or line.startswith("#"):
                continue
            try:
                counts[parts[2].split(":")[0]] = float(parts[0])
            except ValueError:
                pass
    return counts


def measure(bin_dir, n, workers, work, callgrind="", env=()):
    with benchlib.TestBed(os.path.join(work, "testbed")) as bed:
        api = bed.api()
        ns = "bench"
        api.create_namespace(ns)
        benchlib.create_trainjobs(bin_dir, bed, ns, n, work)
        out = os.path.join(work, "perf.txt")
        log_path = os.path.join(work, "controller.log")
        health, metrics = benchlib.free_port(), benchlib.free_port()
        if callgrind:
            os.makedirs(callgrind, exist_ok=True)
            wrap = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % os.path.join(
                os.path.abspath(callgrind), "callgrind.out.%d" % n)]
        else:
            wrap = ["perf", "stat", "-x,", "-o", out, "-e",
                    "instructions:u,task-clock,context-switches", "--"]
        cmd = wrap + [os.path.join(bin_dir, "trainer-controller"), "--kubeconfig", bed.kubeconfig,
                      "--trainjob-workers", str(workers),
                      "--health-probe-bind-address", "127.0.0.1:%d" % health,
                      "--metrics-bind-address", "127.0.0.1:%d" % metrics, "-v=1"]
        c = benchlib.Service(cmd, log_path, health_port=health, metrics_port=metrics,
                             env=dict(os.environ, **dict(e.split("=", 1) for e in env)))
        try:
            c.wait_ready(600)
            benchlib.wait_count(api, JOBSETS % ns, n, c, 600)
            benchlib.wait_settled(c, n, 600)
            reconciles, _ = benchlib.reconciles(c)
        finally:
            # SIGTERM to the controller itself (perf's child; valgrind runs it in its own
            # process): perf then prints and exits.
            pids = [str(c.pid)] if callgrind else subprocess.run(
                ["pgrep", "-P", str(c.pid)], capture_output=True, text=True).stdout.split()
            for pid in pids:
                os.kill(int(pid), signal.SIGTERM)
            c.proc.wait(300)
            c.log.close()
    return ({} if callgrind else perf_counts(out)), reconciles


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--workers", type=int, default=5)
    p.add_argument("--bin", action="append", default=[])
    p.add_argument("--callgrind", default="")
    p.add_argument("--env", action="append", default=[],
                   help="KEY=VALUE in the controller's environment (e.g. GLIBC_TUNABLES=...)")
    args = p.parse_args()
    for bin_dir in args.bin or [os.path.join(ROOT, "build/bin")]:
        with benchlib.work_dir("ctrl-instructions-") as work:
            counts, reconciles = measure(os.path.abspath(bin_dir), args.n, args.workers, work,
                                         args.callgrind, args.env)
        if args.callgrind:
            out = os.path.join(args.callgrind, "callgrind.out.%d" % args.n)
            total = subprocess.run(["callgrind_annotate", out], capture_output=True,
                                   text=True).stdout
            ir = next((int(line.split()[0].replace(",", "")) for line in total.splitlines()
                       if "PROGRAM TOTALS" in line), 0)
            print("%s: %.4g instructions (callgrind), %.0f per TrainJob, %d reconciles; %s" % (
                bin_dir, ir, ir / args.n, reconciles, out), flush=True)
            continue
        ins = counts.get("instructions", 0)
        if ins == 0:
            print("%s: perf counted no instructions (no hardware counters here, e.g. in a VM): "
                  "use --callgrind" % bin_dir, flush=True)
        print("%s: %.4g instructions, %.0f per TrainJob, task-clock %.0f ms, %d context switches, "
              "%d reconciles" % (bin_dir, ins, ins / args.n, counts.get("task-clock", 0),
                                 counts.get("context-switches", 0), reconciles), flush=True)


if __name__ == "__main__":
    main()

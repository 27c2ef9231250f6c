#!/usr/bin/env python3
"""The controller's cost curve: trainer-controller at 1k, 10k and 100k TrainJobs and upstream
Kubeflow Trainer v2.3.0's manager at 1k and 10k, against bare-client floors, each size on fresh
test beds (hack/testbed, no JobSet controller, so nothing changes a JobSet's status).

Units of work, each on a test bed of its own and written to RESULTS/<unit>.json as it finishes (a
controller's log to RESULTS/<unit>.log);
a rerun skips the units already there (resumable; --force redoes them):

  floor-<kind>-N-{before,after} for each kind of --floors (owned, writes, watched, ordered,
  jobsets)
      trainer-bench-apply (W workers, the controller's libcurl client) server-side applies what
      trainer-render builds for one TrainJob (the applied-hash annotation added), N times:
        owned    the controller's own writes on the controller's starting cluster: the N
                 TrainJobs are created first (as for ours-N), then for each the runtime snapshot
                 ConfigMap and the JobSet, owned by it (ownerReferences with its uid, as the
                 controller writes them: the garbage collector tracks every owned object), the
                 two of one TrainJob sent at once: 2 objects per TrainJob.
                 The 1.2x goal is judged against this floor.
        writes   the same two objects per TrainJob without ownerReferences, on an empty cluster
                 (no TrainJobs): the floor of rounds 1-3, kept for comparison.
        watched  the same writes while one client watches JobSets and ConfigMaps in all
                 namespaces, as the controller's informers do, and reads every event: what
                 serving a controller's watches adds to the apiserver's work, without a
                 controller's own. Not a goal; it shows how much of a ratio is watch traffic.
        ordered  the same writes, but the JobSet only once the ConfigMap is answered: the
                 floor of any controller that keeps upstream's apply order with W workers (two
                 round trips per TrainJob). Not a goal; it shows what that order costs.
        jobsets  the JobSets alone: 1 object per TrainJob.
      Each floor records the CPU seconds every test-bed process (kube-apiserver, etcd,
      kube-controller-manager, and trainer-bench-apply itself) spent on it
      (testbed_cpu_seconds), and the apiserver's request and watch-event counters that moved
      (apiserver_counts).
      Each floor is measured before and after the controllers of its size, in mirrored order,
      and the two are averaged: the machine's speed drifts, and bracketing evens that out.
      Before any unit's timed part, the kube-controller-manager must be watching TrainJobs,
      JobSets and ConfigMaps (its garbage collector and quota monitors find a new CRD by
      discovery, every 30 s) and have gone quiet, so that its first list of the TrainJobs never
      falls inside one unit's window and outside another's.
  ours-N, upstream-N
      1. N TrainJobs of the torch-distributed runtime (2 nodes) are created (16 workers) while
         no controller runs, so it finds them all at once; then the wait for the
         kube-controller-manager above.
      2. The controller starts. Measured: seconds from process start (first lists included)
         until the apiserver holds N JobSets (a list with limit=1 counts them, polled less
         often while far from the end); CPU seconds (utime+stime), its own and each test-bed
         process's (testbed_cpu_seconds: set beside the floors', which process a ratio's extra
         seconds went to), the apiserver's counters that moved (apiserver_counts); peak RSS
         (VmHWM) over the first wave; RSS once its work queue is empty and no reconcile
         happened for 3 s ("settled").
      3. Restart with N converged TrainJobs: SIGTERM, start again; seconds until /readyz; one
         new TrainJob: seconds from just before its create until a watch opened beforehand
         sees its JobSet; RSS 2 s later; RSS and peak once every TrainJob has been reconciled
         again and the queue stayed empty for 3 s ("after restart").
      trainer-controller runs with --trainjob-workers W; upstream with its shipped
      Configuration (5 TrainJob workers, client QPS 50 / burst 100; --upstream-qps overrides),
      leader election and cert management off.

Ratio = controller seconds / floor seconds. At the end, every unit of RESULTS is combined into
RESULTS/scale.json (the document hack/bench/plot.py reads) and printed as a table.

How long it takes (2 cores, idle): 1k about 3 min (8 min at load average 22), 10k about 25 min
(upstream alone ~12 of them at QPS 50), 100k 41 min with --floors owned (2026-12-07: each unit
10-11 min of work and 2-3.5 min to create the TrainJobs; the two writes floors add ~20 min;
etcd then holds ~0.6 GB). Run the sizes apart with --sizes, and add upstream's with
--upstream-sizes: the results directory collects them.

Usage: hack/bench/scale.py [--sizes 1000,10000,100000] [--upstream-sizes 1000,10000]
         [--floors owned,writes,watched,ordered,jobsets] [--workers 5] [--results DIR] [--force]
         [--bin build/bin] [--upstream-bin PATH] [--upstream-qps Q --upstream-burst B]
         [--profile-seconds S]
--sizes "" or --upstream-sizes "" skips that side; --floors "" skips the floors.
--profile-seconds S: the test beds' apiservers serve Go's pprof (TESTBED_PROFILING=1), and each
unit's timed part (a floor's writes; a controller's first wave from its start) runs under an
S-second CPU profile of the apiserver, written to RESULTS/<unit>.apiserver-cpu.pb.gz: `go tool
pprof -top -cum` of a floor's and ours' side by side shows what the controller costs the
apiserver beyond the writes. Take S shorter than the shortest timed part (a unit waits for its
profile); sampling at 100 Hz costs the apiserver little, but compare profiled runs with each
other.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "bench"))
import benchlib  # noqa: E402
from benchlib import JOBSETS, bench_apply, bench_spec, log, metric, metric_sum, sh  # noqa: E402


def render_objects(bin_dir, work, owned):
    """The controller's writes for one TrainJob as trainer-bench-apply templates: the runtime
    snapshot ConfigMap and the JobSet trainer-render builds, an applied-hash annotation of the
    controller's size added, and the TrainJob's name replaced by "{name}" (bench_apply.cc), also
    in the ownerReferences when OWNED (the uid is set per TrainJob by --owners), which are removed
    otherwise. Returns {"configmap": path, "jobset": path}."""
    tj = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
          "metadata": {"name": "bench", "namespace": "default"}, "spec": bench_spec()}
    with open(os.path.join(work, "tj.json"), "w") as f:
        json.dump(tj, f)
    out = sh(os.path.join(bin_dir, "trainer-render"), "-f", benchlib.RUNTIME_FILE, "-f",
             os.path.join(work, "tj.json"), "-o", "json")
    items = json.loads(out)["items"]
    paths = {}
    for kind in ("ConfigMap", "JobSet"):
        obj = [o for o in items if o["kind"] == kind][0]
        meta = obj["metadata"]
        if owned:
            for ref in meta["ownerReferences"]:
                if ref["kind"] == "TrainJob":
                    ref["name"] = "{name}"
        else:
            meta.pop("ownerReferences", None)
        meta.setdefault("annotations", {})["trainer.kubeflow.org/applied-hash"] = "0" * 16
        meta["name"] = meta["name"].replace("bench", "{name}", 1)
        path = os.path.join(work, "%s.json" % kind.lower())
        with open(path, "w") as f:
            json.dump(obj, f)
        paths[kind.lower()] = path
    return paths


FLOOR_KINDS = ("owned", "writes", "watched", "ordered", "jobsets")

# What a controller's informers watch of the floor's writes (all namespaces, as ours does).
WATCHED = ("/apis/jobset.x-k8s.io/v1alpha2/jobsets", "/api/v1/configmaps")


def run_floor(args, work, kind, n, profile):
    templates = render_objects(args.bin, work, owned=kind == "owned")
    files = [templates["jobset"]] if kind == "jobsets" else [templates["configmap"],
                                                              templates["jobset"]]
    flags = ["--in-order"] if kind == "ordered" else []
    with benchlib.TestBed(os.path.join(work, "testbed")) as bed:
        bed.api().create_namespace("floor")
        if kind == "owned":
            log("floor-owned-%d: creating %d TrainJobs" % (n, n))
            benchlib.create_trainjobs(args.bin, bed, "floor", n, work)
            flags += ["--owners", trainjob_uids(bed, "floor", work)]
        wait_gc_watching(bed)
        watches = benchlib.Watches(bed, WATCHED if kind == "watched" else ())
        with watches:
            cpu0, client0 = bed.cpu_seconds(), children_cpu_seconds()
            req0 = bed.apiserver_counts()
            with benchlib.apiserver_profile(bed, profile, args.profile_seconds):
                r = bench_apply(args.bin, bed, files, "floor", n, args.workers, *flags)
            cpu = cpu_delta(cpu0, bed.cpu_seconds())
            cpu["trainer-bench-apply"] = round(children_cpu_seconds() - client0, 2)
            requests = count_delta(req0, bed.apiserver_counts())
            if kind == "watched":
                # Every write must reach the watcher, or this floor measured less than it says.
                benchlib.wait_for(lambda: watches.events() >= r["objects"], 60,
                                  "the watches to report %d events" % r["objects"])
    if r["failures"]:
        raise RuntimeError("floor %s at %d: %d failed requests" % (kind, n, r["failures"]))
    out = {"kind": kind, "n": n, "objects": r["objects"], "seconds": r["seconds"],
           "workers": args.workers, "testbed_cpu_seconds": cpu, "apiserver_counts": requests}
    if kind == "watched":
        out.update(watch_events=watches.events(), watch_mb=round(watches.bytes() / 1e6, 1))
    return out


def trainjob_uids(bed, ns, work):
    """A trainer-bench-apply --owners file: "<name> <uid>" of every TrainJob in NS."""
    path = os.path.join(work, "owners.txt")
    text = bed.kubectl("get", "trainjobs.trainer.kubeflow.org", "-n", ns, "-o",
                       "jsonpath={range .items[*]}{.metadata.name} {.metadata.uid}{\"\\n\"}{end}")
    with open(path, "w") as f:
        f.write(text)
    return path


# What the kube-controller-manager's garbage collector and quota monitors watch of ours.
GC_WATCHED = ("trainjobs", "jobsets", "configmaps")


def wait_gc_watching(bed, quiet_cpu=0.1, timeout=120):
    """Waits until the kube-controller-manager watches GC_WATCHED (open WATCH requests while no
    controller runs are its own) and then spends under QUIET_CPU CPU seconds in a second."""
    def watching():
        text = bed.kubectl("get", "--raw", "/metrics")
        return all(metric_sum(text, "apiserver_longrunning_requests", verb="WATCH", resource=r) > 0
                   for r in GC_WATCHED)
    t = time.time()
    benchlib.wait_for(watching, timeout,
                      "kube-controller-manager to watch %s" % ", ".join(GC_WATCHED), every=1)

    def quiet():
        before = bed.cpu_seconds().get("kube-controller-manager", 0.0)
        time.sleep(1)
        return bed.cpu_seconds().get("kube-controller-manager", 0.0) - before < quiet_cpu
    benchlib.wait_for(quiet, timeout, "kube-controller-manager to go quiet")
    log("kube-controller-manager watching and quiet after %.1f s" % (time.time() - t))


def children_cpu_seconds():
    """CPU seconds of this process's waited-for children (trainer-bench-apply)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cpu_delta(before, after):
    """CPU seconds each test-bed process spent between two Bed.cpu_seconds() readings."""
    return {k: round(after[k] - before.get(k, 0.0), 2) for k in after}


def count_delta(before, after):
    """The apiserver counters that moved between two Bed.apiserver_counts() readings."""
    d = {k: int(v - before.get(k, 0)) for k, v in after.items()}
    return {k: v for k, v in sorted(d.items()) if v}


def new_trainjob_seconds(bed, ns, name="after-restart"):
    """Seconds from just before `kubectl create` of one new TrainJob (its start-up included: an
    upper bound) until a watch opened beforehand reports its JobSet. The watch lists too, so a
    JobSet made before the watch was established is reported (late, never missed)."""
    return new_trainjob_timing(bed, ns, name)[0]


def new_trainjob_timing(bed, ns, name="after-restart"):
    """new_trainjob_seconds, and the seconds `kubectl create` took (its start-up and the create;
    the controller's part is the difference)."""
    tj = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
          "metadata": {"name": name, "namespace": ns}, "spec": bench_spec()}
    watch = subprocess.Popen([bed.kubectl_bin, "--kubeconfig", bed.kubeconfig, "get",
                              "jobsets.jobset.x-k8s.io", "-n", ns, "--watch", "-o", "name",
                              "--field-selector", "metadata.name=" + name],
                             stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1)
        t = time.time()
        bed.kubectl("create", "-f", "-", stdin=json.dumps(tj))
        created = time.time() - t
        watch.stdout.readline()
        return time.time() - t, created
    finally:
        watch.kill()
        watch.wait()


def run_controller(args, work, impl, n, profile):
    timeout = max(600, n // 10)
    ctrls = benchlib.Controllers(impl, args.bin, args.workers, args.upstream_bin,
                                 args.upstream_qps, args.upstream_burst)
    r = dict(ctrls.describe(), n=n)
    with benchlib.TestBed(os.path.join(work, "testbed")) as bed:
        api = bed.api()
        ns = "bench"
        api.create_namespace(ns)
        log("%s-%d: creating %d TrainJobs" % (impl, n, n))
        r["create_seconds"] = round(benchlib.create_trainjobs(args.bin, bed, ns, n, work), 2)
        wait_gc_watching(bed)

        log("%s-%d: first wave" % (impl, n))
        log_path = os.path.join(work, "%s-%d.log" % (impl, n))
        cpu0, req0 = bed.cpu_seconds(), bed.apiserver_counts()
        c = ctrls.start(bed, work, log_path)
        try:
            with benchlib.apiserver_profile(bed, profile, args.profile_seconds):
                r["ready_seconds"] = round(c.wait_ready(timeout), 2)
                r["seconds"] = round(benchlib.wait_count(api, JOBSETS % ns, n, c, timeout * 6),
                                     2)
            # Which process paid for the first wave: with the floors' figures, where a ratio's
            # extra seconds went (the controller's own CPU is cpu_seconds).
            r["testbed_cpu_seconds"] = cpu_delta(cpu0, bed.cpu_seconds())
            r["apiserver_counts"] = count_delta(req0, bed.apiserver_counts())
            u = c.usage()
            r["cpu_seconds"], r["peak_rss_mb"] = u["cpu_seconds"], u["peak_rss_mb"]
            if impl == "ours":
                r["applied_metric"] = metric(
                    c.scrape(), "trainer_trainjob_objects_applied_seconds_count")
            r["settled_seconds"] = round(benchlib.wait_settled(c, n, timeout), 2)
            u = c.usage()
            r.update(settled_rss_mb=u["rss_mb"], settled_peak_rss_mb=u["peak_rss_mb"],
                     settled_cpu_seconds=u["cpu_seconds"])
            r["reconcile_errors"] = metric_sum(c.scrape(),
                                               "controller_runtime_reconcile_errors_total",
                                               controller="trainjob_controller")
        finally:
            c.stop()
        r["jobsets"] = api.count(JOBSETS % ns)
        r["etcd_db_mb"], r["etcd_db_in_use_mb"] = bed.etcd_db_mb()
        apiserver = benchlib.proc_cpu_rss(bed.pid("kube-apiserver"))
        r["apiserver_peak_rss_mb"] = benchlib.mb(apiserver[1])

        log("%s-%d: restart" % (impl, n))
        cpu0 = bed.cpu_seconds()
        c = ctrls.start(bed, work, log_path)
        try:
            r["restart_ready_seconds"] = round(c.wait_ready(timeout), 2)
            r["restart_ready_testbed_cpu_seconds"] = cpu_delta(cpu0, bed.cpu_seconds())
            r["new_trainjob_after_restart_seconds"] = round(new_trainjob_seconds(bed, ns), 3)
            time.sleep(2)
            r["restart_rss_mb"] = c.usage()["rss_mb"]
            r["restart_settled_seconds"] = round(benchlib.wait_settled(c, n + 1, timeout), 2)
            u = c.usage()
            r.update(restart_settled_rss_mb=u["rss_mb"], restart_peak_rss_mb=u["peak_rss_mb"],
                     restart_cpu_seconds=u["cpu_seconds"])
        finally:
            c.stop()
    r["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    return r


def units(args):
    """The units to run, in order: per size, floors before, ours, floors after (mirrored),
    upstream."""
    floors = [f for f in args.floors.split(",") if f]
    sizes = sorted({int(x) for x in (args.sizes + "," + args.upstream_sizes).split(",") if x})
    ours = {int(x) for x in args.sizes.split(",") if x}
    upstream = {int(x) for x in args.upstream_sizes.split(",") if x}
    out = []
    for n in sizes:
        out += [("floor-%s-%d-before" % (f, n), "floor", f, n) for f in floors]
        if n in ours:
            out.append(("ours-%d" % n, "controller", "ours", n))
        out += [("floor-%s-%d-after" % (f, n), "floor", f, n) for f in reversed(floors)]
        if n in upstream:
            out.append(("upstream-%d" % n, "controller", "upstream", n))
    return out


def combine(args, results_dir):
    """Every unit in RESULTS_DIR as one document: per implementation and N, its figures and the
    mean floors with ratios."""
    units_ = {}
    for f in sorted(os.listdir(results_dir)):
        if f.endswith(".json") and f != "scale.json":
            with open(os.path.join(results_dir, f)) as fh:
                units_[f[:-5]] = json.load(fh)
    floors = {}
    for name, u in units_.items():
        if name.startswith("floor-"):
            r = u["result"]
            floors.setdefault((r["kind"], r["n"]), []).append(r["seconds"])
    rows = []
    for name, u in sorted(units_.items(), key=lambda kv: (kv[1]["result"].get("n", 0), kv[0])):
        if name.startswith("floor-"):
            continue
        r = dict(u["result"], date=u["date"], commit=u["commit"],
                 load_average_start=u["load_average_start"])
        for kind in FLOOR_KINDS:
            runs = floors.get((kind, r["n"]), [])
            if runs and r.get("seconds"):
                mean = sum(runs) / len(runs)
                r["floor_%s_seconds" % kind] = round(mean, 2)
                r["floor_%s_runs" % kind] = runs
                r["ratio_%s" % kind] = round(r["seconds"] / mean, 2)
        rows.append(r)
    doc = benchlib.envelope("scale", args)
    doc["results"] = rows
    doc["floors"] = [{"kind": k, "n": n, "runs": v} for (k, n), v in sorted(floors.items())]
    return doc


def table(rows):
    def f(v, fmt="%.2f"):
        return fmt % v if isinstance(v, (int, float)) else "–"
    lines = ["| impl | N | seconds | floor: owned writes s | **ratio** | floor: writes s | "
             "ratio | floor: writes, watched s | "
             "ratio | floor: writes in order s | ratio | floor: JobSets s | ratio | CPU s | "
             "peak RSS MB | settled RSS MB | restart: ready s | new TrainJob s | "
             "RSS after restart MB (peak) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = [r["impl"], str(r["n"]), f(r.get("seconds")), f(r.get("floor_owned_seconds")),
                 "**%s**" % f(r.get("ratio_owned")), f(r.get("floor_writes_seconds")),
                 f(r.get("ratio_writes")), f(r.get("floor_watched_seconds")),
                 f(r.get("ratio_watched")), f(r.get("floor_ordered_seconds")),
                 f(r.get("ratio_ordered")), f(r.get("floor_jobsets_seconds")),
                 f(r.get("ratio_jobsets")), f(r.get("cpu_seconds")),
                 f(r.get("peak_rss_mb"), "%.1f"), f(r.get("settled_rss_mb"), "%.1f"),
                 f(r.get("restart_ready_seconds")),
                 f(r.get("new_trainjob_after_restart_seconds"), "%.3f"),
                 "%s (%s)" % (f(r.get("restart_settled_rss_mb"), "%.1f"),
                              f(r.get("restart_peak_rss_mb"), "%.1f"))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--upstream-sizes", default="1000,10000")
    ap.add_argument("--floors", default="owned,writes")
    ap.add_argument("--workers", type=int, default=5)
    ap.add_argument("--results", default=os.path.join(ROOT, ".local", "bench", "scale"))
    ap.add_argument("--force", action="store_true", help="redo units already in --results")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--upstream-bin", default="")
    ap.add_argument("--upstream-qps", type=float, default=None)
    ap.add_argument("--upstream-burst", type=int, default=None)
    ap.add_argument("--profile-seconds", type=int, default=0)
    args = ap.parse_args()
    if args.profile_seconds:
        os.environ["TESTBED_PROFILING"] = "1"  # the test beds' apiservers serve /debug/pprof
    todo = units(args)
    if any(u[2] == "upstream" for u in todo):
        args.upstream_bin = benchlib.upstream_binary(args.upstream_bin)
    os.makedirs(args.results, exist_ok=True)
    for name, what, which, n in todo:
        path = os.path.join(args.results, name + ".json")
        if os.path.exists(path) and not args.force:
            log("%s: done before (%s), skipped" % (name, path))
            continue
        log("%s: start (load average %.1f)" % (name, os.getloadavg()[0]))
        doc = benchlib.envelope("scale-unit", args)
        t = time.time()
        with benchlib.work_dir("bench-scale-") as work:
            profile = path[:-len(".json")] + ".apiserver-cpu.pb.gz"
            doc["result"] = (run_floor(args, work, which, n, profile) if what == "floor"
                             else run_controller(args, work, which, n, profile))
            controller_log = os.path.join(work, "%s-%d.log" % (which, n))
            if os.path.exists(controller_log):  # kept next to the result, for what it did
                shutil.copyfile(controller_log, path[:-len(".json")] + ".log")
        doc["wall_seconds"] = round(time.time() - t, 1)
        doc["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(path + ".tmp", path)
        log("%s: %s (%.0f s)" % (name, json.dumps(doc["result"]), doc["wall_seconds"]))
    doc = combine(args, args.results)
    text = table(doc["results"])
    print()
    print(text)
    benchlib.write_results(doc, os.path.join(args.results, "scale"), text)


if __name__ == "__main__":
    main()

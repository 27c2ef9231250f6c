#!/usr/bin/env python3
"""Mass deletion: the API requests a controller makes while N converged TrainJobs are deleted at
once, for trainer-controller and upstream Kubeflow Trainer v2.3.0's manager, counted by the
kube-apiserver's audit log.

For each controller, on a fresh test bed (hack/testbed/up.sh: the garbage collector runs in
kube-controller-manager) whose apiserver is restarted with an audit policy that records every
request of user "bench-controller" (Metadata level) and nothing else:
  1. N TrainJobs of the torch-distributed runtime are created; the controller starts as
     "bench-controller" (a client certificate of the test bed's CA, group system:masters) and
     converges them (N JobSets and N snapshot ConfigMaps), then goes quiet.
  2. All N are deleted with one request (DELETE on the collection, --mode: background
     propagation, as `kubectl delete` does; foreground, where the garbage collector deletes the
     owned objects while the TrainJobs still exist; or the namespace).
  3. Until every TrainJob, JobSet and snapshot ConfigMap is gone and the controller's queue has
     been empty for 5 s (or --gone-timeout passed: a controller that re-creates what the garbage
     collector deletes never lets a foreground deletion finish; then what is left is recorded),
     the audit events of requests made in that window by bench-controller are counted by verb,
     resource and response code (a watch counts once, when it starts).
Also recorded: seconds until everything was gone, the controller's reconciles and CPU seconds
in the window.

Usage: hack/bench/deletion/run.py [--n 10000] [--impl ours,upstream] [--mode background]
         [--gone-timeout 600] [--bin build/bin] [--upstream-bin PATH] [--out BASE]
Writes BASE.json and BASE.txt (default .local/bench/deletion-<time>). At N=10,000 about
5 min for ours and 10 min for upstream (its client's QPS 50 sets the pace of converging).
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "bench"))
import benchlib  # noqa: E402
from benchlib import CONFIGMAPS, JOBSETS, TRAINJOBS, log  # noqa: E402

USER = "bench-controller"
NS = "bench"
POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [%s]
- level: None
""" % USER


def enable_audit(bed, work):
    """Restarts the test bed's apiserver with the audit policy; returns the log's path."""
    policy = os.path.join(work, "audit-policy.yaml")
    with open(policy, "w") as f:
        f.write(POLICY)
    path = os.path.join(work, "audit.log")
    subprocess.run([os.path.join(ROOT, "hack/testbed/restart-apiserver.sh"),
                    "--down-seconds", "0", "--set-flag", "audit-policy-file=" + policy,
                    "--set-flag", "audit-log-path=" + path, "--set-flag", "audit-log-maxsize=0"],
                   env=dict(os.environ, TESTBED_DIR=bed.dir), check=True,
                   stdout=subprocess.DEVNULL)
    return path


def count_requests(audit_log, offset, since):
    """Requests of USER received at or after SINCE (RFC 3339 text compare) in the audit log
    from byte OFFSET on: {"total", "by_verb_resource": {"verb resource[/sub] code": n},
    "codes": {code: n}}."""
    seen = set()
    by = collections.Counter()
    codes = collections.Counter()
    with open(audit_log) as f:
        f.seek(offset)
        for line in f:
            e = json.loads(line)
            if e.get("user", {}).get("username") != USER or e["auditID"] in seen:
                continue
            if e.get("requestReceivedTimestamp", "") < since:
                continue
            seen.add(e["auditID"])
            ref = e.get("objectRef") or {}
            res = ref.get("resource", e.get("requestURI", "?"))
            if ref.get("subresource"):
                res += "/" + ref["subresource"]
            code = str((e.get("responseStatus") or {}).get("code", ""))
            by["%s %s %s" % (e["verb"], res, code)] += 1
            codes[code] += 1
    return {"total": len(seen), "by_verb_resource": dict(sorted(by.items())),
            "codes": dict(sorted(codes.items()))}


def delete_all(api, mode):
    if mode == "namespace":
        status, body = api.call("DELETE", "/api/v1/namespaces/" + NS)
    else:
        status, body = api.call("DELETE", TRAINJOBS % NS, {
            "kind": "DeleteOptions", "apiVersion": "v1",
            "propagationPolicy": "Foreground" if mode == "foreground" else "Background"})
    if status not in (200, 202):
        raise RuntimeError("delete (%s): %s %s" % (mode, status, body))


def wait_gone(api, mode, deadline):
    """Whether every TrainJob, JobSet and snapshot ConfigMap of NS (or NS itself) is gone
    before DEADLINE."""
    def gone():
        if mode == "namespace":
            return api.call("GET", "/api/v1/namespaces/" + NS)[0] == 404
        # The namespace's kube-root-ca.crt stays.
        return (api.count(TRAINJOBS % NS) == 0 and api.count(JOBSETS % NS) == 0 and
                api.count(CONFIGMAPS % NS) <= 1)
    while time.time() < deadline:
        if gone():
            return True
        time.sleep(0.2)
    return False


def run(args, impl, n, mode):
    with benchlib.work_dir("bench-deletion-") as work:
        return run_in(args, impl, n, mode, work)


def run_in(args, impl, n, mode, work):
    ctrls = benchlib.Controllers(impl, args.bin, 5, args.upstream_bin)
    r = dict(ctrls.describe(), n=n, mode=mode)
    timeout = max(600, n // 10)
    with benchlib.TestBed(os.path.join(work, "testbed")) as bed:
        audit = enable_audit(bed, work)
        bed = benchlib.Bed(bed.dir)  # a fresh client: the apiserver restarted
        api = bed.api()
        api.create_namespace(NS)
        log("%s: creating %d TrainJobs" % (impl, n))
        benchlib.create_trainjobs(args.bin, bed, NS, n, work)
        kubeconfig = bed.user_kubeconfig(USER, os.path.join(work, "controller.kubeconfig"))
        c = ctrls.start(bed, work, os.path.join(work, "%s.log" % impl), kubeconfig=kubeconfig)
        try:
            c.wait_ready(timeout)
            log("%s: converging" % impl)
            benchlib.wait_count(api, JOBSETS % NS, n, c, timeout * 6)
            benchlib.wait_settled(c, n, timeout, quiet=5)
            before_total, _ = benchlib.reconciles(c)
            before_cpu = c.usage()["cpu_seconds"]
            offset = os.path.getsize(audit)
            since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - 1))
            log("%s: deleting (%s)" % (impl, mode))
            t = time.time()
            delete_all(api, mode)
            if wait_gone(api, mode, t + args.gone_timeout):
                r["gone_seconds"] = round(time.time() - t, 2)
                total, _ = benchlib.reconciles(c)
                benchlib.wait_settled(c, total, timeout, quiet=5)
            else:
                r["gone_seconds"] = None
                r["left_after_timeout"] = {k: api.count(p % NS) for k, p in (
                    ("trainjobs", TRAINJOBS), ("jobsets", JOBSETS), ("configmaps", CONFIGMAPS))}
                log("%s: not gone after %d s: %s" % (impl, args.gone_timeout,
                                                     r["left_after_timeout"]))
            after_total, _ = benchlib.reconciles(c)
            r["reconciles"] = after_total - before_total
            r["cpu_seconds"] = round(c.usage()["cpu_seconds"] - before_cpu, 2)
            r["window_seconds"] = round(time.time() - t, 2)
        finally:
            c.stop()
        time.sleep(1)  # the audit backend flushes in batches
        r["requests"] = count_requests(audit, offset, since)
    return r


def table(rows):
    lines = ["| controller | mode | N | API requests | per TrainJob | by verb and resource | "
             "reconciles | CPU s | all gone after s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gone = ("%.1f" % r["gone_seconds"] if r["gone_seconds"] is not None else
                "not after %d s (left: %s)" % (r["window_seconds"], ", ".join(
                    "%s %d" % kv for kv in r["left_after_timeout"].items())))
        lines.append("| %s | %s | %d | **%d** | %.2f | %s | %d | %.2f | %s |" % (
            r["impl"], r["mode"], r["n"], r["requests"]["total"], r["requests"]["total"] / r["n"],
            ", ".join("%s %d" % kv for kv in r["requests"]["by_verb_resource"].items()) or "none",
            r["reconciles"], r["cpu_seconds"], gone))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--impl", default="ours,upstream")
    ap.add_argument("--mode", default="background",
                    help="comma-separated: background, foreground, namespace")
    ap.add_argument("--gone-timeout", type=float, default=600,
                    help="seconds to wait for everything to be gone")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--upstream-bin", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    impls = [i for i in args.impl.split(",") if i]
    if "upstream" in impls:
        args.upstream_bin = benchlib.upstream_binary(args.upstream_bin)
    out_base = args.out or benchlib.default_out("deletion")
    doc = benchlib.envelope("deletion", args)
    rows = []
    for mode in args.mode.split(","):
        for impl in impls:
            rows.append(run(args, impl, args.n, mode))
            log(json.dumps(rows[-1]))
    doc["results"] = rows
    text = table(rows)
    print(text)
    benchlib.write_results(doc, out_base, text)


if __name__ == "__main__":
    main()

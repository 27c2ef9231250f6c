#!/usr/bin/env python3
"""What the kube-apiserver spends serving each start-up request of trainer-controller, asked the
way the controller asks today and the ways it could ask instead: CPU seconds of the apiserver
process (utime + stime from /proc) around one request at a time, which holds on a shared machine
where seconds do not.

  hack/bench/list_cost.py --bed DIR [--rounds 5] [--resources trainjobs,jobsets,configmaps]
                          [--variants today,rv0,...] [--out BASE]

DIR is a running test bed holding the objects (e.g. `hack/bench/restart.py prepare --n 10000`).
Requests go through the curl command-line tool over HTTP/2 with the bed's admin certificate and
trainer-controller's User-Agent (the apiserver pretty-prints JSON for curl's), as the controller's
libcurl does; each response is read to its end (a watch-list until its
`k8s.io/initial-events-end` bookmark, then the connection is closed). Variants run round-robin,
so drift in the background load spreads over all of them; the apiserver's idle CPU rate, taken
before the rounds, is subtracted over each request's duration. Prints a table of medians (CPU
seconds, seconds, response bytes, items) and writes BASE.{txt,json}.

Variants:
  today     GET <collection> (no resourceVersion, no limit: a consistent read served from the
            watch cache), Accept: application/json, any Accept-Encoding (gzip): the controller's
  rv0       the same with resourceVersion=0 (any version from the watch cache)
  identity  as today without Accept-Encoding
  pages500 / pages5000   limit=500 / 5000, following continue tokens
  watchlist watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&
            allowWatchBookmarks=true (resourceVersion unset): the initial events as a stream
  watchlist-rv0  the same with resourceVersion=0
  meta      as today, Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1
  protobuf  as today, Accept: application/vnd.kubernetes.protobuf (built-in kinds only)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "bench"))
import benchlib  # noqa: E402
from benchlib import log  # noqa: E402

PATHS = {
    "trainjobs": "/apis/trainer.kubeflow.org/v1alpha1/trainjobs",
    "jobsets": "/apis/jobset.x-k8s.io/v1alpha2/jobsets",
    "configmaps": "/api/v1/configmaps",
    "secrets": "/api/v1/secrets",
    "trainingruntimes": "/apis/trainer.kubeflow.org/v1alpha1/trainingruntimes",
    "clustertrainingruntimes": "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes",
    "namespaces": "/api/v1/namespaces",
}
BUILTIN = {"configmaps", "secrets", "namespaces"}
JSON = "application/json, application/jwk-set+json"  # the controller's Accept
META = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
PROTO = "application/vnd.kubernetes.protobuf"
WATCHLIST = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&" \
            "allowWatchBookmarks=true&timeoutSeconds=600"
VARIANTS = ("today", "rv0", "identity", "pages500", "pages5000", "watchlist", "watchlist-rv0",
            "meta", "protobuf")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


class Curl:
    def __init__(self, bed):
        with open(bed.kubeconfig) as f:
            server = benchlib.yaml.safe_load(f)["clusters"][0]["cluster"]["server"]
        self.server = server.rstrip("/")
        pki = bed.pki
        # The controller's User-Agent: the apiserver pretty-prints JSON for curl's own.
        self.base = ["curl", "-sS", "--http2", "-A", "trainer-controller",
                     "--cacert", os.path.join(pki, "ca.crt"),
                     "--cert", os.path.join(pki, "admin.crt"), "--key",
                     os.path.join(pki, "admin.key")]

    def get(self, path, accept, gzip, out):
        """One GET, body to OUT (decoded when gzipped); (HTTP code, bytes on the wire)."""
        cmd = self.base + ["-H", "Accept: " + accept, "-o", out, "-w",
                           "%{http_code} %{size_download}"]
        if gzip:
            cmd.append("--compressed")
        p = subprocess.run(cmd + [self.server + path], capture_output=True, text=True, check=True)
        code, size = p.stdout.split()
        return int(code), int(size)

    def watch_until_synced(self, path):
        """Reads a watch-list until the bookmark that ends the initial events; (events, bytes)."""
        p = subprocess.Popen(self.base + ["-N", "--compressed", "-H", "Accept: " + JSON,
                                          self.server + path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        events = size = 0
        try:
            for line in p.stdout:
                size += len(line)
                if line.startswith(b'{"type":"BOOKMARK"'):
                    if b'"k8s.io/initial-events-end":"true"' in line:
                        return events, size
                    continue
                if line.startswith(b'{"type":"ERROR"'):
                    raise RuntimeError("watch-list %s: %s" % (path, line[:300]))
                events += 1
            raise RuntimeError("watch-list %s ended without the initial-events-end bookmark "
                               "(%d events): %s" % (path, events, p.stderr.read()[:300]))
        finally:
            p.kill()
            p.wait()


def one(curl, resource, variant, work):
    """(items, bytes) of one request (or a paged list's requests) of VARIANT."""
    path = PATHS[resource]
    out = os.path.join(work, "body")
    if variant.startswith("watchlist"):
        q = WATCHLIST + ("&resourceVersion=0" if variant == "watchlist-rv0" else "")
        return curl.watch_until_synced(path + "?" + q)
    if variant.startswith("pages"):
        limit = int(variant[len("pages"):])
        token, items, size = "", 0, 0
        while True:
            q = "?limit=%d" % limit + ("&continue=" + token if token else "")
            code, n = curl.get(path + q, JSON, True, out)
            if code != 200:
                raise RuntimeError("%s%s: HTTP %d" % (path, q, code))
            with open(out) as f:
                doc = json.load(f)
            items += len(doc.get("items") or [])
            size += n
            token = doc.get("metadata", {}).get("continue", "")
            if not token:
                return items, size
    accept = {"meta": META, "protobuf": PROTO}.get(variant, JSON)
    q = "?resourceVersion=0" if variant == "rv0" else ""
    code, size = curl.get(path + q, accept, variant != "identity", out)
    if code != 200:
        raise RuntimeError("%s%s (%s): HTTP %d" % (path, q, accept, code))
    items = -1
    if variant != "protobuf":
        with open(out) as f:
            items = len(json.load(f).get("items") or [])
    return items, size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bed", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--resources", default="trainjobs,jobsets,configmaps")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--idle-seconds", type=float, default=10)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    bed = benchlib.Bed(os.path.abspath(args.bed))
    pid = bed.pid("kube-apiserver")
    curl = Curl(bed)
    resources = args.resources.split(",")
    variants = [v for v in args.variants.split(",") if v]
    cells = [(r, v) for r in resources for v in variants
             if not (v == "protobuf" and r not in BUILTIN)]

    c0, t0 = proc_cpu(pid), time.time()
    time.sleep(args.idle_seconds)
    idle_rate = (proc_cpu(pid) - c0) / (time.time() - t0)
    log("apiserver idle: %.3f CPU s/s" % idle_rate)

    samples = {cell: [] for cell in cells}
    with tempfile.TemporaryDirectory(prefix="bench-list-cost-") as work:
        for rnd in range(args.rounds):
            order = cells if rnd % 2 == 0 else list(reversed(cells))
            for cell in order:
                time.sleep(0.5)  # let the previous response's garbage be collected apart
                c0, t0 = proc_cpu(pid), time.time()
                items, size = one(curl, cell[0], cell[1], work)
                dt = time.time() - t0
                cpu = proc_cpu(pid) - c0
                samples[cell].append({"cpu_seconds": round(cpu, 3),
                                      "net_cpu_seconds": round(cpu - idle_rate * dt, 3),
                                      "seconds": round(dt, 3), "bytes": size, "items": items})
            log("round %d done (load average %.1f)" % (rnd, os.getloadavg()[0]))

    doc = benchlib.envelope("list_cost", args)
    doc["idle_cpu_per_second"] = round(idle_rate, 4)
    doc["results"] = []
    # The median leaves out the Go GC cycles a request happens to pay for (they land on
    # whichever request is running); the mean spreads them.
    lines = ["| resource | variant | items | bytes on the wire | apiserver CPU s, median / mean "
             "(net of idle) | min-max | seconds |", "|---|---|---|---|---|---|---|"]
    for (r, v), ss in samples.items():
        cpu = [s["net_cpu_seconds"] for s in ss]
        med, mean = statistics.median(cpu), statistics.mean(cpu)
        doc["results"].append({"resource": r, "variant": v, "samples": ss,
                               "median_net_cpu_seconds": round(med, 3),
                               "mean_net_cpu_seconds": round(mean, 3)})
        lines.append("| %s | %s | %d | %d | %.3f / %.3f | %.2f-%.2f | %.2f |" % (
            r, v, ss[0]["items"], ss[0]["bytes"], med, mean, min(cpu), max(cpu),
            statistics.median(s["seconds"] for s in ss)))
    text = "\n".join(lines) + "\n"
    print(text)
    benchlib.write_results(doc, args.out or benchlib.default_out("list-cost"), text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Admission as kubectl feels it: what the kube-apiserver's create of a TrainJob costs with the
trainer webhooks in its path, against the same create with no webhook and with a null webhook.

On a fresh test bed (hack/testbed/up.sh; trainer's CRDs and the torch-distributed runtime), the
servers run side by side, all with the test bed's webhook serving certificate:
  null      trainer-bench-null-webhook: answers "allowed" at once, on trainer-webhook's own
            HTTP/TLS server (common/http) with the same thread count: the physical floor;
  ours      trainer-webhook, reading runtimes from the cluster as deployed;
  upstream  (--upstream) upstream Kubeflow Trainer v2.3.0's manager, which serves its webhooks.
deploy/base's webhook configurations (the TrainJob defaulter and validator) are registered by URL
with the test bed's CA. --mode interleaved (the default): every configuration at once, each
renamed <config>.<name> and in force only in its own namespace adm-<config> (a namespaceSelector
on the namespace's label), and the creates interleaved across the namespaces in shuffled blocks
of one create each: every configuration is measured at the same moments, so the host's drift
falls on all alike. --mode sequential: one configuration at a time ("none": not registered),
rounds in rotated order. A configuration is in force once probe creates reach its server (two
calls each: mutate, validate) and no other.

Measured per configuration: trainer-bench-apply sends COUNT server-side dry-run creates of a
TrainJob (?dryRun=All: admission runs, nothing is stored) over the controller's libcurl client
(HTTP/2, one keep-alive connection per worker, as kubectl), CONCURRENCY at a time; per-create
latency as the client sees it (mean, p50, p90, p99); the apiserver's own view
(apiserver_admission_webhook_admission_duration_seconds per webhook, and
apiserver_request_duration_seconds of the create, sequential only); the server's request count (must be 2 per
create) and the connections the apiserver holds open to it afterwards. Before each measurement
--warmup creates at the same concurrency (not measured) open the apiserver's connections and warm
both sides. --rounds repeats all configurations in rotated order, so drift spreads over all of
them.

Derived: "added" = a configuration's mean latency minus the same round's "none" mean; the goal
compares ours' added latency with the null webhook's (ours/null <= 1.10), as the ratio of the
means over rounds and as the median of each round's own ratio (one disturbed round moves the
first, not the second); and the apiserver's own per-call webhook duration, ours/null's.
Interleaved, also over every block of all rounds ("paired"): the ratio of the added latencies
with a 95% bootstrap interval over blocks, and the ratio of the medians' added latencies.

Usage: hack/bench/admission/run.py [--mode interleaved|sequential] [--count 1000]
         [--concurrency 1,16] [--rounds 5]
         [--warmup 300] [--upstream] [--upstream-bin PATH] [--null-variant NAME=ARGS ...]
         [--ours-variant NAME=ARGS ...] [--ours-build NAME=PATH ...] [--bin build/bin]
         [--out BASE]
--null-variant adds a null webhook answering differently (a JSONPatch on mutate, a bigger
response, after --spin of busy work), to take apart what the apiserver pays for: what ours
answers, or its server's time; --ours-variant adds a trainer-webhook with other flags,
--ours-build one from another build (PATH: its trainer-webhook binary). Each trainer-webhook
configuration runs its own copy of the binary, so that none runs on another's cached code.
Writes BASE.json and BASE.txt (default .local/bench/admission-<time>); interleaved, about 45 s per
round at --count 1000 with four configurations (2 cores, idle), plus ~50 s to start.
"""

import argparse
import json
import os
import random
import re
import shutil
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "bench"))
import benchlib  # noqa: E402
from benchlib import TRAINJOBS, free_port, log, metric_sum  # noqa: E402

NS = "admission"
NS_LABEL = "trainer-bench-admission"
CONFIG_NAMES = {"MutatingWebhookConfiguration": "defaulter.trainer.kubeflow.org",
                "ValidatingWebhookConfiguration": "validator.trainer.kubeflow.org"}
TRAINJOB_WEBHOOKS = ("defaulter.trainjob.trainer.kubeflow.org",
                     "validator.trainjob.trainer.kubeflow.org")


def trainjob(name=None):
    meta = {"name": name} if name else {}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": meta,
            "spec": {"runtimeRef": {"name": "torch-distributed"},
                     "trainer": {"numNodes": 2, "command": ["python3", "-c", "print(1)"],
                                 "env": [{"name": "EPOCHS", "value": "3"}],
                                 "resourcesPerNode": {"requests": {"cpu": "1",
                                                                   "memory": "1Gi"}}}}}


class Server:
    """One webhook server: its Service (process), base URL and request counter."""

    def __init__(self, name, service, port, requests, handler=None):
        self.name, self.service, self.port, self._requests = name, service, port, requests
        self._handler = handler

    def handler_seconds(self):
        """handler_seconds() of the server's own metrics, or None without them."""
        return self._handler() if self._handler else None

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    def requests(self):
        return self._requests()

    def connections(self):
        """Established TCP connections to the server's port (the apiserver's pool to it)."""
        out = subprocess.run(["ss", "-Htn", "state", "established", "( sport = :%d )" % self.port],
                             capture_output=True, text=True).stdout
        return len([line for line in out.splitlines() if line.strip()])


def start_servers(args, bed, work):
    certs = os.path.join(work, "certs")
    os.makedirs(certs)
    for src, dst in (("webhook.crt", "tls.crt"), ("webhook.key", "tls.key")):
        with open(os.path.join(bed.pki, src), "rb") as f, open(os.path.join(certs, dst), "wb") as o:
            o.write(f.read())
    ctx = ssl.create_default_context(cafile=os.path.join(bed.pki, "ca.crt"))
    servers = {}

    for name, extra in [("null", [])] + args.null_variant:
        port = free_port()
        null = benchlib.Service([os.path.join(args.bin, "trainer-bench-null-webhook"),
                                 "--cert-dir", certs, "--port", str(port), *extra],
                                os.path.join(work, name + ".log"))

        def null_requests(port=port):
            with urllib.request.urlopen("https://127.0.0.1:%d/stats" % port, context=ctx,
                                        timeout=5) as r:
                return json.loads(r.read())["requests"]
        servers[name] = Server(name, null, port, null_requests)

    for name, extra in [("ours", [])] + args.ours_variant:
        servers[name] = start_ours(args, bed, work, certs, name, extra)
    for name, binary in args.ours_build:
        servers[name] = start_ours(args, bed, work, certs, name, [], binary=binary)

    if args.upstream:
        up = benchlib.upstream_manager(args.upstream_bin, bed.kubeconfig, work, certs,
                                       os.path.join(work, "upstream.log"))
        servers["upstream"] = Server("upstream", up, up.webhook_port, lambda: metric_sum(
            up.scrape(), "controller_runtime_webhook_requests_total"),
            lambda: handler_seconds(up.scrape()))
    for s in servers.values():
        if s.service.health:
            s.service.wait_ready(120)
    for s in servers.values():
        benchlib.wait_for(lambda: probe_server(s, ctx), 60, "%s to answer" % s.name, every=0.2)
    return servers


def private_copy(binary, work, name):
    """BINARY copied for configuration NAME alone (a script, as --ours-build may name, is run as
    given). Processes that run one file share its code's memory, so each call of one would warm
    the caches for the next call of another: a build compared with ours would be measured partly
    on ours' cache lines (docs/benchmarks-history.md, round 22)."""
    with open(binary, "rb") as f:
        if f.read(4) != b"\x7fELF":
            return binary
    path = os.path.join(work, "bin-" + name, os.path.basename(binary))
    os.makedirs(os.path.dirname(path))
    shutil.copy2(binary, path)
    return path


def start_ours(args, bed, work, certs, name, extra, binary=""):
    """trainer-webhook (BINARY, or the one in --bin) reading runtimes from the cluster, as
    deployed, with EXTRA flags, from a copy of its own."""
    port, health, metrics = free_port(), free_port(), free_port()
    binary = private_copy(binary or os.path.join(args.bin, "trainer-webhook"), work, name)
    ours = benchlib.Service(
        [binary, "--port=%d" % port,
         "--cert-dir=%s" % certs,
         "--kubeconfig=%s" % bed.kubeconfig, "--metrics-bind-address=127.0.0.1:%d" % metrics,
         "--health-probe-bind-address=127.0.0.1:%d" % health, *extra],
        os.path.join(work, name + ".log"), health_port=health, metrics_port=metrics)
    return Server(name, ours, port, lambda: metric_sum(
        ours.scrape(), "controller_runtime_webhook_requests_total"),
        lambda: handler_seconds(ours.scrape()))


def handler_seconds(text):
    """handler_sum and handler_count of controller_runtime_webhook_latency_seconds over every
    webhook path (for mean_ms): the time the server's handlers took, from the request read to the
    answer written."""
    return {"handler_" + part: metric_sum(text, "controller_runtime_webhook_latency_seconds_" +
                                          part) for part in ("sum", "count")}


def probe_server(server, ctx):
    try:
        urllib.request.urlopen(server.url + "/", context=ctx, timeout=2)
    except urllib.error.HTTPError:
        return True  # a TLS server answering (404 is fine)
    except OSError:
        return False
    return True


def configurations(bed, url):
    """deploy/base's webhook configurations, registered by URL at URL with the test bed's CA."""
    with open(os.path.join(ROOT, "deploy/base/webhook/webhook-configurations.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    p = subprocess.run([sys.executable, os.path.join(ROOT, "hack/testbed/webhooks.py"),
                        "--url", url, "--ca", os.path.join(bed.pki, "ca.crt")],
                       input=json.dumps({"kind": "List", "items": docs}), capture_output=True,
                       text=True, check=True)
    return p.stdout


def activate(bed, servers, which, api):
    """Registers the configurations pointing at server WHICH (or none), and waits until creates
    reach exactly that server."""
    if which == "none":
        bed.kubectl("delete", "--ignore-not-found",
                    "mutatingwebhookconfiguration/" + CONFIG_NAMES["MutatingWebhookConfiguration"],
                    "validatingwebhookconfiguration/" +
                    CONFIG_NAMES["ValidatingWebhookConfiguration"])
    else:
        bed.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-",
                    stdin=configurations(bed, servers[which].url))
    wait_in_force(servers, which, api, NS)


def wait_in_force(servers, which, api, ns):
    """Returns once 5 probe creates in a row in NS reached exactly server WHICH (none: no
    server), twice each."""
    good, deadline = 0, time.time() + 120
    while good < 5:
        if time.time() > deadline:
            raise RuntimeError("webhook configuration for %s not in force after 120 s" % which)
        before = {n: s.requests() for n, s in servers.items()}
        status, body = api.call("POST", TRAINJOBS % ns + "?dryRun=All", trainjob("probe"))
        if status != 201:
            raise RuntimeError("probe create with %s: %s %s" % (which, status, body))
        delta = {n: s.requests() - before[n] for n, s in servers.items()}
        want = {n: (2 if n == which else 0) for n in servers}
        good = good + 1 if delta == want else 0
        time.sleep(0.05)


def namespace_of(which):
    """The namespace whose creates configuration WHICH admits, when interleaved."""
    return "adm-" + which


def interleaved_configurations(bed, which, url):
    """deploy/base's TrainJob defaulter and validator for configuration WHICH, calling URL: named
    WHICH.<name> (so the apiserver's metrics tell the servers apart) and in force only in
    namespace_of(WHICH), by a namespaceSelector on its label. The runtime validators are left
    out: runtimes are cluster-scoped, where a namespaceSelector selects nothing away."""
    items = []
    for item in json.loads(configurations(bed, url))["items"]:
        hooks = [dict(wh, name=which + "." + wh["name"],
                      namespaceSelector={"matchLabels": {NS_LABEL: which}})
                 for wh in item["webhooks"] if wh["name"] in TRAINJOB_WEBHOOKS]
        if hooks:
            item["metadata"]["name"] = which + "." + item["metadata"]["name"]
            item["webhooks"] = hooks
            items.append(item)
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


def activate_interleaved(bed, servers, configs, api):
    """Every configuration at once, each in its own labelled namespace."""
    for which in configs:
        api.create_namespace(namespace_of(which), {NS_LABEL: which})
        if which != "none":
            bed.kubectl("apply", "--server-side", "-f", "-",
                        stdin=interleaved_configurations(bed, which, servers[which].url))
    for which in configs:
        wait_in_force(servers, which, api, namespace_of(which))


def apiserver_view(api, webhooks=TRAINJOB_WEBHOOKS):
    """The apiserver's admission sums and counts for WEBHOOKS and the create's request-duration
    sums and counts, for deltas."""
    conn = api.connect()
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    view = {}
    for wh in webhooks:
        for part in ("sum", "count"):
            view["%s_%s" % (wh, part)] = metric_sum(
                text, "apiserver_admission_webhook_admission_duration_seconds_" + part, name=wh)
    for part in ("sum", "count"):
        view["request_" + part] = metric_sum(
            text, "apiserver_request_duration_seconds_" + part, verb="POST", resource="trainjobs",
            dry_run="All")
    return view


def mean_ms(before, after, prefix, digits=3):
    """The mean in ms of a PREFIX_sum/PREFIX_count pair between two views (apiserver_view(),
    handler_seconds()); None without calls."""
    n = after[prefix + "_count"] - before[prefix + "_count"]
    if not n:
        return None
    return round(1000 * (after[prefix + "_sum"] - before[prefix + "_sum"]) / n, digits)


def server_stats(server, before_requests, before_handler):
    out = {"server_requests": int(server.requests() - before_requests),
           "server_connections": server.connections(),
           "server_rss_mb": server.service.usage()["rss_mb"],
           "server_peak_rss_mb": server.service.usage()["peak_rss_mb"]}
    after = server.handler_seconds()
    handler_ms = mean_ms(before_handler, after, "handler", 4) if after else None
    if handler_ms is not None:
        out["server_handler_ms"] = handler_ms
    return out


def measure(args, bed, servers, which, concurrency, tj_path, api):
    server = servers.get(which)
    before_req = server.requests() if server else 0
    before_handler = server.handler_seconds() if server else None
    before = apiserver_view(api)
    r = benchlib.bench_apply(args.bin, bed, [tj_path], NS, args.count, concurrency, "--create",
                             "--dry-run", prefix="adm-%s" % which)
    after = apiserver_view(api)
    row = {"config": which, "concurrency": concurrency, "count": args.count,
           "seconds": r["seconds"], "creates_per_second": round(args.count / r["seconds"], 1),
           "failures": r["failures"], "latency_ms": r["latency_ms"]}
    row["apiserver_request_ms"] = mean_ms(before, after, "request")
    row["apiserver_webhook_ms"] = {wh.split(".")[0]: mean_ms(before, after, wh)
                                   for wh in TRAINJOB_WEBHOOKS}
    if server:
        row.update(server_stats(server, before_req, before_handler))
    return row


def measure_interleaved(args, bed, servers, configs, concurrency, tj_path, api, rnd):
    """COUNT creates per configuration, interleaved across their namespaces in shuffled blocks
    (one create of each configuration per block): one row per configuration, and the blocks'
    per-create latencies [namespace index, ms] in send order."""
    hooks = ["%s.%s" % (w, wh) for w in configs for wh in TRAINJOB_WEBHOOKS]
    before_req = {n: s.requests() for n, s in servers.items()}
    before_handler = {n: s.handler_seconds() for n, s in servers.items()}
    before = apiserver_view(api, hooks)
    r = benchlib.bench_apply(args.bin, bed, [tj_path], [namespace_of(w) for w in configs],
                             args.count * len(configs), concurrency, "--seed", str(rnd + 1),
                             "--create", "--dry-run", prefix="adm")
    after = apiserver_view(api, hooks)
    rows = []
    for which in configs:
        row = {"config": which, "concurrency": concurrency, "count": args.count,
               "seconds": r["seconds"],
               "creates_per_second": round(args.count * len(configs) / r["seconds"], 1),
               "failures": r["failures"], "latency_ms": r["by_namespace"][namespace_of(which)],
               "apiserver_request_ms": None,
               "apiserver_webhook_ms": {wh.split(".")[0]: mean_ms(before, after, "%s.%s" % (
                   which, wh)) for wh in TRAINJOB_WEBHOOKS}}
        if which in servers:
            row.update(server_stats(servers[which], before_req[which], before_handler[which]))
        rows.append(row)
    return rows, r["sets"]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2 if n else None


def call_ms(row):
    """The apiserver's mean duration of one call to the TrainJob webhooks (mutate and validate
    averaged) in a row; None without webhooks."""
    calls = [v for v in row["apiserver_webhook_ms"].values() if v is not None]
    return sum(calls) / len(calls) if calls else None


def summarize(rows, configs, concurrencies):
    """Per configuration and concurrency: the mean over rounds of the mean latency and of the
    latency added over the same round's "none"; ratios of the added latency to the null
    webhook's: of the means over rounds (added_vs_null), and the median of each round's own
    ratio (added_vs_null_median, robust to one disturbed round); the same for the apiserver's
    own per-call webhook duration (webhook_call_ms, webhook_call_vs_null[_median])."""
    out = []
    for c in concurrencies:
        here = [r for r in rows if r["concurrency"] == c]
        base = {r["round"]: r["latency_ms"]["mean"] for r in here if r["config"] == "none"}
        added = {(r["config"], r["round"]): r["latency_ms"]["mean"] - base[r["round"]]
                 for r in here if r["round"] in base}
        calls = {(r["config"], r["round"]): call_ms(r) for r in here}
        mine_by = {}
        for cfg in configs:
            mine = [r for r in here if r["config"] == cfg]
            if not mine:
                continue
            mine_by[cfg] = mine
            mean = sum(r["latency_ms"]["mean"] for r in mine) / len(mine)
            p99 = sum(r["latency_ms"]["p99"] for r in mine) / len(mine)
            adds = [added[(cfg, r["round"])] for r in mine if (cfg, r["round"]) in added]
            o = {"config": cfg, "concurrency": c, "rounds": len(mine),
                 "mean_ms": round(mean, 3), "median_ms": round(median(
                     [r["latency_ms"]["mean"] for r in mine]), 3), "p99_ms": round(p99, 3),
                 "creates_per_second": round(
                     sum(r["creates_per_second"] for r in mine) / len(mine), 1),
                 "added_ms": round(sum(adds) / len(adds), 3) if adds else None}
            cs = [calls[(cfg, r["round"])] for r in mine if calls[(cfg, r["round"])] is not None]
            if cs:
                o["webhook_call_ms"] = round(sum(cs) / len(cs), 3)
            out.append(o)
        null = next((o for o in out if o["concurrency"] == c and o["config"] == "null"), None)
        for o in out:
            if o["concurrency"] != c or o["config"] in ("none", "null") or null is None:
                continue
            if null["added_ms"] and o["added_ms"] is not None:
                o["added_vs_null"] = round(o["added_ms"] / null["added_ms"], 2)
            per_round = [added[(o["config"], r)] / added[("null", r)] for r in base
                         if (o["config"], r) in added and added.get(("null", r))]
            if per_round:
                o["added_vs_null_rounds"] = [round(x, 2) for x in per_round]
                o["added_vs_null_median"] = round(median(per_round), 2)
            if null.get("webhook_call_ms") and o.get("webhook_call_ms"):
                o["webhook_call_vs_null"] = round(o["webhook_call_ms"] / null["webhook_call_ms"], 2)
                per_round = [calls[(o["config"], r["round"])] / calls[("null", r["round"])]
                             for r in mine_by[o["config"]]
                             if calls.get(("null", r["round"])) and calls[(o["config"], r["round"])]]
                o["webhook_call_vs_null_median"] = round(median(per_round), 2)
    return out


def paired(samples, configs, concurrencies, resamples=1000):
    """From interleaved runs: per concurrency and configuration beyond none and null, the ratio of
    its added latency to the null webhook's over every block (one create of each configuration,
    measured together), with a 95% bootstrap interval over blocks; and the same ratio of the
    medians (robust to the few slow creates that dominate a mean)."""
    out = []
    rng = random.Random(1)
    for c in concurrencies:
        blocks = []
        for sample in samples:
            if sample["concurrency"] != c:
                continue
            sets, k = sample["sets"], len(configs)
            for j in range(0, len(sets) - k + 1, k):
                blocks.append({configs[int(ns)]: ms for ns, ms in sets[j:j + k]})
        if not blocks or "none" not in configs or "null" not in configs:
            continue

        def ratio(bs, cfg):
            null = sum(b["null"] - b["none"] for b in bs)
            return sum(b[cfg] - b["none"] for b in bs) / null if null else float("nan")

        med = {cfg: median([b[cfg] for b in blocks]) for cfg in configs}
        for cfg in configs:
            if cfg in ("none", "null"):
                continue
            boot = sorted(ratio([blocks[rng.randrange(len(blocks))] for _ in blocks], cfg)
                          for _ in range(resamples))
            out.append({"config": cfg, "concurrency": c, "blocks": len(blocks),
                        "added_ms": round(sum(b[cfg] - b["none"] for b in blocks) / len(blocks), 4),
                        "null_added_ms": round(
                            sum(b["null"] - b["none"] for b in blocks) / len(blocks), 4),
                        "added_vs_null": round(ratio(blocks, cfg), 3),
                        "ci95": [round(boot[int(0.025 * resamples)], 3),
                                 round(boot[int(0.975 * resamples) - 1], 3)],
                        "median_added_vs_null": round(
                            (med[cfg] - med["none"]) / (med["null"] - med["none"]), 3)
                        if med["null"] != med["none"] else None})
    return out


def paired_table(rows):
    lines = ["| webhooks | concurrency | blocks | added ms | null's added ms | **added / null's** | "
             "95% interval | medians' added / null's |", "|---|---|---|---|---|---|---|---|"]
    for p in rows:
        lines.append("| %s | %d | %d | %.3f | %.3f | **%.3f** | %.3f-%.3f | %s |" % (
            p["config"], p["concurrency"], p["blocks"], p["added_ms"], p["null_added_ms"],
            p["added_vs_null"], p["ci95"][0], p["ci95"][1],
            "%.3f" % p["median_added_vs_null"] if p["median_added_vs_null"] is not None else "–"))
    return "\n".join(lines) + "\n"


def table(summary):
    def f(v, fmt="%.2f"):
        return fmt % v if v is not None else "–"
    lines = ["| webhooks | concurrency | creates/s | mean ms | p99 ms | added over none ms | "
             "**added / null's** | median of rounds' | rounds' | apiserver's webhook call ms | "
             "call / null's (median) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary:
        lines.append("| %s | %d | %.0f | %.3f | %.3f | %s | **%s** | %s | %s | %s | %s (%s) |" % (
            s["config"], s["concurrency"], s["creates_per_second"], s["mean_ms"], s["p99_ms"],
            f(s["added_ms"], "%.3f"), f(s.get("added_vs_null")), f(s.get("added_vs_null_median")),
            " ".join("%.2f" % x for x in s.get("added_vs_null_rounds", [])) or "–",
            f(s.get("webhook_call_ms"), "%.3f"), f(s.get("webhook_call_vs_null")),
            f(s.get("webhook_call_vs_null_median"))))
    return "\n".join(lines) + "\n"


def detail(rows):
    lines = ["| round | webhooks | conc. | mean ms | p50 | p99 | apiserver: create ms | "
             "mutate call ms | validate call ms | server's handler ms | server requests | "
             "connections | RSS MB |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        wh = r["apiserver_webhook_ms"]
        lines.append("| %d | %s | %d | %.3f | %.3f | %.3f | %s | %s | %s | %s | %s | %s | %s |" % (
            r["round"], r["config"], r["concurrency"], r["latency_ms"]["mean"],
            r["latency_ms"]["p50"], r["latency_ms"]["p99"], r["apiserver_request_ms"],
            wh.get("defaulter"), wh.get("validator"), r.get("server_handler_ms", "–"),
            r.get("server_requests", "–"),
            r.get("server_connections", "–"), r.get("server_rss_mb", "–")))
    return "\n".join(lines) + "\n"


def run_rounds(args, work, configs, concurrencies, rows, samples):
    """Every configuration, --rounds times, on a test bed of its own: interleaved (all
    configurations registered at once, each in its own namespace, their creates mixed), or
    sequential (one configuration registered at a time, in rotated order)."""
    with benchlib.TestBed(os.path.join(work, "testbed")) as bed:
        api = bed.api()
        servers = start_servers(args, bed, work)
        try:
            tj_path = os.path.join(work, "trainjob.json")
            with open(tj_path, "w") as f:
                json.dump(trainjob(), f)
            if args.mode == "interleaved":
                activate_interleaved(bed, servers, configs, api)
            else:
                api.create_namespace(NS)
            for rnd in range(args.rounds):
                if args.mode == "interleaved":
                    for c in concurrencies:
                        warm(args, bed, tj_path, c, [namespace_of(w) for w in configs])
                        got, sets = measure_interleaved(args, bed, servers, configs, c, tj_path,
                                                        api, rnd)
                        samples.append({"round": rnd, "concurrency": c, "sets": sets})
                        for row in got:
                            record(args, rows, row, rnd)
                    continue
                order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
                for which in order:
                    activate(bed, servers, which, api)
                    for c in concurrencies:
                        warm(args, bed, tj_path, c, [NS])
                        record(args, rows, measure(args, bed, servers, which, c, tj_path, api),
                               rnd)
        finally:
            for s in servers.values():
                s.service.stop()


def warm(args, bed, tj_path, concurrency, namespaces):
    """--warmup creates per namespace at this concurrency, not measured: the apiserver's
    connections to the servers (as many as this concurrency opens), both sides' caches and
    threads."""
    benchlib.bench_apply(args.bin, bed, [tj_path], namespaces, args.warmup * len(namespaces),
                         concurrency, "--create", "--dry-run", prefix="warm")


def record(args, rows, row, rnd):
    row["round"] = rnd
    rows.append(row)
    log("round %d %s c=%d: mean %.3f ms, p99 %.3f ms" % (
        rnd, row["config"], row["concurrency"], row["latency_ms"]["mean"],
        row["latency_ms"]["p99"]))
    if row.get("server_requests") not in (None, 2 * args.count):
        raise RuntimeError("%s answered %d requests for %d creates" % (
            row["config"], row["server_requests"], args.count))


def variant(server, split=True):
    """An argparse type for NAME=ARGS: ("<server>-NAME", ARGS split at spaces, or whole)."""
    def parse(text):
        name, _, extra = text.partition("=")
        # The name ends up in a namespace's (adm-<server>-NAME): refused here, not after the
        # test bed is up.
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?", name):
            raise argparse.ArgumentTypeError(
                "%r: NAME must be lowercase letters, digits and '-', at most 42 characters, "
                "starting and ending with a letter or digit" % name)
        return server + "-" + name, extra.split() if split else extra  # not shlex: JSON quotes
    return parse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--concurrency", default="1,16")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=300,
                    help="dry-run creates before each measurement, at its concurrency")
    ap.add_argument("--mode", choices=("interleaved", "sequential"), default="interleaved",
                    help="interleaved: every configuration at once, one namespace each, their "
                         "creates mixed; sequential: one configuration at a time")
    ap.add_argument("--upstream", action="store_true")
    ap.add_argument("--null-variant", action="append", default=[], type=variant("null"),
                    metavar="NAME=ARGS",
                    help="one more null webhook, configuration null-NAME, with these "
                         "trainer-bench-null-webhook arguments, split at spaces (e.g. "
                         "patch='--mutate-patch [{\"op\":\"add\",...}]', pad='--pad 2000')")
    ap.add_argument("--ours-variant", action="append", default=[], type=variant("ours"),
                    metavar="NAME=ARGS",
                    help="one more trainer-webhook, configuration ours-NAME, with these "
                         "arguments, split at spaces (e.g. poll='--busy-poll 500us')")
    ap.add_argument("--ours-build", action="append", default=[],
                    type=variant("ours", split=False),
                    metavar="NAME=PATH",
                    help="one more trainer-webhook, configuration ours-NAME, from another build "
                         "(e.g. pgo=build-pgo/bin/trainer-webhook)")
    ap.add_argument("--upstream-bin", default="")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if args.upstream:
        args.upstream_bin = benchlib.upstream_binary(args.upstream_bin)
    out_base = args.out or benchlib.default_out("admission")
    doc = benchlib.envelope("admission", args)
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    configs = (["none", "null"] + [name for name, _ in args.null_variant] + ["ours"] +
               [name for name, _ in args.ours_variant + args.ours_build] +
               (["upstream"] if args.upstream else []))
    rows, samples = [], []
    with benchlib.work_dir("bench-admission-") as work:
        run_rounds(args, work, configs, concurrencies, rows, samples)
    summary = summarize(rows, configs, concurrencies)
    doc["results"] = rows
    doc["summary"] = summary
    doc["paired"] = paired(samples, configs, concurrencies)
    doc["samples"] = samples
    text = ("load average %s → %s, %d creates per row, %d rounds, %s\n\n" % (
        doc["load_average_start"], [round(x, 2) for x in os.getloadavg()], args.count,
        args.rounds, args.mode) + (paired_table(doc["paired"]) + "\n" if doc["paired"] else "") +
        table(summary) + "\n" + detail(rows))
    print(text)
    benchlib.write_results(doc, out_base, text)


if __name__ == "__main__":
    main()

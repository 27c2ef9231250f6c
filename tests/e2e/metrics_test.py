#!/usr/bin/env python3
"""Both /metrics pages are scraped through their Services, as a Prometheus in the cluster
would: a real Prometheus (Debian's) on the host scrapes the ClusterIPs of Services
trainer-webhook and trainer-controller-metrics (port 8080, routed to the pods by kube-proxy),
finds both targets up, the controller's reconcile counter with a value and the webhook's request
counter series (a Service spreads scrapes over the replicas, and Prometheus keeps its connection,
so the one it reaches may be a fresh replica whose counters are still 0); each page also passes
`promtool check metrics`.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

import e2e

SYSTEM = "kubeflow-system"
TARGETS = {"trainer-webhook": ("trainer-webhook", "count(controller_runtime_webhook_requests_total"
                                                   '{job="trainer-webhook"}) > 0'),
           "trainer-controller": ("trainer-controller-metrics", "sum(controller_runtime_reconcile_total"
                                  '{job="trainer-controller"}) > 0')}


def query(prom, q):
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    return json.load(urllib.request.urlopen(url, timeout=5))["data"]["result"]


def main():
    e2e.require_machine()
    k = e2e.kubectl()
    failures = []
    addresses = {}
    for job, (svc, _) in TARGETS.items():
        ip = k.out("get", "svc", svc, "-n", SYSTEM, "-o", "jsonpath={.spec.clusterIP}")
        addresses[job] = f"{ip}:8080"
        page = urllib.request.urlopen(f"http://{ip}:8080/metrics", timeout=10).read()
        p = subprocess.run(["promtool", "check", "metrics"], input=page, capture_output=True)
        ok = p.returncode == 0
        print(("ok   " if ok else "FAIL ") + f"promtool check metrics of {svc} ({ip}:8080): "
              f"{len(page)} bytes {p.stdout.decode().strip()[:300]}", flush=True)
        if not ok:
            failures.append(f"promtool {svc}")

    tmp = tempfile.mkdtemp(prefix="e2e-prometheus-")
    port = e2e.testbed.free_port()
    config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
              "scrape_configs": [{"job_name": job, "static_configs": [{"targets": [addr]}]}
                                 for job, addr in addresses.items()]}
    with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
        json.dump(config, f)
    log = open(os.path.join(tmp, "prometheus.log"), "w")
    prom = subprocess.Popen(["prometheus", f"--config.file={tmp}/prometheus.yml",
                             f"--storage.tsdb.path={tmp}/data",
                             f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        up = e2e.wait_for("Prometheus to see both targets up", 90, lambda: (lambda r: len(r) == 2 and r)(
            [x for x in query(url, "up") if x["value"][1] == "1"]))
        print(f"ok   Prometheus scrapes both Services: {[x['metric']['job'] for x in up]}")
        for job, (_, expr) in TARGETS.items():
            try:
                e2e.wait_for(f"{expr} from {job}", 60, lambda: query(url, expr))
                print(f"ok   {expr}")
            except AssertionError as e:
                print(f"FAIL {e}")
                failures.append(expr)
    except AssertionError:
        print(open(os.path.join(tmp, "prometheus.log")).read()[-2000:])
        raise
    finally:
        prom.terminate()
        prom.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

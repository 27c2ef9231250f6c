#!/usr/bin/env python3
"""docs/observability.md, the alerting rules and the Grafana dashboard against the metrics the
services really export.

  check_metrics_docs.py --offline
      every metric the rules file, the dashboard and the guide's PromQL use is in the guide's
      metric tables (no services needed; the unit test runs this)
  check_metrics_docs.py --controller URL|FILE --webhook URL|FILE [--prometheus URL]
      also: each service exports exactly the families its tables list, with the documented type
      and label names; with --prometheus, every expression of the rules, the dashboard and the
      guide is accepted by that Prometheus (hack/run-local.sh's test runs this on both /metrics)

The tables are the rows `| \`name\` | type | labels | meaning |` under the headings
"## Metrics of trainer-controller", "## Metrics of trainer-webhook" and
"## Process metrics (both services)"; labels are backticked names, or "—" for none. The families
under "## Metrics of trainer-controller with TrainJobStatus", "## Metrics of trainer-webhook with
TrainJobStatus" and "## Metrics of trainer-webhook with certificate management" exist only with
that feature gate or flag: a service may export them or not, and what it exports of them must
match its table (a family without samples yet, such as
trainer_trainjob_progress_stale when nothing is stale, does not appear).
"""
import argparse
import json
import pathlib
import re
import sys
import urllib.parse
import urllib.request

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs/observability.md"
RULES = ROOT / "deploy/components/prometheus-rules/trainer-alerts.rules.yaml"
DASHBOARD = ROOT / "deploy/components/grafana-dashboard/trainer-dashboard.json"
SECTIONS = {
    "## Metrics of trainer-controller": ("controller",),
    "## Metrics of trainer-webhook": ("webhook",),
    "## Process metrics (both services)": ("controller", "webhook"),
    "## Metrics of trainer-controller with TrainJobStatus": ("controller:gated",),
    "## Metrics of trainer-webhook with TrainJobStatus": ("webhook:gated",),
    "## Metrics of trainer-webhook with certificate management": ("webhook:gated",),
}
# Series Prometheus itself creates for every target.
SCRAPE_SERIES = {"up"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
                "unless", "bool", "offset", "inf", "nan"}

errors = []


def fail(msg):
    errors.append(msg)


def documented():
    """{service: {name: (type, frozenset(labels))}} from the guide's tables."""
    out = {"controller": {}, "webhook": {}, "controller:gated": {}, "webhook:gated": {}}
    services = None
    for line in GUIDE.read_text().splitlines():
        if line.startswith("## "):
            services = SECTIONS.get(line.strip())
            continue
        m = re.match(r"^\|\s*`([a-zA-Z_:][a-zA-Z0-9_:]*)`\s*\|\s*(\w+)\s*\|([^|]*)\|", line)
        if not m or services is None:
            continue
        name, mtype, labels = m.group(1), m.group(2), m.group(3)
        label_set = frozenset(re.findall(r"`([a-zA-Z_][a-zA-Z0-9_]*)`", labels))
        for s in services:
            if name in out[s]:
                fail(f"{GUIDE.name}: {name} is listed twice for trainer-{s}")
            out[s][name] = (mtype, label_set)
    for s in out:
        if not out[s]:
            fail(f"{GUIDE.name}: no metric table for trainer-{s}")
        if s.endswith(":gated"):
            continue
        for name in set(out[s]) & set(out[s + ":gated"]):
            fail(f"{GUIDE.name}: {name} is listed twice for trainer-{s}")
    return out


def metric_names(expr):
    """Metric names an expression selects (strings, label matchers, ranges, grouping and
    function calls removed)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e):
        word = m.group(0)
        rest = e[m.end():].lstrip()
        if rest.startswith("(") or word.lower() in PROMQL_WORDS:
            continue
        if m.start() > 0 and (e[m.start() - 1].isdigit() or e[m.start() - 1] == "."):
            continue  # 1e3, 5m
        names.add(word)
    return names


def expressions():
    """(where, expr) of the rules file, the dashboard and the guide's ```promql blocks."""
    out = []
    for g in yaml.safe_load(RULES.read_text())["groups"]:
        for r in g["rules"]:
            out.append((f"{RULES.name}: {r.get('alert') or r.get('record')}", r["expr"]))
    dash = json.loads(DASHBOARD.read_text())

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append((f"{DASHBOARD.name}: panel '{p.get('title')}'", t["expr"]))
            walk(p.get("panels", []))

    walk(dash["panels"])
    if not any(w.startswith(DASHBOARD.name) for w, _ in out):
        fail(f"{DASHBOARD.name}: no panel has a query")
    for i, block in enumerate(re.findall(r"```promql\n(.*?)```", GUIDE.read_text(), re.S)):
        out.append((f"{GUIDE.name}: promql block {i + 1}", block.strip()))
    return out


def known(name, docs):
    every = {k: v for d in docs.values() for k, v in d.items()}
    if name in every or name in SCRAPE_SERIES:
        return True
    for suffix in HISTOGRAM_SUFFIXES:
        base = name[: -len(suffix)] if name.endswith(suffix) else None
        if base and every.get(base, ("",))[0] == "histogram":
            return True
    return False


def check_expressions(docs):
    exprs = expressions()
    for where, expr in exprs:
        names = metric_names(expr)
        if not names:
            fail(f"{where}: no metric in {expr!r}")
        for n in sorted(names):
            if not known(n, docs):
                fail(f"{where}: uses {n}, which docs/observability.md does not document")
    return exprs


def read(source):
    if source.startswith("http://") or source.startswith("https://"):
        with urllib.request.urlopen(source, timeout=10) as r:
            return r.read().decode()
    return pathlib.Path(source).read_text()


def exported(text):
    """{family: (type, labels)} of a text exposition."""
    fams = {}
    for line in text.splitlines():
        m = re.match(r"^# TYPE (\S+) (\S+)$", line)
        if m:
            fams[m.group(1)] = (m.group(2), set())
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s", line)
        if not m:
            continue
        name = m.group(1)
        fam = name if name in fams else next(
            (name[: -len(s)] for s in HISTOGRAM_SUFFIXES
             if name.endswith(s) and name[: -len(s)] in fams), None)
        if fam is None:
            fail(f"sample {name} has no # TYPE line")
            continue
        labels = re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or "")
        fams[fam][1].update(l for l in labels if l != "le")
    return fams


def check_service(service, source, docs):
    got = exported(read(source))
    gated = docs[service + ":gated"]
    # Families of the feature gate: checked like the rest when exported, never required.
    want = {**docs[service], **{n: v for n, v in gated.items() if n in got}}
    for name in sorted(set(got) - set(want)):
        fail(f"trainer-{service} exports {name} ({got[name][0]}), which docs/observability.md "
             "does not document")
    for name in sorted(set(want) - set(got)):
        fail(f"docs/observability.md documents {name} for trainer-{service}, which it does not "
             "export")
    for name in sorted(set(want) & set(got)):
        if want[name][0] != got[name][0]:
            fail(f"{name}: documented as {want[name][0]}, exported as {got[name][0]}")
        if set(want[name][1]) != got[name][1]:
            fail(f"{name}: documented labels {sorted(want[name][1])}, exported "
                 f"{sorted(got[name][1])}")
    print(f"trainer-{service}: {len(got)} families exported, {len(want)} documented")


def check_prometheus(url, exprs):
    subst = {"$controller_job": "trainer-controller.*", "$webhook_job": "trainer-webhook.*"}
    for where, expr in exprs:
        for k, v in subst.items():
            expr = expr.replace(k, v)
        q = urllib.parse.urlencode({"query": expr})
        try:
            with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10) as r:
                status = json.load(r)["status"]
        except urllib.error.HTTPError as e:
            status = f"HTTP {e.code}: {e.read().decode()[:200]}"
        if status != "success":
            fail(f"{where}: Prometheus rejects {expr!r}: {status}")
    print(f"Prometheus accepts all {len(exprs)} expressions")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--controller")
    ap.add_argument("--webhook")
    ap.add_argument("--prometheus")
    a = ap.parse_args()
    if not a.offline and not (a.controller and a.webhook):
        ap.error("--offline, or both --controller and --webhook")
    docs = documented()
    exprs = check_expressions(docs)
    print(f"{len(exprs)} expressions use only documented metrics")
    if a.controller:
        check_service("controller", a.controller, docs)
    if a.webhook:
        check_service("webhook", a.webhook, docs)
    if a.prometheus:
        check_prometheus(a.prometheus, exprs)
    for e in errors:
        print(f"FAIL: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

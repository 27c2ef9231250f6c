#!/usr/bin/python3
"""Draws docs/benchmarks/*.svg from the benchmarks' JSON results (never by hand), and prints the
headline figures of docs/benchmarks.md's summary as Markdown.

Reads, from --data (default docs/benchmarks/data/), whichever of these exist (each is a copy of
what a benchmark wrote; see docs/benchmarks.md, "Method"):
  webhook.json    hack/bench/webhook/run.sh --upstream   -> webhook-throughput.svg, webhook-p99.svg
  scale.json      hack/bench/scale.py                    -> controller-time.svg, controller-rss.svg
  admission.json  hack/bench/admission/run.py            -> admission.svg
  deletion.json   hack/bench/deletion/run.py             -> deletion.svg
  soak.json       hack/bench/soak/run.py                 -> soak-rss.svg
and writes the SVGs to --out (default docs/benchmarks/). The SVGs are reproducible (no date, fixed
ids), so a redraw from the same data changes nothing in git.

Runs on Debian's own python3 (/usr/bin/python3) with python3-matplotlib (`apt-get install
python3-matplotlib`), whatever python3 comes first on PATH.

Usage: hack/bench/plot.py [--data DIR] [--out DIR] [--summary]
"""

import argparse
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
except ImportError:
    sys.exit("plot.py needs matplotlib: apt-get install python3-matplotlib")

matplotlib.rcParams.update({"svg.hashsalt": "trainer-cpp", "font.size": 9,
                            "axes.spines.top": False, "axes.spines.right": False,
                            "figure.figsize": (6.4, 3.6)})
OURS, UPSTREAM, FLOOR, FLOOR2, NULL = "#1f77b4", "#d62728", "#555555", "#999999", "#2ca02c"


def loglog(ax):
    """Log scales on both axes, labelled with plain numbers (1000, not 10^3). Minor ticks get
    labels only on an axis spanning less than a decade and a half: on a wider one they overlap."""
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v)
    for axis, scale, lim in ((ax.xaxis, ax.set_xscale, ax.get_xlim),
                             (ax.yaxis, ax.set_yscale, ax.get_ylim)):
        scale("log")
        low, high = lim()
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(plain if low > 0 and high / low < 30 else
                                 matplotlib.ticker.NullFormatter())


def finish(ax, xlabel, ylabel, title, legend_size=8):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(frameon=False, fontsize=legend_size)


def load(data, name):
    path = os.path.join(data, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def caption(doc):
    return "%s, commit %s, %d CPUs, load %.1f at start" % (
        doc["date"][:16].replace("T", " "), doc["commit"], doc["machine"]["cpus"],
        doc["load_average_start"][0])


def save(fig, out, name, doc):
    fig.text(0.99, 0.01, caption(doc), ha="right", va="bottom", fontsize=7, color="#666666")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path = os.path.join(out, name)
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    print("wrote", os.path.relpath(path, ROOT))


def bars(ax, groups, series, ylabel, log=False, annotate=None):
    """Grouped bars: GROUPS on x, SERIES = [(label, color, [values per group])]."""
    width = 0.8 / len(series)
    for i, (label, color, values) in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, [v or 0 for v in values], width, label=label, color=color)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    if annotate:
        top = ax.get_ylim()[1]
        for g, text in enumerate(annotate):
            if text:
                ax.text(g, top, text, ha="center", va="top", fontsize=8, fontweight="bold")
    ax.legend(frameon=False, fontsize=8)


def webhook(doc, out):
    rows = [r for r in doc["results"] if not r["paced"]]
    groups = ["%s\n%d conn" % (r["webhook"], r["connections"]) for r in rows]
    has_up = any(r.get("upstream_rps") for r in rows)
    has_null = any(r.get("null_rps") for r in rows)  # run.sh --null
    fig, ax = plt.subplots()
    series = [("trainer-webhook", OURS, [r["rps"] for r in rows])]
    if has_up:
        series.append(("upstream v2.3.0", UPSTREAM, [r["upstream_rps"] for r in rows]))
    if has_null:
        series.append(("null webhook", NULL, [r.get("null_rps") for r in rows]))
    bars(ax, groups, series, "requests/s (flat out)",
         annotate=["%.1fx" % r["ratio_rps"] if r.get("ratio_rps") else "" for r in rows])
    ax.set_title("Webhook throughput (wrk, TLS keep-alive)")
    save(fig, out, "webhook-throughput.svg", doc)

    fig, ax = plt.subplots()
    series = [("trainer-webhook", OURS, [r["p99_ms"] for r in rows])]
    if has_up:
        series.append(("upstream v2.3.0", UPSTREAM, [r["upstream_p99_ms"] for r in rows]))
    if has_null:
        series.append(("null webhook", NULL, [r.get("null_p99_ms") for r in rows]))
    bars(ax, groups, series, "p99 latency ms (log)", log=True)
    ax.set_title("Webhook tail latency, flat out")
    save(fig, out, "webhook-p99.svg", doc)


def scale(doc, out):
    rows = doc["results"]
    fig, ax = plt.subplots()
    for impl, color in (("ours", OURS), ("upstream", UPSTREAM)):
        pts = sorted((r["n"], r["seconds"]) for r in rows if r["impl"] == impl and r.get("seconds"))
        if pts:
            ax.plot(*zip(*pts), "o-", color=color,
                    label="trainer-controller" if impl == "ours" else "upstream v2.3.0")
    for kind, color, label in (("owned", FLOOR, "floor: same writes, owned, same cluster"),
                               ("writes", FLOOR, "floor: same writes"),
                               ("watched", FLOOR, "floor: same writes, watched"),
                               ("ordered", FLOOR2, "floor: same writes, in upstream's order"),
                               ("jobsets", FLOOR2, "floor: JobSets only")):
        pts = sorted({(f["n"], sum(f["runs"]) / len(f["runs"])) for f in doc.get("floors", [])
                      if f["kind"] == kind})
        if pts:
            ax.plot(*zip(*pts), {"watched": "s:", "ordered": "d-.", "owned": "^-"}.get(kind, "s--"),
                    color=color, label=label)
    loglog(ax)
    finish(ax, "TrainJobs (N)", "seconds until N JobSets exist",
           "Controller: first wave of N TrainJobs")
    save(fig, out, "controller-time.svg", doc)

    fig, ax = plt.subplots()
    for impl, color in (("ours", OURS), ("upstream", UPSTREAM)):
        mine = sorted((r for r in rows if r["impl"] == impl), key=lambda r: r["n"])
        if not mine:
            continue
        name = "trainer-controller" if impl == "ours" else "upstream"
        ns = [r["n"] for r in mine]
        for key, style, what in (("peak_rss_mb", "o-", "peak, first wave"),
                                 ("settled_rss_mb", "^:", "settled"),
                                 ("restart_settled_rss_mb", "s--", "after restart")):
            if all(r.get(key) for r in mine):
                ax.plot(ns, [r[key] for r in mine], style, color=color,
                        label="%s: %s" % (name, what))
    loglog(ax)
    finish(ax, "TrainJobs (N)", "RSS MB", "Controller memory against N", legend_size=7)
    save(fig, out, "controller-rss.svg", doc)


def admission(doc, out):
    """One panel per concurrency: what each webhook configuration adds to a create over no
    webhook (the goal's measure), titled with ours/null over every block when interleaved."""
    summary = doc["summary"]
    concs = sorted({s["concurrency"] for s in summary})
    configs = [c for c in dict.fromkeys(s["config"] for s in summary) if c != "none"]
    colors = {"null": NULL, "ours": OURS, "upstream": UPSTREAM}
    labels = {"null": "null webhook", "ours": "trainer-webhook", "upstream": "upstream v2.3.0"}
    paired = {p["concurrency"]: p for p in doc.get("paired", []) if p["config"] == "ours"}
    fig, axes = plt.subplots(1, len(concs), squeeze=False)
    for ax, k in zip(axes[0], concs):
        added = {s["config"]: s.get("added_ms") for s in summary if s["concurrency"] == k}
        shown = [c for c in configs if added.get(c) is not None]
        ax.barh(range(len(shown)), [added[c] for c in shown],
                color=[colors.get(c, "#aec7e8" if c.startswith("ours-") else "#98df8a")
                       for c in shown])
        ax.set_yticks(range(len(shown)), [labels.get(c, c) for c in shown])
        ax.invert_yaxis()
        ax.set_xlabel("ms added per dry-run create")
        title = "%d at a time" % k
        if k in paired:
            title += "\nours/null %.2fx (95%%: %.2f-%.2f)" % (
                (paired[k]["added_vs_null"],) + tuple(paired[k]["ci95"]))
        ax.set_title(title, fontsize=9)
    fig.suptitle("What the webhooks add to a TrainJob create, as the client sees it")
    save(fig, out, "admission.svg", doc)


def deletion(doc, out):
    rows = doc["results"]
    groups = ["%s\n%s" % ("trainer-controller" if r["impl"] == "ours" else "upstream", r["mode"])
              for r in rows]
    fig, ax = plt.subplots()
    colors = [OURS if r["impl"] == "ours" else UPSTREAM for r in rows]
    ax.bar(range(len(rows)), [r["requests"]["total"] for r in rows], color=colors)
    ax.set_xticks(range(len(rows)), groups)
    ax.set_ylabel("API requests while N TrainJobs go")
    ax.set_title("Mass deletion of %d TrainJobs" % rows[0]["n"])
    save(fig, out, "deletion.svg", doc)


def soak(doc, out):
    samples = doc["results"]["samples"]
    fig, ax = plt.subplots()
    t = [s["t"] / 60 for s in samples]
    for svc, color in (("trainer-webhook", NULL), ("trainer-controller", OURS)):
        ax.plot(t, [s[svc]["rss_mb"] for s in samples], color=color, label=svc)
    ax.set_ylim(bottom=0)
    finish(ax, "minutes", "RSS MB", "Soak: RSS under steady TrainJob churn")
    save(fig, out, "soak-rss.svg", doc)


def summary_rows(name, doc):
    """(what, trainer-cpp's figure, baseline, goal, stamp) of one results document's headline
    rows; stamp is "date, commit" of the row (the cost curve's document gathers units measured
    at different commits) or else of the document."""
    for row in _figures(name, doc):
        src = row[4] if len(row) > 4 else doc
        yield row[:4] + ("%s, %s" % (src["date"][:10], src["commit"]),)


def _figures(name, doc):
    if name == "webhook":
        for r in doc["results"]:
            if not r["paced"] and r.get("ratio_rps"):
                floor = ("; %.2fx the null webhook's (%d)" % (r["ratio_rps_null"], r["null_rps"])
                         if r.get("ratio_rps_null") else "")
                yield ("webhook, %s, flat out, %d connection(s)" % (r["webhook"], r["connections"]),
                       "%.2fx upstream's req/s (%d vs %d); p99 %.3f ms%s" % (
                           r["ratio_rps"], r["rps"], r["upstream_rps"], r["p99_ms"], floor),
                       "upstream's webhook", ">= 4x; p99 <= 0.25 ms on 1")
    elif name == "scale":
        for r in doc["results"]:
            kind = "owned" if r.get("ratio_owned") else "writes"
            if r["impl"] == "ours" and r.get("ratio_" + kind):
                yield ("controller, %d TrainJobs" % r["n"],
                       "%.2fx; %.1f MB after a restart, ready in %.1f s, a new TrainJob in %.2f s"
                       % (r["ratio_" + kind], r["restart_settled_rss_mb"],
                          r["restart_ready_seconds"], r["new_trainjob_after_restart_seconds"]),
                       "the same writes from a bare client" + (
                           ", owned, on a cluster holding the TrainJobs" if kind == "owned" else ""),
                       "<= 1.2x", r)
    elif name == "admission" and doc.get("paired"):  # interleaved: over every block
        for p in doc["paired"]:
            if p["config"] == "ours":
                yield ("admission, dry-run creates %d at a time, interleaved" % p["concurrency"],
                       "adds %.3f ms per create: %.2fx the null webhook's (95%% interval "
                       "%.2f-%.2f over %d blocks)" % (p["added_ms"], p["added_vs_null"],
                                                      p["ci95"][0], p["ci95"][1], p["blocks"]),
                       "no webhook; the null webhook", "<= 1.1x the null webhook's")
    elif name == "admission":
        for s in doc["summary"]:
            if s["config"] == "ours" and s.get("added_vs_null"):
                median = ("; median of %d rounds %.2fx" % (
                    len(s["added_vs_null_rounds"]), s["added_vs_null_median"])
                    if s.get("added_vs_null_median") is not None else "")
                yield ("admission, dry-run creates %d at a time" % s["concurrency"],
                       "adds %.3f ms per create: %.2fx the null webhook's%s" % (
                           s["added_ms"], s["added_vs_null"], median),
                       "no webhook; the null webhook", "<= 1.1x the null webhook's")
    elif name == "deletion":
        for r in doc["results"]:
            yield ("mass deletion of %d TrainJobs (%s), %s" % (r["n"], r["mode"], r["impl"]),
                   "%d API requests" % r["requests"]["total"], "upstream's manager",
                   "<= upstream's")


def summary(data):
    """The headline figures as Markdown table rows, from whatever results exist."""
    lines = ["| what | trainer-cpp | baseline in the same run | goal | measured |",
             "|---|---|---|---|---|"]
    for name in ("webhook", "scale", "admission", "deletion"):
        doc = load(data, name)
        for row in summary_rows(name, doc) if doc else ():
            lines.append("| %s | %s | %s | %s | %s |" % row)
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(ROOT, "docs", "benchmarks", "data"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks"))
    ap.add_argument("--summary", action="store_true", help="print the headline table only")
    args = ap.parse_args()
    if args.summary:
        print(summary(args.data), end="")
        return
    os.makedirs(args.out, exist_ok=True)
    drawn = 0
    for name, draw in (("webhook", webhook), ("scale", scale), ("admission", admission),
                       ("deletion", deletion), ("soak", soak)):
        doc = load(args.data, name)
        if doc:
            draw(doc, args.out)
            drawn += 1
    if not drawn:
        sys.exit("plot.py: no results in %s" % args.data)


if __name__ == "__main__":
    main()

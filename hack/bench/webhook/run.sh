#!/usr/bin/env bash
# Benchmarks trainer-webhook with wrk over TLS keep-alive connections: a ~1.3 KB TrainJob CREATE
# AdmissionReview posted to the validating and the mutating webhook, each
#   - at a fixed rate (1000 req/s on 1 connection, 4000 req/s on 16): p50 / p99 latency;
#   - flat out on 1 and on 16 connections: max throughput and its p50 / p99.
# The webhook runs with --offline-runtimes (the torch-distributed ClusterTrainingRuntime from
# examples/), so the full validation path runs without a cluster; certificates are generated.
#
#   hack/bench/webhook/run.sh [--bin build/bin/trainer-webhook] [--duration 15] [--threads 64]
#                             [--nice -10] [--rt] [--upstream] [--null] [--busy-poll 50us]
#                             [--out BASE]
# --nice runs the benchmark in its own session (so its own scheduler autogroup, which is what
# CFS shares the CPUs between) at that niceness (negative values need root): on a machine shared
# with compilers it then measures the webhook rather than the scheduler.
# --rt runs the webhook and wrk as SCHED_RR (chrt -r 10; root): they preempt everything else, so
# a busy shared machine behaves like an idle one for them (the kernel still keeps 5% of each
# second for other tasks). Use it for numbers comparable with an idle machine.
# --upstream also runs upstream Kubeflow Trainer v2.3.0's Go webhook (its manager, built and cached
# by hack/bench/webhook/upstream.sh) under the same load, right after ours for each row, and
# prints ours/upstream ratios: the baseline measured in the same run. Upstream's manager needs a
# cluster for its runtime cache and controllers, so a test bed is started for it
# (hack/testbed/up.sh in a temporary TESTBED_DIR; trainer CRDs from deploy/crds and the same
# torch-distributed ClusterTrainingRuntime applied), with leader election, cert management and
# metrics off, and its serving certificate (the same one as ours) in
# $TMPDIR/k8s-webhook-server/serving-certs, controller-runtime's default cert dir.
# --null also runs trainer-bench-null-webhook (hack/bench/admission/null_webhook.cc, next to --bin),
# right after ours for each row: a handler that does no work on trainer-webhook's own HTTP/TLS
# server (common/http, the same certificate and thread count), answering the bytes ours answers
# (--status; on mutate ours' JSONPatch, with the timestamp of the check at the start). Its req/s
# and latency are this machine's floor for any webhook on that server: ours/null says how much
# of a row is ours' handler, and whether a ratio to upstream is reachable here at all.
# --busy-poll passes that --busy-poll to trainer-webhook and to the null webhook alike (without
# it both run with the server's default): how long a connection's thread polls for the next request
# before sleeping (common/http/server.h, ServerOptions::busy_poll).
# Each row also reads the servers' RSS (VmRSS) and peak RSS (VmHWM) right after its load, and the
# CPU they used during it (utime + stime from /proc/PID/stat, in cores: CPU seconds per second).
# Prints a markdown table and writes it with the results as JSON to BASE.txt and BASE.json
# (default .local/bench/webhook-<UTC time>; hack/bench/plot.py draws docs/benchmarks/ from it).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
args=("$@")
bin="$root/build/bin/trainer-webhook"
duration=15
threads=64
nice_level=0
rt=()
upstream=0
null=0
out_base=""
busy_poll=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --nice) nice_level="$2"; shift 2 ;;
    --rt) rt=(chrt -r 10); shift ;;
    --upstream) upstream=1; shift ;;
    --null) null=1; shift ;;
    --busy-poll) busy_poll=(--busy-poll "$2"); shift 2 ;;
    --out) out_base="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ "$nice_level" != 0 && -z "${WEBHOOK_BENCH_SESSION:-}" ]]; then
  exec env WEBHOOK_BENCH_SESSION=1 setsid --wait "$0" "${args[@]}"
fi
if [[ -n "${WEBHOOK_BENCH_SESSION:-}" ]]; then
  echo "$nice_level" > /proc/self/autogroup
  renice -n "$nice_level" -p $$ >/dev/null
fi
[[ -x "$bin" ]] || { echo "no binary at $bin (build trainer-webhook or pass --bin)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is not installed" >&2; exit 2; }
null_bin="$(dirname "$bin")/trainer-bench-null-webhook"
if ((null)) && [[ ! -x "$null_bin" ]]; then
  echo "no $null_bin (build trainer-bench-null-webhook)" >&2; exit 2
fi

if ((upstream)); then
  upstream_bin=$("$here/upstream.sh")
fi

work="$(mktemp -d /tmp/webhook-bench.XXXXXX)"
export BENCH_ROOT="$root"
pid=""
upstream_pid=""
null_pid=""
cleanup() {
  for p in $pid $upstream_pid $null_pid; do
    kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true
  done
  if [[ -f "$work/testbed/.testbed" ]]; then
    TESTBED_DIR="$work/testbed" "$root/hack/testbed/down.sh" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# A CA and a serving certificate for 127.0.0.1 (P-256, as cert-manager would issue).
"$here/certs.sh" "$work"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${rt[@]}" "$bin" --port="$port" --cert-dir="$work" --metrics-bind-address=0 --health-probe-bind-address=0 \
  --webhook-threads="$threads" "${busy_poll[@]}" --offline-runtimes="$root/examples/runtimes/torch-distributed.yaml" \
  >"$work/webhook.log" 2>&1 &
pid=$!
base="https://127.0.0.1:$port"
for _ in $(seq 100); do
  curl -s --cacert "$work/ca.crt" -o /dev/null "$base/" && break
  sleep 0.1
done

# Sanity: both webhooks answer the review as expected before we time them.
validate="$base/validate-trainer-kubeflow-org-v1alpha1-trainjob"
mutate="$base/mutate-trainer-kubeflow-org-v1alpha1-trainjob"
body="$here/trainjob-create.json"
out=$(curl -s --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary @"$body" "$validate")
grep -q '"allowed":true' <<<"$out" || { echo "validate answered: $out" >&2; exit 1; }
out=$(curl -s --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary @"$body" "$mutate")
grep -q '"patchType":"JSONPatch"' <<<"$out" || { echo "mutate answered: $out" >&2; exit 1; }

if ((null)); then
  # The null webhook answers what ours answers: the status of an allowed review, and on mutate
  # ours' JSONPatch (decoded from ours' answer above), so only the handler's work differs.
  ours_patch=$(python3 -c 'import base64, json, sys
print(base64.b64decode(json.load(sys.stdin)["response"]["patch"]).decode())' <<<"$out")
  null_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "${rt[@]}" "$null_bin" --cert-dir "$work" --port "$null_port" --threads "$threads" "${busy_poll[@]}" --status \
    --mutate-patch "$ours_patch" >"$work/null.log" 2>&1 &
  null_pid=$!
  for _ in $(seq 100); do
    grep -q '^listening on' "$work/null.log" && break
    kill -0 "$null_pid" 2>/dev/null || { cat "$work/null.log" >&2; exit 1; }
    sleep 0.1
  done
  null_base="https://127.0.0.1:$null_port"
  null_validate="$null_base/validate-trainer-kubeflow-org-v1alpha1-trainjob"
  null_mutate="$null_base/mutate-trainer-kubeflow-org-v1alpha1-trainjob"
  # The same bytes but for the patch's timestamp (the time ours stamps on runtimePatches).
  same_answer() {
    python3 - "$1" "$2" <<'PY'
import base64, json, re, sys
def norm(text):
    doc = json.loads(text)
    r = doc["response"]
    if "patch" in r:
        r["patch"] = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME",
                            base64.b64decode(r["patch"]).decode())
    return doc
a, b = sys.argv[1:]
sys.exit(0 if len(a) == len(b) and norm(a) == norm(b) else 1)
PY
  }
  for name in validate mutate; do
    url_var="null_$name"
    ours_answer=$(curl -s --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary @"$body" "${!name}")
    null_answer=$(curl -s --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary @"$body" "${!url_var}")
    same_answer "$null_answer" "$ours_answer" ||
      { printf 'null %s answered\n%s\nours\n%s\n' "$name" "$null_answer" "$ours_answer" >&2; exit 1; }
  done
fi

if ((upstream)); then
  # A test bed for upstream's manager: its webhooks read runtimes from its informer cache, and
  # its controllers need the JobSet and PodGroup CRDs (up.sh installs those).
  export TESTBED_DIR="$work/testbed"
  "$root/hack/testbed/up.sh" >"$work/testbed-up.log" 2>&1 ||
    { cat "$work/testbed-up.log" >&2; exit 1; }
  kubectl=("$("$root/hack/testbed/build.sh" --print-bin-dir)/kubectl" --kubeconfig "$TESTBED_DIR/kubeconfig")
  for crd in "$root"/deploy/crds/trainer.kubeflow.org_*.yaml; do
    "${kubectl[@]}" apply --server-side -f "$crd" >/dev/null
  done
  "${kubectl[@]}" wait --for=condition=Established --timeout=60s \
    crd/clustertrainingruntimes.trainer.kubeflow.org crd/trainingruntimes.trainer.kubeflow.org \
    crd/trainjobs.trainer.kubeflow.org >/dev/null
  "${kubectl[@]}" apply --server-side -f "$root/examples/runtimes/torch-distributed.yaml" >/dev/null
  mkdir -p "$work/upstream-tmp/k8s-webhook-server/serving-certs"
  cp "$work/tls.crt" "$work/tls.key" "$work/upstream-tmp/k8s-webhook-server/serving-certs/"
  upstream_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  upstream_health=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat >"$work/upstream-config.yaml" <<CONFIG
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
health:
  healthProbeBindAddress: 127.0.0.1:$upstream_health
metrics:
  bindAddress: "0"
webhook:
  port: $upstream_port
  host: 127.0.0.1
leaderElection:
  leaderElect: false
certManagement:
  enable: false
CONFIG
  TMPDIR="$work/upstream-tmp" KUBECONFIG="$TESTBED_DIR/kubeconfig" "${rt[@]}" "$upstream_bin" \
    --config="$work/upstream-config.yaml" >"$work/upstream.log" 2>&1 &
  upstream_pid=$!
  for _ in $(seq 300); do
    curl -fs -o /dev/null "http://127.0.0.1:$upstream_health/readyz" && break
    kill -0 "$upstream_pid" 2>/dev/null || { tail -20 "$work/upstream.log" >&2; exit 1; }
    sleep 0.2
  done
  upstream_base="https://127.0.0.1:$upstream_port"
  upstream_validate="$upstream_base/validate-trainer-kubeflow-org-v1alpha1-trainjob"
  upstream_mutate="$upstream_base/mutate-trainer-kubeflow-org-v1alpha1-trainjob"
  # The same answers as ours, or the comparison is meaningless.
  out=$(curl -s --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary @"$body" "$upstream_validate")
  grep -q '"allowed":true' <<<"$out" || { echo "upstream validate answered: $out" >&2; tail -20 "$work/upstream.log" >&2; exit 1; }
  out=$(curl -s --cacert "$work/ca.crt" -H 'Content-Type: application/json' --data-binary @"$body" "$upstream_mutate")
  grep -q '"patchType":"JSONPatch"' <<<"$out" || { echo "upstream mutate answered: $out" >&2; exit 1; }
fi

# rss_of <pid>: "VmRSS VmHWM" in MB.
rss_of() {
  awk '/^VmRSS:/ {r = $2} /^VmHWM:/ {h = $2} END {printf "%.1f %.1f\n", r / 1024, h / 1024}' \
    "/proc/$1/status"
}

# cpu_ticks_of <pid>: its utime + stime so far, in clock ticks.
cpu_ticks_of() {
  awk '{print $14 + $15}' "/proc/$1/stat"
}
hz=$(getconf CLK_TCK)
# cores <ticks before> <ticks after>: the CPU used over one row's load, in cores.
cores() {
  python3 -c "print(f'{($2 - $1) / $hz / $duration:.2f}')"
}

# run <url> <connections> <wrk threads> <rate or 0>: prints "rps p50 p99 errors"
run() {
  local line
  line=$(BODY="$body" RATE="$4" CONNS="$2" "${rt[@]}" wrk -t"$3" -c"$2" -d"${duration}s" --latency \
    -s "$here/admission.lua" "$1" | grep '^RESULT')
  local rps p50 p99 err non2xx
  rps=$(sed -E 's/.* rps=([0-9]+).*/\1/' <<<"$line")
  p50=$(sed -E 's/.* p50_ms=([0-9.]+).*/\1/' <<<"$line")
  p99=$(sed -E 's/.* p99_ms=([0-9.]+).*/\1/' <<<"$line")
  err=$(sed -E 's/.* errors=([0-9]+).*/\1/' <<<"$line")
  non2xx=$(sed -E 's/.* non2xx=([0-9]+).*/\1/' <<<"$line")
  echo "$rps $p50 $p99 $((err + non2xx))"
}

# against <url> <pid> <p99 ratio: theirs/ours or ours/theirs>: the current row (conns,
# wrk_threads, rate; ours' rps and p99) run against another server. Sets b_rps b_p50 b_p99 b_err
# b_rss b_hwm b_cpu and appends its cells, with the req/s ratio ours/theirs, to `line`.
against() {
  local ratio tail_ratio ticks
  ticks=$(cpu_ticks_of "$2")
  read -r b_rps b_p50 b_p99 b_err < <(run "$1" "$conns" "$wrk_threads" "$rate")
  read -r b_rss b_hwm < <(rss_of "$2")
  b_cpu=$(cores "$ticks" "$(cpu_ticks_of "$2")")
  ratio=$(python3 -c "print(f'{$rps / max($b_rps, 1):.2f}')")
  if [[ "$3" == theirs/ours ]]; then
    tail_ratio=$(python3 -c "print(f'{$b_p99 / max($p99, 0.001):.1f}')")
  else
    tail_ratio=$(python3 -c "print(f'{$p99 / max($b_p99, 0.001):.1f}')")
  fi
  line+=" $b_rps | $b_p50 | $b_p99 | $b_err | $b_rss | $b_cpu | **$ratio** | $tail_ratio |"
}

[[ -n "$out_base" ]] || out_base="$root/.local/bench/webhook-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$(dirname "$out_base")"
rows_tsv="$work/rows.tsv"
: >"$rows_tsv"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
{
echo "load average before: $load_start, autogroup: $(cat /proc/self/autogroup), ${rt[*]:-no realtime}, $duration s per row"
echo
rows=("paced, 1 ms think time|1|1|1000" "paced, 4 ms think time per conn|16|2|4000" "max|1|1|0" "max|16|2|0")
header="| webhook | load | connections | req/s | p50 ms | p99 ms | errors | RSS MB | CPU cores |"
((upstream)) && header+=" upstream req/s | upstream p50 ms | upstream p99 ms | upstream errors | upstream RSS MB | upstream CPU cores | **req/s ours/upstream** | p99 upstream/ours |"
((null)) && header+=" null req/s | null p50 ms | null p99 ms | null errors | null RSS MB | null CPU cores | **req/s ours/null** | p99 ours/null |"
echo "$header"
sed -E 's/[^|]+/---/g' <<<"$header"
for name in validate mutate; do
  url=${!name}
  for row in "${rows[@]}"; do
    IFS='|' read -r load conns wrk_threads rate <<<"$row"
    ticks=$(cpu_ticks_of "$pid")
    read -r rps p50 p99 err < <(run "$url" "$conns" "$wrk_threads" "$rate")
    read -r rss hwm < <(rss_of "$pid")
    cpu=$(cores "$ticks" "$(cpu_ticks_of "$pid")")
    line="| $name | $load | $conns | $rps | $p50 | $p99 | $err | $rss | $cpu |"
    urps="" up50="" up99="" uerr="" urss="" uhwm="" ucpu=""
    if ((upstream)); then
      uurl_var="upstream_$name"
      against "${!uurl_var}" "$upstream_pid" theirs/ours
      urps=$b_rps up50=$b_p50 up99=$b_p99 uerr=$b_err urss=$b_rss uhwm=$b_hwm ucpu=$b_cpu
    fi
    nrps="" np50="" np99="" nerr="" nrss="" nhwm="" ncpu=""
    if ((null)); then
      nurl_var="null_$name"
      against "${!nurl_var}" "$null_pid" ours/theirs
      nrps=$b_rps np50=$b_p50 np99=$b_p99 nerr=$b_err nrss=$b_rss nhwm=$b_hwm ncpu=$b_cpu
    fi
    echo "$line"
    printf '%s\t' "$name" "$load" "$conns" "$rate" "$rps" "$p50" "$p99" "$err" "$rss" "$hwm" \
      "$urps" "$up50" "$up99" "$uerr" "$urss" "$uhwm" "$nrps" "$np50" "$np99" "$nerr" "$nrss" \
      "$nhwm" "$cpu" "$ucpu" >>"$rows_tsv"
    printf '%s\n' "$ncpu" >>"$rows_tsv"
  done
done
} | tee "$work/table.txt"

# The same rows as JSON (benchlib's results document).
python3 - "$rows_tsv" "$out_base" "$work/table.txt" "$load_start" "${rt[*]:-}" "$nice_level" \
  "$duration" "$threads" "$upstream" "$null" "${busy_poll[1]:-}" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["BENCH_ROOT"], "hack", "bench"))
import benchlib
rows_tsv, out, table, load_start, rt, nice, duration, threads, upstream, null, busy_poll = sys.argv[1:]
num = lambda v: (float(v) if "." in v else int(v)) if v not in ("", None) else None
keys = ["webhook", "load", "connections", "rate", "rps", "p50_ms", "p99_ms", "errors", "rss_mb",
        "peak_rss_mb", "upstream_rps", "upstream_p50_ms", "upstream_p99_ms", "upstream_errors",
        "upstream_rss_mb", "upstream_peak_rss_mb", "null_rps", "null_p50_ms", "null_p99_ms",
        "null_errors", "null_rss_mb", "null_peak_rss_mb", "cpu_cores", "upstream_cpu_cores",
        "null_cpu_cores"]
rows = []
for line in open(rows_tsv):
    r = dict(zip(keys, line.rstrip("\n").split("\t")))
    r = {k: (v if k in ("webhook", "load") else num(v)) for k, v in r.items()}
    r["paced"] = bool(r["rate"])
    if r["upstream_rps"]:
        r["ratio_rps"] = round(r["rps"] / max(r["upstream_rps"], 1), 2)
        r["ratio_p99"] = round(r["upstream_p99_ms"] / max(r["p99_ms"], 0.001), 2)
    if r["null_rps"]:
        # ours / the null webhook: the share of the floor ours reaches (req/s), and how much
        # longer ours' tail is than the floor's (p99).
        r["ratio_rps_null"] = round(r["rps"] / max(r["null_rps"], 1), 2)
        r["ratio_p99_null"] = round(r["p99_ms"] / max(r["null_p99_ms"], 0.001), 2)
    else:
        for k in [k for k in r if k.startswith("null_")]:
            del r[k]  # a run without --null: the document keeps its earlier shape
    rows.append(r)
doc = benchlib.envelope("webhook", None)
doc["load_average_start"] = [float(x) for x in load_start.split()]
doc["args"] = {"rt": bool(rt), "nice": int(nice), "duration_seconds": int(duration),
               "threads": int(threads), "upstream": upstream == "1", "null": null == "1",
               "busy_poll": busy_poll or None}
doc["results"] = rows
benchlib.write_results(doc, out, open(table).read())
PY

#!/usr/bin/env bash
# Cache lines trainer-webhook's request path touches when every request starts with cold caches,
# as it does behind a busy apiserver (docs/benchmarks.md, "admission"): code lines, data lines
# read and data lines written, per request, simulated by cachegrind (last level 32 MiB) with
# trainer-bench-webhook-profile --evict-bytes 64 MiB. Like instruction counts the numbers repeat
# exactly (for the same paths: longer ones shift the stack and move them by ~2%), so two builds
# compare on a busy machine where the cold handler's time moves by 20%.
#
#   hack/bench/webhook/cold_lines.sh [--bin build/bin] [--count 60] [--top 25] [--keep DIR]
#                                    [--apiserver]
# Prints one line per path. Each path runs twice (10 and --count requests) and the difference is
# divided by the extra requests, so start-up and exit drop out; the eviction's own writes (one
# line per 64 bytes) are taken off the writes. --top N lists the functions with the most code
# lines missed in the longer run (start-up included). --apiserver sends the reviews the
# kube-apiserver sends for admission/run.py's create (hack/bench/admission/testdata) instead of
# trainjob-create.json (a TrainJob with a runtimePatch).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
exe=trainer-bench-webhook-profile
default_count=60  # each request also writes 64 MB under cachegrind
source "$here/callgrind_common.sh"
apiserver=0
args=()
for a in "$@"; do
  if [[ "$a" == --apiserver ]]; then apiserver=1; else args+=("$a"); fi
done
callgrind_options "${args[@]}"
((count > 10)) || { echo "--count must be more than 10" >&2; exit 2; }
evict=$((64 << 20))

# misses <path> <requests>: "code data-read data-write" last-level misses of the whole run.
misses() {
  local out="$work/cachegrind.out.$1.$2" body="$here/trainjob-create.json"
  ((apiserver)) && body="$root/hack/bench/admission/testdata/apiserver-$1.json"
  valgrind --tool=cachegrind --cache-sim=yes --I1=65536,4,64 --D1=32768,8,64 \
    --LL=33554432,16,64 --cachegrind-out-file="$out" \
    "$exe" --runtimes "$root/examples/runtimes/torch-distributed.yaml" \
    --body "$body" --path "$1" --count "$2" --evict-bytes "$evict" \
    >"$work/$1.$2.log" 2>&1 || { cat "$work/$1.$2.log" >&2; exit 1; }
  # "LLi misses: N" and "LLd misses: N ( R rd + W wr)"
  tr -d , <"$work/$1.$2.log" | awk '/LLi misses/ {i = $4} /LLd misses/ {r = $6; w = $9}
    END {print i, r, w}'
}

for path in validate mutate; do
  read -r i0 r0 w0 < <(misses "$path" 10)
  read -r i1 r1 w1 < <(misses "$path" "$count")
  n=$((count - 10))
  echo "$path: per request $(((i1 - i0) / n)) code lines, $(((r1 - r0) / n)) data lines read," \
    "$(((w1 - w0) / n - evict / 64)) data lines written ($n cold requests)"
  if ((top > 0)); then
    cg_annotate --show=ILmr,DLmr,DLmw --sort=ILmr "$work/cachegrind.out.$path.$count" 2>/dev/null |
      first_rows "$top"
    echo
  fi
done

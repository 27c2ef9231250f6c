#!/usr/bin/env bash
# Instructions per admission request of trainer-webhook's request path (decode, runtime lookup,
# validation or defaulting, encode, metrics; no TLS, no HTTP parsing), counted by callgrind: the
# measure for comparing two builds of the webhook's code on a busy machine, where req/s under wrk
# move by tens of percent with the load while instruction counts repeat to a few in 10,000.
#
#   hack/bench/webhook/callgrind.sh [--bin build/bin] [--count 2000] [--top 25] [--keep DIR]
# Prints one line per path: instructions per request (Ir), and with --top the functions with the
# most inclusive and self instructions. --keep DIR keeps the callgrind.out files for
# callgrind_annotate / kcachegrind.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
exe=trainer-bench-webhook-profile
source "$here/callgrind_common.sh"
callgrind_options "$@"
for path in validate mutate; do
  out="$work/callgrind.out.$path"
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    --toggle-collect='trainer::bench::ServeMany*' \
    "$exe" --runtimes "$root/examples/runtimes/torch-distributed.yaml" \
    --body "$here/trainjob-create.json" --path "$path" --count "$count" \
    >"$work/$path.log" 2>&1 || { cat "$work/$path.log" >&2; exit 1; }
  total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  echo "$path: $((total / count)) instructions per request ($count requests)"
  if ((top > 0)); then
    top_functions "$out" "$top"
  fi
done

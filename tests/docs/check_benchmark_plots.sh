#!/usr/bin/env bash
# The plots in docs/benchmarks/ are drawn from the JSON results in docs/benchmarks/data/, never by
# hand: redraws them into a scratch directory and fails when a committed SVG differs from its
# redraw (data changed without a redraw, or an SVG edited), is missing, or is not drawn at all.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

"$root/hack/bench/plot.py" --out "$out" >/dev/null
fail=0
for svg in "$out"/*.svg; do
  name="$(basename "$svg")"
  if ! cmp -s "$svg" "$root/docs/benchmarks/$name"; then
    echo "docs/benchmarks/$name differs from its redraw: run hack/bench/plot.py" >&2
    fail=1
  fi
done
for svg in "$root"/docs/benchmarks/*.svg; do
  name="$(basename "$svg")"
  [[ -f "$out/$name" ]] || { echo "docs/benchmarks/$name is not drawn by hack/bench/plot.py" >&2; fail=1; }
done
# Every plot docs/benchmarks.md shows is one of them.
for name in $(grep -o 'benchmarks/[a-z0-9-]*\.svg' "$root/docs/benchmarks.md" | sort -u); do
  [[ -f "$out/${name#benchmarks/}" ]] || { echo "docs/benchmarks.md shows $name, which is not drawn" >&2; fail=1; }
done
((fail == 0)) && echo "$(ls "$out" | wc -l) plots match their data"
exit "$fail"

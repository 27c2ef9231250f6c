#!/usr/bin/env bash
# The main job: see trainer-cpp work on this machine.
#
#   hack/run-local.sh [up]     build, then render every example TrainJob offline with
#                              trainer-render (the objects the controller would apply)
#   hack/run-local.sh down     stop whatever `up` started (nothing yet in offline mode)
#
# Once trainer-webhook and trainer-controller exist, `up` runs them against the local test bed
# (hack/testbed) and shows an example TrainJob reach Complete; the interface stays the same.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd="${1:-up}"
state=.local

say() { echo "[run-local] $*"; }

case "$cmd" in
  up)
    hack/install-deps.sh --build-only
    say "building (cmake, -j2)"
    if [[ ! -f build/CMakeCache.txt ]]; then cmake -S . -B build -G Ninja >/dev/null; fi
    cmake --build build -j2 --target trainer-render
    mkdir -p "$state/rendered"
    runtime_args=()
    for rt in examples/runtimes/*.yaml; do runtime_args+=(-f "$rt"); done
    for job in examples/trainjobs/*.yaml; do
      name=$(basename "$job" .yaml)
      out="$state/rendered/$name.yaml"
      if build/bin/trainer-render "${runtime_args[@]}" -f "$job" >"$out" 2>"$out.err"; then
        say "rendered $job -> $out ($(grep -c '^kind:' "$out") objects)"
      else
        say "FAILED $job: $(cat "$out.err")"
        exit 1
      fi
    done
    say "done: the rendered objects are in $state/rendered/"
    ;;
  down)
    say "nothing running in offline mode"
    ;;
  *)
    echo "usage: hack/run-local.sh [up|down]" >&2
    exit 2
    ;;
esac

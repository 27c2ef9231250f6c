#!/usr/bin/env bash
# Keeps the copies kustomize and Helm need in step with their sources: neither loads a file from
# outside its own directory, so deploy/runtimes/ and charts/trainer-cpp/ hold copies of
#   examples/runtimes/*.yaml                     -> deploy/runtimes/, charts/trainer-cpp/files/runtimes/
#   deploy/crds/trainer.kubeflow.org_*.yaml      -> charts/trainer-cpp/crds/
#   deploy/components/prometheus-rules/trainer-alerts.rules.yaml,
#   deploy/components/grafana-dashboard/trainer-dashboard.json -> charts/trainer-cpp/files/
#
#   hack/sync-deploy-copies.sh           copy
#   hack/sync-deploy-copies.sh --check   exit 1 and name every copy that differs or is missing
#                                        (tests/integration/chart runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[[ ${1:-} == --check ]] && check=1
chart=charts/trainer-cpp
pairs=()
for f in examples/runtimes/*.yaml; do
  pairs+=("$f deploy/runtimes/$(basename "$f")" "$f $chart/files/runtimes/$(basename "$f")")
done
for f in deploy/crds/trainer.kubeflow.org_*.yaml; do pairs+=("$f $chart/crds/$(basename "$f")"); done
pairs+=("deploy/components/prometheus-rules/trainer-alerts.rules.yaml $chart/files/trainer-alerts.rules.yaml"
  "deploy/components/grafana-dashboard/trainer-dashboard.json $chart/files/trainer-dashboard.json")

stale=0
for p in "${pairs[@]}"; do
  read -r src dst <<<"$p"
  cmp -s "$src" "$dst" && continue
  if ((check)); then
    echo "stale copy: $dst (of $src)" >&2
    stale=1
  else
    mkdir -p "$(dirname "$dst")"
    cp "$src" "$dst"
    echo "updated $dst"
  fi
done
# A copy whose source is gone.
for dst in deploy/runtimes/*.yaml $chart/files/runtimes/*.yaml $chart/crds/*.yaml; do
  base=$(basename "$dst")
  [[ $base == kustomization.yaml ]] && continue
  [[ -f examples/runtimes/$base || -f deploy/crds/$base ]] && continue
  if ((check)); then echo "copy without a source: $dst" >&2; stale=1; else rm "$dst"; echo "removed $dst"; fi
done
if ((check && stale)); then
  echo "run hack/sync-deploy-copies.sh" >&2
  exit 1
fi

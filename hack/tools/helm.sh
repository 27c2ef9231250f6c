#!/usr/bin/env bash
# Builds Helm (helm.sh/helm/v3, a pinned version) through the Go module proxy for the chart's
# tests (tests/integration/chart) and prints the binary's path. Cached under
# ~/.cache/trainer-tools/helm-<version>/ (override the root with TRAINER_TOOLS_CACHE); a warm
# call returns at once. Nothing here is needed to *use* charts/trainer-cpp: any Helm 3.8+ works.
#
#   hack/tools/helm.sh            build if needed; print the path of helm
#   hack/tools/helm.sh --check    exit 0 if built, 1 otherwise
set -euo pipefail
HELM_VERSION=v3.22.0
RECIPE=3 # bump when the build changes, so cached copies rebuild

source "$(dirname "$0")/../lib/go-install.sh"
dir="${TRAINER_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainer-tools}/helm-$HELM_VERSION"
stamp="helm $HELM_VERSION recipe $RECIPE"
case "${1:-}" in
  --check) [[ -x "$dir/bin/helm" && "$(cat "$dir/stamp" 2>/dev/null)" == "$stamp" ]]; exit ;;
  "") ;;
  *) echo "usage: hack/tools/helm.sh [--check]" >&2; exit 2 ;;
esac
# As Helm's own Makefile stamps a release: `helm version` says the exact version, and the
# Kubernetes version `helm template` and `helm lint` assume is that of the client-go it is built
# with (v0.37 -> 1.37), not the fallback 1.20 that a chart's kubeVersion would refuse.
HELM_K8S_MINOR=37
ld="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
for p in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  ld+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$HELM_K8S_MINOR"
done
go_install_cached "$dir" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" "$stamp" "$ld"

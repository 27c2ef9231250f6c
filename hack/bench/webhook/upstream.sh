#!/usr/bin/env bash
# Builds upstream Kubeflow Trainer's manager (cmd/trainer-controller-manager, which serves
# upstream's Go webhooks) at a pinned version through the Go module proxy, for
# `hack/bench/webhook/run.sh --upstream`: the same-run baseline the benchmark's ratios are taken
# against. `go install module/cmd@version` works for it (unlike etcd, Kubernetes and JobSet in
# hack/testbed/build.sh, its go.mod has no replace directive). The result is cached under
# ~/.cache/trainer-bench-upstream/<version>/ (GOPATH, GOCACHE and the binary, hack/lib/go-install.sh),
# with a stamp, so a second run returns at once. A cold build (module downloads + compile) took
# 6 min of CPU, 68 min of wall time on this 2-core machine shared with other builds at load
# average ~30. Also used by tests/integration/migration (upstream runs, then trainer-cpp takes over).
#
#   hack/bench/webhook/upstream.sh               build if needed; print the binary's path
#   hack/bench/webhook/upstream.sh --check       exit 0 if built, 1 otherwise
# Environment: TRAINER_UPSTREAM_CACHE (default ~/.cache/trainer-bench-upstream).
set -euo pipefail

UPSTREAM_MODULE=github.com/kubeflow/trainer/v2
UPSTREAM_VERSION=v2.3.0
RECIPE=2  # bump when the build below changes, so cached copies rebuild

cache_root=${TRAINER_UPSTREAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainer-bench-upstream}
vdir="$cache_root/$UPSTREAM_VERSION"
bin="$vdir/bin/trainer-controller-manager"
stamp="$vdir/stamp"
want="$UPSTREAM_MODULE $UPSTREAM_VERSION recipe $RECIPE"

built() { [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; }

case "${1:-}" in
  --check) built; exit ;;
  "") ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "upstream.sh: unknown argument $1" >&2; exit 2 ;;
esac

source "$(dirname "$0")/../../lib/go-install.sh"
go_install_cached "$vdir" "$UPSTREAM_MODULE/cmd/trainer-controller-manager@$UPSTREAM_VERSION" "$want"

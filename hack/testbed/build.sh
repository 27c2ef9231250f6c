#!/usr/bin/env bash
# Builds the test bed's binaries and fetches its CRDs, all at pinned versions, through the Go
# module proxy: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, the JobSet
# controller and KWOK, plus the JobSet and PodGroup (scheduler-plugins, Volcano) CRDs; for the real
# node (hack/testbed/node.sh) also kubelet, kube-proxy and a CoreDNS with only the plugins it uses.
#
# Each Go component is built in a throwaway "tool module" (go mod init + go get -tool) because
# etcd, Kubernetes and JobSet cannot be `go install`ed: their go.mod files carry replace
# directives (Kubernetes also requires its staging modules at v0.0.0), and the proxy refuses
# JobSet's version list. Results are cached under ~/.cache/trainer-testbed/<versions>/, with one
# stamp per component, so a second run returns in well under a second.
#
# Usage:
#   hack/testbed/build.sh [COMPONENT...]   build what is missing (default: all)
#                                          components: etcd kube kwok jobset crds node coredns
#   hack/testbed/build.sh --check          exit 0 if everything is built, 1 otherwise
#   hack/testbed/build.sh --print-bin-dir  print the directory holding the binaries
#   hack/testbed/build.sh --print-crd-dir  print the directory holding the CRDs
#   hack/testbed/build.sh --print-dir      print the versioned cache directory
# Environment: TESTBED_CACHE (default ~/.cache/trainer-testbed).
set -euo pipefail

# --- Pinned versions -------------------------------------------------------------------------
ETCD_MODULE=go.etcd.io/etcd/server/v3
ETCD_VERSION=v3.6.16
K8S_VERSION=v1.36.3
JOBSET_VERSION=v0.12.0
KWOK_VERSION=v0.8.0
SCHED_PLUGINS_VERSION=v0.35.4-devel
CONTROLLER_TOOLS_VERSION=v0.19.0
COREDNS_VERSION=v1.15.0
# The volcano.sh/apis pseudo-version upstream Kubeflow Trainer v2.3.0 pins.
VOLCANO_APIS_VERSION=v1.13.1-0.20251028070205-46d20c0699e7
# Bump a component's recipe when the way it is built below changes, so cached copies rebuild.
RECIPE_ETCD=1 RECIPE_KUBE=1 RECIPE_KWOK=1 RECIPE_JOBSET=2 RECIPE_CRDS=1 RECIPE_NODE=1
RECIPE_COREDNS=1

K8S_STAGING_VERSION="v0.${K8S_VERSION#v1.}" # v1.36.3 -> v0.36.3
K8S_MAJOR=${K8S_VERSION#v}; K8S_MAJOR=${K8S_MAJOR%%.*}
K8S_MINOR=${K8S_VERSION#v*.}; K8S_MINOR=${K8S_MINOR%%.*}

CACHE_ROOT=${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainer-testbed}
VERSIONS_KEY="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_jobset-${JOBSET_VERSION}_kwok-${KWOK_VERSION}"
VDIR="$CACHE_ROOT/$VERSIONS_KEY"
BIN_DIR="$VDIR/bin"
CRD_DIR="$VDIR/crds"
STAMP_DIR="$VDIR/stamps"
SRC_DIR="$VDIR/src"
LOG_DIR="$VDIR/logs"
ALL_COMPONENTS=(etcd kube kwok jobset crds node coredns)

# The version string each component's stamp must hold to count as built.
stamp_value() {
  case "$1" in
    etcd) echo "etcd $ETCD_VERSION recipe $RECIPE_ETCD" ;;
    kube) echo "kubernetes $K8S_VERSION recipe $RECIPE_KUBE" ;;
    kwok) echo "kwok $KWOK_VERSION recipe $RECIPE_KWOK" ;;
    jobset) echo "jobset $JOBSET_VERSION recipe $RECIPE_JOBSET" ;;
    node) echo "kubelet kube-proxy $K8S_VERSION recipe $RECIPE_NODE" ;;
    coredns) echo "coredns $COREDNS_VERSION recipe $RECIPE_COREDNS" ;;
    crds) echo "scheduler-plugins $SCHED_PLUGINS_VERSION volcano-apis $VOLCANO_APIS_VERSION" \
      "controller-tools $CONTROLLER_TOOLS_VERSION recipe $RECIPE_CRDS" ;;
    *) echo "build.sh: unknown component '$1' (want: ${ALL_COMPONENTS[*]})" >&2; return 2 ;;
  esac
}

is_built() {
  local want
  want=$(stamp_value "$1") || return 2
  [[ -f "$STAMP_DIR/$1" && "$(cat "$STAMP_DIR/$1")" == "$want" ]]
}

case "${1:-}" in
  --print-bin-dir) echo "$BIN_DIR"; exit 0 ;;
  --print-crd-dir) echo "$CRD_DIR"; exit 0 ;;
  --print-dir) echo "$VDIR"; exit 0 ;;
  --check)
    for c in "${ALL_COMPONENTS[@]}"; do is_built "$c" || exit 1; done
    exit 0 ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac

components=("$@")
if ((${#components[@]} == 0)); then components=("${ALL_COMPONENTS[@]}"); fi
for c in "${components[@]}"; do stamp_value "$c" >/dev/null; done

log() { echo "[testbed] $*"; }
die() { echo "[testbed] error: $*" >&2; exit 1; }

command -v go >/dev/null || die "go is not on PATH (the test bed is built with Go; see hack/install-deps.sh)"

mkdir -p "$BIN_DIR" "$CRD_DIR" "$STAMP_DIR" "$SRC_DIR" "$LOG_DIR" "$CACHE_ROOT/go"

# Quick path: nothing to do, no lock taken.
todo=()
for c in "${components[@]}"; do is_built "$c" || todo+=("$c"); done
if ((${#todo[@]} == 0)); then exit 0; fi

# One build at a time per cache (ctest's test bed and a local run may start together).
exec 9>"$CACHE_ROOT/.build.lock"
if ! flock -n 9; then
  log "another build holds $CACHE_ROOT/.build.lock; waiting for it"
  flock 9
fi

export GOTOOLCHAIN=local CGO_ENABLED=0
export GOMODCACHE="$CACHE_ROOT/go/mod" GOCACHE="$CACHE_ROOT/go/build"
export GOFLAGS="-modcacherw -buildvcs=false" GOWORK=off GO111MODULE=on
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"

# run_logged DESC LOG CMD...: runs CMD with its output appended to LOG, printing a heartbeat
# every 30 s; on failure prints the log's tail.
run_logged() {
  local desc=$1 logf=$2; shift 2
  local start=$SECONDS
  echo "+ $*" >>"$logf"
  "$@" >>"$logf" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 30); do
      sleep 1
      kill -0 "$pid" 2>/dev/null || break
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "  ... still $desc ($((SECONDS - start))s)"
    fi
  done
  if ! wait "$pid"; then
    echo "[testbed] error: $desc failed after $((SECONDS - start))s; last lines of $logf:" >&2
    tail -n 25 "$logf" | sed 's/^/    /' >&2
    return 1
  fi
}

# go_fetch LOG MODULE@VERSION CMD...: a run_logged whose failure names the module it fetches.
go_fetch() {
  local logf=$1 what=$2; shift 2
  run_logged "fetching $what" "$logf" "$@" ||
    die "could not fetch $what through GOPROXY=$GOPROXY (full log: $logf)"
}

# new_tool_module NAME: a fresh, empty module directory; prints its path.
new_tool_module() {
  local d="$SRC_DIR/$1"
  rm -rf "$d"
  mkdir -p "$d"
  (cd "$d" && go mod init "trainer-testbed/$1" >/dev/null 2>&1)
  echo "$d"
}

# module_dir MODULE@VERSION: downloads a module zip (outside any module) and prints its directory.
module_dir() {
  (cd "$SRC_DIR" && go mod download -json "$1") | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

stamp() { stamp_value "$1" >"$STAMP_DIR/$1"; }

build_etcd() {
  local logf="$LOG_DIR/etcd.log" d
  : >"$logf"
  log "building etcd $ETCD_VERSION (cold: about 1 min)..."
  d=$(new_tool_module etcd)
  cd "$d"
  go_fetch "$logf" "$ETCD_MODULE@$ETCD_VERSION" go get -tool "$ETCD_MODULE@$ETCD_VERSION"
  run_logged "building etcd" "$logf" go build -trimpath -ldflags="-s -w" -o "$BIN_DIR/etcd" "$ETCD_MODULE"
  stamp etcd
  log "etcd done"
}

# kube_tool_module NAME LOG CMD...: a tool module for k8s.io/kubernetes/cmd/CMD@$K8S_VERSION.
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0
# and replaces them with ./staging paths, which only work inside its own repository. Read the
# list from its go.mod and point each at the published v0.X.Y release instead. Prints the
# module's directory.
kube_tool_module() {
  local name=$1 logf=$2 d gomod staging cmds=() c
  shift 2
  d=$(new_tool_module "$name")
  cd "$d"
  go_fetch "$logf" "k8s.io/kubernetes@$K8S_VERSION" go mod download "k8s.io/kubernetes@$K8S_VERSION" >&2
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [[ -f "$gomod" ]] || die "no go.mod for k8s.io/kubernetes@$K8S_VERSION in the module cache"
  staging=$(awk '
    /^require[[:space:]]*\(/ { inreq = 1; next }
    inreq && /^\)/ { inreq = 0; next }
    /^require[[:space:]]+k8s\.io\// { sub(/^require[[:space:]]+/, ""); print_if($0); next }
    inreq { print_if($0) }
    function print_if(line,   f) { split(line, f, /[[:space:]]+/); if (f[1] == "") { f[1] = f[2]; f[2] = f[3] }
      if (f[1] ~ /^k8s\.io\// && f[2] == "v0.0.0") print f[1] }
  ' "$gomod" | sort -u)
  [[ -n "$staging" ]] || die "found no k8s.io/* modules required at v0.0.0 in $gomod"
  log "  replacing $(wc -l <<<"$staging") staging modules with their $K8S_STAGING_VERSION releases" >&2
  for m in $staging; do
    go mod edit -replace="$m=$m@$K8S_STAGING_VERSION"
  done
  for c in "$@"; do cmds+=("k8s.io/kubernetes/cmd/$c@$K8S_VERSION"); done
  go_fetch "$logf" "k8s.io/kubernetes@$K8S_VERSION (and its dependencies)" go get -tool "${cmds[@]}" >&2
  echo "$d"
}

# The -ldflags that stamp $K8S_VERSION into a Kubernetes binary's /version and --version.
kube_ldflags() {
  local ldflags="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$K8S_MAJOR -X $p.gitMinor=$K8S_MINOR"
    ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$ldflags"
}

build_kube() {
  local logf="$LOG_DIR/kube.log" d pkgs=() c
  : >"$logf"
  log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl $K8S_VERSION" \
    "(cold: about 5 min on 2 cores)..."
  local names=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
  d=$(kube_tool_module kube "$logf" "${names[@]}")
  cd "$d"
  for c in "${names[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  run_logged "building the Kubernetes binaries" "$logf" \
    go build -trimpath -tags=notest -ldflags="$(kube_ldflags)" -o "$BIN_DIR/" "${pkgs[@]}"
  stamp kube
  log "kube binaries done"
}

# The real node's kubelet and kube-proxy, static (CGO_ENABLED=0), built like the binaries above.
build_node() {
  local logf="$LOG_DIR/node.log" d
  : >"$logf"
  log "building kubelet and kube-proxy $K8S_VERSION (cold: about 1 min after the kube component)..."
  d=$(kube_tool_module kube-node "$logf" kubelet kube-proxy)
  cd "$d"
  run_logged "building kubelet and kube-proxy" "$logf" \
    go build -trimpath -tags=notest -ldflags="$(kube_ldflags)" -o "$BIN_DIR/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
  stamp node
  log "kubelet and kube-proxy done"
}

# CoreDNS for the real node's cluster DNS, with only the plugins hack/testbed/node.sh's Corefile
# uses (no forward: the node's DNS answers cluster.local and the reverse zones, nothing else).
# The directives must keep CoreDNS's own order (core/dnsserver/zdirectives.go).
build_coredns() {
  local logf="$LOG_DIR/coredns.log" d p
  : >"$logf"
  log "building CoreDNS $COREDNS_VERSION (cold: about 2.5 min)..."
  d=$(new_tool_module coredns)
  cd "$d"
  local plugins=(bind ready health errors log cache kubernetes)
  {
    echo "// CoreDNS with the plugins the test bed's node uses (hack/testbed/build.sh writes this)."
    echo "package main"
    echo
    echo "import ("
    echo '	"github.com/coredns/coredns/core/dnsserver"'
    echo '	"github.com/coredns/coredns/coremain"'
    for p in "${plugins[@]}"; do echo "	_ \"github.com/coredns/coredns/plugin/$p\""; done
    echo ")"
    echo
    printf 'func init() { dnsserver.Directives = []string{'
    printf '"%s", ' "${plugins[@]}"
    printf '} }\n\nfunc main() { coremain.Run() }\n'
  } >main.go
  go_fetch "$logf" "github.com/coredns/coredns@$COREDNS_VERSION" \
    go get "github.com/coredns/coredns@$COREDNS_VERSION"
  go_fetch "$logf" "the dependencies of github.com/coredns/coredns@$COREDNS_VERSION" go mod tidy
  run_logged "building CoreDNS" "$logf" go build -trimpath -ldflags="-s -w" -o "$BIN_DIR/coredns" .
  stamp coredns
  log "coredns done"
}

build_kwok() {
  local logf="$LOG_DIR/kwok.log" src kind f
  : >"$logf"
  log "building kwok $KWOK_VERSION (cold: about 1 min)..."
  cd "$SRC_DIR"
  export GOBIN="$BIN_DIR"
  run_logged "fetching and building kwok" "$logf" \
    go install -trimpath -ldflags="-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" ||
    die "could not fetch or build sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION through GOPROXY=$GOPROXY (full log: $logf)"
  src=$(module_dir "sigs.k8s.io/kwok@$KWOK_VERSION")
  [[ -d "$src/kustomize/stage" ]] || die "sigs.k8s.io/kwok@$KWOK_VERSION has no kustomize/stage"
  # The "fast" stages: nodes become Ready at once, pods run and (if owned by a Job) complete.
  rm -rf "$VDIR/kwok-stages" && mkdir -p "$VDIR/kwok-stages"
  for kind in node pod; do
    for f in "$src/kustomize/stage/$kind/fast/"*.yaml; do
      [[ "$(basename "$f")" == kustomization.yaml ]] && continue
      cp "$f" "$VDIR/kwok-stages/$kind-$(basename "$f")"
    done
  done
  chmod -R u+w "$VDIR/kwok-stages"
  stamp kwok
  log "kwok done"
}

build_jobset() {
  local logf="$LOG_DIR/jobset.log" d src
  : >"$logf"
  log "building the JobSet controller $JOBSET_VERSION (cold: about 1.5 min)..."
  d=$(new_tool_module jobset)
  cd "$d"
  go_fetch "$logf" "sigs.k8s.io/jobset@$JOBSET_VERSION" go get -tool "sigs.k8s.io/jobset@$JOBSET_VERSION"
  run_logged "building the JobSet controller" "$logf" \
    go build -trimpath -ldflags="-s -w" -o "$BIN_DIR/jobset-controller" sigs.k8s.io/jobset
  src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)
  cp "$src/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$CRD_DIR/jobset.yaml"
  # The webhook kustomization: manifests.yaml plus the patches that give the pod webhooks their
  # objectSelector. up.sh renders it with `kubectl kustomize` and registers the webhooks by URL.
  rm -rf "$VDIR/jobset" && mkdir -p "$VDIR/jobset"
  cp -r "$src/config/components/webhook" "$VDIR/jobset/webhook"
  chmod -R u+w "$CRD_DIR/jobset.yaml" "$VDIR/jobset"
  stamp jobset
  log "jobset done"
}

build_crds() {
  local logf="$LOG_DIR/crds.log" src d
  : >"$logf"
  log "fetching the PodGroup CRDs (scheduler-plugins $SCHED_PLUGINS_VERSION; Volcano generated" \
    "with controller-gen $CONTROLLER_TOOLS_VERSION, cold: about 1 min)..."
  cd "$SRC_DIR"
  go_fetch "$logf" "sigs.k8s.io/scheduler-plugins@$SCHED_PLUGINS_VERSION" \
    go mod download "sigs.k8s.io/scheduler-plugins@$SCHED_PLUGINS_VERSION"
  src=$(module_dir "sigs.k8s.io/scheduler-plugins@$SCHED_PLUGINS_VERSION")
  cp "$src/config/crd/bases/scheduling.x-k8s.io_podgroups.yaml" "$CRD_DIR/scheduler-plugins-podgroups.yaml"

  # No served module ships Volcano's CRD YAML (volcano.sh/volcano is refused by the proxy), so
  # generate it from the Go types in volcano.sh/apis, as Volcano's own Makefile does.
  d=$(new_tool_module volcano-crd)
  cd "$d"
  go_fetch "$logf" "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION" \
    go get -tool "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION"
  go_fetch "$logf" "volcano.sh/apis@$VOLCANO_APIS_VERSION" go get "volcano.sh/apis@$VOLCANO_APIS_VERSION"
  printf 'package tools\n\nimport _ "volcano.sh/apis/pkg/apis/scheduling/v1beta1"\n' >tools.go
  go_fetch "$logf" "the dependencies of volcano.sh/apis@$VOLCANO_APIS_VERSION" go mod tidy
  rm -rf out
  run_logged "generating the Volcano CRDs" "$logf" \
    go tool controller-gen crd paths=volcano.sh/apis/pkg/apis/scheduling/v1beta1 output:crd:dir=out
  cp out/scheduling.volcano.sh_podgroups.yaml "$CRD_DIR/volcano-podgroups.yaml"
  cp out/scheduling.volcano.sh_queues.yaml "$CRD_DIR/volcano-queues.yaml" 2>/dev/null || true
  chmod u+w "$CRD_DIR"/*.yaml
  stamp crds
  log "CRDs done"
}

total_start=$SECONDS
log "cache: $VDIR"
for c in "${todo[@]}"; do
  if is_built "$c"; then continue; fi # built by whoever held the lock before us
  start=$SECONDS
  (build_"$c")
  log "  $c took $((SECONDS - start))s"
done
log "build finished in $((SECONDS - total_start))s; binaries in $BIN_DIR"

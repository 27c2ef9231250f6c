# Helpers for the test bed, sourced by hack/testbed/*.sh and by integration tests:
#
#   source hack/testbed/lib.sh          # sets TESTBED_DIR (absolute) and TESTBED_ROOT
#   testbed_kubectl get ns              # kubectl built by build.sh, on $TESTBED_DIR/kubeconfig
#   testbed_wait_for "namespace foo to go" 60 testbed_absent namespace foo
#   url=$(testbed_apiserver_url)         # https://127.0.0.1:<port>
#
# After up.sh, "$TESTBED_DIR/env" holds the same facts as shell assignments (KUBECONFIG,
# TESTBED_APISERVER_URL, TESTBED_PKI_DIR, TESTBED_BIN_DIR, TESTBED_CRD_DIR, ...) for scripts that
# prefer `source "$TESTBED_DIR/env"`.
#
# State layout of a running test bed ($TESTBED_DIR, default <repo>/.local/testbed):
#   kubeconfig            admin (system:masters) kubeconfig with embedded certificates
#   env                   shell assignments describing the test bed
#   pki/                  ca.crt ca.key, apiserver.{crt,key}, admin.{crt,key}, sa.{key,pub},
#                         webhook.{crt,key} (serving cert for IP 127.0.0.1 and localhost);
#                         all keys ECDSA P-256, PEM
#   pids/<name>           "<pid> <executable>" of each process up.sh started
#   logs/<name>.log       each process's output
#   .testbed              marker: down.sh only deletes directories that carry it

TESTBED_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TESTBED_DIR=${TESTBED_DIR:-$TESTBED_ROOT/.local/testbed}
case "$TESTBED_DIR" in
  /*) ;;
  *) TESTBED_DIR="$PWD/$TESTBED_DIR" ;;
esac
export TESTBED_DIR

testbed_log() { echo "[testbed] $*"; }
testbed_die() { echo "[testbed] error: $*" >&2; exit 1; }

# The directory holding etcd, kube-*, kubectl, kwok and jobset-controller.
testbed_bin_dir() { "$TESTBED_ROOT/hack/testbed/build.sh" --print-bin-dir; }
# The directory holding jobset.yaml, scheduler-plugins-podgroups.yaml, volcano-podgroups.yaml.
testbed_crd_dir() { "$TESTBED_ROOT/hack/testbed/build.sh" --print-crd-dir; }

# kubectl from build.sh (not /usr/bin/kubectl, whose version may differ) on the test bed.
testbed_kubectl() {
  "$(testbed_bin_dir)/kubectl" --kubeconfig "$TESTBED_DIR/kubeconfig" "$@"
}

# testbed_absent ARGS...: succeeds if `kubectl get ARGS` finds nothing (and the apiserver answered).
testbed_absent() {
  local out
  out=$(testbed_kubectl get "$@" --ignore-not-found -o name) || return 1
  [[ -z "$out" ]]
}

# testbed_crd_established NAME: succeeds once the CRD's Established condition is True (unlike
# `kubectl wait`, it does not fail while the CRD has no conditions yet).
testbed_crd_established() {
  local s
  s=$(testbed_kubectl get crd "$1" -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}' \
    2>/dev/null) || return 1
  [[ "$s" == True ]]
}

# Whether discovery lists the CRD's resource: the apiserver updates its discovery document a moment
# after Established, and until then kubectl (and clients that discover) do not know the kind.
testbed_crd_discoverable() {
  local group=${1#*.}
  testbed_kubectl api-resources --api-group="$group" -o name 2>/dev/null | grep -qx "$1"
}

# The apiserver's URL, e.g. https://127.0.0.1:41234.
testbed_apiserver_url() {
  sed -n 's/^[[:space:]]*server:[[:space:]]*//p' "$TESTBED_DIR/kubeconfig" | head -n 1
}

# testbed_wait_for DESC TIMEOUT_SECONDS CMD...: runs CMD (quietly) every 0.2 s until it
# succeeds; returns 1 with a message naming DESC when TIMEOUT_SECONDS pass first.
testbed_wait_for() {
  local desc=$1 timeout=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      echo "[testbed] timed out after ${timeout}s waiting for $desc" >&2
      return 1
    fi
    sleep 0.2
  done
}

# A TCP port on 127.0.0.1 nobody listens on right now. Ports come from the kernel's ephemeral
# range, so test beds started at the same time do not collide; each bed keeps a ledger
# (TESTBED_DIR/ports) and never hands out a port twice (free_port.py says why).
testbed_free_port() {
  local ledger=""
  [[ -n ${TESTBED_DIR:-} && -d $TESTBED_DIR ]] && ledger="$TESTBED_DIR/ports"
  if command -v python3 >/dev/null 2>&1; then
    python3 "$TESTBED_ROOT/hack/testbed/free_port.py" "$ledger"
    return
  fi
  local port
  while :; do
    port=$((20000 + RANDOM % 30000))
    # Plain bash: this path is for machines without python3 and may lack other tools too.
    [[ -n $ledger && -f $ledger && $'\n'$(<"$ledger")$'\n' == *$'\n'"$port"$'\n'* ]] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      [[ -n $ledger ]] && echo "$port" >>"$ledger"
      echo "$port"
      return
    fi
  done
}

# Succeeds if pids/NAME names a process that is still the executable we started (a recycled pid
# running something else does not count).
testbed_pid_alive() {
  local f="$TESTBED_DIR/pids/$1" pid exe actual
  [[ -f "$f" ]] || return 1
  read -r pid exe <"$f" || true
  [[ -n "$pid" ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  actual=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [[ "${actual% (deleted)}" == "$exe" ]]
}

# Names of the recorded processes that are still running.
testbed_live_processes() {
  local f
  [[ -d "$TESTBED_DIR/pids" ]] || return 0
  for f in "$TESTBED_DIR/pids"/*; do
    [[ -f "$f" ]] || continue
    if testbed_pid_alive "$(basename "$f")"; then basename "$f"; fi
  done
}

# testbed_start NAME EXECUTABLE ARGS...: starts a process in its own session (so a terminal's or
# ctest's signals do not reach it), stdin from /dev/null and output to logs/NAME.log (so it does
# not hold ctest's output pipe open), and records "<pid> <executable>" in pids/NAME.
testbed_start() {
  local name=$1 exe=$2; shift 2
  mkdir -p "$TESTBED_DIR/pids" "$TESTBED_DIR/logs"
  setsid "$exe" "$@" </dev/null >>"$TESTBED_DIR/logs/$name.log" 2>&1 &
  echo "$! $exe" >"$TESTBED_DIR/pids/$name"
}

# Succeeds while PID exists and is not a zombie (an exited child of init waiting to be reaped).
testbed_pid_running() {
  local state
  kill -0 "$1" 2>/dev/null || return 1
  state=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n "$state" && "$state" != Z && "$state" != X ]]
}

# testbed_stop NAME: TERM, wait up to 10 s, then KILL the process recorded in pids/NAME, and wait
# until it has exited. Only signals the pid if it still runs the executable we started.
testbed_stop() {
  local name=$1 pid exe i
  if testbed_pid_alive "$name"; then
    read -r pid exe <"$TESTBED_DIR/pids/$name"
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 50); do
      testbed_pid_running "$pid" || break
      sleep 0.2
    done
    if testbed_pid_running "$pid"; then
      testbed_log "$name (pid $pid) ignored SIGTERM for 10 s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for i in $(seq 50); do
        testbed_pid_running "$pid" || break
        sleep 0.2
      done
    fi
  fi
  rm -f "$TESTBED_DIR/pids/$name"
}

# testbed_start_kcm [--node|--service-accounts]: kube-controller-manager with what tests rely on
# (ownerReference garbage collection, namespace deletion, Jobs); with --node also what a real node
# needs (Deployments, Service endpoints, node lifecycle, ServiceAccounts and their root CA
# ConfigMap); with --service-accounts only the ServiceAccounts and their root CA ConfigMap.
testbed_start_kcm() {
  local controllers=garbage-collector-controller,namespace-controller,job-controller extra=()
  if [[ "${1:-}" == --service-accounts ]]; then
    controllers+=,serviceaccount-controller,root-ca-certificate-publisher-controller
    extra=(--root-ca-file="$TESTBED_DIR/pki/ca.crt")
  fi
  if [[ "${1:-}" == --node ]]; then
    controllers+=,deployment-controller,replicaset-controller,disruption-controller
    controllers+=,endpoints-controller,endpointslice-controller,endpointslice-mirroring-controller
    controllers+=,node-lifecycle-controller,pod-garbage-collector-controller
    controllers+=,serviceaccount-controller,root-ca-certificate-publisher-controller
    extra=(--root-ca-file="$TESTBED_DIR/pki/ca.crt")
  fi
  testbed_start kube-controller-manager "$(testbed_bin_dir)/kube-controller-manager" \
    --kubeconfig="$TESTBED_DIR/kubeconfig" --leader-elect=false --secure-port=0 \
    --controllers="$controllers" "${extra[@]}"
}

# Stops every recorded process, the optional ones first and etcd last; a real node first of all
# (hack/testbed/node.sh stop also undoes its changes to the host).
testbed_stop_all() {
  local name
  "$TESTBED_ROOT/hack/testbed/node.sh" stop || true
  for name in kwok jobset-controller kube-scheduler kube-controller-manager kube-apiserver etcd; do
    testbed_stop "$name"
  done
  if [[ -d "$TESTBED_DIR/pids" ]]; then
    for name in "$TESTBED_DIR/pids"/*; do
      [[ -f "$name" ]] && testbed_stop "$(basename "$name")"
    done
  fi
  return 0
}

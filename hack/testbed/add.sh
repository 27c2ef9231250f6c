#!/usr/bin/env bash
# Adds optional parts to the running test bed in $TESTBED_DIR; up.sh calls it for its flags, and
# a test that needs a part the ctest fixture does not start can call it too (a part that already
# runs is left alone). Every part is recorded in $TESTBED_DIR/pids/, so down.sh stops it.
#
# Usage: hack/testbed/add.sh [--jobset-controller] [--scheduler] [--kwok] [--all] [--node]
#   --jobset-controller  the JobSet controller from a Configuration file (internal cert management
#                        off), its webhook on 127.0.0.1 serving pki/webhook.crt, its two mutating
#                        and two validating webhooks registered by URL with pki/ca.crt; installs
#                        the JobSet CRD if missing
#   --scheduler          kube-scheduler
#   --kwok               KWOK and one fake node, kwok-node-0 (no taints): its pods start at once
#                        and, when a Job owns them, complete
#   --all                all three
#   --node               a real node, testbed-node-0 (hack/testbed/node.sh; needs root), and
#                        kube-scheduler; restarts kube-apiserver and kube-controller-manager with
#                        what a node needs if the test bed was started without --node
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

want_jobset=0 want_scheduler=0 want_kwok=0 want_node=0
for arg in "$@"; do
  case "$arg" in
    --jobset-controller) want_jobset=1 ;;
    --scheduler) want_scheduler=1 ;;
    --kwok) want_kwok=1 ;;
    --all) want_jobset=1 want_scheduler=1 want_kwok=1 ;;
    --node) want_node=1 want_scheduler=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) testbed_die "unknown argument '$arg' (see $0 --help)" ;;
  esac
done

testbed_pid_alive kube-apiserver ||
  testbed_die "no running test bed in $TESTBED_DIR (start one with hack/testbed/up.sh)"
for part in jobset:jobset-controller scheduler:kube-scheduler kwok:kwok node:kubelet; do
  if testbed_pid_alive "${part#*:}"; then
    testbed_log "${part#*:} already runs in $TESTBED_DIR"
    eval "want_${part%%:*}=0"
  fi
done
components=()
((want_kwok)) && components+=(kwok)
((want_jobset)) && components+=(jobset)
((${#components[@]} == 0 && want_scheduler == 0 && want_node == 0)) && exit 0
if ((${#components[@]} > 0)); then
  "$TESTBED_ROOT/hack/testbed/build.sh" "${components[@]}"
fi
BIN=$(testbed_bin_dir)
VDIR=$("$TESTBED_ROOT/hack/testbed/build.sh" --print-dir)
KC="$TESTBED_DIR/kubeconfig"
PKI="$TESTBED_DIR/pki"

# On failure stop the parts this run started; the rest of the test bed keeps running.
started=()
added_ok=0
on_exit() {
  local rc=$? name
  ((added_ok)) && return 0
  ((rc == 0)) && rc=1
  echo "[testbed] error: adding parts failed (exit $rc) at add.sh:${failed_line:-?}: ${failed_cmd:-?}" >&2
  for name in "${started[@]}"; do
    echo "[testbed] --- last lines of $TESTBED_DIR/logs/$name.log:" >&2
    tail -n 15 "$TESTBED_DIR/logs/$name.log" 2>/dev/null | sed 's/^/    /' >&2
    testbed_stop "$name"
  done
  exit "$rc"
}
trap on_exit EXIT
trap 'failed_cmd=$BASH_COMMAND failed_line=$LINENO' ERR
trap 'echo "[testbed] interrupted" >&2; exit 130' INT TERM

# Processes that need nothing else start first; the waits come last, so their start-ups overlap.
if ((want_scheduler)); then
  started+=(kube-scheduler)
  testbed_start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$KC" --leader-elect=false \
    --secure-port=0
fi

if ((want_kwok)); then
  KWOK_PORT=$(testbed_free_port)
  # KWOK reads Stage objects from its --config file: the "fast" stages build.sh copied.
  {
    for f in "$VDIR"/kwok-stages/*.yaml; do
      echo "---"
      cat "$f"
    done
  } >"$TESTBED_DIR/kwok.yaml"
  started+=(kwok)
  testbed_start kwok "$BIN/kwok" --config="$TESTBED_DIR/kwok.yaml" --kubeconfig="$KC" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --server-address="127.0.0.1:$KWOK_PORT"
  testbed_kubectl apply --server-side --field-manager=testbed -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: kwok-node-0
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
status:
  allocatable: {cpu: "64", memory: 256Gi, pods: "250", nvidia.com/gpu: "8"}
  capacity: {cpu: "64", memory: 256Gi, pods: "250", nvidia.com/gpu: "8"}
EOF
fi

if ((want_jobset)) && ! testbed_crd_established jobsets.jobset.x-k8s.io; then
  "$TESTBED_ROOT/hack/testbed/install-crds.sh" jobset
fi

if ((want_jobset)); then
  # The webhook serves our webhook cert; controller-runtime wants tls.crt/tls.key in a directory.
  mkdir -p "$TESTBED_DIR/jobset/certs"
  cp "$PKI/webhook.crt" "$TESTBED_DIR/jobset/certs/tls.crt"
  cp "$PKI/webhook.key" "$TESTBED_DIR/jobset/certs/tls.key"
  JOBSET_WEBHOOK_PORT=$(testbed_free_port)
  JOBSET_HEALTH_PORT=$(testbed_free_port)
  cat >"$TESTBED_DIR/jobset/config.yaml" <<EOF
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $JOBSET_WEBHOOK_PORT
  certDir: $TESTBED_DIR/jobset/certs
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: 127.0.0.1:$JOBSET_HEALTH_PORT
clientConnection:
  qps: 500
  burst: 500
EOF
  started+=(jobset-controller)
  testbed_start jobset-controller "$BIN/jobset-controller" --kubeconfig="$KC" \
    --config="$TESTBED_DIR/jobset/config.yaml"
  # Register its webhooks (two mutating, two validating) by URL, with our CA as the bundle.
  # Render JobSet's webhook kustomization (its patches add the pod webhooks' objectSelector).
  "$BIN/kubectl" kustomize "$VDIR/jobset/webhook" >"$TESTBED_DIR/jobset/webhooks.yaml"
  testbed_kubectl create --dry-run=client -o json -f "$TESTBED_DIR/jobset/webhooks.yaml" |
    python3 "$TESTBED_ROOT/hack/testbed/webhooks.py" --prefix=jobset- \
      --url="https://127.0.0.1:$JOBSET_WEBHOOK_PORT" --ca="$PKI/ca.crt" \
      >"$TESTBED_DIR/jobset/webhooks.json"
  testbed_kubectl apply --server-side --field-manager=testbed -f "$TESTBED_DIR/jobset/webhooks.json" >/dev/null
  testbed_wait_for "the JobSet controller to be ready" 60 \
    curl -fsS "http://127.0.0.1:$JOBSET_HEALTH_PORT/readyz"
fi

if ((want_kwok)); then
  testbed_wait_for "kwok-node-0 to be Ready" 60 \
    testbed_kubectl wait --for=condition=Ready node/kwok-node-0 --timeout=1s
  # TaintNodesByCondition put node.kubernetes.io/not-ready:NoSchedule on the new node; only the
  # node-lifecycle controller (not run here) would take it off again.
  testbed_kubectl taint node kwok-node-0 node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
fi

if ((want_node)); then
  "$TESTBED_ROOT/hack/testbed/node.sh" start
fi

if [[ -n "${JOBSET_WEBHOOK_PORT:-}" ]]; then
  echo "export TESTBED_JOBSET_WEBHOOK_URL='https://127.0.0.1:$JOBSET_WEBHOOK_PORT'" >>"$TESTBED_DIR/env"
fi
added_ok=1
((want_scheduler)) && testbed_log "added kube-scheduler"
((want_kwok)) && testbed_log "added kwok with node kwok-node-0"
((want_node)) && testbed_log "added the real node testbed-node-0"
((want_jobset)) && testbed_log "added the JobSet controller (webhook https://127.0.0.1:$JOBSET_WEBHOOK_PORT)"
exit 0

#!/usr/bin/env bash
# Starts a local Kubernetes control plane for tests and the local run: etcd, kube-apiserver and
# kube-controller-manager (garbage collector, namespace and Job controllers only) on free
# loopback ports, with state in $TESTBED_DIR (default <repo>/.local/testbed), and installs the
# JobSet and both PodGroup CRDs. Builds the binaries first if needed (hack/testbed/build.sh).
#
# Usage: hack/testbed/up.sh [--no-crds] [--jobset-controller] [--scheduler] [--kwok] [--all] [--node]
#                          [--service-accounts]
#   --no-crds            skip the CRDs (hack/testbed/install-crds.sh; --install-crds, the
#                        default, is accepted too)
#   --jobset-controller  run the JobSet controller, its webhooks registered by URL on 127.0.0.1
#                        (implies the JobSet CRD)
#   --scheduler          run kube-scheduler
#   --kwok               run KWOK with one fake node, kwok-node-0, whose pods start and, when a
#                        Job owns them, complete
#   --all                --jobset-controller --scheduler --kwok
#   --node               a real node (hack/testbed/node.sh: containerd, kubelet, kube-proxy,
#                        CoreDNS; needs root) and kube-scheduler; the control plane then runs with
#                        ServiceAccount admission and the controllers a node needs
#   --service-accounts   ServiceAccount admission and the ServiceAccount controllers without a
#                        node: pods get their namespace's default ServiceAccount, as in a real
#                        cluster (a projected serviceAccountToken volume needs one; TrainJobStatus)
# With TESTBED_PROFILING=1 in the environment the kube-apiserver serves /debug/pprof to the admin
# (`kubectl get --raw '/debug/pprof/profile?seconds=30'`).
# The optional parts are started by hack/testbed/add.sh, which can also add them later.
# Refuses to start on a directory whose processes still run; stale state is cleaned up. Stop
# with hack/testbed/down.sh. See hack/testbed/README.md for the layout of $TESTBED_DIR.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

want_crds=1 want_jobset=0 want_scheduler=0 want_kwok=0 want_node=0 want_sa=0
for arg in "$@"; do
  case "$arg" in
    --install-crds) want_crds=1 ;;
    --no-crds) want_crds=0 ;;
    --jobset-controller) want_jobset=1 ;;
    --scheduler) want_scheduler=1 ;;
    --kwok) want_kwok=1 ;;
    --all) want_jobset=1 want_scheduler=1 want_kwok=1 ;;
    --node) want_node=1 want_scheduler=1 ;;
    --service-accounts) want_sa=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) testbed_die "unknown argument '$arg' (see $0 --help)" ;;
  esac
done

# --- Refuse a live test bed; clean a stale one -------------------------------------------------
if [[ -e "$TESTBED_DIR" ]]; then
  live=$(testbed_live_processes | tr '\n' ' ')
  [[ -n "$live" ]] || "$TESTBED_ROOT/hack/testbed/node.sh" stop
  if [[ -n "$live" ]]; then
    testbed_die "a test bed is already running in $TESTBED_DIR (processes: ${live% });" \
      "stop it with 'TESTBED_DIR=$TESTBED_DIR hack/testbed/down.sh' or choose another TESTBED_DIR"
  fi
  if [[ -f "$TESTBED_DIR/.testbed" ]]; then
    testbed_log "removing stale test bed state in $TESTBED_DIR (none of its processes runs)"
    rm -rf "$TESTBED_DIR"
  elif [[ -n "$(ls -A "$TESTBED_DIR")" ]]; then
    testbed_die "$TESTBED_DIR exists, is not empty and is not a test bed directory; refusing to use it"
  fi
fi

# --- Build what we need ------------------------------------------------------------------------
components=(etcd kube)
((want_kwok)) && components+=(kwok)
((want_jobset || want_crds)) && components+=(jobset)
((want_crds)) && components+=(crds)
"$TESTBED_ROOT/hack/testbed/build.sh" "${components[@]}"
BIN=$(testbed_bin_dir)

start_time=$SECONDS
mkdir -p "$TESTBED_DIR"/{pki,pids,logs,etcd}
touch "$TESTBED_DIR/.testbed"
PKI="$TESTBED_DIR/pki"

# On any failure (or Ctrl-C): stop what we started, keep the logs, say where they are.
started_ok=0
on_exit() {
  local rc=$?
  ((started_ok)) && return 0
  ((rc == 0)) && rc=1
  echo "[testbed] error: start-up failed (exit $rc) at up.sh:${failed_line:-?}: ${failed_cmd:-?}" >&2
  echo "[testbed] stopping what was started" >&2
  local f
  for f in "$TESTBED_DIR"/logs/*.log; do
    [[ -f "$f" ]] || continue
    echo "[testbed] --- last lines of $f:" >&2
    tail -n 15 "$f" | sed 's/^/    /' >&2
  done
  testbed_stop_all
  echo "[testbed] logs kept in $TESTBED_DIR/logs; hack/testbed/down.sh removes them" >&2
  exit "$rc"
}
trap on_exit EXIT
trap 'failed_cmd=$BASH_COMMAND failed_line=$LINENO' ERR
trap 'echo "[testbed] interrupted" >&2; exit 130' INT TERM

# --- Certificates ------------------------------------------------------------------------------
# A CA; the apiserver's serving cert; an admin client cert in system:masters; the
# service-account signing key pair; a serving cert for webhooks on 127.0.0.1. ECDSA P-256 keys:
# generated in milliseconds even on a busy machine, where RSA keys took seconds.
EC=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1)
gen_cert() { # NAME SUBJECT EXTENSIONS
  local name=$1 subj=$2 ext=$3
  openssl req -new "${EC[@]}" -nodes -keyout "$PKI/$name.key" -subj "$subj" \
    -out "$PKI/$name.csr" 2>/dev/null
  printf '%b\n' "$ext" >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
    -CAcreateserial -days 365 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}
openssl req -x509 -new "${EC[@]}" -nodes -keyout "$PKI/ca.key" -days 365 -sha256 \
  -subj "/CN=trainer-testbed-ca" -out "$PKI/ca.crt" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
server_ext="basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth"
gen_cert apiserver "/CN=kube-apiserver" \
  "$server_ext\nsubjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
gen_cert webhook "/CN=trainer-testbed-webhook" "$server_ext\nsubjectAltName=IP:127.0.0.1,DNS:localhost"
gen_cert admin "/O=system:masters/CN=testbed-admin" \
  "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$PKI/sa.key" 2>/dev/null
openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
chmod 600 "$PKI"/*.key

# --- etcd ----------------------------------------------------------------------------------------
# An 8 GiB backend quota: etcd's default, 2 GiB, is tight for hack/bench/scale.py at 100,000
# TrainJobs (14 MB at 1,000: three objects each, and their history until compaction).
ETCD_PORT=$(testbed_free_port)
ETCD_PEER_PORT=$(testbed_free_port)
ETCD_URL="http://127.0.0.1:$ETCD_PORT"
testbed_start etcd "$BIN/etcd" --name=testbed --data-dir="$TESTBED_DIR/etcd" \
  --listen-client-urls="$ETCD_URL" --advertise-client-urls="$ETCD_URL" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="testbed=http://127.0.0.1:$ETCD_PEER_PORT" \
  --unsafe-no-fsync --log-level=warn --quota-backend-bytes=8589934592
testbed_wait_for "etcd on $ETCD_URL" 30 curl -fsS "$ETCD_URL/health"

# --- kube-apiserver ------------------------------------------------------------------------------
API_PORT=$(testbed_free_port)
# Without a node, no pod needs a token: ServiceAccount admission stays off (tests create pods for
# KWOK without ServiceAccounts). A node's pods run in-cluster clients, so it is on then.
admission=(--disable-admission-plugins=ServiceAccount)
((want_node)) && admission=(--kubelet-preferred-address-types=InternalIP)
((want_sa && !want_node)) && admission=()
API_URL="https://127.0.0.1:$API_PORT"
# TESTBED_PROFILING=1 serves Go's /debug/pprof to the admin (kubectl get --raw), to see where a
# benchmark's apiserver seconds go; the handlers cost nothing until asked.
profiling=false
[[ "${TESTBED_PROFILING:-0}" == 1 ]] && profiling=true
testbed_start kube-apiserver "$BIN/kube-apiserver" \
  --etcd-servers="$ETCD_URL" \
  --bind-address=127.0.0.1 --secure-port="$API_PORT" --advertise-address=127.0.0.1 \
  --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
  --client-ca-file="$PKI/ca.crt" \
  --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$PKI/sa.pub" \
  --service-account-signing-key-file="$PKI/sa.key" \
  "${admission[@]}" \
  --service-cluster-ip-range=10.0.0.0/24 \
  --endpoint-reconciler-type=none \
  --allow-privileged=true \
  --profiling="$profiling"
curl_admin() {
  curl -fsS --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$@"
}
testbed_wait_for "kube-apiserver /readyz on $API_URL" 60 curl_admin "$API_URL/readyz"

# The admin kubeconfig, certificates embedded so it can be copied elsewhere.
KC="$TESTBED_DIR/kubeconfig"
kc() { "$BIN/kubectl" --kubeconfig="$KC" "$@" >/dev/null; }
kc config set-cluster testbed --server="$API_URL" --certificate-authority="$PKI/ca.crt" --embed-certs=true
kc config set-credentials testbed-admin --client-certificate="$PKI/admin.crt" \
  --client-key="$PKI/admin.key" --embed-certs=true
kc config set-context testbed --cluster=testbed --user=testbed-admin --namespace=default
kc config use-context testbed
chmod 600 "$KC"

# --- kube-controller-manager ---------------------------------------------------------------------
kcm_args=()
((want_sa)) && kcm_args=(--service-accounts)
((want_node)) && kcm_args=(--node)
testbed_start_kcm "${kcm_args[@]}"
testbed_wait_for "namespace default" 30 testbed_kubectl get namespace default

# --- CRDs and optional parts --------------------------------------------------------------------
if ((want_crds)); then
  "$TESTBED_ROOT/hack/testbed/install-crds.sh"
fi

# --- Describe the test bed ---------------------------------------------------------------------
cat >"$TESTBED_DIR/env" <<EOF
# Written by hack/testbed/up.sh (add.sh appends); source it to talk to this test bed.
export KUBECONFIG='$KC'
export TESTBED_DIR='$TESTBED_DIR'
export TESTBED_APISERVER_URL='$API_URL'
export TESTBED_ETCD_URL='$ETCD_URL'
export TESTBED_PKI_DIR='$PKI'
export TESTBED_BIN_DIR='$BIN'
export TESTBED_CRD_DIR='$(testbed_crd_dir)'
EOF

add_args=()
((want_jobset)) && add_args+=(--jobset-controller)
((want_scheduler)) && add_args+=(--scheduler)
((want_kwok)) && add_args+=(--kwok)
((want_node)) && add_args+=(--node)
if ((${#add_args[@]} > 0)); then
  "$TESTBED_ROOT/hack/testbed/add.sh" "${add_args[@]}"
fi
started_ok=1

testbed_log "ready in $((SECONDS - start_time))s: $(testbed_live_processes | tr '\n' ' ')"
testbed_log "  apiserver   $API_URL (etcd $ETCD_URL)"
testbed_log "  kubeconfig  $KC"
testbed_log "  pki         $PKI (ca.crt, webhook.crt, webhook.key for 127.0.0.1)"
testbed_log "  logs        $TESTBED_DIR/logs/"
testbed_log "  binaries    $BIN (use its kubectl)"
testbed_log "  stop with   TESTBED_DIR=$TESTBED_DIR $TESTBED_ROOT/hack/testbed/down.sh"
echo "export KUBECONFIG=$KC"

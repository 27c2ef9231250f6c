#!/usr/bin/env bash
# The main job: trainer-cpp running on this machine, as a cluster admin would run it.
#
#   hack/run-local.sh [up]                      install deps if missing, build, start the test bed
#                                               (etcd, kube-apiserver, kube-controller-manager, the
#                                               JobSet controller, kube-scheduler, KWOK), install
#                                               deploy/ (CRDs, RBAC, default runtimes, public
#                                               ConfigMap), run trainer-webhook and
#                                               trainer-controller as local processes under their
#                                               own ServiceAccounts' tokens, register the webhooks
#                                               at 127.0.0.1, and show an example TrainJob reach
#                                               Complete. Returns once all is ready; the services
#                                               keep running.
#   hack/run-local.sh up --no-jobset-controller the same without the JobSet controller,
#                                               scheduler, KWOK and the example: JobSets stay as
#                                               trainer wrote them (conformance tests write their
#                                               status by hand)
#   hack/run-local.sh up --in-cluster           trainer-cpp as a cluster admin runs it: the images
#                                               built (hack/images/build.sh), a test bed with a real
#                                               node (containerd, kubelet, kube-proxy, CoreDNS;
#                                               needs root), the images loaded into it, and
#                                               trainer-cpp + JobSet installed with the commands of
#                                               docs/install.md (the e2e tier's installation,
#                                               tests/e2e/install_on_node.py): both services and the
#                                               JobSet controller run as pods. Prints how to submit
#                                               examples/local/torch-ddp.yaml and watch it train.
#   hack/run-local.sh up --feature-gates=TrainJobStatus=true
#                                               both services with the gate (comma-separated
#                                               Name=bool, as their flag): trainer-webhook also
#                                               serves the TrainJob status server on 127.0.0.1
#                                               (deploy/components/trainjob-status's RBAC), the
#                                               certificate Secret holds the local CA, and env gets
#                                               TRAINER_STATUS_URL and TRAINER_STATUS_CA
#                                               (docs/progress.md)
#   hack/run-local.sh down                      stop everything `up` started
#
# State lives in $TRAINER_LOCAL_DIR (default .local/, git-ignored): kubeconfig (admin, always
# there), <service>.kubeconfig (ServiceAccount tokens), pki/ (the webhook's CA and serving cert),
# env (ports and URLs, for scripts), testbed/ (the test bed; logs in testbed/logs/). With
# --in-cluster, env also names the node's images: TRAINER_TORCH_IMAGE (python3-torch, torchrun on
# PATH) and TRAINER_MPI_IMAGE (OpenMPI), for other checks' own TrainJobs.
# TRAINER_BIN_DIR=<dir with trainer-webhook, trainer-controller, trainer-render> skips the build.
#
# The services run with the permissions deploy/ grants them (TokenRequest for the ServiceAccounts
# deploy/base/rbac defines), so a missing RBAC rule fails here as it would in a cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
cmd="${1:-up}"
[[ $# -gt 0 ]] && shift
state=${TRAINER_LOCAL_DIR:-.local}
[[ $state == /* ]] || state="$ROOT/$state"
export TESTBED_DIR="$state/testbed"
source hack/testbed/lib.sh
NS=kubeflow-system

say() { echo "[run-local] $*"; }
die() { echo "[run-local] error: $*" >&2; exit 1; }

down() {
  hack/testbed/down.sh
  rm -rf "$state/pki" "$state/env" "$state"/*.kubeconfig "$state/kubeconfig" "$state/rendered" \
    "$state/deploy-local.yaml" "$state/webhooks.json"
  say "stopped; state removed from $state"
}

# A kubeconfig whose user is ServiceAccount NAME of kubeflow-system (a bound token, 24 h).
sa_kubeconfig() { # NAME
  local name=$1 kc="$state/$1.kubeconfig" token
  token=$(testbed_kubectl -n "$NS" create token "$name" --duration=24h)
  rm -f "$kc"
  local k=("$TESTBED_BIN_DIR/kubectl" --kubeconfig="$kc")
  "${k[@]}" config set-cluster local --server="$TESTBED_APISERVER_URL" \
    --certificate-authority="$TESTBED_PKI_DIR/ca.crt" --embed-certs=true >/dev/null
  "${k[@]}" config set-credentials "$name" --token="$token" >/dev/null
  "${k[@]}" config set-context "$name" --cluster=local --user="$name" --namespace="$NS" >/dev/null
  "${k[@]}" config use-context "$name" >/dev/null
  chmod 600 "$kc"
}

# The webhook's own CA and a serving cert for 127.0.0.1 (what a cert component does in-cluster).
webhook_pki() {
  local pki="$state/pki" ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1)
  rm -rf "$pki" && mkdir -p "$pki/serving-certs"
  openssl req -x509 "${ec[@]}" -nodes -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 365 \
    -subj "/O=kubeflow-trainer/CN=kubeflow-trainer-ca" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -new "${ec[@]}" -nodes -keyout "$pki/serving-certs/tls.key" -out "$pki/tls.csr" \
    -subj "/CN=trainer-webhook" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$pki/ext"
  openssl x509 -req -in "$pki/tls.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$pki/ext" -out "$pki/serving-certs/tls.crt" 2>/dev/null
  rm -f "$pki/tls.csr" "$pki/ext"
  chmod 600 "$pki"/*.key "$pki/serving-certs/tls.key"
}

# deploy/base rendered, without what runs as local processes here (Deployments, Services, PDB) and
# the service-based webhook configurations (registered by URL below).
render_base_without_workloads() {
  testbed_kubectl kustomize deploy/base | python3 -c '
import sys, yaml
skip = {"Deployment", "Service", "PodDisruptionBudget", "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration", "CustomResourceDefinition"}
docs = [d for d in yaml.load_all(sys.stdin, Loader=yaml.CSafeLoader) if d and d["kind"] not in skip]
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)'
}

http_ok() { curl -fsS "$1" >/dev/null; }

# Whether gate NAME is true in a --feature-gates value ("A=true,B=false"; the last setting wins,
# values as Go's strconv.ParseBool). The services validate the value themselves.
gate_enabled() { # NAME GATES
  local item key value on=1
  local IFS=,
  for item in $2; do
    key=${item%%=*} value=${item#*=}
    key=${key//[[:space:]]/} value=${value//[[:space:]]/}
    [[ $key == "$1" ]] || continue
    case $value in 1 | t | T | true | True | TRUE) on=0 ;; *) on=1 ;; esac
  done
  return $on
}

up() {
  local with_jobset=1 in_cluster=0 gates="" arg
  for arg in "$@"; do
    case "$arg" in
      --no-jobset-controller) with_jobset=0 ;;
      --in-cluster) in_cluster=1 ;;
      --feature-gates=*) gates=${arg#--feature-gates=} ;;
      *) die "unknown argument '$arg' (usage: hack/run-local.sh [up [--no-jobset-controller|--in-cluster|--feature-gates=K=V,...]|down])" ;;
    esac
  done
  local status_gate=0
  gate_enabled TrainJobStatus "$gates" && status_gate=1
  if ((in_cluster)) && [[ -n $gates ]]; then
    die "--feature-gates applies to the local processes; in-cluster, add deploy/components/trainjob-status to the kustomization (docs/progress.md)"
  fi
  if [[ -d "$TESTBED_DIR" ]] && [[ -n "$(testbed_live_processes)" ]]; then
    die "already running in $state (hack/run-local.sh down first)"
  fi
  if ((in_cluster)); then
    up_in_cluster
    return
  fi
  local start=$SECONDS bin
  hack/install-deps.sh --build-only
  if [[ -n "${TRAINER_BIN_DIR:-}" ]]; then
    # Resolved: down.sh matches a pid's /proc/PID/exe against the recorded path.
    bin=$(realpath "$TRAINER_BIN_DIR")
  else
    say "building (cmake, -j2)"
    if [[ ! -f build/CMakeCache.txt ]]; then cmake -S . -B build -G Ninja >/dev/null; fi
    cmake --build build -j2 --target trainer-webhook trainer-controller trainer-render
    bin=$ROOT/build/bin
  fi
  mkdir -p "$state"

  local tb_args=()
  ((with_jobset)) && tb_args+=(--all)
  # Trainer pods then carry a projected serviceAccountToken volume, which the apiserver accepts
  # only in a pod with a ServiceAccount: the default one, as a real cluster's admission sets it.
  ((status_gate)) && tb_args+=(--service-accounts)
  hack/testbed/up.sh "${tb_args[@]}" >/dev/null
  source "$TESTBED_DIR/env"
  cp "$KUBECONFIG" "$state/kubeconfig"

  say "installing deploy/ (CRDs, namespace, RBAC, default runtimes, public ConfigMap)"
  testbed_kubectl apply --server-side --field-manager=trainer-deploy -k deploy/crds >/dev/null
  local crd
  for crd in trainjobs trainingruntimes clustertrainingruntimes; do
    testbed_wait_for "CRD $crd" 60 testbed_crd_established "$crd.trainer.kubeflow.org"
  done
  render_base_without_workloads >"$state/deploy-local.yaml"
  testbed_kubectl apply --server-side --field-manager=trainer-deploy -f "$state/deploy-local.yaml" >/dev/null
  testbed_kubectl apply --server-side --field-manager=trainer-deploy -k deploy/runtimes >/dev/null

  sa_kubeconfig trainer-webhook
  sa_kubeconfig trainer-controller
  webhook_pki

  local gate_flags=() status_flags=() st_port=""
  [[ -n $gates ]] && gate_flags=(--feature-gates="$gates")
  if ((status_gate)); then
    st_port=$(testbed_free_port)
    status_flags=(--status-server-port="$st_port")
    say "TrainJobStatus: the status server's RBAC, and Secret $NS/kubeflow-trainer-webhook-cert with the local CA"
    testbed_kubectl apply --server-side --field-manager=trainer-deploy \
      -f deploy/components/trainjob-status/rbac.yaml >/dev/null
    # What a cert component keeps in-cluster; the TrainJobStatus plugin copies its ca.crt.
    testbed_kubectl -n "$NS" create secret generic kubeflow-trainer-webhook-cert --dry-run=client -o json \
      --from-file=ca.crt="$state/pki/ca.crt" --from-file=tls.crt="$state/pki/serving-certs/tls.crt" \
      --from-file=tls.key="$state/pki/serving-certs/tls.key" |
      testbed_kubectl apply --server-side --field-manager=trainer-deploy -f - >/dev/null
  fi

  local wh_port wh_metrics wh_health ctl_metrics ctl_health
  wh_port=$(testbed_free_port) wh_metrics=$(testbed_free_port) wh_health=$(testbed_free_port)
  ctl_metrics=$(testbed_free_port) ctl_health=$(testbed_free_port)
  say "starting trainer-webhook (ServiceAccount $NS/trainer-webhook) on https://127.0.0.1:$wh_port"
  # Text logs: people read these (the services' default is JSON, as upstream's).
  testbed_start trainer-webhook "$(realpath "$bin/trainer-webhook")" --log-format=text --port="$wh_port" \
    --cert-dir="$state/pki/serving-certs" --metrics-bind-address="127.0.0.1:$wh_metrics" \
    --health-probe-bind-address="127.0.0.1:$wh_health" --kubeconfig="$state/trainer-webhook.kubeconfig" \
    "${gate_flags[@]}" "${status_flags[@]}"
  testbed_wait_for "trainer-webhook /readyz" 60 http_ok "http://127.0.0.1:$wh_health/readyz" ||
    { tail -n 20 "$TESTBED_DIR/logs/trainer-webhook.log" >&2; die "trainer-webhook did not get ready"; }
  testbed_kubectl kustomize deploy/base | testbed_kubectl create --dry-run=client -o json -f - |
    python3 hack/testbed/webhooks.py --url="https://127.0.0.1:$wh_port" --ca="$state/pki/ca.crt" \
      >"$state/webhooks.json"
  testbed_kubectl apply --server-side --field-manager=trainer-deploy -f "$state/webhooks.json" >/dev/null

  say "starting trainer-controller (ServiceAccount $NS/trainer-controller, leader election)"
  testbed_start trainer-controller "$(realpath "$bin/trainer-controller")" --log-format=text \
    --kubeconfig="$state/trainer-controller.kubeconfig" --leader-elect \
    --leader-election-namespace="$NS" --metrics-bind-address="127.0.0.1:$ctl_metrics" \
    --metrics-secure-serving=false --health-probe-bind-address="127.0.0.1:$ctl_health" \
    "${gate_flags[@]}"
  testbed_wait_for "trainer-controller /readyz" 60 http_ok "http://127.0.0.1:$ctl_health/readyz" ||
    { tail -n 20 "$TESTBED_DIR/logs/trainer-controller.log" >&2; die "trainer-controller did not get ready"; }
  testbed_wait_for "trainer-controller to hold the Lease" 60 lease_held ||
    { tail -n 20 "$TESTBED_DIR/logs/trainer-controller.log" >&2; die "trainer-controller did not become leader"; }

  cat >"$state/env" <<EOF
# Written by hack/run-local.sh up; source it to talk to the local run.
export KUBECONFIG='$state/kubeconfig'
export TRAINER_LOCAL_DIR='$state'
export TESTBED_DIR='$TESTBED_DIR'
export TESTBED_BIN_DIR='$TESTBED_BIN_DIR'
export TRAINER_WEBHOOK_URL='https://127.0.0.1:$wh_port'
export TRAINER_WEBHOOK_METRICS_URL='http://127.0.0.1:$wh_metrics/metrics'
export TRAINER_WEBHOOK_HEALTH_URL='http://127.0.0.1:$wh_health'
export TRAINER_CONTROLLER_METRICS_URL='http://127.0.0.1:$ctl_metrics/metrics'
export TRAINER_CONTROLLER_HEALTH_URL='http://127.0.0.1:$ctl_health'
export TRAINER_LOGS_DIR='$TESTBED_DIR/logs'
export TRAINER_JOBSET_CONTROLLER=$with_jobset
EOF
  if ((status_gate)); then
    cat >>"$state/env" <<EOF
export TRAINER_FEATURE_GATES='$gates'
export TRAINER_STATUS_URL='https://127.0.0.1:$st_port'
export TRAINER_STATUS_CA='$state/pki/ca.crt'
EOF
  fi

  if ((with_jobset)); then
    run_example
    render_examples "$bin"
  fi
  say "ready in $((SECONDS - start))s"
  say "  admin kubeconfig  $state/kubeconfig   (export KUBECONFIG=$state/kubeconfig)"
  say "  kubectl           $TESTBED_BIN_DIR/kubectl"
  say "  logs              $TESTBED_DIR/logs/ (trainer-webhook.log, trainer-controller.log, ...)"
  say "  metrics           webhook http://127.0.0.1:$wh_metrics/metrics"
  say "                    controller http://127.0.0.1:$ctl_metrics/metrics"
  ((status_gate)) && say "  status server     https://127.0.0.1:$st_port (CA $state/pki/ca.crt; docs/progress.md)"
  say "  env               source $state/env"
  say "  stop with         hack/run-local.sh down"
}

# up --in-cluster: the services as pods on a real node, installed as docs/install.md says.
up_in_cluster() {
  (($(id -u) == 0)) || die "--in-cluster runs a real node (containerd, kubelet, iptables), which needs root"
  local start=$SECONDS
  hack/install-deps.sh
  say "building the images (hack/images/build.sh: cached after the first run; cold, minutes)"
  hack/images/build.sh
  mkdir -p "$state"
  say "starting a test bed with a real node (hack/testbed/up.sh --node)"
  hack/testbed/up.sh --node >/dev/null
  say "loading the images into the node"
  hack/images/build.sh --load
  hack/images/build.sh --env >>"$TESTBED_DIR/env" 2>/dev/null
  source "$TESTBED_DIR/env"
  cp "$KUBECONFIG" "$state/kubeconfig"
  say "installing trainer-cpp and JobSet with docs/install.md's commands, images set"
  python3 tests/e2e/install_on_node.py

  local wh ctl wh_pod ctl_pod
  wh=$(testbed_kubectl -n "$NS" get svc trainer-webhook -o 'jsonpath={.spec.clusterIP}')
  ctl=$(testbed_kubectl -n "$NS" get svc trainer-controller-metrics -o 'jsonpath={.spec.clusterIP}')
  wh_pod=$(testbed_kubectl -n "$NS" get pods -l app.kubernetes.io/component=webhook -o 'jsonpath={.items[0].status.podIP}')
  ctl_pod=$(testbed_kubectl -n "$NS" get pods -l app.kubernetes.io/component=controller -o 'jsonpath={.items[0].status.podIP}')
  cat >"$state/env" <<EOF
# Written by hack/run-local.sh up --in-cluster; source it to talk to the local run. The services
# run as pods: URLs are their Services' ClusterIPs (and the first pod's IP for health), which
# this machine reaches over the node's pod bridge.
export KUBECONFIG='$state/kubeconfig'
export TRAINER_LOCAL_DIR='$state'
export TESTBED_DIR='$TESTBED_DIR'
export TESTBED_BIN_DIR='$TESTBED_BIN_DIR'
export TRAINER_WEBHOOK_URL='https://$wh:443'
export TRAINER_WEBHOOK_METRICS_URL='http://$wh:8080/metrics'
export TRAINER_WEBHOOK_HEALTH_URL='http://$wh_pod:8081'
export TRAINER_CONTROLLER_METRICS_URL='http://$ctl:8080/metrics'
export TRAINER_CONTROLLER_HEALTH_URL='http://$ctl_pod:8081'
export TRAINER_LOGS_DIR='$TESTBED_DIR/node/kubelet/pod-logs'
export TRAINER_JOBSET_CONTROLLER=1
export TRAINER_IN_CLUSTER=1
export TRAINER_TORCH_IMAGE='$TRAINER_TORCH_IMAGE'
export TRAINER_MPI_IMAGE='$TRAINER_MPI_IMAGE'
EOF
  local k="$TESTBED_BIN_DIR/kubectl"
  say "ready in $((SECONDS - start))s: trainer-webhook (2 replicas), trainer-controller and the JobSet"
  say "controller run as pods on node $TESTBED_NODE_NAME, in namespace $NS"
  say "  admin kubeconfig  export KUBECONFIG=$state/kubeconfig   (kubectl: $k)"
  say "  images            torch $TRAINER_TORCH_IMAGE, OpenMPI $TRAINER_MPI_IMAGE"
  say "  env               source $state/env"
  say "  train for real:"
  say "    $k create -f examples/local/torch-ddp.yaml"
  say "    $k get trainjob torch-ddp -w"
  say "    $k logs -f -l jobset.sigs.k8s.io/jobset-name=torch-ddp --prefix --max-log-requests=2"
  say "  stop with         hack/run-local.sh down"
}

lease_held() {
  [[ -n "$(testbed_kubectl -n "$NS" get lease trainer.kubeflow.org -o 'jsonpath={.spec.holderIdentity}')" ]]
}

# examples/trainjobs/torch-distributed.yaml (two nodes) on the KWOK node: JobSet -> Jobs -> Pods
# -> Complete in seconds.
run_example() {
  local job=examples/trainjobs/torch-distributed.yaml name=torch-distributed t0=$SECONDS
  say "applying $job"
  testbed_kubectl -n default delete trainjob "$name" --ignore-not-found --wait=true >/dev/null
  testbed_kubectl -n default apply --server-side --field-manager=run-local -f "$job"
  complete() {
    [[ "$(testbed_kubectl -n default get trainjob "$name" \
      -o 'jsonpath={.status.conditions[?(@.type=="Complete")].status}')" == True ]]
  }
  testbed_wait_for "TrainJob $name to be Complete" 120 complete || {
    testbed_kubectl -n default get trainjobs,jobsets,jobs,pods -o wide >&2 || true
    die "TrainJob $name did not reach Complete (logs: $TESTBED_DIR/logs/)"
  }
  say "TrainJob default/$name is Complete after $((SECONDS - t0))s:"
  testbed_kubectl -n default get trainjob "$name" \
    -o 'custom-columns=NAME:.metadata.name,RUNTIME:.spec.runtimeRef.name,COMPLETE:.status.conditions[?(@.type=="Complete")].status,JOBS:.status.jobsStatus[*].name' |
    sed 's/^/    /'
}

# Every example TrainJob rendered offline by trainer-render: the objects the controller applies.
render_examples() { # BIN_DIR
  local bin=$1 runtime_args=() rt job name out
  mkdir -p "$state/rendered"
  for rt in examples/runtimes/*.yaml; do runtime_args+=(-f "$rt"); done
  for job in examples/trainjobs/*.yaml; do
    name=$(basename "$job" .yaml)
    out="$state/rendered/$name.yaml"
    "$bin/trainer-render" "${runtime_args[@]}" -f "$job" >"$out" 2>"$out.err" ||
      die "trainer-render $job: $(cat "$out.err")"
    rm -f "$out.err"
  done
  say "rendered examples (what the controller would apply): $state/rendered/"
}

case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  *)
    echo "usage: hack/run-local.sh [up [--no-jobset-controller]|down]" >&2
    exit 2
    ;;
esac

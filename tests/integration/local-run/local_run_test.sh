#!/usr/bin/env bash
# hack/run-local.sh as a user runs it, in a state dir of its own ($TRAINER_BUILD_DIR/local-run):
#  1. `up` returns with the example TrainJob Complete (run-local checks that itself);
#  2. trainer-webhook and trainer-controller authenticate as their own ServiceAccounts (the
#     permissions are deploy/'s) and their logs hold no RBAC denial;
#  3. a valid TrainJob is admitted, defaulted by nobody but accepted, its JobSet created (owned by
#     the TrainJob) and its status written (Complete, jobsStatus); an invalid one is denied by
#     validator.trainjob.trainer.kubeflow.org;
#  4. the public ConfigMap is readable by any authenticated user (the SDK's check);
#  5. `promtool check metrics` passes on both /metrics outputs, docs/observability.md lists exactly
#     what they export, and a real Prometheus scraping
#     both finds the targets up and the reconcile and webhook metrics with values;
#  6. `down` leaves no process behind; `up --no-jobset-controller` starts no JobSet controller,
#     scheduler or KWOK, and trainer's JobSet stays without status.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export TRAINER_LOCAL_DIR="${TRAINER_BUILD_DIR:?set by ctest}/local-run"
export TRAINER_BIN_DIR="${TRAINER_BIN_DIR:?set by ctest}"
export TESTBED_DIR="$TRAINER_LOCAL_DIR/testbed"
source "$ROOT/hack/testbed/lib.sh"
cd "$ROOT"
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

prom_pid=""
cleanup() {
  [[ -n "$prom_pid" ]] && kill "$prom_pid" 2>/dev/null || true
  hack/run-local.sh down >/dev/null 2>&1 || true
}
trap cleanup EXIT
hack/run-local.sh down >/dev/null 2>&1 || true # a leftover of an interrupted run

hack/run-local.sh up
source "$TRAINER_LOCAL_DIR/env"
[[ -f "$TRAINER_LOCAL_DIR/kubeconfig" ]] || fail "no admin kubeconfig at $TRAINER_LOCAL_DIR/kubeconfig"
k() { testbed_kubectl "$@"; }

# --- 2. identities -----------------------------------------------------------------------------
for svc in trainer-webhook trainer-controller; do
  who=$(k --kubeconfig="$TRAINER_LOCAL_DIR/$svc.kubeconfig" auth whoami -o 'jsonpath={.status.userInfo.username}')
  [[ $who == "system:serviceaccount:kubeflow-system:$svc" ]] || fail "$svc runs as '$who'"
  tr '\0' ' ' <"/proc/$(cut -d' ' -f1 "$TESTBED_DIR/pids/$svc")/cmdline" |
    grep -q -- "--kubeconfig=$TRAINER_LOCAL_DIR/$svc.kubeconfig" ||
    fail "$svc does not run with its ServiceAccount kubeconfig"
done
ok "both services authenticate as their ServiceAccounts"
# What a ServiceAccount may not do, it cannot: the webhook has no write access by default.
[[ $(k --kubeconfig="$TRAINER_LOCAL_DIR/trainer-webhook.kubeconfig" auth can-i create jobsets.jobset.x-k8s.io -A) == no ]] ||
  fail "trainer-webhook may create JobSets"
[[ $(k --kubeconfig="$TRAINER_LOCAL_DIR/trainer-controller.kubeconfig" auth can-i create secrets -n default) == yes ]] ||
  fail "trainer-controller may not create Secrets"

# --- 3. admission, JobSet, status ----------------------------------------------------------------
k create namespace local-run-test >/dev/null
k -n local-run-test apply --server-side --field-manager=local-run-test -f - >/dev/null <<'YAML'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: good
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    resourcesPerNode: {requests: {cpu: 1}}
    command: ["python3", "-c", "print('hi')"]
YAML
ok "valid TrainJob admitted"
if out=$(k -n local-run-test create -f - 2>&1 <<'YAML'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: bad
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    env: [{name: PET_NNODES, value: "2"}]
YAML
); then fail "TrainJob with a reserved env was admitted"; fi
grep -q 'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request' <<<"$out" ||
  fail "unexpected denial: $out"
ok "invalid TrainJob denied: ${out##*denied the request: }"

owner() { k -n local-run-test get jobset good -o 'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}'; }
testbed_wait_for "JobSet local-run-test/good" 60 owner || fail "no JobSet for TrainJob good"
[[ $(owner) == TrainJob/good ]] || fail "JobSet good is owned by '$(owner)'"
complete() {
  [[ $(k -n local-run-test get trainjob good -o 'jsonpath={.status.conditions[?(@.type=="Complete")].status}') == True ]]
}
testbed_wait_for "TrainJob good Complete" 120 complete || {
  k -n local-run-test get trainjob good -o yaml >&2
  fail "TrainJob good did not complete"
}
[[ $(k -n local-run-test get trainjob good -o 'jsonpath={.status.jobsStatus[0].name}') == node ]] ||
  fail "TrainJob good has no jobsStatus for 'node'"
ok "JobSet created (owned by the TrainJob), status written: Complete, jobsStatus"

# --- 4. the SDK's public ConfigMap, as any authenticated user -----------------------------------
k -n kubeflow-system create serviceaccount sdk-user --dry-run=client -o yaml |
  k apply --server-side --field-manager=local-run-test -f - >/dev/null
ver=$(k -n kubeflow-system get configmap kubeflow-trainer-public --as=system:serviceaccount:kubeflow-system:sdk-user \
  --as-group=system:authenticated -o 'jsonpath={.data.kubeflow_trainer_version}')
[[ -n $ver ]] || fail "kubeflow-trainer-public not readable by system:authenticated"
ok "kubeflow-trainer-public readable by system:authenticated (version $ver)"

# --- 5. metrics: promtool and a real Prometheus -------------------------------------------------
for url in "$TRAINER_WEBHOOK_METRICS_URL" "$TRAINER_CONTROLLER_METRICS_URL"; do
  curl -fsS "$url" | promtool check metrics || fail "promtool check metrics failed on $url"
done
ok "promtool check metrics passes on both endpoints"
prom_dir="$TRAINER_LOCAL_DIR/prometheus"
rm -rf "$prom_dir" && mkdir -p "$prom_dir"
prom_port=$(testbed_free_port)
target() { local t=${1#http://}; echo "${t%/metrics}"; }
cat >"$prom_dir/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: trainer-webhook
    static_configs: [{targets: ['$(target "$TRAINER_WEBHOOK_METRICS_URL")']}]
    metrics_path: /metrics
  - job_name: trainer-controller
    static_configs: [{targets: ['$(target "$TRAINER_CONTROLLER_METRICS_URL")']}]
    metrics_path: /metrics
YAML
prometheus --config.file="$prom_dir/prometheus.yml" --storage.tsdb.path="$prom_dir/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$prom_dir/prometheus.log" 2>&1 &
prom_pid=$!
PROM="http://127.0.0.1:$prom_port"
targets_up() {
  curl -fsS "$PROM/api/v1/targets" | python3 -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
up = {x["labels"]["job"] for x in t if x["health"] == "up"}
sys.exit(0 if {"trainer-webhook", "trainer-controller"} <= up else 1)'
}
testbed_wait_for "Prometheus targets up" 60 targets_up || {
  curl -sS "$PROM/api/v1/targets" >&2 || true; tail -n 20 "$prom_dir/prometheus.log" >&2
  fail "Prometheus does not see both targets up"
}
has_value() { # JOB QUERY
  curl -fsS --get "$PROM/api/v1/query" --data-urlencode "query=sum($2{job=\"$1\"})" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
sys.exit(0 if r and float(r[0]["value"][1]) > 0 else 1)'
}
testbed_wait_for "controller_runtime_reconcile_total" 30 has_value trainer-controller controller_runtime_reconcile_total ||
  fail "Prometheus has no controller_runtime_reconcile_total > 0 from trainer-controller"
testbed_wait_for "controller_runtime_webhook_requests_total" 30 has_value trainer-webhook controller_runtime_webhook_requests_total ||
  fail "Prometheus has no controller_runtime_webhook_requests_total > 0 from trainer-webhook"
ok "Prometheus scrapes both targets; reconcile and webhook request counters have values"
# docs/observability.md lists exactly the families each service exports (types, labels), and
# Prometheus accepts every expression of the alerting rules, the dashboard and the guide.
python3 tests/integration/observability/check_metrics_docs.py --controller "$TRAINER_CONTROLLER_METRICS_URL" \
  --webhook "$TRAINER_WEBHOOK_METRICS_URL" --prometheus "$PROM" || fail "metrics and docs/observability.md differ"
ok "docs/observability.md matches both /metrics; Prometheus accepts the rules' and dashboard's queries"
kill "$prom_pid"; wait "$prom_pid" 2>/dev/null || true; prom_pid=""

# --- 6. down, then up --no-jobset-controller ----------------------------------------------------
pids=$(cut -d' ' -f1 "$TESTBED_DIR"/pids/*)
hack/run-local.sh down
for pid in $pids; do testbed_pid_running "$pid" && fail "process $pid still runs after down"; done
[[ ! -e "$TRAINER_LOCAL_DIR/kubeconfig" ]] || fail "down left the kubeconfig"
ok "down stopped everything"

hack/run-local.sh up --no-jobset-controller
for part in jobset-controller kube-scheduler kwok; do
  [[ ! -e "$TESTBED_DIR/pids/$part" ]] || fail "$part runs with --no-jobset-controller"
done
k create namespace conformance >/dev/null
k -n conformance apply --server-side --field-manager=local-run-test -f - >/dev/null <<'YAML'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: plain
spec:
  runtimeRef: {name: torch-distributed}
YAML
testbed_wait_for "JobSet conformance/plain" 60 k -n conformance get jobset plain || fail "no JobSet"
[[ -z $(k -n conformance get jobset plain -o 'jsonpath={.status.conditions}') ]] ||
  fail "JobSet plain has conditions without a JobSet controller"
ok "up --no-jobset-controller: JobSet written by trainer only"
hack/run-local.sh down >/dev/null
trap - EXIT
echo PASS

#!/usr/bin/env bash
# hack/run-local.sh up --feature-gates=TrainJobStatus=true end to end, in a state dir of its own
# ($TRAINER_BUILD_DIR/local-run-progress):
#  1. .local/env names the status server (TRAINER_STATUS_URL, TRAINER_STATUS_CA);
#  2. a TrainJob's trainer pods (KWOK) carry the three KUBEFLOW_TRAINER_SERVER_* variables, the
#     kubeflow-trainer-token projected volume and its mount, exactly as upstream's plugin; the
#     <trainjob>-tls-config ConfigMap holds the certificate Secret's ca.crt, owned by the TrainJob;
#  3. examples/progress/kubeflow_progress.py, given a token from `kubectl create token`, reports
#     through TRAINER_STATUS_URL and status.trainerStatus, PROGRESS and ETA follow;
#  4. the controller counts the TrainJob as reporting; docs/observability.md lists exactly what
#     both services export with the gate on.
set -euo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export TRAINER_LOCAL_DIR="${TRAINER_BUILD_DIR:?set by ctest}/local-run-progress"
export TRAINER_BIN_DIR="${TRAINER_BIN_DIR:?set by ctest}"
export TESTBED_DIR="$TRAINER_LOCAL_DIR/testbed"
source "$ROOT/hack/testbed/lib.sh"
cd "$ROOT"
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

cleanup() { hack/run-local.sh down >/dev/null 2>&1 || true; }
trap cleanup EXIT
hack/run-local.sh down >/dev/null 2>&1 || true # a leftover of an interrupted run

hack/run-local.sh up --feature-gates=TrainJobStatus=true
source "$TRAINER_LOCAL_DIR/env"
k() { testbed_kubectl "$@"; }

# --- 1. env -----------------------------------------------------------------------------------
[[ $TRAINER_STATUS_URL =~ ^https://127\.0\.0\.1:[0-9]+$ ]] || fail "TRAINER_STATUS_URL='${TRAINER_STATUS_URL:-}'"
[[ -f $TRAINER_STATUS_CA ]] || fail "TRAINER_STATUS_CA='${TRAINER_STATUS_CA:-}' is not a file"
ok ".local/env: TRAINER_STATUS_URL=$TRAINER_STATUS_URL, TRAINER_STATUS_CA=$TRAINER_STATUS_CA"

# --- 2. what the plugin gives trainer pods ---------------------------------------------------------
NS=progress-test
k create namespace "$NS" >/dev/null
k -n "$NS" create serviceaccount trainer >/dev/null
k -n "$NS" apply --server-side --field-manager=progress-test -f - >/dev/null <<'YAML'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: progress
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    image: docker.io/library/python:3.11
    command: [python3, train.py]
YAML
pods() { k -n "$NS" get pods -l jobset.sigs.k8s.io/jobset-name=progress -o json; }
testbed_wait_for "the TrainJob's two pods" 120 \
  bash -c "[[ \$($TESTBED_BIN_DIR/kubectl --kubeconfig=$KUBECONFIG -n $NS get pods -l jobset.sigs.k8s.io/jobset-name=progress -o name | wc -l) -ge 2 ]]" ||
  fail "no pods for TrainJob $NS/progress"
pods | python3 -c '
import json, sys
pods = json.load(sys.stdin)["items"]
want_env = {
    "KUBEFLOW_TRAINER_SERVER_URL": "https://trainer-webhook.kubeflow-system.svc:10443/apis/trainer.kubeflow.org/v1alpha1/namespaces/progress-test/trainjobs/progress/status",
    "KUBEFLOW_TRAINER_SERVER_CA_CERT": "/var/run/secrets/kubeflow/trainer/ca.crt",
    "KUBEFLOW_TRAINER_SERVER_TOKEN": "/var/run/secrets/kubeflow/trainer/token",
}
want_volume = {"name": "kubeflow-trainer-token", "projected": {"defaultMode": 420, "sources": [
    {"serviceAccountToken": {"audience": "trainer.kubeflow.org/v1alpha1/namespaces/progress-test/trainjobs/progress/status",
                             "expirationSeconds": 3600, "path": "token"}},
    {"configMap": {"name": "progress-tls-config", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}
want_mount = {"name": "kubeflow-trainer-token", "mountPath": "/var/run/secrets/kubeflow/trainer", "readOnly": True}
for p in pods:
    spec = p["spec"]
    for c in spec["containers"]:
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        for k, v in want_env.items():
            assert env.get(k) == v, (p["metadata"]["name"], c["name"], k, env.get(k))
        assert want_mount in c.get("volumeMounts", []), (c["name"], c.get("volumeMounts"))
    vols = [v for v in spec.get("volumes", []) if v["name"] == "kubeflow-trainer-token"]
    assert vols == [want_volume], vols
print("%d pods checked" % len(pods))
' || fail "the trainer pods do not carry the status server's env, volume and mount"
ok "trainer pods carry KUBEFLOW_TRAINER_SERVER_{URL,CA_CERT,TOKEN}, the token volume and its mount"

cm_ca=$(k -n "$NS" get configmap progress-tls-config -o 'jsonpath={.data.ca\.crt}')
secret_ca=$(k -n kubeflow-system get secret kubeflow-trainer-webhook-cert -o 'jsonpath={.data.ca\.crt}' | base64 -d)
[[ -n $cm_ca && $cm_ca == "$secret_ca" && $cm_ca == "$(cat "$TRAINER_STATUS_CA")" ]] ||
  fail "ConfigMap progress-tls-config's ca.crt is not the certificate Secret's"
owner=$(k -n "$NS" get configmap progress-tls-config -o 'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}')
[[ $owner == TrainJob/progress/true ]] || fail "ConfigMap progress-tls-config is owned by '$owner'"
ok "ConfigMap progress-tls-config holds the certificate Secret's ca.crt, controlled by the TrainJob"

# --- 3. the example reporter -------------------------------------------------------------------------
token_file="$TRAINER_LOCAL_DIR/progress-token"
k -n "$NS" create token trainer \
  --audience=trainer.kubeflow.org/v1alpha1/namespaces/$NS/trainjobs/progress/status >"$token_file" ||
  fail "kubectl create token for ServiceAccount $NS/trainer"
KUBEFLOW_TRAINER_SERVER_URL="$TRAINER_STATUS_URL/apis/trainer.kubeflow.org/v1alpha1/namespaces/$NS/trainjobs/progress/status" \
KUBEFLOW_TRAINER_SERVER_CA_CERT="$TRAINER_STATUS_CA" KUBEFLOW_TRAINER_SERVER_TOKEN="$token_file" \
  python3 examples/progress/kubeflow_progress.py --progress 37 --eta 120 --metric loss=0.5 ||
  fail "examples/progress/kubeflow_progress.py could not report"
status=$(k -n "$NS" get trainjob progress -o 'jsonpath={.status.trainerStatus.progressPercentage}/{.status.trainerStatus.estimatedRemainingSeconds}/{.status.trainerStatus.metrics[0].name}={.status.trainerStatus.metrics[0].value}') ||
  fail "reading TrainJob $NS/progress's status.trainerStatus"
[[ $status == "37/120/loss=0.5" ]] || fail "status.trainerStatus is '$status'"
row=$(k -n "$NS" get trainjob progress --no-headers -o custom-columns=P:.status.trainerStatus.progressPercentage) ||
  fail "kubectl get trainjob -o custom-columns"
# The header line, without a pipe: `| head -1` can end kubectl with SIGPIPE, fatal with pipefail.
columns=$(k -n "$NS" get trainjob progress) || fail "kubectl get trainjob"
columns=${columns%%$'\n'*}
[[ $columns == *PROGRESS*ETA* && $row == 37 ]] || fail "kubectl get trainjobs: '$columns'"
ok "the example reporter's progress is in status.trainerStatus and kubectl get trainjobs"

# --- 4. metrics -------------------------------------------------------------------------------------
reporting() { curl -fsS "$TRAINER_CONTROLLER_METRICS_URL" | grep -q '^trainer_trainjobs_reporting_progress [1-9]'; }
testbed_wait_for "trainer_trainjobs_reporting_progress" 30 reporting || fail "the controller counts no reporting TrainJob"
ok "trainer-controller counts the TrainJob as reporting progress"
# One denial, so that trainer_webhook_denials_total has a series as the guide documents it.
if k -n "$NS" apply --server-side --field-manager=progress-test -f - >/dev/null 2>&1 <<'YAML'; then
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: denied
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    env: [{name: PET_NNODES, value: "2"}]
YAML
  fail "a TrainJob with a reserved env was admitted"
fi
python3 tests/integration/observability/check_metrics_docs.py --controller "$TRAINER_CONTROLLER_METRICS_URL" \
  --webhook "$TRAINER_WEBHOOK_METRICS_URL" || fail "docs/observability.md and the exported metrics differ"
ok "docs/observability.md lists what both services export with TrainJobStatus on"

k delete namespace "$NS" --wait=false >/dev/null
echo "all local run checks with TrainJobStatus passed"

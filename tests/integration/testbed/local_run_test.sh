#!/usr/bin/env bash
# The local run's test bed, end to end, in a test bed of its own (not the fixture's, whose
# tests must not see JobSet webhooks appear): up.sh --all starts the JobSet controller,
# kube-scheduler and KWOK; a JobSet runs JobSet -> Job -> Pod -> Completed on the KWOK node;
# down.sh leaves no process and no directory behind.
set -euo pipefail
export TESTBED_DIR="${TRAINER_BUILD_DIR:?set by ctest}/testbed-local-run"
source "$(dirname "${BASH_SOURCE[0]}")/../../../hack/testbed/lib.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }

"$TESTBED_ROOT/hack/testbed/down.sh" >/dev/null # a leftover of an interrupted run
trap '"$TESTBED_ROOT/hack/testbed/down.sh" >/dev/null 2>&1 || true' EXIT
"$TESTBED_ROOT/hack/testbed/up.sh" --all

# Discovery is eventually consistent: right after start-up a request may still miss a group whose
# CRD is Established (seen under load), so a client retries, as kubectl's users would.
listed() {
  testbed_kubectl api-resources -o name 2>"$TESTBED_DIR/api-resources.err" | grep -qx "$1" && return
  echo "not yet listed: $1 ($(date +%T.%N | cut -c1-12)) $(cat "$TESTBED_DIR/api-resources.err")" >&3
  return 1
}
for r in jobsets.jobset.x-k8s.io podgroups.scheduling.x-k8s.io podgroups.scheduling.volcano.sh; do
  testbed_wait_for "api-resources to list $r" 30 listed "$r" 3>&2 ||
    fail "api-resources does not list $r"
done

testbed_kubectl apply --server-side --field-manager=local-run-test -f - >/dev/null <<'YAML'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: smoke
  namespace: default
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        completions: 2
        parallelism: 2
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: worker
              image: busybox
              command: ["true"]
YAML
start=$SECONDS
completed() {
  [[ "$(testbed_kubectl get jobset smoke -o \
    'jsonpath={.status.conditions[?(@.type=="Completed")].status}')" == True ]]
}
testbed_wait_for "JobSet smoke to complete" 90 completed || {
  testbed_kubectl get jobsets,jobs,pods -o wide >&2 || true
  fail "JobSet smoke did not complete"
}
echo "JobSet smoke completed in $((SECONDS - start))s"
# The JobSet webhooks ran: the defaulting webhook filled in spec.successPolicy.
[[ -n "$(testbed_kubectl get jobset smoke -o 'jsonpath={.spec.successPolicy.operator}')" ]] ||
  fail "JobSet smoke has no defaulted successPolicy (mutating webhook not called?)"

pids=$(cut -d' ' -f1 "$TESTBED_DIR"/pids/*)
"$TESTBED_ROOT/hack/testbed/down.sh"
trap - EXIT
for pid in $pids; do
  if testbed_pid_running "$pid"; then fail "process $pid still runs after down.sh"; fi
done
[[ ! -e "$TESTBED_DIR" ]] || fail "$TESTBED_DIR still exists after down.sh"
echo "PASS"

#!/usr/bin/env bash
# examples/kube-watch on the test bed: it lists a namespace's ConfigMaps (one created before it
# starts), then prints the ADDED/MODIFIED/DELETED events of changes made while it watches.
set -euo pipefail
source "$(dirname "$0")/../../../../hack/testbed/lib.sh"
ns="kube-watch-$$"
out=$(mktemp)
trap 'testbed_kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -f "$out"' EXIT
testbed_kubectl create namespace "$ns" >/dev/null
testbed_kubectl -n "$ns" create configmap before --from-literal=a=1 >/dev/null

"$TRAINER_BIN_DIR/kube-watch" --kubeconfig "$TESTBED_DIR/kubeconfig" --namespace "$ns" \
  --max-events 4 --timeout 60 >"$out" &
pid=$!
testbed_wait_for "kube-watch to sync" 30 grep -q '^SYNCED' "$out"
testbed_kubectl -n "$ns" create configmap live --from-literal=a=1 >/dev/null
testbed_kubectl -n "$ns" patch configmap live -p '{"data":{"a":"2"}}' >/dev/null
testbed_kubectl -n "$ns" delete configmap live >/dev/null
wait "$pid"
cat "$out"
grep -q "^ADDED $ns/before " "$out"
grep -q "^SYNCED 1 configmaps" "$out"
grep -q "^ADDED $ns/live " "$out"
grep -q "^MODIFIED $ns/live " "$out"
grep -q "^DELETED $ns/live " "$out"
echo "kube-watch: ok"

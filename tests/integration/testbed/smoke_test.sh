#!/usr/bin/env bash
# Smoke test of the test bed: the apiserver is ready and reports the pinned version, the CRDs the
# fixture installs are served, server-side apply records its field manager in managedFields, and
# the namespace controller finishes deleting a namespace.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../../hack/testbed/lib.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }

ready=$(testbed_kubectl get --raw /readyz)
[[ "$ready" == ok ]] || fail "/readyz answered '$ready', want 'ok'"

version=$(testbed_kubectl get --raw /version)
[[ "$version" == *'"gitVersion": "v1.36.3"'* ]] || fail "/version is $version, want gitVersion v1.36.3"

resources=$(testbed_kubectl api-resources -o name)
for r in jobsets.jobset.x-k8s.io podgroups.scheduling.x-k8s.io podgroups.scheduling.volcano.sh; do
  grep -qx "$r" <<<"$resources" || fail "api-resources does not list $r"
done

ns="smoke-$$-$RANDOM"
trap 'testbed_kubectl delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true' EXIT
testbed_kubectl create namespace "$ns" >/dev/null

testbed_kubectl apply --server-side --field-manager=trainer-smoke -n "$ns" -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: smoke
data:
  key: value
YAML
got=$(testbed_kubectl get configmap smoke -n "$ns" \
  -o jsonpath='{range .metadata.managedFields[*]}{.manager}/{.operation}/{.fieldsV1}{"\n"}{end}')
echo "managedFields: $got"
grep -q '^trainer-smoke/Apply/.*"f:key"' <<<"$got" ||
  fail "managedFields has no Apply entry of trainer-smoke owning data.key"

testbed_kubectl delete namespace "$ns" --wait=false >/dev/null
testbed_wait_for "namespace $ns to be deleted" 60 testbed_absent namespace "$ns" ||
  fail "namespace $ns still exists: $(testbed_kubectl get namespace "$ns" -o jsonpath='{.status}')"
trap - EXIT
echo "PASS"

#!/usr/bin/env bash
# charts/trainer-cpp without a cluster: its copied files are current (hack/sync-deploy-copies.sh
# --check), `helm lint --strict` passes with the default values and with every case's, and
# `helm template` of each case in golden/<case>/ (values.yaml) prints exactly want.yaml. Then a
# server-side dry run of each case's output against the fixture's apiserver: every object is
# valid as rendered (stand-in CRDs for cert-manager and the Prometheus Operator, as
# tests/integration/deploy/dry_run_test.sh).
#
#   tests/integration/chart/template_test.sh            check
#   tests/integration/chart/template_test.sh --update   rewrite want.yaml (review the diff)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../../../hack/testbed/lib.sh"
source "$here/../deploy/lib.sh"
source "$here/lib.sh"
cd "$TESTBED_ROOT"
fail() { echo "FAIL: $*" >&2; exit 1; }
update=0
[[ ${1:-} == --update ]] && update=1

hack/sync-deploy-copies.sh --check || fail "the chart's copies are stale"
echo "ok: the chart's copies of the CRDs, runtimes, rules and dashboard are current"

HELM=$(chart_helm)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chart_with_local_jobset "$work" || fail "could not assemble the chart with its JobSet dependency"
chart="$work/trainer-cpp"

"$HELM" lint --strict "$chart" >"$work/lint.out" 2>&1 || { cat "$work/lint.out" >&2; fail "helm lint (default values)"; }
for case in "$here"/golden/*/; do
  name=$(basename "$case")
  "$HELM" lint --strict "$chart" -f "$case/values.yaml" >"$work/lint.out" 2>&1 ||
    { cat "$work/lint.out" >&2; fail "helm lint -f golden/$name/values.yaml"; }
done
echo "ok: helm lint --strict, default values and every case"

# Values that would install something broken, or that mean something else than in upstream's
# chart, are refused with a message naming what to do instead.
refuses() { # WANT_MESSAGE HELM_ARGS...
  local want=$1 out
  shift
  if out=$("$HELM" template trainer-cpp "$chart" "$@" 2>&1); then
    fail "helm template $* rendered; want an error naming: $want"
  fi
  grep -qF -- "$want" <<<"$out" || { echo "$out" >&2; fail "helm template $*: the error does not name: $want"; }
}
refuses "controller.image.repository and webhook.image.repository" --set image.repository=kubeflow/trainer/trainer-controller-manager
refuses "install with --skip-crds instead" --set crds.enabled=false
refuses "needs webhook.certificate.caBundle" --set webhook.certificate.mode=secret
refuses "needs webhook.certificate.mode=secret or cert-manager" --set manager.config.certManagement.enable=false
refuses "must be builtin, cert-manager or secret" --set webhook.certificate.mode=vault
refuses "must be Fail or Ignore" --set webhook.failurePolicy=Retry
refuses "needs manager.config.leaderElection.leaderElect=true" --set controller.replicas=2 --set manager.config.leaderElection.leaderElect=false
refuses "is not supported by trainer-cpp" --set dataCache.enabled=true
refuses "metrics over plain HTTP" --set manager.config.metrics.secureServing=true
refuses "chart requires kubeVersion" --kube-version v1.30.0
echo "ok: values that would break an install are refused with a clear message"

for case in "$here"/golden/*/; do
  name=$(basename "$case")
  "$HELM" template trainer-cpp "$chart" --namespace kubeflow-system -f "$case/values.yaml" \
    >"$work/$name.yaml" || fail "helm template golden/$name"
  if ((update)); then
    cp "$work/$name.yaml" "$case/want.yaml"
    echo "updated golden/$name/want.yaml"
  elif ! diff -u "$case/want.yaml" "$work/$name.yaml" >"$work/$name.diff"; then
    head -n 80 "$work/$name.diff" >&2
    fail "helm template golden/$name differs from want.yaml (tests/integration/chart/template_test.sh --update rewrites it)"
  fi
done
((update)) && exit 0
echo "ok: helm template output of every case is its want.yaml"

# The images hold the services and nothing else (no shell, no sleep): no probe or hook may exec a
# program, and the webhook's preStop drain is deploy/'s (the kubelet's sleep action).
python3 - "$work" "$TESTBED_ROOT/deploy/base/webhook/deployment.yaml" "$here"/golden/*/ <<'PY' || fail "a chart container execs a program, or the webhook's preStop differs from deploy/'s"
import os, sys, yaml
work, base, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
def containers(doc):
    spec = (doc or {}).get("spec", {}).get("template", {}).get("spec", {})
    return spec.get("initContainers", []) + spec.get("containers", [])
def execs(c):
    hooks = [c.get(k) for k in ("livenessProbe", "readinessProbe", "startupProbe")]
    hooks += list((c.get("lifecycle") or {}).values())
    return [h["exec"] for h in hooks if h and "exec" in h]
want = next(c for c in containers(yaml.safe_load(open(base))) if c["name"] == "webhook")["lifecycle"]
bad = []
for case in cases:
    name = os.path.basename(case.rstrip("/"))
    for doc in yaml.safe_load_all(open(os.path.join(work, name + ".yaml"))):
        if not doc or doc.get("kind") != "Deployment":
            continue
        for c in containers(doc):
            if execs(c):
                bad.append(f"golden/{name}: {doc['metadata']['name']}/{c['name']} execs {execs(c)}")
            if doc["metadata"]["name"].endswith("webhook") and c["name"] == "webhook" \
                    and name == "defaults" and c.get("lifecycle") != want:
                bad.append(f"golden/defaults: webhook lifecycle {c.get('lifecycle')}, deploy/ has {want}")
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "ok: no chart container execs a program; the webhook's preStop is deploy/'s sleep action"

# The chart's ClusterRoles grant exactly what deploy/'s of the same role do (<fullname>-X and
# trainer-X): the two installs drifted apart once, and a missing rule only shows as a retry loop.
python3 - "$TESTBED_ROOT/deploy" "$work"/*.yaml <<'PY' || fail "a chart ClusterRole differs from deploy/'s"
import glob, os, sys, yaml
deploy_dir, renders = sys.argv[1], sys.argv[2:]
def ours(d):
    return (d["metadata"].get("labels") or {}).get("app.kubernetes.io/part-of") == "trainer-cpp"
def grants(rules):
    return {(g, r, v, n) for rule in rules or [] for g in rule.get("apiGroups", [""])
            for r in rule.get("resources", []) for v in rule.get("verbs", [])
            for n in rule.get("resourceNames") or ["*"]}
deploy = {d["metadata"]["name"]: d.get("rules")
          for p in glob.glob(os.path.join(deploy_dir, "**", "*.yaml"), recursive=True)
          for d in yaml.safe_load_all(open(p)) if d and d.get("kind") == "ClusterRole"}
bad, compared = [], 0
for path in renders:
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    # <fullname>: the controller Deployment's name less "-controller".
    full = next(d["metadata"]["name"][:-len("-controller")] for d in docs
                if d["kind"] == "Deployment" and ours(d) and
                d["metadata"]["labels"].get("app.kubernetes.io/component") == "controller")
    for d in docs:
        if d["kind"] != "ClusterRole" or not ours(d):
            continue
        name = d["metadata"]["name"]
        twin = "trainer" + name[len(full):]
        if twin not in deploy:
            bad.append(f"{os.path.basename(path)}: {name}: deploy/ has no ClusterRole {twin}")
            continue
        compared += 1
        a, b = grants(d.get("rules")), grants(deploy[twin])
        if a != b:
            bad.append(f"{os.path.basename(path)}: {name} vs deploy/'s {twin}: only the chart "
                       f"{sorted(a - b)}, only deploy/ {sorted(b - a)}")
print("\n".join(bad), file=sys.stderr)
print(f"{compared} ClusterRoles compared")
sys.exit(1 if bad or not compared else 0)
PY
echo "ok: the chart's ClusterRoles grant what deploy/'s do"

# Every case's objects pass the apiserver's checks as rendered.
[[ -f "$TESTBED_DIR/kubeconfig" ]] || fail "no test bed in $TESTBED_DIR (run under ctest)"
{
  standin_crd cert-manager.io v1 Issuer issuers
  standin_crd cert-manager.io v1 Certificate certificates
  standin_crd monitoring.coreos.com v1 ServiceMonitor servicemonitors
  standin_crd monitoring.coreos.com v1 PrometheusRule prometheusrules
} >"$work/standins.yaml"
cleanup() {
  testbed_kubectl delete --ignore-not-found --timeout=60s -f "$work/standins.yaml" >/dev/null 2>&1 || true
  testbed_kubectl delete namespace chart-template-test monitoring --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
testbed_kubectl apply --server-side --field-manager=chart-test -f "$work/standins.yaml" >/dev/null
testbed_kubectl apply --server-side --force-conflicts --field-manager=chart-test -f "$chart/crds" >/dev/null
# In a namespace of its own: other tests of the shared test bed create and delete kubeflow-system.
for ns in chart-template-test monitoring; do
  testbed_kubectl create namespace "$ns" --dry-run=client -o yaml |
    testbed_kubectl apply --server-side --field-manager=chart-test -f - >/dev/null
done
for crd in issuers.cert-manager.io certificates.cert-manager.io servicemonitors.monitoring.coreos.com \
  prometheusrules.monitoring.coreos.com clustertrainingruntimes.trainer.kubeflow.org; do
  testbed_wait_for "CRD $crd" 60 testbed_crd_established "$crd"
done
for case in "$here"/golden/*/; do
  name=$(basename "$case")
  "$HELM" template trainer-cpp "$chart" --namespace chart-template-test -f "$case/values.yaml" \
    >"$work/$name-dry-run.yaml"
  out=$(testbed_kubectl apply --server-side --dry-run=server --force-conflicts \
    --field-manager=helm -f "$work/$name-dry-run.yaml" 2>&1) || { echo "$out" >&2; fail "golden/$name: server dry run"; }
  echo "ok: golden/$name: $(grep -c / <<<"$out") objects pass a server dry run"
done
echo PASS

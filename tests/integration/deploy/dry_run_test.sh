#!/usr/bin/env bash
# `kubectl apply --server-side --dry-run=server -k` of every variant of deploy/ against the
# fixture's kube-apiserver: the default install, deploy/runtimes, each overlay (internal-cert,
# cert-manager, jobset, kubeflow-platform), cert-manager in another namespace, and the optional
# components (prometheus, prometheus-rules, grafana-dashboard, network-policy). Every object
# passes the apiserver's schema, CEL and admission checks as written (not just kustomize's
# rendering) and carries app.kubernetes.io/part-of=trainer-cpp.
#
# A server-side dry run cannot create what later objects need, so the test really creates the
# prerequisites first: our CRDs (the ClusterTrainingRuntimes are validated against them), the
# namespaces, and — only for the optional parts — stand-in CRDs for cert-manager.io
# Issuer/Certificate and monitoring.coreos.com ServiceMonitor/PrometheusRule (schema: any
# object), since the test bed runs neither cert-manager nor the Prometheus Operator. Those
# stand-ins check that kinds, versions and scopes exist as written, not cert-manager's field
# schema. JobSet's release manifests come from its Go module (lib.sh). Everything it created is
# removed at the end (the CRDs of deploy/crds stay: other tests apply them).
# tests/integration/deploy/install_test.py installs for real, from nothing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../../hack/testbed/lib.sh"
source "$TESTBED_DIR/env" # TESTBED_APISERVER_URL, TESTBED_PKI_DIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$TESTBED_ROOT"
fail() { echo "FAIL: $*" >&2; exit 1; }

# The default runtimes in deploy/ are copies of examples/runtimes/ (kustomize cannot load files
# outside deploy/); they must not drift.
for f in examples/runtimes/*.yaml; do
  cmp -s "$f" "deploy/runtimes/$(basename "$f")" ||
    fail "deploy/runtimes/$(basename "$f") differs from $f (cp examples/runtimes/*.yaml deploy/runtimes/)"
done
[[ $(ls deploy/runtimes/*.yaml | grep -vc kustomization.yaml) == $(ls examples/runtimes/*.yaml | wc -l) ]] ||
  fail "deploy/runtimes/ and examples/runtimes/ list different runtimes"

work=$(mktemp -d)
namespaces=(kubeflow-system kubeflow ml-platform)
cleanup() {
  testbed_kubectl delete --ignore-not-found --timeout=60s -f "$work/standins.yaml" >/dev/null 2>&1 || true
  testbed_kubectl delete mutatingwebhookconfiguration defaulter.trainer.kubeflow.org --ignore-not-found >/dev/null 2>&1 || true
  testbed_kubectl delete validatingwebhookconfiguration validator.trainer.kubeflow.org --ignore-not-found >/dev/null 2>&1 || true
  testbed_kubectl delete clusterrole,clusterrolebinding -l trainer-test=deploy-cert-init --ignore-not-found >/dev/null 2>&1 || true
  testbed_kubectl delete namespace "${namespaces[@]}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

{
  standin_crd cert-manager.io v1 Issuer issuers
  standin_crd cert-manager.io v1 Certificate certificates
  standin_crd monitoring.coreos.com v1 ServiceMonitor servicemonitors
  standin_crd monitoring.coreos.com v1 PrometheusRule prometheusrules
} >"$work/standins.yaml"

testbed_kubectl apply --server-side --force-conflicts --field-manager=deploy-test -k deploy/crds >/dev/null
testbed_kubectl apply --server-side --field-manager=deploy-test -f "$work/standins.yaml" >/dev/null
for ns in "${namespaces[@]}"; do
  testbed_kubectl create namespace "$ns" --dry-run=client -o yaml |
    testbed_kubectl apply --server-side --field-manager=deploy-test -f - >/dev/null
done
for crd in trainjobs.trainer.kubeflow.org trainingruntimes.trainer.kubeflow.org \
  clustertrainingruntimes.trainer.kubeflow.org issuers.cert-manager.io \
  certificates.cert-manager.io servicemonitors.monitoring.coreos.com \
  prometheusrules.monitoring.coreos.com; do
  testbed_wait_for "CRD $crd" 60 testbed_crd_established "$crd"
done

# A kustomization of the user's own next to the repository.
user_kustomization() { # DIR "RESOURCE..." "COMPONENT..." [NAMESPACE]
  local dir=$1 r c rel
  mkdir -p "$dir"
  rel=$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$TESTBED_ROOT/deploy" "$dir")
  {
    if [[ -n ${4:-} ]]; then echo "namespace: $4"; fi
    echo "resources:"
    for r in $2; do echo "  - $rel/$r"; done
    if [[ -n $3 ]]; then echo "components:"; fi
    for c in $3; do echo "  - $rel/components/$c"; done
  } >"$dir/kustomization.yaml"
}
user_kustomization "$work/optional" "." "prometheus prometheus-rules grafana-dashboard network-policy"
user_kustomization "$work/cm-ns" "overlays/cert-manager" "" ml-platform
deploy_tree_with_local_jobset "$work/local" || fail "could not build a deploy/ tree with JobSet's manifests"

# Renders a kustomization once into $work/rendered-<n>.yaml (kubectl prints a warning for the
# cert-manager component's `vars` on stderr; it is expected) and checks that every object carries
# app.kubernetes.io/part-of=trainer-cpp. Prints the file's path.
rendered=0
render() { # NAME DIR
  rendered=$((rendered + 1))
  local out="$work/rendered-$rendered.yaml"
  testbed_kubectl kustomize "$2" 2>/dev/null >"$out" || fail "$1: kubectl kustomize $2 failed"
  python3 -c '
import sys, yaml
bad = [d["kind"] + "/" + d["metadata"]["name"] for d in yaml.load_all(open(sys.argv[1]), Loader=yaml.CSafeLoader)
       if d and (d["metadata"].get("labels") or {}).get("app.kubernetes.io/part-of") != "trainer-cpp"]
if bad:
    sys.exit("without app.kubernetes.io/part-of=trainer-cpp: " + ", ".join(bad))' "$out" ||
    fail "$1: an object lacks the part-of label"
  echo "$out"
}

# The trainer CRDs are the same in every variant (deploy/crds): the default install sends them to
# the apiserver, the other variants leave them out of their dry run (each is 1 MB of schema).
without_trainer_crds() { # FILE
  python3 -c '
import sys, yaml
docs = [d for d in yaml.load_all(open(sys.argv[1]), Loader=yaml.CSafeLoader) if d and not (
    d["kind"] == "CustomResourceDefinition" and d["metadata"]["name"].endswith(".trainer.kubeflow.org"))]
yaml.dump_all(docs, open(sys.argv[1], "w"), Dumper=yaml.CSafeDumper)' "$1"
}

check() { # NAME DIR WANT_KINDS...
  local name=$1 dir=$2; shift 2
  local file out
  file=$(render "$name" "$dir")
  [[ $dir == deploy ]] || without_trainer_crds "$file"
  # --force-conflicts: the fixture applied the JobSet CRD under another field manager.
  if ! out=$(testbed_kubectl apply --server-side --dry-run=server --force-conflicts \
      --field-manager=trainer-deploy -f "$file" 2>&1); then
    echo "$out" >&2
    fail "$name: kubectl apply --server-side --dry-run=server of $dir failed"
  fi
  local kind
  for kind in "$@"; do
    grep -q "^$kind/" <<<"$out" || { echo "$out" >&2; fail "$name: no $kind in the output"; }
  done
  echo "ok: $name ($(grep -c / <<<"$out") objects, server dry run, all labelled part-of)"
}
common=(namespace serviceaccount
  clusterrole.rbac.authorization.k8s.io clusterrolebinding.rbac.authorization.k8s.io
  role.rbac.authorization.k8s.io rolebinding.rbac.authorization.k8s.io configmap service
  deployment.apps poddisruptionbudget.policy
  mutatingwebhookconfiguration.admissionregistration.k8s.io
  validatingwebhookconfiguration.admissionregistration.k8s.io secret)
no_ns=() no_secret=()
for k in "${common[@]}"; do
  [[ $k == namespace ]] || no_ns+=("$k")
  [[ $k == secret ]] || no_secret+=("$k")
done
crd=customresourcedefinition.apiextensions.k8s.io
check "deploy/ (default: internal certs)" deploy "${common[@]}" "$crd"
check "deploy/runtimes" deploy/runtimes clustertrainingruntime.trainer.kubeflow.org
render "overlays/internal-cert" deploy/overlays/internal-cert >/dev/null # the same objects as deploy/ (below)
check "overlays/cert-manager" deploy/overlays/cert-manager "${no_secret[@]}" issuer.cert-manager.io certificate.cert-manager.io
check "overlays/cert-manager in namespace ml-platform" "$work/cm-ns" "${no_secret[@]}" certificate.cert-manager.io
check "deploy/ + every optional component" "$work/optional" "${common[@]}" \
  servicemonitor.monitoring.coreos.com prometheusrule.monitoring.coreos.com \
  networkpolicy.networking.k8s.io
check "overlays/jobset" "$work/local/deploy/overlays/jobset" "${common[@]}" "$crd"
check "overlays/kubeflow-platform" "$work/local/deploy/overlays/kubeflow-platform" "${no_ns[@]}" "$crd"

# cert-manager in another namespace: the certificate, the CA injection, the webhooks' Service
# and the RoleBindings all name it; no object is left in kubeflow-system.
testbed_kubectl kustomize "$work/cm-ns" 2>/dev/null | python3 -c '
import sys, yaml
NS = "ml-platform"
errs = []
for d in yaml.load_all(sys.stdin, Loader=yaml.CSafeLoader):
    if not d:
        continue
    m = d["metadata"]
    what = d["kind"] + "/" + m["name"]
    if m.get("namespace") not in (None, NS):
        errs.append(what + " is in namespace " + m["namespace"])
    if d["kind"] == "Certificate" and d["spec"]["dnsNames"][0] != "trainer-webhook." + NS + ".svc":
        errs.append(what + ": dnsNames " + str(d["spec"]["dnsNames"]))
    if "webhooks" in d:
        if (m.get("annotations") or {}).get("cert-manager.io/inject-ca-from") != NS + "/trainer-webhook":
            errs.append(what + ": annotations " + str(m.get("annotations")))
        for w in d["webhooks"]:
            if w["clientConfig"]["service"]["namespace"] != NS:
                errs.append(what + ": " + w["name"] + " calls a Service in " + w["clientConfig"]["service"]["namespace"])
    if d["kind"].endswith("RoleBinding"):
        for s in d["subjects"]:
            if s["kind"] == "ServiceAccount" and s["namespace"] != NS:
                errs.append(what + ": subject in " + s["namespace"])
sys.exit("\n".join(errs) if errs else 0)' ||
  fail "overlays/cert-manager in namespace ml-platform: something still names another namespace"
echo "ok: cert-manager in namespace ml-platform: DNS names, inject-ca-from, webhook Services, RoleBindings follow it"

# The default install and the internal-cert overlay are the same objects.
diff <(testbed_kubectl kustomize deploy) <(testbed_kubectl kustomize deploy/overlays/internal-cert) >/dev/null ||
  fail "deploy/ and deploy/overlays/internal-cert render differently"

# --- internal-cert: cert-init.sh against the real apiserver, as the trainer-webhook ServiceAccount.
# The webhook configurations are created for real (cert-init patches them), each webhook limited
# by an objectSelector no object carries, so the other tests sharing this test bed never call them.
testbed_kubectl kustomize deploy | python3 -c '
import sys, yaml
keep = {"ServiceAccount", "Secret", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
        "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
out = []
for d in yaml.load_all(sys.stdin, Loader=yaml.CSafeLoader):
    if not d or d["kind"] not in keep:
        continue
    if d["kind"].startswith("Cluster"):
        d["metadata"].setdefault("labels", {})["trainer-test"] = "deploy-cert-init"
    for w in d.get("webhooks", []):
        w["objectSelector"] = {"matchLabels": {"trainer-test": "never-matches"}}
    out.append(d)
yaml.safe_dump_all(out, sys.stdout)' >"$work/cert-init.yaml"
testbed_kubectl apply --server-side --field-manager=deploy-test -f "$work/cert-init.yaml" >/dev/null
mkdir -p "$work/sa" "$work/certs"
testbed_kubectl -n kubeflow-system create token trainer-webhook >"$work/sa/token"
cp "$TESTBED_PKI_DIR/ca.crt" "$work/sa/ca.crt"
echo kubeflow-system >"$work/sa/namespace"
api=${TESTBED_APISERVER_URL#https://}
run_cert_init() {
  SA_DIR="$work/sa" CERT_DIR="$work/certs" KUBERNETES_SERVICE_HOST=${api%:*} \
    KUBERNETES_SERVICE_PORT=${api##*:} deploy/images/trainer-webhook/cert-init.sh
}
run_cert_init || fail "cert-init.sh failed (as ServiceAccount trainer-webhook with deploy/'s RBAC)"
secret_key() { testbed_kubectl -n kubeflow-system get secret kubeflow-trainer-webhook-cert -o "jsonpath={.data.$1}" | base64 -d; }
for key in ca\\.crt ca\\.key tls\\.crt tls\\.key; do
  [[ -n $(secret_key "$key") ]] || fail "Secret kubeflow-trainer-webhook-cert has no ${key//\\/}"
done
secret_key 'tls\.crt' >"$work/tls.crt"
secret_key 'ca\.crt' >"$work/ca.crt"
openssl verify -CAfile "$work/ca.crt" "$work/tls.crt" >/dev/null || fail "tls.crt is not signed by ca.crt"
openssl x509 -in "$work/tls.crt" -noout -ext subjectAltName | grep -q 'DNS:trainer-webhook.kubeflow-system.svc' ||
  fail "tls.crt is not for trainer-webhook.kubeflow-system.svc"
cmp -s "$work/tls.crt" "$work/certs/tls.crt" || fail "cert-init.sh did not copy tls.crt to CERT_DIR"
want_ca=$(base64 -w0 <"$work/ca.crt")
for cfg in mutatingwebhookconfiguration/defaulter validatingwebhookconfiguration/validator; do
  for ca in $(testbed_kubectl get "$cfg.trainer.kubeflow.org" -o 'jsonpath={.webhooks[*].clientConfig.caBundle}'); do
    [[ $ca == "$want_ca" ]] || fail "$cfg: caBundle is not the issued CA"
  done
  [[ $(testbed_kubectl get "$cfg.trainer.kubeflow.org" -o 'jsonpath={.webhooks[*].clientConfig.caBundle}' | wc -w) == \
     $(testbed_kubectl get "$cfg.trainer.kubeflow.org" -o 'jsonpath={.webhooks[*].name}' | wc -w) ]] ||
    fail "$cfg: not every webhook has a caBundle"
done
run_cert_init >/dev/null || fail "cert-init.sh failed on its second run"
secret_key 'tls\.crt' | cmp -s - "$work/tls.crt" || fail "cert-init.sh re-issued a valid certificate"
echo "ok: internal-cert: cert-init.sh issued the Secret, injected the CA, kept a valid certificate"
# Two replicas starting together on an empty Secret: one pair wins, both serve certificates of
# the CA in caBundle (the 409 loser re-reads the Secret instead of overwriting it).
testbed_kubectl -n kubeflow-system patch secret kubeflow-trainer-webhook-cert --type=json \
  -p '[{"op":"remove","path":"/data"}]' >/dev/null
mkdir -p "$work/certs-a" "$work/certs-b"
(CERT_DIR="$work/certs-a"; export CERT_DIR; SA_DIR="$work/sa" KUBERNETES_SERVICE_HOST=${api%:*} \
  KUBERNETES_SERVICE_PORT=${api##*:} deploy/images/trainer-webhook/cert-init.sh) >"$work/a.log" 2>&1 &
pid_a=$!
(CERT_DIR="$work/certs-b"; export CERT_DIR; SA_DIR="$work/sa" KUBERNETES_SERVICE_HOST=${api%:*} \
  KUBERNETES_SERVICE_PORT=${api##*:} deploy/images/trainer-webhook/cert-init.sh) >"$work/b.log" 2>&1 &
pid_b=$!
wait "$pid_a" || { cat "$work/a.log" >&2; fail "cert-init.sh (replica a) failed"; }
wait "$pid_b" || { cat "$work/b.log" >&2; fail "cert-init.sh (replica b) failed"; }
secret_key 'ca\.crt' >"$work/ca2.crt"
for r in a b; do
  openssl verify -CAfile "$work/ca2.crt" "$work/certs-$r/tls.crt" >/dev/null ||
    fail "replica $r serves a certificate the Secret's CA did not sign"
done
ca2=$(base64 -w0 <"$work/ca2.crt")
for ca in $(testbed_kubectl get validatingwebhookconfiguration/validator.trainer.kubeflow.org -o 'jsonpath={.webhooks[*].clientConfig.caBundle}'); do
  [[ $ca == "$ca2" ]] || fail "concurrent start: caBundle is not the Secret's CA"
done
echo "ok: internal-cert: two replicas starting together agree on one CA"
echo "PASS"

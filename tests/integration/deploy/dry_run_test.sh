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
  testbed_kubectl delete clusterrole,clusterrolebinding -l trainer-test=deploy-internal-cert --ignore-not-found >/dev/null 2>&1 || true
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
    if d["kind"] == "Certificate" and "dnsNames" in d["spec"] and d["spec"]["dnsNames"][0] != "trainer-webhook." + NS + ".svc":
        errs.append(what + ": dnsNames " + str(d["spec"]["dnsNames"]))
    if "webhooks" in d:
        if (m.get("annotations") or {}).get("cert-manager.io/inject-ca-from") != NS + "/trainer-webhook-ca":
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

# cert-manager's PKI: the serving certificate comes from a CA Issuer, not from the self-signed
# bootstrap Issuer, and caBundle is injected from the CA (a serving renewal keeps caBundle).
testbed_kubectl kustomize deploy/overlays/cert-manager 2>/dev/null | python3 -c '
import sys, yaml
docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.load_all(sys.stdin, Loader=yaml.CSafeLoader) if d}
ca, serving = docs[("Certificate", "trainer-webhook-ca")], docs[("Certificate", "trainer-webhook")]
ca_issuer = docs[("Issuer", "trainer-webhook-ca")]
errs = []
if not ca["spec"].get("isCA") or ca["spec"]["issuerRef"]["name"] != "trainer-selfsigned":
    errs.append("the CA Certificate is not a CA from the self-signed Issuer")
if ca["spec"]["privateKey"].get("rotationPolicy") != "Never":
    errs.append("the CA changes its key when renewed")
if ca_issuer["spec"].get("ca", {}).get("secretName") != ca["spec"]["secretName"]:
    errs.append("the CA Issuer does not sign with the Secret of the CA Certificate")
if serving["spec"]["issuerRef"]["name"] != "trainer-webhook-ca" or serving["spec"]["secretName"] != "kubeflow-trainer-webhook-cert":
    errs.append("the serving Certificate is not from the CA Issuer into kubeflow-trainer-webhook-cert")
for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
    for (k, n), d in docs.items():
        if k == kind and d["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] != "kubeflow-system/trainer-webhook-ca":
            errs.append(kind + " does not take caBundle from the CA")
sys.exit("\n".join(errs) if errs else 0)' || fail "overlays/cert-manager: the CA Issuer chain is wrong"
echo "ok: cert-manager: self-signed bootstrap Issuer -> CA Certificate -> CA Issuer -> serving Certificate; caBundle from the CA"

# The default install and the internal-cert overlay are the same objects.
diff <(testbed_kubectl kustomize deploy) <(testbed_kubectl kustomize deploy/overlays/internal-cert) >/dev/null ||
  fail "deploy/ and deploy/overlays/internal-cert render differently"

# --- internal-cert: trainer-webhook --cert-management against the real apiserver, as the
# trainer-webhook ServiceAccount with deploy/'s RBAC and the Deployment's own arguments. The
# webhook configurations are created for real (the webhook writes their caBundle), each webhook
# limited by an objectSelector no object carries, so the other tests sharing this test bed never
# call them.
testbed_kubectl kustomize deploy | python3 -c '
import json, sys, yaml
keep = {"ServiceAccount", "Secret", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
        "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
out = []
for d in yaml.load_all(sys.stdin, Loader=yaml.CSafeLoader):
    if not d:
        continue
    if d["kind"] == "Deployment" and d["metadata"]["name"] == "trainer-webhook":
        json.dump(d["spec"]["template"]["spec"]["containers"][0]["args"], open(sys.argv[1], "w"))
    if d["kind"] not in keep:
        continue
    if d["kind"].startswith("Cluster"):
        d["metadata"].setdefault("labels", {})["trainer-test"] = "deploy-internal-cert"
    for w in d.get("webhooks", []):
        w["objectSelector"] = {"matchLabels": {"trainer-test": "never-matches"}}
    out.append(d)
yaml.safe_dump_all(out, sys.stdout)' "$work/webhook-args.json" >"$work/internal-cert.yaml"
testbed_kubectl apply --server-side --field-manager=deploy-test -f "$work/internal-cert.yaml" >/dev/null
grep -q -- '"--cert-management"' "$work/webhook-args.json" ||
  fail "deploy/: trainer-webhook does not run with --cert-management"
# A kubeconfig of the ServiceAccount's token, its namespace as the default (the pod's, in-cluster).
sa_kubeconfig="$work/trainer-webhook.kubeconfig"
testbed_kubectl config view --raw --minify -o json | python3 -c '
import json, sys
cfg = json.load(sys.stdin)
cluster = cfg["clusters"][0]["cluster"]
json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "sa",
           "clusters": [{"name": "testbed", "cluster": cluster}],
           "users": [{"name": "sa", "user": {"token": sys.argv[1]}}],
           "contexts": [{"name": "sa", "context": {"cluster": "testbed", "user": "sa",
                                                   "namespace": "kubeflow-system"}}]},
          open(sys.argv[2], "w"))' "$(testbed_kubectl -n kubeflow-system create token trainer-webhook)" "$sa_kubeconfig"
pids=() names=() probes=()
# Sets port and probe. Not called in a subshell ($(...), <(...)): pids must be this shell's, or
# stop_webhooks stops nothing and every replica outlives its phase and the test.
start_webhook() { # NAME: the Deployment's arguments on free local ports
  port=$(testbed_free_port) probe=$(testbed_free_port)
  mapfile -t args < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))))' "$work/webhook-args.json")
  POD_NAME=$1 "$TRAINER_BIN_DIR/trainer-webhook" "${args[@]}" --port="$port" \
    --health-probe-bind-address="127.0.0.1:$probe" --metrics-bind-address=0 \
    --kubeconfig="$sa_kubeconfig" </dev/null >"$work/$1.log" 2>&1 &
  pids+=($!) names+=("$1") probes+=("$probe")
}
# What a replica that did not become ready did: alive or its exit status, and its log.
show_webhooks() {
  local i
  for i in "${!pids[@]}"; do
    if kill -0 "${pids[i]}" 2>/dev/null; then
      echo "--- ${names[i]} (pid ${pids[i]}, running; /readyz?verbose:" >&2
      curl -s "http://127.0.0.1:${probes[i]}/readyz?verbose" >&2
      echo "--- its log:" >&2
    else
      wait "${pids[i]}" 2>/dev/null; echo "--- ${names[i]} (pid ${pids[i]}, exited $?):" >&2
    fi
    tail -n 40 "$work/${names[i]}.log" >&2
  done
}
stop_webhooks() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do ! kill -0 "$pid" 2>/dev/null || fail "trainer-webhook $pid did not stop"; done
  pids=() names=() probes=()
}
trap 'stop_webhooks; cleanup' EXIT
ready() { [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz") == 200 ]]; }
served() { # PORT: the certificate served there
  openssl s_client -connect "127.0.0.1:$1" </dev/null 2>/dev/null | openssl x509 2>/dev/null
}
secret_key() { testbed_kubectl -n kubeflow-system get secret kubeflow-trainer-webhook-cert -o "jsonpath={.data.$1}" | base64 -d; }
check_webhooks_trust() { # WHAT
  local want cfg ca
  want=$(secret_key 'ca\.crt' | base64 -w0)
  for cfg in mutatingwebhookconfiguration/defaulter validatingwebhookconfiguration/validator; do
    [[ $(testbed_kubectl get "$cfg.trainer.kubeflow.org" -o 'jsonpath={.webhooks[*].clientConfig.caBundle}' | wc -w) == \
       $(testbed_kubectl get "$cfg.trainer.kubeflow.org" -o 'jsonpath={.webhooks[*].name}' | wc -w) ]] ||
      fail "$1: $cfg: not every webhook has a caBundle"
    for ca in $(testbed_kubectl get "$cfg.trainer.kubeflow.org" -o 'jsonpath={.webhooks[*].clientConfig.caBundle}'); do
      [[ $ca == "$want" ]] || fail "$1: $cfg: caBundle is not the Secret's CA"
    done
  done
}

start_webhook trainer-webhook-a
testbed_wait_for "trainer-webhook (--cert-management) ready" 60 ready "$probe" ||
  { show_webhooks; fail "trainer-webhook --cert-management did not become ready as ServiceAccount trainer-webhook with deploy/'s RBAC"; }
for key in ca\\.crt ca\\.key tls\\.crt tls\\.key ca-bundle\\.crt; do
  [[ -n $(secret_key "$key") ]] || fail "Secret kubeflow-trainer-webhook-cert has no ${key//\\/}"
done
secret_key 'tls\.crt' >"$work/tls.crt"
secret_key 'ca\.crt' >"$work/ca.crt"
openssl verify -CAfile "$work/ca.crt" "$work/tls.crt" >/dev/null || fail "tls.crt is not signed by ca.crt"
openssl x509 -in "$work/tls.crt" -noout -ext subjectAltName | grep -q 'DNS:trainer-webhook.kubeflow-system.svc' ||
  fail "tls.crt is not for trainer-webhook.kubeflow-system.svc"
served "$port" | cmp -s - "$work/tls.crt" || fail "trainer-webhook does not serve the Secret's certificate"
check_webhooks_trust "first start"
# Its watches of the Secret and the configurations list and watch one object each by name
# (fieldSelector metadata.name), which the by-name RBAC allows: nothing was refused.
sleep 2
! grep -qi "forbidden" "$work/trainer-webhook-a.log" ||
  { grep -i forbidden "$work/trainer-webhook-a.log" >&2; fail "trainer-webhook was refused a request by deploy/'s RBAC"; }
stop_webhooks
start_webhook trainer-webhook-a
testbed_wait_for "trainer-webhook ready again" 60 ready "$probe" || { show_webhooks; fail "trainer-webhook did not restart"; }
secret_key 'tls\.crt' | cmp -s - "$work/tls.crt" || fail "a restart re-issued a valid certificate"
stop_webhooks
echo "ok: internal-cert: trainer-webhook issued the Secret, injected the CA, serves it, kept it across a restart"

# Two replicas starting together on an empty Secret: one pair wins, both serve it and caBundle is
# its CA (the 409 loser reads the Secret again instead of overwriting it).
testbed_kubectl -n kubeflow-system patch secret kubeflow-trainer-webhook-cert --type=json \
  -p '[{"op":"remove","path":"/data"}]' >/dev/null
start_webhook trainer-webhook-a
port_a=$port probe_a=$probe
start_webhook trainer-webhook-b
port_b=$port probe_b=$probe
testbed_wait_for "both replicas ready" 60 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$probe_a/readyz) == 200 && \$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$probe_b/readyz) == 200 ]]" ||
  { show_webhooks; fail "two replicas starting together did not both become ready"; }
secret_key 'tls\.crt' >"$work/tls2.crt"
for p in "$port_a" "$port_b"; do
  served "$p" | cmp -s - "$work/tls2.crt" || fail "a replica serves another certificate than the Secret's"
done
check_webhooks_trust "concurrent start"
stop_webhooks
trap cleanup EXIT
echo "ok: internal-cert: two replicas starting together agree on one CA"
echo "PASS"

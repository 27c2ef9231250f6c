#!/usr/bin/env bash
# In-cluster certificate management for trainer-webhook (deploy/components/internal-cert): run as
# an init container with the webhook's ServiceAccount. Keeps upstream's layout
# (pkg/util/cert/cert.go): Secret kubeflow-trainer-webhook-cert holds ca.crt, ca.key, tls.crt, tls.key; the CA
# "kubeflow-trainer-ca" (10 years) signs a serving cert (1 year) for <service>.<ns>.svc. A missing,
# invalid or soon-expiring (90 days) certificate is replaced; the CA is written into every webhook
# of the two configurations; the files are copied to $CERT_DIR for the webhook container.
# Renewal happens at pod start, so a restart within 9 months of issue keeps the webhook valid.
set -euo pipefail
SA=${SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}  # SA_DIR: tests only
NS=$(cat "$SA/namespace")
API="https://${KUBERNETES_SERVICE_HOST}:${KUBERNETES_SERVICE_PORT}"
SECRET=${SECRET_NAME:-kubeflow-trainer-webhook-cert}
SERVICE=${SERVICE_NAME:-trainer-webhook}
OUT=${CERT_DIR:-/certs}
DNS="$SERVICE.$NS.svc"
WORK=$(mktemp -d "$OUT/.work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

api() {
  curl -fsS --cacert "$SA/ca.crt" -H "Authorization: Bearer $(cat "$SA/token")" "$@"
}
b64() { base64 -w0 <"$1"; }

load() {
  api "$API/api/v1/namespaces/$NS/secrets/$SECRET" >"$WORK/secret.json"
  for k in ca.crt ca.key tls.crt tls.key; do
    jq -r --arg k "$k" '.data[$k] // ""' "$WORK/secret.json" | base64 -d >"$WORK/$k"
  done
}

valid() {
  [[ -s "$WORK/tls.crt" && -s "$WORK/ca.crt" && -s "$WORK/ca.key" && -s "$WORK/tls.key" ]] &&
    openssl x509 -in "$WORK/ca.crt" -noout -checkend $((90 * 86400)) >/dev/null &&
    openssl x509 -in "$WORK/tls.crt" -noout -checkend $((90 * 86400)) >/dev/null &&
    openssl verify -CAfile "$WORK/ca.crt" "$WORK/tls.crt" >/dev/null 2>&1 &&
    openssl x509 -in "$WORK/tls.crt" -noout -ext subjectAltName | grep -q "DNS:$DNS\b"
}

issue() {
  echo "cert-init: issuing a new CA and serving certificate for $DNS"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.crt" \
    -days 3650 -sha256 -subj "/O=kubeflow-trainer/CN=kubeflow-trainer-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -new -newkey rsa:2048 -nodes -keyout "$WORK/tls.key" -out "$WORK/tls.csr" \
    -subj "/O=kubeflow-trainer/CN=$DNS" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:%s\n' \
    "$DNS" >"$WORK/ext"
  openssl x509 -req -in "$WORK/tls.csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$WORK/ext" -out "$WORK/tls.crt" 2>/dev/null
}

# Optimistic concurrency: the patch carries the resourceVersion that was read, so of two replicas
# starting together only one writes its pair (the other gets 409 Conflict, reads the Secret again
# and uses that pair). Both then serve certificates of the one CA that goes into caBundle.
for attempt in 1 2 3 4 5; do
  load
  valid && break
  issue
  jq -n --arg rv "$(jq -r '.metadata.resourceVersion' "$WORK/secret.json")" \
    --arg a "$(b64 "$WORK/ca.crt")" --arg b "$(b64 "$WORK/ca.key")" \
    --arg c "$(b64 "$WORK/tls.crt")" --arg d "$(b64 "$WORK/tls.key")" \
    '{metadata: {resourceVersion: $rv}, data: {"ca.crt": $a, "ca.key": $b, "tls.crt": $c, "tls.key": $d}}' \
    >"$WORK/patch.json"
  if api -X PATCH -H "Content-Type: application/merge-patch+json" --data-binary @"$WORK/patch.json" \
    "$API/api/v1/namespaces/$NS/secrets/$SECRET" >/dev/null; then
    break
  fi
  echo "cert-init: the Secret changed while issuing (attempt $attempt); reading it again"
  ((attempt < 5)) || { echo "cert-init: could not write $SECRET" >&2; exit 1; }
done

# caBundle of every webhook in both configurations (JSON patch per index).
for kind in mutatingwebhookconfigurations/defaulter validatingwebhookconfigurations/validator; do
  url="$API/apis/admissionregistration.k8s.io/v1/${kind%%/*}/${kind#*/}.trainer.kubeflow.org"
  n=$(api "$url" | jq '.webhooks | length')
  jq -n --arg ca "$(b64 "$WORK/ca.crt")" --argjson n "$n" \
    '[range(0; $n) | {op: "add", path: "/webhooks/\(.)/clientConfig/caBundle", value: $ca}]' \
    >"$WORK/ca-patch.json"
  api -X PATCH -H "Content-Type: application/json-patch+json" --data-binary @"$WORK/ca-patch.json" \
    "$url" >/dev/null
done

install -m 0644 "$WORK/tls.crt" "$OUT/tls.crt"
install -m 0600 "$WORK/tls.key" "$OUT/tls.key"
install -m 0644 "$WORK/ca.crt" "$OUT/ca.crt"
echo "cert-init: serving certificate for $DNS ready in $OUT"

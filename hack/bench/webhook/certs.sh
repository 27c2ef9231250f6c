#!/usr/bin/env bash
# hack/bench/webhook/certs.sh DIR: a CA (DIR/ca.crt) and a serving certificate for 127.0.0.1 and
# localhost (DIR/tls.crt, DIR/tls.key), P-256 as cert-manager would issue, valid for a day: what
# the webhook benchmarks serve with.
set -euo pipefail
dir="$1"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench-ca \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=trainer-webhook \
  -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$dir/ext"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days 1 -extfile "$dir/ext" -out "$dir/tls.crt" 2>/dev/null

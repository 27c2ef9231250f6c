#!/usr/bin/env bash
# Rewrites hack/gen-crds/data/ from a running test bed: the Kubernetes OpenAPI v3 document of
# core/v1 as its kube-apiserver serves it, and JobSet's CRD from the test bed's build cache.
# Then regenerates deploy/crds/. Review the diff and commit data/ and deploy/crds/ together.
#
#   TESTBED_DIR=... hack/gen-crds/refresh-data.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source hack/testbed/lib.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
testbed_kubectl get --raw /openapi/v3/api/v1 >"$tmp/core-v1.json"
testbed_kubectl version -o json | python3 -c \
  'import json,sys; print("[refresh-data] kube-apiserver", json.load(sys.stdin)["serverVersion"]["gitVersion"])'
hack/gen-crds/gen-crds --refresh-k8s "$tmp/core-v1.json"
hack/testbed/build.sh jobset # JobSet's CRD comes with the JobSet controller build
hack/gen-crds/gen-crds --refresh-jobset "$(testbed_crd_dir)/jobset.yaml"
hack/gen-crds/gen-crds
hack/gen-crds/gen-crds --verify-k8s

# Helpers of the deploy/ tests, sourced after hack/testbed/lib.sh.
#
#   deploy_tree_with_local_jobset DIR   copies deploy/ to DIR/deploy (and links examples/ next
#                                       to it) with JobSet's release manifests taken from the Go
#                                       module instead of GitHub
#   standin_crd GROUP VERSION KIND PLURAL   prints a CRD that accepts any object of that kind:
#                                       stands in for cert-manager's and the Prometheus
#                                       Operator's CRDs, which the test bed does not run
#
# deploy/third-party/jobset names https://github.com/kubernetes-sigs/jobset/releases/download/
# v0.12.0/manifests.yaml, which this machine cannot download. JobSet's release process builds
# that file as `kustomize build config/default` of the sigs.k8s.io/jobset module at the release
# tag (its Makefile, target `artifacts`), and the module is in the test bed's Go module cache, so
# the tests build it the same way and point the copy's kustomization at the result. Everything
# else in the copy is deploy/ as committed, so commands run in DIR are the documented ones.

JOBSET_RELEASE=v0.12.0
JOBSET_MANIFESTS_URL="https://github.com/kubernetes-sigs/jobset/releases/download/$JOBSET_RELEASE/manifests.yaml"

# The directory of sigs.k8s.io/jobset@$JOBSET_RELEASE in the test bed's module cache (fetched
# through the Go module proxy if it is not there).
jobset_module_dir() {
  local cache
  cache="$(dirname "$("$TESTBED_ROOT/hack/testbed/build.sh" --print-dir)")/go/mod"
  (cd / && GOMODCACHE="$cache" GOFLAGS=-modcacherw GOTOOLCHAIN=local GOWORK=off \
    go mod download -json "sigs.k8s.io/jobset@$JOBSET_RELEASE") |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])'
}

deploy_tree_with_local_jobset() { # DIR
  local dir=$1 src
  src=$(jobset_module_dir) || return 1
  mkdir -p "$dir"
  rm -rf "$dir/deploy"
  cp -r "$TESTBED_ROOT/deploy" "$dir/deploy"
  ln -sfn "$TESTBED_ROOT/examples" "$dir/examples"
  "$(testbed_bin_dir)/kubectl" kustomize "$src/config/default" 2>/dev/null \
    >"$dir/deploy/third-party/jobset/manifests.yaml"
  grep -q "^kind: CustomResourceDefinition" "$dir/deploy/third-party/jobset/manifests.yaml" || {
    echo "could not build JobSet's manifests from $src/config/default" >&2
    return 1
  }
  local k="$dir/deploy/third-party/jobset/kustomization.yaml"
  grep -qF "$JOBSET_MANIFESTS_URL" "$k" || { echo "$k does not name $JOBSET_MANIFESTS_URL" >&2; return 1; }
  sed -i "s#$JOBSET_MANIFESTS_URL#manifests.yaml#" "$k"
}

standin_crd() { # GROUP VERSION KIND PLURAL
  cat <<YAML
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: $4.$1
  labels: {trainer-test: deploy-dry-run-standin}
spec:
  group: $1
  scope: Namespaced
  names: {kind: $3, plural: $4, singular: $(tr '[:upper:]' '[:lower:]' <<<"$3"), listKind: ${3}List}
  versions:
    - name: $2
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
YAML
}

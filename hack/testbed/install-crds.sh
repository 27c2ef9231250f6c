#!/usr/bin/env bash
# Applies the CRDs build.sh fetched to the running test bed and waits until they are Established:
#   jobset                      jobsets.jobset.x-k8s.io            (sigs.k8s.io/jobset)
#   scheduler-plugins-podgroups podgroups.scheduling.x-k8s.io      (sigs.k8s.io/scheduler-plugins)
#   volcano-podgroups           podgroups.scheduling.volcano.sh    (generated from volcano.sh/apis)
# Usage: hack/testbed/install-crds.sh [NAME...]   (default: all three)
# Server-side apply: the JobSet CRD is too large for client-side apply's last-applied annotation.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

names=("$@")
if ((${#names[@]} == 0)); then names=(jobset scheduler-plugins-podgroups volcano-podgroups); fi

components=()
for n in "${names[@]}"; do
  case "$n" in
    jobset) components+=(jobset) ;;
    scheduler-plugins-podgroups|volcano-podgroups) components+=(crds) ;;
    *) testbed_die "unknown CRD '$n' (want: jobset scheduler-plugins-podgroups volcano-podgroups)" ;;
  esac
done
"$TESTBED_ROOT/hack/testbed/build.sh" $(printf '%s\n' "${components[@]}" | sort -u)
CRD_DIR=$(testbed_crd_dir)

[[ -f "$TESTBED_DIR/kubeconfig" ]] || testbed_die "no test bed in $TESTBED_DIR (run hack/testbed/up.sh)"
files=()
for n in "${names[@]}"; do files+=(-f "$CRD_DIR/$n.yaml"); done
testbed_kubectl apply --server-side --force-conflicts --field-manager=testbed "${files[@]}" >/dev/null
for n in "${names[@]}"; do
  crd=$(sed -n 's/^  name: //p' "$CRD_DIR/$n.yaml" | head -n 1)
  testbed_wait_for "CRD $crd to be Established" 60 testbed_crd_established "$crd"
  testbed_wait_for "CRD $crd to be discoverable" 60 testbed_crd_discoverable "$crd"
  testbed_log "installed CRD $crd"
done

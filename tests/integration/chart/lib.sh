# Helpers of the chart's tests, sourced after hack/testbed/lib.sh and
# tests/integration/deploy/lib.sh.
#
#   HELM=$(chart_helm)                    Helm built by hack/tools/helm.sh (cached; progress on
#                                         a cold build)
#   chart_with_local_jobset DIR           copies charts/trainer-cpp to DIR/trainer-cpp with its
#                                         JobSet dependency in charts/jobset
#
# charts/trainer-cpp depends on JobSet's chart from oci://registry.k8s.io/jobset/charts, which
# `helm dependency build` downloads and this machine cannot reach. The sigs.k8s.io/jobset module
# at the same version carries the chart's source (charts/jobset, version 0.12.0, the source of
# what JobSet publishes), so the tests place that in the copy's charts/ instead.

chart_helm() { "$TESTBED_ROOT/hack/tools/helm.sh"; }

chart_with_local_jobset() { # DIR
  local dir=$1 src
  src=$(jobset_module_dir) || return 1
  mkdir -p "$dir"
  rm -rf "$dir/trainer-cpp"
  cp -r "$TESTBED_ROOT/charts/trainer-cpp" "$dir/trainer-cpp"
  mkdir -p "$dir/trainer-cpp/charts"
  cp -r "$src/charts/jobset" "$dir/trainer-cpp/charts/jobset"
  chmod -R u+w "$dir/trainer-cpp"
  grep -q '^version: 0.12.0$' "$dir/trainer-cpp/charts/jobset/Chart.yaml" || {
    echo "$src/charts/jobset is not JobSet's chart 0.12.0" >&2
    return 1
  }
}

#!/usr/bin/env bash
# Drives trainer-cpp with the official Python SDK: kubeflow==0.5.0 installed into a virtualenv
# under the cache ($TRAINER_SDK_VENV, default ~/.cache/trainer-sdk-venv; reused when present),
# against hack/run-local.sh in a state dir of its own ($TRAINER_BUILD_DIR/sdk-run). The checks are
# in trainer_client_test.py. Exit 77 (ctest: skipped) when the SDK cannot be installed.
#
#   sdk_test.sh                                      the local run as `hack/run-local.sh up`
#   sdk_test.sh --feature-gates=TrainJobStatus=true  the same with the gate (state dir sdk-run-gates)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$ROOT"
SDK_VERSION=0.5.0
venv=${TRAINER_SDK_VENV:-$HOME/.cache/trainer-sdk-venv}
up_args=("$@")
export TRAINER_LOCAL_DIR="${TRAINER_BUILD_DIR:?set by ctest}/sdk-run${1:+-gates}"
export TRAINER_BIN_DIR="${TRAINER_BIN_DIR:?set by ctest}"

installed() { "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('kubeflow') != '$SDK_VERSION')" 2>/dev/null; }
if ! installed; then
  echo "installing kubeflow==$SDK_VERSION into $venv"
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q "kubeflow==$SDK_VERSION"; } >"${TMPDIR:-/tmp}/sdk-install.$$.log" 2>&1; then
    tail -n 20 "${TMPDIR:-/tmp}/sdk-install.$$.log" >&2
    echo "SKIP: cannot install kubeflow==$SDK_VERSION from PyPI into $venv (log above)" >&2
    exit 77
  fi
fi

cleanup() { hack/run-local.sh down >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup # a leftover of an interrupted run
hack/run-local.sh up "${up_args[@]}"
source "$TRAINER_LOCAL_DIR/env"
"$venv/bin/python" "$ROOT/tests/integration/sdk/trainer_client_test.py"

#!/usr/bin/env bash
# The user guides' examples (docs/*.md) against a live local run of their own: `hack/run-local.sh
# up` in $TRAINER_BUILD_DIR/docs-local (JobSet controller, scheduler and KWOK included, so
# TrainJobs reach Complete), tests/docs/docs_test.py over every guide, `down`. Arguments are passed
# to docs_test.py (e.g. a subset of files, --keep-going).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export TRAINER_LOCAL_DIR="${TRAINER_BUILD_DIR:?set by ctest}/docs-local"
export TRAINER_BIN_DIR="${TRAINER_BIN_DIR:?set by ctest}"
cd "$ROOT"
cleanup() { hack/run-local.sh down >/dev/null 2>&1 || true; }
trap cleanup EXIT
hack/run-local.sh down >/dev/null 2>&1 || true # a leftover of an interrupted run
hack/run-local.sh up
python3 tests/docs/docs_test.py --local-dir "$TRAINER_LOCAL_DIR" "$@"

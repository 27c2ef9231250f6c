#!/usr/bin/env bash
# Fixture setup for ctest's integration tier: (re)starts the test bed in $TESTBED_DIR, a
# directory of the build tree that belongs to ctest alone, so a test bed an interrupted earlier
# run left behind is stopped first rather than refused.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
: "${TESTBED_DIR:?TESTBED_DIR must be set (ctest sets it to <build>/testbed)}"
"$root/hack/testbed/down.sh" >/dev/null
exec "$root/hack/testbed/up.sh" --install-crds

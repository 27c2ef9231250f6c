#!/usr/bin/env bash
# Reports on the test bed in $TESTBED_DIR (default <repo>/.local/testbed): each recorded process
# (running or dead), the apiserver URL and its /readyz. Exit status: 0 if every recorded process
# runs and the apiserver is ready, 1 otherwise (3 if there is no test bed at all).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ ! -f "$TESTBED_DIR/.testbed" ]]; then
  echo "no test bed in $TESTBED_DIR"
  exit 3
fi
ok=0
echo "test bed: $TESTBED_DIR"
for f in "$TESTBED_DIR"/pids/*; do
  [[ -f "$f" ]] || continue
  name=$(basename "$f")
  read -r pid _ <"$f" || true
  if testbed_pid_alive "$name"; then
    printf '  %-24s running (pid %s)\n' "$name" "$pid"
  else
    printf '  %-24s NOT RUNNING (pid %s; see %s)\n' "$name" "$pid" "$TESTBED_DIR/logs/$name.log"
    ok=1
  fi
done
if [[ -f "$TESTBED_DIR/kubeconfig" ]]; then
  url=$(testbed_apiserver_url)
  if ready=$(testbed_kubectl get --raw /readyz 2>/dev/null); then
    echo "  apiserver $url: readyz $ready"
  else
    echo "  apiserver $url: not ready"
    ok=1
  fi
  echo "export KUBECONFIG=$TESTBED_DIR/kubeconfig"
else
  echo "  no kubeconfig yet (start-up incomplete or failed)"
  ok=1
fi
exit "$ok"

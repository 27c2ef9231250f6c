#!/usr/bin/env bash
# testbed_free_port never hands out one port twice in a bed, even when the kernel offers it
# again: run-local once gave the webhook's and the controller's health servers the same port.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source hack/testbed/lib.sh

TESTBED_DIR=$(mktemp -d)
trap 'rm -rf "$TESTBED_DIR"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The kernel offers recently closed ports again; 100 picks exercise that.
for _ in $(seq 100); do testbed_free_port; done >"$TESTBED_DIR/picked"
dups=$(sort "$TESTBED_DIR/picked" | uniq -d)
[[ -z $dups ]] || fail "ports handed out twice: $dups"
cmp -s <(sort "$TESTBED_DIR/picked") <(sort "$TESTBED_DIR/ports") || fail "the ledger differs from the ports handed out"

# A port on the ledger is refused even when nothing listens on it.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "$port" >>"$TESTBED_DIR/ports"
for _ in $(seq 20); do
  [[ $(testbed_free_port) != "$port" ]] || fail "port $port is on the ledger and was handed out"
done

# The fallback without python3 keeps the ledger too.
fallback=$(PATH=/nonexistent; testbed_free_port)
grep -qx "$fallback" "$TESTBED_DIR/ports" || fail "the bash fallback did not record $fallback"

# Outside a bed directory there is no ledger and nothing is written.
[[ $(TESTBED_DIR="" testbed_free_port) =~ ^[0-9]+$ ]] || fail "no port without a bed directory"
echo "PASS"

#!/usr/bin/env bash
# Fixture cleanup of the e2e tier: hack/testbed/down.sh, then a check that the real node left
# nothing on the host: no bridge, no iptables chain or nftables table of its own or of
# kubelet/kube-proxy, no cgroup, no record, no fixed path it created, no process of its parts.
set -euo pipefail
cd "$(dirname "$0")/../.."
hack/testbed/down.sh
(($(id -u) == 0)) || exit 0 # nothing was started (the tier skipped)
left=()
ip link show trainer0 >/dev/null 2>&1 && left+=("interface trainer0")
for f in iptables ip6tables; do
  chains=$("$f-save" 2>/dev/null | grep -o '^:\(KUBE\|TESTBED\)-[^ ]*' | tr '\n' ' ' || true)
  [[ -z "$chains" ]] || left+=("$f chains $chains")
done
[[ -e /run/trainer-testbed-node ]] && left+=("/run/trainer-testbed-node")
for h in $(awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/mounts); do
  [[ -d "$h/trainer-testbed" ]] && left+=("cgroup $h/trainer-testbed")
done
grep -q " $TESTBED_DIR/" /proc/self/mounts && left+=("mounts under $TESTBED_DIR")
pgrep -f -- "$TESTBED_DIR/node" >/dev/null && left+=("processes of the node")
if ((${#left[@]})); then
  printf 'e2e_down: the node left on the host: %s\n' "${left[@]}" >&2
  exit 1
fi
echo "e2e_down: the host is as the node found it (no bridge, chains, cgroups, mounts, processes)"

#!/usr/bin/env bash
# Kills the test bed's kube-apiserver and starts it again with the same command line (same port,
# certificates and etcd), then waits for /readyz. For tests of clients that must survive an
# apiserver restart (watches reconnecting from their last resourceVersion, informers converging).
#
# Usage: hack/testbed/restart-apiserver.sh [--signal KILL|TERM] [--down-seconds N] [--set-flag F=V]...
#   --signal        how to stop it (default KILL: connections die without a goodbye)
#   --down-seconds  how long to stay down before starting again (default 2)
#   --set-flag      start it again with --F=V instead of any --F=... it had (repeatable), e.g.
#                   --set-flag enable-aggregator-routing=true
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

signal=KILL down=2 set_flags=()
while (($#)); do
  case "$1" in
    --signal) signal=$2; shift ;;
    --down-seconds) down=$2; shift ;;
    --set-flag) set_flags+=("$2"); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) testbed_die "unknown argument '$1' (see $0 --help)" ;;
  esac
  shift
done

testbed_pid_alive kube-apiserver || testbed_die "kube-apiserver of $TESTBED_DIR is not running"
read -r pid exe <"$TESTBED_DIR/pids/kube-apiserver"
mapfile -d '' cmdline <"/proc/$pid/cmdline"
args=("${cmdline[@]:1}")
for f in "${set_flags[@]}"; do
  kept=()
  for a in "${args[@]}"; do [[ "$a" == "--${f%%=*}="* ]] || kept+=("$a"); done
  args=("${kept[@]}" "--$f")
done

kill "-$signal" "$pid"
testbed_wait_for "kube-apiserver (pid $pid) to exit" 30 bash -c "! kill -0 $pid 2>/dev/null"
testbed_log "kube-apiserver stopped (SIG$signal); starting again in ${down}s"
sleep "$down"
testbed_start kube-apiserver "$exe" "${args[@]}"
PKI="$TESTBED_DIR/pki"
url=$(testbed_apiserver_url)
testbed_wait_for "kube-apiserver /readyz on $url" 60 \
  curl -fsS --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$url/readyz"
testbed_log "kube-apiserver ready again on $url"

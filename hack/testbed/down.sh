#!/usr/bin/env bash
# Stops the test bed in $TESTBED_DIR (default <repo>/.local/testbed) and removes the directory.
# Only the processes up.sh recorded in $TESTBED_DIR/pids/ are signalled, by pid (TERM, then KILL
# after 10 s), and only after checking that each pid still runs the executable we started.
# Safe to run twice, or on a directory whose processes already died.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ ! -e "$TESTBED_DIR" ]]; then
  testbed_log "nothing to stop: $TESTBED_DIR does not exist"
  exit 0
fi
if [[ ! -f "$TESTBED_DIR/.testbed" ]]; then
  testbed_die "$TESTBED_DIR is not a test bed directory (no .testbed marker); not touching it"
fi
live=$(testbed_live_processes | tr '\n' ' ')
if [[ -n "$live" ]]; then
  testbed_log "stopping ${live% }"
fi
testbed_stop_all
rm -rf "$TESTBED_DIR"
testbed_log "stopped; removed $TESTBED_DIR"

#!/usr/bin/env bash
# Runs one golden case of trainer-render and diffs its output against the case's want files.
#
#   tests/golden/run.sh BIN CASE_DIR            # check
#   tests/golden/run.sh BIN CASE_DIR --update   # rewrite the want files
#
# A case directory holds `args` (the trainer-render flags, one line; file names are relative to
# the case directory), its input files, optionally `stdin` (fed to trainer-render's standard
# input, for `-f -`; else /dev/null), and:
#   want.yaml    expected stdout
#   want.stderr  expected stderr (absent = empty)
#   want.exit    expected exit code (absent = 0)
set -uo pipefail
bin="$1"
dir="$2"
mode="${3:-check}"

cd "$dir" || exit 1
read -r -a args < args
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
stdin=/dev/null
[[ -f stdin ]] && stdin=stdin
"$bin" "${args[@]}" <"$stdin" >"$tmp/out" 2>"$tmp/err"
echo "$?" >"$tmp/exit"

if [[ "$mode" == "--update" ]]; then
  cp "$tmp/out" want.yaml
  if [[ -s "$tmp/err" ]]; then cp "$tmp/err" want.stderr; else rm -f want.stderr; fi
  if [[ "$(cat "$tmp/exit")" != 0 ]]; then cp "$tmp/exit" want.exit; else rm -f want.exit; fi
  exit 0
fi

status=0
[[ -f want.stderr ]] || : >"$tmp/want.stderr.empty"
want_err="want.stderr"; [[ -f want.stderr ]] || want_err="$tmp/want.stderr.empty"
want_exit=0; [[ -f want.exit ]] && want_exit="$(cat want.exit)"
if ! diff -u want.yaml "$tmp/out"; then
  echo "golden $(basename "$dir"): stdout differs (hack/update-goldens.sh rewrites; review the diff)"
  status=1
fi
if ! diff -u "$want_err" "$tmp/err"; then
  echo "golden $(basename "$dir"): stderr differs"
  status=1
fi
if [[ "$(cat "$tmp/exit")" != "$want_exit" ]]; then
  echo "golden $(basename "$dir"): exit code $(cat "$tmp/exit"), want $want_exit"
  status=1
fi
exit "$status"

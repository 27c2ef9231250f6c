# Sourced by the callgrind scripts of this directory (callgrind.sh, parse_cost.sh,
# server_cost.sh).

# top_functions <callgrind.out> <N>: the N functions with the most inclusive instructions, then
# the N with the most self instructions.
top_functions() {
  local flag
  for flag in --inclusive=yes --inclusive=no; do
    callgrind_annotate "$flag" "$1" 2>/dev/null | first_rows "$2"
    echo
  done
}

# first_rows <N>: the first N function rows of a callgrind_annotate or cg_annotate table on
# stdin (they follow the "file:function" heading and its rule).
first_rows() {
  awk -v n="$1" 'rows && /^-+$/ {next} rows && n-- > 0 {print} /file:function/ {rows = 1}'
}

# callgrind_options "$@", after setting `root`, `exe` (a binary's name under --bin) and
# optionally `default_count` (2000 unless set): the
# options callgrind.sh and parse_cost.sh share (--bin DIR --count N --top N --keep DIR), the
# checks that valgrind and the binary exist, and the work directory (removed at exit unless
# --keep names it). Sets bin, count, top, keep, exe (now a path) and work.
callgrind_options() {
  bin="$root/build/bin"
  count="${default_count:-2000}"
  top=0
  keep=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --bin) bin="$2"; shift 2 ;;
      --count) count="$2"; shift 2 ;;
      --top) top="$2"; shift 2 ;;
      --keep) keep="$2"; shift 2 ;;
      *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
  done
  command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
  [[ -x "$bin/$exe" ]] || { echo "no $bin/$exe (build $exe)" >&2; exit 2; }
  exe="$bin/$exe"
  work="${keep:-$(mktemp -d "/tmp/$(basename "$exe").XXXXXX")}"
  mkdir -p "$work"
  [[ -n "$keep" ]] || trap 'rm -rf "$work"' EXIT
}

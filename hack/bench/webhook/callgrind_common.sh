# Sourced by callgrind.sh and parse_cost.sh, after they set `root` and `exe`: their shared
# options (--bin DIR --count N --top N --keep DIR), the checks that valgrind and `exe` (a name
# under --bin) exist, and the work directory (removed at exit unless --keep names it). Sets bin,
# count, top, keep, exe (now a path) and work.
bin="$root/build/bin"
count=2000
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

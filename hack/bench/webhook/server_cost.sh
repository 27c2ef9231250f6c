#!/usr/bin/env bash
# The whole server's cost per admission request on one keep-alive TLS connection: instructions
# (callgrind) and system calls (strace -c), load-independent measures for comparing two builds on a
# busy machine. Unlike callgrind.sh (the handler alone), this counts everything the connection's
# thread does: OpenSSL records, httplib's request parsing, our connection loop, the handler and
# the response writing.
#
#   hack/bench/webhook/server_cost.sh [--bin build/bin] [--server webhook|null] [--count 2000]
#                                     [--path validate|mutate] [--tool callgrind|strace|both]
#                                     [--apiserver]
#                                     [--top 25] [--keep DIR]
# --server null measures trainer-bench-null-webhook (hack/bench/admission/null_webhook.cc), a
# do-nothing handler on the same http::Server: the transport's share. Each measure is the
# difference of two runs (a few requests, then as many more `count`), divided by `count`, so the
# server's start, the TLS handshake and the exit cancel out. Callgrind counts only inside the
# connection's thread (httplib's process_and_close_socket), so timers elsewhere do not add noise.
# Prints "<server> <path>: N instructions per request, M in ConnServer::Answer" (common/http/
# server.cc: a request's parsing, handler and response, encrypted and written; not in it: reading
# and decrypting the request, and destroying it after the answer left, while the client reads)
# and the system calls per request by name. --apiserver sends what the kube-apiserver sends instead
# of wrk's request: the AdmissionReviews it sent for the admission benchmark's TrainJob (recorded
# by hack/bench/admission/answers.py into hack/bench/admission/testdata; managedFields, options,
# userInfo.extra ...), at PATH?timeout=10s with its headers (Accept-Encoding: gzip).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
source "$here/callgrind_common.sh"
bin="$root/build/bin"
server=webhook
count=2000
paths=(validate mutate)
tool=both
apiserver=0
top=0
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --server) server="$2"; shift 2 ;;
    --count) count="$2"; shift 2 ;;
    --path) paths=("$2"); shift 2 ;;
    --apiserver) apiserver=1; shift ;;
    --tool) tool="$2"; shift 2 ;;
    --top) top="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$server" in
  webhook) exe="$bin/trainer-webhook" ;;
  null) exe="$bin/trainer-bench-null-webhook" ;;
  *) echo "--server is webhook or null" >&2; exit 2 ;;
esac
[[ -x "$exe" ]] || { echo "no $exe (build it first)" >&2; exit 2; }
for t in valgrind strace; do
  command -v "$t" >/dev/null || { echo "$t is not installed" >&2; exit 2; }
done

work="${keep:-$(mktemp -d /tmp/webhook-cost.XXXXXX)}"
mkdir -p "$work"
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  [[ -n "$keep" ]] || rm -rf "$work"
}
trap cleanup EXIT

"$here/certs.sh" "$work"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# measure <wrapper...> -- <requests> <path> <port>: runs the server under the wrapper, sends the
# requests on one connection, stops the server (SIGTERM) and waits for the wrapper's output.
measure() {
  local wrapper=()
  while [[ "$1" != "--" ]]; do wrapper+=("$1"); shift; done
  shift
  local requests="$1" path="$2" port="$3" cmd
  if [[ "$server" == webhook ]]; then
    cmd=("$exe" --port="$port" --cert-dir="$work" --metrics-bind-address=0
      --health-probe-bind-address=0 --offline-runtimes="$root/examples/runtimes/torch-distributed.yaml")
  else
    cmd=("$exe" --cert-dir "$work" --port "$port")
  fi
  "${wrapper[@]}" "${cmd[@]}" >"$work/server.log" 2>&1 &
  pid=$!
  local ready=0
  for _ in $(seq 600); do
    if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null; then
      ready=1
      break
    fi
    sleep 0.1
  done
  ((ready)) || { cat "$work/server.log" >&2; exit 1; }
  local body="$here/trainjob-create.json" as=()
  if ((apiserver)); then
    body="$root/hack/bench/admission/testdata/apiserver-$path.json"
    as=(--apiserver)
  fi
  python3 "$here/keepalive_client.py" --port "$port" --cafile "$work/ca.crt" \
    --path "/$path-trainer-kubeflow-org-v1alpha1-trainjob" --body "$body" \
    --count "$requests" "${as[@]}"
  # strace passes no signal on: stop the server itself, its child.
  local target="$pid"
  [[ "${wrapper[0]}" != strace ]] || target=$(pgrep -P "$pid" | head -1)
  kill -TERM "$target"
  wait "$pid" || true
  pid=""
}

base=20
for path in "${paths[@]}"; do
  if [[ "$tool" == callgrind || "$tool" == both ]]; then
    totals=()
    answers=()
    for n in "$base" $((base + count)); do
      out="$work/callgrind.out.$server.$path.$n"
      measure valgrind --tool=callgrind --callgrind-out-file="$out" \
        --toggle-collect='*process_and_close_socket*' -- "$n" "$path" "$(free_port)"
      totals+=("$(callgrind_annotate "$out" 2>/dev/null |
        awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')")
      answers+=("$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
        awk '/ConnServer::Answer\(/ && !done {gsub(",", "", $1); print $1; done = 1}')")
    done
    echo "$server $path: $(((totals[1] - totals[0]) / count)) instructions per request," \
      "$(((${answers[1]:-0} - ${answers[0]:-0}) / count)) in ConnServer::Answer ($count requests)"
    if ((top > 0)); then
      out="$work/callgrind.out.$server.$path.$((base + count))"
      top_functions "$out" "$top"
    fi
  fi
  if [[ "$tool" == strace || "$tool" == both ]]; then
    for n in "$base" $((base + count)); do
      measure strace -f -c -o "$work/strace.$server.$path.$n" -- "$n" "$path" "$(free_port)"
    done
    # strace -c rows: % time, seconds, usecs/call, calls, [errors], syscall.
    python3 - "$work/strace.$server.$path.$base" "$work/strace.$server.$path.$((base + count))" \
      "$count" "$server $path" <<'PY'
import sys
def calls(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and f[3].isdigit() and f[-1] != "total":
            out[f[-1]] = int(f[3])
    return out
a, b, n, label = calls(sys.argv[1]), calls(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
per = {k: (b.get(k, 0) - a.get(k, 0)) / n for k in set(a) | set(b)}
per = {k: v for k, v in per.items() if abs(v) >= 0.005}
total = sum(per.values())
print(f"{label}: {total:.2f} system calls per request: " +
      ", ".join(f"{k} {v:.2f}" for k, v in sorted(per.items(), key=lambda kv: -kv[1])))
PY
  fi
done

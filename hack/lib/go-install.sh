# go_install_cached: build one Go command at a pinned version through the Go module proxy into a
# cache under ~/.cache, once. Sourced by hack/tools/helm.sh and hack/bench/webhook/upstream.sh.
#
#   source hack/lib/go-install.sh
#   bin=$(go_install_cached DIR CMD_PACKAGE@VERSION STAMP [LDFLAGS])   # prints DIR/bin/<command>
#
# DIR holds bin/, the stamp (STAMP must match for a cached binary to count), build.log, and the
# Go module and build caches (gopath/, gocache/), so a second call returns at once. Works only
# for modules without replace directives (`go install pkg@version`; see hack/testbed/build.sh
# for the rest). Concurrent callers of one DIR wait on a lock instead of building twice. A cold
# build prints a heartbeat every 30 s to stderr, so CI logs show it is alive.

go_install_cached() { # DIR PKG@VERSION STAMP [LDFLAGS]
  local dir=$1 target=$2 want=$3 ldflags="-s -w ${4:-}"
  local bin="$dir/bin/$(basename "${target%@*}")"
  if [[ -x "$bin" && -f "$dir/stamp" && "$(cat "$dir/stamp")" == "$want" ]]; then
    echo "$bin"
    return 0
  fi
  command -v go >/dev/null || { echo "go_install_cached: go is not on PATH" >&2; return 2; }
  mkdir -p "$dir"
  (
    exec 9>"$dir/.lock"
    flock 9
    if [[ -x "$bin" && -f "$dir/stamp" && "$(cat "$dir/stamp")" == "$want" ]]; then exit 0; fi
    rm -f "$dir/stamp"
    echo "building $target (cached afterwards in $dir; log: $dir/build.log)" >&2
    local start=$SECONDS
    GOPATH="$dir/gopath" GOCACHE="$dir/gocache" GOBIN="$dir/bin" GOFLAGS="-modcacherw -buildvcs=false" \
      GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off \
      go install -p 2 -trimpath -ldflags="$ldflags" "$target" >"$dir/build.log" 2>&1 &
    local pid=$!
    while ! wait_or_timeout "$pid" 30; do
      echo "  ... still building $(basename "${target%@*}") ($((SECONDS - start))s)" >&2
    done
    if ! wait "$pid"; then
      tail -n 20 "$dir/build.log" >&2
      echo "go_install_cached: building $target failed (full log: $dir/build.log)" >&2
      exit 1
    fi
    echo "$want" >"$dir/stamp"
    echo "built $target in $((SECONDS - start))s" >&2
  ) || return 1
  echo "$bin"
}

# wait_or_timeout PID SECONDS: succeeds once PID has exited, fails if it still runs after SECONDS.
wait_or_timeout() {
  local pid=$1 i
  for ((i = 0; i < $2; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 1
  done
  ! kill -0 "$pid" 2>/dev/null
}

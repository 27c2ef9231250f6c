#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ (clang, ASan + UBSan, in build-fuzz/) and runs each
# for SECONDS (default 60) over a copy of its seed corpus. A crash or property violation is
# minimized and saved as tests/fuzz/crashes/<target>/<name> next to <name>.cmd, the command that
# reproduces it; the script then exits non-zero. A saved crash is replayed by the unit test
# fuzz_replay_<target> in every build, so once fixed it stays a regression test.
#
#   hack/fuzz.sh            # every target, 60 s each
#   hack/fuzz.sh 5          # a CI smoke run
#   TARGETS="quantity yaml_to_json" hack/fuzz.sh 300
#   JOBS=1 (build parallelism, default 2)  BUILD_DIR=build-fuzz
#   FUZZ_SEED=1 hack/fuzz.sh 10   # fixed libFuzzer seed (default: random), as CI runs it
#
# Clang warns in places gcc does not; the library code is built with -Wno-error here (warnings
# still print) so that a fuzzing run is not blocked by a warning the gcc CI does not raise.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
seed="${FUZZ_SEED:-0}"  # 0: libFuzzer picks one (printed in each target's log)
build_dir="${BUILD_DIR:-build-fuzz}"
jobs="${JOBS:-2}"
targets=(${TARGETS:-admission_review yaml_to_json api_decode quantity json_patch watch_decoder kubeconfig jobset_status status_request jwt_parse})

step() { echo "[fuzz.sh $(date +%H:%M:%S)] $*"; }

if ! command -v clang++ >/dev/null; then
  echo "hack/fuzz.sh: clang++ is required (apt-get install clang libclang-rt-dev)" >&2
  exit 1
fi

step "configuring ${build_dir}"
# UBSan checks stay recoverable so tests/fuzz/ubsan.supp can silence RapidJSON's own undefined
# behaviour (see there; its clz(0) cannot be suppressed, so the builtin check is off);
# halt_on_error below still stops on any report that is not suppressed.
sanitize="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=builtin -fno-omit-frame-pointer"
generator=()
if command -v ninja >/dev/null && [[ ! -f "${build_dir}/CMakeCache.txt" ]]; then generator=(-G Ninja); fi
CC=clang CXX=clang++ cmake -S . -B "${build_dir}" "${generator[@]}" -DTRAINER_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="${sanitize}" -DCMAKE_CXX_FLAGS="${sanitize}" \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$PWD/hack/fuzz-no-werror.sh" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null

step "building ${targets[*]} (-j${jobs})"
nice cmake --build "${build_dir}" -j"${jobs}" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$PWD/tests/fuzz/ubsan.supp}"
failed=()
for t in "${targets[@]}"; do
  bin="${build_dir}/bin/fuzz_${t}"
  work="${build_dir}/fuzz-work/${t}"
  rm -rf "${work}" && mkdir -p "${work}/corpus" "${work}/artifacts"
  cp tests/fuzz/corpus/"${t}"/* "${work}/corpus/"
  step "fuzzing ${t} for ${seconds}s"
  extra=()
  # The webhook logs every denial to stderr; close it (libFuzzer keeps its own reports). The
  # replay test shows a violated property's message: see the .cmd file of a saved input.
  if [[ "${t}" == admission_review ]]; then extra+=(-close_fd_mask=2); fi
  # -timeout: one input taking longer than 10 s is a hang worth a report.
  if nice "${bin}" -seed="${seed}" -max_total_time="${seconds}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 "${extra[@]}" -artifact_prefix="${work}/artifacts/" "${work}/corpus" \
       >"${work}/log" 2>&1; then
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)" "${work}/log" | tr '\n' ' '
    echo
    continue
  fi
  failed+=("${t}")
  tail -n 40 "${work}/log"
  for a in "${work}"/artifacts/*; do
    [[ -f "${a}" ]] || continue
    name="$(basename "${a}")"
    min="${work}/artifacts/min-${name}"
    # Minimize (best effort; a property violation minimizes like a crash).
    nice "${bin}" -minimize_crash=1 -max_total_time=30 -exact_artifact_path="${min}" "${a}" \
      >"${work}/minimize.log" 2>&1 || true
    [[ -s "${min}" ]] || cp "${a}" "${min}"
    mkdir -p "tests/fuzz/crashes/${t}"
    cp "${min}" "tests/fuzz/crashes/${t}/${name}"
    echo "${bin} tests/fuzz/crashes/${t}/${name}   # or: build/tests/fuzz_${t}_replay tests/fuzz/crashes/${t}/${name}" \
      >"tests/fuzz/crashes/${t}/${name}.cmd"
    step "saved tests/fuzz/crashes/${t}/${name} (reproduce: $(cat "tests/fuzz/crashes/${t}/${name}.cmd"))"
  done
done

if ((${#failed[@]})); then
  echo "hack/fuzz.sh: crashes in: ${failed[*]}" >&2
  exit 1
fi
step "no crashes"

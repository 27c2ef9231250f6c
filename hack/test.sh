#!/usr/bin/env bash
# Runs every test tier of trainer-cpp: unit, golden and integration (the integration tier
# brings up the real control plane of hack/testbed once per run). This is what CI runs.
#
#   hack/test.sh                 # everything (a cold machine: deps, test bed build, C++ build)
#   hack/test.sh -L unit         # only a label (unit | golden | integration); extra args go to ctest
#   hack/test.sh --sanitize      # ASan + UBSan build in build-asan/
#   hack/test.sh --tsan          # ThreadSanitizer build in build-tsan/ (unit tier)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
cmake_flags=()
ctest_args=()
while (($#)); do
  case "$1" in
    --sanitize) build_dir=build-asan; cmake_flags+=(-DTRAINER_SANITIZE=ON) ;;
    --tsan) build_dir=build-tsan; cmake_flags+=(-DTRAINER_TSAN=ON); ctest_args+=(-L unit) ;;
    *) ctest_args+=("$1") ;;
  esac
  shift
done

step() { echo "[test.sh $(date +%H:%M:%S)] $*"; }

step "installing missing Debian packages"
hack/install-deps.sh

step "configuring ${build_dir}"
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
if [[ ! -f "${build_dir}/CMakeCache.txt" ]]; then
  cmake -S . -B "${build_dir}" "${generator[@]}" "${cmake_flags[@]}" >/dev/null
else
  cmake -S . -B "${build_dir}" "${cmake_flags[@]}" >/dev/null
fi

step "building C++ (-j2)"
cmake --build "${build_dir}" -j2

# The integration tier needs the test bed's binaries. Building them here (cached under
# ~/.cache/trainer-testbed; ~10 min cold on idle cores) prints progress to the log instead of
# running silently inside the ctest fixture's timeout.
if [[ " ${ctest_args[*]:-} " != *" -L unit "* && " ${ctest_args[*]:-} " != *" -L golden "* ]]; then
  if ! command -v go >/dev/null; then
    echo "hack/test.sh: the integration tier builds the test bed with Go; install Go 1.26 or run 'hack/test.sh -L unit'" >&2
    exit 1
  fi
  step "building the test bed (cached after the first run)"
  hack/testbed/build.sh
fi

step "running tests"
cd "${build_dir}"
# Integration tests share one test bed (a CTest fixture); run tiers serially so the two cores go
# to the apiserver and the services under test rather than to competing test binaries.
ctest --output-on-failure --timeout 1800 "${ctest_args[@]}"

#!/usr/bin/env bash
# Runs every test tier of trainer-cpp: unit, golden, integration (the integration tier brings up
# the real control plane of hack/testbed once per run) and e2e (the images of hack/images on a
# real node; needs root). This is what CI runs.
#
#   hack/test.sh                 # everything (a cold machine: deps, test bed build, C++ build)
#   hack/test.sh -L unit         # only a label (unit | golden | integration | e2e); extra args go to ctest
#   hack/test.sh --sanitize      # ASan + UBSan + LSan build in build-asan/, every tier (see below)
#   hack/test.sh --tsan          # ThreadSanitizer build in build-tsan/ (unit tier)
#   BUILD_DIR=build-mine hack/test.sh --sanitize   # any of the above in another build directory
#   FUZZ_SECONDS=0 hack/test.sh  # skip the fuzzing smoke run (default: 10 s per fuzz target)
#
# --sanitize: the services the integration tests start from $TRAINER_BIN_DIR (trainer-webhook,
# trainer-controller, trainer-render, ...) are that build's, so they run with ASan, UBSan and
# LeakSanitizer too. Every instrumented process writes its reports to a file under
# <build>/sanitizer-reports/ (ASAN_OPTIONS/UBSAN_OPTIONS log_path, named report.<exe>.<pid>)
# rather than to stderr: the services' stderr goes to logs the tests delete, and LSan's report is
# only written when a service exits (the tests stop them with SIGTERM; both exit through main).
# A report fails the run: the files are printed after ctest and the script exits 1. The same
# report also makes that process exit 86 (exitcode=86), so a test that checks a service's exit
# status after SIGTERM, or a unit test binary, fails by itself too.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
cmake_flags=()
ctest_args=()
sanitize=0
while (($#)); do
  case "$1" in
    # The e2e tier tests the Release images, not this build: nothing to sanitize there.
    --sanitize) build_dir=build-asan; cmake_flags+=(-DTRAINER_SANITIZE=ON); sanitize=1; ctest_args+=(-LE e2e) ;;
    --tsan) build_dir=build-tsan; cmake_flags+=(-DTRAINER_TSAN=ON); ctest_args+=(-L unit) ;;
    *) ctest_args+=("$1") ;;
  esac
  shift
done
build_dir=${BUILD_DIR:-$build_dir}

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
  # The chart's tests run Helm (tests/integration/chart); ~3 min cold, cached under ~/.cache.
  step "building Helm (cached after the first run)"
  hack/tools/helm.sh >/dev/null
  # Upstream's manager v2.3.0 for the migration test (tests/integration/migration); ~8 min cold.
  step "building upstream Kubeflow Trainer's manager (cached after the first run)"
  hack/bench/webhook/upstream.sh >/dev/null
fi

# The e2e tier's images (hack/images/build.sh: a Release build of the services, Debian images
# with python3-torch and OpenMPI; cached under ~/.cache/trainer-images, minutes cold). Built here
# so their progress shows in the log; the e2e tests then find them cached.
if [[ " ${ctest_args[*]:-} " != *" -L "* || " ${ctest_args[*]:-} " == *" -L e2e "* ]] && ((sanitize == 0)); then
  if (($(id -u) == 0)); then
    step "building the e2e tier's images (cached after the first run)"
    images_start=$SECONDS
    hack/images/build.sh
    step "images ready in $((SECONDS - images_start))s"
  else
    step "not building the e2e tier's images: it needs root (its tests will say they skipped)"
  fi
fi

if ((sanitize)); then
  reports="$PWD/${build_dir}/sanitizer-reports"
  rm -rf "$reports" && mkdir -p "$reports"
  san_common="log_path=$reports/report:log_exe_name=1:print_stacktrace=1:halt_on_error=1"
  export ASAN_OPTIONS="$san_common:detect_leaks=1:exitcode=86"
  export UBSAN_OPTIONS="$san_common"
fi

step "running tests"
cd "${build_dir}"
# Integration tests share one test bed (a CTest fixture); run tiers serially so the two cores go
# to the apiserver and the services under test rather than to competing test binaries.
rc=0
ctest --output-on-failure --timeout 1800 "${ctest_args[@]}" || rc=$?
if ((sanitize)) && [[ -n "$(ls -A "$reports")" ]]; then
  for f in "$reports"/*; do
    echo "=== sanitizer report ${f#"$reports"/} (report.<executable>.<pid>)"
    cat "$f"
  done
  echo "hack/test.sh: $(ls "$reports" | wc -l) sanitizer report(s) in $reports" >&2
  rc=1
fi

# A full run also fuzzes every tests/fuzz target briefly (hack/fuzz.sh: clang ASan + UBSan build
# in build-fuzz/, FUZZ_SECONDS each over the seed corpus); a crash fails the run and is saved
# under tests/fuzz/crashes/ with the command that reproduces it. The seed is fixed (FUZZ_SEED,
# default 1) so that a red run is the change's doing and reproduces; searching with fresh seeds
# is the longer `hack/fuzz.sh 600` (tests/fuzz/README.md).
fuzz_seconds="${FUZZ_SECONDS:-10}"
cd "$OLDPWD"
if ((${#ctest_args[@]} == 0 && sanitize == 0 && fuzz_seconds > 0)); then
  fuzz_probe="$(mktemp -d)"
  echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' \
    >"${fuzz_probe}/probe.cc"
  if command -v clang++ >/dev/null &&
     clang++ -fsanitize=fuzzer "${fuzz_probe}/probe.cc" -o "${fuzz_probe}/probe" 2>/dev/null; then
    step "fuzzing each tests/fuzz target for ${fuzz_seconds}s (hack/fuzz.sh)"
    FUZZ_SEED="${FUZZ_SEED:-1}" hack/fuzz.sh "${fuzz_seconds}" || rc=1
  else
    step "skipping the fuzzing smoke run: clang++ with libFuzzer is missing (apt-get install clang libclang-rt-14-dev)"
  fi
  rm -rf "${fuzz_probe}"
fi
exit "$rc"

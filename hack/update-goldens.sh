#!/usr/bin/env bash
# Rewrites the want files of the golden cases (tests/golden/<case>/) from the current
# trainer-render. Review the diff (git diff tests/golden) before committing.
#
#   hack/update-goldens.sh                 # every case, build dir ./build
#   BUILD_DIR=build-x hack/update-goldens.sh torch-cpu-auto plainml
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
cmake --build "$build_dir" -j2 --target trainer-render >/dev/null
bin="$(pwd)/$build_dir/bin/trainer-render"
cases=("$@")
if ((${#cases[@]} == 0)); then
  for d in tests/golden/*/; do [[ -f "$d/args" ]] && cases+=("$(basename "$d")"); done
fi
for c in "${cases[@]}"; do
  tests/golden/run.sh "$bin" "tests/golden/$c" --update
  echo "updated tests/golden/$c"
done

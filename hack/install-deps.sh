#!/usr/bin/env bash
# Installs the Debian packages trainer-cpp builds and tests with. Idempotent: installs only what
# is missing and runs `apt-get update` at most once per invocation.
set -euo pipefail

BUILD_PKGS=(cmake ninja-build g++ pkg-config libcpp-httplib-dev libssl-dev rapidjson-dev
  libyaml-cpp-dev libcurl4-openssl-dev catch2 prometheus-cpp-dev openssl
  python3-yaml ccache) # python3-yaml: hack/gen-crds and the CRD tests; ccache: build trees share objects
# Tools the test tiers use: Go builds the test bed, prometheus/promtool check metrics, wrk drives
# the webhook benchmark, clang provides libFuzzer and the sanitizer runtimes.
TEST_PKGS=(prometheus wrk clang libclang-rt-14-dev curl python3-venv jq python3-matplotlib)
# jq: the guides' examples; python3-matplotlib: the benchmark plots' check (both tests/docs)
# The e2e tier: images built without Docker (mmdebstrap; the service images take their shared
# libraries from this machine) and a real node (hack/testbed/node.sh).
TEST_PKGS+=(mmdebstrap containerd runc containernetworking-plugins iptables nftables)

want=("${BUILD_PKGS[@]}")
if [[ "${1:-}" != "--build-only" ]]; then
  want+=("${TEST_PKGS[@]}")
fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

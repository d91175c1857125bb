#!/usr/bin/env bash
# Installs every Debian 12 package nncheck needs to build, test, fuzz (clang, libFuzzer) and run
# its main job. Chart.js is inlined into campaign reports; chromium loads them in the report test.
# Idempotent and non-interactive: packages already present are skipped without touching apt.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang-format
  clang libclang-rt-14-dev
  libz3-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev
  libgraphviz-dev
  libjs-chart.js chromium
  libopencv-dnn-dev
  libtorch-dev
  libmlir-19-dev mlir-19-tools llvm-19-dev
  libonnx-testdata
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

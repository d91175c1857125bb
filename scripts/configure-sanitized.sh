#!/usr/bin/env bash
# Configures the sanitized build that scripts/sanitize.sh and scripts/fuzz.sh share: clang,
# AddressSanitizer and UndefinedBehaviorSanitizer on every layer, libFuzzer's instrumentation
# for the harnesses in fuzz/, -O1 (sanitizers' usual choice: fast enough to run, quick to
# build), no benchmarks. Usage: configure-sanitized.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}  # as scripts/build.sh, for a new build folder
cmake -S "$root" -B "$1" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O1 -g1" -DNNCHECK_SANITIZE=ON -DNNCHECK_FUZZ=ON \
  -DNNCHECK_BUILD_BENCH=OFF > /dev/null

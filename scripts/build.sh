#!/usr/bin/env bash
# Installs dependencies (Debian 12 packages, onnxruntime-node, and every Python engine's
# environment from PyPI) and builds nncheck into build/ (or $NNCHECK_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh" all  # every engine, Python ones too
# Ninja for a new build folder (one configured before keeps its generator): it compiles a
# target's files while the libraries the target links are still being built, where Make waits.
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${NNCHECK_BUILD_TYPE:-Release} ${NNCHECK_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"

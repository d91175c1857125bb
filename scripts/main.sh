#!/usr/bin/env bash
# The main job: install, build, then run a differential campaign of OpenCV DNN against the
# reference (60 s by default; NNCHECK_FUZZ_SECONDS). Extra arguments go to `nncheck fuzz`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
exec "$build/nncheck" fuzz --backend opencv --seconds "${NNCHECK_FUZZ_SECONDS:-60}" "$@"

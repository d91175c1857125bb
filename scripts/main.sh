#!/usr/bin/env bash
# The main job: install, build, then run nncheck's reference interpreter over ONNX's official
# node tests with a per-op report. Extra arguments go to `nncheck run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
exec "$build/nncheck" run --by-op "$@"

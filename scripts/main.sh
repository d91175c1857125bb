#!/usr/bin/env bash
# The main job: install, build, then run a differential campaign of an engine against the
# reference (60 s by default; NNCHECK_FUZZ_SECONDS). The engine is OpenCV DNN unless the
# arguments name one (--backend torch); every argument goes to `nncheck fuzz`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
# Defaults for what the arguments leave out (the command line takes each option once).
backend=(--backend opencv)
seconds=(--seconds "${NNCHECK_FUZZ_SECONDS:-60}")
for arg in "$@"; do
  case "$arg" in
    --backend | --backend=*) backend=() ;;
    --seconds | --seconds=*) seconds=() ;;
  esac
done
exec "$build/nncheck" fuzz "${backend[@]}" "${seconds[@]}" "$@"

#!/usr/bin/env bash
# The main job: install, build, then run a differential campaign of an engine against the
# reference (60 s by default; NNCHECK_FUZZ_SECONDS). The engine is TVM 0.27 (Relax), a compiler
# of today, unless the arguments name another (--backend ort for ONNX Runtime 1.30); its known
# bugs (examples/<engine>/corpus) are recognised, so the summary ends with what is new, each root
# cause with the `nncheck repro` command that writes its report. Every argument goes to
# `nncheck fuzz`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
# Defaults for what the arguments leave out (the command line takes each option once).
backend=(--backend tvm)
seconds=(--seconds "${NNCHECK_FUZZ_SECONDS:-60}")
for arg in "$@"; do
  case "$arg" in
    --backend | --backend=*) backend=() ;;
    --seconds | --seconds=*) seconds=() ;;
  esac
done
exec "$build/nncheck" fuzz "${backend[@]}" "${seconds[@]}" "$@"

#!/usr/bin/env bash
# Installs every Debian 12 package nncheck needs to build, test, fuzz (clang, libFuzzer) and run
# its main job. Chart.js is inlined into campaign reports; chromium loads them in the report test.
# ONNX Runtime (the ort engine) comes from the npm registry: its official binding
# onnxruntime-node, pinned by src/backends/ort/package-lock.json, installed with its install
# script skipped into $NNCHECK_ORT_DIR (default ~/.cache/nncheck/onnxruntime-node), never into
# the tree; Node.js and npm come from Debian when the machine has none.
# Engines that ship as Python wheels get a virtual environment each, in
# $NNCHECK_PYTHON_DIR/<name> (default ~/.cache/nncheck/python/<name>), from PyPI by the lock file
# python/requirements/<name>.txt, every package pinned by its hash (pip --require-hashes). Name
# them as arguments: `install-deps.sh tvm`; `install-deps.sh all` installs every one. The SDK's
# environment (`sdk`: numpy and onnx, for Python engines and their tests) comes with any of them.
# Idempotent and non-interactive: packages already present are skipped without touching apt, and
# an environment whose lock file has not changed is kept.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

python_envs=()
for arg in "$@"; do
  case "$arg" in
    all) for f in "$root"/python/requirements/*.txt; do python_envs+=("$(basename "$f" .txt)"); done ;;
    -h | --help)
      echo "usage: scripts/install-deps.sh [all | PYTHON-ENGINE...]"
      echo "  Debian packages and onnxruntime-node always; the Python environments named (of:"
      echo "  $(cd "$root/python/requirements" && ls ./*.txt | sed 's|./||; s|.txt||' | tr '\n' ' '))"
      exit 0 ;;
    *)
      if [ ! -f "$root/python/requirements/$arg.txt" ]; then
        echo "install-deps: no Python engine '$arg' (python/requirements/ has: $(cd "$root/python/requirements" && ls ./*.txt | sed 's|./||; s|.txt||' | tr '\n' ' '))" >&2
        exit 2
      fi
      python_envs+=("$arg") ;;
  esac
done
if [ ${#python_envs[@]} -gt 0 ] && [[ ! " ${python_envs[*]} " =~ " sdk " ]]; then python_envs=(sdk "${python_envs[@]}"); fi

packages=(
  build-essential cmake ninja-build pkg-config clang-format
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
  procps
  python3-venv
  python3-dev  # Python.h: torch.compile builds each kernel as a C++ extension
)
# Node.js and npm for the ort engine, unless the machine has them from elsewhere (NodeSource).
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# onnxruntime-node, exactly as the lock file pins it; done again only when the lock changes.
ort_dir=${NNCHECK_ORT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nncheck/onnxruntime-node}
lock="$root/src/backends/ort/package-lock.json"
if cmp -s "$lock" "$ort_dir/installed.lock"; then
  echo "install-deps: onnxruntime-node present in $ort_dir"
else
  echo "install-deps: installing onnxruntime-node into $ort_dir (npm ci --ignore-scripts)"
  mkdir -p "$ort_dir"
  cp "$root/src/backends/ort/package.json" "$lock" "$ort_dir/"
  rm -f "$ort_dir/installed.lock"
  (cd "$ort_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp "$lock" "$ort_dir/installed.lock"  # last: an install cut short is done again
fi

# Each Python environment, exactly as its lock file pins it; made again only when the lock changes.
python_dir=${NNCHECK_PYTHON_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nncheck/python}
for env in "${python_envs[@]}"; do
  lock="$root/python/requirements/$env.txt"
  dir="$python_dir/$env"
  if cmp -s "$lock" "$dir/installed.lock"; then
    echo "install-deps: Python environment '$env' present in $dir"
    continue
  fi
  echo "install-deps: making Python environment '$env' in $dir (pip install --require-hashes)"
  start=$(date +%s)
  rm -rf "$dir"
  /usr/bin/python3 -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --require-hashes --only-binary=:all: --no-deps -r "$lock"
  cp "$lock" "$dir/installed.lock"  # last: an install cut short is done again
  echo "install-deps: Python environment '$env' made in $(( $(date +%s) - start )) s"
done

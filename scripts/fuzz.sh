#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ with clang (ASan and UBSan on) into build-fuzz/ (or
# $NNCHECK_FUZZ_BUILD_DIR) and runs each for NNCHECK_FUZZ_SECONDS (default 60) under a 2 GB RSS
# limit, seeded from ONNX's node tests and the checked-in corpora. Exits non-zero on the first
# crash, leak, timeout or out-of-memory, leaving the reproducer in the build folder.
# NNCHECK_FUZZ_RUNS=N runs each harness for N executions instead (no time limit).
#   NNCHECK_FUZZ_SECONDS=600 ./scripts/fuzz.sh model_loader
#   NNCHECK_FUZZ_RUNS=10000000 ./scripts/fuzz.sh      # the long run the README reports
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${NNCHECK_FUZZ_SECONDS:-60}
budget=(-max_total_time="$seconds")
[ -z "${NNCHECK_FUZZ_RUNS:-}" ] || budget=(-runs="$NNCHECK_FUZZ_RUNS")
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(model_loader tensor_loader model_roundtrip metadata)
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DNNCHECK_FUZZ=ON -DNNCHECK_BUILD_TESTS=OFF -DNNCHECK_BUILD_BENCH=OFF > /dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=("${h}_fuzz"); done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

seeds=()
node=/usr/share/libonnx-testdata/data/node
[ -d "$node" ] && seeds+=("$node")
seeds+=("$root/examples")
for h in "${harnesses[@]}"; do
  work="$build/fuzz-$h"
  mkdir -p "$work/corpus"
  echo "fuzz: $h (${budget[*]})"
  (cd "$work" && "$build/fuzz/${h}_fuzz" "${budget[@]}" -rss_limit_mb=2048 \
     -timeout=10 -print_final_stats=1 corpus "${seeds[@]}" 2>&1 | tail -12)
done

#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ in the sanitized build (scripts/configure-sanitized.sh)
# in build-sanitize/ (or $NNCHECK_FUZZ_BUILD_DIR) and runs them, as many at once as there are
# cores, each for NNCHECK_FUZZ_SECONDS (default 60) under a 2 GB RSS limit, seeded from ONNX's
# node tests, the checked-in corpora and fuzz/seeds (sparse initializers, and tensors that keep
# their data in files). corpus_folder, which builds a folder tree from its input and runs at tens
# of trees a second, takes the corpora and fuzz/seeds alone: ONNX's 3,800 node-test files are no
# trees to it and took it two minutes to read before its first mutation. It starts first, being
# the slowest. Exits non-zero if any harness found a crash, leak, timeout or out-of-memory; its
# reproducer is left in build-sanitize/fuzz-<harness>/.
# NNCHECK_FUZZ_RUNS=N runs each harness for N executions instead (no time limit). The seed is
# NNCHECK_FUZZ_SEED (default 1, so that CI's smoke run is the same run each time; 0 picks one).
#   NNCHECK_FUZZ_SECONDS=600 ./scripts/fuzz.sh model_loader
#   NNCHECK_FUZZ_RUNS=10000000 ./scripts/fuzz.sh      # the long run the README reports
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_FUZZ_BUILD_DIR:-$root/build-sanitize}
seconds=${NNCHECK_FUZZ_SECONDS:-60}
budget=(-max_total_time="$seconds")
[ -z "${NNCHECK_FUZZ_RUNS:-}" ] || budget=(-runs="$NNCHECK_FUZZ_RUNS")
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(corpus_folder model_loader tensor_loader model_roundtrip metadata file_reference reproducer)
"$root/scripts/install-deps.sh"
"$root/scripts/configure-sanitized.sh" "$build"
targets=()
for h in "${harnesses[@]}"; do targets+=("${h}_fuzz"); done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

node=/usr/share/libonnx-testdata/data/node
seeds_of() {
  [ "$1" = corpus_folder ] || [ ! -d "$node" ] || echo "$node"
  printf '%s\n' "$root/examples" "$root/fuzz/seeds"
}

# One harness: its final statistics into fuzz-<harness>/log; its exit status is the verdict.
run_one() {
  local h=$1 work="$build/fuzz-$1"
  local seeds
  mapfile -t seeds < <(seeds_of "$h")
  mkdir -p "$work/corpus"
  (cd "$work" && "$build/fuzz/${h}_fuzz" "${budget[@]}" -seed="${NNCHECK_FUZZ_SEED:-1}" \
     -rss_limit_mb=2048 -timeout=10 \
     -print_final_stats=1 corpus "${seeds[@]}" > log 2>&1)
}

echo "fuzz: ${harnesses[*]} (${budget[*]}, $(nproc) at once)"
failed=0 pids=() names=()
for h in "${harnesses[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do sleep 1; done
  run_one "$h" & pids+=($!) names+=("$h")
done
for i in "${!pids[@]}"; do
  h=${names[$i]} status=0
  wait "${pids[$i]}" || status=$?
  log="$build/fuzz-$h/log"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $h: ${runs:-?} executions, peak RSS ${rss:-?} MB, no crash"
  else
    failed=1
    echo "fuzz: $h FAILED (exit $status); the end of $log:"
    tail -n 40 "$log"
  fi
done
exit "$failed"

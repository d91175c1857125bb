#!/usr/bin/env bash
# Installs nncheck into a temporary prefix, then builds and tests examples/find_package against
# it with find_package(nncheck): the package works outside the tree.
set -euo pipefail
build=$1 example=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$example" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$work/build" -j "$(nproc)" > /dev/null
cd "$work/build"
ctest -N | tee "$work/list.txt" | tail -1
grep -q 'MatchesReference/false.seed1' "$work/list.txt"
grep -q 'MatchesReference/true.seed2' "$work/list.txt"
grep -q 'ToyEngineCorpus.seed_3.seed1' "$work/list.txt"
NNCHECK_CORPUS="$work/new-failures" ctest --output-on-failure -j "$(nproc)"

# GoogleTest sharding splits the properties, TEST_P instances and corpus tests across shards.
total=$(./engine_props --gtest_list_tests | grep -c '^  ')
shard() { GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$1 NNCHECK_CASES=3 NNCHECK_CORPUS="$work/new-failures" \
  ./engine_props | grep -c '^\[ RUN'; }
run0=$(shard 0)
run1=$(shard 1)
echo "sharding: $total tests, $run0 in shard 0, $run1 in shard 1"
[ "$run0" -gt 0 ] && [ "$run1" -gt 0 ] && [ $((run0 + run1)) -eq "$total" ]

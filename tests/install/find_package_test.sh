#!/usr/bin/env bash
# Installs nncheck into a temporary prefix, then builds and tests examples/find_package against
# it with find_package(nncheck), the way a compiler team's repository uses it: the package works
# outside the tree, nncheck_add_tests passes every setting to ctest, a failure is reported at the
# user's test and replays from any folder, the saved failure is replayed first on the next run,
# and the user's engine loads into the nncheck command line as a plug-in.
set -euo pipefail
build=$1 example=$2
work=$(mktemp -d)
# KEEP_WORK=1 keeps the temporary folder, to look into after a failure.
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$work/prefix" > /dev/null
# A copy of the project, since the corpus loop below saves into its corpus.
cp -r "$example" "$work/src"
example="$work/src"
# A project that names no engine needs none of their libraries: it configures with libtorch's
# package out of reach.
cmake -S "$example" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON > "$work/configure.txt" 2>&1 \
  || fail "configuring without libtorch: $(tail -20 "$work/configure.txt")"
# An engine is a component: one this install lacks is named, and one whose library is missing
# fails on that library.
mkdir -p "$work/components"
component() {
  printf 'cmake_minimum_required(VERSION 3.25)\nproject(c LANGUAGES CXX)\nfind_package(nncheck REQUIRED COMPONENTS %s)\n' "$1" \
    > "$work/components/CMakeLists.txt"
  ! cmake -S "$work/components" -B "$work/components/build-$1" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON > "$work/components/$1.txt" 2>&1
}
component nosuch || fail "an engine nncheck lacks was found as a component"
grep -q "nncheck has no engine 'nosuch'" "$work/components/nosuch.txt" \
  || fail "the missing component is not named: $(cat "$work/components/nosuch.txt")"
if [ -n "$(find "$work/prefix" -name nncheck-torchscriptTargets.cmake)" ]; then
  component torchscript || fail "the torchscript component was found without libtorch"
  grep -q 'Torch' "$work/components/torchscript.txt" || fail "Torch is not named: $(cat "$work/components/torchscript.txt")"
fi
cmake --build "$work/build" -j "$(nproc)" > /dev/null
cd "$work/build"
export NNCHECK_CORPUS="$work/new-failures"

# nncheck_add_tests: every setting reaches every entry; names as GoogleTest gives them plus the
# seed; corpus tests once.
ctest --show-only=json-v1 > "$work/tests.json"
for needle in '"NNCHECK_CASES=20"' '"NNCHECK_MAX_NODES=8"' '"NNCHECK_TIMEOUT=30"' '"NNCHECK_SEED=2"'; do
  grep -q "$needle" "$work/tests.json" || fail "no test has $needle in its environment"
done
ctest -N > "$work/list.txt"
grep -q 'Levels/ToyEngineProps.MatchesReference/0.seed1' "$work/list.txt" || fail "ctest names"
grep -q 'Levels/ToyEngineProps.MatchesReference/1.seed2' "$work/list.txt" || fail "ctest names"
[ "$(grep -c 'ToyEngineCorpus.corpus/seed_3' "$work/list.txt")" -eq 1 ] \
  || fail "the corpus test must be registered once, not once per seed"
grep -q 'ToyEngineCorpus.corpus/seed_3.seed' "$work/list.txt" && fail "corpus test carries a seed"
ctest --output-on-failure -j "$(nproc)"

# The corpus loop: NNCHECK_CORPUS_TEST's "corpus" is the folder beside the test's source, from
# any working directory, and a case saved there since the build is a test of the next ctest,
# with no rebuild.
# (Listings go to files first: `grep -q` on a pipe under pipefail fails when it stops reading.)
(cd / && "$work/build/engine_props" --gtest_list_tests) > "$work/listed.txt"
grep -q 'corpus/seed_3' "$work/listed.txt" \
  || fail "the corpus test's relative folder depends on the working directory"
cp -r "$example/corpus/seed_3" "$example/corpus/seed_3_saved_later"
ctest -N > "$work/list-again.txt"
grep -q 'ToyEngineCorpus.corpus/seed_3_saved_later' "$work/list-again.txt" \
  || fail "a case saved since the build is not a test of the next ctest"
ctest -R 'seed_3_saved_later' --output-on-failure > /dev/null || fail "the new corpus test fails"

# A failing property (the planted O2 bug), run from another folder: the failure is reported at
# the user's test, saved, and its replay command works from anywhere.
cd "$work"
set +e
./build/engine_props --gtest_also_run_disabled_tests \
  --gtest_filter='DISABLED_KnownBug/*' > "$work/fail.txt" 2>&1
status=$?
set -e
[ "$status" -ne 0 ] || fail "the planted O2 bug was not found"
grep -q 'engine_props.cpp:[0-9]*: Failure' "$work/fail.txt" \
  || fail "the failure is not reported at the user's test: $(head -5 "$work/fail.txt")"
grep -q 'failed: mismatch' "$work/fail.txt" || fail "not a mismatch"
grep -Eq 'failed: mismatch after [0-9]+ cases?, [0-9.]+ s' "$work/fail.txt" \
  || fail "the report does not say after how many cases and seconds: $(grep 'failed:' "$work/fail.txt")"
grep -q 'Using configuration' "$work/fail.txt" && fail "RapidCheck's random seed line is printed"
# The saved folder reads like the GoogleTest name (and the ctest name, less its seed).
grep -q "^saved: $work/new-failures/DISABLED_KnownBug/ToyEngineProps.MatchesReference/0/[0-9a-f]\{16\}$" \
  "$work/fail.txt" || fail "the saved folder does not follow the test's name: $(grep '^saved' "$work/fail.txt")"
replay=$(grep '^replay: ' "$work/fail.txt" | head -1 | sed 's/^replay: //')
[ -n "$replay" ] || fail "no replay command"
mkdir -p "$work/elsewhere" && cd "$work/elsewhere"
set +e
eval "$replay --gtest_also_run_disabled_tests" > "$work/replay.txt" 2>&1
status=$?
set -e
[ "$status" -ne 0 ] || fail "the replay command did not fail again: $replay"
grep -q 'failed: mismatch' "$work/replay.txt" || fail "the replay is not the same failure"
# The next run replays the saved failure before generating anything.
set +e
"$work/build/engine_props" --gtest_also_run_disabled_tests \
  --gtest_filter='DISABLED_KnownBug/*' > "$work/again.txt" 2>&1
set -e
grep -q 'a saved failure still fails (replayed before generating)' "$work/again.txt" \
  || fail "the saved failure was not replayed first"
# The record names the parameter as it is and the engine as it names itself, so the command
# line checks the case on the plug-in's own configuration of that name.
saved=$(find "$work/new-failures" -name nncheck.json | head -1)
grep -q '"configuration": "O2"' "$saved" || fail "the configuration is not recorded as O2: $saved"
grep -q '"backend": "toy-O2"' "$saved" || fail "the engine is not recorded: $saved"
"$work/prefix/bin/nncheck" corpus check "$work/new-failures" --engine-lib "$work/build/libtoy_engine.so" \
  --backend toy > "$work/corpus-check.txt" 2>&1 || fail "corpus check: $(cat "$work/corpus-check.txt")"
grep -q '1 as recorded' "$work/corpus-check.txt" || fail "corpus check: $(cat "$work/corpus-check.txt")"
"$work/prefix/bin/nncheck" corpus check "$work/new-failures" --engine-lib "$work/build/libtoy_engine.so" \
  --backend toy --config O2 -v > "$work/corpus-check-o2.txt" 2>&1 || fail "corpus check at O2"
grep -q 'mismatch at O2, as recorded' "$work/corpus-check-o2.txt" \
  || fail "corpus check did not run toy at O2: $(cat "$work/corpus-check-o2.txt")"

# The engine as a plug-in of the command line.
cli="$work/prefix/bin/nncheck"
lib="$work/build/libtoy_engine.so"
# The installed program loads its own engines from their plug-ins, each by its name.
"$cli" engines > "$work/engines.txt" 2>&1 || fail "nncheck engines: $(cat "$work/engines.txt")"
for plugin in $(find "$work/prefix" -name 'libnncheck-engine-*.so'); do
  name=$(basename "$plugin" .so) && name=${name#libnncheck-engine-}
  grep -q "^$name " "$work/engines.txt" || fail "the installed engine $name is not listed: $(cat "$work/engines.txt")"
done
"$cli" engines --engine-lib "$lib" | grep -q '^toy ' || fail "nncheck engines does not list toy"
"$cli" fuzz --engine-lib "$lib" --backend toy --config O1 --cases 40 --nodes 6 \
  --corpus "$work/fuzz" > "$work/fuzz-ok.txt" || fail "toy O1 fails: $(tail "$work/fuzz-ok.txt")"
set +e
NNCHECK_ENGINE_LIBS="$lib" "$cli" fuzz --backend toy --config O2 --config O0 --cases 60 --nodes 6 \
  --corpus "$work/fuzz" --fail-on-new > "$work/fuzz-bug.txt" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] || fail "toy O2's bug was not found by nncheck fuzz: $(tail "$work/fuzz-bug.txt")"
grep -q 'Sigmoid' "$work/fuzz-bug.txt" || fail "the finding does not name Sigmoid"
# The replay it prints loads the plug-in again, and fails again, from any folder.
replay=$(grep -m1 '^ *replay: nncheck ' "$work/fuzz-bug.txt" | sed 's/^ *replay: nncheck //')
case "$replay" in *"--engine-lib $lib "*) ;; *) fail "the replay does not load the plug-in: $replay" ;; esac
set +e
(cd / && eval "\"$cli\" $replay") > "$work/fuzz-replay.txt" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] || fail "the printed replay did not fail again: $replay: $(tail -3 "$work/fuzz-replay.txt")"
# The plug-in's own oracle: listed, and it finds the O2 bug with the reference out of the loop.
"$cli" oracles --engine-lib "$lib" | grep -q '^toy-as-o0 ' || fail "nncheck oracles does not list toy-as-o0"
set +e
"$cli" fuzz --engine-lib "$lib" --backend toy --config O2 --oracle toy-as-o0 --cases 60 --nodes 6 \
  --corpus "$work/fuzz-oracle" --fail-on-new > "$work/fuzz-oracle.txt" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] || fail "the oracle toy-as-o0 did not find O2's bug: $(tail "$work/fuzz-oracle.txt")"
grep -q 'toy-as-o0: mismatch at Sigmoid' "$work/fuzz-oracle.txt" \
  || fail "the finding is not the oracle's Sigmoid mismatch: $(grep -A3 'distinct failures' "$work/fuzz-oracle.txt")"
grep -rq '"oracle": "toy-as-o0"' "$work/fuzz-oracle" || fail "the corpus does not record the oracle"

# GoogleTest sharding splits the properties, TEST_P instances and corpus tests across shards.
cd "$work/build"
total=$(NNCHECK_CASES=3 ./engine_props | grep -c '^\[ RUN')
shard() { GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$1 NNCHECK_CASES=3 ./engine_props | grep -c '^\[ RUN'; }
run0=$(shard 0)
run1=$(shard 1)
echo "sharding: $total tests, $run0 in shard 0, $run1 in shard 1"
[ "$run0" -gt 0 ] && [ "$run1" -gt 0 ] && [ $((run0 + run1)) -eq "$total" ]
echo "find_package example: all checks passed"

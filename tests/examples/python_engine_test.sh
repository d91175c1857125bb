#!/usr/bin/env bash
# The Python SDK's example optimizer (examples/python_engine) with its bug planted
# (NNCHECK_EXAMPLE_BUG=1): `nncheck fuzz --engine-worker` and the example's TEST_P suite both find
# it and shrink it to at most 3 nodes; its culprit is the pass; `nncheck repro` writes a script
# that fails with the bug and passes without it (the bug fixed); the case records the worker's
# command, which replay commands print and `corpus check` does not run unless named.
# usage: python_engine_test.sh NNCHECK PROPS_BINARY PYTHON ENGINE_PY
set -euo pipefail
cli=$1 props=$2 python=$3 engine=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
worker="$python $engine"

# Without the bug, a campaign passes.
"$cli" fuzz --engine-worker "$worker" --cases 300 --jobs 1 --corpus "$work/clean" \
  --fail-on-new > "$work/clean.txt" 2>&1 || fail "a campaign without the bug failed: $(tail "$work/clean.txt")"
grep -q 'optimizations triggered: 3 of 3' "$work/clean.txt" \
  || fail "the worker's optimizations are not counted: $(tail "$work/clean.txt")"

# With it, nncheck fuzz finds it, shrunk, with its culprit.
set +e
NNCHECK_EXAMPLE_BUG=1 "$cli" fuzz --engine-worker "$worker" --cases 600 --jobs 1 \
  --corpus "$work/corpus" --fail-on-new > "$work/fuzz.txt" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] || fail "the planted bug was not found (status $status): $(tail -20 "$work/fuzz.txt")"
grep -q 'culprit: fails with only CancelNegPair enabled' "$work/fuzz.txt" \
  || fail "no culprit: $(cat "$work/fuzz.txt")"
for json in $(find "$work/corpus" -name nncheck.json); do
  nodes=$(grep '"nodes_after_shrinking"' "$json" | grep -o '[0-9]*')
  [ "$nodes" -le 3 ] || fail "shrunk to $nodes nodes: $json"
  grep -q "\"engine_worker\": \"$worker\"" "$json" || fail "the worker is not recorded: $json"
done
grep -q "replay: nncheck run --engine-worker '$worker' --backend pyopt --config O1" "$work/fuzz.txt" \
  || fail "the replay command does not name the worker: $(grep replay: "$work/fuzz.txt")"

# Its standalone reproducer (optimizer.py alone, no nncheck) fails while the bug is planted and
# passes once it is fixed.
case=$(dirname "$(find "$work/corpus" -name nncheck.json | head -1)")
NNCHECK_EXAMPLE_BUG=1 "$cli" repro "$case" --engine-worker "$worker" -o "$work/repro" \
  > "$work/repro.txt" 2>&1 || fail "nncheck repro: $(cat "$work/repro.txt")"
grep -q 'pyopt 1.0: .* after CancelNegPair' "$work/repro.txt" || fail "the title: $(cat "$work/repro.txt")"
grep -q '^## Culprit optimizations and workaround' "$work/repro/issue.md" \
  || fail "the issue draft has no culprit: $(cat "$work/repro/issue.md")"
set +e
NNCHECK_EXAMPLE_BUG=1 "$python" "$work/repro/reproduce.py" > "$work/buggy.txt" 2>&1
buggy=$?
"$python" "$work/repro/reproduce.py" > "$work/fixed.txt" 2>&1
fixed=$?
set -e
[ "$buggy" -eq 1 ] && grep -q 'MISMATCH' "$work/buggy.txt" \
  || fail "the reproducer passes with the bug (status $buggy): $(cat "$work/buggy.txt")"
[ "$fixed" -eq 0 ] && ! grep -q 'MISMATCH' "$work/fixed.txt" \
  || fail "the reproducer fails without the bug (status $fixed): $(cat "$work/fixed.txt")"

# A saved case never starts the worker it records: corpus check without --engine-worker checks
# the reference only (a marker the worker would write stays absent).
marker="$work/started"
sed -i "s|\"engine_worker\": \"[^\"]*\"|\"engine_worker\": \"touch $marker\"|" \
  $(find "$work/corpus" -name nncheck.json)
"$cli" corpus check "$work/corpus" > "$work/check.txt" 2>&1 || fail "corpus check: $(cat "$work/check.txt")"
[ ! -e "$marker" ] || fail "corpus check ran the command a case records"
# Named on the command line, it replays the bug at O1.
set +e
NNCHECK_EXAMPLE_BUG=1 "$cli" corpus check "$work/corpus" --engine-worker "$worker" --config O1 -v \
  > "$work/check-worker.txt" 2>&1
set -e
grep -q 'mismatch at O1, as recorded' "$work/check-worker.txt" \
  || fail "corpus check with the worker: $(cat "$work/check-worker.txt")"

# The TEST_P suite finds it too, at O1, shrunk to 3 nodes at most.
cd "$work"
set +e
NNCHECK_EXAMPLE_BUG=1 NNCHECK_CASES=600 NNCHECK_SEED=1 "$props" --gtest_filter='Levels/PyOpt.MatchesReference/1' \
  > "$work/props.txt" 2>&1
status=$?
set -e
[ "$status" -ne 0 ] || fail "the TEST_P suite did not find the bug: $(tail "$work/props.txt")"
grep -q 'failed: mismatch' "$work/props.txt" || fail "not a mismatch: $(head -30 "$work/props.txt")"
saved=$(find "$work" -path '*PyOpt.MatchesReference*' -name nncheck.json | head -1)
[ -n "$saved" ] || fail "the suite saved no case: $(cat "$work/props.txt")"
nodes=$(grep '"nodes_after_shrinking"' "$saved" | grep -o '[0-9]*')
[ "$nodes" -le 3 ] || fail "the suite shrunk it to $nodes nodes"
echo "ok: fuzz and TEST_P find the planted bug, shrunk to <= 3 nodes; its reproducer fails until it is fixed"

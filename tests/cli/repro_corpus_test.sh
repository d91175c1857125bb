#!/usr/bin/env bash
# `nncheck repro` on every case of an engine's corpus of known bugs: each standalone reproducer,
# run with the engine alone, fails for the reason its case records (a mismatch as MISMATCH, an
# error or crash as FAILS or a signal). The case runs at its recorded configuration alone
# (--no-triage): where else it fails is the drafts' business, not the scripts'.
# usage: repro_corpus_test.sh NNCHECK BACKEND CORPUS python|javascript|c++ RUNNER
#   RUNNER: the Python or Node.js that runs the script (with the engine's packages), or the C++
#   compiler's command line before the script (flags after `reproduce.cpp` come from the recipe)
set -euo pipefail
cli=$1 backend=$2 corpus=$3 language=$4 runner=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
n=0
for json in $(find "$corpus" -name nncheck.json | sort); do
  case_dir=$(dirname "$json")
  name=$(basename "$case_dir")
  out="$work/$name"
  "$cli" repro "$case_dir" --backend "$backend" --no-triage -o "$out" > "$work/$name.txt" 2>&1 \
    || fail "nncheck repro $case_dir: $(cat "$work/$name.txt")"
  set +e
  case "$language" in
    python) (cd "$out" && "$runner" reproduce.py) > "$work/$name.out" 2>&1 ;;
    javascript) (cd "$out" && "$runner" reproduce.js) > "$work/$name.out" 2>&1 ;;
    c++) (cd "$out" && $(grep -m1 -o 'g++ .* -o reproduce' reproduce.cpp) && ./reproduce) \
           > "$work/$name.out" 2>&1 ;;
  esac
  status=$?
  set -e
  [ "$status" -ne 0 ] || fail "$name: the reproducer passes: $(cat "$work/$name.out")"
  kind=$(grep -m1 '"failure_kind"' "$json" | grep -o '"[a-z]*",' | tr -d '",')
  case "$kind" in
    mismatch) want='MISMATCH' ;;
    error) want='FAILS' ;;
    *) want='' ;;  # a crash ends the script by its signal
  esac
  if [ -n "$want" ] && ! grep -q "$want" "$work/$name.out"; then
    # A case whose engine behaves otherwise now says so in its repro output (error vs mismatch).
    now=$(grep -m1 -o 'now: [a-z]*' "$work/$name.txt" | cut -d' ' -f2)
    [ "$now" != "$kind" ] || fail "$name ($kind): the reproducer fails otherwise: $(cat "$work/$name.out")"
  fi
  n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no case in $corpus"
echo "ok: $n reproducers of $backend fail as their cases do"

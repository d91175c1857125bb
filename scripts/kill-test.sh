#!/usr/bin/env bash
# The kill test at scale (its quick form is the ctest FuzzCommand.CampaignsKilledAtAnyMoment...):
# KILLS (default 100) campaigns against OpenCV on one corpus, each killed with SIGKILL after a
# random 0.2-3 s, then counts what a user would trip over: saved folders that do not load or
# replay on the reference, temporary folders replayed, and whether the next campaign runs clean.
#   ./scripts/kill-test.sh 100 [CORPUS_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nncheck=${NNCHECK_BIN:-$root/build/nncheck}
kills=${1:-100}
corpus=${2:-$(mktemp -d)}
[ -x "$nncheck" ] || { echo "kill-test: $nncheck not built (./scripts/build.sh)" >&2; exit 2; }
RANDOM=1  # the same moments on every run
killed=0
# (stderr off for the loop: the shell's own "Killed" notices are what this test does on purpose)
for ((i = 0; i < kills; i++)); do
  ms=$((200 + RANDOM % 2800))
  after=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
  if ! timeout -s KILL "$after" "$nncheck" fuzz --backend opencv --seconds 30 \
      --seed $((i * 1000)) --corpus "$corpus" > /dev/null 2>&1; then
    killed=$((killed + 1))
  fi
done 2> /dev/null
folders=$(find "$corpus" -name model.onnx | wc -l)
temporaries=$(find "$corpus" -maxdepth 2 -type d -name '*.tmp.*' | wc -l)
replay=$("$nncheck" run -v "$corpus" 2>&1 || true)
summary=$(echo "$replay" | tail -n 1)
replayedTemporaries=$(echo "$replay" | grep -c '\.tmp\.' || true)
next=0
"$nncheck" fuzz --backend opencv --cases 50 --seed 7 --corpus "$corpus" > /dev/null 2>&1 || next=$?
echo "kill-test: $killed of $kills campaigns killed; $folders case folders ($temporaries temporary" \
     "folders of killed saves on disk); replay on the reference: $summary;" \
     "temporary folders replayed: $replayedTemporaries; next campaign exit status: $next"

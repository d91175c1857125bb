#!/usr/bin/env bash
# Install, build, and run every test with ctest, each once: the sanitizer job
# (scripts/sanitize.sh: a clang build under AddressSanitizer and UndefinedBehaviorSanitizer that
# runs the tests but the long sweeps, then a smoke run of each fuzz harness) runs the tests it
# can, and the main build runs the rest (the engines, the sweeps, the checks of the build itself).
# NNCHECK_SKIP_SANITIZE=1 skips the sanitizer job and runs every test in the main build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_BUILD_DIR:-$root/build}
sanitized=${NNCHECK_SANITIZE_BUILD_DIR:-$root/build-sanitize}
"$root/scripts/build.sh"
if [ -n "${NNCHECK_SKIP_SANITIZE:-}" ]; then
  (cd "$build" && ctest --output-on-failure -j "$(nproc)")
  exit 0
fi
NNCHECK_SANITIZE_BUILD_DIR="$sanitized" "$root/scripts/sanitize.sh"
# The main build's tests by number, less those the sanitizer job ran (ctest -I takes numbers;
# a regular expression of hundreds of names is past what ctest's regex engine takes).
numbers=$(cd "$build" && ctest -N | sed -n 's/^ *Test *#\([0-9]*\): /\1 /p' |
  awk 'NR == FNR { ran[$0] = 1; next }
       { n = $1; name = substr($0, length(n) + 2); if (!(name in ran)) print n }' \
    "$sanitized/sanitized-tests.txt" - | paste -sd, -)
echo "test: $(echo "$numbers" | tr ',' '\n' | grep -c . || true) tests in $build (the sanitizer job ran the others)"
(cd "$build" && ctest --output-on-failure -j "$(nproc)" -I "0,0,0,${numbers}")

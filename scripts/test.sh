#!/usr/bin/env bash
# Install, build, and run every test with ctest; then the sanitizer job (scripts/sanitize.sh:
# the fast tests under AddressSanitizer and UndefinedBehaviorSanitizer, and a smoke run of each
# fuzz harness). NNCHECK_SKIP_SANITIZE=1 skips the sanitizer job.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
(cd "$build" && ctest --output-on-failure -j "$(nproc)")
[ -n "${NNCHECK_SKIP_SANITIZE:-}" ] || "$root/scripts/sanitize.sh"

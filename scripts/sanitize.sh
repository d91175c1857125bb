#!/usr/bin/env bash
# The sanitizer job: builds nncheck, its tests and its fuzz harnesses with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer (scripts/configure-sanitized.sh) into
# build-sanitize/ (or $NNCHECK_SANITIZE_BUILD_DIR); runs the tests there except the long sweeps,
# the command-line campaigns against OpenCV of hundreds of cases (the same campaign, corpus and
# report code runs sanitized in Campaign.*, CorpusMerge.*, CorpusCheckTest.*, on smaller budgets) and the checks of the build itself (install,
# format, layering), which the main build runs;
# then smoke-runs every fuzz harness for NNCHECK_FUZZ_SECONDS (default 10 here) with
# scripts/fuzz.sh. The names of the tests it ran go to <build>/sanitized-tests.txt, so that
# scripts/test.sh does not run them again in the main build.
# Any sanitizer report from nncheck's own process fails a test; reports from an engine's isolated
# process are that engine's crashes, which the tests expect where they plant them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NNCHECK_SANITIZE_BUILD_DIR:-$root/build-sanitize}
"$root/scripts/install-deps.sh"
"$root/scripts/configure-sanitized.sh" "$build"
cmake --build "$build" -j "$(nproc)"
slow='^(Install\.|Format\.|Layers\.|Registry\.ConcreteAndSymbolicRules|Generator\.TwoThousandSeeds|Generator\.EveryUsableOpAppears|ShrinkCandidates\.AreValid|FuzzCommand\.(ACampaignAgainstOpenCV|TwoCampaignsOnOneCorpus|CampaignsKilledAtAnyMoment)|Shard\.TwoShards|ReportCommand\.|CorpusCommand\.)'
# Leaks of the font libraries Graphviz measures text with are theirs (scripts/lsan.supp).
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# An engine's processes allocate within the memory limit, which the kernel enforces
# (RLIMIT_DATA): past it, an allocation fails as it does unsanitized (std::bad_alloc, the case
# skipped for memory), rather than AddressSanitizer ending the process at the failed mmap.
asan_options=${ASAN_OPTIONS:-}  # the fuzz harnesses' own, with libFuzzer's memory limits
export ASAN_OPTIONS="allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# A failed test runs once more: LeakSanitizer's own tracer now and then dies at a process's exit
# ("Tracer caught signal 11", google/sanitizers#1353), after every assertion has passed.
(cd "$build" && ctest --output-on-failure -j "$(nproc)" -E "$slow" --repeat until-pass:2) |
  tee "$build/sanitized-ctest.log"
# The tests run here, less those skipped (a test that needs what this build leaves out, such as
# the instrumented engine double, runs in the main build).
skipped=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$build/sanitized-ctest.log")
(cd "$build" && ctest -N -E "$slow" | sed -n 's/^ *Test *#[0-9]*: //p') |
  grep -vxF -e "${skipped:-nncheck: nothing skipped}" > "$build/sanitized-tests.txt" || true
ASAN_OPTIONS=$asan_options NNCHECK_FUZZ_BUILD_DIR="$build" \
  NNCHECK_FUZZ_SECONDS="${NNCHECK_FUZZ_SECONDS:-10}" "$root/scripts/fuzz.sh"

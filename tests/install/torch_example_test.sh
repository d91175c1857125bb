#!/usr/bin/env bash
# Installs nncheck into a temporary prefix, then builds examples/torch against it with
# find_package(nncheck), as its CMakeLists says a compiler team can: nncheck::torchscript brings
# libtorch along, and the example's corpus replays there.
set -euo pipefail
build=$1 example=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$example" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$work/configure.txt" 2>&1 || fail "configuring against the install: $(tail -20 "$work/configure.txt")"
cmake --build "$work/build" -j "$(nproc)" > "$work/build.txt" 2>&1 \
  || fail "building against the install: $(grep -m5 -E 'error|cannot find' "$work/build.txt")"
cd "$work/build"
ctest -N > "$work/list.txt"  # (grep -q on a pipe would cut ctest off, and pipefail fail it)
grep -q 'TorchScriptCorpus_eager.corpus/' "$work/list.txt" || fail "no corpus test: $(head "$work/list.txt")"
ctest --output-on-failure -R 'TorchScriptCorpus' || fail "the corpus does not replay"

#!/usr/bin/env bash
# Every C++ source and header of the project is formatted by its .clang-format: prints the
# files that are not, and fails.
set -euo pipefail
root=$1
cd "$root"
command -v clang-format > /dev/null || { echo "clang-format is not installed (scripts/install-deps.sh installs it)"; exit 1; }
mapfile -t files < <(find include src generators shrink properties tests bench examples fuzz \
  -type f \( -name '*.cpp' -o -name '*.h' \) | sort)
[ "${#files[@]}" -gt 0 ] || { echo "no source found under $root"; exit 1; }
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "not formatted (run: clang-format -i FILE): ${bad[*]}"
  exit 1
fi
echo "${#files[@]} files formatted"

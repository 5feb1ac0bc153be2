#!/usr/bin/env bash
# The C++ and CUDA layout (.clang-format) holds on every tracked source: `clang-format --dry-run
# --Werror` over them, Debian's clang-format 14 (another version lays some constructs out
# otherwise, so it skips, saying so, as it does without clang-format or outside a git checkout).
# Exit 77: skipped (ctest's SKIP_RETURN_CODE). Fix a failure with `clang-format -i FILE`.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
command -v clang-format >/dev/null || { echo "format: skipped: clang-format is not installed (apt-get install clang-format)"; exit 77; }
version=$(clang-format --version)
[[ $version =~ version\ 14\. ]] || { echo "format: skipped: the layout is clang-format 14's, this is '$version'"; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "format: skipped: not a git checkout"; exit 77; }
# Sources only: results/ keeps scratch as it ran, fixtures are inputs.
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | grep -vE '^(results|tests/fixtures)/')
((${#files[@]} > 100)) || { echo "format: only ${#files[@]} sources found: is this the repository?"; exit 1; }
if ! out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
  echo "$out" | grep -E 'error:' | cut -d: -f1 | sort -u | sed 's/^/format: not laid out by .clang-format: /'
  echo "format: fix with clang-format -i FILE"
  exit 1
fi
echo "format: ${#files[@]} sources laid out as .clang-format says"

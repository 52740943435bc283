#!/usr/bin/env bash
# Runs the Bats suites (all of tests/, or the files given) and ends with one summary line
# "N passed, N failed, N skipped". Exit status is Bats' own: non-zero when any test failed.
set -uo pipefail
cd "$(dirname "$0")/.."

files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=(tests/*.bats)

log=$(mktemp)
trap 'rm -f "$log"' EXIT
bats --formatter tap --timing --print-output-on-failure "${files[@]}" | tee "$log"
rc=${PIPESTATUS[0]}

total=$(grep -cE '^(ok|not ok) ' "$log")
failed=$(grep -cE '^not ok ' "$log")
skipped=$(grep -cE '^ok .* # skip' "$log")
echo
echo "bats: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
exit "$rc"

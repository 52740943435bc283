#!/usr/bin/env bash
# Runs the Bats suites (all of tests/, or the files given) and ends with one summary line
# "N passed, N failed, N skipped". Exit status: non-zero when any test failed.
#
# Two cores are the budget (CI's machine), and most of the suite is MPI start-ups and small
# sorts that leave a core idle; so, when GNU parallel is there (Bats needs it for --jobs), the
# files run JOBS at a time (default: the cores), the tests of one file in order. A file that
# carries the line "# bats serial" (it kills jobs, times something, or takes the machine's
# network namespaces) runs afterwards, alone. SORTEX_TEST_JOBS=1 runs everything in order.
set -uo pipefail
cd "$(dirname "$0")/.."

files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=(tests/*.bats)
jobs=${SORTEX_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
command -v parallel >/dev/null 2>&1 || jobs=1

together=() alone=()
for f in "${files[@]}"; do
    if [[ $jobs -gt 1 ]] && ! grep -qx '# bats serial' "$f"; then
        together+=("$f")
    else
        alone+=("$f")
    fi
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
if [[ ${#together[@]} -gt 0 ]]; then
    bats --formatter tap --timing --print-output-on-failure --jobs "$jobs" \
        --no-parallelize-within-files "${together[@]}" | tee -a "$log"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1
fi
if [[ ${#alone[@]} -gt 0 ]]; then
    bats --formatter tap --timing --print-output-on-failure "${alone[@]}" | tee -a "$log"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1
fi

total=$(grep -cE '^(ok|not ok) ' "$log")
failed=$(grep -cE '^not ok ' "$log")
skipped=$(grep -cE '^ok .* # skip' "$log")
echo
echo "bats: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
exit "$rc"

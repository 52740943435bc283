#!/usr/bin/env bash
# Runs the Bats suites (all of tests/, or the files given) and ends with each file's wall time,
# slowest first, then one summary line "N passed, N failed, N skipped". Exit status: non-zero
# when any test failed.
#
# Two cores are the budget (CI's machine), and most of the suite is MPI start-ups and small
# sorts that leave a core idle; so, when GNU parallel is there, the files run JOBS at a time
# (default: the cores), the tests of one file in order, each file's output printed whole when
# it ends. A file that carries the line "# bats serial" (it kills jobs, times something, runs make
# in the tree, or takes the machine's network namespaces) runs afterwards, alone. SORTEX_TEST_JOBS=1 runs everything
# in order.
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
times=$(mktemp)
trap 'rm -f "$log" "$times"' EXIT
export times

# run_file FILE: one Bats file, its TAP (every test's time beside it) on stdout; appends
# "MILLISECONDS FILE" to $times, the file's wall time, its setup_file included.
run_file() {
    local t0=${EPOCHREALTIME/./} rc=0
    bats --formatter tap --timing --print-output-on-failure "$1" || rc=$?
    echo "$(((${EPOCHREALTIME/./} - t0) / 1000)) $1" >>"$times"
    return "$rc"
}
export -f run_file

rc=0
if [[ ${#together[@]} -gt 0 ]]; then
    SHELL=$BASH parallel --jobs "$jobs" --group run_file ::: "${together[@]}" | tee -a "$log"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1
fi
for f in "${alone[@]}"; do
    run_file "$f" | tee -a "$log"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || rc=1
done

total=$(grep -cE '^(ok|not ok) ' "$log")
failed=$(grep -cE '^not ok ' "$log")
skipped=$(grep -cE '^ok .* # skip' "$log")
echo
echo "time per file, slowest first:"
sort -rn "$times" | awk '{ printf "%8.1f s  %s\n", $1 / 1000, $2 }'
echo
echo "bats: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
exit "$rc"

#!/usr/bin/env bats
# tools/run-tests.sh, which make test runs: every file's TAP, then each file's wall time, slowest
# first, so that slow suites are seen, and the summary line last.
bats_require_minimum_version 1.5.0
load helper

@test "the runner ends with each file's time, slowest first, then the summary line" {
    local d=$BATS_TEST_TMPDIR/suites
    mkdir -p "$d"
    printf '@test "quick" { true; }\n' >"$d/quick.bats"
    printf '@test "slow" { sleep 1.2; }\n@test "later" { skip "a skip counts"; }\n' >"$d/slow.bats"
    # A serial file runs alone, after the others; it fails, and so does the run.
    printf '# bats serial\n@test "fails" { false; }\n' >"$d/serial.bats"
    run "$TOP/tools/run-tests.sh" "$d/quick.bats" "$d/serial.bats" "$d/slow.bats"
    assert_failure
    assert_line --regexp '^ok 1 quick in [0-9]+ms$'
    assert_line --regexp '^not ok 1 fails in [0-9]+ms$'
    # The last lines: the heading, one line per file from the slowest, the summary.
    local times
    times=$(grep -A3 '^time per file, slowest first:$' <<<"$output" | tail -n 3)
    [[ $(awk '{ print $3 }' <<<"$times" | head -1) == "$d/slow.bats" ]] ||
        fail "not the slowest first: $times"
    [[ $(awk '{ print $3 }' <<<"$times" | sort | paste -sd' ') == \
        "$d/quick.bats $d/serial.bats $d/slow.bats" ]] || fail "not every file: $times"
    # Seconds with a decimal, in order, the slow file's its own (at least its 1.2 s).
    awk '$2 != "s" || $1 !~ /^[0-9]+\.[0-9]$/ { exit 1 } NR > 1 && $1 > prev { exit 1 }
        { prev = $1 } NR == 1 && $1 < 1.2 { exit 1 }' <<<"$times" || fail "bad times: $times"
    assert_equal "${lines[-1]}" "bats: 2 passed, 1 failed, 1 skipped"
}

#!/usr/bin/env bats
# tests/30-sched.bats: the h-relation scheduler (exchange/sched.h), through its C unit tests.

bats_require_minimum_version 1.5.0
load helper

setup() {
    SCHED_TEST=$SORTEX_BUILD/tests/test_sched
    [[ -x $SCHED_TEST ]] || fail "missing $SCHED_TEST (run make unit)"
}

@test "builds valid schedules within the theorems' bounds for all matrix families, p = 1..64" {
    run -0 "$SCHED_TEST" matrices 64 2
    assert_output --regexp '^[0-9]+ schedules checked'
}

@test "takes 3h/2 steps direct and about 6h/5 forwarded on the 3-cycle lower-bound instance" {
    run -0 "$SCHED_TEST" lowerbound
    assert_line --regexp '^p=6 +h=100 +direct 1\.500 h +forward 1\.200 h'
    assert_line --regexp '^p=63 +h=1000 +direct 1\.500 h +forward 1\.2[0-9]+ h'
}

@test "the validator rejects lost, duplicated, colliding and misrouted pieces" {
    run -0 "$SCHED_TEST" validator
}

@test "joins into one message only pieces both ends see back to back, and every pair agrees" {
    run -0 "$SCHED_TEST" joins
    # Every schedule of the matrix families passes the same per-pair check, and joins happen.
    run -0 "$SCHED_TEST" matrices 12 1
    assert_output --regexp ', [1-9][0-9]* transfers joined to the next$'
}

@test "maps units of fifths of packets onto bytes, short last packet included, never inside an element" {
    # Packets of elements of 1 to 65536 bytes are five whole elements (and 40 bytes) at least.
    run -0 "$SCHED_TEST" bytes
}

@test "refuses bad arguments with an error code and one message per call" {
    run -0 --separate-stderr "$SCHED_TEST" errors
    assert_equal "$(grep -c 'error:' <<<"$stderr")" 9
}

@test "schedules 64 PEs with h in the hundreds well within a second" {
    run -0 "$SCHED_TEST" time 64 4 1
    local secs
    for algo in direct forward fullduplex; do
        secs=$(awk -v a="$algo" '$4 == a { print $5 }' <<<"$output")
        [[ -n $secs ]] || fail "no time for $algo"
        awk -v s="$secs" 'BEGIN { exit !(s < 0.5) }' || fail "$algo took $secs s"
    done
}

#!/usr/bin/env bats
# tests/30-sched.bats: the h-relation scheduler (exchange/sched.h), through its C unit tests.

bats_require_minimum_version 1.5.0
load helper

@test "builds valid schedules within the theorems' bounds for all matrix families, p = 1..64" {
    run_unit test_sched matrices pmax=64 seeds=2
    assert_line --regexp '^[0-9]+ schedules checked'
}

@test "takes 3h/2 steps direct and about 6h/5 forwarded on the 3-cycle lower-bound instance" {
    run_unit test_sched lowerbound
    assert_line --regexp '^p=6 +h=100 +direct 1\.500 h +forward 1\.200 h'
    assert_line --regexp '^p=63 +h=1000 +direct 1\.500 h +forward 1\.2[0-9]+ h'
}

@test "the validator rejects lost, duplicated, colliding and misrouted pieces" {
    run_unit test_sched validator
}

@test "joins into one message only pieces both ends see back to back, and every pair agrees" {
    run_unit test_sched joins
    # Every schedule of the matrix families passes the same per-pair check, and joins happen.
    run_unit test_sched matrices pmax=12 seeds=1
    assert_line --regexp ', [1-9][0-9]* transfers joined to the next$'
}

@test "maps units of fifths of packets onto bytes, short last packet included, never inside an element" {
    # Packets of elements of 1 to 65536 bytes are five whole elements (and 40 bytes) at least.
    run_unit test_sched bytes
}

@test "refuses bad arguments with an error code and one message per call" {
    run_unit test_sched errors
    assert_equal "$(grep -c 'error:' <<<"$stderr")" 9
}

@test "schedules 64 PEs with h in the hundreds well within a second" {
    run_unit test_sched time p=64 mean=4 reps=1
    local secs
    for algo in direct forward fullduplex; do
        secs=$(awk -v a="$algo" '$4 == a { print $5 }' <<<"$output")
        [[ -n $secs ]] || fail "no time for $algo"
        awk -v s="$secs" 'BEGIN { exit !(s < 0.5) }' || fail "$algo took $secs s"
    done
}

#!/usr/bin/env bats
# The build itself: a finished build is finished. Nothing it made is deleted at its end, so the
# next make (and make test, make demo, which begin with one) has nothing to redo. Serial: a make
# that did relink would rewrite the programs under the feet of the suites running beside it.
# bats serial
bats_require_minimum_version 1.5.0
load helper

@test "a fresh build keeps every file it makes: make deletes no intermediate object" {
    # make -n into an empty build directory prints the whole fresh build, and at its end the
    # intermediate files make would delete ("rm FILE..."; a recipe's own "rm -f" is not one).
    local dir=$BATS_TEST_TMPDIR
    run -0 top_make -n BUILD="$dir/build" BIN="$dir/bin" all unit
    # The plan is the whole build: the baselines' object and the programs that link it.
    assert_line --partial "-c -o $dir/build/bench/baselines.o bench/baselines.cc"
    assert_line --partial "-o $dir/bin/sortex-localsort"
    refute_line --regexp '^rm [^-]'
}

@test "a second make right after a build does nothing" {
    # The build that make test (or the user's make) just did; alone, this builds it first.
    run -0 top_make all unit
    run -0 top_make all unit
    # Nothing compiled, linked or archived: make prints every command it runs but the silent
    # bookkeeping of the flags and the commit, which rewrites nothing when they are unchanged.
    local rest
    rest=$(grep -vx "make: Nothing to be done for '\(all\|unit\)'\." <<<"$output" || true)
    assert_equal "$rest" ""
}

@test "modules depend only downward and sort/'s files call without a cycle" {
    # util <- {local, exchange, datagen, verify} <- sort <- sim <- bench <- tests (README, "How
    # it is built"): an include or call against that order, or a cycle, fails the check.
    run -0 python3 "$TOP/tools/structure.py" check
    assert_line "upward: 0"
    assert_line "call cycles: 0"
}

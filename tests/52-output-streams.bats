#!/usr/bin/env bats
# Standard output that cannot take what is written: a reader that closes the pipe early, and a
# full device (/dev/full). The program exits 3 with one error line; a reader that takes
# everything gets every key, checked by the verifier.
bats_require_minimum_version 1.5.0
load helper

setup() {
    OUT=$BATS_TEST_TMPDIR/out.bin
}

@test "a reader that closes standard output early gets exit 3 and one error line" {
    local big=$BATS_TEST_TMPDIR/big.bin np io
    "$GEN" --dist uniform --n 4000000 -o "$big" >/dev/null
    for np in 1 3; do
        for io in root rootv; do
            run --separate-stderr bash -c 'set -o pipefail
                mpi "$1" -q "$2" --input "$3" --output - --io "$4" | head -c 100 >/dev/null' \
                _ "$np" "$SORTEX" "$big" "$io"
            assert_equal "$status" 3
            one_error_line "rank 0: write: Broken pipe \\(standard output\\)"
        done
    done
    # A reader that takes everything still gets every key.
    run bash -c 'mpi 3 -q "$1" --input "$2" --output - --io root >"$3"' _ "$SORTEX" "$big" "$OUT"
    assert_success
    run "$VERIFY" "$OUT" --input "$big"
    assert_success
}

@test "every program exits 3 with one line when its standard output cannot be written" {
    # /dev/full: every write fails with ENOSPC, as on a full disk. Each program's own printing,
    # the help and lists included; MPI ranks write through mpirun, which is its own matter.
    local cmd prog n=0
    "$GEN" --dist sorted --n 1000 -o "$BATS_TEST_TMPDIR/s.bin"
    local -a cmds=(
        "$GEN --list"
        "$VERIFY $BATS_TEST_TMPDIR/s.bin"
        "$VERIFY $BATS_TEST_TMPDIR/s.bin --json"
        "$SORTEX_BIN/sortex-sched --pattern random --ranks 4"
        "$SORTEX_BIN/sortex-sched --pattern random --ranks 4 --csv"
        "$SORTEX_BIN/sortex-sched --sort --ranks 4 --n-per-rank 1M --csv"
        "$SORTEX --help"
        "$SORTEX --knobs"
        "$SORTEX_BIN/sortex-xbench --help"
        "$SORTEX_BIN/sortex-localsort --n 1000 --reps 1 --algo sortex"
        "$SORTEX_BIN/sortex-example --help"
    )
    for cmd in "${cmds[@]}"; do
        n=$((n + 1))
        prog=${cmd%% *}
        prog=${prog##*/}
        # shellcheck disable=SC2086 # the command line is words
        run --separate-stderr bash -c '"$@" >/dev/full' _ $cmd
        assert_equal "$status" 3
        assert_equal "${#stderr_lines[@]}" 1
        assert_regex "$stderr" "^$prog: error: cannot write standard output"
    done
    assert_equal "$n" 11
}

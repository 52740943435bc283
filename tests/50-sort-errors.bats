#!/usr/bin/env bats
# Bad input to sortex: one clear error line naming the problem and the value, exit 2, no file
# under the output name, the input unchanged. Each case runs on 3 ranks (mpirun -q keeps Open
# MPI's own banner out of stderr) and the line must appear exactly once, from rank 0. And the
# same for the library's callers: every public function given each argument NULL, out of range
# or differing between the ranks (tests/unit/test_args_mpi.c, at 1 to 4 ranks).
bats_require_minimum_version 1.5.0
load helper

setup() {
    setup_input 5000
}

# expect_usage_error PATTERN SORTEX-ARGS...: exit 2, exactly one stderr line matching PATTERN,
# nothing written.
expect_usage_error() {
    local pattern=$1
    shift
    # Every rank exits 2 by itself; mpirun need not wait its 2 s for them before a SIGKILL.
    local -x OMPI_MCA_odls_base_sigkill_timeout=0
    run --separate-stderr mpi 3 -q "$SORTEX" "$@"
    assert_equal "$status" 2
    one_error_line "$pattern"
    nothing_written
}

@test "a missing input is refused and named" {
    expect_usage_error "/nope.bin" --input "$BATS_TEST_TMPDIR/nope.bin" --output "$OUT"
}

@test "a directory as input is refused" {
    expect_usage_error "directory" --input "$BATS_TEST_TMPDIR" --output "$OUT"
}

@test "an input whose size is not a multiple of 8 is refused with its size" {
    head -c 8003 /dev/urandom >"$BATS_TEST_TMPDIR/odd.bin"
    expect_usage_error "8003 is not a multiple of 8" --input "$BATS_TEST_TMPDIR/odd.bin" --output "$OUT"
}

@test "a missing output directory is refused" {
    OUT=$BATS_TEST_TMPDIR/no/such/dir/out.bin
    expect_usage_error "does not exist" --input "$IN" --output "$OUT"
}

@test "an output or --stats path beyond PATH_MAX is refused as a name too long" {
    local deep
    deep=$BATS_TEST_TMPDIR/$(printf 'd/%.0s' $(seq 2100))out.bin
    expect_usage_error "output name is too long: at most 4095 characters" --input "$IN" \
        --output "$deep"
    expect_usage_error "output name is too long: at most 4095 characters" --input "$IN" \
        --output "$OUT" --stats "$deep"
}

@test "an output equal to the input is refused and the input kept" {
    OUT=$IN
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$IN"
    assert_equal "$status" 2
    assert_regex "$stderr" "output is the input"
    assert_equal "$(checksum "$IN")" "$SUM"
}

@test "an output that is a hard link to the input is refused" {
    ln "$IN" "$BATS_TEST_TMPDIR/link.bin"
    run --separate-stderr mpi 2 -q "$SORTEX" --input "$IN" --output "$BATS_TEST_TMPDIR/link.bin"
    assert_equal "$status" 2
    assert_regex "$stderr" "output is the input"
    assert_equal "$(checksum "$IN")" "$SUM"
}

@test "an output that is a symbolic link, a FIFO or a device is refused and left as it was" {
    local target=$BATS_TEST_TMPDIR/target.bin
    echo keep >"$target"
    ln -s "$target" "$BATS_TEST_TMPDIR/link.bin"
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$BATS_TEST_TMPDIR/link.bin"
    assert_equal "$status" 2
    assert_regex "$stderr" "^sortex: error: output is a symbolic link; name its target"
    assert_link_exists "$BATS_TEST_TMPDIR/link.bin"
    assert_equal "$(cat "$target")" keep
    mkfifo "$BATS_TEST_TMPDIR/fifo"
    run --separate-stderr mpi 2 -q "$SORTEX" --input "$IN" --output "$BATS_TEST_TMPDIR/fifo"
    assert_equal "$status" 2
    assert_regex "$stderr" "^sortex: error: output exists and is not a regular file"
    assert_fifo_exists "$BATS_TEST_TMPDIR/fifo"
    # As root a rename over /dev/null would replace the device with a data file.
    run --separate-stderr mpi 2 -q "$SORTEX" --input "$IN" --output /dev/null
    assert_equal "$status" 2
    assert_character_exists /dev/null
    assert_equal "$(checksum "$IN")" "$SUM"
}

@test "--stats naming the input or the output, or a bad place, is refused once" {
    expect_usage_error "--stats names the input or the output" --input "$IN" --output "$OUT" \
        --stats "$IN"
    expect_usage_error "--stats names the input or the output" --input "$IN" --output "$OUT" \
        --stats "$OUT"
    # Not there yet, but the same name in the same directory: it would replace the output.
    expect_usage_error "--stats names the input or the output" --input "$IN" --output "$OUT" \
        --stats "$BATS_TEST_TMPDIR/./out.bin"
    expect_usage_error "output directory does not exist" --input "$IN" --output "$OUT" \
        --stats "$BATS_TEST_TMPDIR/no/dir/s.json"
    expect_usage_error "share standard output" --io root --input "$IN" --output - --stats -
}

@test "an unknown back-end is refused with the list of valid ones" {
    expect_usage_error "unknown exchange back-end \\(bogus\\); valid: auto, alltoallv" \
        --input "$IN" --output "$OUT" --exchange bogus
}

@test "--threads 0, negative or garbage is refused" {
    local v
    for v in 0 -1 abc 2x 99999999999999999999; do
        expect_usage_error "--threads .*\\($v\\)" --input "$IN" --output "$OUT" --threads "$v"
    done
}

@test "--oversample out of range is refused" {
    local v
    for v in 0 -5 1000001 1e9 12q; do
        expect_usage_error "--oversample .*\\($v\\)" --input "$IN" --output "$OUT" --oversample "$v"
    done
}

@test "--epsilon and --mem-limit garbage is refused" {
    expect_usage_error "--epsilon" --input "$IN" --output "$OUT" --epsilon 0
    expect_usage_error "--epsilon" --input "$IN" --output "$OUT" --epsilon nan
    expect_usage_error "--mem-limit" --input "$IN" --output "$OUT" --mem-limit 12X
    expect_usage_error "--mem-limit" --input "$IN" --output "$OUT" --mem-limit 99999999999999999999
}

@test "unknown flags, stray arguments and missing values are refused" {
    expect_usage_error "unknown option \\(--bogus\\)" --input "$IN" --output "$OUT" --bogus
    expect_usage_error "unknown option \\(-Z\\)" -i "$IN" -o "$OUT" -Zv
    expect_usage_error "unknown option \\(--sync=1\\)" -i "$IN" -o "$OUT" --sync=1
    expect_usage_error "unexpected argument \\(stray\\)" --input "$IN" --output "$OUT" stray
    expect_usage_error "--output is required" --input "$IN"
    expect_usage_error "needs a value" --input "$IN" --output
}

@test "--help and --version answer and exit 0" {
    run "$SORTEX" --help
    assert_success
    assert_output --partial "exit codes"
    assert_output --partial "--exchange"
    run "$SORTEX" --version
    assert_success
    assert_line --index 0 --regexp "^sortex [0-9]+\.[0-9]+\.[0-9]+$"
    assert_line --regexp "^built from commit [0-9a-f]+"
    assert_output --partial "Open MPI"
}

@test "an empty input sorts into an empty output" {
    : >"$BATS_TEST_TMPDIR/empty.bin"
    run_mpi 3 "$SORTEX" --input "$BATS_TEST_TMPDIR/empty.bin" --output "$OUT"
    assert_success
    assert_file_exists "$OUT"
    assert_file_empty "$OUT"
    run "$VERIFY" "$OUT" --input "$BATS_TEST_TMPDIR/empty.bin"
    assert_success
}

@test "the library returns one error code on every rank for each argument NULL, out of range or differing between ranks, at 1 to 4 ranks" {
    # Each case of the unit program on every rank, on rank 0 only and on the last rank only: the
    # same code everywhere, one error line for the job, valid calls still sorting correctly; a
    # crash, a hang (the timeout) or a rank returning otherwise fails it.
    local np ncases
    ncases=$("$SORTEX_BUILD/tests/test_args_mpi" --list | wc -l)
    [[ $ncases -ge 100 ]] || fail "only $ncases cases listed"
    for np in 1 2 3 4; do
        run_unit -np "$np" test_args_mpi dir="$BATS_TEST_TMPDIR"
        # Every listed case ran: "ok", or "skip" for what one rank cannot do.
        assert_equal "$(grep -cE '^(ok|skip) ' <<<"$output")" "$ncases"
        assert_line "ok sort/keys-null"
    done
}

#!/usr/bin/env bats
# The sort under AddressSanitizer + UndefinedBehaviorSanitizer (make SAN=address,undefined,
# build/san/bin) and under valgrind memcheck (build/memcheck/bin: -O0, libc malloc). Open MPI
# itself leaks at exit, so leak detection is off; any other report fails the run.
bats_require_minimum_version 1.5.0
load helper

setup() {
    SAN_BIN=$TOP/build/san/bin
    MEMCHECK_BIN=$TOP/build/memcheck/bin
}

@test "the sanitizer build sorts with every back-end and every I/O mode without a report" {
    [[ -x $SAN_BIN/sortex ]] || skip "no sanitizer build (make SAN=address,undefined)"
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=23
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    local backend np=3 list
    list=$(backends)
    for backend in $list; do
        SORTEX=$SAN_BIN/sortex VERIFY=$SAN_BIN/sortex-verify sort_case "$np" "$backend" dd 100003
        SORTEX=$SAN_BIN/sortex VERIFY=$SAN_BIN/sortex-verify sort_case 4 "$backend" uniform 3
        np=$((np % 5 + 2))
    done
    SORTEX=$SAN_BIN/sortex sort_case 5 alltoallv staggered 100003 --io root
    SORTEX=$SAN_BIN/sortex sort_case 1 alltoallv few 100003 --io rootv
    SORTEX_INT_LIMIT=777 SORTEX=$SAN_BIN/sortex sort_case 4 alltoallv uniform 50000
    run mpi 4 "$SAN_BIN/sortex-example" --n 5000 --seed 2 --one
    assert_success
}

@test "the sanitizer build writes and verifies records of every kind without a report" {
    [[ -x $SAN_BIN/sortex-gen ]] || skip "no sanitizer build (make SAN=address,undefined)"
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=23
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    local f=$BATS_TEST_TMPDIR/r.dat dist
    # Across 2^64 record numbers, with two threads and blocks of a few records.
    for dist in gensort gensort-skew gensort-ascii gensort-ascii-skew; do
        run -0 "$SAN_BIN/sortex-gen" --dist "$dist" --n 50003 --start 18446744073709531615 \
            -t 2 -o "$f"
        run -1 "$SAN_BIN/sortex-verify" "$f" --format gensort --input "$f" -t 2 -b 1000
        assert_line "Records: 50003"
    done
    run -0 "$SAN_BIN/sortex-gen" --dist few --n 50003 --record-size 13 --key-offset 3 \
        --key-size 5 -t 2 -o "$f"
    run -1 "$SAN_BIN/sortex-verify" "$f" --record-size 13 --key-offset 3 --key-size 5 \
        --input "$f" -t 2 -b 64
    assert_line --regexp '^multiset: +ok'
}

@test "the sanitizer build sorts gensort and an odd layout at 3 ranks without a report" {
    [[ -x $SAN_BIN/sortex ]] || skip "no sanitizer build (make SAN=address,undefined)"
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=23
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    local odd="--record-size 13 --key-offset 3 --key-size 5" in out=$BATS_TEST_TMPDIR/piped.bin
    # Gensort file to file (the finish merges); the odd layout (13-byte records padded to 16 in
    # memory, a 5-byte key at offset 3, many equal keys) through the root I/O tree with the
    # finish re-sorting, and from a pipe to a pipe through MPI_Scatterv/Gatherv.
    SORT_FORMAT="--format gensort" SORTEX=$SAN_BIN/sortex VERIFY=$SAN_BIN/sortex-verify \
        sort_case 3 alltoallv gensort 30011 --check
    SORT_FORMAT=$odd SORTEX=$SAN_BIN/sortex VERIFY=$SAN_BIN/sortex-verify \
        sort_case 3 forward few 30011 --io root --finish sort
    in=$(SORT_FORMAT=$odd gen_input few 30011 3)
    # shellcheck disable=SC2086 # the layout flags are words
    mpi_stdin 3 "$SAN_BIN/sortex" --io rootv --input - --output - $odd <"$in" >"$out"
    # shellcheck disable=SC2086
    run -0 "$SAN_BIN/sortex-verify" "$out" --input "$in" $odd
}

@test "valgrind memcheck finds no error in a one-rank sort" {
    command -v valgrind >/dev/null || skip "valgrind is not installed"
    [[ -x $MEMCHECK_BIN/sortex ]] || skip "no memcheck build"
    local in out=$BATS_TEST_TMPDIR/out.bin supp=/usr/share/openmpi/openmpi-valgrind.supp
    in=$(gen_input npb 20000 1)
    run mpi 1 -q valgrind -q --error-exitcode=9 --suppressions="$supp" \
        "$MEMCHECK_BIN/sortex" --input "$in" --output "$out" --threads 2
    assert_success
    run "$VERIFY" "$out" --input "$in"
    assert_success
}

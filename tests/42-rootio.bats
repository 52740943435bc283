#!/usr/bin/env bats
# Root I/O: rank 0 alone reads and writes, and the slices travel by a binomial-tree scatter
# and gather (--io root) or by MPI_Scatterv/Gatherv (--io rootv). Verified like every sort.
bats_require_minimum_version 1.5.0
load helper

@test "root I/O sorts at every process count with both scatter schemes" {
    local io np i=0 dists=(uniform staggered zero dd npb)
    for io in root rootv; do
        for np in 1 2 3 4 5 7 8; do
            sort_case "$np" alltoallv "${dists[$((i % ${#dists[@]}))]}" 100003 --io "$io"
            i=$((i + 1))
        done
    done
}

@test "root I/O sorts a pipe: standard input to standard output" {
    local in out=$BATS_TEST_TMPDIR/piped.bin
    in=$(gen_input uniform 250000 5)
    mpi 5 "$SORTEX" --io root --input - --output - <"$in" >"$out"
    run "$VERIFY" "$out" --input "$in"
    assert_success
}

@test "root I/O moves bundles beyond the MPI int limit in chunks" {
    SORTEX_INT_LIMIT=1000 sort_case 6 alltoallv uniform 100003 --io root
}

@test "root I/O handles n = 0, 1 and fewer keys than ranks" {
    local n
    for n in 0 1 5; do
        sort_case 7 alltoallv uniform "$n" --io root
    done
}

@test "standard input without root I/O is refused" {
    run --separate-stderr mpi 2 -q "$SORTEX" --input - --output "$BATS_TEST_TMPDIR/o.bin"
    assert_equal "$status" 2
    assert_regex "$stderr" "need --io root"
}

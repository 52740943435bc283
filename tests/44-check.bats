#!/usr/bin/env bats
# --check: the sort proves its own output in the same job (order, count, the checksum of the
# input as read), reports what that cost, and refuses an output that fails the proof, leaving
# nothing behind. Every sort it passes is checked by the verifier as well.
bats_require_minimum_version 1.5.0
load helper

setup() {
    setup_input 1000000 5
}

@test "--check proves a correct sort in the same job and reports its cost" {
    local np
    for np in 1 2 3 5; do
        sort_case "$np" alltoallv dd 200003 --check
        run stat_field 'd["check"], d["phases"]["check"]["max"] >= 0'
        assert_output "passed True"
    done
    sort_case 2 alltoallv uniform 50000 --check --io root
    # Another key type: the check maps back to the file encoding before it sums.
    run_mpi 3 "$SORTEX" --input "$IN" --output "$OUT" --check --type f64 --exchange pairwise
    assert_success
    run -0 "$VERIFY" "$OUT" --type f64 --input "$IN"
}

@test "--check catches an output out of order and one that lost a key, and writes nothing" {
    local spec
    for spec in order:1 keys:2 keys:0; do
        SORTEX_CORRUPT=$spec run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" \
            --output "$OUT" --check
        assert_equal "$status" 3
        one_error_line "check: the output is"
        nothing_written
    done
    # Without --check the hook does nothing: the sort is correct.
    SORTEX_CORRUPT=keys:0 run mpi 3 "$SORTEX" --input "$IN" --output "$OUT"
    assert_success
    run "$VERIFY" "$OUT" --input "$IN"
    assert_success
}

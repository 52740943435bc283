#!/usr/bin/env bats
# Failures while sorting: injected in every phase and on every rank, a full filesystem, a rank
# killed mid-run, a memory limit. Every case: non-zero exit, one error line where it is told, no
# file under the output name, no temporary file left behind, the input unchanged.
# bats serial
bats_require_minimum_version 1.5.0
load helper

setup() {
    setup_input 100003
}

teardown() {
    unmount_small
}

@test "a failure in any phase on any rank fails the job and writes nothing" {
    local phase rank=0
    for phase in read local_sort sample splitters bucket exchange finish write; do
        rank=$(((rank + 1) % 3))
        SORTEX_FAIL=$phase:$rank run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$OUT"
        assert_equal "$status" 3
        assert_regex "$stderr" "rank $rank: $phase: injected failure"
        nothing_written
    done
}

@test "one failure on every rank gives one error line" {
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$OUT" --mem-limit 1 \
        --external never
    assert_equal "$status" 3
    one_error_line "rank 0: key buffers of [0-9]+ bytes exceed --mem-limit"
    nothing_written
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$OUT" --mem-limit 1
    assert_equal "$status" 3
    one_error_line "rank 0: external: a memory of 1 bytes cannot hold the buffers"
    nothing_written
    local phase
    for phase in read local_sort exchange write; do
        SORTEX_FAIL=$phase run --separate-stderr mpi 4 -q "$SORTEX" --input "$IN" --output "$OUT"
        assert_equal "$status" 3
        one_error_line "rank 0: $phase: injected failure"
        nothing_written
    done
}

@test "a full filesystem fails the write cleanly and removes the temporary file" {
    mount_small 256k
    OUT=$SMALL/out.bin
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$OUT"
    assert_equal "$status" 3
    assert_regex "$stderr" "No space left on device"
    nothing_written "$SMALL"
}

@test "killing one rank mid-exchange ends the whole job within seconds, with no output" {
    local start
    # Rank 1 stalls in the exchange, the only rank that does: it is the one killed.
    stall_then 'start=$(date +%s); kill -9 "$rank_pid"' exchange:1:60 mpi 3 "$SORTEX" \
        --input "$IN" --output "$OUT"
    [[ $rc -ne 0 ]]
    (($(date +%s) - start <= 10))
    nothing_written
}

@test "a share larger than --mem-limit is refused before any data moves with --external never" {
    run --separate-stderr mpi 2 -q "$SORTEX" --input "$IN" --output "$OUT" --mem-limit 100K \
        --external never
    assert_equal "$status" 3
    assert_regex "$stderr" "exceed --mem-limit"
    nothing_written
    # A sufficient limit sorts.
    run mpi 2 "$SORTEX" --input "$IN" --output "$OUT" --mem-limit 4Mi
    assert_success
    run "$VERIFY" "$OUT" --input "$IN"
    assert_success
}

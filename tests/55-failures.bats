#!/usr/bin/env bats
# Failures while sorting: injected in every phase, a full filesystem, a rank killed mid-run,
# a memory limit. Every case: non-zero exit, no file under the output name, no temporary file
# left behind, the input unchanged.
# bats serial
bats_require_minimum_version 1.5.0
load helper

setup() {
    IN=$BATS_TEST_TMPDIR/in.bin
    OUT=$BATS_TEST_TMPDIR/out.bin
    python3 -c "import os; open('$IN', 'wb').write(os.urandom(8 * 100003))"
    SUM=$(checksum "$IN")
}

teardown() {
    if [[ -n ${SMALL:-} ]] && mountpoint -q "$SMALL"; then
        umount "$SMALL"
    fi
}

# nothing_written DIR: no output, no temporary file, the input as it was.
nothing_written() {
    assert_file_not_exists "$OUT"
    [[ -z $(find "${1:-$BATS_TEST_TMPDIR}" -name '*.sortex-tmp.*') ]]
    assert_equal "$(checksum "$IN")" "$SUM"
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

@test "a full filesystem fails the write cleanly and removes the temporary file" {
    SMALL=$BATS_TEST_TMPDIR/small
    mkdir -p "$SMALL"
    mount -t tmpfs -o size=256k tmpfs "$SMALL" 2>/dev/null || skip "cannot mount a tmpfs here"
    OUT=$SMALL/out.bin
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$OUT"
    assert_equal "$status" 3
    assert_regex "$stderr" "No space left on device"
    nothing_written "$SMALL"
}

@test "killing one rank mid-exchange ends the whole job within seconds, with no output" {
    local log=$BATS_TEST_TMPDIR/job.log pid start
    SORTEX_STALL=exchange:1:60 mpi 3 "$SORTEX" --input "$IN" --output "$OUT" >"$log" 2>&1 &
    local job=$!
    for _ in $(seq 100); do
        pid=$(grep -oP 'rank 1 pid \K[0-9]+' "$log" || true)
        [[ -n $pid ]] && break
        sleep 0.1
    done
    [[ -n $pid ]]
    start=$(date +%s)
    kill -9 "$pid"
    local rc=0
    wait "$job" || rc=$?
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

#!/usr/bin/env bats
# An input that changes while the sort reads it: shrunk, truncated and written back, rewritten in
# place with its mtime put back. Rank 0 holds the read back (SORTEX_STALL) while the file
# changes; the job fails with one error line and writes nothing, however it reads.
# bats serial
bats_require_minimum_version 1.5.0
load helper

setup() {
    setup_input 1000000 5
}

@test "an input that shrinks while it is read fails the job with one line and writes nothing" {
    local np io
    for io in mpiio root; do
        for np in 1 3 4; do
            cp "$IN" "$BATS_TEST_TMPDIR/v.bin"
            stall_then 'truncate -s 4000000 "$BATS_TEST_TMPDIR/v.bin"' read:0:2 mpi "$np" -q \
                "$SORTEX" --input "$BATS_TEST_TMPDIR/v.bin" --output "$OUT" --io "$io"
            assert_equal "$rc" 3
            stderr=$(grep -v stalling "$log")
            one_error_line "the input changed"
            nothing_written
        done
    done
}

@test "an input truncated and written back while it is read is not sorted half old" {
    cp "$IN" "$BATS_TEST_TMPDIR/v.bin"
    stall_then 'truncate -s 0 "$BATS_TEST_TMPDIR/v.bin"; cat "$IN" >"$BATS_TEST_TMPDIR/v.bin"' \
        read:0:2 mpi 3 -q "$SORTEX" --input "$BATS_TEST_TMPDIR/v.bin" --output "$OUT"
    assert_equal "$rc" 3
    stderr=$(grep -v stalling "$log")
    one_error_line "the input changed while it was read"
    nothing_written
}

@test "an input rewritten in place with its mtime put back is not sorted half old" {
    # Same size, inode and mtime (touch -r, as cp -p and rsync -t do): only the ctime tells.
    local np io v=$BATS_TEST_TMPDIR/v.bin ref=$BATS_TEST_TMPDIR/ref
    "$GEN" --dist uniform --n 1000000 --seed 6 -o "$BATS_TEST_TMPDIR/other.bin" >/dev/null
    for io in mpiio root; do
        for np in 1 3; do
            cp "$IN" "$v"
            touch -r "$v" "$ref"
            stall_then 'dd if="$BATS_TEST_TMPDIR/other.bin" of="$v" conv=notrunc status=none
                touch -r "$ref" "$v"' read:0:2 mpi "$np" -q "$SORTEX" --input "$v" \
                --output "$OUT" --io "$io"
            assert_equal "$rc" 3
            stderr=$(grep -v stalling "$log")
            one_error_line "the input changed while it was read"
            nothing_written
        done
    done
}

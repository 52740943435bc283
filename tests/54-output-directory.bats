#!/usr/bin/env bats
# The output's directory and file system: no room (even without fallocate), append-only, renamed
# while the job runs. The job is refused or fails with one error line, and leaves no output and
# no temporary file.
# bats serial
bats_require_minimum_version 1.5.0
load helper

setup() {
    setup_input 1000000 5
}

teardown() {
    unmount_small
}

@test "a file system without room, even one without fallocate, fails up front with one line" {
    local img=$BATS_TEST_TMPDIR/ext2.img
    SMALL=$BATS_TEST_TMPDIR/small
    mkdir -p "$SMALL"
    # ext2 has no fallocate (as NFSv3): the free-space check must refuse before any write.
    dd if=/dev/zero of="$img" bs=1M count=4 status=none
    mkfs.ext2 -q "$img" 2>/dev/null && mount -o loop "$img" "$SMALL" 2>/dev/null ||
        skip "cannot mount an ext2 image here"
    OUT=$SMALL/out.bin
    local mca
    for mca in "" "--mca fcoll individual" "--mca io romio321"; do
        # shellcheck disable=SC2086
        run --separate-stderr mpi 3 -q $mca "$SORTEX" --input "$IN" --output "$OUT"
        assert_equal "$status" 3
        one_error_line "cannot reserve 8000000 bytes: No space left on device"
        nothing_written "$SMALL"
    done
    umount "$SMALL"
}

@test "an append-only output directory is refused before anything is created in it" {
    local dir=$BATS_TEST_TMPDIR/ao
    mkdir -p "$dir"
    chattr +a "$dir" 2>/dev/null || skip "this file system has no append-only attribute"
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$dir/out.bin"
    local sort_status=$status sort_err=$stderr
    run --separate-stderr mpi 1 -q "$SORTEX" --input "$IN" --output "$OUT" --stats "$dir/s.json"
    local stats_status=$status stats_err=$stderr
    run --separate-stderr "$GEN" --dist uniform --n 1000 -o "$dir/gen.bin"
    local gen_status=$status gen_err=$stderr
    local left
    left=$(ls -A "$dir")
    chattr -a "$dir" # before any assertion: the test's directory must stay removable
    assert_equal "$left" ""
    assert_equal "$sort_status" 2
    assert_regex "$sort_err" "^sortex: error: output directory is append-only or immutable"
    assert_equal "$stats_status" 2
    assert_regex "$stats_err" "^sortex: error: .*append-only or immutable"
    assert_equal "$gen_status" 2
    assert_regex "$gen_err" "append-only or immutable"
}

@test "an output directory renamed while the job runs is left with no output and no temporary file" {
    local dir=$BATS_TEST_TMPDIR/d moved=$BATS_TEST_TMPDIR/moved point
    for point in write commit; do
        rm -rf "$dir" "$moved"
        mkdir -p "$dir"
        OUT=$dir/out.bin
        stall_then 'mv "$dir" "$moved"' "$point:0:2" mpi 3 -q "$SORTEX" --input "$IN" \
            --output "$OUT"
        assert_equal "$rc" 3
        assert_equal "$(ls -A "$moved")" ""
        assert_file_not_exists "$OUT"
    done
}

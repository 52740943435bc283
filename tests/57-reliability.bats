#!/usr/bin/env bats
# What a hostile user tried, and what the sort must do: an input that changes under the read,
# a reader that closes the pipe, names at the file system's limits, one failure on many ranks,
# signals at the worst moment, and the self-check of --check. Every job that fails leaves no
# output and no temporary file; every job that succeeds is checked by the verifier.
# bats serial
bats_require_minimum_version 1.5.0
load helper

setup() {
    IN=$BATS_TEST_TMPDIR/in.bin
    OUT=$BATS_TEST_TMPDIR/out.bin
    "$GEN" --dist uniform --n 1000000 --seed 5 -o "$IN" >/dev/null
    SUM=$(checksum "$IN")
}

# nothing_written [DIR]: no output and no temporary file (in DIR, default the test's own).
nothing_written() {
    assert_file_not_exists "$OUT"
    local left
    left=$(find "${1:-$BATS_TEST_TMPDIR}" -name "*sortex-tmp*")
    [[ -z $left ]] || { echo "left behind: $left" >&2; return 1; }
}

# one_error_line PATTERN: $stderr (of mpirun -q) is exactly one sortex error line matching it.
one_error_line() {
    assert_equal "$(printf '%s\n' "$stderr" | grep -c .)" 1
    assert_regex "$stderr" "^sortex: error: .*$1"
}

# stall_then ACTION NP SPEC [MPIRUN-OPTIONS] PROGRAM ARGS...: starts the job with
# SORTEX_STALL=SPEC (the rank announces itself on stderr), waits until it stalls, runs ACTION
# (a command line, eval'd; $mpirun_pid is the job's mpirun), waits for the job and the stalled
# rank to end, and leaves the job's exit status in $rc and its stderr in $log.
stall_then() {
    local action=$1 np=$2 spec=$3
    shift 3
    log=$BATS_TEST_TMPDIR/job.log
    : >"$log"
    SORTEX_STALL=$spec mpi "$np" -q "$@" 2>"$log" &
    local job=$!
    for _ in $(seq 200); do
        grep -q stalling "$log" && break
        sleep 0.05
    done
    grep -q stalling "$log"
    # The stalled rank's parent is this job's mpirun (never another job's).
    local rank_pid
    rank_pid=$(grep -oP 'pid \K[0-9]+' "$log" | head -n 1)
    mpirun_pid=$(ps -o ppid= -p "$rank_pid" | tr -d ' ')
    eval "$action"
    rc=0
    wait "$job" || rc=$?
    # mpirun may return before the ranks it signalled have ended (they are left to init): the
    # job is over when the stalled rank is, dead or a zombie.
    local state
    for _ in $(seq 200); do
        state=$(ps -o stat= -p "$rank_pid" 2>/dev/null || true)
        [[ -z $state || $state == Z* ]] && break
        sleep 0.05
    done
}

@test "an input that shrinks while it is read fails the job with one line and writes nothing" {
    local np io
    for io in mpiio root; do
        for np in 1 3 4; do
            cp "$IN" "$BATS_TEST_TMPDIR/v.bin"
            stall_then 'truncate -s 4000000 "$BATS_TEST_TMPDIR/v.bin"' "$np" read:0:2 "$SORTEX" \
                --input "$BATS_TEST_TMPDIR/v.bin" --output "$OUT" --io "$io"
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
        3 read:0:2 "$SORTEX" --input "$BATS_TEST_TMPDIR/v.bin" --output "$OUT"
    assert_equal "$rc" 3
    stderr=$(grep -v stalling "$log")
    one_error_line "the input changed while it was read"
    nothing_written
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

@test "a reader that closes standard output early gets exit 3 and one error line" {
    local big=$BATS_TEST_TMPDIR/big.bin np io
    "$GEN" --dist uniform --n 4000000 -o "$big" >/dev/null
    for np in 1 3; do
        for io in root rootv; do
            run --separate-stderr bash -c 'set -o pipefail
                timeout 60 mpirun -q -np "$1" --oversubscribe --bind-to none "$2" \
                    --input "$3" --output - --io "$4" | head -c 100 >/dev/null' \
                _ "$np" "$SORTEX" "$big" "$io"
            assert_equal "$status" 3
            one_error_line "rank 0: write: Broken pipe \\(standard output\\)"
        done
    done
    # A reader that takes everything still gets every key.
    run bash -c 'timeout 60 mpirun -q -np 3 --oversubscribe --bind-to none "$1" --input "$2" \
        --output - --io root >"$3"' _ "$SORTEX" "$big" "$OUT"
    assert_success
    run "$VERIFY" "$OUT" --input "$big"
    assert_success
}

@test "output names up to the directory's limit sort, longer ones are refused before any data moves" {
    local dir=$BATS_TEST_TMPDIR/d len name
    mkdir -p "$dir"
    for len in 200 240 255; do
        name=$(printf 'n%.0s' $(seq "$len"))
        OUT=$dir/$name
        run mpi 3 "$SORTEX" --input "$IN" --output "$OUT" --stats "$dir/${name:5}"
        assert_success
        run "$VERIFY" "$OUT" --input "$IN"
        assert_success
        assert_file_exists "$dir/${name:5}"
        # ... and such a file is read back as an input too.
        run mpi 2 "$SORTEX" --input "$OUT" --output "$dir/again.bin"
        assert_success
        run "$VERIFY" "$dir/again.bin" --input "$IN"
        assert_success
        rm -f "$OUT" "$dir/${name:5}" "$dir/again.bin"
    done
    name=$(printf 'n%.0s' $(seq 256))
    OUT=$dir/$name
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$OUT"
    assert_equal "$status" 2
    one_error_line "output name is too long: at most 255 characters"
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$dir/ok.bin" --stats "$OUT"
    assert_equal "$status" 2
    one_error_line "output name is too long"
    nothing_written "$dir"
    assert_file_not_exists "$dir/ok.bin"
}

@test "one failure on every rank gives one error line" {
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$OUT" --mem-limit 1
    assert_equal "$status" 3
    one_error_line "rank 0: key buffers of [0-9]+ bytes exceed --mem-limit"
    nothing_written
    local phase
    for phase in read local_sort exchange write; do
        SORTEX_FAIL=$phase run --separate-stderr mpi 4 -q "$SORTEX" --input "$IN" --output "$OUT"
        assert_equal "$status" 3
        one_error_line "rank 0: $phase: injected failure"
        nothing_written
    done
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

@test "a signal to mpirun before the rename leaves neither the output nor a temporary file" {
    local sig
    for sig in TERM INT HUP; do
        stall_then "kill -$sig \$mpirun_pid" 3 commit:0:60 "$SORTEX" --input "$IN" --output "$OUT"
        [[ $rc -ne 0 ]]
        nothing_written
    done
}

@test "a signal during the write leaves no temporary file, and any output is a complete sort" {
    local big=$BATS_TEST_TMPDIR/big.bin delay
    "$GEN" --dist uniform --n 8000000 -o "$big" >/dev/null
    # Rank 1 holds the write back for 1 s; the signal lands around its end, mid-write.
    for delay in 0.9 1 1.05 1.1 1.2 1.4; do
        rm -f "$OUT"
        stall_then "sleep $delay; kill -TERM \$mpirun_pid 2>/dev/null || true" 3 write:1:1 "$SORTEX" --input "$big" \
            --output "$OUT"
        [[ -z $(find "$BATS_TEST_TMPDIR" -name '*sortex-tmp*') ]]
        if [[ -e $OUT ]]; then
            run "$VERIFY" "$OUT" --input "$big"
            assert_success
        fi
    done
}

@test "a frozen rank is ended by mpirun --timeout with nothing written" {
    local pid start
    stall_then 'pid=$(grep -oP "rank 1 pid \K[0-9]+" "$log"); kill -STOP "$pid"; start=$(date +%s)' \
        3 exchange:1:60 --timeout 5 "$SORTEX" --input "$IN" --output "$OUT"
    [[ $rc -ne 0 ]]
    (($(date +%s) - start <= 20))
    nothing_written
}

@test "every program answers --help and --version, and refuses a stray argument with exit 2" {
    local prog
    for prog in sortex sortex-gen sortex-verify sortex-sched sortex-xbench sortex-localsort; do
        run "$SORTEX_BIN/$prog" --help
        assert_success
        assert_output --partial "--version"
        run "$SORTEX_BIN/$prog" --version
        assert_success
        assert_line --index 0 --regexp "^$prog [0-9]+\.[0-9]+\.[0-9]+$"
        assert_line --regexp "^built from commit [0-9a-f]+"
    done
    run mpi 1 "$SORTEX_BIN/sortex-example" --help
    assert_success
    assert_output --partial "--exchange"
    run mpi 1 "$SORTEX_BIN/sortex-example" --version
    assert_success
    assert_output --regexp "^sortex-example [0-9]"
    run --separate-stderr mpi 2 -q "$SORTEX_BIN/sortex-example" banana
    assert_equal "$status" 2
    assert_regex "$stderr" "unexpected argument \\(banana\\)"
}

@test "-t is --threads in every program that takes threads" {
    local g=$BATS_TEST_TMPDIR/g.bin
    run -0 "$GEN" --dist uniform --n 100000 -t 2 -o "$g"
    run_mpi 2 "$SORTEX" -i "$g" -o "$OUT" -t 1
    assert_success
    run -0 "$VERIFY" "$OUT" -t 2 --input "$g"
    run --separate-stderr "$VERIFY" "$OUT" -t i64
    assert_equal "$status" 2
    assert_regex "$stderr" "the format is --format"
    run -0 "$SORTEX_BIN/sortex-sched" --pattern random --ranks 8 -t 1
    run -0 "$SORTEX_BIN/sortex-localsort" --algo sortex --n 100000 -t 2 --reps 1
}

@test "the stats file records any path as itself and counts as integers" {
    local odd=$BATS_TEST_TMPDIR/$'line\nbreak\ttab "q" \\ \x01 ü'.bin
    cp "$IN" "$odd"
    run_mpi 3 "$SORTEX" --input "$odd" --output "$OUT" --stats "$BATS_TEST_TMPDIR/s.json"
    assert_success
    run python3 - "$BATS_TEST_TMPDIR/s.json" "$odd" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["input"] == sys.argv[2], (d["input"], sys.argv[2])
for k in ("min", "max"):
    assert isinstance(d["n_out"][k], int), d["n_out"]
assert isinstance(d["n"], int) and d["n"] == 1000000
print("ok")
PY
    assert_output "ok"
}

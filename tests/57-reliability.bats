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

@test "an input rewritten in place with its mtime put back is not sorted half old" {
    # Same size, inode and mtime (touch -r, as cp -p and rsync -t do): only the ctime tells.
    local np io v=$BATS_TEST_TMPDIR/v.bin ref=$BATS_TEST_TMPDIR/ref
    "$GEN" --dist uniform --n 1000000 --seed 6 -o "$BATS_TEST_TMPDIR/other.bin" >/dev/null
    for io in mpiio root; do
        for np in 1 3; do
            cp "$IN" "$v"
            touch -r "$v" "$ref"
            stall_then 'dd if="$BATS_TEST_TMPDIR/other.bin" of="$v" conv=notrunc status=none
                touch -r "$ref" "$v"' "$np" read:0:2 "$SORTEX" --input "$v" --output "$OUT" \
                --io "$io"
            assert_equal "$rc" 3
            stderr=$(grep -v stalling "$log")
            one_error_line "the input changed while it was read"
            nothing_written
        done
    done
}

@test "f64 keys sort NaNs of both signs to the ends, -0 before +0, infinities among the numbers" {
    local f=$BATS_TEST_TMPDIR/f64.bin want=$BATS_TEST_TMPDIR/want.bin np io
    # The README's order ("The data format"): negative NaNs, then the numbers (-inf first, -0
    # before +0, +inf last), then positive NaNs; NaNs of one sign by their bit pattern, mirrored
    # like the numbers: a negative NaN with a larger pattern comes first. The model below says so
    # in its own words (no bit trick) and writes the expected file; the input is the same keys
    # shuffled, every special many times, among ordinary numbers, so every rank holds some.
    python3 - "$f" "$want" <<'PY'
import math, random, struct, sys
def bits(x): return struct.unpack("<Q", struct.pack("<d", x))[0]
special = [
    0x7FF8000000000000, 0x7FF0000000000001, 0x7FFFFFFFFFFFFFFF, 0x7FF8000000000001,  # +NaN
    0xFFF8000000000000, 0xFFF0000000000001, 0xFFFFFFFFFFFFFFFF, 0xFFF4000000000000,  # -NaN
    0x7FF0000000000000, 0xFFF0000000000000,                                          # +-inf
    0x0000000000000000, 0x8000000000000000,                                          # +-0
    0x0000000000000001, 0x8000000000000001,                                          # +-denormal
    bits(1.0), bits(-1.0), bits(1.7976931348623157e308), bits(-1.7976931348623157e308),
]
rng = random.Random(7)
keys = special * 60 + [bits(rng.uniform(-1e6, 1e6)) for _ in range(20000)]
rng.shuffle(keys)
def order(b):
    neg = b >> 63
    mant = b & ((1 << 52) - 1)
    if (b >> 52) & 0x7FF == 0x7FF and mant != 0:   # a NaN: to its sign's end, by its payload
        return (0, -mant, 0) if neg else (2, mant, 0)
    x = struct.unpack("<d", struct.pack("<Q", b))[0]
    return (1, x, 0 if neg else 1)                  # numbers by value, -0 before +0
assert order(0x8000000000000000) < order(0) and order(0xFFF0000000000000)[0] == 1
open(sys.argv[1], "wb").write(struct.pack(f"<{len(keys)}Q", *keys))
open(sys.argv[2], "wb").write(struct.pack(f"<{len(keys)}Q", *sorted(keys, key=order)))
PY
    for np in 1 3 4; do
        for io in mpiio root; do
            rm -f "$OUT"
            run_mpi "$np" "$SORTEX" --input "$f" --output "$OUT" --type f64 --io "$io" --check
            assert_success
            cmp "$OUT" "$want" || fail "P=$np --io $io: not the documented f64 order"
            run "$VERIFY" "$OUT" --type f64 --input "$f"
            assert_success
        done
    done
    # The f64 order is not the u64 order: read with the wrong type, the verifier refuses it.
    run "$VERIFY" "$want" --type u64
    assert_failure 1
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
    local big=$BATS_TEST_TMPDIR/big.bin trial io delay sig job mpirun_pid tmp ranks pid state left
    "$GEN" --dist uniform --n 8000000 -o "$big" >/dev/null
    # Rank 0 holds the rename back for 30 s (SORTEX_STALL=commit): from the moment its
    # temporary file appears, the job is in its write phase until the signal ends it. The
    # signal goes out when that file is seen, after a delay: at 0 it lands in the collective
    # write (64 MB take ~0.2 s), later ones in the write's end or at the commit.
    for trial in "mpiio 0 TERM" "mpiio 0.05 INT" "mpiio 0.15 HUP" "mpiio 0.5 TERM" \
        "root 0 INT" "root 0.1 TERM"; do
        read -r io delay sig <<<"$trial"
        rm -f "$OUT"
        SORTEX_STALL=commit:0:30 timeout --kill-after=10 "$SORTEX_TEST_TIMEOUT" \
            mpirun -q -np 3 --oversubscribe --bind-to none "$SORTEX" --input "$big" \
            --output "$OUT" --io "$io" 2>"$BATS_TEST_TMPDIR/job.log" &
        job=$!
        tmp=
        for _ in $(seq 1000); do
            # The sort's own temporary name (MPI-IO may add files of its own beside it).
            tmp=$(compgen -G "$BATS_TEST_TMPDIR/.out.bin.sortex-tmp.*" |
                grep -E '/\.out\.bin\.sortex-tmp\.[0-9]+-[0-9a-f]+$' || true)
            [[ -n $tmp ]] && break
            sleep 0.01
        done
        [[ -n $tmp ]] || fail "$trial: no temporary file appeared"
        sleep "$delay"
        # The trial interrupts the write: the temporary file is there, the output is not yet.
        mpirun_pid=$(pgrep -P "$job")
        ranks=$(pgrep -P "$mpirun_pid" | tr '\n' ' ')
        [[ -n $ranks ]] || fail "$trial: no ranks under mpirun $mpirun_pid"
        assert_file_exists "$tmp"
        assert_file_not_exists "$OUT"
        kill -"$sig" "$mpirun_pid"
        rc=0
        wait "$job" || rc=$?
        [[ $rc -ne 0 && $rc -ne 124 ]] || fail "$trial: the job exited $rc"
        # mpirun may return before the ranks it signalled are gone (they are left to init).
        for pid in $ranks; do
            for _ in $(seq 200); do
                state=$(ps -o stat= -p "$pid" 2>/dev/null || true)
                [[ -z $state || $state == Z* ]] && break
                sleep 0.05
            done
        done
        left=$(find "$BATS_TEST_TMPDIR" -name '*sortex-tmp*')
        [[ -z $left ]] || fail "$trial: left behind: $left"
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

@test "every program answers --help with its defaults and --version, and refuses a stray argument with exit 2 and one line" {
    local prog dflt args launch row rows n=0
    # Each program, one option whose --help line must show its default ("[...]" after the text,
    # or "(default ...)" where the programs' shared format options use that form), and a
    # command line it would run, to which a stray word is added.
    mapfile -t rows <<EOF
sortex|--exchange NAME .*\[alltoallv\]|--input $IN --output $OUT
sortex-gen|--seed S .*\(default 0\)|--dist uniform --n 10 -o $OUT
sortex-verify|--threads N .*\(default: OMP_NUM_THREADS|$IN
sortex-sched|--algos LIST .*\[all\]|--pattern random --ranks 4
sortex-xbench|--reps R .*\[5\]|--exchange alltoallv
sortex-localsort|--reps R .*\[5\]|--n 1000 --reps 1
sortex-example|--n N .*\[100000\]|--n 1000
EOF
    for row in "${rows[@]}"; do
        IFS='|' read -r prog dflt args <<<"$row"
        echo "program $prog"
        n=$((n + 1))
        run -0 "$SORTEX_BIN/$prog" --help
        assert_output --partial "--version"
        assert_line --regexp "$dflt"
        # Defaults are the rule, not one line: most option lines that take a value show one.
        (($(grep -cE '\[[^]]+\]|\(default' <<<"$output") >= 4)) || fail "$prog: few defaults"
        run -0 "$SORTEX_BIN/$prog" --version
        assert_line --index 0 --regexp "^$prog [0-9]+\.[0-9]+\.[0-9]+$"
        assert_line --regexp "^built from commit [0-9a-f]+"
        # The MPI programs under mpirun (two ranks, one line), the others as they are run.
        launch=()
        [[ $prog =~ ^sortex(-xbench|-example)?$ ]] && launch=(mpi 2 -q)
        # shellcheck disable=SC2086 # the command line is words
        run --separate-stderr "${launch[@]}" "$SORTEX_BIN/$prog" $args banana
        assert_equal "$status" 2
        assert_equal "$(printf '%s\n' "$stderr" | grep -c .)" 1
        assert_regex "$stderr" "^$prog: error: "
        [[ $prog == sortex-verify ]] || assert_regex "$stderr" "\\(banana\\)"
        assert_file_not_exists "$OUT"
    done
    assert_equal "$n" 7
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

@test "sortex-localsort refuses an empty item in its lists, as every program's lists do" {
    # The lists of sortex-sched, --sort and sortex-xbench: 35-simulator, 36-sort-model, 60-bench.
    local args
    for args in "--n 1000,,2000" "--n 1000," "--algo ,sortex" "--threads 1,,2" "--dist ''"; do
        # shellcheck disable=SC2086 # the arguments are words
        eval run --separate-stderr "$SORTEX_BIN/sortex-localsort" $args --reps 1
        assert_equal "$status" 2
        assert_equal "$(printf '%s\n' "$stderr" | grep -c .)" 1
        assert_regex "$stderr" "^sortex-localsort: error: --[a-z]+ list has an empty item"
    done
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
        stall_then 'mv "$dir" "$moved"' 3 "$point:0:2" "$SORTEX" --input "$IN" --output "$OUT"
        assert_equal "$rc" 3
        assert_equal "$(ls -A "$moved")" ""
        assert_file_not_exists "$OUT"
    done
}

#!/usr/bin/env bats
# The external sort: inputs larger than the memory a rank may use (--mem-limit of a few MB
# here) sort in two passes through temporary files, with every back-end, format and process
# count, the same bytes as the in-memory sort; a bucket too big for memory takes the extra
# pass; a short or missing temporary directory and a signal in either pass leave nothing
# behind. Every output is checked by the verifier.
bats_require_minimum_version 1.5.0
load helper

ODD_LAYOUT="--record-size 13 --key-offset 3 --key-size 5"

teardown() {
    unmount_small
}

# ext_case NP BACKEND DIST N LIMIT [options]: sort_case in external mode (the stats say so,
# and that the memory limit held: no rank planned for more).
ext_case() {
    local np=$1 backend=$2 dist=$3 n=$4 limit=$5
    shift 5
    sort_case "$np" "$backend" "$dist" "$n" --mem-limit "$limit" --temp-dir "$BATS_TEST_TMPDIR" \
        "$@" || return 1
    [[ $(stat_field 'd["external"]') == True ]] ||
        { echo "not external: P=$np $backend $dist $n" >&2; return 1; }
}

@test "every back-end sorts externally at 1, 2, 3 and 5 ranks, u64 keys" {
    local np backend n=0 list
    list=$(backends)
    for np in 1 2 3 5; do
        for backend in $list; do
            ext_case "$np" "$backend" uniform 600011 1Mi --check
            n=$((n + 1))
        done
    done
    ((n == 4 * $(wc -l <<<"$list") && n >= 36))
}

@test "gensort and an odd layout sort externally and stably, as the in-memory sort does" {
    local np in mem=$BATS_TEST_TMPDIR/mem.bin
    for np in 1 2 3 5; do
        SORT_FORMAT="--format gensort" ext_case "$np" alltoallv gensort 60013 2Mi --check
        SORT_FORMAT=$ODD_LAYOUT ext_case "$np" forward few 120011 512Ki
        in=$(SORT_FORMAT=$ODD_LAYOUT gen_input few 120011 "$np")
        stable_sort_of "$in" "$BATS_TEST_TMPDIR/out.bin" 13 3 5
        # shellcheck disable=SC2086 # the layout flags are words
        mpi "$np" "$SORTEX" --input "$in" --output "$mem" --external never $ODD_LAYOUT
        cmp "$mem" "$BATS_TEST_TMPDIR/out.bin"
    done
}

@test "every distribution sorts externally, none needing the extra pass" {
    local dist n=0 list
    list=$(distributions)
    for dist in $list; do
        ext_case 3 alltoallv "$dist" 300007 1Mi
        assert_equal "$(stat_field 'd["split_buckets"]')" 0
        n=$((n + 1))
    done
    ((n == $(wc -l <<<"$list") && n >= 10))
}

@test "buckets too big for memory are split by an extra pass, with the same result" {
    local np in mem=$BATS_TEST_TMPDIR/mem.bin
    for np in 1 3; do
        # SORTEX_EXT_FILL=400 plans every bucket at four times what pass 2 holds.
        SORTEX_EXT_FILL=400 ext_case "$np" alltoallv zipf 300007 1Mi --check
        (($(stat_field 'd["split_buckets"]') > 0))
        in=$(SORT_FORMAT=$ODD_LAYOUT gen_input few 120011 "$np")
        # shellcheck disable=SC2086 # the layout flags are words
        SORTEX_EXT_FILL=400 SORT_FORMAT=$ODD_LAYOUT ext_case "$np" alltoallv few 120011 512Ki
        (($(stat_field 'd["split_buckets"]') > 0))
        stable_sort_of "$in" "$BATS_TEST_TMPDIR/out.bin" 13 3 5
    done
}

@test "-v and the stats say why the sort ran externally, and count the passes' bytes" {
    local in
    in=$(gen_input uniform 300007 2)
    run --separate-stderr mpi 2 -q "$SORTEX" --input "$in" --output "$BATS_TEST_TMPDIR/o.bin" \
        --mem-limit 1Mi -v --stats "$BATS_TEST_TMPDIR/stats.json"
    assert_success
    assert_regex "$stderr" "external sort: a rank's share needs [0-9.]+ MiB in memory, more than \
the 1.0 MiB it may use \(--mem-limit\)"
    assert_regex "$stderr" "pass 1 read [0-9.]+ MiB, wrote [0-9.]+ MiB; pass 2"
    run -0 "$VERIFY" "$BATS_TEST_TMPDIR/o.bin" --input "$in"
    # Every pass reads and writes the input's bytes once (the sample a little more).
    python3 - "$BATS_TEST_TMPDIR/stats.json" $((300007 * 8)) <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
for i, p in enumerate(d["passes"]):
    for k in ("bytes_read", "bytes_written"):
        total = p[k]["avg"] * d["P"]
        assert n <= total <= 1.05 * n, (i, k, total, n)
assert d["temp_bytes"]["avg"] * d["P"] <= 1.1 * n
PY
    # A share that fits stays in memory and says so.
    run --separate-stderr mpi 2 -q "$SORTEX" --input "$in" --output "$BATS_TEST_TMPDIR/o.bin" -v
    assert_success
    assert_regex "$stderr" "in memory: a rank's share needs"
}

@test "a missing or full temporary directory fails up front with one line and writes nothing" {
    local in out=$BATS_TEST_TMPDIR/o.bin
    in=$(gen_input uniform 300007 2)
    run --separate-stderr mpi 2 -q "$SORTEX" --input "$in" --output "$out" --mem-limit 1Mi \
        --temp-dir "$BATS_TEST_TMPDIR/none"
    assert_equal "$status" 2
    assert_regex "$stderr" "^sortex: error: rank [0-9]: temporary directory does not exist"
    assert_file_not_exists "$out"
    mount_small 1m
    run --separate-stderr mpi 2 -q "$SORTEX" --input "$in" --output "$out" --mem-limit 1Mi \
        --temp-dir "$SMALL"
    assert_equal "$status" 3
    assert_regex "$stderr" "not enough temporary space in $SMALL"
    assert_file_not_exists "$out"
    assert_equal "$(ls -A "$SMALL")" ""
    no_temp_left
}

@test "standard input or output larger than memory is refused: the external sort needs files" {
    local in
    in=$(gen_input uniform 300007 2)
    run --separate-stderr mpi 2 -q "$SORTEX" --io root --input "$in" --output - --mem-limit 1Mi
    assert_equal "$status" 3
    assert_regex "$stderr" "external sort needs files"
    assert_equal "$output" ""
}

@test "a signal in either pass leaves no temporary file and no output" {
    local in point out=$BATS_TEST_TMPDIR/o.bin
    in=$(gen_input uniform 600011 3)
    for point in read-chunk sort-bucket; do
        # The signal goes to every rank of this job (the children of the stalled rank's parent,
        # mpirun): each removes what it made and dies of it. Through mpirun the test would race
        # mpirun's SIGKILL a second later on a busy machine (the README's "Output safety").
        local ranks
        # shellcheck disable=SC2016 # expanded by stall_then's eval
        stall_then 'ranks=$(pgrep -P "$mpirun_pid" | tr "\n" " "); kill -TERM $ranks' \
            "$point:1:30" mpi 3 -q "$SORTEX" --input "$in" \
            --output "$out" --mem-limit 1Mi --temp-dir "$BATS_TEST_TMPDIR"
        [[ -n $ranks ]]
        # shellcheck disable=SC2086 # one pid a word
        wait_gone $ranks
        [[ $rc -ne 0 ]]
        assert_file_not_exists "$out"
        no_temp_left
    done
}

@test "signed and floating keys, two temporary directories, --sync, and no or few keys sort externally" {
    local fmt np in out=$BATS_TEST_TMPDIR/o.bin t2=$BATS_TEST_TMPDIR/t2
    mkdir -p "$t2"
    for fmt in i64 f64; do
        in=$BATS_TEST_TMPDIR/in-$fmt.bin
        "$GEN" --dist uniform --n 300007 --format "$fmt" -o "$in" >/dev/null
        run -0 mpi 3 "$SORTEX" --input "$in" --output "$out" --format "$fmt" --mem-limit 512Ki \
            --temp-dir "$BATS_TEST_TMPDIR" --temp-dir "$t2" --sync --check
        run -0 "$VERIFY" "$out" --input "$in" --format "$fmt"
    done
    : >"$BATS_TEST_TMPDIR/empty.bin"
    "$GEN" --dist uniform --n 2 -o "$BATS_TEST_TMPDIR/two.bin" >/dev/null
    for in in "$BATS_TEST_TMPDIR/empty.bin" "$BATS_TEST_TMPDIR/two.bin"; do
        for np in 1 3; do
            run -0 mpi "$np" "$SORTEX" --input "$in" --output "$out" --external always --check
            run -0 "$VERIFY" "$out" --input "$in"
        done
    done
    no_temp_left
    assert_equal "$(ls -A "$t2")" ""
}

@test "--check proves the external sort's output too, and fails one made out of order" {
    local in out=$BATS_TEST_TMPDIR/o.bin
    in=$(gen_input uniform 300007 3)
    SORTEX_CORRUPT=order:1 run --separate-stderr mpi 3 -q "$SORTEX" --input "$in" \
        --output "$out" --mem-limit 512Ki --check
    assert_equal "$status" 3
    assert_regex "$stderr" "^sortex: error: rank 1: check: the output is out of order"
    assert_file_not_exists "$out"
    no_temp_left
}

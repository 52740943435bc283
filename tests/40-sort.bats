#!/usr/bin/env bats
# The end-to-end sort: every back-end, every distribution, every process count, verified.
# The matrix is driven by the back-end registry (sortex --exchange help) and the datagen list,
# so a new back-end or distribution is tested by adding nothing here.
bats_require_minimum_version 1.5.0
load helper

# Process counts the suite must cover: odd and non-powers of two are where bugs live.
PS=(1 2 3 4 5 7 8)

@test "every distribution is sorted by three back-ends at three process counts" {
    # A Latin walk instead of the full product (which took 150 launches): distribution i goes
    # to back-ends i, i+3 and i+6 (mod their number) at process counts that move with both, so
    # every back-end sorts about a third of the distributions and every distribution meets
    # three back-ends and three process counts. The full product is bench/run's sort suite.
    local dists backends i j b np list
    list=$(distributions)
    mapfile -t dists <<<"$list"
    list=$(backends)
    mapfile -t backends <<<"$list"
    [[ ${#dists[@]} -ge 16 && ${#backends[@]} -ge 9 ]]
    for ((i = 0; i < ${#dists[@]}; i++)); do
        for j in 0 3 6; do
            b=$(((i + j) % ${#backends[@]}))
            np=${PS[$(((i + b + j) % ${#PS[@]}))]}
            sort_case "$np" "${backends[$b]}" "${dists[$i]}" 100003
        done
    done
}

@test "every back-end sorts 0, 1 and P-1 keys, and meets every process count" {
    # Every (back-end, P) pair once, the size walking through 0, 1 and P-1 so that each
    # back-end meets each size at several P and each P meets each size with several back-ends.
    local backend np n k=0 sizes list
    list=$(backends)
    for backend in $list; do
        for np in "${PS[@]}"; do
            sizes=(0 1 $((np - 1)))
            n=${sizes[$((k % 3))]}
            k=$((k + 1))
            sort_case "$np" "$backend" uniform "$n"
        done
    done
}

@test "every back-end sorts 1000 and 2,000,000 keys at odd and even process counts" {
    local backend list
    list=$(backends)
    for backend in $list; do
        sort_case 3 "$backend" uniform 1000
        sort_case 8 "$backend" gaussian 1000
        sort_case 5 "$backend" uniform 2000000
        sort_case 4 "$backend" staggered 2000000
    done
}

@test "duplicate-heavy and skewed inputs stay within the imbalance bound" {
    # Each input at two of the process counts, in turn, so every count meets several inputs.
    local dist np n=100003 i=0 nps=(2 3 7 8)
    for dist in zero few dd rd staggered wr npb; do
        for np in "${nps[$((i % 4))]}" "${nps[$(((i + 1) % 4))]}"; do
            sort_case "$np" alltoallv "$dist" "$n"
            check_balance "$n" "$np"
        done
        i=$((i + 2))
    done
}

@test "all-equal keys are split evenly across the ranks" {
    sort_case 7 alltoallv zero 700000
    run stat_field 'd["imbalance"]'
    assert_success
    python3 -c "import sys; sys.exit(0 if float('$output') <= 1.1 else 1)"
}

@test "the library example sorts in memory, uneven and one-rank-holds-all inputs included" {
    local np
    for np in 1 2 3 5 8; do
        run mpi "$np" "$SORTEX_BIN/sortex-example" --n 20000
        assert_success
        assert_output --partial "ok:"
        run mpi "$np" "$SORTEX_BIN/sortex-example" --n 20000 --seed 7 --one
        assert_success
        assert_output --partial "ok:"
    done
}

@test "counts beyond the MPI int limit take the chunked path and still sort correctly" {
    # A lowered limit makes every message 'too large' for one MPI call.
    SORTEX_INT_LIMIT=1000 sort_case 4 alltoallv uniform 100003
    run stat_field 'd["exchange_stats"]["chunked"]'
    assert_output "1"
    SORTEX_INT_LIMIT=1000 sort_case 3 alltoallv zero 20000
}

@test "-v counts records for a record format, threads in the singular for one, and check only under --check" {
    local in out=$BATS_TEST_TMPDIR/out.bin
    SORT_FORMAT="--format gensort"
    in=$(gen_input gensort 20011 1)
    run --separate-stderr mpi 1 "$SORTEX" -i "$in" -o "$out" --format gensort -t 1 -v
    assert_success
    assert_equal "${stderr_lines[0]}" "sortex: 20011 records, 1 thread per rank, exchange alltoallv"
    refute_regex "$stderr" $'\n  check '
    run -0 "$VERIFY" "$out" --format gensort --input "$in"
    SORT_FORMAT=
    in=$(gen_input uniform 20011 2)
    run --separate-stderr mpi 2 "$SORTEX" -i "$in" -o "$out" -t 2 -v --check
    assert_success
    assert_equal "${stderr_lines[0]}" "sortex: 20011 keys, 2 threads per rank, exchange alltoallv"
    assert_regex "$stderr" $'\n  check +[0-9.]+ +[0-9.]+\n'
    run -0 "$VERIFY" "$out" --input "$in"
}

@test "the README's stats table names every key of the stats file, the back-end's own included" {
    # alltoallv and pairwise, over a lowered int limit: their "chunked" figure is 1.
    local b
    for b in alltoallv pairwise; do
        SORTEX_INT_LIMIT=1000 sort_case 3 "$b" uniform 10007
        run stat_field 'd["exchange_stats"]["chunked"]'
        assert_output 1
        python3 - "$BATS_TEST_TMPDIR/stats.json" "$TOP/README.md" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
readme = open(sys.argv[2]).read()
table = readme[readme.index("### The --stats file"):readme.index("## Running on a real cluster")]
named = set(re.findall(r"`([A-Za-z_0-9.]+)`", table))
keys = set(d) | {k for k in d["exchange_stats"]}
missing = sorted(k for k in keys if k not in named and "exchange_stats." + k not in named)
assert not missing, f"not in the README's stats table: {missing}"
PY
    done
}

@test "the stats file names every phase with min, avg and max over ranks" {
    sort_case 3 alltoallv uniform 100003
    run stat_field '" ".join(sorted(d["phases"]))'
    assert_output "bucket check distribute exchange finish local_sort read sample sort_buckets splitters write"
    run stat_field 'len(d["ranks"]), d["n"], d["P"]'
    assert_output "3 100003 3"
    run stat_field 'all(set(v) == {"min", "avg", "max"} for v in d["phases"].values())'
    assert_output "True"
}

@test "signed and floating-point keys sort in their own order" {
    local in=$BATS_TEST_TMPDIR/f.bin out=$BATS_TEST_TMPDIR/f.out t
    python3 -c "
import struct, random
random.seed(5)
vals = [random.uniform(-1e6, 1e6) for _ in range(5000)] + [0.0, -0.0, 1.5, -1.5]
open('$in', 'wb').write(struct.pack('<%dd' % len(vals), *vals))"
    run mpi 3 "$SORTEX" --input "$in" --output "$out" --type f64
    assert_success
    run "$VERIFY" "$out" --input "$in" --type f64
    assert_success
    python3 -c "
import struct, random
random.seed(6)
vals = [random.randint(-2**63, 2**63 - 1) for _ in range(5000)]
open('$in', 'wb').write(struct.pack('<%dq' % len(vals), *vals))"
    rm -f "$out"
    run mpi 4 "$SORTEX" --input "$in" --output "$out" --type i64
    assert_success
    run "$VERIFY" "$out" --input "$in" --type i64
    assert_success
}

@test "f64 keys sort NaNs of both signs to the ends, -0 before +0, infinities among the numbers" {
    local f=$BATS_TEST_TMPDIR/f64.bin want=$BATS_TEST_TMPDIR/want.bin np io
    local out=$BATS_TEST_TMPDIR/out.bin
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
            rm -f "$out"
            run_mpi "$np" "$SORTEX" --input "$f" --output "$out" --type f64 --io "$io" --check
            assert_success
            cmp "$out" "$want" || fail "P=$np --io $io: not the documented f64 order"
            run "$VERIFY" "$out" --type f64 --input "$f"
            assert_success
        done
    done
    # The f64 order is not the u64 order: read with the wrong type, the verifier refuses it.
    run "$VERIFY" "$want" --type u64
    assert_failure 1
}

@test "every back-end sorts gensort, skewed gensort and an odd layout stably, at every process count" {
    # Each back-end meets each format once, the process count walking through PS. The odd
    # layout (13-byte records, a 5-byte key at offset 3, at most 16 distinct keys) holds many
    # equal keys: besides the verifier, the output must be the stable sort by key.
    local formats=("--format gensort" "--format gensort" "--record-size 13 --key-offset 3 --key-size 5")
    local dists=(gensort gensort-skew few) backend f k=0 np list
    list=$(backends)
    for backend in $list; do
        for f in 0 1 2; do
            np=${PS[$((k % ${#PS[@]}))]}
            k=$((k + 1))
            SORT_FORMAT=${formats[$f]}
            sort_case "$np" "$backend" "${dists[$f]}" 20011
            if [[ $f -eq 2 ]]; then
                stable_sort_of "$(gen_input few 20011 "$np")" "$BATS_TEST_TMPDIR/out.bin" 13 3 5
            fi
        done
    done
    SORT_FORMAT=
}

@test "records with keys over 10 bytes leave in input order whether runs are merged or re-sorted" {
    # 24-byte records, a 16-byte key at offset 2: most keys share their first 10 bytes and
    # differ in the 11th or not at all, so the merge's and the tuples' 10-byte prefixes tie and
    # the rest of the key decides; the payload numbers the records.
    local in=$BATS_TEST_TMPDIR/long.bin out=$BATS_TEST_TMPDIR/long.out np finish
    python3 -c "
import random
random.seed(3)
def key():
    return bytes(10 * [7]) + bytes([random.randrange(3)]) + bytes(5) if random.random() < 0.7 \\
        else random.randbytes(16)
open('$in', 'wb').write(b''.join(b'ab' + key() + i.to_bytes(6, 'little') for i in range(50021)))"
    for np in 3 5; do
        for finish in merge sort; do
            rm -f "$out"
            run -0 mpi "$np" "$SORTEX" --input "$in" --output "$out" --record-size 24 \
                --key-offset 2 --key-size 16 --finish "$finish" --threads 2 \
                --stats "$BATS_TEST_TMPDIR/stats.json"
            run -0 "$VERIFY" "$out" --input "$in" --record-size 24 --key-offset 2 --key-size 16
            stable_sort_of "$in" "$out" 24 2 16
            run stat_field 'd["finish"]'
            assert_output "$finish"
        done
    done
}

@test "records: all-equal keys split evenly, --check proves them, and a moved payload is caught" {
    local in=$BATS_TEST_TMPDIR/eq.bin out=$BATS_TEST_TMPDIR/eq.out
    python3 -c "
import sys
open('$in', 'wb').write(b''.join(b'\x07' * 4 + i.to_bytes(9, 'little') for i in range(70001)))"
    run mpi 7 "$SORTEX" --input "$in" --output "$out" --record-size 13 --key-size 4 --check \
        --stats "$BATS_TEST_TMPDIR/stats.json"
    assert_success
    run "$VERIFY" "$out" --input "$in" --record-size 13 --key-size 4
    assert_success
    # Equal keys: the output is the input itself (stable), split within the balance bound.
    cmp "$in" "$out"
    check_balance 70001 7
    run stat_field 'd["key_type"], d["record_size"]'
    assert_output "layout 13"
    # The self-check catches a record whose payload the sort would have lost.
    rm -f "$out"
    SORTEX_CORRUPT=keys:1 run mpi 3 "$SORTEX" --input "$in" --output "$out" --record-size 13 \
        --key-size 4 --check
    assert_failure 3
    assert_output --partial "not a permutation of the input"
    assert_file_not_exists "$out"
}

@test "bad record layouts get exit 2, one line and no output" {
    local in=$BATS_TEST_TMPDIR/r.bin args
    head -c 1299 /dev/zero >"$in"
    while IFS='|' read -r args msg; do
        # shellcheck disable=SC2086
        run --separate-stderr mpi 2 "$SORTEX" --input "$in" --output "$BATS_TEST_TMPDIR/o" $args
        assert_failure 2
        [[ $(grep -c 'sortex: error:' <<<"$stderr") -eq 1 && $stderr == *"$msg"* ]] ||
            { echo "args: $args: $stderr" >&2; return 1; }
        assert_file_not_exists "$BATS_TEST_TMPDIR/o"
    done <<'CASES'
--record-size 13|not a multiple of 13 bytes
--record-size 0|--record-size must be at least 1 byte
--record-size 10 --key-offset 5 --key-size 8|the key reaches past the record
--record-size 10 --key-size 0|--key-size
--record-size 1Gi|--record-size
--format gensort --io root|not a multiple of 100 bytes
--record-size 13 --io rootv|not a multiple of 13 bytes
CASES
}

#!/usr/bin/env bats
# tests/21-verify-records.bats: sortex-verify on records of a byte-key format. Its valsort
# figures (Records, Checksum, Duplicate keys, the unordered messages) against what valsort 1.5
# printed for the files gensort 1.5 wrote (tests/data/gensort, used as they are), the
# multiset proof over whole records, and the layout errors.

bats_require_minimum_version 1.5.0
load helper

# gensort 1.5's own files are part of the tree; SORTEX_GENSORT_TESTDATA points elsewhere.
TESTDATA=${SORTEX_GENSORT_TESTDATA:-$TOP/tests/data/gensort}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# The test files with the checksum gensort -c printed for each (their README).
FILES=(
    "bin-0-1000.dat 1000 1ea6370b955"
    "bin-2p40-100.dat 100 367b27f096"
    "skew-0-1000.dat 1000 1e96301166b"
    "skew-5M-100.dat 100 3392bae802"
    "ascii-0-1000.dat 1000 1f5dfb3631a"
)

# sort_records IN OUT [R O K]: IN's records sorted by key with Python's stable sort; prints the
# number of adjacent equal keys in OUT (valsort's duplicate keys).
sort_records() {
    python3 - "$@" <<'PY'
import sys
src, dst = sys.argv[1:3]
r, o, k = map(int, sys.argv[3:6]) if len(sys.argv) > 3 else (100, 0, 10)
data = open(src, "rb").read()
recs = sorted((data[i:i + r] for i in range(0, len(data), r)), key=lambda x: x[o:o + k])
open(dst, "wb").write(b"".join(recs))
print(sum(recs[i - 1][o:o + k] == recs[i][o:o + k] for i in range(1, len(recs))))
PY
}

@test "gensort 1.5's five reference files are there, each of its size" {
    local f name n sum
    for f in "${FILES[@]}"; do
        read -r name n sum <<<"$f"
        [[ -f $TESTDATA/$name ]] || fail "missing gensort test file $TESTDATA/$name"
        assert_equal "$(stat -c %s "$TESTDATA/$name")" $((n * 100))
    done
}

@test "prints valsort's figures for gensort's files sorted by key, equal to valsort's own" {
    for f in "${FILES[@]}"; do
        read -r name n sum <<<"$f"
        echo "file $name"
        dups=$(sort_records "$TESTDATA/$name" sorted.dat)
        run -0 "$VERIFY" sorted.dat --format gensort --input "$TESTDATA/$name"
        # valsort's four lines come first, in its words and order.
        assert_equal "${lines[0]}" "Records: $n"
        assert_equal "${lines[1]}" "Checksum: $sum"
        assert_equal "${lines[2]}" "Duplicate keys: $dups"
        assert_equal "${lines[3]}" "SUCCESS - all records are in order"
        assert_line --regexp '^multiset: +ok'
        assert_line --regexp '^verdict: +valid$'
    done
    # What valsort printed for bin-0-1000.dat sorted by key (the test files' README).
    sort_records "$TESTDATA/bin-0-1000.dat" sorted.dat >/dev/null
    run -0 "$VERIFY" sorted.dat --format gensort
    assert_equal "$(printf '%s\n' "${lines[@]:0:4}")" "$(printf '%s\n' "Records: 1000" \
        "Checksum: 1ea6370b955" "Duplicate keys: 0" "SUCCESS - all records are in order")"
}

@test "prints valsort's messages for the unsorted file, with exit 1" {
    run -1 "$VERIFY" "$TESTDATA/bin-0-1000.dat" --format gensort
    assert_equal "$(printf '%s\n' "${lines[@]:0:4}")" "$(printf '%s\n' \
        "First unordered record is record 2" "Records: 1000" "Checksum: 1ea6370b955" \
        "ERROR - there are 483 unordered records")"
    assert_line --regexp '^order: +FAILED at record 2: key\[1\] = 95e0e48262b3edfe0447 > key\[2\] = [0-9a-f]{20} \(483 descents in all\)$'
    assert_line --regexp '^verdict: +INVALID$'
    refute_line --partial "Duplicate keys"
}

@test "reports the same figures for any thread count and block size" {
    # 50 distinct keys in 5000 records: duplicates are counted across block boundaries too.
    "$GEN" --dist zipf --domain 50 --n 5000 --format gensort -o zipf.dat
    dups=$(sort_records zipf.dat sorted.dat)
    ((dups >= 4950))
    for t in 1 2; do
        for b in 8 104 800 4Ki 512Ki; do
            echo "threads $t block $b"
            run -0 "$VERIFY" sorted.dat --format gensort -t "$t" -b "$b" --json
            assert_equal "$(json_get order.duplicates <<<"$output")" "$dups"
            run -1 "$VERIFY" "$TESTDATA/skew-0-1000.dat" --format gensort -t "$t" -b "$b" --json
            assert_equal "$(json_get order.first_bad <<<"$output")" \
                "$(python3 - "$TESTDATA/skew-0-1000.dat" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
k = [d[i:i + 10] for i in range(0, len(d), 100)]
print(next(i for i in range(1, len(k)) if k[i - 1] > k[i]))
PY
)"
            assert_equal "$(json_get sorted.checksum <<<"$output")" 1e96301166b
        done
    done
}

@test "catches a payload swapped between two records: the order and valsort's count still pass" {
    sort_records "$TESTDATA/bin-0-1000.dat" sorted.dat >/dev/null
    python3 - <<'PY'
d = bytearray(open("sorted.dat", "rb").read())
a, b = 100 * 100, 500 * 100
d[a + 10:a + 100], d[b + 10:b + 100] = d[b + 10:b + 100], d[a + 10:a + 100]
open("swapped.dat", "wb").write(d)
PY
    run -1 "$VERIFY" swapped.dat --format gensort --input "$TESTDATA/bin-0-1000.dat"
    assert_line "Records: 1000"
    assert_line "SUCCESS - all records are in order"
    assert_line --regexp '^multiset: +FAILED: checksum mismatch with the same count \(1000 records\)$'
    assert_line --regexp '^verdict: +INVALID$'
    # The same records, each whole, in another order: accepted.
    run -0 "$VERIFY" sorted.dat --format gensort --input "$TESTDATA/bin-0-1000.dat" --json
    assert_equal "$(json_get multiset.same_checksum <<<"$output")" true
}

@test "--parts checks the boundaries between parts of records" {
    sort_records "$TESTDATA/bin-0-1000.dat" sorted.dat >/dev/null
    head -c 40000 sorted.dat >p0.dat
    : >p1.dat
    tail -c +40001 sorted.dat >p2.dat
    run -0 "$VERIFY" --parts p0.dat p1.dat p2.dat --format gensort --input "$TESTDATA/bin-0-1000.dat"
    assert_line "Records: 1000"
    assert_line "Checksum: 1ea6370b955"
    run -1 "$VERIFY" --parts p2.dat p1.dat p0.dat --format gensort
    assert_line "First unordered record is record 600"
    assert_line "ERROR - there are 1 unordered records"
    assert_line --partial "in part 2 (p0.dat), its record 0: the boundary with the previous part"
}

@test "--json reports the format, the records, the duplicates and gensort's checksum" {
    run -1 "$VERIFY" "$TESTDATA/bin-0-1000.dat" --format gensort --input "$TESTDATA/bin-0-1000.dat" --json
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["format"] == {"name": "gensort", "record_size": 100, "key_offset": 0, "key_size": 10}, d
assert d["sorted"]["records"] == 1000 and d["sorted"]["checksum"] == "1ea6370b955", d
assert d["input"]["checksum"] == "1ea6370b955" and d["multiset"]["same_checksum"] is True, d
assert d["order"]["first_bad"] == 2 and d["order"]["descents"] == 483, d
assert d["order"]["duplicates"] == 0 and d["order"]["prev"] == "95e0e48262b3edfe0447", d
assert d["verdict"] == "invalid", d
' "$output"
}

@test "8-byte formats keep their report: no valsort lines" {
    python3 -c 'from array import array; array("Q", range(100)).tofile(open("k.bin", "wb"))'
    run -0 "$VERIFY" k.bin --format u64
    refute_line --partial "Records:"
    assert_line --partial "100 keys, type u64"
}

@test "an odd layout (13-byte records, 5-byte key at offset 3) with many duplicates verifies" {
    "$GEN" --dist zipf --domain 50 --n 20000 --seed 2 --record-size 13 --key-offset 3 \
        --key-size 5 -o odd.dat
    dups=$(sort_records odd.dat sorted.dat 13 3 5)
    ((dups > 19000))
    for t in 1 2; do
        run -0 "$VERIFY" sorted.dat --input odd.dat --record-size 13 --key-offset 3 --key-size 5 \
            -t "$t" -b 64
        assert_line "Records: 20000"
        assert_line "Duplicate keys: $dups"
        assert_line --partial "format layout: 13-byte records, 5-byte key at offset 3"
        assert_line --regexp '^multiset: +ok'
    done
    # The same bytes read as 13-byte records keyed on another offset are not in order.
    run -1 "$VERIFY" sorted.dat --record-size 13 --key-offset 0 --key-size 5
    assert_line --regexp '^ERROR - there are [0-9]+ unordered records$'
}

@test "bad layouts and sizes get exit 2 and one line" {
    head -c 150 "$TESTDATA/bin-0-1000.dat" >x.dat
    local cases=(
        "x.dat --format gensort|sorted file size 150 is not a multiple of 100 bytes (x.dat)"
        "$TESTDATA/bin-0-1000.dat --input x.dat --format gensort|input size 150 is not a multiple of 100 bytes (x.dat)"
        "x.dat --record-size 0|--record-size must be at least 1 byte (0)"
        "x.dat --record-size 10 --key-size 0|--key-size must be at least 1 byte (0)"
        "x.dat --record-size 65537|--record-size is at most 65536 bytes (65537)"
        "x.dat --record-size 13 --key-offset 9 --key-size 5|the key reaches past the record: --key-offset + --key-size > --record-size (9 + 5 > 13)"
        "x.dat --key-offset 3|--key-offset needs --record-size (3)"
        "x.dat --format gensort --record-size 13|--format gensort contradicts the layout flags (--record-size 13 --key-offset 0 --key-size 10)"
    )
    for c in "${cases[@]}"; do
        local args=${c%%|*} want=${c#*|}
        echo "case: $args"
        read -ra argv <<<"$args"
        refused sortex-verify "$want" "$VERIFY" "${argv[@]}"
    done
    # A named format with layout flags that agree is that format; the key defaults to its own.
    run -1 "$VERIFY" "$TESTDATA/bin-0-1000.dat" --format gensort --record-size 100
    assert_line "ERROR - there are 483 unordered records"
    # A size that is a multiple of 50 is fine as 50-byte records.
    run "$VERIFY" x.dat --record-size 50 --key-size 10
    ((status <= 1))
    assert_line "Records: 3"
}

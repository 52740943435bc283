#!/usr/bin/env bats
# tests/11-gensort.bats: sortex-gen's records. The gensort family against files and checksums
# made by gensort 1.5 itself (tests/data/gensort, used as they are) and against an
# independent model of its definition (tests/gensort_model.py); records of the other
# distributions in byte-key formats and layouts; the layout flags.

bats_require_minimum_version 1.5.0
load helper

# gensort 1.5's own files are part of the tree; SORTEX_GENSORT_TESTDATA points elsewhere.
TESTDATA=${SORTEX_GENSORT_TESTDATA:-$TOP/tests/data/gensort}
MODEL=$TOP/tests/gensort_model.py

setup() {
    mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work" || return 1
}

# The test files: name, distribution, first record number, count (their README's commands).
FILES=(
    "bin-0-1000.dat gensort 0 1000"
    "bin-2p40-100.dat gensort 1099511627776 100"
    "skew-0-1000.dat gensort-skew 0 1000"
    "skew-5M-100.dat gensort-skew 5000000 100"
    "ascii-0-1000.dat gensort-ascii 0 1000"
)

# The gensort family: sortex-gen name and the model's name.
FAMILY=("gensort binary" "gensort-skew skew" "gensort-ascii ascii" "gensort-ascii-skew ascii-skew")

# gensort's checksum of FILE (the sum of the crc32 of its records) as sortex-verify reports it.
gensort_checksum() {
    "$VERIFY" "$1" --format gensort --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["sorted"]["checksum"])'
}

@test "gensort 1.5's five reference files are there, each of its size" {
    local f name dist start n
    for f in "${FILES[@]}"; do
        read -r name dist start n <<<"$f"
        [[ -f $TESTDATA/$name ]] || fail "missing gensort test file $TESTDATA/$name"
        assert_equal "$(stat -c %s "$TESTDATA/$name")" $((n * 100))
    done
}

@test "reproduces the five files gensort 1.5 wrote, byte for byte" {
    for f in "${FILES[@]}"; do
        read -r name dist start n <<<"$f"
        echo "file $name"
        run -0 "$GEN" --dist "$dist" --start "$start" --n "$n" -o "$name"
        assert_output ""
        cmp "$name" "$TESTDATA/$name"
    done
    # The README's word on the first record: its key is JimGrayRIP.
    assert_equal "$(head -c 10 bin-0-1000.dat)" JimGrayRIP
}

@test "10^6 records of each kind sum to the checksums gensort -c printed" {
    local want=("gensort 7a0e0d4868cd4" "gensort-skew 79f9a7e6de673" "gensort-ascii 7a19cff467438")
    for w in "${want[@]}"; do
        read -r dist sum <<<"$w"
        echo "dist $dist"
        "$GEN" --dist "$dist" --n 1M -o m.dat
        assert_equal "$(gensort_checksum m.dat)" "$sum"
    done
}

@test "10^7 gensort records (1 GB) sum to the checksum gensort -c printed" {
    "$GEN" --dist gensort --n 10M -o big.dat
    assert_equal "$(stat -c %s big.dat)" 1000000000
    assert_equal "$(gensort_checksum big.dat)" 4c4e32cca7d315
}

@test "writes the same bytes with any --threads and --ranks, from any --start" {
    # 100,003 records span three write blocks of 41,943 records, so two threads share them.
    for f in "${FAMILY[@]}"; do
        read -r dist _ <<<"$f"
        echo "dist $dist"
        "$GEN" --dist "$dist" --n 100003 --start 123456789 --threads 1 -o one.dat
        for tr in "2 1" "2 3" "1 7" "2 64"; do
            read -r t r <<<"$tr"
            "$GEN" --dist "$dist" --n 100003 --start 123456789 --threads "$t" --ranks "$r" \
                --seed 5 -o other.dat
            cmp one.dat other.dat
        done
        # A later start is a later part of the same sequence.
        "$GEN" --dist "$dist" --n 3 --start 123456889 -o part.dat
        cmp part.dat <(tail -c +10001 one.dat | head -c 300)
    done
}

@test "matches an independent model of gensort across record numbers 2^60 and 2^64" {
    # Skewed ASCII has no file from gensort itself; past 2^64 the record number's high half and
    # the skew index's upper rule come into play.
    for f in "${FAMILY[@]}"; do
        read -r dist kind <<<"$f"
        for start in 0 1152921504606846900 18446744073709551500; do
            echo "dist $dist start $start"
            python3 "$MODEL" "$kind" "$start" 200 model.dat
            "$GEN" --dist "$dist" --start "$start" --n 200 -o ours.dat
            cmp model.dat ours.dat
        done
    done
    # The model itself agrees with gensort's own files.
    python3 "$MODEL" skew 5000000 100 model.dat
    cmp model.dat "$TESTDATA/skew-5M-100.dat"
}

@test "--start takes 0 to 2^64-1; the records then run on past 2^64" {
    run -0 "$GEN" --dist gensort-ascii --start 18446744073709551615 --n 2 -o a.dat
    # ASCII records carry their 128-bit number in hex at bytes 12-43.
    assert_equal "$(cut -c 13-44 a.dat | tr -d '\r' | head -2 | tr '\n' ' ')" \
        "0000000000000000FFFFFFFFFFFFFFFF 00000000000000010000000000000000 "
    for bad in 18446744073709551616 -1 1.5 x; do
        run -2 --separate-stderr "$GEN" --dist gensort --start "$bad" --n 2 -o b.dat
        assert_equal "${#stderr_lines[@]}" 1
        assert_equal "${stderr_lines[0]}" \
            "sortex-gen: error: --start needs a record number in 0..2^64-1 ($bad)"
        assert_file_not_exists b.dat
    done
    run -2 --separate-stderr "$GEN" --dist uniform --start 5 --n 2 -o b.dat
    assert_equal "${stderr_lines[0]}" "sortex-gen: error: --start does not apply to this distribution (uniform)"
}

@test "the gensort family implies --format gensort and refuses any other format" {
    "$GEN" --dist gensort --n 10 -o a.dat
    "$GEN" --dist gensort --n 10 --format gensort -o b.dat
    "$GEN" --dist gensort --n 10 --record-size 100 --key-size 10 -o c.dat
    cmp a.dat b.dat
    cmp a.dat c.dat
    run -2 --separate-stderr "$GEN" --dist gensort-skew --n 10 --format u64 -o d.dat
    assert_equal "${#stderr_lines[@]}" 1
    assert_equal "${stderr_lines[0]}" \
        "sortex-gen: error: --dist gensort-skew makes gensort records (it implies --format gensort), not u64"
    run -2 --separate-stderr "$GEN" --dist gensort --n 10 --record-size 100 -o d.dat
    assert_equal "${#stderr_lines[@]}" 1
    [[ ${stderr_lines[0]} == *"not layout: 100-byte records, 100-byte key at offset 0" ]]
    assert_file_not_exists d.dat
}

@test "--list shows the gensort family in its own table after the key distributions" {
    run -0 "$GEN" --list
    for f in "${FAMILY[@]}"; do
        read -r dist _ <<<"$f"
        assert_line --regexp "^$dist +gensort +start=0 +gensort 1\.5's .+"
    done
    # The first table (up to the first blank line) names no record distribution.
    run -0 bash -c "'$GEN' --list | sed '/^\$/q'"
    assert_line --regexp "^npb +no "
    refute_output --partial gensort
}

# layout_keys FILE R O K DIST SEED: checks that FILE's records hold the keys of DIST (made with
# the same seed as u64 keys) by the recipe of datagen/README.md: the key big-endian, cut at K
# bytes or padded by a function of the key; payloads all different when R - K >= 8.
layout_keys() {
    local file=$1 r=$2 o=$3 k=$4 dist=$5 seed=$6
    "$GEN" --dist "$dist" --n 5000 --seed "$seed" -o keys.bin
    python3 - "$file" "$r" "$o" "$k" keys.bin <<'PY'
import sys
from array import array
path, r, o, k, kp = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]
data, keys = open(path, "rb").read(), array("Q", open(kp, "rb").read())
assert len(data) == r * len(keys), (len(data), r, len(keys))
recs = [data[i:i + r] for i in range(0, len(data), r)]
pad = {}
for rec, key in zip(recs, keys):
    kb = rec[o:o + k]
    assert kb[:8] == key.to_bytes(8, "big")[:k], (kb, key)
    assert pad.setdefault(key, kb) == kb  # equal keys, equal key bytes
payloads = {rec[:o] + rec[o + k:] for rec in recs}
assert r - k < 8 or len(payloads) == len(recs), "two payloads are equal"
PY
}

@test "any distribution writes a byte-key layout: keys big-endian, padded or cut, payloads unique" {
    "$GEN" --dist uniform --n 5000 --seed 3 --record-size 24 --key-offset 2 --key-size 19 -o a.dat
    layout_keys a.dat 24 2 19 uniform 3
    "$GEN" --dist few --n 5000 --seed 4 --record-size 30 --key-offset 7 --key-size 12 -o b.dat
    layout_keys b.dat 30 7 12 few 4
    "$GEN" --dist uniform --n 5000 --seed 5 --format gensort -o c.dat
    layout_keys c.dat 100 0 10 uniform 5
    "$GEN" --dist zipf --n 5000 --seed 6 --record-size 16 --key-offset 8 -o d.dat
    layout_keys d.dat 16 8 8 zipf 6
}

@test "an odd layout (13-byte records, 5-byte key at offset 3) is generated and verified" {
    "$GEN" --dist few --n 5000 --seed 7 --record-size 13 --key-offset 3 --key-size 5 -o odd.dat
    layout_keys odd.dat 13 3 5 few 7
    # Sorted by key with a stable sort, it verifies against itself, with valsort's figures.
    python3 - <<'PY'
data = open("odd.dat", "rb").read()
recs = sorted((data[i:i + 13] for i in range(0, len(data), 13)), key=lambda x: x[3:8])
open("sorted.dat", "wb").write(b"".join(recs))
dups = sum(recs[i - 1][3:8] == recs[i][3:8] for i in range(1, len(recs)))
open("dups.txt", "w").write(str(dups))
PY
    run -0 "$VERIFY" sorted.dat --input odd.dat --record-size 13 --key-offset 3 --key-size 5
    assert_line "Records: 5000"
    assert_line "Duplicate keys: $(cat dups.txt)"
    assert_line "SUCCESS - all records are in order"
    assert_line "verdict:   valid"
    # At most 16 distinct keys: nearly every record repeats the key before it.
    (($(cat dups.txt) >= 4984))
}

@test "bad layouts and formats get exit 2, one line and no output" {
    local cases=(
        "--record-size 0|--record-size must be at least 1 byte (0)"
        "--record-size 13 --key-size 0|--key-size must be at least 1 byte (0)"
        "--record-size 70000|--record-size is at most 65536 bytes (70000)"
        "--record-size 13 --key-offset 10 --key-size 5|the key reaches past the record: --key-offset + --key-size > --record-size (10 + 5 > 13)"
        "--record-size 13 --key-offset 13|--key-offset must be below --record-size 13 (13)"
        "--key-size 5|--key-size needs --record-size (5)"
        "--key-offset 5|--key-offset needs --record-size (5)"
        "--record-size x|--record-size needs a number of bytes such as 100 or 4Ki (x)"
        "--format gensort --record-size 13|--format gensort contradicts the layout flags (--record-size 13 --key-offset 0 --key-size 10)"
        "--format nosuch|unknown format, expected one of u64, i64, f64, gensort or a layout (--record-size) (nosuch)"
    )
    for c in "${cases[@]}"; do
        local args=${c%%|*} want=${c#*|}
        echo "case: $args"
        read -ra argv <<<"$args"
        refused sortex-gen "$want" "$GEN" --dist uniform --n 10 "${argv[@]}" -o out.dat
        assert_file_not_exists out.dat
    done
}

#!/usr/bin/env bats
# tests/20-verify.bats: sortex-verify, the checker every end-to-end test ends with.
#
# Small files are written with python3 (array/struct, no numpy) under $BATS_TEST_TMPDIR. Most
# checks run with tiny blocks (-b 64: 8 keys a block) and 1 and 2 threads as well, so that
# block boundaries and the parallel merge are exercised on a 1000-key file.

bats_require_minimum_version 1.5.0
load helper

N=1000

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# gen_sorted FILE N SEED: N random 64-bit keys, sorted, every tenth one a copy of the key
# before it (so equal neighbours are there to be accepted).
gen_sorted() {
    python3 - "$@" <<'EOF'
import random, sys
from array import array
path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
k = sorted(rng.getrandbits(64) for _ in range(n))
for i in range(10, n, 10):
    k[i] = k[i - 1]
a = array('Q', k)
if sys.byteorder == 'big':
    a.byteswap()
with open(path, 'wb') as f:
    a.tofile(f)
EOF
}

# shuffle IN OUT SEED: the keys of IN in a random order.
shuffle() {
    python3 - "$@" <<'EOF'
import random, sys
from array import array
a = array('Q', open(sys.argv[1], 'rb').read())
k = list(a)
random.Random(int(sys.argv[3])).shuffle(k)
with open(sys.argv[2], 'wb') as f:
    array('Q', k).tofile(f)
EOF
}

# mutate IN OUT OP [I]: a copy of IN with one fault. OP: swap (keys I and I+1), inc (key I + 1),
# drop (key I), copy (key I replaced by key I-1), reverse (the whole file).
mutate() {
    python3 - "$@" <<'EOF'
import sys
from array import array
src, dst, op = sys.argv[1:4]
i = int(sys.argv[4]) if len(sys.argv) > 4 else 0
k = list(array('Q', open(src, 'rb').read()))
if op == 'swap':
    k[i], k[i + 1] = k[i + 1], k[i]
elif op == 'inc':
    assert k[i] + 1 < k[i + 1]  # still sorted: only the checksum can see it
    k[i] += 1
elif op == 'drop':
    del k[i]
elif op == 'copy':
    assert k[i - 1] != k[i]
    k[i] = k[i - 1]
elif op == 'reverse':
    k.reverse()
with open(dst, 'wb') as f:
    array('Q', k).tofile(f)
EOF
}

# keys FILE FORMAT VALUES...: writes VALUES as little-endian keys; FORMAT Q (u64), q (i64) or
# d (f64).
keys() {
    python3 - "$@" <<'EOF'
import struct, sys
path, fmt = sys.argv[1:3]
conv = float if fmt == 'd' else int
with open(path, 'wb') as f:
    f.write(b''.join(struct.pack('<' + fmt, conv(v)) for v in sys.argv[3:]))
EOF
}

# key_at FILE I: key I of FILE as an unsigned decimal.
key_at() {
    python3 -c 'import sys; from array import array; print(array("Q", open(sys.argv[1], "rb").read())[int(sys.argv[2])])' "$1" "$2"
}

@test "accepts a correct sort and reports its keys, checksums and verdict" {
    gen_sorted s.bin "$N" 1
    run -0 "$VERIFY" s.bin
    assert_line --partial "$N keys"
    assert_line --regexp '^checksum: +count 1000, xxh3-sum 0x[0-9a-f]{16}, xxh64-sum 0x[0-9a-f]{16}$'
    assert_line --regexp '^verdict: +valid$'
}

@test "accepts a correct sort of its input with 1 and 2 threads and any block size" {
    gen_sorted s.bin "$N" 2
    shuffle s.bin in.bin 7
    for t in 1 2; do
        for b in 8 64 4096 512Ki; do
            run -0 "$VERIFY" s.bin --input in.bin --threads "$t" --block-size "$b"
            assert_line --regexp '^multiset: +ok'
        done
    done
}

@test "rejects a swapped adjacent pair and reports the first bad position and its values" {
    gen_sorted s.bin "$N" 3
    mutate s.bin bad.bin swap 123
    a=$(key_at bad.bin 123)
    b=$(key_at bad.bin 124)
    for t in 1 2; do
        run -1 "$VERIFY" bad.bin --threads "$t" -b 64
        assert_line --partial "FAILED at key 124: key[123] = $a > key[124] = $b"
        assert_line --regexp '^verdict: +INVALID$'
    done
}

@test "rejects one key changed by +1 that stays in order: only the checksum sees it" {
    gen_sorted s.bin "$N" 4
    mutate s.bin bad.bin inc 123
    run -0 "$VERIFY" bad.bin
    run -1 "$VERIFY" bad.bin --input s.bin
    assert_line --regexp '^order: +ok'
    assert_line --partial "checksum mismatch with the same count ($N keys)"
}

@test "rejects one dropped key by its count" {
    gen_sorted s.bin "$N" 5
    mutate s.bin bad.bin drop 500
    run -1 "$VERIFY" bad.bin --input s.bin
    assert_line --partial "count mismatch, 999 sorted keys but $N input keys"
}

@test "rejects a key replaced by a copy of its neighbour, still sorted" {
    gen_sorted s.bin "$N" 6
    mutate s.bin bad.bin copy 123
    run -0 "$VERIFY" bad.bin
    run -1 "$VERIFY" bad.bin --input s.bin -b 64
    assert_line --partial "checksum mismatch with the same count"
}

@test "rejects a reversed file at its first key pair" {
    gen_sorted s.bin "$N" 8
    mutate s.bin bad.bin reverse
    run -1 "$VERIFY" bad.bin --input s.bin
    assert_line --partial "FAILED at key 1: key[0] ="
    assert_line --regexp '^multiset: +ok'
}

@test "reports the same first bad position for any thread count and block size" {
    gen_sorted s.bin "$N" 9
    mutate s.bin bad.bin swap 701
    mutate bad.bin bad2.bin swap 333
    for t in 1 2; do
        for b in 8 16 64 8Ki; do
            run -1 "$VERIFY" bad2.bin --json -t "$t" -b "$b"
            assert_equal "$(json_get order.first_bad <<<"$output")" 334
            assert_equal "$(json_get order.descents <<<"$output")" 2
        done
    done
}

@test "rejects a file whose size is not a multiple of 8, naming size and file, with exit 2" {
    gen_sorted s.bin 10 10
    head -c 77 s.bin >trunc.bin
    run -2 "$VERIFY" trunc.bin
    assert_equal "${#lines[@]}" 1
    assert_output "sortex-verify: error: sorted file size 77 is not a multiple of 8 bytes (trunc.bin)"
    run -2 "$VERIFY" s.bin --input trunc.bin
    assert_output "sortex-verify: error: input size 77 is not a multiple of 8 bytes (trunc.bin)"
}

@test "rejects a missing file, a directory and a missing input with one error line and exit 2" {
    gen_sorted s.bin 10 11
    run -2 "$VERIFY" nope.bin
    assert_output "sortex-verify: error: cannot open sorted file: No such file or directory (nope.bin)"
    mkdir d
    run -2 "$VERIFY" d
    assert_output "sortex-verify: error: sorted file is a directory (d)"
    run -2 "$VERIFY" s.bin --input nope.bin
    assert_output "sortex-verify: error: cannot open input: No such file or directory (nope.bin)"
}

@test "a file that shrinks while it is read is a runtime failure: exit 3 and one line" {
    gen_sorted s.bin 1000 21
    cp s.bin in.bin
    # At verify-read the verifier has checked and opened its files, and holds before reading.
    stall_then 'run -0 grep -c "sortex-verify: rank 0 pid [0-9]* stalling 2 s in verify-read" "$log"
        truncate -s 800 in.bin' verify-read:0:2 "$VERIFY" s.bin --input in.bin
    assert_equal "$rc" 3
    run -0 grep -v stalling "$log"
    assert_output "sortex-verify: error: input shrank while being read (in.bin)"
}

@test "rejects unknown options, bad values and missing arguments with exit 2" {
    gen_sorted s.bin 10 12
    run -2 "$VERIFY" s.bin --bogus
    assert_output "sortex-verify: error: unknown option, see --help (--bogus)"
    run -2 "$VERIFY" s.bin -x
    assert_output --partial "(-x)"
    run -2 "$VERIFY" s.bin --threads 0
    assert_output --partial "--threads"
    run -2 "$VERIFY" s.bin --type u32
    assert_output --partial "u64, i64, f64"
    run -2 "$VERIFY" s.bin --block-size 12
    assert_output --partial "--block-size"
    run -2 "$VERIFY" s.bin --input
    assert_output --partial "needs a value"
    run -2 "$VERIFY"
    assert_output --partial "no sorted file"
    run -2 "$VERIFY" s.bin s.bin
    assert_output "sortex-verify: error: several sorted files need --parts (2 files)"
}

@test "accepts an empty file as a valid sort of an empty input" {
    : >empty.bin
    run -0 "$VERIFY" empty.bin
    run -0 "$VERIFY" empty.bin --input empty.bin --json
    assert_equal "$(json_get sorted.keys <<<"$output")" 0
    gen_sorted s.bin 10 13
    run -1 "$VERIFY" empty.bin --input s.bin
}

@test "--parts verifies files as one sequence, boundaries and empty parts included" {
    gen_sorted s.bin "$N" 14
    shuffle s.bin in.bin 3
    head -c 2400 s.bin >p0.bin
    : >p1.bin
    tail -c +2401 s.bin | head -c 4000 >p2.bin
    tail -c +6401 s.bin >p3.bin
    run -0 "$VERIFY" --parts p0.bin p1.bin p2.bin p3.bin --input in.bin -b 64 -t 2
    assert_line --partial "(4 files, $N keys"
    # Parts out of order: the first fault is the boundary into p0 (key 0 of part 2).
    run -1 "$VERIFY" --parts p2.bin p1.bin p0.bin p3.bin --input in.bin -b 64 -t 2
    assert_line --partial "FAILED at key 500: key[499] = $(key_at p2.bin 499) > key[500] = $(key_at p0.bin 0)"
    assert_line --partial "in part 2 (p0.bin), its key 0: the boundary with the previous part"
    assert_line --regexp '^multiset: +ok'
}

@test "--parts fails on a bad boundary alone and passes on a good one" {
    keys a.bin Q 1 5
    keys b.bin Q 3 9
    keys c.bin Q 5 9
    run -1 "$VERIFY" --parts a.bin b.bin --json
    assert_equal "$(json_get order.first_bad <<<"$output")" 2
    assert_equal "$(json_get order.file <<<"$output")" 1
    assert_equal "$(json_get order.file_index <<<"$output")" 0
    run -0 "$VERIFY" --parts a.bin c.bin
}

@test "--input may be repeated: the inputs are one multiset" {
    gen_sorted s.bin "$N" 15
    shuffle s.bin in.bin 5
    head -c 3000 in.bin >in0.bin
    tail -c +3001 in.bin >in1.bin
    run -0 "$VERIFY" s.bin --input in0.bin --input in1.bin
    assert_line --partial "in0.bin, in1.bin (2 files, $N keys)"
    run -1 "$VERIFY" s.bin --input in0.bin
}

@test "--json prints one object that parses, valid or not" {
    gen_sorted s.bin "$N" 16
    mutate s.bin bad.bin swap 10
    run -0 "$VERIFY" s.bin --input s.bin --json
    assert_equal "${#lines[@]}" 1
    python3 -c 'import json, sys; json.load(sys.stdin)' <<<"$output"
    assert_equal "$(json_get verdict <<<"$output")" valid
    assert_equal "$(json_get multiset.same_checksum <<<"$output")" true
    run -1 "$VERIFY" bad.bin --input s.bin --json
    python3 -c 'import json, sys; json.load(sys.stdin)' <<<"$output"
    assert_equal "$(json_get valid <<<"$output")" false
    assert_equal "$(json_get order.first_bad <<<"$output")" 11
    assert_equal "$(json_get order.key <<<"$output")" "$(key_at bad.bin 11)"
}

@test "orders i64 keys as signed: -1 before 0" {
    keys k.bin q -9223372036854775808 -1 0 7 9223372036854775807
    run -0 "$VERIFY" k.bin --type i64
    run -1 "$VERIFY" k.bin
    keys bad.bin q 0 -1
    run -1 "$VERIFY" bad.bin --type i64
    assert_line --partial "key[0] = 0 > key[1] = -1"
}

@test "orders f64 keys as doubles: -0.5 before 0.25" {
    keys k.bin d -inf -1e300 -0.5 -0.0 0.0 0.25 1e10 inf
    run -0 "$VERIFY" k.bin --type f64
    run -1 "$VERIFY" k.bin
    keys bad.bin d 0.25 -0.5
    run -1 "$VERIFY" bad.bin --type f64 --json
    assert_equal "$(json_get order.prev <<<"$output")" 0.25
    assert_equal "$(json_get order.key <<<"$output")" -0.5
}

@test "the checksum depends on the bytes only, not on --type" {
    keys k.bin q -1 0 7
    sums=()
    for t in u64 i64 f64; do
        run "$VERIFY" k.bin --type "$t" --json
        sums+=("$(json_get sorted.xxh3_sum <<<"$output") $(json_get sorted.xxh64_sum <<<"$output")")
    done
    assert_equal "${sums[0]}" "${sums[1]}"
    assert_equal "${sums[0]}" "${sums[2]}"
}

@test "--help lists every option, its default and the exit codes; --version names the build" {
    run -0 "$VERIFY" --help
    for opt in --input --parts --format --type --record-size --key-offset --key-size --threads \
        --block-size --json --help --version; do
        assert_output --partial -- "$opt"
    done
    assert_output --partial "default: u64"
    assert_output --partial "2  usage error"
    assert_output --partial "3  runtime failure: a read error, a file that changed while it was read"
    run -0 "$VERIFY" --version
    assert_output --partial "sortex-verify"
    assert_output --partial "MPI"
}

@test "the checksum kernels match libxxhash and combine across splits (C unit test)" {
    run_unit test_verify
}

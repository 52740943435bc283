#!/usr/bin/env bats
# tests/10-datagen.bats: sortex-gen, the data generator. Distributions come from --list, so a
# new one is covered by every loop here without a new test.

bats_require_minimum_version 1.5.0
load helper

# Work in a subdirectory: Bats keeps its own files (--separate-stderr) in BATS_TEST_TMPDIR.
setup() {
    mkdir -p "$BATS_TEST_TMPDIR/work" && cd "$BATS_TEST_TMPDIR/work" || return 1
}

teardown() {
    unmount_small
}

# check_keys FILE P < PYTHON: runs the Python code on stdin with the keys of FILE loaded:
# k (all keys), n, P, begin[i] (slice starts, floor(i n/P)), slices[i], and bucket(x), the
# value bucket b of x among P (floor(b 2^64/P) <= x < floor((b+1) 2^64/P)). Fails on assert.
check_keys() {
    python3 -c '
import sys
from array import array
k = array("Q")
with open(sys.argv[1], "rb") as f:
    k.frombytes(f.read())
n, P = len(k), int(sys.argv[2])
begin = [i * n // P for i in range(P + 1)]
slices = [k[begin[i]:begin[i + 1]] for i in range(P)]
def bucket(x):
    return ((x + 1) * P - 1) >> 64
exec(sys.stdin.read())
' "$1" "$2"
}

# Nothing but the expected files in the test directory (no output, no temporary file).
assert_dir_holds() {
    assert_equal "$(ls -A | tr '\n' ' ')" "$*"
}

@test "--list shows every distribution with its seed flag, parameters and recipe" {
    run -0 "$GEN" --list
    for name in uniform gaussian ggroup bucket staggered zero dd rd wr sorted reverse nearly \
        few zipf radix npb; do
        assert_line --regexp "^$name +(yes|no) +[^ ]+ +.+"
    done
    assert_line --regexp "^ggroup .*groups=2"
    assert_line --regexp "^rd .*blocks=32"
}

@test "every distribution writes exactly n keys when P does not divide n" {
    local list d
    list=$(distributions)
    for d in $list; do
        echo "dist $d"
        run -0 "$GEN" --dist "$d" --n 1001 --ranks 3 -o "$d.bin"
        assert_equal "$(nkeys "$d.bin")" 1001
    done
}

@test "every distribution but wr handles fewer keys than ranks; wr refuses them" {
    local list d
    list=$(distributions)
    for d in $list; do
        echo "dist $d"
        if [[ $d == wr ]]; then
            run -2 --separate-stderr "$GEN" --dist wr --n 3 --ranks 5 -o wr.bin
            assert_equal "${#stderr_lines[@]}" 1
            assert_file_not_exists wr.bin
        else
            run -0 "$GEN" --dist "$d" --n 3 --ranks 5 -o "$d.bin"
            assert_equal "$(nkeys "$d.bin")" 3
        fi
    done
}

@test "every distribution writes the same bytes with 1 and 2 threads" {
    # 1,500,001 keys span three write blocks of 2^19 keys, so the two threads share the work.
    local list d
    list=$(distributions)
    for d in $list; do
        echo "dist $d"
        "$GEN" --dist "$d" --n 1500001 --ranks 5 --seed 11 --threads 1 -o one.bin
        "$GEN" --dist "$d" --n 1500001 --ranks 5 --seed 11 --threads 2 -o two.bin
        cmp one.bin two.bin
    done
}

@test "every seeded distribution changes with the seed; the others ignore it" {
    local seeded unseeded d
    seeded=$(distributions yes)
    unseeded=$(distributions no)
    for d in $seeded; do
        echo "seeded $d"
        "$GEN" --dist "$d" --n 1000 --seed 1 -o a.bin
        "$GEN" --dist "$d" --n 1000 --seed 2 -o b.bin
        "$GEN" --dist "$d" --n 1000 --seed 1 -o c.bin
        run -1 cmp -s a.bin b.bin
        cmp a.bin c.bin
    done
    for d in $unseeded; do
        echo "unseeded $d"
        "$GEN" --dist "$d" --n 1000 --seed 1 -o a.bin
        "$GEN" --dist "$d" --n 1000 --seed 2 -o b.bin
        cmp a.bin b.bin
    done
}

@test "zero writes one value n times" {
    "$GEN" --dist zero --n 5000 -o z.bin
    check_keys z.bin 1 <<'PY'
assert n == 5000 and len(set(k)) == 1
PY
}

@test "sorted is non-decreasing and reverse non-increasing" {
    "$GEN" --dist sorted --n 10007 -o s.bin
    "$GEN" --dist reverse --n 10007 -o r.bin
    check_keys s.bin 1 <<'PY'
assert all(k[i] <= k[i + 1] for i in range(n - 1))
PY
    check_keys r.bin 1 <<'PY'
assert all(k[i] >= k[i + 1] for i in range(n - 1))
PY
}

@test "nearly moves about the requested fraction of the keys" {
    "$GEN" --dist nearly --n 10000 --fraction 0.2 -o n.bin
    check_keys n.bin 1 <<'PY'
s = sorted(k)
moved = sum(1 for a, b in zip(k, s) if a != b)
assert 1000 <= moved <= 2000, moved
PY
}

@test "few writes at most k distinct values" {
    for u in 1 5 100; do
        "$GEN" --dist few --n 20000 --unique "$u" -o f.bin
        U=$u check_keys f.bin 1 <<'PY'
import os
u = int(os.environ["U"])
assert len(set(k)) <= u, (len(set(k)), u)
assert len(set(k)) >= min(u, 5)
PY
    done
}

@test "staggered puts rank i's keys in bucket 2i+1 below P/2 and 2(i-P/2) above, for P 1 to 7" {
    for P in 1 2 3 4 5 6 7; do
        "$GEN" --dist staggered --n 1003 --ranks "$P" -o s.bin
        check_keys s.bin "$P" <<'PY'
h = P // 2
for i in range(P):
    want = 2 * i + 1 if i < h else 2 * (i - h)
    assert {bucket(x) for x in slices[i]} == {want}, (P, i, want)
PY
    done
}

@test "bucket-sorted puts part b of every slice in value bucket b, for P 1 to 7" {
    for P in 1 2 3 4 5 6 7; do
        "$GEN" --dist bucket --n 1003 --ranks "$P" -o b.bin
        check_keys b.bin "$P" <<'PY'
for i in range(P):
    m = len(slices[i])
    for t, x in enumerate(slices[i]):
        part = ((t + 1) * P - 1) // m
        assert bucket(x) == part, (P, i, t, part, bucket(x))
PY
    done
}

@test "ggroup puts part k of rank i's slice in bucket (i - i mod g + P/2 + k) mod P" {
    # Any g from 1 to P: a g that does not divide P leaves a smaller last group (datagen/README.md);
    # the default is 2, or 1 on one rank.
    local c g P
    for c in 2:4 2:5 2:8 3:4 4:4 3:8 1:1; do
        g=${c%:*} P=${c#*:}
        if [[ $c == 1:1 ]]; then
            "$GEN" --dist ggroup --n 2000 --ranks 1 -o g.bin
        else
            "$GEN" --dist ggroup --n 2000 --ranks "$P" --groups "$g" -o g.bin
        fi
        G=$g check_keys g.bin "$P" <<'PY'
import os
g = int(os.environ["G"])
for i in range(P):
    m, v = len(slices[i]), (i - i % g + P // 2) % P
    for t, x in enumerate(slices[i]):
        part = ((t + 1) * g - 1) // m
        assert bucket(x) == (v + part) % P, (P, i, t)
PY
    done
}

@test "dd holds log2 n on the first half of the ranks and halves down on the last" {
    "$GEN" --dist dd --n 1024 --ranks 4 -o d.bin
    check_keys d.bin 4 <<'PY'
from collections import Counter
assert set(slices[0]) == set(slices[1]) == {10}
assert set(slices[2]) == {9}
assert Counter(slices[3]) == Counter({8: 128, 7: 64, 6: 32, 5: 16, 4: 8, 3: 4, 2: 2, 1: 1, 0: 1})
PY
}

@test "rd gives each slice at most r values, all below r" {
    "$GEN" --dist rd --n 40000 --ranks 4 --blocks 8 -o r.bin
    check_keys r.bin 4 <<'PY'
for s in slices:
    assert len(set(s)) <= 8 and max(s) < 8
assert len({tuple(s[:50]) for s in slices}) > 1  # the slices differ
PY
}

@test "radix keys share their top B bytes and vary below them" {
    for B in 1 4 7; do
        "$GEN" --dist radix --n 5000 --prefix "$B" -o r.bin
        B=$B check_keys r.bin 1 <<'PY'
import os
B = int(os.environ["B"])
assert len({x >> (64 - 8 * B) for x in k}) == 1
assert len({x & ((1 << (64 - 8 * B)) - 1) for x in k}) > 100
PY
    done
}

@test "zipf keys lie below the domain and 0 is the most frequent" {
    "$GEN" --dist zipf --n 50000 --domain 100 --exponent 1.2 -o z.bin
    check_keys z.bin 1 <<'PY'
from collections import Counter
c = Counter(k)
assert max(k) < 100 and c.most_common(1)[0][0] == 0
PY
}

@test "npb starts with the NAS IS class S reference keys 1585, 825, 1060, 1343" {
    "$GEN" --dist npb --n 64Ki -o s.bin
    run -0 bash -c "od -An -v -tu8 -w8 s.bin | head -4 | tr -s ' \n' ' '"
    assert_output " 1585 825 1060 1343 "
    # The same stream at another size, with MAX_KEY given.
    "$GEN" --dist npb --n 1000 --max-key 2048 -o t.bin
    check_keys t.bin 1 <<'PY'
assert list(k[:4]) == [1585, 825, 1060, 1343] and max(k) < 2048
PY
}

@test "wr drives regular sampling to its worst-case bucket m + P(m/s - 1)" {
    run_unit test_datagen_wr
}

@test "the library fills any range, with any threads, exactly as the file holds it" {
    run_unit test_datagen
}

@test "--type i64 writes the u64 order with the sign bit flipped" {
    "$GEN" --dist uniform --n 1000 -o u.bin
    "$GEN" --dist uniform --n 1000 --type i64 -o i.bin
    python3 -c '
import sys
from array import array
u, i = array("Q"), array("Q")
u.frombytes(open("u.bin", "rb").read())
i.frombytes(open("i.bin", "rb").read())
assert all(a ^ (1 << 63) == b for a, b in zip(u, i)) and len(u) == len(i) == 1000
'
}

@test "counts take K, M, G as powers of ten and Ki, Mi as powers of two" {
    "$GEN" --dist uniform --n 2K -o a.bin
    "$GEN" --dist uniform --n 1Ki -o b.bin
    "$GEN" --dist uniform --n 3e3 -o c.bin
    assert_equal "$(nkeys a.bin) $(nkeys b.bin) $(nkeys c.bin)" "2000 1024 3000"
}

@test "bad options give one error line, exit 2 and no output file" {
    local cases=(
        "--dist nosuch --n 10 -o out.bin"
        "--n 10 -o out.bin"
        "--dist uniform -o out.bin"
        "--dist uniform --n 10"
        "--dist uniform --n 0 -o out.bin"
        "--dist uniform --n abc -o out.bin"
        "--dist uniform --n 12x -o out.bin"
        "--dist uniform --n 99999999999999999999 -o out.bin"
        "--dist uniform --n 20000Pi -o out.bin"
        "--dist uniform --n 2000Pi -o out.bin"
        "--dist uniform --n -5 -o out.bin"
        "--dist uniform --n 10 --seed -1 -o out.bin"
        "--dist uniform --n 10 --seed 18446744073709551616 -o out.bin"
        "--dist uniform --n 10 --seed 1.5 -o out.bin"
        "--dist uniform --n 10 --ranks 0 -o out.bin"
        "--dist uniform --n 10 --ranks -2 -o out.bin"
        "--dist uniform --n 10 --threads 0 -o out.bin"
        "--dist uniform --n 10 --threads many -o out.bin"
        "--dist uniform --n 10 --type u32 -o out.bin"
        "--dist uniform --n 10 --groups 3 -o out.bin"
        "--dist ggroup --n 10 --groups 5 --ranks 4 -o out.bin"
        "--dist ggroup --n 10 --groups 2 --ranks 1 -o out.bin"
        "--dist ggroup --n 10 --groups 0 -o out.bin"
        "--dist nearly --n 10 --fraction 1.5 -o out.bin"
        "--dist nearly --n 10 --fraction -0.1 -o out.bin"
        "--dist zipf --n 10 --exponent 0 -o out.bin"
        "--dist radix --n 10 --prefix 8 -o out.bin"
        "--dist wr --n 100 --ranks 4 --samples 26 -o out.bin"
        "--dist npb --n 10 --max-key 0 -o out.bin"
        "--dist uniform --n 10 --bogus -o out.bin"
        "--dist uniform --n 10 -x -o out.bin"
        "--dist uniform --n 10 -o out.bin extra"
        "--dist uniform --n 10 -o nodir/out.bin"
        "--dist uniform --n 10 -o ."
        "--dist uniform -o out.bin --n"
    )
    for c in "${cases[@]}"; do
        echo "case: $c"
        read -ra args <<<"$c"
        run -2 --separate-stderr "$GEN" "${args[@]}"
        assert_equal "${#stderr_lines[@]}" 1
        [[ ${stderr_lines[0]} == "sortex-gen: error: "* ]]
        assert_output ""
        assert_dir_holds ""
    done
}

@test "an output path beyond PATH_MAX is refused as a name too long, with one line and exit 2" {
    # 2100 directories "d/" (4200 characters), or one directory name past NAME_MAX: a name
    # too long, not a directory that does not exist.
    local deep long
    deep=$(printf 'd/%.0s' $(seq 2100))out.bin
    long=$(printf 'x%.0s' $(seq 300))/out.bin
    run -2 --separate-stderr "$GEN" --dist uniform --n 10 -o "$deep"
    assert_equal "${#stderr_lines[@]}" 1
    [[ ${stderr_lines[0]} == "sortex-gen: error: output name is too long: at most 4095 characters (d/d/"* ]]
    run -2 --separate-stderr "$GEN" --dist uniform --n 10 -o "$long"
    assert_equal "${stderr_lines[*]}" "sortex-gen: error: output name is too long: a directory \
name in it passes the file system's limit ($long)"
    assert_dir_holds ""
}

@test "a write that fails part-way keeps the old output and leaves no temporary file" {
    echo old >out.bin
    # A 1 MiB file size limit: the 8 MB write fails with EFBIG.
    run -3 --separate-stderr bash -c 'ulimit -f 1024 && exec "$0" --dist uniform --n 1M -o out.bin' "$GEN"
    assert_equal "${#stderr_lines[@]}" 1
    [[ ${stderr_lines[0]} == "sortex-gen: error: cannot write output: "* ]]
    assert_equal "$(cat out.bin)" old
    assert_dir_holds "out.bin "
}

@test "a file system without room for the file is a runtime failure: exit 3, one line, no file" {
    # 8 * 10^18 bytes fit on no file system here; then a full one, when a tmpfs can be mounted.
    run -3 --separate-stderr "$GEN" --dist uniform --n 1e18 -o out.bin
    assert_equal "${#stderr_lines[@]}" 1
    [[ ${stderr_lines[0]} == "sortex-gen: error: not enough free space for 8000000000000000000 bytes, "* ]]
    assert_dir_holds ""
    mount_small 256k
    run -3 --separate-stderr "$GEN" --dist uniform --n 1M -o "$SMALL/out.bin"
    assert_equal "${#stderr_lines[@]}" 1
    [[ ${stderr_lines[0]} == "sortex-gen: error: not enough free space for 8000000 bytes, "* ]]
    assert_equal "$(ls -A "$SMALL")" ""
}

@test "a terminating signal removes the temporary file" {
    "$GEN" --dist uniform --n 1Gi --threads 1 -o big.bin 3>&- &
    local pid=$! rc=0
    sleep 0.3
    kill -TERM "$pid"
    wait "$pid" || rc=$?
    assert_equal "$rc" 143
    assert_dir_holds ""
}

@test "--progress reports the written size on stderr" {
    run -0 --separate-stderr "$GEN" --dist uniform --n 1M --progress -o p.bin
    assert_equal "${stderr_lines[-1]%% in *}" "sortex-gen: wrote 8.0 MB"
}

@test "--help names every option with its default, and the exit codes" {
    run -0 "$GEN" --help
    for opt in --dist --n --output --seed --ranks --threads --progress --format --type \
        --record-size --key-offset --key-size --groups --blocks --samples --fraction --unique \
        --exponent --domain --prefix --max-key --start --list --help --version; do
        assert_output --partial -- "$opt "
    done
    assert_output --partial "(default 0)"
    assert_output --partial "exit codes: 0"
}

@test "--version names the version, the commit and the MPI library" {
    run -0 "$GEN" --version
    assert_line --index 0 --regexp '^sortex-gen [0-9]+\.[0-9]+\.[0-9]+$'
    assert_line --regexp '^built from commit [0-9a-f]+'
    assert_output --partial "MPI"
}

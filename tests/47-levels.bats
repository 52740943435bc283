#!/usr/bin/env bats
# The multi-level sort (--levels): the pure rules against brute force, then the sort with 2 and 3
# levels on every back-end and format at 4, 8, 9 and 16 ranks (oversubscribed), each output
# verified and byte for byte the one-level sort's (the order is stable, so there is one right
# output), and every datagen distribution in every format at 16 and 27 ranks; empty ranks, empty
# groups, fewer keys than ranks, groups of unequal size, the bound, the messages, auto and the
# refusals; and the model of the levels (sortex-sched --sort --levels).
# The benchmark's tables of the levels are checked with its model suite, in tests/60-bench.bats.
bats_require_minimum_version 1.5.0
load helper

ODD_LAYOUT="--record-size 13 --key-offset 3 --key-size 5"

# levels_case NP BACKEND DIST N [sortex options...]: sorts the input of DIST and N (made for 16
# ranks whatever NP, so that one input serves every P) on NP ranks and verifies the output (order,
# count, checksum). With a record format ($SORT_FORMAT), where equal keys may carry different
# bytes, the output must also be the bytes of the one-level sort of the same input (alltoallv,
# 4 ranks), made once per input; 8-byte unsigned keys have no other sorted order to compare.
levels_case() {
    local np=$1 backend=$2 dist=$3 n=$4 fmt=${SORT_FORMAT// /}
    shift 4
    local in out=$BATS_TEST_TMPDIR/out.bin ref=$BATS_FILE_TMPDIR/ref-$dist-$n$fmt.bin
    local case="P=$np $backend $dist n=$n $SORT_FORMAT $*"
    in=$(gen_input "$dist" "$n" 16) || return 1
    sort_file "$np" "$backend" "$in" "$out" "$BATS_TEST_TMPDIR/stats.json" "$@" || return 1
    verified "$out" "$in" || { echo "verify failed: $case" >&2; return 1; }
    [[ -n $SORT_FORMAT ]] || return 0
    if [[ ! -f $ref ]]; then
        sort_file 4 alltoallv "$in" "$ref" "$BATS_TEST_TMPDIR/ref.json" --levels 1 || return 1
    fi
    cmp "$ref" "$out" || { echo "not the one-level sort's bytes: $case" >&2; return 1; }
}

@test "the levels' groups, targets and deal hold against brute force, and replayed sorts are stable" {
    run_unit test_levels groups deal targets replay
}

@test "2 and 3 levels sort every format with every back-end at 4, 8, 9 and 16 ranks, as one level does" {
    # One sort a back-end (every back-end runs at each level of its sort), P and the levels
    # walking so that each P meets both 2 and 3 levels, the format (and its input) walking on
    # its own so that each comes twice; every third under --check. auto prices each level's own
    # exchange. Heavier sweeps are the benchmark's (bench/run --suites model).
    local formats=("" "--format i64" "--format f64" "--format gensort" "$ODD_LAYOUT")
    local dists=(staggered uniform gaussian gensort few) nps=(4 8 9 16) list backends i f check
    list=$(backends)
    mapfile -t backends <<<"$list"
    backends+=(auto)
    [[ ${#backends[@]} -ge 10 ]]
    for ((i = 0; i < ${#backends[@]}; i++)); do
        f=$((i % ${#formats[@]}))
        SORT_FORMAT=${formats[$f]}
        check=()
        ((i % 3 == 0)) && check=(--check)
        levels_case "${nps[$((i % 4))]}" "${backends[$i]}" "${dists[$f]}" 30011 \
            --levels $((2 + (i + i / 4) % 2)) "${check[@]}"
    done
    SORT_FORMAT=
}

@test "every datagen distribution in every format: 2 levels on 16 ranks and 3 on 27 are the one-level bytes" {
    # In one job a P: each distribution of the registry that the format holds (gensort's family
    # as gensort records), the L-level sort's records gathered and checked in order, the same
    # records, floor or ceil of n/P a rank, and byte for byte the one-level sort's; the back-end
    # walking through every back-end and auto (tests/unit/test_levels_mpi.c).
    run_unit -np 16 test_levels_mpi levels=2 u64 i64 f64 gensort layout
    run_unit -np 27 test_levels_mpi levels=3 u64 i64 f64 gensort layout
}

@test "records with many equal keys leave in input order through three levels" {
    SORT_FORMAT=$ODD_LAYOUT sort_case 9 pairwise few 20011 --levels 3 --check
    run stable_sort_of "$(SORT_FORMAT=$ODD_LAYOUT gen_input few 20011 9)" \
        "$BATS_TEST_TMPDIR/out.bin" 13 3 5
    assert_success
}

@test "fewer keys than ranks, empty groups and no keys at all sort with levels" {
    # No keys, one key for 9 ranks, and fewer keys than ranks at 16: most groups empty.
    levels_case 9 alltoallv uniform 0 --levels 2
    levels_case 9 hypercube uniform 1 --levels 3
    levels_case 16 sparse uniform 5 --levels 2
    levels_case 16 hypercube uniform 15 --levels 3
}

@test "uneven and empty ranks in memory, one rank holding everything, sort with levels" {
    # sortex-example checks the order, the count and a checksum of what it sorted itself.
    local np l
    for np in 7 9; do
        l=$((np == 7 ? 2 : 3))
        run mpi "$np" "$SORTEX_BIN/sortex-example" --n 3000 --levels "$l"
        assert_success
        assert_output --partial "ok:"
        run mpi "$np" "$SORTEX_BIN/sortex-example" --n 3000 --levels $((5 - l)) --one -x shift
        assert_success
        assert_output --partial "ok:"
    done
}

@test "groups of unequal size: 7, 11 and 13 ranks sort with two and three levels" {
    levels_case 7 alltoallv zipf 50021 --levels 3
    levels_case 11 alltoallv dd 50021 --levels 2
    levels_case 13 pairwise wr 50021 --levels 3
}

# levels_stats P L N: the levels' figures from the last stats file, checked: the levels ran, the
# imbalance (exact shares after the shift when the selection is exact, as auto makes it), every
# rank's messages within 3 L P^(1/L) + log2 P.
levels_stats() {
    python3 - "$BATS_TEST_TMPDIR/stats.json" "$@" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1])); p, l, n = map(int, sys.argv[2:])
assert d["levels"] == l and len(d["level_stats"]) == l, (d["levels"], d["level_stats"])
worst = max(r["n_out"] for r in d["ranks"])
bound = (1 + d["epsilon_bound"]) * n / p + 1
assert worst <= bound, f"a rank holds {worst} > {bound:.1f}"
if d["balance"] == "exact":
    got = [r["n_out"] for r in d["ranks"]]
    assert got == [(r + 1) * n // p - r * n // p for r in range(p)], got
    # Each boundary is off by at most eps n/(2P); a rank sends across both of its own.
    assert d["shifted"]["max"] <= d["epsilon"] * n / p + 1, d["shifted"]
cap = 3 * l * p ** (1 / l) + math.log2(p)
assert d["startups"]["max"] <= cap, f"{d['startups']['max']} messages > {cap:.1f}"
assert sum(s["messages"]["max"] for s in d["level_stats"]) >= d["startups"]["max"] > 0
print(d["imbalance"])
PY
}

@test "levels end in exact shares, all-equal keys included, within 3 L P^(1/L) messages" {
    # The issue's real runs: 16 ranks in 2 levels and 27 in 3, all-equal keys at most 1.01 over
    # the mean (exact shares make it 1), and a skewed input.
    local c np l dist n
    for c in "16 2 zero 400009" "27 3 zero 270007" "16 2 staggered 400009"; do
        read -r np l dist n <<<"$c"
        sort_case "$np" alltoallv "$dist" "$n" --levels "$l"
        run levels_stats "$np" "$l" "$n"
        assert_success
        if [[ $dist == zero ]]; then
            python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 1.01 else 1)" "$output"
        fi
    done
}

@test "exact balance stays exact through the levels, and eps within its bound" {
    local np=11 n=100003
    sort_case "$np" alltoallv dd "$n" --levels 3 --balance exact
    python3 - "$BATS_TEST_TMPDIR/stats.json" "$n" "$np" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n, p = int(sys.argv[2]), int(sys.argv[3])
got = [r["n_out"] for r in d["ranks"]]
want = [(r + 1) * n // p - r * n // p for r in range(p)]
assert got == want, (got, want)
PY
    sort_case "$np" alltoallv staggered "$n" --levels 2 --balance eps --epsilon 0.3
    check_balance "$n" "$np"
}

@test "auto keeps one level on few ranks and -v says which and why" {
    local in out=$BATS_TEST_TMPDIR/o.bin
    in=$(gen_input uniform 100003 8)
    run --separate-stderr mpi 8 "$SORTEX" --input "$in" --output "$out" -v
    assert_success
    assert_regex "$stderr" "levels 1, auto: "
    run --separate-stderr mpi 4 "$SORTEX" --input "$in" --output "$out" -v --levels 2
    assert_success
    assert_regex "$stderr" "levels 2 \(groups 2 x 2\)"
    assert_regex "$stderr" "level 1: 2 groups"
}

@test "--levels out of range, or with the regular sample, is refused with exit 2 and one line" {
    # The values themselves are the command-line table's (tests/unit/test_cli.c).
    local in
    in=$(gen_input uniform 1000 2)
    refused sortex "--levels must be auto, 1, 2, 3 or 4 (5)" \
        mpi 2 -q "$SORTEX" --input "$in" --output "$BATS_TEST_TMPDIR/o.bin" --levels 5
    run -2 --separate-stderr mpi 2 -q "$SORTEX" --input "$in" --output "$BATS_TEST_TMPDIR/o.bin" \
        --levels 2 --balance sample
    one_error_line "more than one level takes the histogram selection"
    assert_file_not_exists "$BATS_TEST_TMPDIR/o.bin"
}

# The model of the levels (sortex-sched --sort --levels).
SCHED=$SORTEX_BIN/sortex-sched

@test "the model predicts every level to 262144 ranks in seconds, finite for every pattern" {
    local pattern start
    for pattern in bucket uniform staggered; do
        start=$SECONDS
        run --separate-stderr "$SCHED" --sort --ranks 64,65536,262144 --n-per-rank 1M \
            --pattern "$pattern" --levels auto --csv
        assert_success
        ((SECONDS - start < 60)) || fail "$pattern took $((SECONDS - start)) s"
        python3 - "$output" <<'PY'
import csv, io, math, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
for p in ("64", "65536", "262144"):
    total = [r for r in rows if r["P"] == p and r["phase"] == "total"]
    assert len(total) == 1 and math.isfinite(float(total[0]["seconds"])), (p, total)
    each = [float(r["seconds"]) for r in rows if r["P"] == p and r["phase"].startswith("total:L")]
    assert len(each) == 4 and all(math.isfinite(t) for t in each), (p, each)
    assert float(total[0]["seconds"]) == min(each), (p, total, each)
    levels = [r for r in rows if r["P"] == p and r["phase"].startswith("level")]
    assert len(levels) >= 1, (p, "no level rows")
PY
    done
}

@test "the model keeps one level on 8 ranks, ties it at 64, and at 65536 the best L beats one level twice over" {
    run --separate-stderr "$SCHED" --sort --ranks 8,64,65536,262144 --n-per-rank 1M \
        --levels auto --csv
    assert_success
    python3 - "$output" <<'PY'
import csv, io, math, sys, re
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
def get(p, phase):
    return [r for r in rows if r["P"] == p and r["phase"] == phase][0]
assert get("8", "total:L1")["note"] == "the cheapest", get("8", "total:L1")
# At 64 ranks the sort keeps one level by rule; the model has it within 5% of the cheapest L.
one, best = float(get("64", "total:L1")["seconds"]), float(get("64", "total")["seconds"])
assert one <= 1.05 * best, (one, best)
for p in ("65536", "262144"):
    one, best = float(get(p, "total:L1")["seconds"]), float(get(p, "total")["seconds"])
    assert best <= 0.5 * one, (p, best, one)
    note = get(p, "total")["note"]
    levels = int(re.search(r"levels=(\d+)", note).group(1))
    startups = int(re.search(r"startups=(\d+)", note).group(1))
    select = int(re.search(r"select_bytes=(\d+)", note).group(1))
    assert startups <= 3 * levels * int(p) ** (1 / levels) + math.log2(int(p)), (p, note)
    assert select <= 16 << 20, (p, note)
PY
}

@test "the sort's --levels auto takes the model's cheapest L, or one within 20% of it, beyond 64 ranks" {
    # 1024 ranks at one size: its groups are priced on their count matrices, every back-end's,
    # which takes the model seconds a size.
    local out
    run --separate-stderr "$SCHED" --sort --ranks 64,256,4096,16384,65536,262144 \
        --n-per-rank 100K,1M,10M --levels auto
    assert_success
    out=$output
    run --separate-stderr "$SCHED" --sort --ranks 1024 --n-per-rank 100K --levels auto
    assert_success
    python3 - "$out$output" <<'PY'
import re, sys
cases = re.findall(r"P = (\d+),.*\n(?:.*\n)*?  every L: (.*?); the sort's --levels auto runs L=(\d)",
                   sys.argv[1])
assert len(cases) == 19, len(cases)
for p, totals, rule in cases:
    t = [float(x) for x in re.findall(r"L=\d ([0-9.e+-]+) ms", totals)]
    assert len(t) == 4, totals
    if int(p) <= 64:
        assert rule == "1", (p, rule)  # one level up to 64 ranks, by rule
    else:
        # The rule's closed form (sort_levels_price()) prices start-ups at alpha where the
        # model prices each back-end with its fitted factors: at 1024 ranks and 10^5 keys a
        # rank it takes 3 levels at 1.17 times the model's 2 on the built-in machine (the
        # closed form prices 2 and 3 levels within 1% of each other there).
        assert t[int(rule) - 1] <= 1.2 * min(t), (p, totals, rule)
PY
}

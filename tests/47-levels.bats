#!/usr/bin/env bats
# The multi-level sort (--levels): the pure rules against brute force, then the sort with 2 and 3
# levels on every back-end and format at 4, 8, 9 and 16 ranks (oversubscribed), each output
# verified and byte for byte the one-level sort's (the order is stable, so there is one right
# output); empty ranks, empty groups, fewer keys than ranks, groups of unequal size, the bound,
# the messages, auto and the refusals.
bats_require_minimum_version 1.5.0
load helper

ODD_LAYOUT="--record-size 13 --key-offset 3 --key-size 5"

# levels_case NP BACKEND DIST N [sortex options...]: sort_case, then the output must be the
# bytes of the one-level sort of the same input (alltoallv), computed once per input.
levels_case() {
    local np=$1 backend=$2 dist=$3 n=$4 fmt=${SORT_FORMAT// /}
    shift 4
    local ref=$BATS_FILE_TMPDIR/ref-$dist-$n-$np$fmt.bin
    if [[ ! -f $ref ]]; then
        sort_case "$np" alltoallv "$dist" "$n" --levels 1 || return 1
        cp "$BATS_TEST_TMPDIR/out.bin" "$ref"
    fi
    sort_case "$np" "$backend" "$dist" "$n" "$@" || return 1
    cmp "$ref" "$BATS_TEST_TMPDIR/out.bin" ||
        { echo "not the one-level sort's bytes: P=$np $backend $dist n=$n $SORT_FORMAT $*" >&2; return 1; }
}

@test "the levels' groups, targets and deal hold against brute force, and replayed sorts are stable" {
    run_unit test_levels groups deal targets replay
}

@test "2 and 3 levels sort every format with every back-end at 4, 8, 9 and 16 ranks, as one level does" {
    # A Latin walk over (back-end, P): the levels alternate, and the format and the input move
    # with both, so every back-end meets both levels, every P and most formats, and every
    # format every P; a third run under --check. auto prices each level's own exchange.
    local formats=("" "--format i64" "--format f64" "--format gensort" "$ODD_LAYOUT")
    local dists=(staggered uniform gaussian gensort few) nps=(4 8 9 16) list backends i j f check
    list=$(backends)
    mapfile -t backends <<<"$list"
    backends+=(auto)
    [[ ${#backends[@]} -ge 10 ]]
    for ((i = 0; i < ${#backends[@]}; i++)); do
        for ((j = 0; j < ${#nps[@]}; j++)); do
            f=$(((i + 2 * j) % ${#formats[@]}))
            SORT_FORMAT=${formats[$f]}
            check=()
            (((i + j) % 3 == 0)) && check=(--check)
            levels_case "${nps[$j]}" "${backends[$i]}" "${dists[$f]}" 30011 \
                --levels $((2 + (i + j) % 2)) "${check[@]}"
        done
    done
    SORT_FORMAT=
}

@test "records with many equal keys leave in input order through three levels" {
    SORT_FORMAT=$ODD_LAYOUT sort_case 9 pairwise few 20011 --levels 3 --check
    run stable_sort_of "$(SORT_FORMAT=$ODD_LAYOUT gen_input few 20011 9)" \
        "$BATS_TEST_TMPDIR/out.bin" 13 3 5
    assert_success
}

@test "fewer keys than ranks, empty groups and no keys at all sort with levels" {
    local n np sizes
    for np in 9 16; do
        sizes=(0 1)
        [[ $np -eq 16 ]] && sizes=(5 15)
        for n in "${sizes[@]}"; do
            levels_case "$np" alltoallv uniform "$n" --levels 2
            levels_case "$np" hypercube uniform "$n" --levels 3
        done
    done
}

@test "uneven and empty ranks in memory, one rank holding everything, sort with levels" {
    local np l
    for np in 4 7 9; do
        for l in 2 3; do
            run mpi "$np" "$SORTEX_BIN/sortex-example" --n 3000 --levels "$l"
            assert_success
            assert_output --partial "ok:"
            run mpi "$np" "$SORTEX_BIN/sortex-example" --n 3000 --levels "$l" --one -x shift
            assert_success
            assert_output --partial "ok:"
        done
    done
}

@test "groups of unequal size: 7, 11 and 13 ranks sort with two and three levels" {
    local np l i=0 dists=(uniform zipf staggered dd rd wr)
    for np in 7 11 13; do
        for l in 2 3; do
            levels_case "$np" alltoallv "${dists[$((i % 6))]}" 50021 --levels "$l"
            i=$((i + 1))
        done
    done
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
    local dist
    for dist in zero uniform staggered; do
        sort_case 16 alltoallv "$dist" 400009 --levels 2
        run levels_stats 16 2 400009
        assert_success
        if [[ $dist == zero ]]; then
            python3 -c "import sys; sys.exit(0 if float('$output') <= 1.01 else 1)"
        fi
        sort_case 27 alltoallv "$dist" 270007 --levels 3
        run levels_stats 27 3 270007
        assert_success
        if [[ $dist == zero ]]; then
            python3 -c "import sys; sys.exit(0 if float('$output') <= 1.01 else 1)"
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
    local in
    in=$(gen_input uniform 1000 2)
    local bad
    for bad in 0 5 two; do
        run --separate-stderr mpi 2 -q "$SORTEX" --input "$in" --output "$BATS_TEST_TMPDIR/o.bin" \
            --levels "$bad"
        assert_equal "$status" 2
        assert_regex "$stderr" "--levels must be auto, 1, 2, 3 or 4"
    done
    run --separate-stderr mpi 2 -q "$SORTEX" --input "$in" --output "$BATS_TEST_TMPDIR/o.bin" \
        --levels 2 --balance sample
    assert_equal "$status" 2
    assert_regex "$stderr" "more than one level takes the histogram selection"
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

@test "the model keeps one level to 64 ranks, and at 65536 the best L beats one level twice over" {
    run --separate-stderr "$SCHED" --sort --ranks 8,64,65536,262144 --n-per-rank 1M \
        --levels auto --csv
    assert_success
    python3 - "$output" <<'PY'
import csv, io, math, sys, re
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
def get(p, phase):
    return [r for r in rows if r["P"] == p and r["phase"] == phase][0]
for p in ("8", "64"):
    assert get(p, "total:L1")["note"] == "the cheapest", (p, get(p, "total:L1"))
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

@test "the sort's --levels auto takes the model's cheapest L, or one within 10% of it, beyond 64 ranks" {
    run --separate-stderr "$SCHED" --sort --ranks 64,256,1024,4096,16384,65536,262144 \
        --n-per-rank 100K,1M,10M --levels auto
    assert_success
    python3 - "$output" <<'PY'
import re, sys
cases = re.findall(r"P = (\d+),.*\n(?:.*\n)*?  every L: (.*?); the sort's --levels auto runs L=(\d)",
                   sys.argv[1])
assert len(cases) == 21, len(cases)
for p, totals, rule in cases:
    t = [float(x) for x in re.findall(r"L=\d ([0-9.e+-]+) ms", totals)]
    assert len(t) == 4, totals
    if int(p) <= 64:
        assert rule == "1", (p, rule)  # one level up to 64 ranks, by rule
    else:
        assert t[int(rule) - 1] <= 1.1 * min(t), (p, totals, rule)
PY
}

@test "bench/run's model suite tabulates the levels from the model and measures them, and the page shows both" {
    local res=$BATS_TEST_TMPDIR/results
    run "$TOP/bench/run" --smoke --suites model --results "$res" --no-plots
    assert_success
    run python3 "$TOP/bench/report.py" model "$res"
    assert_success
    python3 - "$res" "$SORTEX_BIN/sortex-sched" <<'PY'
import csv, subprocess, sys
res, sched = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(res + "/model/levels.csv")))
assert {r["levels"] for r in rows} == {"one", "1", "2", "3", "4"}, {r["levels"] for r in rows}
assert {r["P"] for r in rows} == {"64", "4096", "65536"}
# The table is sortex-sched's own output.
out = subprocess.run([sched, "--sort", "--ranks", "65536", "--n-per-rank", "1000000", "--dist",
                      "uniform", "--epsilon", "0.1", "--threads", "1", "--machine",
                      res + "/model/machine.txt", "--csv", "--levels", "2", "--exchange", "auto"],
                     capture_output=True, text=True, check=True).stdout
direct = [r for r in csv.DictReader(out.splitlines()) if r["phase"] == "total"]
mine = [r for r in rows if (r["levels"], r["P"], r["phase"]) == ("2", "65536", "total")]
assert [r["seconds"] for r in mine] == [r["seconds"] for r in direct], (mine, direct)
v = list(csv.DictReader(open(res + "/model/levels-validation.csv")))
assert {(r["P"], r["levels_asked"]) for r in v} == {("4", "2"), ("4", "1")}, v
total = [r for r in v if r["phase"] == "total" and r["levels_asked"] == "2"][0]
assert total["ratio"] and total["measured_startups"] and total["predicted_startups"], total
page = open(res + "/model/README.md").read()
for head in ("## Levels: the model alone to P = 65536", "### Goals at n/P = 10^6",
             "## Levels: measured against predicted"):
    assert head in page, head
assert "| 65536 | " in page and "**met**" in page
PY
}

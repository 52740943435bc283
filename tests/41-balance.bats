#!/usr/bin/env bats
# How the splitters are chosen (--balance eps, exact, sample): adversarial inputs through the
# library at every process count up to 16, and the end-to-end sort of skewed files with each
# mode, every output verified and every rank's share checked against the mode's promise.
bats_require_minimum_version 1.5.0
load helper

SCHED=$SORTEX_BIN/sortex-sched

@test "the selection's count, through its index or galloping, is the brute-force count" {
    # Random, few-valued and all-equal keys at every length around the index's stride; the
    # probes a far and a near search take; the price the models give a count.
    run_unit test_count count probes cost
}

@test "every selection keeps its promise on adversarial inputs at 1 to 16 ranks" {
    # Equal keys, two values, one rank holding everything, fewer keys than ranks, empty ranks,
    # one key per rank, skewed amounts, all keys equal but one, no keys: the unit program
    # checks order, the multiset and each mode's bound on every rank.
    local np
    for np in 1 2 3 4 5 7 8 16; do
        run_unit -np "$np" test_select_mpi
        assert_output --partial "exact all-equal: n "
    done
}

@test "exact balance gives every rank floor or ceil of n/P on skewed and duplicate-heavy files" {
    local dist np i=0 nps=(3 5 7 8)
    for dist in zero few zipf staggered dd; do
        np=${nps[$((i % 4))]}
        i=$((i + 1))
        sort_case "$np" alltoallv "$dist" 100003 --balance exact
        python3 - "$BATS_TEST_TMPDIR/stats.json" 100003 "$np" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); p = int(sys.argv[3])
outs = [r["n_out"] for r in d["ranks"]]
assert d["balance"] == "exact", d["balance"]
assert all(n // p <= o <= -(-n // p) for o in outs), outs
PY
    done
}

@test "eps balance keeps every rank within (1+eps) n/P + 1 on skewed files" {
    local dist np i=0 nps=(2 4 7 8)
    for dist in uniform zero zipf staggered wr; do
        np=${nps[$((i % 4))]}
        i=$((i + 1))
        sort_case "$np" alltoallv "$dist" 200003 --epsilon 0.05 --balance eps
        python3 - "$BATS_TEST_TMPDIR/stats.json" 200003 "$np" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); p = int(sys.argv[3])
outs = [r["n_out"] for r in d["ranks"]]
assert d["balance"] == "eps" and d["splitter_rounds"] >= 1, d
assert max(outs) <= n / p + 1 + 0.05 * n / p, outs
PY
    done
}

@test "the regular sample stays available and within its own bound" {
    sort_case 5 alltoallv staggered 100003 --balance sample
    check_balance 100003 5
    run python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["balance"])' \
        "$BATS_TEST_TMPDIR/stats.json"
    assert_output sample
}

@test "a bad --balance is refused with exit 2 and one line" {
    local in
    in=$(gen_input uniform 1000 2)
    run --separate-stderr mpi 2 "$SORTEX" -i "$in" -o "$BATS_TEST_TMPDIR/o.bin" --balance best
    assert_failure 2
    assert_equal "$(grep -c 'sortex: error' <<<"$stderr")" 1
    assert_regex "$stderr" "--balance must be auto, eps, exact or sample \(best\)"
    assert_file_not_exists "$BATS_TEST_TMPDIR/o.bin"
}

@test "--oversample asks for the regular sample, and contradicts --balance eps or exact" {
    local in
    in=$(gen_input uniform 100003 3)
    run --separate-stderr mpi 3 "$SORTEX" -i "$in" -o "$BATS_TEST_TMPDIR/o.bin" --oversample 300 \
        --stats "$BATS_TEST_TMPDIR/s.json"
    assert_success
    run python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["balance"], d["oversample"])' \
        "$BATS_TEST_TMPDIR/s.json"
    assert_output "sample 300"
    run "$VERIFY" "$BATS_TEST_TMPDIR/o.bin" --input "$in"
    assert_success
    rm -f "$BATS_TEST_TMPDIR/o.bin"
    run --separate-stderr mpi 3 "$SORTEX" -i "$in" -o "$BATS_TEST_TMPDIR/o.bin" --oversample 300 \
        --balance exact
    assert_failure 2
    assert_regex "$stderr" "--oversample applies to --balance sample only \(300\)"
    assert_file_not_exists "$BATS_TEST_TMPDIR/o.bin"
}

@test "the simulator's count matrix is the sort's own under every --balance, draw for draw" {
    local case dist p bal in
    for case in uniform:4:eps zero:3:exact staggered:5:eps zipf:7:sample dd:6:auto; do
        IFS=: read -r dist p bal <<<"$case"
        in=$(gen_input "$dist" 30011 "$p")
        mpi "$p" "$SORTEX" -i "$in" -o "$BATS_TEST_TMPDIR/o.bin" --balance "$bal" \
            --stats "$BATS_TEST_TMPDIR/s.json" >/dev/null 2>&1 || fail "sort failed: $case"
        run -0 "$SCHED" --dist "$dist" --n 30011 --ranks "$p" --seed 1 --balance "$bal" --print-matrix
        echo "$output" >"$BATS_TEST_TMPDIR/m.csv"
        python3 - "$BATS_TEST_TMPDIR/m.csv" "$BATS_TEST_TMPDIR/s.json" "$case" <<'PY'
import json, sys
m = [[int(x) for x in l.split(",")] for l in open(sys.argv[1]) if not l.startswith("#")]
d = json.load(open(sys.argv[2]))
cols = [sum(r[j] for r in m) for j in range(len(m))]
assert cols == [r["n_out"] for r in d["ranks"]], (sys.argv[3], cols, d["ranks"])
PY
    done
}

@test "auto takes the regular sample on few ranks and the histogram beyond, in the sort and the model" {
    local in
    in=$(gen_input staggered 100003 8)
    sort_case 8 alltoallv staggered 100003
    run python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["balance"], d["balance_auto"])' \
        "$BATS_TEST_TMPDIR/stats.json"
    assert_output "sample True"
    check_balance 100003 8
    # 16 P S bytes of samples: 1 MiB at about 80 ranks with epsilon 0.1.
    run -0 "$SCHED" --sort --ranks 8,64,128,4096 --n-per-rank 1M --exchange alltoallv --csv
    python3 - "$output" <<'PY'
import csv, io, sys
rows = [r for r in csv.DictReader(io.StringIO(sys.argv[1])) if r["phase"] == "total"]
assert [(r["P"], r["balance"]) for r in rows] == [("8", "sample"), ("64", "sample"),
                                                 ("128", "eps"), ("4096", "eps")], rows
PY
}

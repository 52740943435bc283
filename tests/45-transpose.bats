#!/usr/bin/env bats
# The transpose exchange back-end: its unit test, its bin bounds seen through --stats, its
# steps and large-count path, and output byte-identical to the alltoallv reference and verified
# by sortex-verify, on inputs from sortex-gen.
bats_require_minimum_version 1.5.0
load helper

# Process counts of the bound checks: odd and even, powers of two and not.
TPS=(2 3 4 5 6 7 8)
# Distributions every case runs on: uniform keys, every key equal, and every rank's slice in one
# value bucket that belongs to another rank (sortex-gen's staggered).
TDISTS=(uniform staggered zero)

# bounds_check P: in the last transpose stats, each round's largest bin is within the block
# size it used, and that block within the paper's bound n_max/P + P/2 (round 1) and
# h/P + P/2 (round 2), n_max and h being the most keys a rank sends and receives in a step.
bounds_check() {
    python3 - "$BATS_TEST_TMPDIR/stats.json" "$1" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["exchange_stats"]; p = int(sys.argv[2])
for r, total in (("round1", e["step_n_max"]), ("round2", e["step_h"])):
    big, bound = e[r + "_max_bin"], e[r + "_bound"]
    if not big <= bound <= total / p + p / 2:
        sys.exit(f"{r}: largest bin {big}, block {bound}, paper bound {total / p + p / 2} (P={p})")
if e["padding_bytes"] < 0 or e["rounds"] > e["steps"] + 1:
    sys.exit(f"odd stats: {e}")
PY
}

# transpose_case NP IN [sortex options...]: sorts IN on NP ranks with transpose and with
# alltoallv; both outputs must be byte-identical and IN sorted (sortex-verify); the transpose
# stats are left in $BATS_TEST_TMPDIR/stats.json and its bounds checked. Records of the layout
# $SORT_FORMAT (helper.bash; empty: 8-byte keys) are sorted and verified as such.
transpose_case() {
    local np=$1 in=$2
    shift 2
    local x
    for x in alltoallv transpose; do
        sort_with "$np" "$x" "$in" "$@" || return 1
    done
    cp "$BATS_TEST_TMPDIR/stats-transpose.json" "$BATS_TEST_TMPDIR/stats.json"
    cmp "$BATS_TEST_TMPDIR/out-alltoallv.bin" "$BATS_TEST_TMPDIR/out-transpose.bin" ||
        { echo "transpose and alltoallv differ: P=$np input=$in $*" >&2; return 1; }
    verified "$BATS_TEST_TMPDIR/out-transpose.bin" "$in" ||
        { echo "not sorted: P=$np input=$in $*" >&2; return 1; }
    bounds_check "$np" || { echo "bounds: P=$np input=$in $*" >&2; return 1; }
}

@test "the dealing rule, the bin bounds and the simulated exchange pass their unit test" {
    run_unit test_transpose
}

@test "transpose is listed among the back-ends" {
    run backends
    assert_success
    assert_line transpose
}

@test "transpose sorts like alltoallv and keeps both rounds within their bounds at P = 2..8" {
    # Every input at an odd and the largest P; one input each, in turn, at the others.
    local np dist i=0
    for np in "${TPS[@]}"; do
        for dist in "${TDISTS[@]}"; do
            if [[ $np -eq 3 || $np -eq 8 || $dist == "${TDISTS[$((i % ${#TDISTS[@]}))]}" ]]; then
                transpose_case "$np" "$(gen_input "$dist" 100003 "$np")"
            fi
        done
        i=$((i + 1))
    done
}

@test "transpose moves about twice the data, padding included, on a balanced input" {
    local n=200000
    transpose_case 4 "$(gen_input uniform "$n" 4)"
    # Every key crosses at most twice; padding stays within the sort's imbalance allowance.
    run stat_field '(e["bytes_sent"] - e["padding_bytes"] <= 2 * 8 * d["n"],
               e["padding_bytes"] <= d["epsilon_bound"] * 8 * d["n"]
                                     + 8 * d["P"] ** 3 * e["steps"])'
    assert_output "(True, True)"
}

@test "large exchanges run in steps, each within its own bounds" {
    local np
    for np in 2 5 8; do
        SORTEX_TRANSPOSE_STEP=5000 transpose_case "$np" "$(gen_input uniform 100003 "$np")"
        # One MPI_Alltoall per step carries both rounds (round 1 of the first step goes alone).
        run stat_field '(e["steps"] > 1, e["rounds"] == e["steps"] + 1)'
        assert_output "(True, True)"
    done
    SORTEX_TRANSPOSE_STEP=3000 transpose_case 4 "$(gen_input staggered 100003 4)"
    SORTEX_TRANSPOSE_STEP=1 transpose_case 3 "$(gen_input zero 300 3)"
}

@test "counts beyond the MPI int limit only make the steps smaller, same output" {
    local np
    for np in 3 4 8; do
        # SORTEX_INT_LIMIT counts bytes: 8000 is 1000 keys.
        SORTEX_INT_LIMIT=8000 transpose_case "$np" "$(gen_input uniform 100003 "$np")"
        # Every Alltoall hands MPI at most the limit: P blocks of at most round2_bound keys.
        run stat_field '(e["steps"] >= 10,
                    8 * d["P"] * max(e["round1_bound"], e["round2_bound"]) <= 8000)'
        assert_output "(True, True)"
    done
    # A limit below P(P+1)/2 keys: steps of one key.
    SORTEX_INT_LIMIT=24 transpose_case 5 "$(gen_input staggered 2000 5)"
}

@test "transpose deals whole records: gensort's and 13-byte ones sort like alltoallv, in bounds" {
    # The bounds count records; steps and a lowered limit cut between records, never inside one.
    SORT_FORMAT="--format gensort"
    transpose_case 5 "$(gen_input uniform 20000 5)"
    SORTEX_TRANSPOSE_STEP=3000 SORTEX_INT_LIMIT=20000 \
        transpose_case 3 "$(gen_input staggered 20000 3)"
    run stat_field 'e["steps"] > 1'
    assert_output "True"
    SORT_FORMAT="--record-size 13 --key-offset 3 --key-size 5"
    transpose_case 4 "$(gen_input few 30011 4)"
    SORTEX_INT_LIMIT=2000 transpose_case 7 "$(gen_input uniform 30011 7)"
    run stat_field 'e["steps"] > 1'
    assert_output "True"
}


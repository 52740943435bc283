#!/usr/bin/env bats
# Every registered exchange back-end against the reference, alltoallv: each must sort every input
# to output byte-identical to alltoallv's, and verified by sortex-verify, on uniform, skewed,
# all-equal and few-valued inputs from sortex-gen, with the int limit lowered, with every
# bundle scattered and with blocking rounds. Also runs the two unit programs: the schedules as
# pure functions and the registry's contract, and the exchange contract checked byte by byte
# against alltoallv at P = 1 to 8 on elements of 1, 8, 13 and 100 bytes; and the exchange
# benchmark on 100-byte records.
bats_require_minimum_version 1.5.0
load helper

# The back-ends compared with alltoallv: every other one the registry holds (backends fails
# loudly when it cannot list them; setup refuses a short list, so no loop runs empty).
mapfile -t BACKENDS < <(backends | grep -vx alltoallv)

setup() {
    [[ ${#BACKENDS[@]} -ge 8 ]] || fail "the registry lists only: ${BACKENDS[*]}"
}
PS=(1 2 3 4 5 6 7 8)
# Element sizes beside 8-byte keys: a byte, an odd record, gensort's record. Each P runs keys
# and two of these in turn (the product walked, not multiplied).
ESIZES=(1 13 100)

# The inputs come from sortex-gen (helper.bash's gen_input, cached for the test file): uniform
# (random 64-bit keys), zero (every key the same), staggered (rank r's slice in one value bucket:
# every rank sends nearly all its keys to one other rank) and few (a few distinct values).

# same_as_alltoallv NP IN [sortex options...]: sorts IN with alltoallv, verifies that output
# against IN, then sorts IN with each of BACKENDS and fails naming every back-end whose output
# differs from alltoallv's in any byte (so each is verified too).
same_as_alltoallv() {
    local np=$1 in=$2 backend ref failed=0
    shift 2
    sort_with "$np" alltoallv "$in" "$@" || return 1
    ref=$BATS_TEST_TMPDIR/out-alltoallv.bin
    verified "$ref" "$in" || return 1
    for backend in "${BACKENDS[@]}"; do
        sort_with "$np" "$backend" "$in" "$@" || return 1
        if ! cmp -s "$ref" "$BATS_TEST_TMPDIR/out-$backend.bin"; then
            echo "differs from alltoallv: P=$np exchange=$backend input=$in $*" >&2
            failed=1
        fi
    done
    return "$failed"
}

# reference DIST N NP: sorts sortex-gen's input DIST (gen_input) with alltoallv on NP ranks
# into $BATS_TEST_TMPDIR/ref.bin, verifies it and prints the input's path.
reference() {
    local in
    in=$(gen_input "$1" "$2" "$3") || return 1
    sort_with "$3" alltoallv "$in" || return 1
    mv "$BATS_TEST_TMPDIR/out-alltoallv.bin" "$BATS_TEST_TMPDIR/ref.bin"
    verified "$BATS_TEST_TMPDIR/ref.bin" "$in" || return 1
    echo "$in"
}

# stat_of BACKEND EXPR: stat_field EXPR on that back-end's last stats file (sort_with's).
stat_of() {
    stat_field "$2" "$BATS_TEST_TMPDIR/stats-$1.json"
}

@test "the schedules pair every PE once, route every grid pair and fold the hypercube up to P=64" {
    run_unit test_backends factor shift grid cube
}

@test "exchange/ includes nothing above util/, and only sim/ and bench/ include sim/" {
    run grep -rhoE '^#include "[a-z]+/' "$TOP/exchange"
    assert_success
    refute_output --regexp '"(sort|datagen|verify|sim|bench)/'
    run grep -rlE '^#include "sim/' "$TOP/util" "$TOP/exchange" "$TOP/sort" "$TOP/datagen" \
        "$TOP/verify"
    assert_output ""
}

@test "every registered back-end has a run and a cost model that prices a matrix" {
    run_unit test_backends registry
}

@test "the equal-blocks cost forms price bucket matrices exactly as the models' walks do" {
    run_unit test_backends equal
}

@test "every back-end delivers alltoallv's exact layout, byte for byte, elements of 1 to 100 bytes, at P = 1..8" {
    # No names: every registered back-end, the reference and the scheduled ones included, each
    # also refusing a receive buffer one element short on one rank without leaving a peer
    # waiting. Keys at every P; the other sizes two at a time, in turn, so that each meets odd
    # and even P, powers of two and not.
    local np i=0 sizes
    for np in "${PS[@]}"; do
        sizes=8,${ESIZES[$((i % 3))]},${ESIZES[$(((i + 1) % 3))]}
        run_unit -np "$np" test_backends_mpi sizes="$sizes"
        # Every back-end passed, at every size.
        assert_line --regexp "^test_backends_mpi: $((${#BACKENDS[@]} + 1)) ran, 0 failed"
        [[ $(grep -cE "^[a-z0-9_-]+: P=$np, [0-9]+-byte elements" <<<"$output") -eq \
            $((3 * (${#BACKENDS[@]} + 1))) ]] ||
            fail "not every back-end at every size ($sizes) at P=$np: $output"
        i=$((i + 1))
    done
}

@test "the exchange contract holds with the int limit lowered and every bundle scattered" {
    # SORTEX_INT_LIMIT counts bytes: 8000 is 1000 keys.
    local np
    for np in 3 4 7 8; do
        SORTEX_INT_LIMIT=8000 run_unit -np "$np" test_backends_mpi "${BACKENDS[@]}"
    done
    for np in 2 5 6 8; do
        SORTEX_SCATTER_MIN=0 run_unit -np "$np" test_backends_mpi grid hypercube
    done
    SORTEX_INT_LIMIT=56 SORTEX_SCATTER_MIN=0 run_unit -np 5 test_backends_mpi "${BACKENDS[@]}"
    # Short first messages cut into eager chunks of 8 keys: alone, under a limit they share with
    # messages cut at the limit, and under a limit below them (no eager cut at all).
    for np in 3 8; do
        SORTEX_EAGER_BYTES=64 run_unit -np "$np" test_backends_mpi grid hypercube
    done
    SORTEX_EAGER_BYTES=64 SORTEX_INT_LIMIT=160 run_unit -np 5 test_backends_mpi grid hypercube
    SORTEX_EAGER_BYTES=64 SORTEX_INT_LIMIT=40 run_unit -np 6 test_backends_mpi grid hypercube
    # Scheduled steps one or two at a time (taken only with a core per rank and large pieces,
    # so forced here) as well as all at once.
    for np in 3 5; do
        for w in 1 2; do
            SORTEX_SCHED_LOOKAHEAD=$w run_unit -np "$np" test_backends_mpi direct forward fullduplex
        done
    done
    # Forwarded pieces through a ring that holds one at a time, so every piece waits for the
    # last one to be delivered: with every step in flight and one step at a time.
    for np in 5 7; do
        for w in "" 1; do
            SORTEX_FWD_RING_BYTES=1 SORTEX_SCHED_LOOKAHEAD=$w run_unit -np "$np" \
                test_backends_mpi forward
        done
    done
    # Blocking rounds (taken only with a core per rank, so forced here) and posted ones.
    for np in 3 8; do
        SORTEX_ROUNDS=sync SORTEX_INT_LIMIT=8000 run_unit -np "$np" test_backends_mpi pairwise shift
        SORTEX_ROUNDS=async run_unit -np "$np" test_backends_mpi pairwise shift
    done
}

@test "elements of 13 and 100 bytes cross a lowered int limit in chunks, cut inside elements too" {
    # The limit counts bytes: 1000 bytes are 76 elements of 13 and 10 of 100 bytes per MPI call
    # (the program checks that the chunked paths were taken, and every byte that arrived).
    # Transpose's steps stay within the limit at 13 bytes; at 100 bytes it needs room for P(P+1)/2
    # elements per call, 8000 bytes at P = 7.
    local others=() b
    for b in "${BACKENDS[@]}"; do
        [[ $b == transpose ]] || others+=("$b")
    done
    SORTEX_INT_LIMIT=1000 run_unit -np 4 test_backends_mpi sizes=13,100 "${others[@]}"
    SORTEX_INT_LIMIT=1000 run_unit -np 7 test_backends_mpi sizes=13 "${BACKENDS[@]}"
    SORTEX_INT_LIMIT=8000 run_unit -np 7 test_backends_mpi sizes=100 transpose
    # A limit below the element: chunks of 96 bytes cut every 100-byte element in two, and the
    # receiver puts it together again (transpose never cuts one, so it does not take part).
    SORTEX_INT_LIMIT=96 run_unit -np 3 test_backends_mpi sizes=100 "${others[@]}"
    SORTEX_INT_LIMIT=96 SORTEX_SCATTER_MIN=0 run_unit -np 5 test_backends_mpi \
        sizes=100 grid hypercube
    # Eager first chunks beside limit-cut messages of odd-sized elements.
    SORTEX_EAGER_BYTES=64 SORTEX_INT_LIMIT=150 run_unit -np 5 test_backends_mpi \
        sizes=13,100 grid hypercube
}

@test "with the int limit lowered to 1000 keys every back-end chunks and still matches alltoallv" {
    SORTEX_INT_LIMIT=8000 same_as_alltoallv 4 "$(gen_input uniform 100003 4)"
    run stat_of pairwise 'e["chunked"]'
    assert_output "1"
    # Chunking shows as more messages than pieces: at least n/1000 in all.
    run stat_of grid 'e["messages"] >= 100003 // 1000'
    assert_output "True"
    SORTEX_INT_LIMIT=8000 same_as_alltoallv 7 "$(gen_input staggered 100003 7)"
    SORTEX_INT_LIMIT=8000 same_as_alltoallv 3 "$(gen_input zero 20000 3)"
}

@test "with every bundle scattered and with blocking rounds every back-end matches alltoallv" {
    local np
    for np in 3 5 8; do
        SORTEX_SCATTER_MIN=0 same_as_alltoallv "$np" "$(gen_input uniform 100003 "$np")"
        run stat_of hypercube 'e["scattered_bundles"] > 0'
        assert_output "True"
    done
    SORTEX_ROUNDS=sync same_as_alltoallv 7 "$(gen_input staggered 2000000 7)"
}

@test "the stats show each schedule's rounds and the volume it forwards" {
    same_as_alltoallv 8 "$(gen_input uniform 100003 8)"
    local sent
    sent=$(stat_of alltoallv 'e["bytes_sent"]')
    # Direct schedules: P-1 rounds, the same bytes as alltoallv.
    run stat_of pairwise 'e["rounds"], e["bytes_sent"]'
    assert_output "7 $sent"
    run stat_of shift 'e["rounds"], e["bytes_sent"]'
    assert_output "7 $sent"
    # Grid 2 x 4: two phases; hypercube: log2 8 rounds; both forward, so send more.
    run stat_of grid 'e["rounds"], e["grid_rows"], e["grid_cols"], e["forwarded_bytes"] > 0, '\
'e["bytes_sent"] > '"$sent"
    assert_output "2 2 4 True True"
    run stat_of hypercube 'e["rounds"], e["cube_dim"], e["bytes_sent"] > '"$sent"
    assert_output "3 3 True"
    # Odd P: the 1-factor takes P rounds; the hypercube folds 5 = 4 + 1 in two extra rounds.
    same_as_alltoallv 5 "$(gen_input uniform 100003 5)"
    run stat_of pairwise 'e["rounds"]'
    assert_output "5"
    run stat_of hypercube 'e["rounds"], e["folded_ranks"]'
    assert_output "4 1"
}

@test "forward sends pieces on through helpers and still matches alltoallv, whatever its ring" {
    local np in ring w
    # On dd's matrices under the regular sample's splitters (at P = 5 and 7, 400003 keys)
    # forward's schedule has odd cycles to pair; on uniform ones its packets (h / 8) are one per
    # message and it has none at P = 7. The output is the same file whatever the splitters.
    for np in 5 7; do
        in=$(reference dd 400003 "$np")
        for ring in "" 1 100000; do
            for w in "" 1 2; do
                SORTEX_FWD_RING_BYTES=$ring SORTEX_SCHED_LOOKAHEAD=$w sort_with "$np" forward "$in" \
                    --balance sample
                cmp "$BATS_TEST_TMPDIR/ref.bin" "$BATS_TEST_TMPDIR/out-forward.bin"
                # Helpers forwarded something.
                run stat_of forward 'e["forwarded_bytes"] > 0'
                assert_output "True"
            done
        done
    done
}

@test "the scheduled back-ends join pieces only when every rank agrees, and match alltoallv" {
    local np in b j
    for np in 3 7; do
        in=$(reference dd 400003 "$np")
        for b in direct forward fullduplex; do
            for j in 1 0; do
                SORTEX_SCHED_JOIN=$j sort_with "$np" "$b" "$in"
                cmp "$BATS_TEST_TMPDIR/ref.bin" "$BATS_TEST_TMPDIR/out-$b.bin"
                # Forward's fifths of packets run on at these sizes; nothing joins when told not.
                if [[ $j == 0 || $b == forward ]]; then
                    run stat_of "$b" 'e["joined_pieces"] > 0'
                    assert_output "$([[ $j == 1 ]] && echo True || echo False)"
                fi
            done
        done
    done
    # One rank that will not join: nobody does, and the pieces still match.
    local out=$BATS_TEST_TMPDIR/out-mixed.bin stats=$BATS_TEST_TMPDIR/stats-mixed.json
    mpi 1 env SORTEX_SCHED_JOIN=0 "$SORTEX" --input "$in" --output "$out" --exchange forward \
        --stats "$stats" : -np 6 "$SORTEX" --input "$in" --output "$out" --exchange forward \
        --stats "$stats"
    cmp "$BATS_TEST_TMPDIR/ref.bin" "$out"
    run stat_of mixed 'e["joined_pieces"]'
    assert_output "0"
}

@test "--exchange help lists every registered back-end with a summary, alltoallv first" {
    run "$SORTEX" --exchange help
    assert_success
    assert_line --index 1 --regexp "^alltoallv +[^ ].+"
    [[ ${#BACKENDS[@]} -ge 8 ]] || fail "the registry lists only: ${BACKENDS[*]}"
    local backend
    for backend in "${BACKENDS[@]}"; do
        assert_line --regexp "^$backend +[^ ].+"
    done
}

@test "sortex-xbench --record-size 100 checks every byte of every record with every back-end" {
    local list
    list=$(backends)
    local out=$BATS_TEST_TMPDIR/x.csv
    run mpi 3 "$SORTEX_BIN/sortex-xbench" --record-size 100 --patterns oddcycle,onehot:75 \
        --bytes 4Ki,40000 --reps 1 --warmup 0 --output "$out"
    assert_success
    # Every back-end on both patterns and volumes, every exchange valid, the volumes rounded
    # down to whole records (4Ki: 40 of them), and the record size in the header.
    python3 - "$out" "$(paste -sd, <<<"$list")" <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
assert "# record_size: 100" in lines, "no record_size in the header"
rows = list(csv.DictReader(l for l in lines if not l.startswith("# ")))
backends = sys.argv[2].split(",")
assert len(rows) == len(backends) * 2 * 2, len(rows)
assert {r["backend"] for r in rows} == set(backends)
assert all(r["valid"] == "1" for r in rows), [r for r in rows if r["valid"] != "1"]
assert {r["bytes_per_rank"] for r in rows} == {"4000", "40000"}, {r["bytes_per_rank"] for r in rows}
PY
    # Odd records under a lowered limit, and a size out of range: exit 2 and one line.
    SORTEX_INT_LIMIT=1000 run mpi 2 "$SORTEX_BIN/sortex-xbench" --record-size 13 \
        --patterns uniform --bytes 64Ki --reps 1 --warmup 0
    assert_success
    run mpi 2 "$SORTEX_BIN/sortex-xbench" --record-size 65537
    assert_failure 2
    assert_line "sortex-xbench: error: --record-size must be an integer from 1 to 65536 (65537)"
}

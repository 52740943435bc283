#!/usr/bin/env bats
# The whole sort modelled (sortex-sched --sort) and the back-end it picks for a sort
# (sortex --exchange auto): every phase predicted from machine constants and the sort's rules,
# the regular sample refused where the sort would refuse it, and auto's sort verified.
bats_require_minimum_version 1.5.0
load helper

SCHED=$SORTEX_BIN/sortex-sched

# model ARGS...: the CSV of sortex-sched --sort into $output.
model() {
    run --separate-stderr "$SCHED" --sort --csv "$@"
    assert_success
}

@test "sortex-sched --sort predicts every phase, and the total is their sum" {
    model --ranks 8 --n-per-rank 1M --balance eps --exchange pairwise
    assert_line --index 0 "P,n_per_rank,balance,exchange,phase,seconds,rank_bytes,net_bytes,note"
    python3 - "$output" <<'PY'
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
phases = [r["phase"] for r in rows]
assert phases == ["read", "local_sort", "sample", "splitters", "bucket", "exchange", "finish",
                  "write", "total"], phases
assert all(r["exchange"] == "pairwise" and r["P"] == "8" for r in rows)
secs = [float(r["seconds"]) for r in rows]
assert all(s >= 0 for s in secs) and abs(sum(secs[:-1]) - secs[-1]) < 1e-9 * max(1, secs[-1])
mem = [int(r["rank_bytes"]) for r in rows]
assert mem[-1] == max(mem[:-1]) and mem[0] >= 2 * 8 * 1000000, mem
assert int(rows[5]["net_bytes"]) >= 8 * 1000000 * 7 // 8, rows[5]
PY
}

@test "the model refuses the regular sample at 65536 ranks, as the sort would, and the histogram stays small" {
    model --ranks 4096,65536 --n-per-rank 1M --balance all --exchange alltoallv
    python3 - "$output" <<'PY'
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
get = lambda p, b, ph: next(r for r in rows if r["P"] == p and r["balance"] == b and r["phase"] == ph)
assert get("65536", "sample", "sample")["seconds"] == "inf"
assert get("4096", "sample", "sample")["seconds"] != "inf"
for p in ("4096", "65536"):
    base = int(get(p, "eps", "read")["rank_bytes"])
    for ph in ("sample", "splitters"):
        extra = int(get(p, "eps", ph)["rank_bytes"]) - base
        assert extra <= 16 << 20, (p, ph, extra)
    # today's rule holds P S tuples: far more than the histogram
    assert int(get(p, "sample", "sample")["rank_bytes"]) - base > 16 << 20
PY
}

@test "--exchange all prices every registered back-end, and auto takes the cheapest" {
    local list b
    list=$(backends)
    model --ranks 6 --n-per-rank 100K --exchange all
    for b in $list; do
        assert_line --partial ",exchange:$b,"
    done
    python3 - "$output" <<'PY'
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
each = {r["exchange"]: float(r["seconds"]) for r in rows if r["phase"].startswith("exchange:")}
chosen = next(r for r in rows if r["phase"] == "exchange")
assert float(chosen["seconds"]) == min(each.values()), (chosen, each)
PY
}

@test "--calibrate prints machine constants that --machine reads back" {
    run --separate-stderr "$SCHED" --sort --calibrate="$BATS_TEST_TMPDIR"
    assert_success
    echo "$output" >"$BATS_TEST_TMPDIR/machine.txt"
    assert_line --regexp "^sort_ns_large [0-9.e+-]+$"
    assert_line --regexp "^read_bps [0-9.e+-]+$"
    model --ranks 4 --n-per-rank 1M --machine "$BATS_TEST_TMPDIR/machine.txt"
    echo "bogus 1" >"$BATS_TEST_TMPDIR/bad.txt"
    run --separate-stderr "$SCHED" --sort --ranks 4 --n-per-rank 1M --machine "$BATS_TEST_TMPDIR/bad.txt"
    assert_failure 2
    assert_regex "$stderr" "unknown constant in the machine file"
}

@test "sortex-sched --sort refuses bad arguments with exit 2 and one line" {
    # The last two are beyond any file (2^70 keys; 2^40 records of 64 KiB, 2^56 bytes a rank):
    # their products overflowed, and the model printed a rank holding 0 bytes.
    local args
    for args in "--ranks 0 --n-per-rank 1" "--ranks 4" "--ranks 4 --n-per-rank 1 --balance best" \
        "--ranks 4 --n-per-rank 1 --exchange nosuch" "--ranks 4 --n-per-rank 1 --epsilon 0" \
        "--ranks 1048576 --n-per-rank 1Pi" "--ranks 1024 --n-per-rank 1Ti --record-size 65536" \
        "--ranks 64,,8 --n-per-rank 1M" "--ranks 64, --n-per-rank 1M" "--ranks 8 --n-per-rank ,1M" \
        "--ranks 8 --n-per-rank 1M --record-size 65537"; do
        # shellcheck disable=SC2086 # the arguments are words
        run --separate-stderr "$SCHED" --sort $args
        assert_failure 2
        assert_equal "$(grep -c 'error' <<<"$stderr")" 1
    done
}

@test "sortex --exchange auto sorts with the back-end its model names, and says which with -v" {
    local np dist in out=$BATS_TEST_TMPDIR/out.bin i=0 nps=(2 3 5 8) list
    list=$(backends)
    for dist in uniform staggered zipf; do
        np=${nps[$i]}
        i=$((i + 1))
        in=$(gen_input "$dist" 200003 "$np")
        rm -f "$out"
        run --separate-stderr mpi "$np" "$SORTEX" -i "$in" -o "$out" -x auto -v \
            --stats "$BATS_TEST_TMPDIR/s.json"
        assert_success
        assert_regex "$stderr" "exchange [a-z]+ \(auto: its model predicted"
        run "$VERIFY" "$out" --input "$in"
        assert_success
        python3 - "$BATS_TEST_TMPDIR/s.json" "$list" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["exchange_auto"] is True and d["exchange"] in sys.argv[2].split(), d["exchange"]
assert d["exchange_predicted_s"] > 0
PY
    done
}

@test "sortex --exchange auto prices with the machine file it finds, names it, and warns when it cannot" {
    local in home=$BATS_TEST_TMPDIR/home out=$BATS_TEST_TMPDIR/out.bin
    in=$(gen_input zipf 100003 3)
    mkdir -p "$home/.config/sortex"
    # No file: the built-in constants, named in -v and --stats.
    run --separate-stderr mpi 3 env -u SORTEX_MACHINE -u XDG_CONFIG_HOME HOME="$home" \
        "$SORTEX" -i "$in" -o "$out" -x auto -v --stats "$BATS_TEST_TMPDIR/s.json"
    assert_success
    assert_regex "$stderr" "\(auto: its model predicted [0-9.]+ ms, the least, on built-in constants of a project machine: .*measure yours with sortex-sched --calibrate\)"
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert d["exchange_machine"].startswith("built-in constants"), d["exchange_machine"]' \
        "$BATS_TEST_TMPDIR/s.json"
    # The user's file, and SORTEX_MACHINE before it; predictions follow their constants.
    printf 'origin the home file\nalpha 1e-3\n' >"$home/.config/sortex/machine.txt"
    run --separate-stderr mpi 3 env -u SORTEX_MACHINE -u XDG_CONFIG_HOME HOME="$home" \
        "$SORTEX" -i "$in" -o "$out" -x auto -v --stats "$BATS_TEST_TMPDIR/h.json"
    assert_success
    assert_regex "$stderr" "on the user's machine file .*/.config/sortex/machine.txt \(the home file\)\)"
    printf 'origin the env file\nalpha 1e-9\n' >"$BATS_TEST_TMPDIR/env.txt"
    run --separate-stderr mpi 3 env -u XDG_CONFIG_HOME HOME="$home" \
        SORTEX_MACHINE="$BATS_TEST_TMPDIR/env.txt" "$SORTEX" -i "$in" -o "$out" -x auto -v \
        --stats "$BATS_TEST_TMPDIR/e.json"
    assert_success
    assert_regex "$stderr" "on the file SORTEX_MACHINE names .*env.txt \(the env file\)\)"
    python3 -c 'import json, sys; h, e = (json.load(open(f)) for f in sys.argv[1:])
assert h["exchange_predicted_s"] > e["exchange_predicted_s"] > 0, (h, e)' \
        "$BATS_TEST_TMPDIR/h.json" "$BATS_TEST_TMPDIR/e.json"
    # A file that cannot be read: one warning, the built-in constants, and the sort goes on.
    run --separate-stderr mpi 3 env SORTEX_MACHINE="$BATS_TEST_TMPDIR/none.txt" "$SORTEX" \
        -i "$in" -o "$out" -x auto
    assert_success
    assert_equal "$stderr" "sortex: warning: the machine file $BATS_TEST_TMPDIR/none.txt cannot be read or is malformed (sortex-sched --machine $BATS_TEST_TMPDIR/none.txt says where): the exchange is priced with built-in constants"
    run "$VERIFY" "$out" --input "$in"
    assert_success
}

@test "--progress estimates a running exchange from its back-end's model" {
    local in
    in=$(gen_input uniform 100003 3)
    run --separate-stderr mpi 3 env SORTEX_STALL=exchange-run:0:3 "$SORTEX" -i "$in" \
        -o "$BATS_TEST_TMPDIR/out.bin" --exchange pairwise --progress
    assert_success
    assert_regex "$stderr" "exchange +[0-9.]+ s \.\.\.  (about [0-9]+% \(estimated|longer than the [0-9.]+ s estimated)"
    run "$VERIFY" "$BATS_TEST_TMPDIR/out.bin" --input "$in"
    assert_success
}

@test "--sort says what its predictions stand on, and when one node's constants price a cluster" {
    run -0 env -u SORTEX_MACHINE -u XDG_CONFIG_HOME HOME="$BATS_TEST_TMPDIR" "$SCHED" --sort \
        --ranks 4096 --n-per-rank 1M --exchange alltoallv
    assert_line --index 0 --regexp '^machine built-in constants of a project machine: one node'
    assert_line --regexp 'beyond [0-9]+ ranks its alpha and beta stand for a network they never crossed'
    assert_line --regexp "one process's page-cache rate, which a shared file system will not give 4096 ranks"
    assert_line --regexp 'measure the machine you will sort on: `mpirun -np P sortex-sched --calibrate > machine.txt`'
    assert_line --regexp "^  exchange .*one node's constants for the network$"
    # A network's file (as --calibrate writes across nodes) prices it without the caveat.
    printf 'origin a cluster\nshm 0\nranks_per_node 2\nalpha 2e-6\nbeta 1e-10\n' \
        >"$BATS_TEST_TMPDIR/net.txt"
    run -0 "$SCHED" --sort --machine "$BATS_TEST_TMPDIR/net.txt" --ranks 4096 --n-per-rank 1M \
        --exchange alltoallv
    assert_line --index 0 --regexp '^machine the file given .*net.txt \(a cluster\)$'
    refute_output --partial "never crossed"
    refute_output --partial "one node's constants for the network"
}

@test "--mem-limit predicts the external sort's two passes, and --external never its refusal" {
    # 64 Mi keys a rank (1 GiB) in 32 MiB: two passes, each byte read and written twice.
    model --ranks 2 --n-per-rank 64Mi --mem-limit 32Mi
    python3 - "$output" <<'PY'
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
assert [r["phase"] for r in rows] == ["sample", "distribute", "sort_buckets", "total"], rows
assert all(r["balance"] == "external" for r in rows), rows
secs = [float(r["seconds"]) for r in rows]
assert all(s > 0 for s in secs) and abs(sum(secs[:-1]) - secs[-1]) < 1e-7 * secs[-1], secs
assert max(int(r["rank_bytes"]) for r in rows) <= 32 << 20, rows
assert int(rows[1]["net_bytes"]) >= (64 << 20) * 8 // 2, rows[1]
PY
    # The table says which sort runs, its buckets and each pass's bytes.
    run -0 "$SCHED" --sort --ranks 2 --n-per-rank 64Mi --mem-limit 32Mi
    assert_output --regexp "external sort: a rank's share needs +1\.1 GiB, --mem-limit +32\.0 MiB: [0-9]+ buckets"
    assert_output --regexp "pass 1 reads +1\.0 GiB and writes +1\.0 GiB; +pass 2 reads +1\.0 GiB and writes +1\.0 GiB"
    # A share that fits is priced in memory; --external always prices the passes anyway.
    model --ranks 2 --n-per-rank 1Mi --mem-limit 1Gi
    assert_line --partial ",total,"
    refute_line --partial ",external,"
    model --ranks 2 --n-per-rank 1Mi --mem-limit 1Gi --external always
    assert_line --regexp '^2,1048576,external,[a-z]+,distribute,'
    # --external never with a share beyond the limit: refused, an infinite total.
    model --ranks 2 --n-per-rank 64Mi --mem-limit 32Mi --external never
    assert_line --regexp '^2,67108864,external,[a-z]+,total,inf,[0-9]+,0,"refused'
    # --external always needs the limit it sorts within.
    run --separate-stderr "$SCHED" --sort --ranks 2 --n-per-rank 1Mi --external always
    assert_failure 2
    assert_equal "$stderr" "sortex-sched: error: --external always needs --mem-limit, the memory a rank may use"
}

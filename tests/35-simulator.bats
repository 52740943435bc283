#!/usr/bin/env bats
# tests/35-simulator.bats: bin/sortex-sched, the schedule simulator: its three inputs, the
# h-relation schedules against the theorems' bounds, the alpha-beta models on hand-checked
# matrices, the CSV shape and the user mistakes. No MPI except the --ping-pong run and the
# sorts the datagen input mode is checked against.
bats_require_minimum_version 1.5.0
load helper

SCHED=$SORTEX_BIN/sortex-sched

setup() {
    [[ -x $SCHED ]] || fail "missing $SCHED (run make)"
}

# The model names, one per line (10: one per back-end, two for alltoallv), without the lines
# of the back-ends that select several (alltoallv's, whose second field is no [back-end]).
algos() {
    local help
    help=$(ran_ok "models" "$SCHED" --algos help) || return 1
    awk 'NR > 1 && $2 ~ /^\[/ { print $1 }' <<<"$help" | at_least 10 "models"
}

# csv_all EXPR...: the CSV in $output has rows, and every row r satisfies every Python
# expression EXPR; r maps column names to text, num() reads a number (NaN for an empty field),
# det(r) is the detail column as a dict. Prints the rows that do not, with the expression.
csv_all() {
    python3 -c '
import csv, io, math, sys
rows = list(csv.DictReader(io.StringIO(sys.stdin.read())))
num = lambda x: float(x) if x != "" else math.nan
det = lambda r: {k: float(v) for k, v in (kv.split("=") for kv in r["detail"].split(";") if kv)}
bad = [(e, r) for e in sys.argv[1:] for r in rows if not eval(e)]
for e, r in bad:
    print("violates", e, ":", dict(r), file=sys.stderr)
sys.exit(1 if bad or not rows else 0)' "$@" <<<"$output"
}

# sched_rows ARGS...: runs sortex-sched --csv ARGS; fails on a non-zero exit; prints the rows
# without the header (collect several runs, then check them with one csv_all).
sched_rows() {
    local out
    out=$("$SCHED" --csv "$@") || { echo "sortex-sched $* failed" >&2; return 1; }
    tail -n +2 <<<"$out"
}

# The CSV header line.
csv_header() {
    "$SCHED" --pattern bucket --ranks 1 --algos direct --csv | head -1
}

@test "--help names every option with its default and the exit codes, --version the commit" {
    run -0 "$SCHED" --help
    local opt
    for opt in --matrix --unit --dist --n --epsilon --balance --oversample --pattern --volume --ranks \
        --seed --algos --alpha --beta --packet --target-h --csv --print-matrix --no-validate --threads \
        --ping-pong --record-size --machine --calibrate --help --version; do
        assert_output --partial -- "$opt"
    done
    assert_output --regexp -- '--alpha SECONDS .*\[the machine.s\]'
    assert_output --regexp -- '--beta SECONDS .*\[the machine.s\]'
    assert_output --regexp -- '--machine FILE .*\$SORTEX_MACHINE.*~/.config/sortex/machine.txt'
    assert_output --regexp -- '-P, --ranks P +ranks, 1\.\.4096 '
    assert_output --regexp -- '--record-size R .* 1\.\.65536,'
    assert_output --regexp 'exit codes: 0 .* 2 usage error'
    assert_output --partial '3 runtime failure'
    run -0 "$SCHED" --version
    assert_line --index 0 --regexp '^sortex-sched [0-9]+\.[0-9]+\.[0-9]+$'
    assert_line --regexp '^built from commit [0-9a-f]+'
}

@test "models every registered back-end: --algos help names each in brackets" {
    local list backend
    list=$(backends)
    run -0 "$SCHED" --algos help
    for backend in $list; do
        assert_line --regexp "^$backend(-[a-z]+)? +\\[$backend\\] [^ ]"
    done
}

@test "models every algorithm on every synthetic pattern and alias, for even and odd P" {
    local models names patterns pat p arg
    models=$(algos)
    names=$(paste -sd, <<<"$models")
    patterns=$(ran_ok "patterns" "$SCHED" --pattern help)
    patterns=$(awk 'NR > 1 { sub(/:.*/, "", $1); print $1 }' <<<"$patterns" | at_least 10 "patterns")
    for pat in $patterns; do
        for p in 5 8; do
            # The patterns whose parameter is a name: a distribution, a saved matrix.
            case $pat in
            sort) arg=sort:npb ;;
            file)
                "$SCHED" --pattern random --ranks "$p" --print-matrix >"$BATS_TEST_TMPDIR/m$p.csv"
                arg=file:$BATS_TEST_TMPDIR/m$p.csv
                ;;
            *) arg=$pat ;;
            esac
            run -0 "$SCHED" --pattern "$arg" --ranks "$p" --volume 64Ki --csv
            [[ $(awk -F, 'NR > 1 { print $2 ":" $7 }' <<<"$output" | paste -sd,) == \
                "$(sed "s/^/$p:/" <<<"$models" | paste -sd,)" ]] ||
                fail "pattern $pat, P = $p: not one row per model: $output"
        done
    done
}

@test "takes 1.5 h direct and about 1.2 h forwarded on the lower-bound instance" {
    # h/2 packets on every 3-cycle edge, h = 256 (--target-h: the back-ends' rule with finer
    # packets; the volume keeps them above its 64 KiB floor): direct exactly 3h/2; forward
    # exactly 6/5 h for even P, and for odd P between the paper's lower bound
    # 6/5 (1 + 3/(5P - 3)) h and its upper bound (6/5 + 2/P)(h + 1): 1.2 within 0.1 at P = 9,
    # within 0.03 from P = 63 on.
    local p
    output=$(csv_header; for p in 6 9 48 63 99; do
        sched_rows --pattern lowerbound --ranks "$p" --volume 64Mi --target-h 256 \
            --algos direct,forward || exit 1
    done) || fail "a run failed"
    csv_all 'int(r["h_packets"]) == 256' \
        'r["algo"] != "direct" or abs(num(r["steps_per_h"]) - 1.5) < 1e-9' \
        'r["algo"] != "forward" or int(r["p"]) % 2 or abs(num(r["steps_per_h"]) - 1.2) < 1e-9' \
        'r["algo"] != "forward" or int(r["p"]) % 2 == 0 or (1.2 * (1 + 3 / (5 * int(r["p"]) - 3)) - 1e-6 <= num(r["steps_per_h"]) <= (1.2 + 2 / int(r["p"])) * 257 / 256)'
}

@test "packets: direct and fullduplex cut h into 32, forward into 8, --target-h into H, >= 64 KiB" {
    # A permutation of 64 MiB messages: h = 128 MiB, so packets of 4 MiB (2^22 rounded up to 40
    # bytes) and 16 of them per message, 16 MiB and 4 for forward; --target-h holds for all
    # three; at 1 MiB per rank the 64 KiB floor gives h = 32 again.
    output=$(csv_header
        sched_rows --pattern staggered --ranks 6 --volume 64Mi --algos direct,forward,fullduplex ||
            exit 1
        sched_rows --pattern staggered --ranks 6 --volume 64Mi --algos direct,forward,fullduplex \
            --target-h 256 || exit 1
        sched_rows --pattern staggered --ranks 6 --volume 1Mi --algos direct --target-h 256 ||
            exit 1) || fail "a run failed"
    csv_all 'int(r["packet_bytes"]) % 40 == 0 and int(r["packet_bytes"]) >= 65536'
    [[ $(cut -d, -f3,4 <<<"$output" | tail -n +2 | paste -sd' ') == \
        "4194320,32 16777240,8 4194320,32 524320,256 524320,256 524320,256 65560,32" ]] ||
        fail "packet_bytes,h_packets: $output"
}

@test "keeps every schedule within its bound and the transpose bins within theirs, random matrices" {
    local pat p
    output=$(csv_header; for pat in random uniform sparse:3 onehot:80 zipf:2 ggroup:3; do
        for p in 4 7 16 33 64; do
            sched_rows --pattern "$pat" --ranks "$p" --seed "$p" || exit 1
        done
    done) || fail "a run failed"
    csv_all 'math.isnan(num(r["bound_steps"])) or num(r["steps"]) <= num(r["bound_steps"]) + 1e-9' \
        'r["algo"] not in ("direct", "forward", "fullduplex") or num(r["bound_steps"]) > 0' \
        'r["algo"] != "fullduplex" or num(r["steps"]) == num(r["bound_steps"])' \
        'r["algo"] != "transpose" or det(r)["bin1"] <= det(r)["block1"]' \
        'r["algo"] != "transpose" or det(r)["bin2"] <= det(r)["block2"]' \
        'r["algo"] != "pairwise" or int(r["rounds"]) <= int(r["p"])' \
        'r["algo"] not in ("direct", "fullduplex", "alltoallv-linear", "alltoallv-pairwise", "pairwise", "shift") or r["bytes_moved"] == r["total_bytes"]' \
        'r["algo"] != "forward" or int(r["bytes_moved"]) == int(r["total_bytes"]) + det(r)["forwarded_bytes"]'
}

@test "the models price rounds by alpha and beta as documented, on a hand-checked matrix" {
    # Keys: 0->1 10, 0->2 20, 1->2 30, 2->0 40; sent 30, 30, 40; received 40, 10, 50. With
    # alpha 1 s and beta 0 a model's time counts its start-ups: P-1 for the linear and shift
    # alltoallv, P rounds of 1-factors (odd P), 2 x (P-1) for transpose; P = 3 is one grid row
    # (one phase) and a cube of 2 with one rank folded in (fold, 1 round, unfold).
    printf '0,10,20\n0,0,30\n40,0,0\n' >"$BATS_TEST_TMPDIR/m.csv"
    run -0 "$SCHED" --matrix "$BATS_TEST_TMPDIR/m.csv" --alpha 1 --beta 0 --csv
    csv_all 'int(r["total_bytes"]) == 800 and int(r["h_bytes"]) == 720' \
        'r["algo"] != "alltoallv-linear" or num(r["model_seconds"]) == 2' \
        'r["algo"] != "alltoallv-pairwise" or num(r["model_seconds"]) == 2' \
        'r["algo"] != "shift" or num(r["model_seconds"]) == 2' \
        'r["algo"] != "pairwise" or num(r["model_seconds"]) == 3' \
        'r["algo"] != "transpose" or num(r["model_seconds"]) == 4' \
        'r["algo"] != "grid" or (r["detail"].startswith("grid=1x3") and int(r["rounds"]) == 1)' \
        'r["algo"] != "hypercube" or int(r["rounds"]) == 3'
    # alpha 0, beta 1 s/B: linear waits for rank 2's 50 keys in; the shift rounds are k = 1
    # (0->1, 1->2, 2->0: largest 40 keys) and k = 2 (0->2: 20 keys).
    run -0 "$SCHED" --matrix "$BATS_TEST_TMPDIR/m.csv" --alpha 0 --beta 1 --csv
    csv_all 'r["algo"] != "alltoallv-linear" or num(r["model_seconds"]) == 400' \
        'r["algo"] != "alltoallv-pairwise" or num(r["model_seconds"]) == 480' \
        'r["algo"] not in ("direct", "fullduplex", "alltoallv-linear", "alltoallv-pairwise", "pairwise", "shift") or int(r["bytes_moved"]) == 800' \
        'int(r["bytes_moved"]) >= 800'
}

@test "transpose bins, grid and hypercube volumes match a brute-force replay of their rules" {
    # An independent, piece-by-piece replay of the back-ends' documented rules (dealing run
    # (s, j) from bin s + j, the grid's row-then-column routing with the incomplete last row,
    # the hypercube's folding, bundles packed below SORTEX_SCATTER_MIN bytes of payload and
    # scattered into one message per non-empty piece above, a first message under four eager
    # chunks of SORTEX_EAGER_BYTES cut into them), against the simulator's O(P^2) bookkeeping,
    # with the transport's settings and with others (the models follow them as a run does).
    local p volume knobs
    for knobs in "" "1000 800" "0 0"; do
        for p in 5 8 12 17; do
            for volume in 4000 16Mi; do
                "$SCHED" --pattern random --ranks "$p" --volume "$volume" --seed "$p" --print-matrix \
                    >"$BATS_TEST_TMPDIR/m.csv"
                # shellcheck disable=SC2086
                set -- $knobs
                SORTEX_SCATTER_MIN=${1:-} SORTEX_EAGER_BYTES=${2:-} "$SCHED" \
                    --matrix "$BATS_TEST_TMPDIR/m.csv" --csv --algos transpose,grid,hypercube \
                    >"$BATS_TEST_TMPDIR/models.csv"
                python3 - "$BATS_TEST_TMPDIR/m.csv" "$BATS_TEST_TMPDIR/models.csv" \
                    "$("$SORTEX" --knobs | awk '$1 == "SORTEX_SCATTER_MIN" { print $3 }')" \
                    "$("$SORTEX" --knobs | awk '$1 == "SORTEX_EAGER_BYTES" { print $3 }')" \
                    "${1:-}" "${2:-}" <<'PY' ||
import csv, sys
C = [[8 * int(x) for x in l.split(",")] for l in open(sys.argv[1]) if not l.startswith("#")]
units = {"": 1, "Ki": 1024, "Mi": 1 << 20}
size = lambda t: int(t.rstrip("KMi")) * units[t[len(t.rstrip("KMi")):]]
# The settings in force: the ones given, else the defaults --knobs names.
SCATTER = int(sys.argv[5]) if sys.argv[5] else size(sys.argv[3])
EAGER = int(sys.argv[6]) // 8 * 8 if sys.argv[6] else size(sys.argv[4]) // 8 * 8
p = len(C)
rows = {r["algo"]: r for r in csv.DictReader(open(sys.argv[2]))}
det = lambda r: {k: int(float(v)) for k, v in (kv.split("=") for kv in r["detail"].split(";"))}

# Transpose: key-by-key dealing, then the largest bins and the padded blocks (in keys).
K = [[x // 8 for x in row] for row in C]
share = lambda c, s, j, b: c // p + ((b - s - j) % p < c % p)
bin1 = max(sum(share(K[s][j], s, j, b) for j in range(p)) for s in range(p) for b in range(p))
bin2 = max(sum(share(K[s][j], s, j, b) for s in range(p)) for b in range(p) for j in range(p))
bound = lambda n: min(n // p + (2 * (n % p) + p * (p - 1)) // (2 * p), n)
block1, block2 = bound(max(map(sum, K))), bound(max(map(sum, zip(*K))))
t = det(rows["transpose"])
assert (t["bin1"], t["bin2"], t["block1"], t["block2"]) == (bin1, bin2, block1, block2), t
assert int(rows["transpose"]["bytes_moved"]) == 8 * p * (p - 1) * (block1 + block2)

def first(b):
    """Messages of a first message of b bytes: eager chunks and a shorter last one below four
    chunks, else one."""
    return b // EAGER + 1 if EAGER and b < 4 * EAGER else 1

def check(algo, bundles):
    """bundles: (sender, [piece bytes]) per bundle sent; header 8 bytes a piece; packed below
    SCATTER bytes of payload (one first message), else the header as the first message plus one
    message per non-empty piece."""
    moved, msgs = 0, [0] * p
    for src, pieces in bundles:
        moved += sum(pieces) + 8 * len(pieces)
        if sum(pieces) < SCATTER:
            msgs[src] += first(sum(pieces) + 8 * len(pieces))
        else:
            msgs[src] += first(8 * len(pieces)) + sum(1 for x in pieces if x)
    r = rows[algo]
    assert (int(r["bytes_moved"]), int(r["startups"])) == (moved, max(msgs)), \
        (algo, r["bytes_moved"], moved, r["startups"], max(msgs))

# Grid: cols = ceil(P / floor(sqrt P)); s -> via (s's row, d's column, or the row above).
r = int(p ** 0.5)
cols = -(-p // r)
def via(s, d):
    m = s // cols * cols + d % cols
    return m if m < p else m - cols
bundles = {}
for s in range(p):
    for d in range(p):
        if s != d:
            for hop in ((1, s, via(s, d)), (2, via(s, d), d)):  # the two hops, when they move
                if hop[1] != hop[2]:
                    bundles.setdefault(hop, []).append(C[s][d])
check("grid", [(a, pieces) for (_, a, b), pieces in bundles.items()])

# Hypercube: fold ranks >= Q into r - Q (whole rows), route bit by bit, unfold (whole columns).
q = 1 << (p.bit_length() - 1)
node = lambda x: x if x < q else x - q
held = {(s, d): node(s) for s in range(p) for d in range(p)}
bundles = [(e, C[e]) for e in range(q, p)]
k = 0
while (1 << k) < q:
    out = {x: [] for x in range(q)}  # every node sends a bundle every round
    for (s, d), x in held.items():
        if (x ^ node(d)) >> k & 1:
            out[x].append(C[s][d])
            held[(s, d)] = x ^ (1 << k)
    bundles += list(out.items())
    k += 1
assert all(x == node(d) for (s, d), x in held.items())
bundles += [(e - q, [C[s][e] for s in range(p)]) for e in range(q, p)]
check("hypercube", bundles)
PY
                    fail "P = $p, volume $volume, settings '$knobs'"
            done
        done
    done
}

@test "--print-matrix round-trips through --matrix, in keys and in bytes" {
    local m=$BATS_TEST_TMPDIR/m.csv a b
    run -0 "$SCHED" --pattern random --ranks 12 --print-matrix
    assert_line --index 0 --regexp '^# pattern:random'
    echo "$output" >"$m"
    # Same counts, same models (everything but the input label and the measured times).
    a=$("$SCHED" --pattern random --ranks 12 --csv --algos direct,forward,transpose | cut -d, -f2-18)
    b=$("$SCHED" --matrix "$m" --csv --algos direct,forward,transpose | cut -d, -f2-18)
    assert_equal "$b" "$a"
    # The matrix reader is the file:PATH pattern, the one sortex-xbench replays too.
    b=$("$SCHED" --pattern "file:$m" --ranks 12 --csv --algos direct,forward,transpose |
        cut -d, -f2-18)
    assert_equal "$b" "$a"
    run -2 --separate-stderr "$SCHED" --pattern "file:$m" --ranks 11
    assert_equal "$stderr" "sortex-sched: error: the matrix in $m is 12 x 12, not 11 x 11 for 11 ranks"
    # The same matrix in bytes (every count times 8) is the same instance for the schedules
    # (transpose pads in elements, which are then bytes).
    awk -F, -v OFS=, '/^#/ { next } { for (i = 1; i <= NF; i++) $i *= 8; print }' "$m" \
        >"$BATS_TEST_TMPDIR/bytes.csv"
    b=$("$SCHED" --matrix "$BATS_TEST_TMPDIR/bytes.csv" --unit bytes --csv \
        --algos direct,forward | cut -d, -f2-18)
    assert_equal "$b" "$(head -3 <<<"$a")"
}

@test "--record-size R models records: packets of five whole records, transpose blocks in records" {
    local r
    # Keys are 8-byte records: the same rows as without the option.
    assert_equal "$("$SCHED" --pattern zipf --ranks 6 --csv --record-size 8 | cut -d, -f1-18,20-)" \
        "$("$SCHED" --pattern zipf --ranks 6 --csv | cut -d, -f1-18,20-)"
    for r in 13 100; do
        run -0 "$SCHED" --pattern uniform --ranks 4 --volume 3Mi --record-size "$r" --csv \
            --algos direct,forward,fullduplex,transpose
        # 5 lcm(R, 8) bytes: 520 for 13, 1000 for 100 (forward's own packets too); V = 3Mi / R
        # records per rank, and transpose's round-1 block is the bound of V in records.
        csv_all "r['input'].endswith(':record=$r')" \
            "int(r['packet_bytes']) % (5 * $r * 8 // math.gcd($r, 8)) == 0" \
            "det(r).get('packet_bytes', 0) % (5 * $r * 8 // math.gcd($r, 8)) == 0" \
            "r['algo'] != 'transpose' or det(r)['block1'] == (lambda v, p: min(v, v // p + (2 * (v % p) + p * (p - 1)) // (2 * p)))(3 * 2**20 // $r, 4)"
    done
    run -0 "$SCHED" --pattern uniform --ranks 3 --volume 4000 --record-size 100 --print-matrix
    assert_line --index 0 --regexp '^# pattern:uniform.*:record=100, records of 100 bytes from row to column'
    run -2 --separate-stderr "$SCHED" --matrix /dev/null --unit bytes --record-size 100
    assert_equal "$stderr" "sortex-sched: error: --record-size counts records, not --unit bytes (100)"
    run -2 --separate-stderr "$SCHED" --pattern uniform --ranks 3 --record-size 0
    assert_equal "$stderr" "sortex-sched: error: --record-size must be an integer from 1 to 65536 (0)"
}

@test "the model of 100- and 13-byte records takes the steps a run of sortex-xbench takes" {
    # sortex-xbench's pattern matrices are sortex-sched's (same seed): the scheduled back-ends'
    # rounds are their schedules' steps, built at the packet size the records give.
    local r pat
    for r in 100 13; do
        run -0 mpi 3 "$SORTEX_BIN/sortex-xbench" --record-size "$r" --patterns uniform,zipf \
            --bytes 4Mi --reps 1 --warmup 0 --exchange direct,forward,fullduplex \
            --output "$BATS_TEST_TMPDIR/run.csv"
        for pat in uniform zipf; do
            "$SCHED" --pattern "$pat" --ranks 3 --volume 4Mi --record-size "$r" --csv \
                --algos direct,forward,fullduplex >"$BATS_TEST_TMPDIR/model.csv"
            python3 - "$BATS_TEST_TMPDIR/run.csv" "$BATS_TEST_TMPDIR/model.csv" "$pat" <<'PY' ||
import csv, sys
run = {r["backend"]: r for r in csv.DictReader(l for l in open(sys.argv[1]) if l[0] != "#")
       if r["pattern"] == sys.argv[3]}
model = {r["algo"]: r for r in csv.DictReader(open(sys.argv[2]))}
for algo, m in model.items():
    assert run[algo]["valid"] == "1", run[algo]
    assert run[algo]["rounds"] == m["rounds"], (algo, "run", run[algo]["rounds"], "model", m["rounds"])
PY
                fail "$pat, $r-byte records: the model's steps differ from the run's"
        done
    done
}

@test "builds the count matrix a sort exchanges on datagen inputs, as a real run reports it" {
    local case dist p in
    for case in uniform:4 zero:3 staggered:4 dd:5; do
        dist=${case%:*} p=${case#*:}
        in=$(gen_input "$dist" 20000 "$p")
        mpi "$p" "$SORTEX" --input "$in" --output "$BATS_TEST_TMPDIR/out.bin" \
            --stats "$BATS_TEST_TMPDIR/stats.json" >"$BATS_TEST_TMPDIR/sort.log" 2>&1 ||
            fail "sort failed: $case: $(cat "$BATS_TEST_TMPDIR/sort.log")"
        run -0 "$SCHED" --dist "$dist" --n 20000 --ranks "$p" --seed 1 --print-matrix
        echo "$output" >"$BATS_TEST_TMPDIR/m.csv"
        # Every rank receives what the sort gave it; the exchange moves the off-diagonal keys.
        python3 - "$BATS_TEST_TMPDIR/m.csv" "$BATS_TEST_TMPDIR/stats.json" "$case" <<'PY'
import json, sys
m = [[int(x) for x in l.split(",")] for l in open(sys.argv[1]) if not l.startswith("#")]
d = json.load(open(sys.argv[2]))
p = len(m)
cols = [sum(m[i][j] for i in range(p)) for j in range(p)]
assert cols == [r["n_out"] for r in d["ranks"]], (sys.argv[3], cols, d["ranks"])
off = sum(m[i][j] for i in range(p) for j in range(p) if i != j)
assert 8 * off == d["exchange_stats"]["bytes_sent"], (sys.argv[3], off)
PY
    done
}

@test "refuses a sample size exactly when the sort refuses it, by the sort's own rule" {
    # The sort gathers up to 2 (S P + P) words and refuses more than INT_MAX of them: at
    # P = 2000 that is S = 536870, the first over. The simulator calls the same rule.
    run -2 --separate-stderr "$SCHED" --dist uniform --n 4000 --ranks 2000 --oversample 536870 \
        --print-matrix
    [[ $stderr == "sortex-sched: error: the sort would refuse "*"(--oversample 536870 with P = 2000)" ]] ||
        fail "not the refusal: $stderr"
    run -0 "$SCHED" --dist uniform --n 4000 --ranks 2000 --oversample 536869 --print-matrix
    assert_equal "${#lines[@]}" 2001
}

@test "models direct, forward and fullduplex at the packet size, h and length of a real run" {
    # 400000 keys on 3 ranks: h is about 1.4 MB, so direct and fullduplex sit on the 64 KiB
    # floor while forward's h / 8 is above it; the sorts' stats must say what the model says.
    # With SORTEX_SCHED_TARGET_H=3 all three cut h into 3 packets, as --target-h 3 models.
    local algo th
    for th in "" 3; do
        for algo in direct forward fullduplex; do
            SORTEX_SCHED_TARGET_H=$th sort_case 3 "$algo" uniform 400000 || fail "sort failed"
            "$SCHED" --dist uniform --n 400000 --ranks 3 --seed 1 --csv --algos "$algo" \
                ${th:+--target-h "$th"} >"$BATS_TEST_TMPDIR/model.csv" ||
                fail "sortex-sched failed"
            python3 - "$BATS_TEST_TMPDIR/model.csv" "$BATS_TEST_TMPDIR/stats.json" "$algo $th" \
                <<'PY' || fail "$algo, target h '$th': the model differs from the run"
import csv, json, sys
r = next(csv.DictReader(open(sys.argv[1])))
x = json.load(open(sys.argv[2]))["exchange_stats"]
got = (x["packet_bytes"], x["h_packets"], x["rounds"], x["steps"])
want = (int(r["packet_bytes"]), int(r["h_packets"]), int(r["rounds"]), float(r["steps"]))
assert got == want, (sys.argv[3], "run", got, "model", want)
PY
        done
    done
}

@test "SORTEX_SCHED_TARGET_H is rank 0's for every rank, and a bad one stops the sort cleanly" {
    local in out=$BATS_TEST_TMPDIR/out.bin stats=$BATS_TEST_TMPDIR/stats.json th
    in=$(gen_input uniform 400000 3)
    # Only rank 0 asks for 3 packets: all three ranks build that schedule and the sort holds.
    mpi 1 env SORTEX_SCHED_TARGET_H=3 "$SORTEX" --input "$in" --output "$out" \
        --exchange forward --stats "$stats" : -np 2 env SORTEX_SCHED_TARGET_H=500 "$SORTEX" \
        --input "$in" --output "$out" --exchange forward --stats "$stats"
    "$VERIFY" "$out" --input "$in" >/dev/null || fail "the mixed run's output does not verify"
    run -0 python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exchange_stats"]["h_packets"])' "$stats"
    assert_output --regexp '^[3-6]$'
    # Not a number from 1 to 1048576 on rank 0: one line from rank 0, no output file.
    for th in 0 abc 1048577 -2; do
        rm -f "$out"
        SORTEX_SCHED_TARGET_H=$th run mpi 3 "$SORTEX" --input "$in" --output "$out" \
            --exchange direct
        assert_failure
        assert_line --regexp "SORTEX_SCHED_TARGET_H must be an integer from 1 to 1048576 \\($th\\)"
        [[ $(grep -c 'SORTEX_SCHED_TARGET_H' <<<"$output") -eq 1 ]] || fail "not one line: $output"
        assert_file_not_exists "$out"
    done
}

@test "the CSV has one header and one row of the same width per chosen model, in order" {
    run -0 "$SCHED" --pattern zipf --ranks 10 --csv --algos hypercube,direct,alltoallv-linear
    assert_equal "${#lines[@]}" 4
    assert_line --index 0 --regexp '^input,p,packet_bytes,h_packets,.*,algo,.*,steps_per_h,bound_steps,.*,model_seconds,async_seconds,sched_seconds,.*,detail$'
    [[ $(awk -F, '{ print NF }' <<<"$output" | sort -u | wc -l) -eq 1 ]] || fail "ragged CSV"
    [[ $(cut -d, -f7 <<<"$output" | paste -sd' ') == "algo hypercube direct alltoallv-linear" ]]
    csv_all 'r["sched_seconds"] == "" or num(r["sched_seconds"]) >= 0'
    # The table has the same models, one line each.
    run -0 "$SCHED" --pattern zipf --ranks 10 --algos hypercube,direct
    assert_line --regexp '^hypercube +full'
    assert_line --regexp '^direct +half'
}

@test "alltoallv names the back-end in --algos too: it selects both of its models" {
    run -0 "$SCHED" --algos help
    assert_line --regexp '^alltoallv +the back-end: all of its models, below$'
    run -0 "$SCHED" --pattern zipf --ranks 6 --csv --algos alltoallv,direct
    [[ $(cut -d, -f7 <<<"$output" | paste -sd' ') == "algo alltoallv-linear alltoallv-pairwise direct" ]] ||
        fail "not alltoallv's two models and direct: $output"
    # The same rows as the models named one by one.
    local both
    both=$(cut -d, -f7- <<<"$output")
    run -0 "$SCHED" --pattern zipf --ranks 6 --csv --algos alltoallv-linear,alltoallv-pairwise,direct
    assert_equal "$(cut -d, -f7- <<<"$output" | grep -v '^algo' | cut -d, -f1-10)" \
        "$(grep -v '^algo' <<<"$both" | cut -d, -f1-10)"
    # An unknown name lists it among the valid ones.
    run -2 --separate-stderr "$SCHED" --pattern zipf --ranks 6 --algos nosuch
    assert_regex "$stderr" "valid: alltoallv, alltoallv-linear, alltoallv-pairwise, direct,"
}

@test "--record-size: the help states the limit the check applies, the formats' own" {
    # The formats' limit (util/format.h), as sortex --help states it.
    local max
    max=$("$SORTEX" --help | sed -n 's/.*records of R bytes (1\.\.\([0-9]*\)).*/\1/p')
    [[ $max -ge 65536 ]] || fail "sortex --help states no record limit: '$max'"
    run -0 "$SCHED" --help
    assert_output --partial "elements of R bytes, 1..$max,"
    assert_output --partial "P <= 4096"
    run -0 "$SCHED" --sort --help
    assert_output --partial "bytes an element takes, 1..$max "
    run -0 "$SCHED" --pattern bucket --ranks 2 --record-size "$max" --csv
    run -2 "$SCHED" --pattern bucket --ranks 2 --record-size "$((max + 1))" --csv
    run -0 "$SCHED" --sort --ranks 2 --n-per-rank 100 --record-size "$max" --csv
    run -2 "$SCHED" --sort --ranks 2 --n-per-rank 100 --record-size "$((max + 1))" --csv
    run -0 "$SORTEX_BIN/sortex-xbench" --help
    assert_output --partial "elements of R bytes, 1..$max,"
    run -0 "$GEN" --help
    assert_output --partial "records of R bytes (1..$max)"
    run -0 "$GEN" --dist uniform --n 2 --record-size "$max" -o "$BATS_TEST_TMPDIR/r.bin"
    run -2 "$GEN" --dist uniform --n 2 --record-size "$((max + 1))" -o "$BATS_TEST_TMPDIR/r.bin"
}

@test "a mistake gives one error line, nothing on stdout and exit 2" {
    local dir=$BATS_TEST_TMPDIR args
    printf '0,1,2\n3,0\n5,6,0\n' >"$dir/ragged.csv"
    printf '0,1\n3,x\n' >"$dir/garbage.csv"
    printf '0,1,2\n1,0,3\n' >"$dir/short.csv"
    printf '# only a comment\n' >"$dir/empty.csv"
    printf '0,1\n1,0\n' >"$dir/unreadable.csv"
    chmod 000 "$dir/unreadable.csv"
    local -a cases=(
        "--pattern nosuch --ranks 4"
        "--pattern random --ranks 0"
        "--pattern random --ranks 12x"
        "--pattern random --ranks 4097"
        "--pattern random --ranks 4 --algos direct,nosuch"
        "--pattern random --ranks 4 --algos direct,,forward"
        "--pattern random --ranks 4 --algos direct,"
        "--pattern random --ranks 4 --alpha fast"
        "--pattern random --ranks 4 --beta -1"
        "--pattern random --ranks 4 --volume 1Q"
        "--pattern random --ranks 4 --target-h 0"
        "--pattern random --ranks 4 --target-h 64 --packet 64Ki"
        "--pattern zipf:many --ranks 4"
        "--dist nosuch --n 100 --ranks 4"
        "--dist uniform --n 1e --ranks 4"
        "--dist uniform --ranks 4"
        "--matrix $dir/missing.csv"
        "--matrix $dir/ragged.csv"
        "--matrix $dir/garbage.csv"
        "--matrix $dir/short.csv"
        "--matrix $dir/empty.csv"
        "--matrix $dir"
        "--matrix $dir/ragged.csv --ranks 3"
        "--matrix $dir/short.csv --unit words"
        "--pattern random --ranks 4 stray"
        "--no-such-option"
        ""
    )
    [[ $(id -u) -eq 0 ]] || cases+=("--matrix $dir/unreadable.csv") # root reads anything
    for args in "${cases[@]}"; do
        # shellcheck disable=SC2086
        run -2 --separate-stderr "$SCHED" $args
        [[ -z $output ]] || fail "stdout for '$args': $output"
        [[ ${#stderr_lines[@]} -eq 1 && $stderr == "sortex-sched: error: "*"("*")"* ]] ||
            fail "not one error line for '$args': $stderr"
    done
}

@test "--ping-pong measures alpha and beta between two ranks" {
    run_mpi 2 "$SCHED" --ping-pong=64Ki
    assert_success
    assert_line --regexp '^alpha [0-9.]+e[-+][0-9]+ s '
    assert_line --regexp '^--alpha [0-9.e+-]+ --beta [0-9.e+-]+$'
}

# sched_home ARGS...: sortex-sched with no machine file of the user's or the environment's
# (HOME in this test's directory), so that the built-in machine is the one found.
sched_home() {
    env -u SORTEX_MACHINE -u XDG_CONFIG_HOME HOME="$BATS_TEST_TMPDIR/home" "$SCHED" "$@"
}

@test "the table names the machine it prices with, and the built-in one whose it is and how to measure one's own" {
    run -0 sched_home --pattern onehot:50 --ranks 4 --volume 16Mi
    assert_line --regexp '^machine built-in constants of a project machine: one node, .*2 cores'
    assert_line --regexp 'not your machine: measure it with `mpirun -np P sortex-sched --calibrate > machine.txt`'
    assert_line --regexp 'then give --machine machine.txt'
    assert_line --regexp '^algorithm .* predicted +model +async +sched$'
    # Every model predicts a time, on the critical path the CSV shows.
    run -0 sched_home --pattern onehot:50 --ranks 4 --volume 16Mi --csv
    csv_all 'num(r["predicted_seconds"]) > 0' 'num(r["path_startups"]) > 0' \
        'num(r["path_bytes"]) >= int(r["h_bytes"]) / 2' 'num(r["copy_bytes"]) > 0' \
        'num(r["sync_rounds"]) >= 1' '0 <= num(r["cache_share"]) <= 1'
}

@test "--machine, SORTEX_MACHINE and ~/.config/sortex/machine.txt are looked for in that order" {
    local home=$BATS_TEST_TMPDIR/home p
    mkdir -p "$home/.config/sortex"
    printf 'origin the home file\nalpha 3e-6\n' >"$home/.config/sortex/machine.txt"
    printf 'origin the env file\nalpha 2e-6\n' >"$BATS_TEST_TMPDIR/env.txt"
    printf 'origin the given file\nalpha 1e-6\n' >"$BATS_TEST_TMPDIR/given.txt"
    p=(--pattern bucket --ranks 2 --volume 1Ki --algos alltoallv-linear)
    run -0 env -u XDG_CONFIG_HOME HOME="$home" SORTEX_MACHINE="$BATS_TEST_TMPDIR/env.txt" \
        "$SCHED" "${p[@]}" --machine "$BATS_TEST_TMPDIR/given.txt"
    assert_line --regexp "^machine the file given .*given.txt \(the given file\)$"
    assert_line --regexp '^ +alpha 1 us a start-up'
    run -0 env -u XDG_CONFIG_HOME HOME="$home" SORTEX_MACHINE="$BATS_TEST_TMPDIR/env.txt" \
        "$SCHED" "${p[@]}"
    assert_line --regexp "^machine the file SORTEX_MACHINE names .*env.txt \(the env file\)$"
    run -0 env -u XDG_CONFIG_HOME -u SORTEX_MACHINE HOME="$home" "$SCHED" "${p[@]}"
    assert_line --regexp "^machine the user's machine file .*/.config/sortex/machine.txt \(the home file\)$"
    assert_line --regexp '^ +alpha 3 us a start-up'
    # --alpha overrides the file's, and the prediction follows it.
    run -0 env -u XDG_CONFIG_HOME -u SORTEX_MACHINE HOME="$home" "$SCHED" "${p[@]}" --csv
    local slow=$output
    run -0 env -u XDG_CONFIG_HOME -u SORTEX_MACHINE HOME="$home" "$SCHED" "${p[@]}" --csv \
        --alpha 1e-9
    python3 -c 'import csv, io, sys
a, b = (float(list(csv.DictReader(io.StringIO(t)))[0]["predicted_seconds"]) for t in sys.argv[1:])
assert a > b > 0, (a, b)' "$slow" "$output"
}

@test "a machine file that cannot be read or is malformed is one error line and exit 2" {
    local bad
    for bad in 'alpha' 'alpha fast' 'alpha -1' 'cores 2.5' 'shm 3' 'nosuch 1' \
        'factor shift 1 1' 'factor shift 1 1 1 -2'; do
        printf '%s\n' "$bad" >"$BATS_TEST_TMPDIR/m.txt"
        run --separate-stderr "$SCHED" --machine "$BATS_TEST_TMPDIR/m.txt" --pattern bucket \
            --ranks 2
        [[ $status -eq 2 && -z $output && $(wc -l <<<"$stderr") -eq 1 &&
            $stderr == "sortex-sched: error: "*"m.txt:1"* ]] ||
            fail "'$bad': exit $status, stdout '$output', stderr '$stderr'"
    done
    run --separate-stderr "$SCHED" --machine "$BATS_TEST_TMPDIR/none.txt" --pattern bucket --ranks 2
    assert_failure 2
    assert_equal "$stderr" "sortex-sched: error: cannot read the machine file ($BATS_TEST_TMPDIR/none.txt: No such file or directory)"
}

@test "the built-in machine is the fit committed in results/xmodel/machine.txt" {
    local m=$BATS_TEST_TMPDIR/x
    run -0 sched_home --pattern random --ranks 5 --volume 3Mi --csv
    cut -d, -f7,20 <<<"$output" >"$m.builtin"
    run -0 sched_home --machine "$TOP/results/xmodel/machine.txt" --pattern random --ranks 5 \
        --volume 3Mi --csv
    cut -d, -f7,20 <<<"$output" >"$m.file"
    # One row a model (the header aside), every model --algos help lists: none left out.
    local models
    models=$("$SCHED" --algos help | grep -c '^[a-z0-9-]* *\[')
    [[ $models -ge 11 && $(wc -l <"$m.file") -eq $((models + 1)) ]] ||
        fail "expected $models models: $(cat "$m.file")"
    diff "$m.builtin" "$m.file" || fail "the built-in machine differs from the committed fit"
}

@test "the prediction prices what the closed form leaves out: copies, crowded nodes, half duplex" {
    # Everything on the diagonal: nothing crosses a link, yet every rank copies its block.
    printf '1048576,0\n0,1048576\n' >"$BATS_TEST_TMPDIR/own.csv"
    run -0 sched_home --matrix "$BATS_TEST_TMPDIR/own.csv" --csv --algos pairwise
    csv_all 'num(r["model_seconds"]) == 0' 'num(r["predicted_seconds"]) > 0' \
        'num(r["copy_bytes"]) == 8 * 1048576'
    # Equal blocks on one node of 2 cores: 8 ranks share them, so a rank's bytes cost 4 times
    # what they would alone (and the counts' exchange a few hundred bytes more), while the
    # closed form sees one rank.
    run -0 sched_home --pattern bucket --ranks 8 --volume 64Mi --csv --algos alltoallv-linear
    csv_all 'abs(num(r["path_bytes"]) - 4 * num(r["h_bytes"]) / 2) <= 1024'
    # Half-duplex links add a rank's receives to its sends; full-duplex ones take the larger.
    printf 'origin net\nshm 0\nduplex 1\nllc_bytes 0\n' >"$BATS_TEST_TMPDIR/half.txt"
    printf 'origin net\nshm 0\nduplex 0\nllc_bytes 0\n' >"$BATS_TEST_TMPDIR/full.txt"
    run -0 sched_home --machine "$BATS_TEST_TMPDIR/half.txt" --pattern bucket --ranks 4 \
        --volume 4Mi --csv --algos alltoallv-linear
    local half=$output
    run -0 sched_home --machine "$BATS_TEST_TMPDIR/full.txt" --pattern bucket --ranks 4 \
        --volume 4Mi --csv --algos alltoallv-linear
    python3 -c 'import csv, io, sys
h, f = (list(csv.DictReader(io.StringIO(t)))[0] for t in sys.argv[1:])
hb, fb, h2 = float(h["path_bytes"]), float(f["path_bytes"]), float(f["h_bytes"])
assert hb == 2 * fb and abs(hb - h2) <= 1024, (h, f)  # the counts: a few bytes more
assert float(h["predicted_seconds"]) > float(f["predicted_seconds"]), (h, f)' "$half" "$output"
}

@test "--calibrate under mpirun writes a machine file sortex-sched reads back" {
    run_mpi 2 "$SCHED" --calibrate="$BATS_TEST_TMPDIR"
    assert_success
    printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/m.txt"
    python3 - "$BATS_TEST_TMPDIR/m.txt" <<'PY'
import sys
v = {}
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        k, _, x = line.strip().partition(" ")
        v.setdefault(k, x)
assert v["origin"].startswith("sortex-sched --calibrate, "), v["origin"]
assert "2 ranks on 1 node(s)" in v["origin"], v["origin"]
for k in ("alpha", "beta", "beta_cache", "copy", "copy_cache", "sort_ns_small", "read_bps"):
    assert float(v[k]) > 0, (k, v[k])
assert v["shm"] == "1" and int(v["cores"]) >= 1 and 0 <= float(v["duplex"]) <= 1, v
PY
    [[ $? -eq 0 ]] || fail "calibration file: $(cat "$BATS_TEST_TMPDIR/m.txt")"
    run -0 "$SCHED" --machine "$BATS_TEST_TMPDIR/m.txt" --pattern bucket --ranks 2
    assert_line --regexp '^machine the file given .*m.txt \(sortex-sched --calibrate, '
    run -0 "$SCHED" --sort --machine "$BATS_TEST_TMPDIR/m.txt" --ranks 2 --n-per-rank 1M --csv
}

#!/usr/bin/env bash
# make demo: which exchange back-end, in under a minute. Times every registered back-end on two
# count matrices at two volumes (one sortex-xbench launch), shows what --exchange auto would
# pick for each (sortex-sched, the cost model), sorts two inputs with --exchange auto and with
# the default alltoallv (every output verified against its input), explains every column, and
# ends with two sentences drawn from what it just measured and a pointer to make bench.
#
# Settings (environment): DEMO_NP ranks [4], DEMO_N keys per input [4000000], DEMO_DISTS the
# inputs [uniform zipf], DEMO_PATTERNS the count matrices [bucket onehot:50], DEMO_BYTES bytes
# per rank [64Ki,8Mi], DEMO_REPS repetitions of each exchange [7].
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${SORTEX_BIN:-$PWD/bin}
NP=${DEMO_NP:-4}
N=${DEMO_N:-4000000}
DISTS=${DEMO_DISTS:-"uniform zipf"}
PATTERNS=${DEMO_PATTERNS:-"bucket onehot:50"}
BYTES=${DEMO_BYTES:-64Ki,8Mi}
REPS=${DEMO_REPS:-7}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun -np "$NP" --oversubscribe --bind-to none)

work=$(mktemp -d "${TMPDIR:-/tmp}/sortex-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$SECONDS
cores=$(nproc 2>/dev/null || echo 1)

echo "sortex demo: $NP ranks on $cores cores$([[ $NP -gt $cores ]] && echo " (more ranks than" \
    "cores: they take turns)")"
echo
echo "1. The exchange alone: every back-end on the same count matrices (sortex-xbench), the"
echo "   median of $REPS repetitions of the slowest rank, back-ends interleaved."
"${MPIRUN[@]}" "$BIN/sortex-xbench" --patterns "$(tr ' ' , <<<"$PATTERNS")" --bytes "$BYTES" \
    --reps "$REPS" --output "$work/x.csv" >/dev/null
# What --exchange auto would pick for each case: the least predicted time of sortex-sched.
for pat in $PATTERNS; do
    for b in ${BYTES//,/ }; do
        "$BIN/sortex-sched" --pattern "$pat" --ranks "$NP" --volume "$b" --csv \
            >"$work/sched-$pat-$b.csv"
    done
done
python3 - "$work" "$PATTERNS" "$BYTES" <<'PY'
import csv, glob, os, sys
work, patterns, volumes = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(",")
rows = list(csv.DictReader(l for l in open(work + "/x.csv") if not l.startswith("#")))
def fmt(s):
    return "%.0f us" % (s * 1e6) if s < 1e-3 else "%.2f ms" % (s * 1e3) if s < 1 else "%.2f s" % s
backends = list(dict.fromkeys(r["backend"] for r in rows))
print("   %-10s %9s  %-11s %-21s %-21s %s" % ("pattern", "per rank", "fastest", "alltoallv",
                                            "auto's pick", "every back-end, fastest first"))
summary = []
for label in patterns:
    name, _, param = label.partition(":")
    for v in volumes:
        sel = [r for r in rows if r["pattern"] == name and r["param"] == param and
               r["bytes_per_rank"] == str(int(float(v.rstrip("KMGi")) *
                                          {"Ki": 1024, "Mi": 1 << 20, "Gi": 1 << 30}.get(
                                              v[len(v.rstrip("KMGi")):], 1)))]
        if not sel:
            continue
        t = {r["backend"]: float(r["t_med"]) for r in sel}
        fast = min(t, key=t.get)
        pred = {r["backend"]: float(r["predicted_seconds"])
                for r in csv.DictReader(open("%s/sched-%s-%s.csv" % (work, label, v)))}
        pick = min((b for b in pred if b in t), key=lambda b: pred[b])
        order = sorted(t, key=t.get)
        print("   %-10s %9s  %-11s %-21s %-21s %s" % (
            label, v, fast, "%s (%.2fx)" % (fmt(t["alltoallv"]), t["alltoallv"] / t[fast]),
            "%s %s (%.2fx)" % (pick, fmt(t[pick]), t[pick] / t[fast]),
            " ".join("%s %s" % (b, fmt(t[b])) for b in order[:4]) + " ..."))
        summary.append((label, v, fast, t["alltoallv"] / t[fast], pick, t[pick] / t[fast]))
with open(work + "/exchange.summary", "w") as f:
    for s in summary:
        f.write("%s %s %s %.3f %s %.3f\n" % s)
PY
cat <<'EOF'
   fastest: the least median; alltoallv: MPI's own call, the default (its time over the
   fastest's); auto's pick: what --exchange auto runs for this matrix (the back-end with the
   least time predicted by the cost model, sortex-sched) and its measured time over the
   fastest's.

EOF

echo "2. Whole sorts: $N keys on $NP ranks, --exchange auto and alltoallv, each output verified."
printf '   %-8s %-10s %-10s %7s %7s %7s %7s %7s %7s %7s %6s %7s\n' input exchange ran read lsort \
    select xchg finish write total imbal share
for dist in $DISTS; do
    in=$work/$dist.bin
    "$BIN/sortex-gen" --dist "$dist" --n "$N" --ranks "$NP" --seed 1 -o "$in" >/dev/null
    for ex in auto alltoallv; do
        out=$work/$dist.$ex.sorted
        "${MPIRUN[@]}" "$BIN/sortex" --input "$in" --output "$out" --exchange "$ex" \
            --stats "$work/stats.json"
        if ! "$BIN/sortex-verify" "$out" --input "$in" >/dev/null; then
            echo "sortex demo: verification FAILED for $dist with --exchange $ex" >&2
            exit 1
        fi
        python3 - "$work/stats.json" "$dist" "$ex" >>"$work/sorts.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = {p: d["phases"][p]["max"] for p in d["phases"]}
select = t.get("sample", 0) + t.get("splitters", 0) + t.get("bucket", 0)
inmem = sum(t.get(p, 0) for p in ("local_sort", "sample", "splitters", "bucket", "exchange",
                                  "finish"))
print("%s %s %s %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.4f %.4f" % (
    sys.argv[2], sys.argv[3], d["exchange"], t["read"], t["local_sort"], select, t["exchange"],
    t["finish"], t["write"], d["total"]["max"], d["imbalance"],
    t["exchange"] / inmem if inmem else 0))
PY
        tail -1 "$work/sorts.txt" | awk '{ printf "   %-8s %-10s %-10s %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %6.3f %6.0f%%\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 100 * $12 }'
        rm -f "$out"
    done
    rm -f "$in"
done
cat <<'EOF'
   Seconds on the slowest rank, every phase of the sort (sortex --stats): read, the MPI-IO
   read of each rank's slice; lsort, the local radix sort; select, choosing the splitters and
   cutting the sorted keys into buckets (sample + splitters + bucket); xchg, the exchange of the
   buckets through the back-end; finish, the merge of the received runs; write, the MPI-IO
   write; total, all of them. ran: the back-end that ran (auto's choice); imbal: the largest
   rank's keys over the average (1 is perfect); share: xchg over the in-memory work (lsort to
   finish), the part the back-end decides: read and write go to the file system, whose speed
   here says little about a cluster's.

EOF

python3 - "$work/exchange.summary" "$work/sorts.txt" "$NP" "$((SECONDS - started))" <<'PY'
import sys
ex = [l.split() for l in open(sys.argv[1]) if l.strip()]
sorts = [l.split() for l in open(sys.argv[2]) if l.strip()]
np, secs = sys.argv[3], int(sys.argv[4])
fastest = {}
for _, _, f, *_ in ex:
    fastest[f] = fastest.get(f, 0) + 1
top = max(fastest, key=fastest.get)
a2a = max(float(e[3]) for e in ex)
auto_worst = max(float(e[5]) for e in ex)
share = [float(s[11]) for s in sorts]
xchg = [float(s[6]) / float(s[9]) for s in sorts]
ran = sorted({s[2] for s in sorts if s[1] == "auto"})
print("Conclusion (%d s): on %s ranks here, `%s` was the fastest exchange in %d of %d cases;"
      " alltoallv took up to %.2fx the fastest's time, and auto's picks at most %.2fx." % (
          secs, np, top, fastest[top], len(ex), a2a, auto_worst))
print("In the sorts (auto ran %s), the exchange was %.0f%% to %.0f%% of the in-memory work and"
      " %.0f%% to %.0f%% of the whole sort, the rest being the local sort, the merge and the"
      " file I/O." % (", ".join(ran), 100 * min(share), 100 * max(share), 100 * min(xchg),
                      100 * max(xchg)))
print("For every back-end at every volume, P and skew, with the emulated clusters and how well"
      " the model predicts: make bench (about an hour; make bench-quick, a few minutes), and"
      " results/README.md.")
PY

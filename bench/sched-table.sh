#!/usr/bin/env bash
# bench/sched-table.sh: the table that reproduces the claims of P. Sanders and R. Solis-Oba, "How
# helpers hasten h-relations", Journal of Algorithms 41(1), 2001, pages 86-98, with
# bin/sortex-sched: steps/h of the direct, forward and full-duplex schedules over P = 4 .. 1024
# (powers of two, 3 * 2^k, and odd 3 (2^k + 1)) on random and worst-case matrices, beside the
# theorems' bounds, with the time the scheduler took. Every schedule is checked by the validator
# while it is built.
#
#   bench/sched-table.sh [OUTDIR]            (default results/sched; SORTEX_BIN finds the binary)
#   bench/sched-table.sh --render [OUTDIR]   README.md again from OUTDIR's steps.csv, no runs
#
# Writes OUTDIR/steps.csv (its header row first, one row per family, P and algorithm),
# OUTDIR/steps.meta.json (the machine, the run, and what each column means) and OUTDIR/README.md
# (the tables), each under a temporary name renamed into place at the end. Takes a few minutes
# on 2 cores. Exit status: 0, or 1 when a run failed (nothing is written then), 2 usage error.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
sched=${SORTEX_BIN:-$top/bin}/sortex-sched
render=0
if [[ ${1:-} == --render ]]; then
    render=1
    shift
fi
(($# <= 1)) || { echo "sched-table: error: too many arguments ($*)" >&2; exit 2; }
out=${1:-$top/results/sched}
if ((render)); then
    [[ -f $out/steps.csv && -f $out/steps.meta.json ]] ||
        { echo "sched-table: error: no steps.csv and steps.meta.json in $out" >&2; exit 1; }
else
    [[ -x $sched ]] || { echo "sched-table: error: missing $sched (run make)" >&2; exit 1; }
    mkdir -p "$out"
fi

# The instances. Every rank sends VOLUME bytes (its own block included): enough that the
# back-ends' packet rule, asked for h ~ 256 packets (--target-h; the back-ends themselves cut h
# into 32, forward into 8, coarser than the theorems need to show), stays above its 64 KiB
# floor at every P.
volume=$((64 << 20))
ps=(4 6 8 9 12 15 16 24 27 32 48 51 64 96 99 128 192 195 256 384 387 512 768 771 1024)
algos=direct,forward,fullduplex
# family: the pattern, and how packets are sized
#   random  random weights per (source, destination), packets by the MPI back-ends' rule for
#           h ~ 256 packets (so from P ~ 128 on every message is one packet: a complete graph)
#   fine    the same matrices with packets of about a quarter of the mean message: an irregular
#           multigraph with h ~ 8-10 P packets at every P
#   worst   the lower-bound instance: 3-cycles with h/2 packets each way (h = 256); for P not a
#           multiple of 3 the last rank keeps its data (P = 3k+1) or the last two swap (3k+2)
families=(random fine worst)

measure() {
    rows=$tmp/rows.csv
    : >"$rows"

    load_start=$(cut -d' ' -f1 /proc/loadavg)
    t_start=$(date +%s)
    for p in "${ps[@]}"; do
        for fam in "${families[@]}"; do
            args=(--pattern random --ranks "$p" --volume "$volume")
            case $fam in
            random) args+=(--target-h 256) ;;
            fine)
                local q=$((volume / (4 * p) / 40))
                args+=(--packet $(((q > 1 ? q : 1) * 40)))
                ;;
            worst) args=(--pattern lowerbound --ranks "$p" --volume "$volume" --target-h 256) ;;
            esac
            t0=$(date +%s.%N)
            if ! "$sched" --csv --algos "$algos" "${args[@]}" >"$tmp/one.csv"; then
                echo "sched-table: error: sortex-sched ${args[*]} failed" >&2
                exit 1
            fi
            t1=$(date +%s.%N)
            tail -n +2 "$tmp/one.csv" | sed "s/^/$fam,/" >>"$rows"
            head -1 "$tmp/one.csv" >"$tmp/header.csv"
            awk -v f="$fam" -v p="$p" -v a="$t0" -v b="$t1" \
                'BEGIN { printf "%-7s P = %-5s %6.2f s\n", f, p, b - a }' >&2
        done
    done
    t_total=$(($(date +%s) - t_start))
    load_end=$(cut -d' ' -f1 /proc/loadavg)

    # The machine, the build and the run, as 'key: value' lines for steps.meta.json.
    commit=$(git -C "$top" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
    git -C "$top" diff --quiet HEAD -- . ':!results' 2>/dev/null || commit="$commit-dirty"
    {
        echo "suite: sched-table"
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "commit: $commit"
        echo "program: $("$sched" --version | head -1)"
        echo "mpi_library: $("$sched" --version | sed -n 's/^built against: \([^;]*\).*/\1/p')"
        local key
        echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
        for key in "cpu family" model stepping; do
            echo "cpu_${key#cpu }: $(sed -n "s/^${key}[[:space:]]*: //p" /proc/cpuinfo | head -1)"
        done
        echo "cores: $(nproc)"
        echo "compiler: $(${CC:-mpicc} --version 2>/dev/null | head -1)"
        echo "loadavg: $load_start at the start, $load_end at the end (1-minute)"
        echo "wall_seconds: $t_total"
        echo "volume_bytes_per_rank: $volume"
        echo "command: bench/sched-table.sh"
    } >"$tmp/env.txt"
}

tmp=$(mktemp -d)
part_csv=$out/.steps.csv.tmp.$$
part_meta=$out/.steps.meta.json.tmp.$$
part_md=$out/.README.md.tmp.$$
trap 'rm -rf "$tmp" "$part_csv" "$part_meta" "$part_md"' EXIT

# Measure (steps.csv and its description), unless only the page is asked for; then the page.
csv=$out/steps.csv
meta=$out/steps.meta.json
if ((render == 0)); then
    measure
    # steps.csv: the simulator's columns behind the family, plus the paper's bound.
    python3 - "$tmp/env.txt" "$tmp/header.csv" "$rows" "$part_csv" "$part_meta" <<'PY'
import csv, io, json, sys

env_path, header_path, rows_path, csv_out, meta_out = sys.argv[1:]
meta = dict(l.rstrip("\n").split(": ", 1) for l in open(env_path))
header = ["family"] + open(header_path).read().strip().split(",")
rows = list(csv.DictReader(io.StringIO(open(rows_path).read()), fieldnames=header))

def paper_bound(r):
    """The theorems: 3 ceil(h/2) direct; 6/5 (h+1) forward for even P, (6/5 + 2/P)(h+1) for
    odd P; max(sent, received) full-duplex (the simulator's bound_steps, Koenig)."""
    p, h = int(r["p"]), int(r["h_packets"])
    if r["algo"] == "direct":
        return 3 * ((h + 1) // 2)
    if r["algo"] == "forward":
        return (1.2 if p % 2 == 0 else 1.2 + 2 / p) * (h + 1)
    return float(r["bound_steps"])

cols = ["family", "p", "parity", "h_packets", "packet_bytes", "algo", "steps", "steps_per_h",
        "bound_paper", "bound_paper_per_h", "bound_impl", "within_paper", "sched_seconds",
        "xfers", "rounds"]
out = []
for r in rows:
    h = int(r["h_packets"])
    b = paper_bound(r)
    det = dict(kv.split("=") for kv in r["detail"].split(";") if kv)
    out.append({
        "family": r["family"], "p": int(r["p"]), "parity": "odd" if int(r["p"]) % 2 else "even",
        "h_packets": h, "packet_bytes": int(r["packet_bytes"]), "algo": r["algo"],
        "steps": float(r["steps"]), "steps_per_h": float(r["steps_per_h"]),
        "bound_paper": b, "bound_paper_per_h": b / h, "bound_impl": float(r["bound_steps"]),
        "within_paper": int(float(r["steps"]) <= b + 1e-9),
        "sched_seconds": float(r["sched_seconds"]), "xfers": int(det["xfers"]),
        "rounds": int(r["rounds"]),
    })

meta["columns"] = {
    "family": "random, fine or worst (see README.md)", "p": "PEs (ranks)",
    "parity": "odd or even P", "h_packets": "h: the most packets one PE sends plus receives",
    "packet_bytes": "bytes per packet", "algo": "schedule: direct, forward or fullduplex",
    "steps": "length of the schedule in packet steps", "steps_per_h": "steps / h",
    "bound_paper": "the paper's bound on steps", "bound_paper_per_h": "bound_paper / h",
    "bound_impl": "the simulator's bound on steps", "within_paper": "1 when steps <= bound_paper",
    "sched_seconds": "wall time to build and validate the schedule, seconds",
    "xfers": "transfers in the schedule", "rounds": "rounds (steps holding any transfer)"}
with open(meta_out, "w") as f:
    json.dump(meta, f, indent=1)
    f.write("\n")
with open(csv_out, "w") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(cols)
    for o in out:
        w.writerow([("%.6g" % o[c]) if isinstance(o[c], float) else o[c] for c in cols])
PY
    csv=$part_csv
    meta=$part_meta
fi
python3 - "$csv" "$meta" "$part_md" <<'PY'
import csv, json, sys

csv_in, meta_in, md_out = sys.argv[1:]
meta = json.load(open(meta_in))
ints = ("p", "h_packets", "packet_bytes", "within_paper", "xfers", "rounds")
out = [{k: int(v) if k in ints else v if k in ("family", "parity", "algo") else float(v)
        for k, v in r.items()} for r in csv.DictReader(open(csv_in))]
get = {(o["family"], o["p"], o["algo"]): o for o in out}
ps = sorted({o["p"] for o in out})

def secs(s):
    return "%.2f ms" % (s * 1e3) if s < 1 else "%.2f s" % s

md = []
md.append("# h-relation schedules against the theorems of P. Sanders and R. Solis-Oba, \"How "
          "helpers hasten h-relations\", Journal of Algorithms 41(1), 2001, pages 86-98\n")
md.append("Generated by `bench/sched-table.sh` with `bin/sortex-sched`; nothing here is edited "
          "by hand. `steps.csv` holds every figure (one row per family, P and algorithm), "
          "`steps.meta.json` the machine, the run and what each column means.\n")
md.append("| | |\n|---|---|")
for k in ("date", "commit", "program", "mpi_library", "cpu", "cores", "compiler", "loadavg",
          "wall_seconds"):
    md.append("| %s | %s |" % (k, meta.get(k, "")))
md.append("")
md.append("What is measured: for each P x P matrix, the schedules of `exchange/sched.h` are built "
          "on the packet matrix (exactly as the MPI back-ends `direct`, `forward` and "
          "`fullduplex` build them), checked by `exchange_sched_validate()` (every piece "
          "delivered exactly once, no PE sending and receiving in one step, forwarded pieces "
          "two hops), and their length in packet steps is divided by h, the most packets one PE "
          "sends plus receives. The bounds beside them are the paper's: direct <= 3 ceil(h/2) "
          "(section 2.1), forward <= 6/5 (h+1) for even P and <= (6/5 + 2/P)(h+1) for odd P "
          "(sections 2.2-2.4), full-duplex = max(sent, received) packets (Koenig). "
          "`sched` is the wall time the scheduler took on one core of this machine (what every "
          "rank computes before the first byte moves).\n")
md.append("Families (every rank sends %s bytes, its own block included):\n" %
          meta.get("volume_bytes_per_rank", "?"))
md.append("- **random**: random weights per (source, destination), packets sized by the MPI "
          "back-ends' rule asked for h of about 256 packets (the back-ends themselves use 32). "
          "From P of about 128 on, every message "
          "is a single packet, so the instance is the complete digraph with unit messages "
          "(h = 2 (P-1)).")
md.append("- **fine**: the same matrices with packets of about a quarter of the mean message, "
          "so every message is several packets and the instance is an irregular multigraph "
          "(h of about 8 to 10 P).")
md.append("- **worst**: the paper's lower-bound instance (section 2.5): 3-cycles with h/2 = 128 "
          "packets each way. Direct delivery needs exactly 3h/2 here and forwarding 6h/5 (even "
          "P); for odd P no schedule can beat 6/5 (1 + 3/(5P-3)) h. For P not a multiple of 3 "
          "the last rank idles (P = 3k+1) or the last two swap (P = 3k+2).\n")

def headline(fam, p):
    d, f, u = (get[(fam, p, a)] for a in ("direct", "forward", "fullduplex"))
    return ("direct %.3f h (bound %.3f), forward %.3f h (bound %.3f), full-duplex %.3f h; "
            "scheduling %s, %s and %s" % (d["steps_per_h"], d["bound_paper_per_h"],
                                          f["steps_per_h"], f["bound_paper_per_h"],
                                          u["steps_per_h"], secs(d["sched_seconds"]),
                                          secs(f["sched_seconds"]), secs(u["sched_seconds"])))

pmax = max(ps)
md.append("## Headline, P = %d\n" % pmax)
for fam in ("random", "fine", "worst"):
    if (fam, pmax, "direct") in get:
        md.append("- %s (h = %d packets): %s." % (fam, get[(fam, pmax, "direct")]["h_packets"],
                                                  headline(fam, pmax)))
viol = [o for o in out if not o["within_paper"]]
fwd = [o for o in out if o["algo"] == "forward"]
closest = max(fwd, key=lambda o: o["steps"] / o["bound_paper"])
exact = [o for o in out if o["algo"] == "direct" and o["family"] == "worst"
         and o["steps"] == o["bound_paper"]]
md.append("- Every one of the %d schedules is valid, and %d exceed the paper's bound%s. Direct "
          "delivery takes exactly its bound 3h/2 on the lower-bound instance (%d of %d P), as "
          "the paper proves it must; forwarding comes closest to its bound at %s P = %d, "
          "%.4f of it. Full-duplex always takes exactly max(sent, received), its optimum.\n" % (
              len(out), len(viol),
              "" if not viol else " (" + ", ".join("%s %s P=%d" % (o["family"], o["algo"], o["p"])
                                                   for o in viol) + ")",
              len(exact), len([o for o in out if o["algo"] == "direct" and o["family"] == "worst"]),
              closest["family"], closest["p"], closest["steps"] / closest["bound_paper"]))

for fam in ("random", "fine", "worst"):
    worst = fam == "worst"
    md.append("## %s\n" % fam)
    if worst:
        md.append("For odd P, *lower* is the paper's lower bound 6/5 (1 + 3/(5P-3)) for any "
                  "schedule of this instance (section 2.5, P = 3k with k odd); forwarding lands "
                  "between it and the upper bound.\n")
    md.append("| P | h | direct steps/h | bound | forward steps/h | bound |%s full-duplex "
              "steps/h | sched direct | sched forward | sched full-duplex |" %
              (" lower |" if worst else ""))
    md.append("|---:|---:|---:|---:|---:|---:|%s---:|---:|---:|---:|" % ("---:|" if worst else ""))
    for p in ps:
        if (fam, p, "direct") not in get:
            continue
        d, f, u = (get[(fam, p, a)] for a in ("direct", "forward", "fullduplex"))
        lower = ""
        if worst:
            lower = " %.3f |" % (1.2 * (1 + 3 / (5 * p - 3))) if p % 2 and p % 3 == 0 else " |"
        md.append("| %d%s | %d | %.3f | %.3f | %.3f | %.3f |%s %.3f | %s | %s | %s |" % (
            p, " (odd)" if p % 2 else "", d["h_packets"], d["steps_per_h"],
            d["bound_paper_per_h"], f["steps_per_h"], f["bound_paper_per_h"], lower,
            u["steps_per_h"], secs(d["sched_seconds"]), secs(f["sched_seconds"]),
            secs(u["sched_seconds"])))
    md.append("")
md.append("Scheduling times are wall times of one run on a shared machine (see the load average "
          "above); they are indicative, not benchmarks.")
with open(md_out, "w") as f:
    f.write("\n".join(md) + "\n")
PY

# Into place only now (renames within the directory): never a half-written table.
if ((render == 0)); then
    mv "$part_meta" "$out/steps.meta.json"
    mv "$part_csv" "$out/steps.csv"
fi
mv "$part_md" "$out/README.md"
echo "sched-table: wrote $( ((render)) || echo "$out/steps.csv, ")$out/README.md" >&2

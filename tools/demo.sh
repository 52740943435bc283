#!/usr/bin/env bash
# make demo: the main job on a built-in dataset. Generates several distributions (tens of
# millions of keys in all), sorts each on 4 ranks with every registered back-end, verifies
# every output against its input, and prints a table of phase times per back-end.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${SORTEX_BIN:-$PWD/bin}
NP=${DEMO_NP:-4}
N=${DEMO_N:-4000000}
DISTS=${DEMO_DISTS:-"uniform staggered zero dd npb"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

work=$(mktemp -d "${TMPDIR:-/tmp}/sortex-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

backends=$("$BIN/sortex" --exchange help | awk 'NR > 1 && NF { print $1 }')
echo "sortex demo: $N keys per distribution, $NP ranks, back-ends: $(echo $backends)"
printf '%-10s %-10s %7s %7s %7s %7s %7s %7s %7s %7s %7s %6s %s\n' distribution exchange \
    read lsort sample split bucket xchg finish write total imbal verified
for dist in $DISTS; do
    in=$work/$dist.bin
    "$BIN/sortex-gen" --dist "$dist" --n "$N" --ranks "$NP" --seed 1 -o "$in" >/dev/null
    for ex in $backends; do
        out=$work/$dist.$ex.sorted
        mpirun -np "$NP" --oversubscribe --bind-to none "$BIN/sortex" --input "$in" \
            --output "$out" --exchange "$ex" --stats "$work/stats.json"
        if "$BIN/sortex-verify" "$out" --input "$in" >/dev/null; then ok=yes; else ok=NO; fi
        python3 - "$work/stats.json" "$dist" "$ex" "$ok" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ph = ["read", "local_sort", "sample", "splitters", "bucket", "exchange", "finish", "write"]
t = [d["phases"][p]["max"] for p in ph]
print("%-10s %-10s " % (sys.argv[2], sys.argv[3]) + " ".join("%7.3f" % x for x in t) +
      " %7.3f %6.3f %s" % (d["total"]["max"], d["imbalance"], sys.argv[4]))
PY
        [[ $ok == yes ]] || { echo "sortex demo: verification FAILED for $dist/$ex" >&2; exit 1; }
        rm -f "$out"
    done
    rm -f "$in"
done
echo "times are the slowest rank's, in seconds; every output was verified against its input"

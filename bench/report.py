#!/usr/bin/env python3
"""bench/report.py: the tables behind the plots, and results/README.md, from the results CSVs.

  report.py tables RESULTS OUTDIR   writes OUTDIR/*.dat (tab separated, one column per series)
                                    and OUTDIR/plots.tsv, the list bench/plots.sh renders
  report.py readme RESULTS          writes RESULTS/README.md: the findings (which back-end to use
                                    when), environment, plots, key tables and one short
                                    paragraph per observation, phrased from the data; and
                                    RESULTS/model/README.md where the model suite ran
  report.py model RESULTS           writes RESULTS/model/README.md alone: the sort model against
                                    the measured phases (here and on the emulated clusters in
                                    RESULTS/cluster*/model/), the goals and the scaling table

Only the Python standard library. Every figure in the README is computed here from the CSV files
the driver wrote (each NAME.csv starts at its header row; NAME.meta.json beside it describes the
machine and the run); nothing is typed in by hand, so a re-run rewrites the findings too.
"""

import csv
import glob
import json
import math
import os
import re
import statistics
import sys

SUITES = ("exchange", "localsort", "sort", "e2e", "records", "model", "python")
PHASES = ["read", "local_sort", "sample", "splitters", "bucket", "exchange", "finish", "write"]
KEY_BYTES = 8
# The memory goal of the sample sort: peak RSS summed over ranks <= 2.2x the input (+ MPI's own).
MEM_GOAL_BYTES_PER_KEY = 2.2 * KEY_BYTES
# Open MPI's own alltoallv algorithms, forced through coll/tuned in launches of their own.
OMPI_BASELINES = ("ompi-linear", "ompi-pairwise")

# The sources the page names, as the top-level README lists them.
REF_OAS = ("\"Combining OAS: lower bounds, algorithms, and their latencies\", study notes of the"
           " course Parallel and Distributed Programming, Faculty of Information Technology,"
           " Czech Technical University in Prague (no author or date given)")
REF_SS01 = ("P. Sanders and R. Solis-Oba, \"How helpers hasten h-relations\", Journal of"
            " Algorithms 41(1), 2001, pages 86-98")
REF_BHJ96 = ("D. A. Bader, D. R. Helman and J. JáJá, \"Practical parallel algorithms for"
             " personalized communication and integer sorting\", ACM Journal of Experimental"
             " Algorithmics 1,"
             " article 3, 1996")


# ---- reading -----------------------------------------------------------------------------------

def read_results(path):
    """Reads a results CSV (its header row first) and its description NAME.meta.json beside it:
    (meta, rows as dicts); meta is {} when the description is missing."""
    try:
        with open(os.path.splitext(path)[0] + ".meta.json") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        meta = {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return meta, rows


def num(x, default=None):
    try:
        return float(x)
    except (TypeError, ValueError):
        return default


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def load_suite(results, suite):
    """[(file, meta, rows)] of RESULTS/suite/*.csv, sorted by file name."""
    out = []
    for path in sorted(glob.glob(os.path.join(results, suite, "*.csv"))):
        meta, rows = read_results(path)
        out.append((os.path.relpath(path, results), meta, rows))
    return out


def load_status(results):
    try:
        with open(os.path.join(results, "runs.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"suites": {}}


# ---- formatting --------------------------------------------------------------------------------

def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return "%.0f µs" % (s * 1e6)
    if s < 1:
        return "%.1f ms" % (s * 1e3)
    return "%.2f s" % s


def fmt_bytes(b):
    b = int(b)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size and b % size == 0:
            return "%d %s" % (b // size, unit)
    if b >= 10 << 10:
        return "%.0f KiB" % (b / 1024.0) if b < 10 << 20 else "%.1f MiB" % (b / 2.0**20)
    return "%d B" % b


def tick_bytes(b):
    """An axis label in binary units: 256 B, 2 KiB, 64 MiB, 1.3 MiB where not a whole unit."""
    b = float(b)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            v = b / size
            return ("%d %s" if v == int(v) else "%.1f %s" if v < 10 else "%.0f %s") % (v, unit)
    return "%d B" % b


def tick_count(n):
    """An axis label for a count: 256, 64 Ki, 16 Mi (binary prefixes)."""
    return tick_bytes(n).replace("B", "").strip()


def tick_time(s):
    """An axis label in time units: 10 µs, 1 ms, 2.5 s."""
    for unit, size in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= size * 0.999:
            v = s / size
            return ("%.0f %s" if abs(v - round(v)) < 1e-6 else "%.3g %s") % (v, unit)
    return "%g s" % s


def time_ticks(values):
    """A gnuplot ytics list for times in seconds on a logarithmic axis: 1, 2 and 5 times the
    powers of ten the values span (1, 10, 100 when they span many decades), labelled in µs, ms
    or s."""
    vals = [v for v in values if v is not None and v > 0]
    if not vals:
        return None
    lo, hi = math.floor(math.log10(min(vals))), math.ceil(math.log10(max(vals)))
    steps = (1, 2, 5) if hi - lo <= 3 else (1,)
    ticks = [m * 10.0 ** e for e in range(lo, hi + 1) for m in steps]
    ticks = [t for t in ticks if min(vals) / 2 <= t <= max(vals) * 2]
    return "(%s)" % ", ".join('"%s" %.12g' % (tick_time(t), t) for t in ticks)


def fmt_n(n):
    n = int(n)
    if n >= 1 << 10 and n & (n - 1) == 0:
        return "2^%d" % (n.bit_length() - 1)
    return "{:,}".format(n)


def times(r):
    """'1.30× as long as' or '0.70× the time of' (reads right either way)."""
    return "%.2f× as long as" % r if r >= 1 else "only %.2f× the time of" % r


def ratio(a, b):
    return a / b if a is not None and b else None


def pattern_label(r):
    return r["pattern"] + (":" + r["param"] if r.get("param") else "")


def scale_value(v, k):
    """v (a number, None, or a (value, low, high) tuple) times k."""
    if isinstance(v, tuple):
        return tuple(None if x is None else x * k for x in v)
    return None if v is None else v * k


def write_dat(path, xname, columns, rows):
    """rows: [(x, [v or None per column])] -> tab separated with a header; '?' for missing."""
    with open(path, "w") as f:
        f.write("\t".join([xname] + columns) + "\n")
        for x, vals in rows:
            f.write("\t".join([str(x)] + ["?" if v is None else "%.9g" % v for v in vals]) + "\n")


# One colour and one point type per series, the same in every plot: back-ends, the local sorts
# and the phases of a sort. The back-ends take Paul Tol's "muted" scheme (nine colours told apart
# with every common colour-vision deficiency), black for the default and grey and teal, dashed,
# for Open MPI's forced algorithms; each also has a point type of its own.
SERIES_STYLE = {
    # exchange back-ends; Open MPI's own algorithms dashed
    "alltoallv": ("000000", 7), "direct": ("CC6677", 5), "forward": ("DDAA33", 9),
    "fullduplex": ("882255", 11), "pairwise": ("117733", 13), "shift": ("88CCEE", 4),
    "grid": ("332288", 6), "hypercube": ("999933", 8), "transpose": ("AA4499", 12),
    "ompi-linear": ("44AA99", 1), "ompi-pairwise": ("777777", 2),
    # local sorts
    "sortex": ("0072B2", 7), "ips4o": ("E69F00", 5), "ips4o_par": ("D55E00", 11),
    "vqsort": ("009E73", 9), "boost_bis": ("CC79A7", 13), "boost_spread": ("56B4E9", 4),
    "std": ("7F7F7F", 8), "qsort": ("8C564B", 6), "gnu_parallel": ("BCBD22", 10),
    "merge": ("000000", 1),
    # phases of a sort
    "read": ("56B4E9", 1), "local_sort": ("0072B2", 1), "sample": ("F0E442", 1),
    "splitters": ("CC79A7", 1), "bucket": ("BCBD22", 1), "exchange": ("D55E00", 1),
    "finish": ("009E73", 1), "write": ("7F7F7F", 1),
}
SPARE_COLOURS = ["17BECF", "FF7F0E", "2CA02C", "D62728", "1F77B4", "E377C2"]


def series_style(names):
    """'RRGGBB/point type/dash type' per series: its fixed style, or a spare colour."""
    out, spare = [], 0
    for n in names:
        colour, pt = SERIES_STYLE.get(n, (None, 3))
        if colour is None:
            colour, spare = SPARE_COLOURS[spare % len(SPARE_COLOURS)], spare + 1
        out.append("%s/%d/%d" % (colour, pt, 2 if n in OMPI_BASELINES else 1))
    return ",".join(out)


def xtics(values, label):
    """A gnuplot xtics list placing a tick at each measured x, labelled by label(x)."""
    return "(%s)" % ", ".join('"%s" %.12g' % (label(v), v) for v in values)


class Plots:
    """Collects the manifest of plots for bench/plots.sh."""

    # Values spanning more than this factor get a logarithmic y axis.
    LOG_SPAN = 20.0

    def __init__(self, outdir):
        self.outdir = outdir
        self.items = []

    def add(self, kind, name, xname, columns, rows, title, xlabel, ylabel, logx=0, logy=None,
            ref=None, ticks=None, errors=False, seconds=False, mark=None, band=None):
        """kind: lines, clustered or stacked; rows [(x, [value per column])], or with errors
        [(x, [(value, low, high) per column])]: error bars from the repetitions' spread; logy
        None: log base 10 when the values span decades (never for stacked bars, whose sums
        matter); ticks: an xtics list (see xtics()); seconds: the values are times, shown in
        µs, ms or s; mark: (x, label), the region from x on shaded (the oversubscribed ranks);
        band: (label, [(low, high) per row]), a shaded range behind the lines."""
        if not rows or not columns:
            return
        flat = [(v[0] if isinstance(v, tuple) else v) for _, vs in rows for v in vs]
        vals = [v for v in flat if v is not None and v > 0]
        if band:
            vals += [v for lh in band[1] for v in lh if v is not None and v > 0]
        if logy is None:
            logy = 10 if kind != "stacked" and vals and max(vals) > self.LOG_SPAN * min(vals) else 0
        # Bars on a log axis start from the bottom of the axis: a little below the least value.
        ymin = "%.3g" % (min(vals) / 1.5) if logy and vals and kind != "lines" else "-"
        yticks = "-"
        if seconds and logy:
            yticks = time_ticks(vals) or "-"
        elif seconds and vals:
            # A linear axis: the values in the unit their largest one reads best in.
            unit, size = next((u, z) for u, z in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6))
                              if max(vals) >= z or u == "µs")
            rows = [(x, [scale_value(v, 1 / size) for v in vs]) for x, vs in rows]
            if band:
                band = (band[0], [scale_value(lh, 1 / size) for lh in band[1]])
            ylabel = "%s, %s" % (ylabel, unit) if ylabel else unit
        dat = os.path.join(self.outdir, name + ".dat")
        cols, out = [], []
        if band:
            cols += [band[0] + " (low)", band[0] + " (high)"]
        for c in columns:
            cols += [c, c + " (min)", c + " (max)"] if errors else [c]
        for i, (x, vs) in enumerate(rows):
            line = list(band[1][i]) if band else []
            for v in vs:
                line += list(v) if errors else [v]
            out.append((x, line))
        write_dat(dat, xname, cols, out)
        # Empty fields would vanish when the shell splits on tabs: "-" stands for "none".
        self.items.append([kind, name, dat, str(len(cols) + 1), title or "-", xlabel or "-",
                           ylabel or "-", str(logx), str(logy), "%g|%s" % ref if ref else "-",
                           series_style(columns), ticks or "-", ymin, "1" if errors else "0",
                           yticks, "%g|%s" % mark if mark else "-",
                           band[0] if band else "-"])

    def write(self):
        with open(os.path.join(self.outdir, "plots.tsv"), "w") as f:
            for it in self.items:
                f.write("\t".join(it) + "\n")


# ---- the analyses (shared by the plots and the README) -----------------------------------------

def exchange_data(results):
    """Exchange rows grouped by file: sizes files (several volumes), skew files (sweeps) and
    dists files (the sort's own count matrices on datagen inputs, pattern 'sort')."""
    sizes, skew, dists, invalid = [], [], [], 0
    for name, meta, rows in load_suite(results, "exchange"):
        good = [r for r in rows if r.get("valid") == "1"]
        invalid += len(rows) - len(good)
        if not good:
            continue
        P = int(good[0]["P"])
        volumes = sorted({int(r["bytes_per_rank"]) for r in good})
        params = {(r["pattern"], r["param"]) for r in good if r["pattern"] in ("onehot", "zipf")}
        variant = meta.get("variant", "")
        # Plots are named by P, or by the file when the run is a variant (another setting of
        # the same back-ends at a P that may also have a plain run).
        stem = os.path.splitext(os.path.basename(name))[0]
        tag = "p%d" % P if not variant else re.sub(r"[^a-z0-9]+", "_", stem.lower())
        entry = {"file": name, "meta": meta, "rows": good, "P": P, "volumes": volumes,
                 "backends": list(dict.fromkeys(r["backend"] for r in good)),
                 "variant": variant, "tag": tag}
        if all(r["pattern"] == "sort" for r in good):
            dists.append(entry)
        elif len(volumes) > 1 or len(params) <= 2:
            sizes.append(entry)
        if len(params) > 2:
            skew.append(entry)
    dists.sort(key=lambda e: e["P"])
    return sizes, skew, dists, invalid


def dists_summary(entry, base="alltoallv"):
    """Per back-end of a dists file at its largest volume: {backend: (times by input, spread,
    worst ratio to base, its input, median ratio to base)}."""
    rows, vol = entry["rows"], entry["volumes"][-1]
    inputs = list(dict.fromkeys(r["param"] for r in rows))
    t = {b: {d: t_of(rows, backend=b, param=d, bytes_per_rank=vol) for d in inputs}
         for b in entry["backends"]}
    out = {}
    for b in entry["backends"]:
        ts = {d: x for d, x in t[b].items() if x}
        if not ts:
            continue
        spread = max(ts.values()) / min(ts.values())
        # Paired ratios (xbench's ratio_med) where the file has them, else ratios of medians.
        rs = {d: (base == "alltoallv" and paired_ratio(rows, b, d, vol)) or x / t[base][d]
              for d, x in ts.items() if t.get(base, {}).get(d)}
        worst = max(rs, key=rs.get) if rs else None
        out[b] = (ts, spread, rs[worst] if worst else None, worst,
                  median(list(rs.values())) if rs else None)
    return inputs, out


# When a back-end counts as faster: the one rule of this page, said on it.
NOISE_RULE = ("A back-end is called faster than another only when its median time is below the"
              " other's fastest repetition (its minimum): the other never once ran as fast as this"
              " one typically does. In each measured case the back-ends whose minimum is at or"
              " below the fastest median are *within noise* of it; a winner is named (and"
              " bolded) only when no other back-end is within noise.")


def verdict(times):
    """times {backend: (median, minimum)} of one case -> (fastest, [back-ends within noise of
    it, fastest first], the winner or None) by NOISE_RULE."""
    have = {b: t for b, t in times.items() if t[0] is not None and t[1] is not None}
    if not have:
        return None, [], None
    best = min(have, key=lambda b: have[b][0])
    within = sorted((b for b in have if have[b][1] <= have[best][0]), key=lambda b: have[b][0])
    return best, within, best if within == [best] and len(have) > 1 else None


def case_times(rows, label, vol):
    """{backend: (median, minimum)} of one pattern (NAME:PARAM label) at one volume."""
    return {r["backend"]: (num(r["t_med_s"]), num(r["t_min_s"])) for r in rows
            if pattern_label(r) == label and int(r["bytes_per_rank"]) == vol}


def per_h_spread(entry):
    """Skew apart from volume on a dists file: per back-end, (max / min over the inputs of the
    median time per byte of h, the slowest input, the fastest), at the largest volume. Inputs
    whose h is under a quarter of the volume (e.g. `zero`, where almost every key stays home and
    the time is the local copy) are left out: there time per byte of h measures nothing."""
    rows, vol = entry["rows"], entry["volumes"][-1]
    out = {}
    for b in entry["backends"]:
        per = {r["param"]: num(r["t_med_s"]) / int(r["h_bytes"]) for r in rows
               if r["backend"] == b and int(r["bytes_per_rank"]) == vol and
               int(r["h_bytes"]) >= vol / 4 and num(r["t_med_s"])}
        if len(per) > 1:
            hi, lo = max(per, key=per.get), min(per, key=per.get)
            out[b] = (per[hi] / per[lo], hi, lo)
    return out


def low_h_inputs(entry):
    vol = entry["volumes"][-1]
    return sorted({r["param"] for r in entry["rows"]
                   if int(r["bytes_per_rank"]) == vol and int(r["h_bytes"]) < vol / 4})


def paired_ratio(rows, backend, param, vol):
    """xbench's ratio_med for one row: the median over repetitions of the row's time over
    alltoallv's in the same repetition; None in files written before it existed."""
    for r in rows:
        if (r["backend"], r["param"], int(r["bytes_per_rank"])) == (backend, param, vol):
            return num(r.get("ratio_med")) or None
    return None


def t_of(rows, **want):
    for r in rows:
        if all(str(r.get(k)) == str(v) for k, v in want.items()):
            return num(r["t_med_s"])
    return None


def sort_groups(rows):
    """Medians over launches of verified runs with MPI-IO (root I/O has its own table) and
    without --check (its cost has its own paragraph), keyed by (backend, dist, n, P, threads)."""
    groups = {}
    for r in rows:
        if (r.get("status") != "verified" or r.get("io", "mpiio") not in ("", "mpiio") or
                r.get("check", "no") == "yes"):
            continue
        key = (r["backend"], r["dist"], int(r["n"]), int(r["P"]), int(r["threads"]))
        groups.setdefault(key, []).append(r)
    out = {}
    for key, rs in groups.items():
        m = {"launches": len(rs)}
        for c in ["wall_s", "total_s", "inmem_s", "imbalance", "bytes_moved", "rss_sum_kib",
                  "bytes_per_key"] + [p + "_s" for p in PHASES]:
            m[c] = median([num(r.get(c)) for r in rs])
        m["imbalance_max"] = max(num(r["imbalance"], 0) for r in rs)
        m["exchange_s_min"] = min((num(r.get("exchange_s")) for r in rs
                                   if num(r.get("exchange_s")) is not None), default=None)
        out[key] = m
    return out


def sort_failures(rows):
    return [r for r in rows if r.get("status") != "verified"]


def main_config(groups):
    """The (P, threads) with the most distributions (2 x 1 on a tie)."""
    dists = {}
    for (_, d, _, P, T) in groups:
        dists.setdefault((P, T), set()).add(d)
    return max(dists, key=lambda c: (len(dists[c]), c == (2, 1))) if dists else None


def localsort_data(results):
    data = load_suite(results, "localsort")
    if not data:
        return None
    name, meta, rows = data[0]
    groups = {}
    for r in rows:
        key = (r["algo"], r["dist"], int(r["n"]), int(r["threads"]), int(r.get("runs") or 0))
        groups.setdefault(key, []).append(num(r["mkeys_per_s"]))
    return {"file": name, "meta": meta,
            "med": {k: median(v) for k, v in groups.items()},
            "reps": {k: len(v) for k, v in groups.items()}}


# ---- tables: the data files behind the plots ---------------------------------------------------

def t3(rows, **want):
    """(median, minimum, maximum) over repetitions of the row that matches want, or None."""
    for r in rows:
        if all(str(r.get(k)) == str(v) for k, v in want.items()):
            return (num(r["t_med_s"]), num(r["t_min_s"]), num(r["t_max_s"]))
    return None


def spread_band(per_x):
    """(fastest median, slowest median) over the back-ends at each x: the shaded range."""
    out = []
    for ts in per_x:
        meds = [t[0] for t in ts if t and t[0]]
        out.append((min(meds), max(meds)) if meds else (None, None))
    return out


def oversub(meta, P=None):
    """' (oversubscribed: P ranks on C cores)' when a one-node file ran more ranks than cores."""
    if meta.get("oversubscribed") != "yes":
        return ""
    return " (%s ranks on %s cores)" % (P or meta.get("P", "?"), meta.get("cores", "?"))


def fastest_often(rows, bks, label, vols):
    """The back-end fastest (least median) at the most of vols for the pattern label."""
    wins = {}
    for v in vols:
        t = case_times(rows, label, v)
        if t:
            best = min(t, key=lambda b: t[b][0] or 1e300)
            wins[best] = wins.get(best, 0) + 1
    return max((b for b in bks if b in wins and b not in OMPI_BASELINES), key=lambda b: wins[b],
               default=None)


def cmd_tables(results, outdir):
    plots = Plots(outdir)
    sizes, skew, dists, _ = exchange_data(results)

    for e in sizes:
        P, rows, bks = e["P"], e["rows"], e["backends"]
        variant = ", " + e["variant"] if e["variant"] else ""
        over = oversub(e["meta"], P)
        if len(e["volumes"]) > 1:
            pat = "bucket" if any(r["pattern"] == "bucket" for r in rows) else rows[0]["pattern"]
            vols = e["volumes"]
            ticks = xtics(vols, tick_bytes)
            per = [[t3(rows, backend=b, pattern=pat, bytes_per_rank=v) for b in bks] for v in vols]
            band = spread_band(per)
            # How long: the default, the back-end fastest most often, and the range of them all.
            best = fastest_often(rows, bks, pat, vols)
            shown = [b for b in dict.fromkeys(["alltoallv", best]) if b in bks]
            data = [(v, [per[i][bks.index(b)] or (None, None, None) for b in shown])
                    for i, v in enumerate(vols)]
            plots.add("lines", "exchange_time_vs_bytes_" + e["tag"], "bytes", shown, data,
                      "Exchange time vs volume, %s, P = %d%s%s" % (pat, P, over, variant),
                      "bytes sent per rank", "median time, slowest rank (bars: fastest to"
                      " slowest repetition)", 2, 10, ticks=ticks, errors=True, seconds=True,
                      band=("range of every back-end", band))
            # Which is faster than the default, by how much: each back-end over alltoallv.
            if "alltoallv" in bks:
                others = [b for b in bks if b != "alltoallv"]
                rel = []
                for i, v in enumerate(vols):
                    ref = per[i][bks.index("alltoallv")]
                    cells = []
                    for b in others:
                        t = per[i][bks.index(b)]
                        cells.append((t[0] / ref[0], t[1] / ref[0], t[2] / ref[0])
                                     if t and ref and ref[0] else (None, None, None))
                    rel.append((v, cells))
                plots.add("lines", "exchange_vs_alltoallv_" + e["tag"], "bytes", others, rel,
                          "Each back-end's time over alltoallv's, pattern %s, P = %d%s%s" % (
                              pat, P, over, variant), "bytes sent per rank",
                          "median time / alltoallv's median (below 1: faster)", 2, 2,
                          ref=(1, "alltoallv"), ticks=ticks, errors=True)
            # OSU's view: bandwidth per rank against the message volume, the default and range.
            bw = [(v, [tuple(v / x / 2.0**20 if x else None for x in (t[0], t[2], t[1]))
                       if t else (None, None, None) for t in (per[i][bks.index(b)]
                                                              for b in shown)])
                  for i, v in enumerate(vols)]
            bwband = [(v / hi / 2.0**20 if hi else None, v / lo / 2.0**20 if lo else None)
                      for v, (lo, hi) in zip(vols, band)]
            plots.add("lines", "exchange_bandwidth_" + e["tag"], "bytes", shown, bw,
                      "Bandwidth per rank, pattern %s, P = %d%s%s (bytes per rank / median time)"
                      % (pat, P, over, variant), "bytes sent per rank", "MiB/s per rank", 2, 10,
                      ticks=ticks, errors=True, band=("range of every back-end", bwband))
        top = e["volumes"][-1]
        labels = list(dict.fromkeys(pattern_label(r) for r in rows))
        data = []
        for lab in labels:
            cells = []
            for b in bks:
                t = [num_t for num_t in (t3([r for r in rows if pattern_label(r) == lab],
                                            backend=b, bytes_per_rank=top),)][0]
                cells.append(tuple(x * 1e3 for x in t) if t and t[0] else (None, None, None))
            data.append((lab, cells))
        plots.add("clustered", "exchange_patterns_" + e["tag"], "pattern", bks, data,
                  "Exchange time per pattern, %s per rank, P = %d%s%s" % (
                      fmt_bytes(top), P, over, variant), "",
                  "median time (ms), slowest rank; bars: fastest to slowest repetition",
                  errors=True)

    # Time vs P: equal blocks at the largest volume every sizes file that goes to 1 MiB has.
    big = [e for e in sizes if e["volumes"][-1] >= 1 << 20 and not e["variant"]]
    common = set.intersection(*[set(e["volumes"]) for e in big]) if big else set()
    if len(big) > 1 and common:
        vol = max(common)
        bks = list(dict.fromkeys(b for e in big for b in e["backends"]))
        big.sort(key=lambda e: e["P"])
        per = [[t3(e["rows"], backend=b, pattern="bucket", bytes_per_rank=vol) for b in bks]
               for e in big]
        best = max((b for b in bks if b not in OMPI_BASELINES),
                   key=lambda b: sum(1 for ts in per if ts[bks.index(b)] and
                                          ts[bks.index(b)][0] == min(t[0] for t in ts if t)))
        shown = [b for b in dict.fromkeys(["alltoallv", best]) if b in bks]
        cores = num(big[0]["meta"].get("cores"), 0)
        over = [e["P"] for e in big if e["meta"].get("oversubscribed") == "yes"]
        plots.add("lines", "exchange_time_vs_p", "P", shown,
                  [(e["P"], [per[i][bks.index(b)] or (None, None, None) for b in shown])
                   for i, e in enumerate(big)],
                  "Exchange time vs P, equal blocks (bucket), %s per rank" % fmt_bytes(vol),
                  "P (ranks)", "median time, slowest rank (bars: fastest to slowest repetition)",
                  ticks=xtics([e["P"] for e in big], str), errors=True, seconds=True,
                  band=("range of every back-end", spread_band(per)),
                  mark=(min(over) - 0.5, "more ranks than the %d cores" % cores) if over else None)

    # The sort's own matrices: time per input at each P, and, per byte of h, the spread over
    # the inputs against P (skew apart from volume).
    for e in dists:
        inputs, summ = dists_summary(e)
        bks = [b for b in e["backends"] if b in summ]
        vol = e["volumes"][-1]
        data = []
        for d in inputs:
            cells = []
            for b in bks:
                t = t3(e["rows"], backend=b, pattern="sort", param=d, bytes_per_rank=vol)
                cells.append(tuple(x * 1e3 for x in t) if t and t[0] else (None, None, None))
            data.append((d, cells))
        plots.add("clustered", "exchange_dists_p%d" % e["P"], "input", bks, data,
                  "Exchange time on the sort's count matrices, %s per rank, P = %d%s" % (
                      fmt_bytes(vol), e["P"], oversub(e["meta"], e["P"])), "datagen input",
                  "median time (ms), slowest rank; bars: fastest to slowest repetition",
                  errors=True)
    if len(dists) > 1:
        bks = list(dict.fromkeys(b for e in dists for b in e["backends"]))
        spreads = [(e["P"], per_h_spread(e)) for e in dists]
        cores = num(dists[0]["meta"].get("cores"), 0)
        over = [e["P"] for e in dists if e["meta"].get("oversubscribed") == "yes"]
        plots.add("lines", "exchange_dists_spread", "P", bks,
                  [(P, [sp.get(b, (None,))[0] for b in bks]) for P, sp in spreads],
                  "Skew apart from volume: spread over the inputs of time per byte of h "
                  "(slowest / fastest)", "P (ranks)", "max / min over inputs of t / h",
                  ticks=xtics([P for P, _ in spreads], str),
                  mark=(min(over) - 0.5, "more ranks than the %d cores" % cores) if over else None)

    for e in skew:
        P, rows, bks = e["P"], e["rows"], e["backends"]
        vol = e["volumes"][-1]
        for pat, xlabel in (("onehot", "percent of every rank's volume sent to rank 0"),
                            ("zipf", "Zipf exponent over destinations (rotated per rank)")):
            params = sorted({num(r["param"]) for r in rows if r["pattern"] == pat})
            if len(params) < 2:
                continue
            sel = {(x, b): [r for r in rows if r["pattern"] == pat and num(r["param"]) == x and
                            r["backend"] == b and int(r["bytes_per_rank"]) == vol]
                   for x in params for b in bks}
            per = [[(num(sel[(x, b)][0]["t_med_s"]), num(sel[(x, b)][0]["t_min_s"]),
                     num(sel[(x, b)][0]["t_max_s"])) if sel[(x, b)] else None for b in bks]
                   for x in params]
            best = fastest_often(rows, bks, pat + ":" + sel[(params[-1], bks[0])][0]["param"]
                                 if sel[(params[-1], bks[0])] else pat, [vol])
            shown = [b for b in dict.fromkeys(["alltoallv", best]) if b in bks]
            plots.add("lines", "exchange_skew_%s_p%d" % (pat, P), pat, shown,
                      [(x, [per[i][bks.index(b)] or (None, None, None) for b in shown])
                       for i, x in enumerate(params)],
                      "Exchange time vs skew (%s), %s per rank, P = %d%s" % (
                          pat, fmt_bytes(vol), P, oversub(e["meta"], P)),
                      xlabel, "median time, slowest rank (bars: fastest to slowest repetition)",
                      errors=True, seconds=True, band=("range of every back-end", spread_band(per)))
            # The same per byte of h: what skew costs beyond the volume it puts on one rank.
            norm = []
            for i, x in enumerate(params):
                cells = []
                for b in bks:
                    r = sel[(x, b)][0] if sel[(x, b)] else None
                    h = int(r["h_bytes"]) if r else 0
                    cells.append(tuple(num(r[c]) / h * 2**30 for c in ("t_med_s", "t_min_s",
                                                                        "t_max_s"))
                                 if h else (None, None, None))
                norm.append((x, cells))
            plots.add("lines", "exchange_skew_%s_per_h_p%d" % (pat, P), pat, bks, norm,
                      "Exchange time per GiB of h vs skew (%s), %s per rank, P = %d%s" % (
                          pat, fmt_bytes(vol), P, oversub(e["meta"], P)), xlabel,
                      "seconds per GiB of h (bars: fastest to slowest repetition)", logy=0,
                      errors=True)

    sort = load_suite(results, "sort")
    if sort:
        sort_plots(plots, sort_groups(sort[0][2]))
    ls = localsort_data(results)
    if ls:
        med = {k[:4]: v for k, v in ls["med"].items() if k[4] == 0}
        n = max(k[2] for k in med)
        algos = list(dict.fromkeys(k[0] for k in med if k[2] == n))
        cats = sorted({(k[1], k[3]) for k in med if k[2] == n},
                      key=lambda c: (c[0] != "uniform", c))
        data = [("%s T=%d" % c, [med.get((a, c[0], n, c[1])) for a in algos]) for c in cats]
        plots.add("clustered", "localsort_throughput", "case", algos, data,
                  "Local sort throughput, n = %s (median of repetitions)" % fmt_n(n),
                  "distribution, threads", "Mkeys/s (logarithmic)", logy=10)
        # Every distribution at the size the distribution sweep used.
        dn = sorted({k[2] for k in med if k[1] != "uniform"})
        if dn:
            cats = sorted({(k[1], k[3]) for k in med if k[2] == dn[-1]},
                          key=lambda c: (c[1], c[0] != "uniform"))
            # The algorithms run on more than uniform keys (the slow references run on those
            # only).
            algos = list(dict.fromkeys(k[0] for k in med if k[2] == dn[-1] and
                                       k[1] != "uniform"))
            data = [("%s T=%d" % c, [med.get((a, c[0], dn[-1], c[1])) for a in algos])
                    for c in cats]
            plots.add("clustered", "localsort_dists", "case", algos, data,
                      "Local sort throughput by distribution, n = %s (median of repetitions)"
                      % fmt_n(dn[-1]), "distribution, threads", "Mkeys/s (logarithmic)", logy=10)
    plots.write()


def sort_plots(plots, groups):
    """The sort suite's plots: time and memory vs n, phases, time vs P."""
    cfg = main_config(groups)
    bks = list(dict.fromkeys(k[0] for k in groups))
    if cfg:
        P, T = cfg
        # Time vs n per back-end (uniform).
        ns = sorted({k[2] for k in groups if k[1] == "uniform" and k[3:] == cfg})
        if len(ns) > 1:
            data = [(n, [groups.get((b, "uniform", n, P, T), {}).get("total_s") for b in bks])
                    for n in ns]
            plots.add("lines", "sort_time_vs_n", "n", bks, data,
                      "Sort time vs n (uniform, P = %d x %d threads)" % (P, T),
                      "keys (Ki = 2^10, Mi = 2^20)", "median total time, slowest rank", 2,
                      10, ticks=xtics(ns, tick_count), seconds=True)
            mem = [(n, [groups.get((b, "uniform", n, P, T), {}).get("bytes_per_key")
                        for b in bks]) for n in ns]
            plots.add("lines", "sort_memory_per_key", "n", bks, mem,
                      "Peak RSS summed over ranks per key (uniform, P = %d x %d)" % (P, T),
                      "keys (Ki = 2^10, Mi = 2^20)", "bytes per key", 2, 10,
                      ref=(MEM_GOAL_BYTES_PER_KEY, "2.2 x input"), ticks=xtics(ns, tick_count))
        # Phases at the largest n run with several distributions: every back-end on uniform
        # keys, and the first back-end on every distribution (two plots of a few bars each).
        by_n = {}
        for k in groups:
            if k[3:] == cfg:
                by_n.setdefault(k[2], set()).add(k[1])
        if by_n:
            n = max(by_n, key=lambda x: (len(by_n[x]), x))
            bars = [(b, [groups[(b, "uniform", n, P, T)][p + "_s"] for p in PHASES])
                    for b in bks if (b, "uniform", n, P, T) in groups]
            plots.add("stacked", "sort_phases", "backend", PHASES, bars,
                      "Sort phases per back-end, uniform keys, n = %s, P = %d x %d (median of "
                      "launches, slowest rank per phase)" % (fmt_n(n), P, T), "back-end",
                      "time", seconds=True)
            dists = sorted(by_n[n], key=lambda d: (d != "uniform", d))
            bars = [(d, [groups[(bks[0], d, n, P, T)][p + "_s"] for p in PHASES])
                    for d in dists if (bks[0], d, n, P, T) in groups]
            if len(bars) > 1:
                plots.add("stacked", "sort_phases_dists", "dist", PHASES, bars,
                          "Sort phases per distribution, %s, n = %s, P = %d x %d (median of "
                          "launches)" % (bks[0], fmt_n(n), P, T), "distribution", "time",
                          seconds=True)
    # Time vs P (one thread per rank).
    cands = {}
    for k in groups:
        if k[1] == "uniform" and k[4] == 1:
            cands.setdefault(k[2], set()).add(k[3])
    if cands:
        n = max(cands, key=lambda x: (len(cands[x]), x))
        Ps = sorted(cands[n])
        if len(Ps) > 1:
            data = [(p, [groups.get((b, "uniform", n, p, 1), {}).get("total_s") for b in bks])
                    for p in Ps]
            plots.add("lines", "sort_time_vs_p", "P", bks, data,
                      "Sort time vs P (uniform, n = %s, 1 thread per rank)" % fmt_n(n),
                      "P (ranks)", "median total time, slowest rank", ticks=xtics(Ps, str),
                      seconds=True)


# ---- the README ------------------------------------------------------------------------------

class Doc:
    def __init__(self):
        self.lines = []

    def p(self, *text):
        self.lines.append(" ".join(t for t in text if t))
        self.lines.append("")

    def h(self, level, text):
        self.p("#" * level + " " + text)

    def table(self, head, rows):
        self.lines.append("| " + " | ".join(head) + " |")
        self.lines.append("|" + "|".join("---" for _ in head) + "|")
        for r in rows:
            self.lines.append("| " + " | ".join(str(c) for c in r) + " |")
        self.lines.append("")

    def image(self, results, name, alt):
        if os.path.exists(os.path.join(results, "plots", name + ".svg")):
            self.p("![%s](plots/%s.svg)" % (alt, name))


def environment(doc, results):
    """The machine, from the first results file found (they share the fields)."""
    for suite in ("exchange", "sort", "e2e", "localsort", "records"):
        data = load_suite(results, suite)
        if data:
            m = data[0][1]
            cpu_id = ", ".join("%s %s" % (k, m["cpu_" + k]) for k in ("family", "model",
                                                                       "stepping")
                               if m.get("cpu_" + k) not in (None, "", "unknown"))
            settings = m.get("environment") or {}
            doc.table(["", ""], [
                ["CPU", "%s%s, %s cores" % (m.get("cpu", "?"), " (%s)" % cpu_id if cpu_id else "",
                                            m.get("cores", "?"))],
                ["Caches", caches_of(results)],
                ["Memory", "%s GiB" % m.get("memory_gib", "?")],
                ["MPI", m.get("mpi", "?")],
                ["Compiler", "%s; %s" % (m.get("compiler", "?"),
                                         m.get("cflags", m.get("build", "?")))],
                ["Allocator", m.get("allocator", "?")],
                ["Transparent huge pages", m.get("thp", "?")],
                ["Commit", ", ".join(sorted({c for x in SUITES
                                             for c in suite_commits(results, x)})) or "?"],
                ["Launcher", m.get("launcher", "mpirun --oversubscribe --bind-to none")],
                ["Settings", ", ".join("`%s=%s`" % kv for kv in sorted(settings.items())) or
                 "not recorded (files measured before the driver recorded them)"],
            ])
            return m
    doc.p("No results yet: run `make bench` (or `make bench-quick`).")
    return {}


def caches_of(results):
    """The caches as a results file recorded them from /sys (the files that also carry the CPU's
    family, model and stepping); earlier files took them from glibc's getconf, whose L3 figure is
    the whole host's under some hypervisors, and are not quoted."""
    for suite in SUITES:
        for _, m, _ in load_suite(results, suite):
            if m.get("caches") and m.get("cpu_family"):
                return m["caches"]
    return "not recorded from /sys by these files"


def suite_commits(results, suite):
    """The commits (12 hex digits, and -dirty for a build from a modified tree) that
    RESULTS/suite/*.csv were measured on, sorted."""
    return sorted({m["commit"][:12] + ("-dirty" if m["commit"].endswith("-dirty") else "")
                   for _, m, _ in load_suite(results, suite) if m.get("commit")})


# A launch that lost this much CPU time to other guests is called out (seconds of steal).
STEAL_NOTABLE_S = 0.05


def readme_steal(doc, status, results):
    """What the hypervisor took from this machine during the runs, where bench/run recorded it."""
    ran = [s for s in status.get("suites", {}).values()
           if s.get("status") == "ran" and num(s.get("steal_s")) is not None]
    if not ran:
        return
    launches = [num(r.get("steal_s")) for suite in ("sort", "e2e")
                for _, _, rows in load_suite(results, suite) for r in rows]
    launches = [x for x in launches if x is not None]
    hit = sum(1 for x in launches if x >= STEAL_NOTABLE_S)
    per_file = [num(x) for s in ran for x in s.get("steal_s_by_file", {}).values()]
    per_file = [x for x in per_file if x is not None]
    doc.p("Steal time (CPU time the host ran other guests while this machine's CPUs were ready to"
          " run, from `/proc/stat`): %.1f s over the suites' %.0f s of wall time%s%s." % (
              sum(num(s["steal_s"]) for s in ran), sum(num(s.get("seconds"), 0) for s in ran),
              "; %.2f s at most in one exchange file's run (`runs.json` has each)" % max(per_file)
              if per_file else "",
              "; %d of %d sort launches lost %.2f s or more (column `steal_s` of their CSV files:"
              " a slow launch with steal was slowed by a neighbour, not by the code)" % (
                  hit, len(launches), STEAL_NOTABLE_S) if launches else ""))


def status_table(doc, status, results):
    rows = []
    for suite in SUITES:
        s = status.get("suites", {}).get(suite)
        if not s and suite == "model":
            continue  # newer than most result sets: shown once it has run
        if not s:
            rows.append([suite, "not run", "", "", "", ""])
            continue
        what = s.get("reason", "") if s["status"] != "ran" else ", ".join(
            "`%s`" % f for f in s.get("files", []))
        steal = num(s.get("steal_s"))
        rows.append([suite, s["status"], s.get("mode", ""), s.get("date", ""),
                     ", ".join(suite_commits(results, suite)),
                     "%s s%s; %s" % (s.get("seconds", "?"),
                                     " (steal %.1f s)" % steal if steal is not None else "", what)])
    doc.table(["suite", "status", "scale", "date (UTC)", "commit", "time; files or reason"], rows)


def readme_exchange(doc, results):
    sizes, skew, dists, invalid = exchange_data(results)
    if not sizes and not skew and not dists:
        doc.p("No exchange results.")
        return
    doc.p("`sortex-xbench` runs every registered back-end on the same synthetic count matrices",
          "(`sortex-xbench --patterns help` describes them; `bucket` is the equal-blocks case of",
          "OSU's and Intel's benchmarks, the others are skewed, sparse or the 3-cycle lower-bound",
          "instance of %s). A repetition's time is its slowest rank's, barrier" % REF_SS01,
          "to barrier; the tables give the median over repetitions. Back-ends run interleaved",
          "within each repetition on buffers allocated once on huge pages, and every key that",
          "arrived was checked against what its source sent.")
    if invalid:
        doc.p("**%d rows failed the check (a back-end delivered wrong data) and are left out of"
              " every table and plot; see the CSV files (`valid` = 0).**" % invalid)
    for e in sizes:
        P, rows, bks = e["P"], e["rows"], e["backends"]
        top = e["volumes"][-1]
        over = e["meta"].get("oversubscribed") == "yes"
        doc.h(3, "P = %d%s%s" % (P, ", " + e["variant"] if e["variant"] else "",
                                " (oversubscribed: more ranks than cores)" if over else ""))
        doc.image(results, "exchange_patterns_" + e["tag"], "exchange time per pattern, P = %d" % P)
        doc.image(results, "exchange_time_vs_bytes_" + e["tag"],
                  "exchange time vs volume, P = %d" % P)
        doc.image(results, "exchange_vs_alltoallv_" + e["tag"],
                  "each back-end's time over alltoallv's, P = %d" % P)
        doc.image(results, "exchange_bandwidth_" + e["tag"], "bandwidth per rank, P = %d" % P)
        labels = list(dict.fromkeys(pattern_label(r) for r in rows))
        table, wins, per_h = [], {b: 0 for b in bks}, {}
        for lab in labels:
            t = case_times(rows, lab, top)
            _, _, winner = verdict(t)
            if winner:
                wins[winner] += 1
            h = next((int(r["h_bytes"]) for r in rows if pattern_label(r) == lab and
                      int(r["bytes_per_rank"]) == top), 0)
            table.append([lab, "%.1f" % (h / 2**20)] +
                         [("**%s**" if b == winner else "%s") % (
                             "%s (%s)" % (fmt_time(t[b][0]), fmt_time(t[b][1])) if b in t
                             else "-") for b in bks])
            for b in bks:
                if b in t and h and t[b][0]:
                    per_h.setdefault(b, []).append((t[b][0] / h, lab))
        doc.p("Exchange time at %s per rank, median (minimum) over repetitions; in bold the"
              " winner when beyond the noise (see the rule under Findings). On a busy machine"
              " the minimum is the better estimate of the uncontended cost, the median of what a"
              " user sees. h is the largest volume one rank sends to and receives from the"
              " others (its own block excluded): the lower bound on what any back-end must move"
              " through one rank. Back-ends are interleaved within each repetition, patterns are"
              " not (they run one after the other), so compare back-ends along a row freely and"
              " patterns down a column with care: a busy neighbour can slow one pattern's"
              " repetitions together." % fmt_bytes(top))
        doc.table(["pattern", "h (MiB)"] + bks, table)
        if len(bks) > 1:
            doc.p("At %s per rank and P = %d, %s." % (fmt_bytes(top), P, "; ".join(
                "`%s` won %d of %d patterns beyond the noise" % (b, wins[b], len(labels))
                for b in sorted(bks, key=lambda b: -wins[b]) if wins[b]) or
                "no back-end won any pattern beyond the noise"))
        sp = ["`%s` %.2f× (slowest `%s`, fastest `%s`)" % (
            b, max(v)[0] / min(v)[0], max(v)[1], min(v)[1]) for b, v in per_h.items()
            if len(v) > 1]
        if sp:
            doc.p("Spread across the patterns of the time per byte of h (slowest / fastest, at %s"
                  " per rank): %s." % (fmt_bytes(top), "; ".join(sp)),
                  "Dividing by h takes out the volume skew adds to the busiest rank: a spread",
                  "near 1 means the back-end's cost follows h alone, whatever the shape of the",
                  "count matrix; a larger one means the shape (incast, sparsity) costs beyond",
                  "its volume.")
        if len(e["volumes"]) > 2 and any(r["pattern"] == "bucket" for r in rows):
            vt = []
            for v in e["volumes"]:
                t = case_times(rows, "bucket", v)
                _, _, winner = verdict(t)
                vt.append(["%s (%s)" % (fmt_bytes(v), fmt_bytes(v // P))] + [
                    ("**%s**" if b == winner else "%s") % (fmt_time(t[b][0]) if b in t else "-")
                    for b in bks])
            doc.p("Equal blocks (`bucket`) at every volume, median time; in bold the winner when"
                  " beyond the noise:")
            doc.table(["per rank (per pair)"] + bks, vt)
            base = "alltoallv" if "alltoallv" in bks else bks[0]
            for b in bks:
                if b == base:
                    continue
                # Beyond the noise: b's median below base's minimum, on every pattern.
                faster = [v for v in e["volumes"]
                          if all(b in t and base in t and t[b][0] < t[base][1]
                                 for t in (case_times(rows, lab, v) for lab in labels))]
                if faster:
                    doc.p("`%s` beat `%s` beyond the noise on every pattern at %s per pair"
                          " (P = %d)." % (b, base, ", ".join(fmt_bytes(v // P) for v in faster),
                                          P))
        small = e["volumes"][0]
        if small != top:
            b0 = bks[0]
            sel = {v: [r for r in rows if r["backend"] == b0 and r["pattern"] == "bucket" and
                       int(r["bytes_per_rank"]) == v] for v in (small, top)}
            if sel[small] and sel[top]:
                s_med, s_min = num(sel[small][0]["t_med_s"]), num(sel[small][0]["t_min_s"])
                t_med, t_min = num(sel[top][0]["t_med_s"]), num(sel[top][0]["t_min_s"])
                doc.p("Equal blocks with `%s`: %s median (%s minimum) at %s per rank%s, and %s"
                      " median (%s minimum) at %s per rank, i.e. %.0f MiB/s per rank on the"
                      " median." % (
                          b0, fmt_time(s_med), fmt_time(s_min), fmt_bytes(small),
                          ", where start-up costs dominate" if small <= 64 << 10 else "",
                          fmt_time(t_med), fmt_time(t_min), fmt_bytes(top),
                          top / 2**20 / t_med))
        if "direct" in bks and "forward" in bks:
            # The h-relation paper's claim: forwarding needs 6/5 (h+1) steps where direct
            # delivery needs up to 3 ceil(h/2); 0.8 on its lower-bound instance (oddcycle).
            ratios = []
            for lab in labels:
                td, tf = (median([num(r["t_med_s"]) for r in rows if pattern_label(r) == lab and
                                  r["backend"] == b and int(r["bytes_per_rank"]) == top])
                          for b in ("direct", "forward"))
                if td and tf:
                    ratios.append("`%s` %.2f" % (lab, tf / td))
            if ratios:
                doc.p("`forward` against `direct` (time ratio at %s per rank): %s. The schedules'"
                      " theorems give forwarding 6/5 (h+1) steps against direct delivery's"
                      " 3 ceil(h/2): a ratio of 0.8 on the lower-bound instance (`oddcycle`) when"
                      " steps are the cost, as on half-duplex links one step at a time." % (
                          fmt_bytes(top), ", ".join(ratios)))
    doc.image(results, "exchange_time_vs_p", "exchange time vs P")
    if dists:
        readme_dists(doc, results, dists)
    for e in skew:
        P, rows, bks = e["P"], e["rows"], e["backends"]
        vol = e["volumes"][-1]
        doc.h(3, "Skew, P = %d, %s per rank" % (P, fmt_bytes(vol)))
        doc.image(results, "exchange_skew_onehot_p%d" % P, "exchange time vs one-hot skew")
        doc.image(results, "exchange_skew_zipf_p%d" % P, "exchange time vs Zipf skew")
        doc.image(results, "exchange_skew_onehot_per_h_p%d" % P,
                  "exchange time per byte of h vs one-hot skew")
        doc.image(results, "exchange_skew_zipf_per_h_p%d" % P,
                  "exchange time per byte of h vs Zipf skew")
        for b in bks:
            parts = []
            lo = t_of(rows, backend=b, pattern="onehot", param="0", bytes_per_rank=vol)
            hi = t_of(rows, backend=b, pattern="onehot", param="100", bytes_per_rank=vol)
            if lo and hi:
                parts.append("sending everything to rank 0 (`onehot:100`) took %s equal blocks"
                             " (`onehot:0`), while rank 0 receives %d× its share" %
                             (times(hi / lo), P))
            z = sorted(((num(r["param"]), num(r["t_med_s"])) for r in rows
                        if r["pattern"] == "zipf" and r["backend"] == b and
                        int(r["bytes_per_rank"]) == vol))
            if len(z) > 1 and z[0][1]:
                parts.append("the steepest Zipf rows (exponent %g) took %s flat ones (exponent"
                             " %g), every rank still receiving the same volume"
                             % (z[-1][0], times(z[-1][1] / z[0][1]), z[0][0]))
            if parts:
                doc.p("`%s`: %s." % (b, "; ".join(parts)))


def readme_dists(doc, results, dists):
    doc.h(3, "The sort's own count matrices: nine inputs, P = %d..%d" % (dists[0]["P"],
                                                                         dists[-1]["P"]))
    paired = all(num(r.get("ratio_med")) for e in dists for r in e["rows"]
                 if r["backend"] not in OMPI_BASELINES)
    low = sorted({d for e in dists for d in low_h_inputs(e)})
    doc.p("Pattern `sort:DIST`: the count matrix a P-rank `sortex` run hands its exchange on the",
          "datagen input DIST of P × V keys (sampling and bucketing as the sort does them), for",
          "the nine inputs of Bader, Helman and JáJá's benchmark (%s). The volume one rank" %
          REF_BHJ96,
          "must move (h) differs by input (the sort's splitters balance what each rank",
          "receives, not what crosses between ranks), so the spread is taken over the time per",
          "byte of h: slowest / fastest input, which isolates the sensitivity to the shape of",
          "the matrix from its volume%s. Ratio to `alltoallv`: %s (worst input in brackets,"
          " median over inputs after the slash); on the same input h is the same, so the ratio"
          " needs no normalising." % (
              "; left out: %s, whose h is under a quarter of the volume (almost every key stays"
              " on its rank, and the time is the local copy)" % ", ".join(
                  "`%s`" % d for d in low) if low else "",
              "the median over repetitions of a back-end's time over `alltoallv`'s in the same"
              " repetition, run moments apart, so that the machine's slow drifts cancel" if paired
              else "a back-end's median over `alltoallv`'s on the same input"))
    doc.image(results, "exchange_dists_spread", "spread over the inputs of time per byte of h")
    bks = list(dict.fromkeys(b for e in dists for b in e["backends"]))
    summs = [(e, dists_summary(e)[1], per_h_spread(e)) for e in dists]
    head = ["back-end"] + ["P = %d (%s)" % (e["P"], fmt_bytes(e["volumes"][-1])) for e in dists]
    doc.p("Spread over the inputs of the time per byte of h (max / min):")
    doc.table(head, [[b] + ["%.2f" % sp[b][0] if b in sp else "-" for _, _, sp in summs]
                     for b in bks])
    doc.p("Time relative to `alltoallv` on the same input, worst (input) / median over inputs:")
    doc.table(head, [[b] + ["%.2f (%s) / %.2f" % (sm[b][2], sm[b][3], sm[b][4])
                            if b in sm and sm[b][2] else "-" for _, sm, _ in summs]
                     for b in bks if b != "alltoallv"])
    for e in dists:
        doc.image(results, "exchange_dists_p%d" % e["P"], "exchange per input, P = %d" % e["P"])


# ---- the findings: which back-end when ----------------------------------------------------

# Bytes per pair (bytes per rank / P) that split the findings: up to the first, message start-ups
# dominate; beyond the second, bandwidth does.
PAIR_CLASSES = [(8 << 10, "≤ 8 KiB"), (1 << 20, "8 KiB to 1 MiB"), (None, "> 1 MiB")]
# The result sets under RESULTS: this machine's, and the emulated clusters'.
SUBSETS = ("", "cluster", "cluster-half")


def links_of(meta):
    """What joined the ranks of a results file, from its launcher."""
    launcher = meta.get("launcher", "")
    if "cluster.sh" not in launcher:
        return "one node"
    m = re.search(r"links (\S+) (half|full)-duplex", launcher)
    return "cluster, %s-duplex %s links" % (m.group(2), m.group(1)) if m else "cluster"


def pair_class(per_pair):
    return next(i for i, (lim, _) in enumerate(PAIR_CLASSES) if lim is None or per_pair <= lim)


def cite(times, backends):
    """'`b` median (minimum)' for each of backends, as the evidence cells write them."""
    return ", ".join("`%s` %s (%s)" % (b, fmt_time(times[b][0]), fmt_time(times[b][1]))
                     for b in backends if b in times)


def evidence(sub, entry, label, vol, times, backends):
    """One cited case: the pattern, the volume, the file, the times of the fastest back-end and
    of backends, and the verdict of the rule on it (what tests/60-bench.bats checks against the
    CSV files)."""
    path = os.path.join(sub, entry["file"]) if sub else entry["file"]
    best, within, winner = verdict(times)
    shown = list(dict.fromkeys(([best] if best else []) + list(backends)))
    return "`%s` at %s per rank [%s](%s): %s; %s" % (
        label, fmt_bytes(vol), os.path.basename(path), path, cite(times, shown),
        "winner `%s`" % winner if winner else "within noise: %s" % ", ".join(
            "`%s`" % b for b in within))


def group_summary(cases, bks):
    """cases [(times, verdict)] -> (within-noise count per back-end, median over the cases of
    its median over the fastest median)."""
    cnt = {b: sum(1 for _, v in cases if b in v[1]) for b in bks}
    slow = {b: median([t[b][0] / t[v[0]][0] for t, v in cases if b in t and t[v[0]][0]])
            for b in bks}
    return cnt, slow


def all_within(cases, bks):
    """How many of cases have every one of bks within noise of the fastest."""
    return sum(1 for t, v in cases if all(b in v[1] for b in bks if b in t))


def summary_cells(cases, bks):
    """The 'use', 'alltoallv and Open MPI' and 'avoid' cells of a findings row. 'use' names
    back-ends one can pass to --exchange, and none when in most cases every one of them is
    within noise of the fastest (then any will do, and naming one would be noise)."""
    cnt, slow = group_summary(cases, bks)
    n = len(cases)
    mine = [b for b in bks if b not in OMPI_BASELINES]
    order = sorted(bks, key=lambda b: (-cnt[b], slow[b] or 1e9))
    tied = all_within(cases, mine)
    if n and 2 * tied > n:
        use = "any: every back-end within noise in %d/%d" % (tied, n)
    else:
        use = ", ".join("`%s` %d/%d" % (b, cnt[b], n) for b in order if b in mine and cnt[b])
        use = ", ".join(use.split(", ")[:3])
    mpi = "; ".join("`%s` %d/%d, %.2f×" % (b, cnt[b], n, slow[b]) for b in
                    ("alltoallv",) + OMPI_BASELINES if b in bks and slow[b])
    avoid = ", ".join("`%s` %.1f×" % (b, slow[b]) for b in order
                      if cnt[b] == 0 and slow[b] and slow[b] >= 1.5)
    return order, use or "-", mpi or "-", avoid or "-"


def ompi_settings(sets):
    """{label: the MCA settings of Open MPI's forced algorithm}, from the files' descriptions:
    how to run what an ompi-* row measured."""
    out = {}
    for _, _, data in sets:
        for group in data[:3]:
            for e in group:
                for label, text in e["meta"].get("ompi_baselines", {}).items():
                    m = re.findall(r"--mca (\S+) (\S+)", text)
                    if m:
                        out[label] = " ".join("OMPI_MCA_%s=%s" % kv for kv in m)
    return out


def beats_default(cases, bks, base="alltoallv"):
    """The back-end that beat base beyond the noise (its median below base's minimum) in the
    most of cases, how often, and the median of base's time over its own there."""
    best, score = None, (0, 0.0)
    for b in bks:
        if b == base or b in OMPI_BASELINES:
            continue
        won = [t[base][0] / t[b][0] for t, _ in cases
               if b in t and base in t and t[b][0] and t[b][0] < t[base][1]]
        if (len(won), median(won) or 0) > score:
            best, score = b, (len(won), median(won) or 0)
    return best, score[0], score[1]


def quantile(xs, q):
    xs = sorted(x for x in xs if x is not None)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


def xmodel_summaries(results):
    """[(set directory, its name, summary, meta)] of the xmodel suite's files under results:
    predictions within 0.67..1.5 (all, and out of sample), auto's and alltoallv's regret, from
    xmodel/model.csv and auto.csv alone (bench/xfit.py's summary() computes the same)."""
    out = []
    for sub in SUBSETS:
        d = os.path.join(results, sub, "xmodel")
        if not (os.path.exists(os.path.join(d, "model.csv")) and
                os.path.exists(os.path.join(d, "auto.csv"))):
            continue
        meta, mrows = read_results(os.path.join(d, "model.csv"))
        _, arows = read_results(os.path.join(d, "auto.csv"))
        inband = lambda x: x is not None and 0.67 <= x <= 1.5  # noqa: E731
        reg = [r for r in mrows if r["backend"] not in OMPI_BASELINES]
        base = [r for r in mrows if r["backend"] in OMPI_BASELINES]
        auto = [num(a["regret"]) for a in arows]
        cv = [num(a["cv_regret"]) for a in arows]
        ref = [num(a["alltoallv_regret"]) for a in arows if a["alltoallv_regret"]]
        s = {"cases": len(reg), "within": sum(inband(num(r["ratio"])) for r in reg),
             "within_cv": sum(inband(num(r["cv_ratio"])) for r in reg),
             "baseline_cases": len(base),
             "baseline_within": sum(inband(num(r["ratio"])) for r in base),
             "auto_cases": len(arows), "regret_median": median(auto) or 0,
             "regret_p90": quantile(auto, 0.9) or 0, "regret_max": max(auto) if auto else 0,
             "cv_regret_median": median(cv) or 0, "cv_regret_p90": quantile(cv, 0.9) or 0,
             "alltoallv_median": median(ref) or 0, "alltoallv_p90": quantile(ref, 0.9) or 0}
        out.append((sub, sub or "one node", s, meta))
    return out


# A back-end is named in the findings' first paragraph when it beats alltoallv beyond the noise
# in most cases of a group by at least this factor (the median of alltoallv's time over its).
LEAD_GAIN = 1.1


def set_links(results, sub):
    """The links label of a result set ("one node", "cluster, full-duplex 1gbit links")."""
    data = exchange_data(os.path.join(results, sub) if sub else results)
    metas = [e["meta"] for group in data[:3] for e in group]
    return links_of(metas[0]) if metas else (sub or "one node")


def findings_lead(doc, results, beats):
    """The first paragraph: the default to use, how it fared, and the cases that beat it.
    beats: [(links, back-end, P, pair class, k, n, gain)] from the findings table."""
    xm = xmodel_summaries(results)
    if xm:
        names = [set_links(results, sub) for sub, _, _, _ in xm]
        where = lambda n: "on one node" if n == "one node" else \
            "on the emulated " + n.replace("cluster, ", "cluster with ")  # noqa: E731
        doc.p("**Default: `sortex --exchange auto`.** It prices every back-end with its cost"
              " model on the sort's own count matrix and the machine file, and runs the"
              " cheapest. Over the fastest back-end's time, in the cases of the exchange"
              " benchmark below where every back-end was measured, its pick took a median of"
              " %s. The plain default, `alltoallv`, took %s." % (
                  "; ".join("%.2f× and at most %.2f× in 90%% of cases %s (%d cases)" % (
                      s["regret_median"], s["regret_p90"], where(n), s["auto_cases"])
                            for n, (_, _, s, _) in zip(names, xm)),
                  "; ".join("%.2f× and %.2f×" % (s["alltoallv_median"], s["alltoallv_p90"])
                            for _, _, s, _ in xm)),
              "On another machine, measure it once first: `mpirun -np P sortex-sched"
              " --calibrate > ~/.config/sortex/machine.txt` on the nodes you sort on; without"
              " that file auto prices with this machine's constants, and `sortex -v` says so.")
    else:
        doc.p("**Default: `sortex --exchange auto`**, which prices every back-end with its cost"
              " model (`bench/run --suites xmodel` measures how well; it has not run on these"
              " results).")
    groups = {}
    for links, b, P, c, k, n, gain in beats:
        groups.setdefault((links, b), []).append((P, c, gain))
    if groups:
        items = []
        for (links, b), where in groups.items():
            classes = {}
            for P, c, gain in where:
                classes.setdefault(c, []).append((P, gain))
            parts = ["P = %s at %s a pair" % (p_range([P for P, _ in ps]), PAIR_CLASSES[c][1])
                     for c, ps in sorted(classes.items())]
            gains = [g for _, _, g in where]
            items.append("%s: `--exchange %s` (%s; `alltoallv` took %.1f× to %.1f× as long)" % (
                links, b, "; ".join(parts), min(gains), max(gains)))
        doc.p("**Where a named back-end beats `alltoallv`** (beyond the noise in most cases of"
              " a row of the table below, by %.1f× or more; auto finds these too): %s."
              " **Everywhere else keep the default**: the other back-ends are within noise of"
              " `alltoallv`, within 10%% of it, or slower (`transpose` always, 2-5×)."
              % (LEAD_GAIN, "; ".join(items)))


def p_range(ps):
    """'3', '2 and 4', '2 to 6' for a list of P."""
    ps = sorted(set(ps))
    if len(ps) == 1:
        return str(ps[0])
    if len(ps) == 2:
        return "%d and %d" % tuple(ps)
    return "%d to %d" % (ps[0], ps[-1]) if ps[-1] - ps[0] == len(ps) - 1 else \
        ", ".join(str(p) for p in ps)


def readme_findings(doc, results):
    """The answer to "which back-end should I use when?", read off the exchange files of this
    machine and of the emulated clusters beside it, with the cases it rests on."""
    sets = []
    for sub in SUBSETS:
        d = os.path.join(results, sub) if sub else results
        data = exchange_data(d)
        metas = [e["meta"] for group in data[:3] for e in group]
        if metas:
            sets.append((sub, links_of(metas[0]), data))
    if not sets:
        return
    doc.h(2, "Findings: which back-end to use")
    table, beats = [], []
    for sub, links, (sizes, _, _, _) in sets:
        for e in sorted((e for e in sizes if not e["variant"]), key=lambda e: e["P"]):
            labels = list(dict.fromkeys(pattern_label(r) for r in e["rows"]))
            by_class = {}
            for v in e["volumes"]:
                by_class.setdefault(pair_class(v / e["P"]), []).append(v)
            for c, vols in sorted(by_class.items()):
                cases = [(case_times(e["rows"], lab, v), None) for v in vols for lab in labels]
                cases = [(t, verdict(t)) for t, _ in cases if t]
                order, use, mpi, avoid = summary_cells(cases, e["backends"])
                lab = "bucket" if "bucket" in labels else labels[0]
                t = case_times(e["rows"], lab, vols[-1])
                shown = list(dict.fromkeys(order[:2] + ["alltoallv"] + list(OMPI_BASELINES)))
                table.append([links, str(e["P"]), "%s (%s)" % (PAIR_CLASSES[c][1], ", ".join(
                    fmt_bytes(v // e["P"]) for v in vols)), str(len(cases)), use, mpi, avoid,
                    evidence(sub, e, lab, vols[-1], t, shown)])
                b, k, r = beats_default(cases, e["backends"])
                if b and 2 * k > len(cases) and r >= LEAD_GAIN:
                    beats.append((links, b, e["P"], c, k, len(cases), r))
    findings_lead(doc, results, beats)
    doc.p("Read off the exchange micro-benchmark (`sortex-xbench`: every back-end on the same",
          "count matrices, interleaved within each repetition) on %s; generated from the CSV" %
          " and ".join(links for _, links, _ in sets),
          "files, like everything on this page. " + NOISE_RULE)
    settings = ompi_settings(sets)
    doc.p("**By P, bytes per pair and links.** Each row gathers the cases (count matrix ×"
          " volume) of one results file whose bytes per pair (bytes per rank / P) fall in one"
          " range, skewed matrices included. *Use*: the back-ends (`--exchange NAME`) within"
          " noise of the fastest in the most cases (k/n), or *any* when in most cases every one"
          " of them is. *alltoallv*: the MPI library's own call, its count and its median time"
          " over the fastest's (the median over the cases)%s. *Avoid*: never within noise, and"
          " at least 1.5× the fastest. *Evidence*: the case at the largest volume of the row,"
          " median (minimum) time of the slowest rank, the fastest back-end first." % (
              "; beside it Open MPI's own algorithms forced for `--exchange alltoallv`: %s" %
              "; ".join("`%s` is `%s sortex --exchange alltoallv` (`mpirun -x` each variable"
                        " to the ranks)" % (k, v) for k, v in sorted(settings.items()))
              if settings else ""))
    doc.table(["links", "P", "bytes per pair (measured)", "cases", "use", "alltoallv", "avoid",
               "evidence: median (minimum)"], table)
    readme_findings_skew(doc, sets)
    readme_xmodel(doc, results)
    readme_findings_limits(doc, results, sets)


def readme_findings_skew(doc, sets):
    """Skew apart from volume: time per byte of h on skewed matrices against balanced ones."""
    table = []
    for sub, links, (_, skew, dists, _) in sets:
        for e in skew:
            vol = e["volumes"][-1]
            for pat in ("onehot", "zipf"):
                params = sorted({r["param"] for r in e["rows"] if r["pattern"] == pat}, key=num)
                if len(params) < 2:
                    continue
                lo, hi = "%s:%s" % (pat, params[0]), "%s:%s" % (pat, params[-1])
                t_lo, t_hi = case_times(e["rows"], lo, vol), case_times(e["rows"], hi, vol)
                h = {k: next(int(r["h_bytes"]) for r in e["rows"] if pattern_label(r) == k and
                             int(r["bytes_per_rank"]) == vol) for k in (lo, hi)}
                v = verdict(t_hi)
                per_h = lambda b: (t_hi[b][0] / h[hi]) / (t_lo[b][0] / h[lo])  # noqa: E731
                shown = list(dict.fromkeys(v[1][:2] + ["alltoallv"] + list(OMPI_BASELINES)))
                table.append([links, str(e["P"]), "`%s` against `%s` (h %s against %s)" % (
                    hi, lo, fmt_bytes(h[hi]), fmt_bytes(h[lo])),
                    ("**`%s`**" % v[2]) if v[2] else ", ".join("`%s`" % b for b in v[1]),
                    ", ".join("`%s` %.2f" % (b, per_h(b)) for b in shown if b in t_lo and
                              b in t_hi),
                    evidence(sub, e, hi, vol, t_hi, shown)])
        if dists:
            e = dists[-1]
            vol = e["volumes"][-1]
            inputs = list(dict.fromkeys(r["param"] for r in e["rows"]))
            cases = [(case_times(e["rows"], "sort:" + d, vol), None) for d in inputs]
            cases = [(t, verdict(t)) for t, _ in cases if t]
            order, use, _, _ = summary_cells(cases, e["backends"])
            sp = per_h_spread(e)
            # The evidence: the fastest back-end's slowest input per byte of h.
            t = case_times(e["rows"], "sort:" + sp[order[0]][1], vol) if order[0] in sp else {}
            shown = list(dict.fromkeys(order[:2] + ["alltoallv"] + list(OMPI_BASELINES)))
            table.append([links, str(e["P"]), "the sort's own matrices, %d inputs (`sort:DIST`);"
                          " time per byte of h, slowest input over fastest%s" % (
                              len(cases), ", `%s` left out (h under a quarter of the volume)"
                              % "`, `".join(low_h_inputs(e)) if low_h_inputs(e) else ""),
                          use, ", ".join("`%s` %.2f" % (b, sp[b][0]) for b in shown if b in sp),
                          evidence(sub, e, "sort:" + sp[order[0]][1], vol, t, shown)
                          if t else "-"])
    if not table:
        return
    doc.p("**Skew, apart from volume.** Skew puts more bytes on some ranks: h, the most bytes one"
          " rank sends plus receives, grows with it. Dividing the time by h separates what the"
          " skew costs from the volume it adds: a figure near 1 below means the back-end moves a"
          " skewed byte as fast as a balanced one. *Fastest*: the winner in bold when beyond the"
          " noise, else every back-end within noise of the fastest median. For the sort's own"
          " matrices, *use* counts the inputs where a back-end was within noise of the fastest.")
    doc.table(["links", "P", "case", "fastest (skewed) / use", "time per byte of h: skewed over"
               " balanced", "evidence: median (minimum)"], table)


def readme_xmodel(doc, results):
    """How well the exchange models predict the benchmark, and what --exchange auto's choice
    costs against the fastest back-end, from the xmodel suite's files."""
    xm = xmodel_summaries(results)
    if not xm:
        return
    how = {}
    for sub, _, _, m in xm:
        how.setdefault(m.get("constants", "?"), []).append(set_links(results, sub))
    doc.p("**How well the cost model predicts, and what auto's choice costs.** `bench/run"
          " --suites xmodel` (`bench/xfit.py`) asked `sortex-sched` for every measured case"
          " (pattern × volume × P) what each back-end puts on its critical path, and fitted"
          " each back-end's factors on start-ups, bytes, copies and synchronisations (%s)."
          " *Within*: measured over predicted within %.2f to %.2f. *Out of sample*: the same"
          " with constants and factors fitted on the other four of five folds of cases."
          " *Regret*: the measured time of the back-end with the least prediction over the"
          " fastest measured, for every case where every back-end was measured; a regret"
          " within noise (the pick's fastest repetition at or below the fastest's median) is"
          " counted as measured all the same." % (
              "; ".join("%s: %s" % (" and ".join(v), k) for k, v in how.items()), 0.67, 1.5))
    rows = []
    for sub, k, s, _ in xm:
        d = os.path.join(sub, "xmodel") if sub else "xmodel"
        rows.append([set_links(results, sub), "%d/%d (%.0f%%)" % (s["within"], s["cases"],
                                            100.0 * s["within"] / max(s["cases"], 1)),
                     "%d/%d (%.0f%%)" % (s["within_cv"], s["cases"],
                                         100.0 * s["within_cv"] / max(s["cases"], 1)),
                     "%d" % s["auto_cases"],
                     "%.3f, %.3f, %.2f" % (s["regret_median"], s["regret_p90"],
                                           s["regret_max"]),
                     "%.3f, %.3f" % (s["cv_regret_median"], s["cv_regret_p90"]),
                     "%.3f, %.3f" % (s["alltoallv_median"], s["alltoallv_p90"]),
                     "%d/%d" % (s["baseline_within"], s["baseline_cases"]),
                     "[model.csv](%s/model.csv), [auto.csv](%s/auto.csv), [machine.txt](%s/"
                     "machine.txt)" % (d, d, d)])
    doc.table(["set", "predicted within", "out of sample", "auto cases",
               "auto's regret: median, 90%, worst", "out of sample: median, 90%",
               "`alltoallv`'s regret: median, 90%", "Open MPI's forced algorithms within",
               "files"], rows)
    # Per back-end: how often each is predicted within the band, and its median ratio.
    per, names = {}, []
    for sub, k, _, _ in xm:
        _, mrows = read_results(os.path.join(results, sub, "xmodel", "model.csv"))
        for r in mrows:
            b = r["backend"]
            if b not in names:
                names.append(b)
            per.setdefault((b, k), []).append(num(r["ratio"]))
    keys = [k for _, k, _, _ in xm]
    titles = [set_links(results, sub) for sub, _, _, _ in xm]
    table = []
    for b in names:
        cells = []
        for k in keys:
            v = [x for x in per.get((b, k), []) if x]
            cells.append("%d/%d, %.2f" % (sum(1 for x in v if 0.67 <= x <= 1.5), len(v),
                                          median(v)) if v else "-")
        table.append(["`%s`" % b] + cells)
    doc.p("Per back-end: cases predicted within the band / cases, and the median of measured"
          " over predicted (1 is exact; the `ompi-*` rows are priced by `alltoallv`'s models,"
          " with `alltoallv`'s factors):")
    doc.table(["back-end"] + titles, table)
    worst = []
    for sub, k, _, _ in xm:
        _, arows = read_results(os.path.join(results, sub, "xmodel", "auto.csv"))
        for r in sorted(arows, key=lambda r: -num(r["regret"], 0))[:3]:
            worst.append([set_links(results, sub), "`%s%s` P = %s, %s per rank" % (
                r["pattern"], ":" + r["param"] if r["param"] else "", r["P"],
                fmt_bytes(int(r["bytes_per_rank"]))),
                "`%s` %s (predicted %s)" % (r["auto"], fmt_time(num(r["auto_s"])),
                                             fmt_time(num(r["auto_predicted_s"]))),
                "`%s` %s" % (r["best"], fmt_time(num(r["best_s"]))),
                "%.2f%s" % (num(r["regret"]), " (within noise)" if r["within_noise"] == "yes"
                            else ""),
                "%.2f" % num(r["alltoallv_regret"]) if r["alltoallv_regret"] else "-"])
    if worst:
        doc.p("Where auto's pick cost most, per set:")
        doc.table(["set", "case", "auto's pick: measured", "fastest", "regret",
                   "`alltoallv`'s regret"], worst)


def readme_findings_limits(doc, results, sets):
    """What the findings cannot say, from the files' own descriptions."""
    metas = [(links, e["meta"], e["rows"]) for _, links, data in sets
             for group in data[:3] for e in group]
    cores = sorted({m.get("cores") for _, m, _ in metas if m.get("cores")})
    over = sorted({int(m["P"]) for links, m, _ in metas if links == "one node" and
                   m.get("oversubscribed") == "yes" and str(m.get("P", "")).isdigit()})
    reps = sorted({int(r["reps"]) for _, _, rows in metas for r in rows if r.get("reps")})
    cluster = sorted({m.get("launcher", "?") for links, m, _ in metas if links != "one node"})
    ompi = any(r["backend"] in OMPI_BASELINES for _, _, rows in metas for r in rows)
    doc.p("**Limits.** %s core%s for everything%s.%s Repetitions per case: %s, so the rule"
          " above can only separate differences larger than the scatter of a few runs; a tie"
          " means *not separable here*, not *equal*. %s%s" % (
              " or ".join(cores) or "?", "" if cores == ["1"] else "s",
              ": on one node P = %s ran more ranks than cores (oversubscribed), so those times"
              " include waiting for a core" % ", ".join(str(p) for p in over) if over else "",
              (" The cluster is emulated on this same machine (%s): hosts are network namespaces"
               " joined by veth links shaped by a token bucket, all sharing the same cores, so"
               " TCP"
               " processing competes with the ranks, and times fall near multiples of the"
               " shaper's 4 ms granularity; real links and NICs will differ."
               % "; ".join(cluster)) if cluster else "",
              "?" if not reps else str(reps[0]) if len(reps) == 1 else "%d to %d" % (
                  reps[0], reps[-1]),
              "Open MPI's forced algorithms ran in launches of their own, not interleaved with"
              " the back-ends: compare them with more care. " if ompi else
              "Open MPI's forced algorithms (`ompi-linear`, `ompi-pairwise`) are not in these"
              " files yet (the driver adds them from its next run). ",
              "Every figure is an exchange alone; in a sort it follows a local sort that varies"
              " by more than the exchanges differ (see the Sort section, where the sort suite"
              " ran)."))


def inmem_vs_local(doc, results, rows, P=2, T=1):
    """The in-memory phases at the largest uniform n run at P = 2 x 1, against the one-process
    local sort at 2 threads (the same cores). Every back-end's launches count: they share every
    in-memory phase but the exchange, and one machine hiccup then moves the median less."""
    sel = [r for r in rows if r.get("status") == "verified" and r["dist"] == "uniform" and
           r.get("io", "mpiio") in ("", "mpiio") and int(r["P"]) == P and
           int(r["threads"]) == T and num(r.get("inmem_s"))]
    if not sel:
        return
    n = max(int(r["n"]) for r in sel)
    t = [num(r["inmem_s"]) for r in sel if int(r["n"]) == n]
    med, best = median(t), min(t)
    rate = n / med / 1e6
    text = ("In memory (local sort to finish, slowest rank per phase, summed), n = %s uniform, P"
            " = %d × %d thread, over all %d launches of every back-end: median %s (%.1f Mkeys/s),"
            " best %s (%.1f Mkeys/s); goal: at most half of the 2.5-3.3 s another MPI sorting"
            " library took at 2^26" % (fmt_n(n), P, T, len(t), fmt_time(med), rate,
                                       fmt_time(best), n / best / 1e6))
    ls = localsort_data(results)
    local = ls and ls["med"].get(("sortex", "uniform", max(k[2] for k in ls["med"]), 2, 0))
    if local:
        # The local-sort suite ran at another time, not side by side with these launches: a
        # reference only. The goal is judged in the end-to-end section, where P = 1 x 2 runs the
        # local sort alone, launched alternately with P = 2 x 1 on the same file.
        text += ("; against the local-sort suite's one process at 2 threads (%.1f Mkeys/s, run"
                 " at another time, so a reference only: %.2f× on the median, %.2f× at best; the"
                 " side-by-side figure for the goal of ≥ 0.8× is in the end-to-end section)"
                 % (local, rate / local, n / best / 1e6 / local))
    doc.p(text + ".")


def readme_io(doc, results, rows):
    """--io mpiio, root and rootv side by side, where the sort suite ran them."""
    g = {}
    for r in rows:
        if r.get("status") == "verified" and r.get("io"):
            g.setdefault((int(r["P"]), int(r["n"]), r["dist"], r["backend"]), {}).setdefault(
                r["io"], []).append(r)
    cases = sorted(k for k, v in g.items() if len(v) > 1)
    if not cases:
        return
    ios = ["mpiio", "root", "rootv"]
    doc.h(3, "Input and output: MPI-IO against root I/O")
    doc.p("`--io mpiio`: every rank reads and writes its own slice; `--io root`: rank 0 reads",
          "and writes everything, spread and collected by the combining binomial tree of %s;" %
          REF_OAS,
          "`--io rootv`: the same through `MPI_Scatterv`/`MPI_Gatherv`. Medians over",
          "launches: total time, and read + write (the phases that differ).")
    table = []
    for (P, n, d, b) in cases:
        cell = []
        for io in ios:
            rs = g[(P, n, d, b)].get(io)
            if not rs:
                cell.append("-")
                continue
            tot = median([num(r["total_s"]) for r in rs])
            rw = median([num(r["read_s"]) + num(r["write_s"]) for r in rs])
            cell.append("%s (%s)" % (fmt_time(tot), fmt_time(rw)))
        table.append(["%d" % P, fmt_n(n), d] + cell)
    doc.table(["P", "n", "input"] + ["%s: total (read + write)" % io for io in ios], table)


def io_sentence(meta):
    fs = meta.get("work_fs", "unknown")
    if fs == "tmpfs":
        return "Files live on tmpfs, so `read` and `write` measure memory, not a disk."
    return ("Files live on %s: `read` and `write` hit the page cache, and a run that crosses the"
            " kernel's dirty-page limit pays for writeback." % fs)


def readme_sort(doc, results):
    data = load_suite(results, "sort")
    if not data:
        doc.p("No sort results (the suite needs working `sortex-gen` and `sortex-verify`).")
        return
    name, meta, rows = data[0]
    groups = sort_groups(rows)
    fails = sort_failures(rows)
    doc.p("`bin/sortex` end to end on files made by `sortex-gen`, each configuration launched",
          "%s times with the back-ends interleaved; medians over launches of the slowest rank's" %
          meta.get("launches", "several"),
          "time per phase (from `--stats`). Every output was checked by `sortex-verify` against",
          "its input, outside the timing. Before each launch the driver touches, and frees, about",
          "as much memory as the launch will use: on this VM, memory the guest freed a few",
          "seconds earlier can cost up to 2 s per GB to touch again (the host takes it back),",
          "which would be charged to whichever launch came first.", io_sentence(meta))
    if fails:
        doc.p("**%d launches failed or did not verify and are left out:** %s." % (
            len(fails), ", ".join(
            "%s/%s n=%s P=%s×%s (%s)" % (r["backend"], r["dist"], r["n"], r["P"], r["threads"],
                                         r["status"]) for r in fails[:8])))
    if not groups:
        return
    cfg = main_config(groups)
    P, T = cfg
    bks = list(dict.fromkeys(k[0] for k in groups))
    doc.image(results, "sort_phases", "sort phases per back-end")
    doc.image(results, "sort_phases_dists", "sort phases per distribution")
    doc.image(results, "sort_time_vs_n", "sort time vs n")
    doc.image(results, "sort_time_vs_p", "sort time vs P")
    doc.image(results, "sort_memory_per_key", "peak memory per key")
    by_n = {}
    for k in groups:
        if k[3:] == cfg:
            by_n.setdefault(k[2], set()).add(k[1])
    n = max(by_n, key=lambda x: (len(by_n[x]), x))
    table = []
    for d in sorted(by_n[n], key=lambda d: (d != "uniform", d)):
        # Judged on the exchange phase, the one part of the sort that the back-end changes; the
        # local sort before it varies between launches by far more than exchanges differ.
        _, _, winner = verdict({b: (groups[(b, d, n, P, T)]["exchange_s"],
                                    groups[(b, d, n, P, T)]["exchange_s_min"])
                                for b in bks if (b, d, n, P, T) in groups})
        for b in bks:
            g = groups.get((b, d, n, P, T))
            if not g:
                continue
            table.append([d, ("**%s**" if b == winner else "%s") % b,
                          "%s (%s)" % (fmt_time(g["exchange_s"]), fmt_time(g["exchange_s_min"])),
                          fmt_time(g["total_s"]), fmt_time(g["inmem_s"]),
                          "%.3f" % g["imbalance_max"],
                          "%.0f MiB" % ((g["bytes_moved"] or 0) / 2**20),
                          "%.1f" % (g["bytes_per_key"] or 0), g["launches"]])
    doc.p("n = %s keys, P = %d × %d thread(s). The back-ends are compared on the exchange phase"
          " alone, median (minimum) over launches: the other phases do not depend on the"
          " back-end, and the local sort before the exchange varies from launch to launch by more"
          " than the exchanges differ, so totals would rank the machine's moods. In bold the"
          " back-end whose exchange won beyond the noise (its median below every other's"
          " minimum); none where no back-end did:" % (fmt_n(n), P, T))
    doc.table(["distribution", "back-end", "exchange", "total", "in memory (local sort..finish)",
               "imbalance (max)", "moved", "RSS bytes/key", "launches"], table)
    # Findings.
    imb = max(g["imbalance_max"] for g in groups.values())
    worst = max(groups, key=lambda k: groups[k]["imbalance_max"])
    doc.p("Largest imbalance over every verified launch: %.3f (%s, %s, n = %s, P = %d), against"
          " the bound 1 + ε = 1.1 of the default ε." % (imb, worst[0], worst[1], fmt_n(worst[2]),
                                                       worst[3]))
    u = groups.get((bks[0], "uniform", n, P, T))
    if u and u["total_s"]:
        share = {p: (u[p + "_s"] or 0) / u["total_s"] for p in PHASES}
        top = sorted(share, key=share.get, reverse=True)[:3]
        doc.p("Where the time goes (uniform, `%s`): %s of the total." % (bks[0], ", ".join(
            "`%s` %.0f%%" % (p, 100 * share[p]) for p in top)))
    if u and u["bytes_per_key"]:
        text = ("Peak memory: %.1f bytes per key summed over ranks at n = %s (goal: at most %.1f,"
                " i.e. 2.2× the 8-byte input, plus Open MPI's own baseline, which dominates at"
                " small n)" % (u["bytes_per_key"], fmt_n(n), MEM_GOAL_BYTES_PER_KEY))
        # The baseline: the summed peak RSS of the smallest run of the same configuration, where
        # the keys take almost nothing; what n adds on top of it is the sort's own memory.
        small = min((k[2] for k in groups if k[0] == bks[0] and k[1] == "uniform" and
                     k[3:] == (P, T) and groups[k].get("rss_sum_kib")), default=None)
        g0 = groups.get((bks[0], "uniform", small, P, T)) if small and small < n else None
        if g0 and u.get("rss_sum_kib"):
            base = g0["rss_sum_kib"] * 1024.0 - small * MEM_GOAL_BYTES_PER_KEY
            extra = (u["rss_sum_kib"] * 1024.0 - base) / n
            text += ("; taking the peak of the n = %s run (%.0f MiB over %d ranks, keys"
                     " included at the goal's rate) as Open MPI's baseline, the sort itself used"
                     " %.1f bytes per key (%s)" % (
                         fmt_n(small), g0["rss_sum_kib"] / 1024.0, P, extra,
                         "within the goal" if extra <= MEM_GOAL_BYTES_PER_KEY else
                         "**above the goal**"))
        doc.p(text + ".")
    inmem_vs_local(doc, results, rows)
    readme_io(doc, results, rows)
    ps = sorted({k[3] for k in groups if k[0] == bks[0] and k[1] == "uniform" and k[4] == 1
                 and k[2] == n})
    if len(ps) > 1:
        t = {p: groups[(bks[0], "uniform", n, p, 1)]["total_s"] for p in ps}
        doc.p("Scaling with P (`%s`, uniform, n = %s, 1 thread per rank): %s. This machine has"
              " %s cores, so P above that shares cores and is not expected to speed up." % (
                  bks[0], fmt_n(n), ", ".join("P = %d: %s" % (p, fmt_time(t[p])) for p in ps),
                  meta.get("cores", "?")))


def skipped_reason(results, suite, default):
    """Why a suite has no data: the reason runs.json recorded, else @default."""
    s = load_status(results).get("suites", {}).get(suite, {})
    return s.get("reason") if s.get("status") == "skipped" and s.get("reason") else default


def ls_peer(algo, threads):
    """The baseline a row is judged against: ips4o sequential at one thread, ips4o's parallel
    sort with the same threads otherwise."""
    return "ips4o" if threads == 1 else "ips4o_par"


def readme_localsort(doc, results):
    ls = localsort_data(results)
    if not ls:
        doc.p("No local-sort results: %s." % skipped_reason(
            results, "localsort", "`bin/sortex-localsort` was not built when the suite ran"))
        return
    med = {k[:4]: v for k, v in ls["med"].items() if k[4] == 0}
    doc.p("Measured on: %s; caches: %s. Every ratio below is against ips4o measured in the same run"
          " on the same machine (its sequential sort at 1 thread, its parallel sort with the same"
          " threads otherwise), so figures from CPUs with other caches never mix. Each figure"
          " is the median Mkeys/s of the repetitions; every output was checked (order and"
          " multiset)." % (ls["meta"].get("cpu", "unknown CPU"), caches_of(results)))
    doc.image(results, "localsort_throughput", "local sort throughput")
    doc.image(results, "localsort_dists", "local sort throughput by distribution")

    def ratio_cell(a, d, n, t):
        v, b = med.get((a, d, n, t)), med.get((ls_peer(a, t), d, n, t))
        if v is None:
            return "-"
        return "%.1f (%.2f×)" % (v, v / b) if b else "%.1f" % v

    # The peers at the largest n.
    n = max(k[2] for k in med)
    algos = list(dict.fromkeys(k[0] for k in med if k[2] == n))
    threads = sorted({k[3] for k in med if k[2] == n})
    doc.p("n = %s uniform keys: Mkeys/s and, in brackets, the ratio to ips4o:" % fmt_n(n))
    doc.table(["algorithm"] + ["%d thread%s" % (t, "s" if t > 1 else "") for t in threads],
              [[a] + [ratio_cell(a, "uniform", n, t) for t in threads] for a in algos])
    s1, s2 = med.get(("sortex", "uniform", n, 1)), med.get(("sortex", "uniform", n, 2))
    vq = med.get(("vqsort", "uniform", n, 1))
    facts = []
    if s1 and s2:
        facts.append("1 → 2 threads: %.2f×" % (s2 / s1))
    if s1 and vq:
        facts.append("against vqsort at 1 thread: %.2f×" % (s1 / vq))
    if s2 and vq:
        facts.append("sortex at 2 threads against vqsort at 1: %.2f×" % (s2 / vq))
    if facts:
        doc.p("; ".join(facts) + ".")

    # Every distribution at the size the distribution sweep used.
    dn = sorted({k[2] for k in med if k[1] != "uniform"})
    if dn:
        n2 = dn[-1]
        dists = list(dict.fromkeys(k[1] for k in med if k[2] == n2))
        cols = [(a, t) for t in threads for a in ("sortex", "vqsort") if (a, dists[0], n2, t) in med]
        doc.p("Every distribution, n = %s: Mkeys/s (ratio to ips4o):" % fmt_n(n2))
        doc.table(["distribution"] + ["%s T=%d" % c for c in cols],
                  [[d] + [ratio_cell(a, d, n2, t) for (a, t) in cols] for d in dists])
        worst = [(med[("sortex", d, n2, t)] / med[(ls_peer("sortex", t), d, n2, t)], d, t)
                 for d in dists for t in threads
                 if ("sortex", d, n2, t) in med and (ls_peer("sortex", t), d, n2, t) in med]
        if worst:
            w = min(worst)
            doc.p("The lowest ratio to ips4o over these distributions: %.2f× (%s, %d thread%s)."
                  % (w[0], w[1], w[2], "s" if w[2] > 1 else ""))

    # Sizes.
    sizes = sorted({k[2] for k in med if k[1] == "uniform" and k[0] == "sortex"})
    if len(sizes) > 1:
        cols = [(a, t) for t in threads for a in ("sortex", "ips4o" if t == 1 else "ips4o_par",
                                                  "vqsort") if any((a, "uniform", m, t) in med
                                                                   for m in sizes)]
        doc.p("Uniform keys by size, Mkeys/s:")
        doc.table(["n"] + ["%s T=%d" % c for c in cols],
                  [[fmt_n(m)] + ["%.1f" % med[(a, "uniform", m, t)]
                                 if (a, "uniform", m, t) in med else "-" for (a, t) in cols]
                   for m in sizes])

    # The finish phase: merge the P received runs, or re-sort them.
    runs = {k: v for k, v in ls["med"].items() if k[4] > 0}
    if runs:
        cases = sorted({(k[1], k[2], k[3], k[4]) for k in runs})
        doc.p("The finish phase's choice: merging P sorted runs (`merge`) against re-sorting"
              " their concatenation (`sortex`), Mkeys/s; `local/local.h`'s"
              " LOCAL_MERGE_RUNS_PER_THREAD (runs per thread up to which the sort merges) is"
              " read off this crossover:")
        doc.table(["runs", "n", "threads", "merge", "re-sort", "merge / re-sort"],
                  [[str(r), fmt_n(m), str(t),
                    "%.1f" % runs.get(("merge", d, m, t, r), 0),
                    "%.1f" % runs.get(("sortex", d, m, t, r), 0),
                    "%.2f" % (runs[("merge", d, m, t, r)] / runs[("sortex", d, m, t, r)])
                    if ("merge", d, m, t, r) in runs and ("sortex", d, m, t, r) in runs else "-"]
                   for (d, m, t, r) in cases])


def readme_e2e(doc, results):
    data = load_suite(results, "e2e")
    if not data:
        doc.p("No end-to-end results: %s." % skipped_reason(
            results, "e2e", "the suite needs working `sortex-gen` and `sortex-verify`"))
        return
    name, meta, rows = data[0]
    groups = sort_groups(rows)
    cases = list(dict.fromkeys((k[1], k[2]) for k in groups))
    table = []
    for d, n in cases:
        one = next((g for k, g in groups.items() if k[1:3] == (d, n) and k[3:] == (1, 2)), None)
        two = next((g for k, g in groups.items() if k[1:3] == (d, n) and k[3:] == (2, 1)), None)
        r = ratio(two and two["total_s"], one and one["total_s"])
        best = {k: min((num(x["total_s"]) for x in rows if x.get("status") == "verified" and
                        x["dist"] == d and int(x["n"]) == n and
                        (int(x["P"]), int(x["threads"])) == k and num(x.get("total_s"))),
                       default=None) for k in ((1, 2), (2, 1))}
        rb = ratio(best[(2, 1)], best[(1, 2)])
        # In memory: throughput of P = 2 x 1 relative to P = 1 x 2, which at one rank is the
        # local sort alone (no exchange, no finish), first touch of its scratch included.
        m = ratio(one and one["inmem_s"], two and two["inmem_s"])
        table.append([d, fmt_n(n), fmt_time(one and one["total_s"]),
                      fmt_time(two and two["total_s"]), "%.2f" % r if r else "-",
                      "%.2f" % rb if rb else "-",
                      fmt_time(one and one["inmem_s"]), fmt_time(two and two["inmem_s"]),
                      "%.2f" % m if m else "-"])
        if r:
            doc.p("%s, n = %s: the distributed path (P = 2 × 1 thread) took %.2f× the time of one"
                  " process with 2 threads on the same file (goal ≤ 1.3×)%s; in memory (local"
                  " sort to finish) it reached %.2f× the one-process throughput%s." % (
                      d, fmt_n(n), r, "" if r <= 1.3 else ": **the goal is missed**", m or 0,
                      " (goal ≥ 0.8× at 2^26 uniform)" if (d, n) == ("uniform", 1 << 26) else ""))
    doc.p("Both configurations sort the same file, launched alternately (%s launches each);"
          " medians over launches of the slowest rank (the ratio of each configuration's fastest"
          " launch beside it: on this machine a launch takes one of two times, about 1.6x apart,"
          " whatever its configuration, and a median can land in either). With one rank the sort"
          " skips the exchange"
          " and the finish, so its in-memory time is the 2-thread local sort alone, with the"
          " first touch of its scratch buffer counted as in the distributed path." %
          meta.get("launches", "?"))
    doc.table(["distribution", "n", "P = 1 × 2: total", "P = 2 × 1: total", "ratio",
               "ratio of the best launches",
               "P = 1 × 2: in memory", "P = 2 × 1: in memory", "in-memory throughput"], table)
    check_cost(doc, rows, cases)


def check_cost(doc, rows, cases):
    """What --check costs: P = 2 x 1 with it against the same launches without it."""
    table = []
    for d, n in cases:
        sel = [r for r in rows if r.get("status") == "verified" and r["dist"] == d and
               int(r["n"]) == n and (int(r["P"]), int(r["threads"])) == (2, 1)]
        on = [r for r in sel if r.get("check") == "yes"]
        off = [r for r in sel if r.get("check", "no") != "yes"]
        if not on or not off:
            continue
        c = median([num(r.get("check_s")) for r in on])
        t_on = median([num(r["total_s"]) for r in on])
        t_off = median([num(r["total_s"]) for r in off])
        table.append([d, fmt_n(n), fmt_time(c), "%.1f" % (n / c / 1e6) if c else "-",
                      fmt_time(t_off), fmt_time(t_on), "%.3f" % (t_on / t_off) if t_off else "-",
                      "%.1f%%" % (100.0 * c / t_off) if t_off else "-"])
    if not table:
        return
    doc.p("`--check` (the job proves its output ordered and a permutation of its input, before"
          " the output takes its final name): its own phase, and the whole sort with and without"
          " it, P = 2 × 1 thread, medians over the launches of each, launched alternately. The"
          " check phase is the slowest rank's.")
    doc.table(["distribution", "n", "check phase", "Mkeys/s checked", "total without",
               "total with", "ratio", "check / total"], table)


def readme_records(doc, results):
    """gensort's 100-byte records end to end, against ips4o's parallel sort of the same records
    in one process (the baseline file of the same run)."""
    data = {os.path.basename(f): (m, rows) for f, m, rows in load_suite(results, "records")}
    if "records.csv" not in data:
        doc.p("No record-sort results: %s." % skipped_reason(
            results, "records", "the suite has not run at this scale"))
        return
    meta, rows = data["records.csv"]
    rb = int(num(meta.get("record_bytes"), 100))
    base = {}
    for r in data.get("baseline.csv", ({}, []))[1]:
        base.setdefault(r["algo"], []).append(num(r["mkeys_per_s"]))
    base = {a: median(v) * rb for a, v in base.items()}  # MB/s (10^6 bytes) of records
    ips = base.get("ips4o_par")
    groups = {}
    for r in rows:
        if r.get("status") == "verified":
            groups.setdefault((r["dist"], int(r["n"]), int(r["P"]), int(r["threads"])),
                              []).append(r)
    doc.p("gensort's %d-byte records (10-byte keys), sorted file to file by `sortex --format"
          " gensort` and checked by `sortex-verify` (valsort's checks). MB/s = n × %d bytes /"
          " time / 10^6, the Sort Benchmark's unit; end to end is the job's total (read to"
          " write), in memory the local sort to the finish. The baseline is ips4o's parallel"
          " sort of the same records in one process with 2 threads (a key comparator), and"
          " sortex's record kernel alone, measured in the same run: %s. Medians over %s launches"
          " of the slowest rank." % (rb, rb, ", ".join("%s %.0f MB/s" % kv for kv in
                                                       sorted(base.items())) or "not measured",
                                       meta.get("launches", "?")))
    table = []
    for (d, n, P, T), rs in sorted(groups.items()):
        tot = median([num(r["total_s"]) for r in rs])
        mem = median([num(r["inmem_s"]) for r in rs])
        e2e_mb = n * rb / tot / 1e6 if tot else None
        mem_mb = n * rb / mem / 1e6 if mem else None
        table.append([d, fmt_n(n), "%d × %d" % (P, T), fmt_time(tot),
                      "%.0f" % e2e_mb if e2e_mb else "-", fmt_time(mem),
                      "%.0f" % mem_mb if mem_mb else "-",
                      "%.2f" % (mem_mb / ips) if mem_mb and ips else "-",
                      "%.2f" % (e2e_mb / ips) if e2e_mb and ips else "-", str(len(rs))])
    doc.table(["records", "n", "P × threads", "end to end", "MB/s", "in memory", "MB/s",
               "in memory / ips4o_par", "end to end / ips4o_par", "launches"], table)
    fails = [r for r in rows if r.get("status") != "verified"]
    if fails:
        doc.p("**%d launches failed or did not verify and are left out.**" % len(fails))


def readme_external(doc, results):
    """The external sort beside the in-memory sort and STXXL's sorter, on the same files."""
    data = load_suite(results, "external")
    if not data:
        doc.p("No external-sort results: %s." % skipped_reason(
            results, "external", "the suite has not run at this scale"))
        return
    _, meta, rows = data[0]
    ok = [r for r in rows if r.get("status") == "verified"]
    base = [num(r["rss_max_kib"]) for r in ok if r["tool"] == "baseline"]
    base_kib = median(base) if base else None
    by = {}
    for r in ok:
        if r["tool"] != "baseline":
            by.setdefault((r["format"], int(r["n"]), r["tool"], num(r["mem_per_rank"])),
                          []).append(r)

    def med(key, col):
        v = [num(r.get(col)) for r in by.get(key, []) if num(r.get(col)) is not None]
        return median(v) if v else None

    doc.p("Files larger than the memory the ranks may use, sorted at P = 2 × 1 by `sortex` with"
          " `--mem-limit` (the external sort, two passes through temporary files), beside the"
          " same file sorted in memory with no limit, and beside STXXL's sorter (`bin/sortex-stxxl`,"
          " one process, given the memory of both ranks). Times are each tool's own end to end"
          " (read to written output), medians over %s launches; every output checked by"
          " `sortex-verify`. Bytes per pass are the sort's own counts of what it read and wrote"
          " (all ranks, over the input's size); peak RSS is the largest rank's, beside the"
          " ranks' resident memory without data (%s)." % (
              meta.get("launches", "?"),
              "%.0f MiB" % (base_kib / 1024) if base_kib else "not measured"))
    table = []
    inputs = sorted({(f, n) for (f, n, _, _) in by})
    for fmt, n in inputs:
        mems = sorted({m for (f, nn, t, m) in by if f == fmt and nn == n and t != "sortex-memory"},
                      reverse=True)
        inmem = next((med(k, "total_s") for k in by if k[:3] == (fmt, n, "sortex-memory")), None)
        for m in mems:
            ext = (fmt, n, "sortex-external", m)
            stx = (fmt, n, "stxxl", m)
            t_ext, t_stx = med(ext, "total_s"), med(stx, "total_s")
            size = n * (100 if fmt == "gensort" else 8)
            rel = [med(ext, c) / size if med(ext, c) is not None else None for c in
                   ("read1_bytes", "written1_bytes", "read2_bytes", "written2_bytes")]
            rss = med(ext, "rss_max_kib")
            table.append([
                fmt, fmt_n(n), "%.0f×" % (size / (2 * m)), fmt_bytes(m), fmt_time(t_ext),
                fmt_time(inmem), "%.2f" % (t_ext / inmem) if t_ext and inmem else "-",
                fmt_time(t_stx) if t_stx else "failed" if stx in by or any(
                    r["tool"] == "stxxl" and num(r["mem_per_rank"]) == m and int(r["n"]) == n
                    for r in rows) else "-",
                "%.1f" % (t_stx / t_ext) if t_ext and t_stx else "-",
                " / ".join("%.2f" % x if x is not None else "-" for x in rel),
                "%.2f" % (med(ext, "temp_bytes") / size) if med(ext, "temp_bytes") else "-",
                "%.0f MiB" % (rss / 1024) if rss else "-",
                "%.0f" % (med(ext, "split_buckets") or 0)])
    doc.table(["input", "n", "input / memory", "memory a rank", "external", "in memory",
               "external / in memory", "STXXL", "STXXL / external",
               "bytes read, written: pass 1, pass 2 (× input)", "temporary (× input)",
               "peak RSS a rank", "extra passes"], table)
    fails = [r for r in rows if r.get("status") != "verified"]
    if fails:
        doc.p("%d launches failed or did not verify (%s) and are left out: STXXL's sorter stops"
              " when its memory cannot hold a merge of all its runs (\"INSUFFICIENT MEMORY\")." % (
                  len(fails), ", ".join(sorted({"%s %s" % (r["tool"], r["status"])
                                                for r in fails}))))


# The Python module's goals: sortex.sort within 1.2 times the program's in-memory phases on the
# same data, sortex.argsort within 1.5 times.
PYTHON_GOALS = {"sort": 1.2, "argsort": 1.5}


def readme_python(doc, results):
    """The Python module against the program: medians of each kind's verified calls."""
    data = load_suite(results, "python")
    if not data:
        return
    _, meta, rows = data[0]
    ok = [r for r in rows if r.get("status") == "verified"]
    cli = median([num(r["seconds"]) for r in ok if r["kind"] == "cli"])
    n, P, T = (ok[0]["n"], ok[0]["P"], ok[0]["threads"]) if ok else ("?", "?", "?")
    doc.p("`sortex.sort` and `sortex.argsort` of %s uint64 keys over %s ranks of %s thread%s"
          " (`bench/python_sort.py`, with %s) against `sortex`'s in-memory phases (local sort"
          " to finish, each phase's slowest rank) on the same file: the program and the Python"
          " job take turns over %s launches, each job one untimed call of each and then %s of"
          " each alternately; a call's time is the slowest rank's between barriers. Library is"
          " the library's own in-memory phases inside the call, the rest is the module's"
          " (copying in, mapping keys, argsort's positions)." % (
              fmt_n(int(n)) if str(n).isdigit() else n, P, T, "" if str(T) == "1" else "s",
              "Python %s, numpy %s, mpi4py %s" % tuple(meta.get(k, "?") for k in (
                  "python_version", "numpy", "mpi4py")),
              meta.get("launches", "?"), meta.get("reps", "?")))
    table = []
    for kind in ("sort", "argsort"):
        rs = [r for r in ok if r["kind"] == kind]
        if not rs:
            continue
        t = [num(r["seconds"]) for r in rs]
        lib = median([num(r["library_s"]) for r in rs])
        med = median(t)
        table.append(["`sortex.%s`" % kind, fmt_time(med), fmt_time(min(t)), fmt_time(max(t)),
                      fmt_time(lib), fmt_time(cli) if cli else "-",
                      "%.2f" % (med / cli) if cli else "-", "%.1f" % PYTHON_GOALS[kind],
                      rs[0]["path"], str(len(rs))])
    doc.table(["call", "median", "min", "max", "library", "program in memory", "ratio", "goal",
               "path", "calls"], table)
    fails = [r for r in rows if r.get("status") != "verified"]
    if fails:
        doc.p("**%d calls or launches failed or did not verify and are left out.**" % len(fails))


def readme_elsewhere(doc, results):
    """Links to the result sets of the emulated cluster, which live in subdirectories."""
    sets = [("cluster", "the same suites across the emulated cluster's hosts, over TCP links"
             " with full-duplex rate limits"),
            ("cluster-half", "exchanges on half-duplex links (a host's sends and receives share"
             " one rate), as they run and with the scheduled back-ends one step at a time")]
    have = [(d, what, load_status(os.path.join(results, d))) for d, what in sets
            if os.path.exists(os.path.join(results, d, "README.md"))]
    if not have:
        return
    doc.h(2, "Across hosts")
    for d, what, st in have:
        last = st.get("last_run", {})
        doc.p("[`%s/README.md`](%s/README.md): %s (commit %s)." % (
            d, d, what, (last.get("commit") or "unknown")[:12]))


# ---- the sort model: validation and scaling (results/model/README.md) ----------------------

# A phase "misses" when measured / predicted falls outside [1 / MODEL_MISS, MODEL_MISS].
MODEL_MISS = 1.3
MODEL_PHASES = PHASES + ["total"]
# The goals of the scaling issue: at these P and n/P, sample + splitters within this share of the
# predicted total and within this much sample memory a rank.
MODEL_GOAL_PS = (4096, 65536)
MODEL_GOAL_N = 10**6
MODEL_GOAL_SHARE = 0.05
MODEL_GOAL_MEMORY = 16 << 20
BALANCE_WORDS = {"eps": "`eps` (histogram rounds; auto's choice beyond about 80 ranks)",
                 "exact": "`exact`",
                 "sample": "`sample` (the regular sample; auto's choice up to about 80 ranks)"}
COMPUTE_PHASES = ("local_sort", "sample", "splitters", "bucket", "finish")
# A launch shared the machine when other work took this share of its CPU time meanwhile.
MODEL_BUSY = 0.1
# The local_sort phase's fixed cost as measured here (about 2 ms), with room for noise: seconds.
MODEL_LOCAL_FIXED = 3e-3


def model_rounds(note):
    """The histogram rounds a model note names ('4 rounds; 4.98e+04 candidates'), or None."""
    m = re.match(r"(\d+) rounds", note or "")
    return int(m.group(1)) if m else None


# Why a predicted phase time misses the measured one, as far as the project knows: (label, test
# on the miss's context, the explanation printed under the table). Every reason whose test holds
# is given; a miss no test matches is listed as unexplained. The tests use the data alone.
MODEL_REASONS = [
    ("busy machine", lambda c: c["other"] is not None and c["other"] >= MODEL_BUSY and
     c["measured"] > c["predicted"],
     "other work took at least %.0f%% of the machine's CPU time during these launches (column"
     " `other_cpu_share`); ranks that do not oversubscribe the cores busy-poll in MPI (Open MPI"
     " yields the core only when oversubscribed), and each lost whole scheduler ticks (4 ms"
     " here) whenever something else ran on its core: measured here at P = 2, 20 ms in a phase"
     " the same launch with `--mca mpi_yield_when_idle 1` ran in 0.2 ms" % (100 * MODEL_BUSY)),
    ("scatter", lambda c: c["min"] <= c["predicted"] <= c["max"],
     "the prediction lies within the launches' range (fastest to slowest launch): the launches"
     " scattered on this shared machine, and their median fell outside the band"),
    ("under 1 ms", lambda c: abs(c["measured"] - c["predicted"]) < 1e-3,
     "measured and predicted are less than 1 ms apart: about one scheduler time slice, which a"
     " rank loses whenever something else runs on its core; the model prices no such waits"),
    ("oversubscribed", lambda c: c["P"] * c["threads"] > c["cores"] and
     c["phase"] in COMPUTE_PHASES + ("read", "write", "total"),
     "oversubscribed (ranks × threads > cores): the model charges ranks × threads / cores, an"
     " even share of the cores, for every compute and file phase; the kernel's scheduler does"
     " not share them evenly, and a phase's time is its slowest rank's, so it does worse"
     " (ratio above 1) or, when ranks happen to run one after another, better"),
    ("best case", lambda c: c["phase"] in ("local_sort", "finish") and c["min"] and
     1 / MODEL_MISS <= c["min"] / c["predicted"] <= MODEL_MISS,
     "the fastest launch is within the band: the calibration keeps the fastest of its runs of"
     " the local sort and the merge, a best case, while the median launch also pays for what"
     " else ran on the machine"),
    ("cores shared in the exchange", lambda c: not c["cluster"] and c["phase"] == "exchange" and
     c["P"] * c["threads"] > c["cores"],
     "on one node the exchange is memory copies made by the ranks' own cores (Open MPI's shared"
     " memory); the model prices it with alpha and beta from a ping-pong of two ranks on idle"
     " cores and, unlike the compute phases, does not share the cores among the P ranks"),
    ("fixed cost", lambda c: c["phase"] == "local_sort" and
     0 < c["measured"] - c["predicted"] <= MODEL_LOCAL_FIXED,
     "the sort's local_sort phase carries a fixed cost of about 2 ms here whatever n is (at 2^14"
     " keys a rank: 2.1 ms in the phase, 44 µs for the same sort in `sortex-localsort`), which"
     " the model, a rate per key, does not price; this miss is within %.0f ms of the"
     " prediction" % (1e3 * MODEL_LOCAL_FIXED)),
    ("MPI-IO", lambda c: c["phase"] in ("read", "write"),
     "the model prices the bytes at one process's read(2) or write(2) rate through the page cache"
     " (`--calibrate`); the sort's phase also opens and closes the file with collective MPI-IO"
     " (`MPI_File_open`, `MPI_File_read_at_all` / `MPI_File_write_at_all`), whose set-up and"
     " synchronisation the model does not price"),
    ("rounds", lambda c: c["phase"] == "splitters" and c["rounds"] is not None and
     c["predicted_rounds"] is not None and c["rounds"] != c["predicted_rounds"],
     "the sort took another number of histogram rounds than the model's replay of the selection"
     " predicts (column `measured_rounds` against the note)"),
    ("half-duplex", lambda c: c["half"] and c["phase"] in ("exchange", "total"),
     "half-duplex links: a host's sends and receives share one rate, while beta comes from a"
     " ping-pong, which sends one way at a time; an exchange that sends and receives at once"
     " takes up to twice the predicted time"),
    ("emulated hosts", lambda c: c["cluster"] and c["phase"] in (
        "sample", "splitters", "bucket", "exchange"),
     "the emulated hosts' TCP stacks run on this machine's cores beside the ranks: every message"
     " costs CPU time, which alpha and beta (from a ping-pong of two otherwise idle ranks) do"
     " not include; and the shaped links release data in steps of about 4 ms"),
    ("collectives in turns", lambda c: c["balance"] not in ("levels 1", "levels auto") and
     c["balance"].startswith("levels") and c["phase"] in ("sample", "splitters", "bucket") and
     c["P"] * c["threads"] > c["cores"],
     "with more than one level these phases are mostly collectives over a level's group (the"
     " selection's all-gathers and all-reduces; the bucket's agreement on memory, the groups'"
     " sums and prefix sums, and the counts, whose receiver waits for every sender), and a"
     " collective completes only when every rank of the group has run: with 8 to 27 ranks on"
     " 2 cores the ranks run in turns of a scheduler time slice (4 ms here), so each collective"
     " costs up to ranks / cores slices where the model prices microseconds of latency; the"
     " one-level sort makes fewer of them (one all-to-all of the counts in its bucket phase)"),
    ("its phases", lambda c: c["phase"] == "total" and c["phase_misses"],
     "the total is the sum of the phases, some of which miss (above)"),
]


def model_sets(results):
    """The validation sets under RESULTS: this machine's and the emulated clusters', each
    {sub, links, meta, rows, machine}."""
    out = []
    for sub in SUBSETS:
        d = os.path.join(results, sub, "model") if sub else os.path.join(results, "model")
        path = os.path.join(d, "validation.csv")
        if not os.path.exists(path):
            continue
        meta, rows = read_results(path)
        out.append({"sub": sub, "links": links_of(meta), "meta": meta, "rows": rows,
                    "machine": meta.get("machine") or {}})
    return out


def model_contexts(s):
    """Every judged case of a validation set: its row, numbers and the reasons that hold."""
    meta = s["meta"]
    cores = int(num(meta.get("cores"), 1))
    half = "half-duplex" in meta.get("launcher", "")
    cases = []
    for r in s["rows"]:
        c = {"row": r, "phase": r["phase"], "P": int(r["P"]), "threads": int(r["threads"]),
             "cores": cores, "balance": r["balance"], "backend": r["backend"],
             "measured": num(r["measured_med_s"]), "min": num(r["measured_min_s"]),
             "max": num(r["measured_max_s"]), "predicted": num(r["predicted_s"]),
             "ratio": num(r["ratio"]), "rounds": num(r.get("measured_rounds")),
             "other": num(r.get("other_cpu_share")),
             "predicted_rounds": model_rounds(r.get("predicted_note")),
             "cluster": s["links"] != "one node", "half": half}
        c["miss"] = c["ratio"] is not None and not (1 / MODEL_MISS <= c["ratio"] <= MODEL_MISS)
        cases.append(c)
    # The total's reason "its phases" needs to know whether a phase of its case missed.
    missed = {(c["P"], c["balance"], c["backend"]) for c in cases
              if c["miss"] and c["phase"] != "total"}
    for c in cases:
        c["phase_misses"] = (c["P"], c["balance"], c["backend"]) in missed
        c["reasons"] = [label for label, test, _ in MODEL_REASONS if c["miss"] and test(c)]
    return cases


def ranges(values, fmt):
    """'a' or 'a to b' over values, formatted by fmt."""
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else "%s to %s" % (fmt(lo), fmt(hi))


def p_list(ps):
    """[1, 2, 3, 5, 7, 8] -> '1-3, 5, 7-8'."""
    ps, out, i = sorted(set(ps)), [], 0
    while i < len(ps):
        j = i
        while j + 1 < len(ps) and ps[j + 1] == ps[j] + 1:
            j += 1
        out.append(str(ps[i]) if i == j else "%d-%d" % (ps[i], ps[j]))
        i = j + 1
    return ", ".join(out)


def model_misses(cases):
    """The misses grouped by (phase, balance, back-end, reasons), in phase order: [(key,
    cases)]."""
    groups = {}
    for c in cases:
        if c["miss"]:
            groups.setdefault((c["phase"], c["balance"], c["backend"], tuple(c["reasons"])),
                              []).append(c)
    order = {p: i for i, p in enumerate(MODEL_PHASES)}
    return sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1:]))


def model_summary(cases):
    """(judged, misses, unexplained misses) of a validation set."""
    judged = [c for c in cases if c["ratio"] is not None]
    miss = [c for c in judged if c["miss"]]
    return len(judged), len(miss), len([c for c in miss if not c["reasons"]])


def set_title(s):
    meta, rows = s["meta"], s["rows"]
    ps = sorted({int(r["P"]) for r in rows})
    n = int(num(meta.get("n_per_rank"), 0) or (rows and rows[0]["n_per_rank"]) or 0)
    where = "One node" if s["links"] == "one node" else "Emulated cluster, %s hosts, %s" % (
        meta.get("nodes", "?"), s["links"][len("cluster, "):])
    return "%s: P = %s, %s keys a rank" % (where, p_list(ps), fmt_n(n))


def model_validation(doc, s):
    """One validation set: the ratio tables, the misses and their reasons."""
    meta, rows = s["meta"], s["rows"]
    cases = model_contexts(s)
    judged, missed, unexplained = model_summary(cases)
    doc.h(3, set_title(s))
    mach = s["machine"]
    machine_file = os.path.join(s["sub"], meta.get("machine_file", "model/machine.txt"))
    doc.p("`bin/sortex` on uniform keys, one thread a rank, each case launched %s times (the"
          " selections and back-ends interleaved, every output checked by `sortex-verify`; one"
          " rank exchanges nothing, so P = 1 runs with the first back-end only);"
          " measured: the median over launches of the phase's slowest rank (`--stats`)."
          " Predicted: `sortex-sched --sort --ranks-per-node P` (the P ranks share the cores) with"
          " [`%s`](%s), alpha %s and beta %s s a byte (%s) from `%s`. Scale: %s. Each cell is"
          " measured / predicted; **bold** outside %.2f..%.1f; `-` where the model predicts no"
          " time." % (
              meta.get("launches", "?"), machine_file, os.path.relpath(machine_file, "model"),
              "%.3g µs" % (1e6 * num(mach["alpha"])) if num(mach.get("alpha")) else "?",
              mach.get("beta", "?"), "%.3g GB/s" % (1e-9 / num(mach["beta"]))
              if num(mach.get("beta")) else "?", meta.get("pingpong_command", "?"),
              meta.get("mode", "?"), 1 / MODEL_MISS, MODEL_MISS))
    by = {(c["P"], c["balance"], c["backend"], c["phase"]): c for c in cases}
    combos = list(dict.fromkeys((c["balance"], c["backend"]) for c in cases))
    ps = sorted({c["P"] for c in cases})
    for bal, b in combos:
        table = []
        for P in ps:
            if (P, bal, b, "total") not in by:
                continue
            cells = []
            for ph in MODEL_PHASES:
                c = by.get((P, bal, b, ph))
                if c is None or c["ratio"] is None:
                    cells.append("-")
                else:
                    cells.append(("**%.2f**" if c["miss"] else "%.2f") % c["ratio"])
            t = by[(P, bal, b, "total")]
            table.append([str(P)] + cells + ["%s / %s" % (fmt_time(t["measured"]),
                                                          fmt_time(t["predicted"]))])
        doc.p("--balance %s, --exchange `%s`:" % (BALANCE_WORDS.get(bal, bal), b))
        doc.table(["P"] + MODEL_PHASES + ["total: measured / predicted"], table)
    zero = [c for c in cases if c["ratio"] is None and c["measured"] is not None]
    if zero:
        w = max(zero, key=lambda c: c["measured"])
        doc.p("Where the model predicts no time (one rank: nothing to sample, exchange or combine;"
              " the regular sample's splitters, picked from the sorted sample), the sort measured"
              " at most %s (%s, P = %d)." % (fmt_time(w["measured"]), w["phase"], w["P"]))
    doc.p("**%d of %d judged phase cases miss by more than %.0f%%** (ratio outside %.2f..%.1f);"
          " %s." % (missed, judged, 100 * (MODEL_MISS - 1), 1 / MODEL_MISS, MODEL_MISS,
                    "all of them with a known reason" if missed and not unexplained else
                    "**%d unexplained**" % unexplained if unexplained else "none to explain"))
    groups = model_misses(cases)
    if not groups:
        return
    table, used = [], []
    for (ph, bal, b, reasons), cs in groups:
        used += [r for r in reasons if r not in used]
        table.append([ph, "%s, `%s`" % (bal, b), p_list([c["P"] for c in cs]),
                      ranges([c["ratio"] for c in cs], lambda x: "%.2f" % x),
                      ranges([c["measured"] for c in cs], fmt_time),
                      ranges([c["predicted"] for c in cs], fmt_time),
                      ", ".join(reasons) if reasons else "**unexplained**"])
    doc.p("Every miss, grouped by phase, selection, back-end and reason:")
    doc.table(["phase", "balance, back-end", "P", "measured / predicted", "measured",
               "predicted", "why"], table)
    doc.p("Why: %s.%s" % ("; ".join("*%s*: %s" % (label, text) for label, _, text in MODEL_REASONS
                                    if label in used),
                          " *Unexplained*: no known reason matches; the model or the sort has"
                          " something to learn here." if unexplained else ""))


def read_scaling(results):
    path = os.path.join(results, "model", "scaling.csv")
    if not os.path.exists(path):
        return None, []
    return read_results(path)


def fmt_secs(x):
    """A predicted time: 'not modelled' for NaN, 'refused' for infinity."""
    if x is None or x != x:
        return "not modelled"
    if x == float("inf"):
        return "refused"
    return fmt_time(x)


def fmt_mem(b):
    if b is None:
        return "-"
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            return "%.1f %s" % (b / size, unit)
    return "%d B" % b


def scaling_index(rows):
    """{(n, P, balance, phase): row} of the phase rows (the back-ends' exchange rows apart)."""
    return {(int(r["n_per_rank"]), int(r["P"]), r["balance"], r["phase"]): r for r in rows}


def sample_memory(ix, n, P, bal):
    """What the sample and splitters phases hold beyond the element buffers, bytes a rank."""
    base = num(ix[(n, P, bal, "local_sort")]["rank_bytes"])
    return max(num(ix[(n, P, bal, ph)]["rank_bytes"]) for ph in ("sample", "splitters")) - base


def model_goal(ix, P, bal):
    """The issue's goal at P for one selection: (sample + splitters seconds, total or None,
    share or None, memory, verdict text)."""
    n = MODEL_GOAL_N
    if (n, P, bal, "total") not in ix:
        return None
    t = {ph: num(ix[(n, P, bal, ph)]["seconds"]) for ph in MODEL_PHASES}
    sel = t["sample"] + t["splitters"]
    mem = sample_memory(ix, n, P, bal)
    mem_ok = mem <= MODEL_GOAL_MEMORY
    if sel == float("inf"):
        return sel, None, None, mem, "**missed**: the sort refuses the regular sample at this P"
    if t["total"] == t["total"]:
        share = sel / t["total"]
        ok = share <= MODEL_GOAL_SHARE and mem_ok
        return sel, t["total"], share, mem, "**%s**" % ("met" if ok else "missed")
    # The exchange is not modelled: the other phases bound the total from below, so the share
    # against them bounds the true share from above.
    known = sum(v for ph, v in t.items() if ph != "total" and v == v)
    share = sel / known
    if not mem_ok:
        return sel, None, share, mem, "**missed** (memory)"
    if share <= MODEL_GOAL_SHARE:
        return sel, None, share, mem, ("**met**: at most %.1f%% (of the phases without the"
                                       " exchange, which is not modelled here)" % (100 * share))
    need = sel / MODEL_GOAL_SHARE - known
    return sel, None, share, mem, ("open: %.1f%% of the phases without the exchange, which is"
                                   " not modelled here; the exchange would have to take %s or"
                                   " more for the goal" % (100 * share, fmt_time(need)))


def model_goals(doc, meta, rows):
    ix = scaling_index(rows)
    table = []
    for P in MODEL_GOAL_PS:
        for bal in ("eps", "exact", "sample"):
            g = model_goal(ix, P, bal)
            if g is None:
                continue
            sel, tot, share, mem, verdict = g
            table.append([str(P), BALANCE_WORDS.get(bal, bal), fmt_secs(sel), fmt_secs(tot),
                          "%.1f%%" % (100 * share) if share is not None else "-", fmt_mem(mem),
                          verdict])
    doc.h(2, "Goals: the splitter selection at P = %s" % " and ".join(map(str, MODEL_GOAL_PS)))
    if not table:
        doc.p("Not in this run: the scaling table has no P = %s at n/P = %s." % (
            " or ".join(map(str, MODEL_GOAL_PS)), fmt_n(MODEL_GOAL_N)))
        return
    doc.p("From the scaling table below (the model alone, n/P = 10^6 uniform keys, ε = %s, the"
          " total with `alltoallv`'s exchange): sample + splitters at most %.0f%% of the predicted"
          " total and at most %s of sample memory a rank (what the sample and splitters phases"
          " hold beyond the two element buffers). Today's rule, `--balance sample`, beside the"
          " new ones." % (meta.get("epsilon", "0.1"), 100 * MODEL_GOAL_SHARE,
                          fmt_mem(MODEL_GOAL_MEMORY)))
    doc.table(["P", "balance", "sample + splitters", "predicted total", "share",
               "sample memory a rank", "goal"], table)


def model_stops(meta, rows):
    """Sentences, from the data, on which phase stops scaling where, per n/P and selection."""
    ix = scaling_index(rows)
    cores = int(num(meta.get("cores"), 1))
    node = num(meta.get("memory_gib"), 0) * 2**30
    out = []
    for n in sorted({k[0] for k in ix}):
        for bal in ("eps", "exact", "sample"):
            ps = sorted({k[1] for k in ix if k[0] == n and k[2] == bal})
            if not ps:
                continue
            ev = []
            for ph in ("sample", "splitters", "bucket", "exchange"):
                for P in ps:
                    t, ls = num(ix[(n, P, bal, ph)]["seconds"]), num(
                        ix[(n, P, bal, "local_sort")]["seconds"])
                    if t == t and t != float("inf") and t > ls:
                        ev.append("`%s` takes longer than the local sort from P = %d (%s against"
                                  " %s)" % (ph, P, fmt_time(t), fmt_time(ls)))
                        break
            for ph in ("sample", "splitters"):
                for P in ps:
                    b = num(ix[(n, P, bal, ph)]["rank_bytes"])
                    if node and b * cores > node:
                        ev.append("`%s` needs %s a rank from P = %d, more than the node's %s"
                                  " holds for its %d ranks" % (ph, fmt_mem(b), P,
                                                               fmt_mem(node), cores))
                        break
            refused = [P for P in ps if num(ix[(n, P, bal, "sample")]["seconds"]) == float("inf")]
            if refused:
                ev.append("the sort refuses the regular sample from P = %d" % refused[0])
            fin = [P for P in ps if num(ix[(n, P, bal, "total")]["seconds"]) == num(
                ix[(n, P, bal, "total")]["seconds"]) != float("inf")]
            nan = [P for P in ps if num(ix[(n, P, bal, "exchange")]["seconds"]) !=
                   num(ix[(n, P, bal, "exchange")]["seconds"])]
            if len(fin) > 1:
                a, z = (num(ix[(n, P, bal, "total")]["seconds"]) for P in (fin[0], fin[-1]))
                ev.append("the predicted total grows from %s at P = %d to %s at P = %d (%.1f×;"
                          " flat would be perfect weak scaling)" % (fmt_time(a), fin[0],
                                                                    fmt_time(z), fin[-1], z / a))
            if nan:
                ev.append("the exchange is not modelled from P = %d" % nan[0])
            out.append("n/P = %s, %s: %s." % (fmt_n(n), BALANCE_WORDS.get(bal, bal),
                                              "; ".join(ev) if ev else "every phase scales"))
    return out


def model_scaling(doc, meta, rows):
    ix = scaling_index(rows)
    doc.h(2, "Scaling: the model alone to P = %d" % max(k[1] for k in ix))
    doc.p("`sortex-sched --sort --dist uniform --balance all --epsilon %s` with [`machine.txt`]"
          "(machine.txt) (this machine's constants; the network's are this machine's shared"
          " memory, ranks per node = cores / threads = %s), no MPI and no keys: weak scaling at"
          " each n/P, every phase's predicted time on the slowest rank and the most memory one"
          " rank holds in it, the total with `alltoallv`'s exchange (the sort's default)."
          " *not modelled*: beyond P = 4096 no P × P count matrix fits, and a back-end whose model"
          " has no equal-blocks form (direct, forward) is not predicted there; *refused*: the"
          " sort would refuse to run (the regular sample's size)." % (
              meta.get("epsilon", "0.1"), meta.get("cores", "?")))
    doc.p("Where it stops scaling, from the rows below:")
    for line in model_stops(meta, rows):
        doc.lines.append("- " + line)
    doc.lines.append("")
    for n in sorted({k[0] for k in ix}):
        ps = sorted({k[1] for k in ix if k[0] == n})
        doc.h(3, "n/P = %s" % fmt_n(n))
        doc.p("Predicted time a phase (slowest rank):")
        doc.table(["P", "balance"] + MODEL_PHASES,
                  [[str(P), bal] + [fmt_secs(num(ix[(n, P, bal, ph)]["seconds"]))
                                    for ph in MODEL_PHASES]
                   for P in ps for bal in ("eps", "exact", "sample") if (n, P, bal, "total") in ix])
        doc.p("Memory one rank holds (the element buffers in every phase; the sample and the"
              " splitter rounds add to them), and the bytes one rank sends in all:")
        doc.table(["P", "balance", "buffers", "sample", "splitters", "peak", "sent"],
                  [[str(P), bal] + [fmt_mem(num(ix[(n, P, bal, ph)]["rank_bytes"])) for ph in
                                    ("local_sort", "sample", "splitters", "total")] +
                   [fmt_mem(num(ix[(n, P, bal, "total")]["net_bytes"]))]
                   for P in ps for bal in ("eps", "exact", "sample") if (n, P, bal, "total") in ix])
        bks = list(dict.fromkeys(r["phase"][len("exchange:"):] for r in rows
                                 if r["phase"].startswith("exchange:")))
        if bks:
            ex = {(int(r["P"]), r["phase"][len("exchange:"):]): num(r["seconds"]) for r in rows
                  if r["phase"].startswith("exchange:") and int(r["n_per_rank"]) == n}
            doc.p("Each back-end's exchange (its first model, equal blocks as uniform keys give);"
                  " *not run* where this run left the P out (the matrix models take minutes at"
                  " P = 4096):")
            doc.table(["P"] + ["`%s`" % b for b in bks],
                      [[str(P)] + [fmt_secs(ex[(P, b)]) if (P, b) in ex else "not run"
                                   for b in bks] for P in ps])


# ---- the levels (--levels): the model's table and the sort against it ---------------------

# The goals of the levels' issue, from the model at n/P = 10^6: at LEVELS_GOAL_P the best L's
# total at most LEVELS_GOAL_RATIO of one level's, selection + bucketing at most LEVELS_GOAL_SHARE
# of it; at LEVELS_GOAL_BIG a finite total with at most MODEL_GOAL_MEMORY of selection memory;
# every rank's messages at most 3 L P^(1/L) + log2 P.
LEVELS_GOAL_P = 65536
LEVELS_GOAL_BIG = 262144
LEVELS_GOAL_RATIO = 0.5
LEVELS_GOAL_SHARE = 0.10


def read_levels(results):
    path = os.path.join(results, "model", "levels.csv")
    if not os.path.exists(path):
        return None, []
    return read_results(path)


def levels_index(rows):
    """{(n, P, levels, phase): row}."""
    return {(int(r["n_per_rank"]), int(r["P"]), r["levels"], r["phase"]): r for r in rows}


def level_note(row, key):
    """A key=value figure of a model note (levels, startups, select_bytes, k, messages)."""
    m = re.search(r"\b%s=(\d+)" % key, row.get("note", "")) if row else None
    return int(m.group(1)) if m else None


def levels_best(ix, n, P):
    """The cheapest L of 1..4 at (n, P) and its total, or (None, None)."""
    t = {L: num(ix[(n, P, str(L), "total")]["seconds"]) for L in range(1, 5)
         if (n, P, str(L), "total") in ix}
    t = {L: v for L, v in t.items() if v == v and v != float("inf")}
    if not t:
        return None, None
    L = min(t, key=lambda k: (t[k], k))
    return L, t[L]


def levels_share(ix, n, P, L):
    """Selection + bucketing over the total for L levels at (n, P)."""
    sel = sum(num(ix[(n, P, str(L), ph)]["seconds"]) for ph in ("sample", "splitters", "bucket"))
    return sel / num(ix[(n, P, str(L), "total")]["seconds"])


def levels_cap(P, L):
    return 3 * L * P ** (1.0 / L) + math.log2(P)


def model_levels_goals(doc, ix):
    n, P, big = MODEL_GOAL_N, LEVELS_GOAL_P, LEVELS_GOAL_BIG
    doc.h(3, "Goals at n/P = 10^6, uniform keys")
    table = []
    for q in (P, big):
        L, best = levels_best(ix, n, q)
        if L is None or (n, q, "one", "total") not in ix:
            continue
        one = num(ix[(n, q, "one", "total")]["seconds"])
        l1 = num(ix[(n, q, "1", "total")]["seconds"]) if (n, q, "1", "total") in ix else None
        tot = ix[(n, q, str(L), "total")]
        share = levels_share(ix, n, q, L)
        starts, sel = level_note(tot, "startups"), level_note(tot, "select_bytes")
        cap = levels_cap(q, L)
        checks = []
        if q == P:
            checks.append(("best L at most %.1f× one level" % LEVELS_GOAL_RATIO,
                           best <= LEVELS_GOAL_RATIO * min(x for x in (one, l1) if x is not None)))
            checks.append(("selection + bucketing at most %.0f%%" % (100 * LEVELS_GOAL_SHARE),
                           share <= LEVELS_GOAL_SHARE))
        else:
            checks.append(("finite, at most %s of selection memory" % fmt_mem(MODEL_GOAL_MEMORY),
                           sel is not None and sel <= MODEL_GOAL_MEMORY))
        checks.append(("messages at most 3 L P^(1/L) + log2 P = %.0f" % cap,
                       starts is not None and starts <= cap))
        table.append([str(q), fmt_secs(one), fmt_secs(l1), "L = %d: %s" % (L, fmt_secs(best)),
                      "%.2f" % (best / one) if one == one and one else "-",
                      "%.1f%%" % (100 * share), "%s" % starts, fmt_mem(sel),
                      "; ".join("%s: **%s**" % (t, "met" if ok else "missed") for t, ok in checks)])
    doc.table(["P", "one level (today's model)", "L = 1 (levels' model)", "best L",
               "best / one level", "selection + bucketing of the best", "messages a rank",
               "selection memory a rank", "goals"], table)
    # The best L's share missed: say which L meets it, and at what cost.
    L, best = levels_best(ix, n, P)
    if L is not None and levels_share(ix, n, P, L) > LEVELS_GOAL_SHARE:
        ok = [k for k in range(1, 5) if (n, P, str(k), "total") in ix and
              levels_share(ix, n, P, k) <= LEVELS_GOAL_SHARE]
        if ok:
            k = ok[0]
            tk = num(ix[(n, P, str(k), "total")]["seconds"])
            doc.p("At P = %d the cheapest L spends %.1f%% in the selection and the bucketing;"
                  " L = %d spends %.1f%% for a total %.0f%% above the cheapest (%s against %s)."
                  % (P, 100 * levels_share(ix, n, P, L), k, 100 * levels_share(ix, n, P, k),
                     100 * (tk / best - 1), fmt_time(tk), fmt_time(best)))


def model_levels_table(doc, meta, rows):
    ix = levels_index(rows)
    doc.h(2, "Levels: the model alone to P = %d" % max(k[1] for k in ix))
    doc.p("`sortex-sched --sort --dist uniform --epsilon %s --levels L --exchange auto` for L ="
          " 1..4 with [`machine.txt`](machine.txt) (each level's exchange as the sort's"
          " `--exchange auto` picks it: priced up to 1024 ranks a group, `sparse` at a level"
          " that is not the last and `alltoallv` at the last beyond), beside one level as the"
          " one-level model prices it with `alltoallv`, the sort's default back-end (the"
          " scaling table's model, below). The levels' model replays each level's selection,"
          " prices each level's exchange on its own count matrix and ends with the shift to"
          " exact shares (`--balance auto` with levels); its L = 1 is the same sort through the"
          " same replay. **Bold**: the cheapest L. Messages: the most one rank sends over all"
          " levels (the exchanges' non-empty pieces, the counts and the shift); selection"
          " memory: the candidates, their counts and the brackets a rank holds at its largest"
          " level. Regenerate with `bench/run --full --suites model` and `bench/report.py model"
          " results`." % meta.get("epsilon", "0.1"))
    model_levels_goals(doc, ix)
    for n in sorted({k[0] for k in ix}):
        ps = sorted({k[1] for k in ix if k[0] == n})
        doc.h(3, "n/P = %s" % fmt_n(n))
        table = []
        for P in ps:
            L, best = levels_best(ix, n, P)
            one = num(ix[(n, P, "one", "total")]["seconds"]) if (n, P, "one", "total") in ix \
                else None
            cells = []
            for k in range(1, 5):
                r = ix.get((n, P, str(k), "total"))
                t = fmt_secs(num(r["seconds"])) if r else "-"
                cells.append("**%s**" % t if k == L else t)
            tot = ix.get((n, P, str(L), "total")) if L else None
            table.append([str(P), fmt_secs(one)] + cells + [
                "%.2f" % (best / one) if L and one else "-",
                "%.1f%%" % (100 * levels_share(ix, n, P, L)) if L else "-",
                str(level_note(tot, "startups") or "-") if tot else "-",
                fmt_mem(level_note(tot, "select_bytes")) if tot else "-"])
        doc.table(["P", "one level (today's model)", "L = 1", "L = 2", "L = 3", "L = 4",
                   "best / one level", "selection + bucketing", "messages a rank",
                   "selection memory"], table)
        # The cheapest L's levels at the largest P, level by level.
        P = ps[-1]
        L, _ = levels_best(ix, n, P)
        lv = [ix[(n, P, str(L), "level%d" % i)] for i in range(1, (L or 0) + 1)
              if (n, P, str(L), "level%d" % i) in ix]
        if lv:
            doc.p("P = %d, L = %d, level by level:" % (P, L))
            doc.table(["level", "groups", "ranks a group", "time", "messages a rank",
                       "histogram rounds", "exchange"],
                      [[str(i + 1), str(level_note(r, "k")), str(level_note(r, "ranks")),
                        fmt_time(num(r["seconds"])), str(level_note(r, "messages")),
                        str(level_note(r, "rounds")), "`%s`" % r["exchange"]]
                       for i, r in enumerate(lv)])


def levels_sets(results):
    """The levels' validation sets under RESULTS (this machine's and the clusters'), as
    model_sets() returns them, each row given the fields model_contexts() reads."""
    out = []
    for sub in SUBSETS:
        d = os.path.join(results, sub, "model") if sub else os.path.join(results, "model")
        path = os.path.join(d, "levels-validation.csv")
        if not os.path.exists(path):
            continue
        meta, rows = read_results(path)
        for r in rows:
            r["threads"] = "1"
            r["balance"] = "levels %s" % r["levels_asked"]
        out.append({"sub": sub, "links": links_of(meta), "meta": meta, "rows": rows,
                    "machine": meta.get("machine") or {}})
    return out


def model_levels_validation(doc, s):
    """The levels measured against the model: a row a (P, L) case, its messages and balance,
    the misses and why."""
    meta, rows = s["meta"], s["rows"]
    cases = model_contexts(s)
    judged, missed, unexplained = model_summary(cases)
    where = "One node" if s["links"] == "one node" else "Emulated cluster, %s hosts, %s" % (
        meta.get("nodes", "?"), s["links"][len("cluster, "):])
    doc.h(3, "%s: %s keys a rank" % (where, fmt_n(int(num(meta.get("n_per_rank"), 0)))))
    doc.p("`bin/sortex --levels L` on uniform keys, one thread a rank, each case launched %s"
          " times (the cases of a P interleaved, every output checked by `sortex-verify`);"
          " `alltoallv` for one level and auto (which runs one level up to 64 ranks), `sparse`"
          " for more. Measured: the median over launches of the phase's slowest rank."
          " Predicted: `sortex-sched --sort --levels L --ranks-per-node P` with the run's"
          " machine file. Each cell is measured / predicted, **bold** outside %.2f..%.1f;"
          " messages: the most one rank sent, measured (median) / predicted." % (
              meta.get("launches", "?"), 1 / MODEL_MISS, MODEL_MISS))
    by = {(c["P"], c["balance"], c["backend"], c["phase"]): c for c in cases}
    keys = list(dict.fromkeys((c["P"], c["balance"], c["backend"]) for c in cases))
    table = []
    for P, bal, b in keys:
        if (P, bal, b, "total") not in by:
            continue
        cells = []
        for ph in MODEL_PHASES:
            c = by.get((P, bal, b, ph))
            cells.append("-" if c is None or c["ratio"] is None else
                         ("**%.2f**" if c["miss"] else "%.2f") % c["ratio"])
        t = by[(P, bal, b, "total")]
        r = t["row"]
        table.append([str(P), "%s (ran %s)" % (r["levels_asked"], r["levels"]), "`%s`" % b] +
                     cells + ["%s / %s" % (fmt_time(t["measured"]), fmt_time(t["predicted"])),
                              "%s / %s" % (r.get("measured_startups") or "-",
                                           r.get("predicted_startups") or "-"),
                              r.get("imbalance") or "-"])
    doc.table(["P", "--levels", "back-end"] + MODEL_PHASES +
              ["total: measured / predicted", "messages", "imbalance"], table)
    doc.p("**%d of %d judged phase cases miss by more than %.0f%%**; %s." % (
        missed, judged, 100 * (MODEL_MISS - 1),
        "all of them with a known reason" if missed and not unexplained else
        "**%d unexplained**" % unexplained if unexplained else "none to explain"))
    groups = model_misses(cases)
    if not groups:
        return
    out, used = [], []
    for (ph, bal, b, reasons), cs in groups:
        used += [r for r in reasons if r not in used]
        out.append([ph, "%s, `%s`" % (bal, b), p_list([c["P"] for c in cs]),
                    ranges([c["ratio"] for c in cs], lambda x: "%.2f" % x),
                    ranges([c["measured"] for c in cs], fmt_time),
                    ranges([c["predicted"] for c in cs], fmt_time),
                    ", ".join(reasons) if reasons else "**unexplained**"])
    doc.table(["phase", "levels, back-end", "P", "measured / predicted", "measured",
               "predicted", "why"], out)
    doc.p("Why: %s." % "; ".join("*%s*: %s" % (label, text) for label, _, text in MODEL_REASONS
                                 if label in used))


def model_headline(results):
    """One paragraph for the results README: the goals and the validation's misses."""
    parts = []
    meta, rows = read_scaling(results)
    if rows:
        ix = scaling_index(rows)
        for P in MODEL_GOAL_PS:
            g = {bal: model_goal(ix, P, bal) for bal in ("eps", "sample")}
            if g["eps"]:
                parts.append("at P = %d the histogram's goal is %s, the regular sample's %s" % (
                    P, re.sub(r"[*]", "", g["eps"][4]).split(":")[0],
                    re.sub(r"[*]", "", g["sample"][4]).split(":")[0] if g["sample"] else "-"))
    # This directory's own set only: the clusters' pages speak for theirs, and a cluster run
    # must not leave this page stale.
    for s in [s for s in model_sets(results) if not s["sub"]]:
        judged, missed, unexplained = model_summary(model_contexts(s))
        parts.append("%s: %d of %d phase cases miss the prediction by more than 30%%, %d"
                     " unexplained" % (s["links"], missed, judged, unexplained))
    return "; ".join(parts)


def cmd_model(results):
    """Writes RESULTS/model/README.md from RESULTS/model/*.csv and the clusters' beside it."""
    meta, rows = read_scaling(results)
    sets = model_sets(results)
    if not rows and not sets and not read_levels(results)[1]:
        return False
    doc = Doc()
    doc.h(1, "The sort model: validation and scaling")
    doc.p("Generated by `bench/report.py` from the CSV files of `bench/run --suites model` in this"
          " directory (and in `../cluster/model/` and `../cluster-half/model/` for the emulated"
          " cluster); nothing here is edited by hand. `sortex-sched --sort` predicts every phase"
          " of a sort from machine constants and the sort's own rules; here it is checked against"
          " the sort itself, then asked where the sort stops scaling.")
    if rows:
        model_goals(doc, meta, rows)
    doc.h(2, "Validation: measured against predicted")
    if not sets:
        doc.p("No validation in this run.")
    for s in sets:
        model_validation(doc, s)
    if rows:
        model_scaling(doc, meta, rows)
    lmeta, lrows = read_levels(results)
    if lrows:
        model_levels_table(doc, lmeta, lrows)
    lsets = levels_sets(results)
    if lsets:
        doc.h(2, "Levels: measured against predicted")
        for s in lsets:
            model_levels_validation(doc, s)
    path = os.path.join(results, "model", "README.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(doc.lines).rstrip() + "\n")
    os.replace(tmp, path)
    return True


def readme_model(doc, results):
    """The sort model's section: a link to its page (written here for a top-level results
    directory; a cluster's directory links to the page above it) and its headline."""
    sub = os.path.basename(os.path.normpath(results)) in SUBSETS[1:]
    if not os.path.isdir(os.path.join(results, "model")):
        return
    if not sub:
        cmd_model(results)
    text = model_headline(results)
    doc.h(2, "The sort model: validation and scaling")
    link = "../model/README.md" if sub else "model/README.md"
    doc.p("`sortex-sched --sort`'s predictions against the sort's measured phases%s: [`%s`](%s)%s."
          % (" across these hosts" if sub else ", and the model alone to P = 65536", link, link,
             "; " + text if text else ""))


def cmd_readme(results):
    status = load_status(results)
    doc = Doc()
    doc.h(1, "Benchmark results")
    doc.p("Generated by `bench/plots.sh` from the CSV files in this directory, which `bench/run`",
          "wrote; nothing here is edited by hand. Re-run everything with `make bench` (the full",
          "set) or `make bench-quick`; re-render the plots and this page with `make plots`.")
    readme_findings(doc, results)
    doc.h(2, "Machine and runs")
    m = environment(doc, results)
    status_table(doc, status, results)
    modes = {s.get("mode") for s in status.get("suites", {}).values() if s.get("status") == "ran"}
    if modes - {"full", "cluster"}:
        doc.p("**Scale:** %s. Quick and smoke runs use small sizes and few repetitions: read them"
              " as a check that the suite works, not as measurements." % ", ".join(
                  sorted(m for m in modes if m)))
    loads = [num(meta.get("loadavg")) for suite in SUITES
             for _, meta, _ in load_suite(results, suite)]
    loads = [x for x in loads if x is not None]
    cores = num(m.get("cores"), 0)
    if loads and cores:
        # Each figure includes the suite's own previous runs; the quietest start tells whether
        # something else was running.
        busy = min(loads) > 0.5 * cores
        doc.p("The 1-minute load average was %.1f to %.1f when the runs started (the suite's own"
              " previous runs included), on %d cores:"
              " %s Runs with more ranks × threads than cores are marked oversubscribed." % (
                  min(loads), max(loads), cores,
                  "**the machine was busy (other work, or this suite's own previous runs still in"
                  " the average), so times may be inflated and noisy; compare the minima.**"
                  if busy else
                  "the machine was otherwise idle."))
    readme_steal(doc, status, results)
    if "cluster.sh" in m.get("launcher", ""):
        half = "half-duplex" in m.get("launcher", "")
        doc.p("These runs used the emulated cluster (`tests/cluster/`): one rank per host, hosts"
              " joined by TCP over veth links through a bridge, each link shaped by a token"
              " bucket at the rate above%s. All hosts share this machine's 2 cores, memory and"
              " file system, so TCP processing competes with the ranks for CPU, and the shared"
              " file system makes MPI-IO look cheaper than on a real cluster. Many times fall"
              " near multiples of 4 ms, the granularity of the shaped links here, so small"
              " differences at small volumes mean little." % (
                  ", one bucket for both directions: a host's sends and receives together stay"
                  " within the rate (half duplex, the model of the h-relation paper)" if half
                  else " in each direction"))
    doc.h(2, "Exchange micro-benchmark")
    readme_exchange(doc, results)
    doc.h(2, "Sort")
    readme_sort(doc, results)
    doc.h(2, "Local sort baselines")
    readme_localsort(doc, results)
    doc.h(2, "End to end: one process with 2 threads or 2 ranks with 1 thread")
    readme_e2e(doc, results)
    if load_suite(results, "records") or load_status(results).get("suites", {}).get("records"):
        doc.h(2, "Records: gensort's 100-byte records end to end")
        readme_records(doc, results)
    if load_suite(results, "external") or load_status(results).get("suites", {}).get("external"):
        doc.h(2, "Larger than memory: the external sort")
        readme_external(doc, results)
    readme_model(doc, results)
    if load_suite(results, "python"):
        doc.h(2, "Python: sortex.sort and sortex.argsort against the program")
        readme_python(doc, results)
    readme_elsewhere(doc, results)
    doc.h(2, "Files")
    files = sorted(glob.glob(os.path.join(results, "*", "*.csv")))
    doc.p("Every CSV file starts with its header row, units in the column names (`_s` seconds,"
          " `_bytes`, `_kib`, `mib_per_s`), so `pandas.read_csv(f)` and `numpy.genfromtxt(f,"
          " delimiter=',', names=True)` read it as it is. Beside each, `NAME.meta.json` describes"
          " the machine (CPU model, family, model and stepping, every cache level), the build,"
          " every setting the driver made (environment, launcher, Open MPI's MCA settings), the"
          " command, and what each column means (its key `columns`). Data: %s." % (", ".join(
              "`%s`" % os.path.relpath(f, results) for f in files) or "none"))
    path = os.path.join(results, "README.md")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(doc.lines).rstrip() + "\n")
    os.replace(tmp, path)


def main(argv):
    if len(argv) == 3 and argv[0] == "tables":
        cmd_tables(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "readme":
        cmd_readme(argv[1])
    elif len(argv) == 2 and argv[0] == "model":
        cmd_model(argv[1])
    else:
        print("report.py: error: usage: report.py tables RESULTS OUTDIR | readme RESULTS | "
              "model RESULTS",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""bench/report.py: the tables behind the plots, and results/README.md, from the results CSVs.

  report.py tables RESULTS OUTDIR   writes OUTDIR/*.dat (tab separated, one column per series)
                                    and OUTDIR/plots.tsv, the list bench/plots.sh renders
  report.py readme RESULTS          writes RESULTS/README.md: environment, plots, key tables and
                                    one short paragraph per finding, phrased from the data

Only the Python standard library. Every figure in the README is computed here from the CSV files
the driver wrote; nothing is typed in by hand, so a re-run rewrites the findings too.
"""

import csv
import glob
import io
import json
import os
import re
import statistics
import sys

PHASES = ["read", "local_sort", "sample", "splitters", "bucket", "exchange", "finish", "write"]
KEY_BYTES = 8
# The memory goal of the sample sort: peak RSS summed over ranks <= 2.2x the input (+ MPI's own).
MEM_GOAL_BYTES_PER_KEY = 2.2 * KEY_BYTES


# ---- reading -----------------------------------------------------------------------------------

def read_results(path):
    """Reads a results CSV: '# key: value' lines into meta, then the CSV rows as dicts."""
    meta, body = {}, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                key, sep, value = line[1:].strip().partition(":")
                if sep and key.strip() not in meta:
                    meta[key.strip()] = value.strip()
            elif line.strip():
                body.append(line)
    rows = list(csv.DictReader(io.StringIO("".join(body))))
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
    return "%d B" % b


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


def write_dat(path, xname, columns, rows):
    """rows: [(x, [v or None per column])] -> tab separated with a header; '?' for missing."""
    with open(path, "w") as f:
        f.write("\t".join([xname] + columns) + "\n")
        for x, vals in rows:
            f.write("\t".join([str(x)] + ["?" if v is None else "%.9g" % v for v in vals]) + "\n")


class Plots:
    """Collects the manifest of plots for bench/plots.sh."""

    def __init__(self, outdir):
        self.outdir = outdir
        self.items = []

    def add(self, kind, name, xname, columns, rows, title, xlabel, ylabel, logx=0, logy=0,
            ref=None):
        if not rows or not columns:
            return
        dat = os.path.join(self.outdir, name + ".dat")
        write_dat(dat, xname, columns, rows)
        # Empty fields would vanish when the shell splits on tabs: "-" stands for "none".
        self.items.append([kind, name, dat, str(len(columns) + 1), title or "-", xlabel or "-",
                           ylabel or "-", str(logx), str(logy), "%g|%s" % ref if ref else "-"])

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
            return num(r["t_med"])
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

def cmd_tables(results, outdir):
    plots = Plots(outdir)
    sizes, skew, dists, _ = exchange_data(results)

    for e in sizes:
        P, rows, bks = e["P"], e["rows"], e["backends"]
        if len(e["volumes"]) > 1:
            pat = "bucket" if any(r["pattern"] == "bucket" for r in rows) else rows[0]["pattern"]
            data = [(v / 1024.0,
                     [t_of(rows, backend=b, pattern=pat, bytes_per_rank=v) for b in bks])
                    for v in e["volumes"]]
            plots.add("lines", "exchange_time_vs_bytes_" + e["tag"], "kib", bks, data,
                      "Exchange time vs volume, pattern %s, P = %d%s" % (
                          pat, P, ", " + e["variant"] if e["variant"] else ""),
                      "KiB sent per rank", "median time (s), slowest rank", 2, 10)
        top = e["volumes"][-1]
        labels = list(dict.fromkeys(pattern_label(r) for r in rows))
        data = []
        for lab in labels:
            vals = [median([num(r["t_med"]) for r in rows if pattern_label(r) == lab and
                            r["backend"] == b and int(r["bytes_per_rank"]) == top]) for b in bks]
            data.append((lab, [v * 1e3 if v is not None else None for v in vals]))
        plots.add("clustered", "exchange_patterns_" + e["tag"], "pattern", bks, data,
                  "Exchange time per pattern, %s per rank, P = %d%s" % (
                      fmt_bytes(top), P, ", " + e["variant"] if e["variant"] else ""),
                  "", "median time (ms), slowest rank")

    # Time vs P: equal blocks at the largest volume every sizes file that goes to 1 MiB has.
    big = [e for e in sizes if e["volumes"][-1] >= 1 << 20 and not e["variant"]]
    common = set.intersection(*[set(e["volumes"]) for e in big]) if big else set()
    if len(big) > 1 and common:
        vol = max(common)
        bks = list(dict.fromkeys(b for e in big for b in e["backends"]))
        data = [(e["P"], [t_of(e["rows"], backend=b, pattern="bucket", bytes_per_rank=vol)
                          for b in bks]) for e in sorted(big, key=lambda e: e["P"])]
        plots.add("lines", "exchange_time_vs_p", "P", bks, data,
                  "Exchange time vs P, equal blocks (bucket), %s per rank" % fmt_bytes(vol),
                  "P (ranks)", "median time (s), slowest rank")

    # The sort's own matrices: time per input at each P, and the spread over inputs vs P.
    for e in dists:
        inputs, summ = dists_summary(e)
        bks = [b for b in e["backends"] if b in summ]
        plots.add("clustered", "exchange_dists_p%d" % e["P"], "input", bks,
                  [(d, [summ[b][0].get(d, 0) * 1e3 or None for b in bks]) for d in inputs],
                  "Exchange time on the sort's count matrices, %s per rank, P = %d" % (
                      fmt_bytes(e["volumes"][-1]), e["P"]), "datagen input",
                  "median time (ms), slowest rank")
    if len(dists) > 1:
        bks = list(dict.fromkeys(b for e in dists for b in e["backends"]))
        summs = [(e["P"], dists_summary(e)[1]) for e in dists]
        plots.add("lines", "exchange_dists_spread", "P", bks,
                  [(P, [sm[b][1] if b in sm else None for b in bks]) for P, sm in summs],
                  "Spread of exchange time over the nine inputs (slowest / fastest)",
                  "P (ranks)", "max / min over inputs")

    for e in skew:
        P, rows, bks = e["P"], e["rows"], e["backends"]
        vol = e["volumes"][-1]
        for pat, xlabel in (("onehot", "percent of every rank's volume sent to rank 0"),
                            ("zipf", "Zipf exponent over destinations (rotated per rank)")):
            params = sorted({num(r["param"]) for r in rows if r["pattern"] == pat})
            if len(params) < 2:
                continue
            data = [(x, [median([num(r["t_med"]) for r in rows if r["pattern"] == pat and
                                 num(r["param"]) == x and r["backend"] == b and
                                 int(r["bytes_per_rank"]) == vol]) for b in bks]) for x in params]
            plots.add("lines", "exchange_skew_%s_p%d" % (pat, P), pat, bks, data,
                      "Exchange time vs skew (%s), %s per rank, P = %d" % (pat, fmt_bytes(vol), P),
                      xlabel, "median time (s), slowest rank")

    sort = load_suite(results, "sort")
    if sort:
        groups = sort_groups(sort[0][2])
        cfg = main_config(groups)
        bks = list(dict.fromkeys(k[0] for k in groups))
        if cfg:
            P, T = cfg
            # Time vs n per back-end (uniform).
            ns = sorted({k[2] for k in groups if k[1] == "uniform" and k[3:] == cfg})
            data = [(n, [groups.get((b, "uniform", n, P, T), {}).get("total_s") for b in bks])
                    for n in ns]
            if len(ns) > 1:
                plots.add("lines", "sort_time_vs_n", "n", bks, data,
                          "Sort time vs n (uniform, P = %d x %d threads)" % (P, T),
                          "keys", "median total time (s), slowest rank", 2, 10)
                mem = [(n, [groups.get((b, "uniform", n, P, T), {}).get("bytes_per_key")
                            for b in bks]) for n in ns]
                plots.add("lines", "sort_memory_per_key", "n", bks, mem,
                          "Peak RSS summed over ranks per key (uniform, P = %d x %d)" % (P, T),
                          "keys", "bytes per key", 2, 10,
                          ref=(MEM_GOAL_BYTES_PER_KEY, "2.2 x input"))
            # Phase breakdown at the largest n run with several distributions.
            by_n = {}
            for k in groups:
                if k[3:] == cfg:
                    by_n.setdefault(k[2], set()).add(k[1])
            if by_n:
                n = max(by_n, key=lambda x: (len(by_n[x]), x))
                bars = []
                for d in sorted(by_n[n], key=lambda d: (d != "uniform", d)):
                    for b in bks:
                        g = groups.get((b, d, n, P, T))
                        if g:
                            bars.append(("%s/%s" % (b, d), [g[p + "_s"] for p in PHASES]))
                plots.add("stacked", "sort_phases", "case", PHASES, bars,
                          "Sort phases, n = %s, P = %d x %d (median of launches, slowest rank "
                          "per phase)" % (fmt_n(n), P, T), "back-end / distribution",
                          "seconds")
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
                          "P (ranks)", "median total time (s), slowest rank")

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
                  "distribution, threads", "Mkeys/s")
    plots.write()


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
    for suite in ("exchange", "sort", "e2e", "localsort"):
        data = load_suite(results, suite)
        if data:
            m = data[0][1]
            doc.table(["", ""], [
                ["CPU", "%s, %s cores" % (m.get("cpu", "?"), m.get("cores", "?"))],
                ["Memory", "%s GiB" % m.get("memory_gib", "?")],
                ["MPI", m.get("mpi", "?")],
                ["Compiler", "%s; %s" % (m.get("compiler", "?"),
                                         m.get("cflags", m.get("build", "?")))],
                ["Allocator", m.get("allocator", "?")],
                ["Transparent huge pages", m.get("thp", "?")],
                ["Commit", ", ".join(sorted({c for x in ("exchange", "sort", "e2e", "localsort")
                                             for c in suite_commits(results, x)})) or "?"],
                ["Launcher", m.get("launcher", "mpirun --oversubscribe --bind-to none")],
            ])
            return m
    doc.p("No results yet: run `make bench` (or `make bench-quick`).")
    return {}


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
    for suite in ("exchange", "localsort", "sort", "e2e"):
        s = status.get("suites", {}).get(suite)
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
          "instance of the h-relation paper). A repetition's time is its slowest rank's, barrier",
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
        labels = list(dict.fromkeys(pattern_label(r) for r in rows))
        table, wins, spread, spread_min = [], {b: 0 for b in bks}, {}, {}
        for lab in labels:
            sel = {b: [r for r in rows if pattern_label(r) == lab and r["backend"] == b and
                       int(r["bytes_per_rank"]) == top] for b in bks}
            ts = {b: median([num(r["t_med"]) for r in sel[b]]) for b in bks}
            tmin = {b: median([num(r["t_min"]) for r in sel[b]]) for b in bks}
            best = min((t, b) for b, t in ts.items() if t is not None)[1] if any(
                t is not None for t in ts.values()) else None
            if best:
                wins[best] += 1
            h = next((int(r["h_bytes"]) for b in bks for r in sel[b]), 0)
            table.append([lab, "%.1f" % (h / 2**20)] +
                         [("**%s**" if b == best and len(bks) > 1 else "%s")
                          % ("%s (%s)" % (fmt_time(ts[b]), fmt_time(tmin[b]))) for b in bks])
            for b in bks:
                spread.setdefault(b, []).append(ts[b])
                spread_min.setdefault(b, []).append(tmin[b])
        doc.p("Exchange time at %s per rank, median (minimum) over repetitions; fastest median in"
              " bold. On a busy machine the minimum is the better estimate of the uncontended"
              " cost, the median of what a user sees. h is the largest volume one rank sends"
              " to and receives from the others (its own block excluded): the lower bound on"
              " what any back-end must move through one rank. Back-ends are interleaved within"
              " each repetition, patterns are not (they run one after the other), so compare"
              " back-ends along a row freely and patterns down a column with care: a busy"
              " neighbour can slow one pattern's repetitions together." % fmt_bytes(top))
        doc.table(["pattern", "h (MiB)"] + bks, table)
        # Findings, from the table above.
        if len(bks) > 1:
            doc.p("At %s per rank and P = %d, %s." % (fmt_bytes(top), P, "; ".join(
                "`%s` was fastest on %d of %d patterns" % (b, wins[b], len(labels))
                for b in sorted(bks, key=lambda b: -wins[b]) if wins[b])))
        sp = []
        for b in bks:
            ts = [t for t in spread[b] if t is not None]
            mins = [t for t in spread_min[b] if t is not None]
            if len(ts) > 1:
                hi = labels[spread[b].index(max(ts))]
                lo = labels[spread[b].index(min(ts))]
                sp.append("`%s` %.2f× on medians (slowest `%s`, fastest `%s`), %.2f× on minima"
                          % (b, max(ts) / min(ts), hi, lo, max(mins) / min(mins)))
        if sp:
            doc.p("Spread across the patterns (slowest / fastest time at %s per rank): %s."
                  % (fmt_bytes(top), "; ".join(sp)),
                  "A spread near 1 means the back-end's cost does not depend on the shape of the",
                  "count matrix; a large one means skew or incast dominates it (or, when only the",
                  "medians spread, that the machine was busy).")
        if len(e["volumes"]) > 2 and any(r["pattern"] == "bucket" for r in rows):
            vt = []
            for v in e["volumes"]:
                ts = {b: t_of(rows, backend=b, pattern="bucket", bytes_per_rank=v) for b in bks}
                have = [(t, b) for b, t in ts.items() if t]
                best = min(have)[1] if have else None
                vt.append(["%s (%s)" % (fmt_bytes(v), fmt_bytes(v // P))] + [
                    ("**%s**" if b == best else "%s") % fmt_time(ts[b]) for b in bks])
            doc.p("Equal blocks (`bucket`) at every volume, median time; fastest in bold:")
            doc.table(["per rank (per pair)"] + bks, vt)
            base = "alltoallv" if "alltoallv" in bks else bks[0]
            for b in bks:
                if b == base:
                    continue
                faster = [v for v in e["volumes"]
                          if all((t_of(rows, backend=b, pattern=pat, bytes_per_rank=v) or 1e9)
                                 < (t_of(rows, backend=base, pattern=pat, bytes_per_rank=v) or 0)
                                 for pat in {r["pattern"] for r in rows})]
                if faster:
                    doc.p("`%s` beat `%s` on every pattern at %s per pair (P = %d)." % (
                        b, base, ", ".join(fmt_bytes(v // P) for v in faster), P))
        small = e["volumes"][0]
        if small != top:
            b0 = bks[0]
            sel = {v: [r for r in rows if r["backend"] == b0 and r["pattern"] == "bucket" and
                       int(r["bytes_per_rank"]) == v] for v in (small, top)}
            if sel[small] and sel[top]:
                s_med, s_min = num(sel[small][0]["t_med"]), num(sel[small][0]["t_min"])
                t_med, t_min = num(sel[top][0]["t_med"]), num(sel[top][0]["t_min"])
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
                td, tf = (median([num(r["t_med"]) for r in rows if pattern_label(r) == lab and
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
        for b in bks:
            parts = []
            lo = t_of(rows, backend=b, pattern="onehot", param="0", bytes_per_rank=vol)
            hi = t_of(rows, backend=b, pattern="onehot", param="100", bytes_per_rank=vol)
            if lo and hi:
                parts.append("sending everything to rank 0 (`onehot:100`) took %s equal blocks"
                             " (`onehot:0`), while rank 0 receives %d× its share" %
                             (times(hi / lo), P))
            z = sorted(((num(r["param"]), num(r["t_med"])) for r in rows
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
    paired = all(num(r.get("ratio_med")) for e in dists for r in e["rows"])
    doc.p("Pattern `sort:DIST`: the count matrix a P-rank `sortex` run hands its exchange on the",
          "datagen input DIST of P × V keys (sampling and bucketing as the sort does them), for",
          "the nine inputs of the sample sort literature. This is where a back-end's",
          "sensitivity to skew shows on the data the product actually moves. Spread: slowest /",
          "fastest median time over the nine inputs; ratio: %s (worst input in brackets, median"
          " over inputs after the slash)." % (
              "the median over repetitions of a back-end's time over `alltoallv`'s in the same"
              " repetition, run moments apart, so that the machine's slow drifts cancel" if paired
              else "a back-end's median over `alltoallv`'s on the same input"))
    doc.image(results, "exchange_dists_spread", "spread of exchange time over the nine inputs")
    bks = list(dict.fromkeys(b for e in dists for b in e["backends"]))
    summs = [(e, dists_summary(e)[1]) for e in dists]
    head = ["back-end"] + ["P = %d (%s)" % (e["P"], fmt_bytes(e["volumes"][-1])) for e in dists]
    doc.p("Spread over the nine inputs (max / min):")
    doc.table(head, [[b] + ["%.2f" % sm[b][1] if b in sm else "-" for _, sm in summs]
                     for b in bks])
    doc.p("Time relative to `alltoallv` on the same input, worst (input) / median over inputs:")
    doc.table(head, [[b] + ["%.2f (%s) / %.2f" % (sm[b][2], sm[b][3], sm[b][4])
                            if b in sm and sm[b][2] else "-" for _, sm in summs]
                     for b in bks if b != "alltoallv"])
    flat = []
    for e, sm in summs:
        if "alltoallv" in sm:
            best = min(sm, key=lambda b: sm[b][1])
            flat.append("P = %d: `%s` %.2f (alltoallv %.2f)" % (e["P"], best, sm[best][1],
                                                                 sm["alltoallv"][1]))
    if flat:
        doc.p("Least sensitive to the input at each P: %s." % "; ".join(flat))
    for e in dists:
        doc.image(results, "exchange_dists_p%d" % e["P"], "exchange per input, P = %d" % e["P"])


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
          "and writes everything, spread and collected by the combining binomial tree of seed",
          "001; `--io rootv`: the same through `MPI_Scatterv`/`MPI_Gatherv`. Medians over",
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
        best = min((groups[(b, d, n, P, T)]["total_s"], b) for b in bks
                   if (b, d, n, P, T) in groups)
        for b in bks:
            g = groups.get((b, d, n, P, T))
            if not g:
                continue
            table.append([d, ("**%s**" if b == best[1] and len(bks) > 1 else "%s") % b,
                          fmt_time(g["total_s"]), fmt_time(g["inmem_s"]),
                          fmt_time(g["exchange_s"]), "%.3f" % g["imbalance_max"],
                          "%.0f MiB" % ((g["bytes_moved"] or 0) / 2**20),
                          "%.1f" % (g["bytes_per_key"] or 0), g["launches"]])
    doc.p("n = %s keys, P = %d × %d thread(s):" % (fmt_n(n), P, T))
    doc.table(["distribution", "back-end", "total", "in memory (local sort..finish)", "exchange",
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
    doc.p("Measured on: %s; %s. Every ratio below is against ips4o measured in the same run on"
          " the same machine (its sequential sort at 1 thread, its parallel sort with the same"
          " threads otherwise), so figures from CPUs with other caches never mix. Each figure"
          " is the median Mkeys/s of the repetitions; every output was checked (order and"
          " multiset)." % (ls["meta"].get("cpu", "unknown CPU"), ls["meta"].get("caches", "")))
    doc.image(results, "localsort_throughput", "local sort throughput")

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
              " their concatenation (`sortex`), Mkeys/s; `sort/local_sort.h`'s"
              " SORTEX_MERGE_RUNS_PER_THREAD (runs per thread up to which the sort merges) is"
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


def cmd_readme(results):
    status = load_status(results)
    doc = Doc()
    doc.h(1, "Benchmark results")
    doc.p("Generated by `bench/plots.sh` from the CSV files in this directory, which `bench/run`",
          "wrote; nothing here is edited by hand. Re-run everything with `make bench` (the full",
          "set) or `make bench-quick`; re-render the plots and this page with `make plots`.")
    m = environment(doc, results)
    status_table(doc, status, results)
    modes = {s.get("mode") for s in status.get("suites", {}).values() if s.get("status") == "ran"}
    if modes - {"full", "cluster"}:
        doc.p("**Scale:** %s. Quick and smoke runs use small sizes and few repetitions: read them"
              " as a check that the suite works, not as measurements." % ", ".join(
                  sorted(m for m in modes if m)))
    loads = [num(meta.get("loadavg")) for suite in ("exchange", "localsort", "sort", "e2e")
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
    readme_elsewhere(doc, results)
    doc.h(2, "Files")
    files = sorted(glob.glob(os.path.join(results, "*", "*.csv")))
    doc.p("Every CSV file starts with `# key: value` lines describing the machine, the build and"
          " the command, then one header line. Data: %s." % (", ".join(
              "`%s`" % os.path.relpath(f, results) for f in files) or "none"))
    doc.p("Exchange columns: `t_med`, `t_min`, `t_max` are over repetitions of the slowest"
          " rank's time; `t_fast_med` the median of the fastest rank's; `h_bytes` the largest"
          " bytes any rank sends to plus receives from others; `recv_imbalance` the largest"
          " receive volume over the mean; `moved_bytes`, `messages` summed over ranks;"
          " `valid` 1 when every key arrived intact; `ratio_med` the median over repetitions of"
          " the time over alltoallv's in the same repetition. Sort columns: phase times are the"
          " slowest"
          " rank's; `inmem_s` sums local_sort to finish; `bytes_per_key` is the peak RSS summed"
          " over ranks divided by n.")
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
    else:
        print("report.py: error: usage: report.py tables RESULTS OUTDIR | readme RESULTS",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""bench/xfit.py: the exchange cost models against the exchange benchmark (bench/run --suites xmodel).

For one set of sortex-xbench measurements (RESULTS/exchange/*.csv, the emulated clusters'
RESULTS/cluster*/exchange/*.csv) it

  1. asks sortex-sched for every measured case (pattern, volume, P) and every model what the
     exchange puts on its critical path (the CSV columns path_startups, path_rndv, path_bytes,
     copy_bytes, sync_rounds, cache_share): what the machine prices (exchange/machine.h);
  2. fits the machine's constants (alpha, beta, the cache's beta, the copies, the
     synchronisations; starting from the calibration's when sortex-sched --calibrate ran beside
     the measurements, else from scratch), then every model's four factors (start-ups, bytes,
     copies, synchronisations), by non-negative least squares on the relative error and a
     refinement of the log error, each measurement weighted alike;
  3. writes the machine file, and checks that sortex-sched's own prediction with it is the fit's
     (the C price and this script's agree to 1e-6);
  4. checks the fit out of sample: five folds of cases, each predicted by constants and factors
     fitted on the other four;
  5. times --exchange auto's choice: for every case whose every registered back-end was measured,
     the back-end the model predicts fastest, its measured time over the fastest measured
     (the regret), and the same for the default, alltoallv.

Pure Python (no numpy): the fits have at most seven unknowns.
"""

import concurrent.futures
import csv
import glob
import json
import math
import os
import re
import subprocess
import zlib

# xbench's back-end names -> the model sortex-sched prices them with (--exchange auto prices
# alltoallv with its first model, the linear one); Open MPI's forced algorithms are baselines.
MODEL_OF = {"alltoallv": "alltoallv-linear", "ompi-linear": "alltoallv-linear",
            "ompi-pairwise": "alltoallv-pairwise"}
BASELINES = ("ompi-linear", "ompi-pairwise")
# The machine's constants the fit may set, in the order of the features below.
GLOBALS = ["alpha", "beta", "beta_cache", "copy", "copy_cache", "sync", "switch_s"]
TERMS = ["startup", "byte", "copy", "sync"]
BAND = (0.67, 1.5)  # predicted within this of measured counts as right
FOLDS = 5
FACTOR_RANGE = (1 / 16.0, 16.0)


# ---- the data --------------------------------------------------------------------------------

def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def read_meta(csv_path):
    try:
        with open(os.path.splitext(csv_path)[0] + ".meta.json") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def set_rows(xdir):
    """Every measured row of the set in xdir, with its file, its environment and the case."""
    rows = []
    for path in sorted(glob.glob(os.path.join(xdir, "*.csv"))):
        name = os.path.basename(path)
        meta = read_meta(path)
        # Settings a launch ran with that the models follow (SORTEX_SCHED_LOOKAHEAD=1 of the
        # half-duplex set's stepwise file), as the description records them (job_env_NAME; in
        # files from before, only the variant's text named them).
        env = {k[len("job_env_"):]: v for k, v in meta.items() if k.startswith("job_env_")}
        env.update(re.findall(r"(SORTEX_[A-Z_]+)=(\w+)", meta.get("variant", "")))
        for r in read_csv(path):
            if r.get("valid", "1") != "1" or not r.get("t_med_s"):
                continue
            r["file"] = name
            r["env"] = env
            rows.append(r)
    return rows


def case_key(r):
    return (r["pattern"], r["param"], int(r["P"]), int(r["bytes_per_rank"]),
            tuple(sorted(r["env"].items())))


def structure(xdir):
    """The machine's structure for the set, from its files' descriptions: one node (shared
    memory) or a network of one rank a host, its cores and cache, half or full duplex."""
    meta = {}
    for path in sorted(glob.glob(os.path.join(xdir, "*.meta.json"))):
        with open(path) as f:
            meta = json.load(f)
        break
    nodes = int(meta.get("nodes", "1") or 1)
    cores = int(meta.get("cores", "2") or 2)
    m = re.search(r"L3 (\d+) (KiB|MiB)", meta.get("caches", ""))
    llc = int(m.group(1)) << (10 if m.group(2) == "KiB" else 20) if m else 0
    half = "half-duplex" in meta.get("launcher", "")
    shm = nodes <= 1
    rpn = int(meta.get("ranks_per_node", "1") or 1) if not shm else 1
    return {"shm": int(shm), "cores": cores, "llc_bytes": llc if shm else 0,
            "duplex": 1.0 if half else 0.0, "ranks_per_node": max(1, rpn),
            "eager_bytes": 4096 if shm else 65536}, meta


# ---- the machine file ------------------------------------------------------------------------

def read_machine(path):
    """A machine file's constants (name -> float), its origin and its factor lines."""
    consts, factors, origin = {}, {}, ""
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, value = line.partition(" ")
            if name == "origin":
                origin = value.strip()
            elif name == "factor":
                parts = value.split()
                factors[parts[0]] = dict(zip(TERMS, map(float, parts[1:5])))
            else:
                try:
                    consts[name] = float(value)
                except ValueError:
                    pass
    return consts, factors, origin


def write_machine(path, consts, factors, origin, comments):
    names = ["alpha", "beta", "beta_cache", "copy", "copy_cache", "sync", "switch_s", "duplex",
             "llc_bytes", "eager_bytes", "cores", "shm", "ranks_per_node"]
    ints = {"cores", "shm", "ranks_per_node"}
    lines = ["# " + c for c in comments] + ["origin " + origin]
    for n in names:
        v = consts[n]
        lines.append("%s %s" % (n, "%d" % int(v) if n in ints else "%.4g" % v))
    lines.append("# a back-end's model: factors on its start-ups, bytes, copies and "
                 "synchronising rounds (1: the closed form)")
    for model in sorted(factors):
        f = factors[model]
        lines.append("factor %s %s" % (model, " ".join("%.3g" % f[t] for t in TERMS)))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


# ---- sortex-sched ----------------------------------------------------------------------------

def sched_case(sched, machine, key):
    pattern, param, p, volume, env = key
    cmd = [sched, "--machine", machine, "--pattern", pattern + (":" + param if param else ""),
           "--ranks", str(p), "--volume", str(volume), "--csv"]
    e = dict(os.environ)
    e.pop("SORTEX_MACHINE", None)
    e.update(dict(env))
    out = subprocess.run(cmd, capture_output=True, text=True, env=e)
    if out.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), out.stderr.strip()[-300:]))
    return key, {r["algo"]: r for r in csv.DictReader(out.stdout.splitlines())}


def sched_all(sched, machine, keys, jobs=2):
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        return dict(ex.map(lambda k: sched_case(sched, machine, k), keys))


# ---- the price, as exchange/model.c computes it ------------------------------------------------

def features(r, model_row, st):
    """What the machine prices for one measured row: its terms in machine units."""
    c = float(model_row["cache_share"])
    p = int(r["P"])
    node = p if st["shm"] else st["ranks_per_node"]
    crowded = node > st["cores"]
    return {"S": float(model_row["path_startups"]) + float(model_row["path_rndv"]),
            "V": float(model_row["path_bytes"]), "K": float(model_row["copy_bytes"]),
            "R": float(model_row["sync_rounds"]), "c": c, "crowd": node / st["cores"] if crowded
            else 0.0}


def terms(x, g):
    """The four terms of the price at the machine's constants g (factors 1)."""
    sync = g["switch_s"] * x["crowd"] if x["crowd"] else g["sync"]
    return [g["alpha"] * x["S"], (x["c"] * g["beta_cache"] + (1 - x["c"]) * g["beta"]) * x["V"],
            (x["c"] * g["copy_cache"] + (1 - x["c"]) * g["copy"]) * x["K"], sync * x["R"]]


def price(x, g, f):
    return sum(fk * tk for fk, tk in zip((f[t] for t in TERMS), terms(x, g)))


def global_features(x):
    """The price's terms per unit of each global constant (linear in them)."""
    return [x["S"], (1 - x["c"]) * x["V"], x["c"] * x["V"], (1 - x["c"]) * x["K"],
            x["c"] * x["K"], 0.0 if x["crowd"] else x["R"], x["crowd"] * x["R"]]


# ---- fitting -----------------------------------------------------------------------------------

def _solve(a, b):
    n = len(a)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[piv][c]) < 1e-300:
            return None
        m[c], m[piv] = m[piv], m[c]
        for r in range(n):
            if r != c:
                k = m[r][c] / m[c][c]
                for j in range(c, n + 1):
                    m[r][j] -= k * m[c][j]
    return [m[i][n] / m[i][i] for i in range(n)]


def nnls(rows, target):
    """min sum (rows_i . x - target_i)^2 over x >= 0 (Lawson and Hanson's active set)."""
    n = len(rows[0])
    ata = [[sum(r[a] * r[b] for r in rows) for b in range(n)] for a in range(n)]
    atb = [sum(r[a] * t for r, t in zip(rows, target)) for a in range(n)]
    scale = max(1e-300, max(abs(v) for v in atb))
    x, active = [0.0] * n, set()
    for _ in range(4 * n + 10):
        grad = [atb[a] - sum(ata[a][b] * x[b] for b in range(n)) for a in range(n)]
        free = [a for a in range(n) if a not in active]
        if not free or max(grad[a] for a in free) <= 1e-12 * scale:
            break
        active.add(max(free, key=lambda a: grad[a]))
        while True:
            idx = sorted(active)
            z = _solve([[ata[a][b] for b in idx] for a in idx], [atb[a] for a in idx])
            if z is None:
                active.discard(idx[-1])
                break
            if all(v > 0 for v in z):
                x = [0.0] * n
                for a, v in zip(idx, z):
                    x[a] = v
                break
            step = min(x[a] / (x[a] - v) for a, v in zip(idx, z) if v <= 0)
            for a, v in zip(idx, z):
                x[a] += step * (v - x[a])
            active = {a for a in active if x[a] > 1e-300}
    return x


def log_loss(pred, meas, cap=0.5):
    """Squared log error, capped at a factor of e^0.5 = 1.65, a little beyond the band the
    predictions are judged by (1.5): a prediction further off is a miss however far, so one
    wild measurement does not pull a fit (with a cap of 0.7 the clusters' 90th percentile of
    auto's regret rose from 1.23 to 1.28; with 0.45 this node's from 1.24 to 1.30: the
    percentile rests on a few cases)."""
    if pred <= 0:
        return cap * cap
    return min(abs(math.log(pred / meas)), cap) ** 2


def refine(values, loss, lo=None, hi=None, prior=0.0):
    """Multiplicative coordinate descent on values (a list) to lower loss(values); prior > 0
    pulls each value toward its start (log distance squared)."""
    start = list(values)
    vals = list(values)

    def total(v):
        pen = sum(math.log(a / b) ** 2 for a, b in zip(v, start) if a > 0 and b > 0)
        return loss(v) + prior * pen

    best, step = total(vals), 1.6
    while step > 1.01:
        better = False
        for i in range(len(vals)):
            if vals[i] <= 0:
                continue
            for k in (step, 1 / step):
                old = vals[i]
                vals[i] = old * k
                if lo is not None:
                    vals[i] = min(max(vals[i], lo), hi)
                t = total(vals)
                if t < best - 1e-12:
                    best, better = t, True
                else:
                    vals[i] = old
        if not better:
            step = math.sqrt(step)
    return vals


def fit_globals(data, g0, calibrated=False):
    """The machine's constants from the data (every model's factors 1): by least squares, or,
    from a calibration's, by the log refinement alone, which moves them only as far as the
    measurements ask (a calibration taken in a busy moment is corrected, a good one kept)."""
    g = dict(g0)
    if not calibrated:
        rows = [[v / d["t"] for v in global_features(d["x"])] for d in data]
        theta = nnls(rows, [1.0] * len(data))
        for name, v in zip(GLOBALS, theta):
            if v > 0:
                g[name] = v
    ones = {t: 1.0 for t in TERMS}
    names = [n for n in GLOBALS if g[n] > 0]

    def loss(vals):
        gg = dict(g, **dict(zip(names, vals)))
        return sum(log_loss(price(d["x"], gg, ones), d["t"]) for d in data)

    g.update(zip(names, refine([g[n] for n in names], loss)))
    return g


def fit_factors(data, g):
    """Each model's four factors on the machine g: least squares, then the log refinement with
    a light pull toward 1 and within FACTOR_RANGE."""
    by_model = {}
    for d in data:
        by_model.setdefault(d["model"], []).append(d)
    factors = {}
    for model, dd in sorted(by_model.items()):
        t = [terms(d["x"], g) for d in dd]
        # A term that never reaches a twentieth of a prediction cannot be fitted: it keeps 1.
        used = [k for k in range(4)
                if any(row[k] > 0.05 * sum(row) for row in t if sum(row) > 0)]
        f = [1.0] * 4
        if used:
            theta = nnls([[row[k] / d["t"] for k in used] for row, d in zip(t, dd)], [1.0] * len(dd))
            for k, v in zip(used, theta):
                f[k] = min(max(v, FACTOR_RANGE[0]), FACTOR_RANGE[1]) if v > 0 else FACTOR_RANGE[0]

            def loss(vals, t=t, dd=dd, used=used):
                ff = list(f)
                for k, v in zip(used, vals):
                    ff[k] = v
                return sum(log_loss(sum(a * b for a, b in zip(ff, row)), d["t"])
                           for row, d in zip(t, dd))

            vals = refine([f[k] for k in used], loss, FACTOR_RANGE[0], FACTOR_RANGE[1], prior=0.05)
            for k, v in zip(used, vals):
                f[k] = v
        factors[model] = dict(zip(TERMS, f))
    return factors


def fold_of(d):
    return zlib.crc32(repr(d["key"]).encode()) % FOLDS


def sig(x, digits):
    """x rounded to @digits significant digits, as the machine file writes it."""
    return float("%.*g" % (digits, x))


def fit(data, g0, calibrated):
    g = fit_globals(data, g0, calibrated)
    g = {k: sig(v, 4) for k, v in g.items()}
    factors = fit_factors(data, g)
    return g, {m: {t: sig(v, 3) for t, v in f.items()} for m, f in factors.items()}


# ---- the whole set ---------------------------------------------------------------------------

def within(ratio):
    return BAND[0] <= ratio <= BAND[1]


def run(xdir, sched, machine_dir, log=print, jobs=2):
    """Fits and checks the models against the set in xdir. Returns a dict: the machine file
    written, the model rows (every measured row with its prediction), the auto rows (every case:
    auto's pick and its regret) and a summary."""
    rows = set_rows(xdir)
    if not rows:
        return None
    st, meta = structure(xdir)
    calibrated_path = os.path.join(xdir, "calibrated.txt")
    calibrated = os.path.exists(calibrated_path)
    if calibrated:
        consts, _, cal_origin = read_machine(calibrated_path)
        g0 = {n: consts.get(n, 0.0) for n in GLOBALS}
        st.update({k: consts[k] for k in ("shm", "cores", "llc_bytes", "duplex",
                                            "ranks_per_node", "eager_bytes") if k in consts})
    else:
        g0 = {"alpha": 1e-6, "beta": 1e-9, "beta_cache": 1e-10, "copy": 5e-11,
              "copy_cache": 2e-11, "sync": 1e-6, "switch_s": 1e-6}
    # 1. The critical paths: one sortex-sched run a case, every model, factors 1.
    os.makedirs(machine_dir, exist_ok=True)
    probe = os.path.join(machine_dir, "machine.txt")
    write_machine(probe, dict(st, **g0), {}, "structure of the set, before the fit", [])
    keys = sorted({case_key(r) for r in rows})
    log("xmodel: %s: %d rows, %d cases" % (os.path.relpath(xdir), len(rows), len(keys)))
    paths = sched_all(sched, probe, keys, jobs)
    data = []
    for r in rows:
        key = case_key(r)
        model = MODEL_OF.get(r["backend"], r["backend"])
        mr = paths[key].get(model)
        if mr is None:
            continue
        data.append({"r": r, "key": key, "model": model, "backend": r["backend"],
                     "t": float(r["t_med_s"]), "x": features(r, mr, st)})
    fit_data = [d for d in data if d["backend"] not in BASELINES]
    # 2. The fit on every case.
    g, factors = fit(fit_data, g0, calibrated)
    origin = ("%s: %s" % ("calibrated by sortex-sched --calibrate, refined on the exchange"
                          " benchmark" if calibrated else "fitted to the exchange benchmark",
                          cal_origin if calibrated else "%s, %s, %s" % (
                              meta.get("host", "?"), meta.get("cpu", "?"),
                              meta.get("launcher", "?"))) +
              "; back-end factors fitted by bench/run --suites xmodel")
    consts = dict(st, **g)
    machine = os.path.join(machine_dir, "machine.txt")
    write_machine(machine, consts, factors, origin, [
        "The machine of the exchange models for the measurements beside this file, written by",
        "bench/run --suites xmodel (bench/xfit.py): %s." % (
            "the calibration's constants refined, the back-ends' factors fitted" if calibrated else
            "no calibration ran with them, so the constants are fitted too"),
        "sortex-sched --machine THIS_FILE predicts with it; results/README.md says how well."])
    # 3. sortex-sched's own predictions with the file, which must be the fit's.
    check = sched_all(sched, machine, keys, jobs)
    worst = 0.0
    for d in data:
        d["pred"] = float(check[d["key"]][d["model"]]["predicted_seconds"])
        mine = price(d["x"], g, factors[d["model"]] if d["model"] in factors else
                     {t: 1.0 for t in TERMS})
        if d["backend"] not in BASELINES:
            worst = max(worst, abs(mine - d["pred"]) / max(d["pred"], 1e-300))
    if worst > 1e-3:
        raise RuntimeError("sortex-sched's price and the fit's differ by %.2g" % worst)
    # 4. Out of sample: five folds of cases.
    for k in range(FOLDS):
        train = [d for d in fit_data if fold_of(d) != k]
        gk, fk = fit(train, g0, calibrated)
        for d in data:
            if fold_of(d) == k:
                d["cv"] = price(d["x"], gk, fk.get(d["model"], {t: 1.0 for t in TERMS}))
    # 5. Auto's choice and its regret, case by case.
    registered = sorted({d["backend"] for d in fit_data})
    cases = {}
    for d in fit_data:
        cases.setdefault((d["r"]["file"],) + d["key"], {})[d["backend"]] = d
    auto = []
    for key, c in sorted(cases.items()):
        if len(c) < len(registered):
            continue
        best = min(c.values(), key=lambda d: d["t"])
        pick = min(c.values(), key=lambda d: d["pred"])
        cv_pick = min(c.values(), key=lambda d: d["cv"])
        ref = c.get("alltoallv")
        auto.append({"pick": pick, "cv_pick": cv_pick, "best": best, "ref": ref,
                     "noise": float(pick["r"]["t_min_s"]) <= best["t"]})
    return {"rows": data, "auto": auto, "machine": machine, "globals": g, "factors": factors,
            "structure": st, "calibrated": calibrated, "registered": registered,
            "meta": meta}


MODEL_COLUMNS = ["file", "backend", "model", "pattern", "param", "P", "bytes_per_rank", "reps",
                 "t_med_s", "t_min_s", "t_max_s", "predicted_s", "ratio", "cv_predicted_s",
                 "cv_ratio", "path_startups", "path_bytes", "copy_bytes", "sync_rounds"]
MODEL_DOCS = {
    "file": "the exchange benchmark's file of the measurement",
    "backend": "exchange back-end (ompi-linear and ompi-pairwise: alltoallv with Open MPI's "
               "algorithm forced, priced by alltoallv's models)",
    "model": "the cost model that prices it (sortex-sched --algos help)",
    "pattern": "count matrix", "param": "its parameter", "P": "ranks",
    "bytes_per_rank": "bytes each rank sends, its own block included",
    "reps": "repetitions of the measurement",
    "t_med_s": "measured: median over repetitions of the slowest rank, seconds",
    "t_min_s": "measured: fastest repetition, seconds",
    "t_max_s": "measured: slowest repetition, seconds",
    "predicted_s": "sortex-sched's predicted_seconds with the machine file beside this one "
                   "(constants and factors fitted on every case)",
    "ratio": "t_med_s / predicted_s; right within 0.67..1.5",
    "cv_predicted_s": "the prediction with constants and factors fitted without this case's "
                      "fold (five folds of cases): out of sample",
    "cv_ratio": "t_med_s / cv_predicted_s",
    "path_startups": "start-ups on the critical path (rendezvous included)",
    "path_bytes": "bytes on the critical path", "copy_bytes": "bytes copied locally on it",
    "sync_rounds": "rounds that synchronise the ranks",
}
AUTO_COLUMNS = ["file", "pattern", "param", "P", "bytes_per_rank", "auto", "auto_predicted_s",
                "auto_s", "best", "best_s", "regret", "alltoallv_s", "alltoallv_regret",
                "within_noise", "cv_auto", "cv_regret"]
AUTO_DOCS = {
    "file": "the exchange benchmark's file", "pattern": "count matrix", "param": "its parameter",
    "P": "ranks", "bytes_per_rank": "bytes each rank sends, own block included",
    "auto": "the back-end --exchange auto picks: the least predicted_s of the registered ones",
    "auto_predicted_s": "its predicted time, seconds", "auto_s": "its measured time (median)",
    "best": "the back-end measured fastest (median)", "best_s": "its measured time",
    "regret": "auto_s / best_s (1: auto picked the fastest)",
    "alltoallv_s": "the default's measured time", "alltoallv_regret": "alltoallv_s / best_s",
    "within_noise": "yes when the pick's fastest repetition beat the best's median: the two "
                    "are not told apart by the measurement (the results page's rule)",
    "cv_auto": "auto's pick with the out-of-sample predictions",
    "cv_regret": "its measured time over best_s",
}


def model_rows(res):
    out = []
    for d in res["rows"]:
        r = d["r"]
        out.append({"file": r["file"], "backend": d["backend"], "model": d["model"],
                    "pattern": r["pattern"], "param": r["param"], "P": r["P"],
                    "bytes_per_rank": r["bytes_per_rank"], "reps": r.get("reps", ""),
                    "t_med_s": r["t_med_s"], "t_min_s": r["t_min_s"], "t_max_s": r["t_max_s"],
                    "predicted_s": "%.6g" % d["pred"], "ratio": "%.4f" % (d["t"] / d["pred"]),
                    "cv_predicted_s": "%.6g" % d["cv"], "cv_ratio": "%.4f" % (d["t"] / d["cv"]),
                    "path_startups": "%g" % d["x"]["S"], "path_bytes": "%g" % d["x"]["V"],
                    "copy_bytes": "%g" % d["x"]["K"], "sync_rounds": "%g" % d["x"]["R"]})
    return out


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2 if xs else float("nan")


def summary(res):
    """The figures of the goals: predictions within BAND (all, and out of sample), auto's and
    alltoallv's regret, median and 90th percentile, over the registered back-ends' cases."""
    reg = [d for d in res["rows"] if d["backend"] not in BASELINES]
    base = [d for d in res["rows"] if d["backend"] in BASELINES]
    auto = [a["pick"]["t"] / a["best"]["t"] for a in res["auto"]]
    cv = [a["cv_pick"]["t"] / a["best"]["t"] for a in res["auto"]]
    ref = [a["ref"]["t"] / a["best"]["t"] for a in res["auto"] if a["ref"]]
    s = {"cases": len(reg), "within": sum(within(d["t"] / d["pred"]) for d in reg),
         "within_cv": sum(within(d["t"] / d["cv"]) for d in reg),
         "baseline_cases": len(base), "baseline_within": sum(within(d["t"] / d["pred"])
                                                            for d in base),
         "auto_cases": len(auto), "regret_median": median(auto),
         "regret_p90": quantile(auto, 0.9), "regret_max": max(auto) if auto else float("nan"),
         "cv_regret_median": median(cv), "cv_regret_p90": quantile(cv, 0.9),
         "alltoallv_median": median(ref), "alltoallv_p90": quantile(ref, 0.9),
         "noise": sum(1 for a in res["auto"] if a["noise"])}
    s = {k: round(v, 4) if isinstance(v, float) else v for k, v in s.items()}
    s["line"] = ("%d/%d predicted within %.2f..%.2f (%d out of sample); auto's regret median "
                 "%.3f, 90%% %.3f; alltoallv's %.3f, %.3f" % (
                     s["within"], s["cases"], BAND[0], BAND[1], s["within_cv"],
                     s["regret_median"], s["regret_p90"], s["alltoallv_median"],
                     s["alltoallv_p90"]))
    return s


def auto_rows(res):
    out = []
    for a in res["auto"]:
        b, p, ref, cvp = a["best"], a["pick"], a["ref"], a["cv_pick"]
        r = b["r"]
        out.append({"file": r["file"], "pattern": r["pattern"], "param": r["param"], "P": r["P"],
                    "bytes_per_rank": r["bytes_per_rank"], "auto": p["backend"],
                    "auto_predicted_s": "%.6g" % p["pred"], "auto_s": "%.6g" % p["t"],
                    "best": b["backend"], "best_s": "%.6g" % b["t"],
                    "regret": "%.4f" % (p["t"] / b["t"]),
                    "alltoallv_s": "%.6g" % ref["t"] if ref else "",
                    "alltoallv_regret": "%.4f" % (ref["t"] / b["t"]) if ref else "",
                    "within_noise": "yes" if a["noise"] else "no", "cv_auto": cvp["backend"],
                    "cv_regret": "%.4f" % (cvp["t"] / b["t"])})
    return out

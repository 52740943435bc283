"""tests/python/sortex_cases.py: the Python module's cases, run on every rank of an MPI job by
tests/63-python.bats (mpirun -np P python3 tests/python/sortex_cases.py [CASE...]).

Each case runs on every rank; the ranks then agree on the outcome, and rank 0 prints "ok: CASE"
or "FAILED: CASE" with every failing rank's reason, and at the end "cases: N, failed: F". Exit
status 1 when a case failed.

Results are checked against an oracle that shares nothing with sortex: Python's own stable
sorted() over the gathered input, with keys written from the definition of each order (for
floats IEEE 754's totalOrder, which is the order the sortex program documents: negative NaNs
first, -0 before +0, positive NaNs last, NaNs of one sign by payload).
"""

import os
import sys
import time
import traceback

import numpy as np
from mpi4py import MPI

import sortex

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
CASES = []


def case(f):
    CASES.append(f)
    return f


# ---- the oracle ----------------------------------------------------------------------------------

def float_key(x):
    """IEEE 754 totalOrder of one float (numpy scalar) as a Python sort key."""
    if np.isnan(x):
        size = x.dtype.itemsize
        if x.dtype.kind == "f" and size in (2, 4, 8):
            bits = int(np.array(x).view("u%d" % size))
        else:
            bits = 0
        return (0, -bits) if np.signbit(x) else (2, bits)
    return (1, x, 0 if np.signbit(x) else 1)


def elem_key(x, dt):
    if dt.names:  # a nested structure: its fields in order
        return tuple(elem_key(x[f], dt.fields[f][0]) for f in dt.names)
    if dt.kind == "f":
        return float_key(x)
    if dt.kind in "biu":
        return int(x)
    return x  # bytes and str compare as Python's, by code unit


def oracle(values, order=None):
    """Stable positions of the gathered values in sorted order."""
    dt = values.dtype
    if dt.names:
        names = [order] if isinstance(order, str) else (order or list(dt.names))
        keys = [tuple(elem_key(v[f], dt.fields[f][0]) for f in names) for v in values]
    else:
        keys = [elem_key(v, dt) for v in values]
    return np.array(sorted(range(len(values)), key=lambda i: keys[i]), dtype=np.int64)


def gathered(x):
    parts = comm.allgather(x)
    return np.concatenate(parts) if parts else x


def same_bytes(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check_sorted(a, out, order=None, eps=0.1):
    """out (this rank's result) is this rank's slice of the stable sort of a (everyone's)."""
    whole, got = gathered(a), gathered(out)
    want = whole[oracle(whole, order)]
    assert out.dtype == a.dtype, (out.dtype, a.dtype)
    assert same_bytes(got, want), "not the stable sort:\n%s\n%s" % (got[:20], want[:20])
    bound = (1 + eps) * len(whole) / size + size
    assert len(out) <= bound, "rank %d holds %d > %.1f" % (rank, len(out), bound)


def check_argsort(a, idx, order=None):
    whole, got = gathered(a), gathered(idx)
    assert idx.dtype == np.int64, idx.dtype
    want = oracle(whole, order)
    assert np.array_equal(got, want), "not the stable order:\n%s\n%s" % (got[:20], want[:20])


# ---- inputs --------------------------------------------------------------------------------------

def my_count(base=300):
    """Uneven sizes: rank 1 holds nothing, the others different counts."""
    return 0 if rank == 1 else base + 97 * rank


def rng(salt=0):
    return np.random.default_rng(1000 * salt + rank)


def special_floats(dt):
    """Every class of float of dtype dt: signed zeros, infinities, denormals, extremes, NaNs of
    both signs and several payloads (built from bits)."""
    dt = np.dtype(dt)
    info = np.finfo(dt)
    vals = [0.0, -0.0, np.inf, -np.inf, info.tiny, -info.tiny, info.max, -info.max, 1.0, -1.0,
            info.smallest_subnormal if hasattr(info, "smallest_subnormal") else info.tiny / 2]
    out = np.array(vals, dtype=dt)
    if dt.itemsize in (2, 4, 8):
        w = 8 * dt.itemsize
        exp_all = ((1 << (w - 1)) - 1) ^ ((1 << info.nmant) - 1)  # exponent all ones
        sign = 1 << (w - 1)
        nans = [exp_all | 1, exp_all | (1 << (info.nmant - 1)), exp_all | 5,
                sign | exp_all | 1, sign | exp_all | (1 << (info.nmant - 1)) | 3]
        out = np.concatenate([out, np.array(nans, dtype="u%d" % dt.itemsize).view(dt)])
    else:
        out = np.concatenate([out, np.array([np.nan, -np.nan], dtype=dt)])
    return out


def numbers(dt, n, salt=0):
    """n numbers of dtype dt with duplicates, extremes and (floats) every special value."""
    dt = np.dtype(dt)
    g = rng(salt)
    if dt.kind == "b":
        return g.integers(0, 2, n).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = g.integers(info.min, info.max, n, dtype=dt.newbyteorder("="), endpoint=True)
        v[: n // 3] = g.integers(0, 8, n // 3)  # duplicates
        if n > 4:
            v[-2:] = [info.min, info.max]
        return v.astype(dt)
    v = (g.standard_normal(n) * 10.0 ** g.integers(-3, 4, n)).astype(dt)
    v[: n // 4] = np.round(v[: n // 4])  # duplicates
    sp = special_floats(dt)
    k = min(len(sp), n)
    v[n - k:] = sp[:k] if rank % 2 == 0 else sp[::-1][:k]
    return v


DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64, np.longdouble, np.bool_,
          ">i4", ">u8", ">f8", ">f4", "S5", "U3"]


def strings(dt, n, salt=0):
    g = rng(salt)
    letters = np.array(list("abcz\u00e9\u4e2d" if np.dtype(dt).kind == "U" else "abcz"))
    width = np.dtype(dt).itemsize // (4 if np.dtype(dt).kind == "U" else 1)
    return np.array(["".join(g.choice(letters, g.integers(0, width + 1))) for _ in range(n)],
                    dtype=dt)


def values(dt, n, salt=0):
    return strings(dt, n, salt) if np.dtype(dt).kind in "SU" else numbers(dt, n, salt)


# ---- cases ---------------------------------------------------------------------------------------

@case
def every_dtype_sorts_and_argsorts():
    for dt in DTYPES:
        a = values(dt, my_count(), salt=1)
        st = {}
        s = sortex.sort(a, stats=st)
        check_sorted(a, s)
        assert st["n_total"] == comm.allreduce(len(a)) and st["n_out"] == len(s), st
        check_argsort(a, sortex.argsort(a))


@case
def every_backend_sorts_and_argsorts():
    a = numbers(np.int32, my_count(2000), salt=2)
    names = sortex.exchanges()
    assert len(names) >= 9 and names[0] == "alltoallv", names
    for name in names + ["auto"]:
        st = {}
        check_sorted(a, sortex.sort(a, exchange=name, stats=st))
        assert st["exchange"] == name or name == "auto", (name, st["exchange"])
        check_argsort(a, sortex.argsort(a, exchange=name))


@case
def empty_and_tiny_inputs():
    for counts in ([0] * size, [1 if r == size - 1 else 0 for r in range(size)],
                   [r % 2 for r in range(size)]):
        a = numbers(np.float64, counts[rank], salt=3)
        check_sorted(a, sortex.sort(a))
        check_argsort(a, sortex.argsort(a))
        a = strings("S3", counts[rank], salt=3)
        check_sorted(a, sortex.sort(a))


@case
def options_reach_the_library():
    a = numbers(np.uint64, my_count(3000), salt=4)
    for opts in ({"balance": "exact"}, {"balance": "eps", "epsilon": 0.05},
                 {"balance": "sample", "oversample": 64}, {"finish": "sort"},
                 {"finish": "merge"}, {"threads": 1}, {"check": True}):
        st = {}
        check_sorted(a, sortex.sort(a, stats=st, **opts), eps=opts.get("epsilon", 0.1))
        if "balance" in opts:
            assert st["balance"] == opts["balance"], st
        if "threads" in opts:
            assert st["threads"] == 1, st
        if "check" in opts:
            assert st["check"] == "passed", st
    st = {}
    sortex.sort(a, balance="exact", stats=st)
    n = comm.allreduce(len(a))
    assert st["n_out"] in (n // size, -(-n // size)), st
    # Two levels of groups, with the final shift to exact shares; a level's figures each.
    st = {}
    check_sorted(a, sortex.sort(a, levels=2, balance="exact", stats=st))
    assert st["levels"] in (1, 2) and len(st["level"]) == st["levels"], st
    assert st["n_out"] in (n // size, -(-n // size)), st
    for bad in (0, 5, "two"):
        try:
            sortex.sort(a, levels=bad)
        except (ValueError, TypeError) as e:
            assert "levels" in str(e), e
        else:
            raise AssertionError("levels=%r was accepted" % (bad,))


@case
def structured_records_by_their_fields():
    dt = np.dtype([("id", "<i4"), ("score", "<f8"), ("tag", "S3"), ("n", ">u2"),
                   ("pos", [("x", "<i2"), ("y", "<f4")])])
    n = my_count(500)
    g = rng(5)
    a = np.zeros(n, dt)
    a["id"] = g.integers(0, 5, n)  # many ties: stability shows
    a["score"] = g.choice([-0.0, 0.0, 1.5, np.nan, -np.inf], n)
    a["tag"] = g.choice([b"a", b"ab", b"b", b""], n)
    a["n"] = g.integers(0, 3, n)
    a["pos"]["x"] = g.integers(-2, 2, n)
    a["pos"]["y"] = g.integers(0, 2, n)
    a["n"] = np.arange(n) + 1000 * rank  # the payload that shows where each element went
    # Single and several fields, all of them (None), and a nested structure: its fields.
    for order in ("score", ["tag", "id"], ["id", "score"], None, ["pos", "tag"]):
        check_sorted(a, sortex.sort(a, order=order), order=order)
        check_argsort(a, sortex.argsort(a, order=order), order=order)


@case
def argsort_packed_words_fixed_up_and_records():
    """The three ways argsort takes for 64-bit keys: positions beside the key's high bits with
    ties fixed up, a tie group across a rank boundary, and records when ties are many."""
    n = my_count(4000)
    g = rng(6)
    # Keys over the whole range: the words keep high bits, rare ties.
    a = g.integers(0, 2**64 - 1, n, dtype=np.uint64)
    st = {}
    check_argsort(a, sortex.argsort(a, stats=st))
    assert "packed words" in st["python"]["path"], st["python"]
    # A group of keys tied in their high bits in the middle of the order: on 2 and 4 ranks the
    # middle is a rank boundary.
    b = a.copy()
    k = n // 10
    b[:k] = np.uint64(2**63) + g.integers(0, 64, k, dtype=np.uint64)
    check_argsort(b, sortex.argsort(b, stats=st))
    assert "fixed up" in st["python"]["path"], st["python"]
    assert st["python"]["tied_elements"] >= comm.allreduce(k), st["python"]
    assert (st["python"]["spanning_elements"] > 0) == (size % 2 == 0), st["python"]
    # Few distinct keys far apart: most elements tie in their high bits, records sort them.
    c = g.choice(np.array([1, 2**40 + 3, 2**63 + 5, 2**64 - 1], dtype=np.uint64), n)
    c[: n // 2] += g.integers(0, 8, n // 2, dtype=np.uint64)
    check_argsort(c, sortex.argsort(c, stats=st))
    assert "records" in st["python"]["path"], st["python"]
    # Signed and float keys take the same words.
    for dt in (np.int64, np.float64):
        d = numbers(dt, n, salt=7)
        check_argsort(d, sortex.argsort(d))


@case
def tied_words_are_found_with_any_number_of_position_bits():
    """argsort's search for words whose high bits tie, both ways: through the words' upper
    halves (up to 32 position bits) and whole (more), against a plain comparison."""
    g = rng(15)
    for bits in (7, 20, 32, 33, 40):
        w = np.sort(np.concatenate([g.integers(0, 2**64 - 1, 3000, dtype=np.uint64),
                                    np.uint64(2**62) + g.integers(0, 2**bits, 50,
                                                                  dtype=np.uint64)]))
        want = [i for i in range(len(w) - 1) if int(w[i]) >> bits == int(w[i + 1]) >> bits]
        got = sortex._tied(w, bits)
        assert want and list(got) == want, (bits, len(want), len(got))


@case
def out_sets_each_ranks_share():
    a = numbers(np.int64, my_count(1000), salt=8)
    n = comm.allreduce(len(a))
    whole = gathered(a)
    want = whole[oracle(whole)]
    shares = ([n if r == 0 else 0 for r in range(size)],
              [n if r == size - 1 else 0 for r in range(size)],
              [n // size + (1 if r < n % size else 0) for r in range(size)],
              [(n // (2 * size)) * (r + 1) for r in range(size)])
    for share in shares:
        share[-1] += n - sum(share)
        out = np.full(share[rank], -1, np.int64)
        got = sortex.sort(a, out=out)
        assert got is out
        assert same_bytes(gathered(out), want)
    # Records move through the same step.
    s = strings("U4", my_count(100), salt=8)
    m = comm.allreduce(len(s))
    out = np.empty(m if rank == 0 else 0, s.dtype)
    sortex.sort(s, out=out)
    if rank == 0:
        w = gathered(s)
        assert same_bytes(out, w[oracle(w)])
    else:
        gathered(s)


def raises_everywhere(kind, text, f, *args, **kw):
    """f raises kind with text in its message, with the same message on every rank."""
    try:
        f(*args, **kw)
    except kind as e:
        msg = str(e)
    else:
        raise AssertionError("no %s from %s" % (kind.__name__, f.__name__))
    assert text in msg, (text, msg)
    msgs = comm.allgather(msg)
    assert len(set(msgs)) == 1, msgs
    return msg


@case
def wrong_arguments_raise_on_every_rank():
    a = numbers(np.int32, my_count(), salt=9)
    raises_everywhere(TypeError, "cannot sort", sortex.sort, a.astype(np.complex128))
    raises_everywhere(ValueError, "1-D", sortex.sort, np.zeros((2, 2)))
    raises_everywhere(ValueError, "has none", sortex.sort, a, order="x")
    raises_everywhere(ValueError, "unknown exchange", sortex.sort, a, exchange="nope")
    raises_everywhere(TypeError, "unexpected option", sortex.argsort, a, colour=1)
    raises_everywhere(ValueError, "balance must be", sortex.sort, a, balance="perfect")
    raises_everywhere(TypeError, "threads must be an integer", sortex.sort, a, threads=1.5)
    rec = np.zeros(3, [("k", "<i4"), ("v", "c16")])
    raises_everywhere(ValueError, "no field 'z'", sortex.sort, rec, order=["k", "z"])
    raises_everywhere(TypeError, "cannot sort", sortex.sort, rec, order="v")
    # One rank's mistake is every rank's error, named by its rank.
    msg = raises_everywhere(TypeError, "rank %d:" % (size - 1), sortex.sort,
                            a.astype(np.complex64) if rank == size - 1 else a)
    if size > 1:
        raises_everywhere(ValueError, "the ranks disagree", sortex.sort,
                          a.astype(np.int64) if rank == 0 else a)
    bad = np.empty(len(a) + (1 if rank == 0 else 0), a.dtype)
    raises_everywhere(ValueError, "lengths of out add up to", sortex.sort, a, out=bad)
    raises_everywhere(TypeError, "dtype of a", sortex.sort, a, out=np.empty(len(a), np.int64))
    # The process goes on: the next sort works.
    check_sorted(a, sortex.sort(a))
    del msg


@case
def library_failures_raise_its_message():
    a = numbers(np.uint64, my_count(5000), salt=10)
    e = raises_everywhere(sortex.OutOfMemory, "exceed --mem-limit", sortex.sort, a,
                          mem_limit=1000)
    e2 = raises_everywhere(MemoryError, "exceed --mem-limit", sortex.argsort, a, mem_limit=1000)
    # With the progress reports, which go to stderr as they come, the line is still kept.
    raises_everywhere(sortex.OutOfMemory, "exceed --mem-limit", sortex.sort, a, mem_limit=1000,
                      progress=True)
    try:
        sortex.sort(a, mem_limit=1000)
    except sortex.Error as x:
        assert x.code == -3, x.code
    check_sorted(a, sortex.sort(a))
    del e, e2


@case
def sort_file_sorts_files_and_reports_errors():
    d = os.environ["CASES_TMPDIR"]
    src = os.path.join(d, "in.bin")
    if rank == 0:
        numbers(np.float64, 5000, salt=11).tofile(src)
    comm.Barrier()
    out = os.path.join(d, "out.bin")
    st = sortex.sort_file(src, out, format="f64")
    assert st["n_total"] == 5000, st
    whole = np.fromfile(src, "<f8")
    assert same_bytes(np.fromfile(out, "<f8"), whole[oracle(whole)])
    st2 = {}
    sortex.sort_file(src, out + "2", format=np.float64, io="root", exchange="grid", stats=st2)
    assert st2["exchange"] == "grid", st2
    assert same_bytes(np.fromfile(out + "2", "<f8"), whole[oracle(whole)])
    raises_everywhere(sortex.UsageError, os.path.join(d, "missing"), sortex.sort_file,
                      os.path.join(d, "missing"), out)
    raises_everywhere(ValueError, "unknown format", sortex.sort_file, src, out, format="u32")
    raises_everywhere(ValueError, "not a record layout", sortex.sort_file, src, out,
                      format=(8, 4, 8))
    if rank == 0:
        with open(os.path.join(d, "odd.bin"), "wb") as f:
            f.write(b"x" * 13)
    comm.Barrier()
    raises_everywhere(sortex.UsageError, "multiple of", sortex.sort_file,
                      os.path.join(d, "odd.bin"), out)


@case
def sort_file_goes_external_when_the_library_picks_it():
    d = os.environ["CASES_TMPDIR"]
    src, out = os.path.join(d, "ext-in.bin"), os.path.join(d, "ext-out.bin")
    temp = os.path.join(d, "temp-%d" % rank)
    os.makedirs(temp, exist_ok=True)
    if rank == 0:
        numbers(np.int64, 60000, salt=15).tofile(src)
    comm.Barrier()
    whole = np.fromfile(src, "<i8")
    want = whole[oracle(whole)]
    # Each rank's share beyond mem_limit: the library sorts through temporary files, in each
    # rank's own directory (temp_dirs and mem_limit are each rank's).
    st = sortex.sort_file(src, out, format="i64", mem_limit=(64 << 10) * (rank + 1),
                          temp_dirs=[temp])
    assert st["external"] and st["mem_source"] == "--mem-limit", st
    assert st["passes"][0]["bytes_written"] > 0 and st["phases"]["distribute"] > 0, st
    assert same_bytes(np.fromfile(out, "<i8"), want)
    assert os.listdir(temp) == [], os.listdir(temp)
    # Without a limit the share fits the node's memory: in memory.
    st = sortex.sort_file(src, out, format="i64")
    assert not st["external"] and st["passes"][0]["bytes_written"] == 0, st
    assert same_bytes(np.fromfile(out, "<i8"), want)
    st = sortex.sort_file(src, out, format="i64", external="always")
    assert st["external"], st
    assert same_bytes(np.fromfile(out, "<i8"), want)
    raises_everywhere(sortex.OutOfMemory, "exceed --mem-limit", sortex.sort_file, src, out,
                      format="i64", mem_limit=64 << 10, external="never")
    raises_everywhere(sortex.UsageError, "temporary directory does not exist", sortex.sort_file,
                      src, out, external="always", temp_dirs=os.path.join(d, "none"))
    raises_everywhere(ValueError, "external must be", sortex.sort_file, src, out,
                      external="sometimes")
    raises_everywhere(TypeError, "temp_dirs must be", sortex.sort_file, src, out, temp_dirs=3)
    assert same_bytes(np.fromfile(out, "<i8"), want)


@case
def stats_describe_the_call():
    a = numbers(np.float32, my_count(2000), salt=12)
    st = {}
    sortex.sort(a, stats=st)
    for k in ("phases", "total_seconds", "n_total", "n_in", "n_out", "imbalance", "threads",
              "exchange", "exchange_stats", "finish", "peak_rss_kib", "python"):
        assert k in st, k
    assert set(st["phases"]) == {"read", "local_sort", "sample", "splitters", "bucket",
                                 "exchange", "finish", "write", "check", "distribute",
                                 "sort_buckets"}, st["phases"]
    assert not st["external"] and st["phases"]["distribute"] == 0, st
    assert st["n_in"] == len(a) and st["exchange"] == "alltoallv", st
    assert st["python"]["path"].startswith("64-bit keys (u64, from float32"), st["python"]
    assert st["python"]["total_s"] > 0, st["python"]
    assert sortex.version() == sortex.__version__


# Cases for a job started with a test hook set (read once per process).

def injected_failure():
    """SORTEX_FAIL=exchange:1 set: the sort fails after the exchange on rank 1."""
    a = numbers(np.int64, my_count(), salt=13)
    e = raises_everywhere(sortex.Error, "injected failure", sortex.sort, a)
    assert "rank 1: exchange" in e, e


def corrupted_check():
    """SORTEX_CORRUPT=order:0 set: check=True catches it, and without check nothing fails."""
    a = numbers(np.uint64, 1000, salt=14)
    raises_everywhere(sortex.CheckFailed, "", sortex.sort, a, check=True)


HOOKED = {f.__name__: f for f in (injected_failure, corrupted_check)}


def main():
    names = sys.argv[1:]
    todo = [HOOKED[n] if n in HOOKED else next(f for f in CASES if f.__name__ == n)
            for n in names] if names else CASES
    failed = 0
    for f in todo:
        t = time.perf_counter()
        try:
            f()
            err = None
        except Exception as e:  # every failure is reported, then agreed
            err = "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc(limit=4))
        errs = comm.allgather(err)
        bad = [(r, e) for r, e in enumerate(errs) if e]
        failed += bool(bad)
        if rank == 0:
            print("%s: %s (%.2f s)" % ("FAILED" if bad else "ok", f.__name__,
                                        time.perf_counter() - t), flush=True)
            for r, e in bad:
                print("  rank %d: %s" % (r, e), flush=True)
    if rank == 0:
        print("cases: %d, failed: %d" % (len(todo), failed), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

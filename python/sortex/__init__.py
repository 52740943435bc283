"""sortex: the sortex parallel sample sort for numpy arrays distributed over MPI ranks.

Every rank of a communicator (mpi4py's) holds a 1-D numpy array; together they are one array,
rank 0's elements first, then rank 1's, and so on. The functions are collective: every rank of
the communicator calls them, with the same dtype and options.

    from mpi4py import MPI
    import numpy as np, sortex
    a = np.random.default_rng(MPI.COMM_WORLD.rank).integers(0, 1000, 10**6)
    s = sortex.sort(a)         # this rank's slice of the globally sorted array
    i = sortex.argsort(a)      # global positions of those elements in the input

sort(a, comm=None, order=None, out=None, exchange='alltoallv', **options)
    This rank's slice of the stable sort of the distributed array: rank 0 the smallest elements,
    every rank about n/P of them (at most (1 + epsilon) n/P + P, as the sortex program), or
    len(out) of them when out is given. Every integer and floating dtype (floats in the total
    order of the program: -0 before +0, NaNs at the ends by their sign), bool, bytes, str, and
    structured arrays sorted by the fields named in order (all fields in dtype order when order
    is None), the other fields travelling with them.
argsort(a, comm=None, order=None, exchange='alltoallv', **options)
    int64 global positions (in the ranks' arrays concatenated in rank order) of this rank's
    slice of the stable sorted order: a_all[argsort(a)] is sort(a), everywhere.
sort_file(input, output, format='u64', comm=None, **options)
    A binary file of keys or records sorted into another, as the sortex program does: in
    memory when every rank's share fits its memory, else externally, in two passes through
    temporary files (the library decides, as the program's --external auto); returns this
    rank's statistics.

Options (every function): threads, epsilon, balance ('auto', 'eps', 'exact', 'sample'),
oversample, finish ('auto', 'merge', 'sort'), levels ('auto' or 1 to 4: the program's
--levels, the sample sort in that many levels of groups), mem_limit (bytes of buffers a rank may use: in
memory a larger sort is refused with OutOfMemory; for sort_file also what decides the external
sort, by default a share of the node's memory), check (prove the result in the job), progress
(rank 0 reports on stderr), stats (a dict the call fills with this rank's figures); sort_file
also exchange, io ('mpiio', 'root', 'rootv'), sync, external ('auto', 'always', 'never': the
program's --external) and temp_dirs (a directory or a list of them for the external sort's
temporary files: the program's --temp-dir). exchange is a back-end name (exchanges() lists
them) or 'auto'. Every rank passes the same options, except threads, finish, mem_limit and
temp_dirs, which are each rank's own (its cores, its memory, its disks).

Errors raise on every rank with the same message: TypeError and ValueError for wrong arguments
(checked on every rank and agreed before anything moves), and a sortex.Error for a failure of the
library, carrying its one-line message and its code: UsageError (also a ValueError), FileError
(an OSError), OutOfMemory (a MemoryError), CheckFailed, MPIError.
"""

import ctypes
import os
import sys
import time
import weakref

import numpy as np
from mpi4py import MPI

from sortex import _lib
from sortex._keys import KeyPlan, ordered_u64

__version__ = _lib.VERSION
__all__ = ["sort", "argsort", "sort_file", "exchanges", "version", "Error", "UsageError",
           "FileError", "OutOfMemory", "CheckFailed", "MPIError"]


# ---- errors --------------------------------------------------------------------------------------

class Error(RuntimeError):
    """A failed sort: str() is the library's one-line message, .code its error code."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


class UsageError(Error, ValueError):
    """The arguments or the input are wrong (SORTEX_EUSAGE; the program's exit 2)."""


class FileError(Error, OSError):
    """Reading or writing a file failed (SORTEX_EIO)."""


class OutOfMemory(Error, MemoryError):
    """An allocation failed or mem_limit refused it (SORTEX_ENOMEM)."""


class MPIError(Error):
    """An MPI call failed (SORTEX_EMPI)."""


class CheckFailed(Error):
    """check=True found the result wrong (SORTEX_ECHECK); nothing was written."""


_ERRORS = {_lib.EUSAGE: (UsageError, "usage"), _lib.EIO: (FileError, "I/O error"),
           _lib.ENOMEM: (OutOfMemory, "out of memory"), _lib.EMPI: (MPIError, "MPI failure"),
           _lib.EINJECT: (Error, "injected failure"), _lib.ECHECK: (CheckFailed, "check failed")}

# Exceptions the ranks can agree on by name (what a rank's local check raises).
_LOCAL = {e.__name__: e for e in (TypeError, ValueError, MemoryError, OverflowError)}


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.VERSION


def exchanges():
    """The exchange back-ends the library has, the default first."""
    return _lib.exchange_names()


# ---- agreement -----------------------------------------------------------------------------------

# What launchers tell their processes about the job's size: Open MPI's mpirun, MPICH's Hydra
# (and other PMI process managers), Slurm's srun.
_LAUNCH_SIZES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS")


def _comm_of(comm):
    """The communicator to sort over (MPI.COMM_WORLD for None), once MPI is usable."""
    if not MPI.Is_initialized() or MPI.Is_finalized():
        raise RuntimeError("sortex: MPI is not initialised (or already finalised)")
    if MPI.COMM_WORLD.size == 1:
        # A launcher of another MPI than mpi4py's starts unrelated one-rank jobs.
        for var in _LAUNCH_SIZES:
            v = os.environ.get(var, "")
            if v.isdigit() and int(v) > 1:
                raise RuntimeError(
                    "sortex: this process is one of %s the launcher started (%s), but MPI "
                    "sees a job of one: the launcher is not for mpi4py's MPI (%s)" % (
                        v, var, MPI.Get_library_version().split(",")[0].strip()))
    comm = MPI.COMM_WORLD if comm is None else comm
    if not isinstance(comm, MPI.Intracomm) or comm == MPI.COMM_NULL:
        raise TypeError("comm must be an mpi4py intracommunicator, not %r" % (comm,))
    if MPI.Query_thread() < MPI.THREAD_SERIALIZED and not MPI.Is_thread_main():
        raise RuntimeError("sortex: MPI is initialised %s and this is not the main thread"
                           % ("MPI_THREAD_FUNNELED" if MPI.Query_thread() ==
                              MPI.THREAD_FUNNELED else "MPI_THREAD_SINGLE"))
    return comm


def _failure(exc):
    return None if exc is None else (type(exc).__name__, str(exc))


def _raise_agreed(failures):
    """Raises, on every rank, the failure of the lowest rank that has one."""
    for rank, f in enumerate(failures):
        if f is not None:
            kind, message = f
            raise _LOCAL.get(kind, RuntimeError)("rank %d: %s" % (rank, message))


def _agree(comm, exc, signature, numbers):
    """The ranks' checks agreed before anything moves: every rank learns every rank's failure
    (a local exception or None), call signature and numbers; raises the same exception on every
    rank when one failed or the signatures differ. Returns the list of numbers."""
    got = comm.allgather((_failure(exc), signature, numbers))
    _raise_agreed([g[0] for g in got])
    for rank, g in enumerate(got):
        if g[1] != got[0][1]:
            raise ValueError("the ranks disagree: rank 0 calls with %s, rank %d with %s"
                             % (got[0][1], rank, g[1]))
    return [g[2] for g in got]


def _agree_ok(comm, exc):
    """After a local step every rank learns whether all succeeded; raises on every rank if
    not (one allreduce when they did)."""
    if comm.allreduce(0 if exc is None else 1, op=MPI.SUM) != 0:
        _raise_agreed(comm.allgather(_failure(exc)))


# ---- options -------------------------------------------------------------------------------------

_OPTIONS = ("threads", "epsilon", "balance", "oversample", "finish", "mem_limit", "check",
            "progress", "stats", "levels")
_FILE_OPTIONS = _OPTIONS + ("exchange", "io", "sync", "external", "temp_dirs")
# The options the library takes as each rank's own (struct sortex_config): left out of what
# the ranks agree on.
_RANK_OPTIONS = ("threads", "finish", "mem_limit", "temp_dirs", "stats")

# The library's ranges (sort/sortex.h).
_THREADS_MAX = 4096
_EPSILON_MIN, _EPSILON_MAX = 0.001, 10.0
_OVERSAMPLE_MAX = 1000000


def _enum(name, value, names):
    if value not in names:
        raise ValueError("%s must be one of %s (not %r)" % (name, ", ".join(names), value))
    return names.index(value)


def _count(name, value, lo, hi=None):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError("%s must be an integer (not %r)" % (name, value))
    if value < lo or (hi is not None and value > hi):
        raise ValueError("%s must be %s (not %d)" % (
            name, ">= %d" % lo if hi is None else "%d to %d" % (lo, hi), value))
    return int(value)


def _config(exchange, options, allowed):
    """The struct sortex_config of the options; raises TypeError or ValueError for a wrong
    one. Returns (config, the options as a comparable tuple, stats dict or None)."""
    bad = sorted(set(options) - set(allowed))
    if bad:
        raise TypeError("unexpected option%s %s; the options are %s" % (
            "s" if len(bad) > 1 else "", ", ".join(bad), ", ".join(sorted(allowed))))
    cfg = _lib.Config()
    _lib.sortex_config_default(cfg)
    if not isinstance(exchange, str):
        raise TypeError("exchange must be a back-end name (not %r)" % (exchange,))
    if exchange == "auto":
        cfg.exchange_auto = 1
    else:
        cfg.exchange = _lib.sortex_exchange_find(exchange.encode())
        if not cfg.exchange:
            raise ValueError("unknown exchange back-end %r; the back-ends are %s, or auto"
                             % (exchange, ", ".join(exchanges())))
    o = options
    if "threads" in o:
        cfg.threads = _count("threads", o["threads"], 0, _THREADS_MAX)
    if "epsilon" in o:
        e = o["epsilon"]
        if not isinstance(e, (int, float, np.floating, np.integer)) or isinstance(e, bool) \
                or not _EPSILON_MIN <= float(e) <= _EPSILON_MAX:
            raise ValueError("epsilon must be a number from %g to %g (not %r)"
                             % (_EPSILON_MIN, _EPSILON_MAX, e))
        cfg.epsilon = float(e)
    if "balance" in o:
        cfg.balance = _enum("balance", o["balance"], _lib.BALANCES)
    if "oversample" in o:
        cfg.oversample = _count("oversample", o["oversample"], 0, _OVERSAMPLE_MAX)
    if "finish" in o:
        cfg.finish = _enum("finish", o["finish"], _lib.FINISHES)
    if "mem_limit" in o:
        cfg.mem_limit = _count("mem_limit", o["mem_limit"], 0, 2**64 - 1)
    if "levels" in o:
        cfg.levels = 0 if o["levels"] == "auto" else _count("levels", o["levels"], 1,
                                                            _lib.LEVELS_MAX)
    if "io" in o:
        cfg.io = _enum("io", o["io"], _lib.IOS)
    if "external" in o:
        cfg.external = _enum("external", o["external"], _lib.EXTERNALS)
    if o.get("temp_dirs") is not None:
        cfg.temp_dirs = _temp_dirs(o["temp_dirs"])
    for flag in ("check", "progress", "sync"):
        if flag in o:
            cfg.__setattr__(flag, 1 if o[flag] else 0)
    stats = o.get("stats")
    if stats is not None and not isinstance(stats, dict):
        raise TypeError("stats must be a dict to fill (not %r)" % (stats,))
    key = (exchange,) + tuple(sorted((k, repr(v)) for k, v in o.items()
                                     if k not in _RANK_OPTIONS))
    return cfg, key, stats


def _temp_dirs(dirs):
    """The NULL-terminated array of temp_dirs (a path or a list of paths) for the config, which
    keeps it alive (ctypes holds what a pointer field is given)."""
    if isinstance(dirs, (str, bytes, os.PathLike)):
        dirs = [dirs]
    try:
        paths = [os.fsencode(d) for d in dirs]
    except TypeError:
        raise TypeError("temp_dirs must be a directory or a list of directories (not %r)"
                        % (dirs,)) from None
    if not paths or any(not p for p in paths):
        raise ValueError("temp_dirs must name at least one directory, none of them empty "
                         "(not %r)" % (dirs,))
    return (ctypes.c_char_p * (len(paths) + 1))(*paths, None)


# ---- the library calls ---------------------------------------------------------------------------

def _call(comm, what, fn, args, progress):
    """Calls the library, its error line captured; raises the agreed failure on every rank."""
    with _lib.Captured(live=progress) as cap:
        rc = fn(*args)
    if rc == 0:
        return
    # The ranks agree on the code; the lowest failing rank holds the line.
    lines = comm.allgather(cap.error)
    kind, name = _ERRORS.get(rc, (Error, "error %d" % rc))
    message = next((line for line in lines if line), None)
    raise kind(message or "%s failed: %s (code %d)" % (what, name, rc), rc)


class _Buffer:
    """A buffer of the library's (sortex_alloc_keys or _records), freed once: by free(), or,
    for a result handed out without a copy, when the last numpy view of it goes."""

    def __init__(self, ptr, free):
        self.ptr, self._free = ptr, free

    def array(self, dtype, n):
        """A numpy view of the first n elements."""
        if n == 0:
            return np.empty(0, dtype)
        raw = (ctypes.c_ubyte * (n * np.dtype(dtype).itemsize)).from_address(self.ptr)
        return np.frombuffer(raw, dtype, n)

    def give(self, dtype, n):
        """The first n elements as an array that owns the buffer from now on."""
        if n == 0:
            self.free()
            return np.empty(0, dtype)
        raw = (ctypes.c_ubyte * (n * np.dtype(dtype).itemsize)).from_address(self.ptr)
        weakref.finalize(raw, self._free, self.ptr)
        self.ptr = None
        return np.frombuffer(raw, dtype, n)

    def free(self):
        if self.ptr is not None:
            self._free(self.ptr)
            self.ptr = None


def _library_sort(comm, what, entry, alloc, free, nbytes, fill, n, cfg, st, progress):
    """Hands n elements to the library's sort: alloc() makes its buffer, fill(buffer) writes
    them (a failure there on any rank is every rank's, agreed before the sort starts), entry
    (sortex_sort or sortex_sort_records) sorts them. Returns the _Buffer of this rank's sorted
    slice and its count."""
    exc, buf = None, None
    try:
        ptr = alloc()
        if not ptr:
            raise MemoryError("out of memory for %d elements (%d bytes)" % (n, nbytes))
        buf = _Buffer(ptr, free)
        fill(buf)
    except (MemoryError, ValueError, TypeError, OverflowError) as e:
        exc = e
    try:
        _agree_ok(comm, exc)
    except Exception:
        if buf is not None:
            buf.free()
        raise
    p, cnt = ctypes.c_void_p(buf.ptr), ctypes.c_uint64(n)
    buf.ptr = None  # the sort owns it now, and frees it if it fails
    _call(comm, what, entry,
          (_lib.comm_handle(comm), ctypes.byref(p), ctypes.byref(cnt), cfg, st), progress)
    return _Buffer(p.value, free), cnt.value


def _sort_keys(comm, keys_fill, n, fmt_name, cfg, st, progress):
    """sortex_sort() on n 64-bit keys that keys_fill(view) writes into the library's buffer
    (the format fmt_name: u64, i64 or f64)."""
    cfg.format = _lib.sortex_format_find(fmt_name.encode())
    return _library_sort(comm, "sortex_sort", _lib.sortex_sort,
                         lambda: _lib.sortex_alloc_keys(n), _lib.sortex_free_keys, 8 * n,
                         lambda b: keys_fill(b.array(np.uint64, n)), n, cfg, st, progress)


def _sort_records(comm, rec_fill, n, record_size, key_size, cfg, st, progress):
    """sortex_sort_records() on n records of record_size bytes, a key_size-byte key first,
    which rec_fill(view (n, record_size) of uint8) writes into the library's buffer."""
    fmt = ctypes.c_void_p()
    if _lib.sortex_format_layout(record_size, 0, key_size, ctypes.byref(fmt)) != 0:
        raise ValueError("records of %d bytes with a %d-byte key are beyond the library"
                         % (record_size, key_size))
    cfg.format = fmt.value
    try:
        return _library_sort(
            comm, "sortex_sort_records", _lib.sortex_sort_records,
            lambda: _lib.sortex_alloc_records(fmt, n), _lib.sortex_free_records,
            record_size * n,
            lambda b: rec_fill(b.array(np.uint8, n * record_size).reshape(n, record_size)),
            n, cfg, st, progress)
    finally:
        _lib.sortex_format_free(fmt)


# ---- redistribution ------------------------------------------------------------------------------

# Elements per pair and round of the redistribution: MPI counts are ints.
_CHUNK = 1 << 30


def _redistribute(comm, have, out, have_counts, want_counts):
    """Moves the sorted slices (have, this rank's; have_counts, every rank's) so that each rank
    holds want_counts[rank] elements in out, in order: one Alltoallv of whole elements (more
    rounds only past 2^30 elements a pair)."""
    rank, size = comm.rank, comm.size
    hs = np.concatenate(([0], np.cumsum(have_counts, dtype=np.int64)))
    ws = np.concatenate(([0], np.cumsum(want_counts, dtype=np.int64)))

    def overlap(a0, a1, b0, b1):
        return np.maximum(np.minimum(a1, b1) - np.maximum(a0, b0), 0)

    send = overlap(hs[rank], hs[rank + 1], ws[:-1], ws[1:])
    recv = overlap(hs[:-1], hs[1:], ws[rank], ws[rank + 1])
    sdisp = np.maximum(ws[:-1], hs[rank]) - hs[rank]
    rdisp = np.maximum(hs[:-1], ws[rank]) - ws[rank]
    # The same count on every rank: the largest piece of any pair.
    largest = int(max(overlap(hs[i], hs[i + 1], ws[:-1], ws[1:]).max() for i in range(size))) \
        if size else 0
    etype = MPI.BYTE.Create_contiguous(out.dtype.itemsize).Commit()
    try:
        src = have.view(np.uint8) if have.size else np.empty(0, np.uint8)
        dst = out.view(np.uint8) if out.size else np.empty(0, np.uint8)
        for r in range(max(1, -(-largest // _CHUNK))):
            lo = r * _CHUNK
            sc = np.clip(send - lo, 0, _CHUNK)
            rc = np.clip(recv - lo, 0, _CHUNK)
            comm.Alltoallv([src, ((sc).astype(np.int32), (sdisp + lo).astype(np.int64)), etype],
                           [dst, ((rc).astype(np.int32), (rdisp + lo).astype(np.int64)), etype])
    finally:
        etype.Free()
    return out


# ---- sort and argsort ----------------------------------------------------------------------------

def _array(a):
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError("a must be a 1-D array (this one has %d dimensions)" % a.ndim)
    return a


def _check_out(a, out):
    if out is None:
        return -1
    if not isinstance(out, np.ndarray):
        raise TypeError("out must be a numpy array (not %s)" % type(out).__name__)
    if out.dtype != a.dtype:
        raise TypeError("out must have the dtype of a, %s (not %s)" % (a.dtype, out.dtype))
    if out.ndim != 1 or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be a writeable, contiguous 1-D array")
    return len(out)


def _fill_stats(stats, st, times, extra=()):
    if stats is None:
        return
    stats.clear()
    stats.update(_lib.stats_dict(st))
    stats["python"] = dict(times, **dict(extra))


def sort(a, comm=None, order=None, out=None, exchange="alltoallv", **options):
    """This rank's slice of the stable sort of the 1-D array distributed over comm (see the
    module's description). Returns a new array, or out, filled, when it is given (its length on
    each rank is how many elements that rank gets; the lengths must add up to the whole)."""
    t0 = time.perf_counter()
    comm = _comm_of(comm)
    exc, plan, key = None, None, None
    progress = bool(options.get("progress"))
    try:
        a = _array(a)
        cfg, opts, stats = _config(exchange, options, _OPTIONS)
        plan = KeyPlan(a.dtype, order)
        want = _check_out(a, out)
        key = (str(a.dtype), plan.signature, out is not None, opts)
    except (TypeError, ValueError) as e:
        exc, want = e, -1
    n = len(a) if exc is None else 0
    counts = _agree(comm, exc, key, (n, want))
    if out is not None:
        total, wanted = sum(c[0] for c in counts), sum(c[1] for c in counts)
        if total != wanted:
            raise ValueError("the lengths of out add up to %d over the ranks, not to the %d "
                             "elements of a" % (wanted, total))
    st = _lib.Stats()
    t1 = time.perf_counter()
    if plan.numeric:
        buf, m = _sort_keys(comm, lambda v: plan.fill_u64(a, v), n, plan.library_format, cfg,
                            st, progress)
        t2 = time.perf_counter()
        res = plan.from_u64(buf, m)
    else:
        r, k = plan.key_size + a.dtype.itemsize, plan.key_size

        def fill(rec):
            plan.fill_keys(a, rec[:, :k])
            rec[:, k:] = np.ascontiguousarray(a).view(np.uint8).reshape(n, a.dtype.itemsize)

        buf, m = _sort_records(comm, fill, n, r, k, cfg, st, progress)
        t2 = time.perf_counter()
        try:
            res = np.empty(m, a.dtype)
            res.view(np.uint8).reshape(m, a.dtype.itemsize)[...] = \
                buf.array(np.uint8, m * r).reshape(m, r)[:, k:]
        finally:
            buf.free()
    t3 = time.perf_counter()
    if out is not None:
        # Every rank holds its sorted slice; the lengths of out say where it goes.
        have = comm.allgather(m)
        res = _redistribute(comm, np.ascontiguousarray(res), out, have, [c[1] for c in counts])
    t4 = time.perf_counter()
    _fill_stats(stats, st, {"check_s": t1 - t0, "library_s": t2 - t1, "decode_s": t3 - t2,
                            "redistribute_s": t4 - t3, "total_s": t4 - t0},
                (("path", plan.path),))
    return res


# Members of key groups that the fix-up of argsort's packed words re-sorts through every rank at
# most (those in groups spanning ranks); beyond, and beyond a quarter of the elements in all, the
# records path is cheaper.
_SPANNING_LIMIT = 1 << 20


def _tied(w, bits):
    """Positions i of the sorted words w whose high bits (above the low @bits) equal those of
    w[i + 1]. With at most 32 low bits, the words' upper halves find the few candidates without
    a copy of the words, and the candidates are checked whole."""
    shift = np.uint64(bits)
    if bits <= 32 and sys.byteorder == "little":
        top = w.view(np.uint32)[1::2]
        c = np.flatnonzero(top[1:] == top[:-1])
        return c[(w[c + 1] >> shift) == (w[c] >> shift)]
    high = w >> shift
    return np.flatnonzero(high[1:] == high[:-1])


def _positions_fixed(comm, w, bits, u, first, in_counts):
    """argsort's sorted words w hold (the key's high bits, the position in the low @bits): in
    place, they become the positions, in (key, position) order. Elements whose high bits are
    equal (a group) were in position order, not key order: each group is put in order with the
    members' whole keys, fetched from the ranks that hold them; groups within a rank there,
    groups across ranks through every rank. Returns (the positions, or None on every rank when
    so many elements are in groups that the record sort is the cheaper way; the elements in
    groups; of them, those in groups across ranks)."""
    rank, size, m = comm.rank, comm.size, len(w)
    shift = np.uint64(bits)
    first_high, last_high = (int(w[0] >> shift), int(w[-1] >> shift)) if m else (None, None)
    ends = comm.allgather((m, first_high, last_high))
    mine = sum(e[0] for e in ends[:rank])
    before = next((e[2] for e in reversed(ends[:rank]) if e[0]), None)
    after = next((e[1] for e in ends[rank + 1:] if e[0]), None)
    # Members: elements whose high bits equal a neighbour's, on this rank or the next ones.
    ties = _tied(w, bits)
    head = m > 0 and before is not None and first_high == before
    tail = m > 0 and after is not None and last_high == after
    pos = np.union1d(np.union1d(ties, ties + 1),
                     np.array([0] * head + [m - 1] * tail, dtype=np.int64))
    # The members of the first and last group when they go on beyond this rank.
    high = w[pos] >> shift
    span = np.zeros(len(pos), bool)
    if head:
        span |= high == np.uint64(first_high)
    if tail:
        span |= high == np.uint64(last_high)
    np.bitwise_and(w, np.uint64((1 << bits) - 1), out=w)
    idx = w.view(np.int64)
    members, spanning = comm.allreduce((len(pos), int(span.sum())),
                                       op=lambda x, y, _=None: (x[0] + y[0], x[1] + y[1]))
    if members == 0:
        return idx, 0, 0
    if spanning > _SPANNING_LIMIT or members > sum(in_counts) // 4:
        return None, members, spanning
    # The members' whole keys, from the ranks that hold their input elements.
    starts = np.cumsum([0] + list(in_counts))
    want = idx[pos]
    owner = np.searchsorted(starts, want, side="right") - 1
    asked = comm.alltoall([want[owner == r] for r in range(size)])
    answers = comm.alltoall([u[q - first] for q in asked])
    keys = np.empty(len(pos), np.uint64)
    for r in range(size):
        keys[owner == r] = answers[r]
    # Groups within this rank: the members in (key, position) order take the members' places.
    local = ~span
    order = np.lexsort((want[local], keys[local]))
    idx[pos[local]] = want[local][order]
    # Groups across ranks: every rank sees all their members and keeps its places.
    got = comm.allgather((keys[span], want[span], pos[span] + mine))
    k = np.concatenate([g[0] for g in got])
    if len(k):
        v = np.concatenate([g[1] for g in got])
        places = np.sort(np.concatenate([g[2] for g in got]))
        v = v[np.lexsort((v, k))]
        here = (places >= mine) & (places < mine + m)
        idx[places[here] - mine] = v[here]
    return idx, members, spanning


def _argsort_records(comm, plan, a, u, n, first, cfg, st, progress):
    """argsort by records: the key's bytes, then the position (the sort is stable: equal keys
    keep their input order)."""
    k = 8 if plan.numeric else plan.key_size

    def fill(rec):
        if plan.numeric:
            rec[:, :k].view(">u8")[:, 0] = u
        else:
            plan.fill_keys(a, rec[:, :k])
        rec[:, k:].view("<i8")[:, 0] = np.arange(first, first + n, dtype=np.int64)

    buf, m = _sort_records(comm, fill, n, k + 8, k, cfg, st, progress)
    try:
        res = np.empty(m, np.int64)
        res.view(np.uint8).reshape(m, 8)[...] = \
            buf.array(np.uint8, m * (k + 8)).reshape(m, k + 8)[:, k:]
    finally:
        buf.free()
    return res


def argsort(a, comm=None, order=None, exchange="alltoallv", **options):
    """int64 global positions of this rank's slice of the stable sorted order of the 1-D array
    distributed over comm: positions in the ranks' arrays concatenated in rank order, so that
    the concatenated input taken at argsort(a) is sort(a) on every rank.

    Numbers sort as 64-bit words holding the key (less its smallest value) above the position.
    When key range and positions need more than 64 bits together, the words keep the key's high
    bits, and the few elements whose high bits tie with a neighbour's are put in order after
    the sort; if there are many, and for the other dtypes, records of key and position."""
    t0 = time.perf_counter()
    comm = _comm_of(comm)
    exc, plan, key = None, None, None
    progress = bool(options.get("progress"))
    try:
        a = _array(a)
        cfg, opts, stats = _config(exchange, options, _OPTIONS)
        plan = KeyPlan(a.dtype, order)
        key = (str(a.dtype), plan.signature, opts)
        if plan.numeric:
            # The keys' range, to see how much of the key fits beside the position.
            u = ordered_u64(a)
            lo, hi = (int(u.min()), int(u.max())) if len(u) else (2**64 - 1, 0)
        else:
            u, lo, hi = None, 2**64 - 1, 0
    except (TypeError, ValueError, MemoryError) as e:
        exc, lo, hi = e, 2**64 - 1, 0
    n = len(a) if exc is None else 0
    counts = _agree(comm, exc, key, (n, lo, hi))
    in_counts = [c[0] for c in counts]
    first, total = sum(in_counts[:comm.rank]), sum(in_counts)
    lo, hi = min(c[1] for c in counts), max(c[2] for c in counts)
    st = _lib.Stats()
    t1 = time.perf_counter()
    res, path, ties = None, "records of key and position", {}
    if plan.numeric:
        index_bits = max(total - 1, 0).bit_length()
        # Subtracting the smallest key only helps when it shortens the keys.
        base = lo if hi >= lo and (hi - lo).bit_length() < hi.bit_length() else 0
        drop = max(0, (hi - base).bit_length() + index_bits - 64) if hi >= lo else 0

        low = np.uint64((1 << index_bits) - 1)

        def fill(v):
            src = u
            if base:
                np.subtract(src, np.uint64(base), out=v)
                src = v
            if drop == index_bits and drop:
                # The key's low bits make way for the position: one mask.
                np.bitwise_and(src, ~low, out=v)
            else:
                if drop:
                    np.right_shift(src, np.uint64(drop), out=v)
                    src = v
                np.left_shift(src, np.uint64(index_bits), out=v)
            if 0 < index_bits <= 32 and sys.byteorder == "little":
                # The positions go into the words' lower halves: half the bytes to make.
                half = v.view(np.uint32)[0::2]
                np.bitwise_or(half, np.arange(first, first + n, dtype=np.uint32), out=half)
            elif index_bits:
                np.bitwise_or(v, np.arange(first, first + n, dtype=np.uint64), out=v)

        buf, m = _sort_keys(comm, fill, n, "u64", cfg, st, progress)
        # The words become the positions in place: the result without a copy.
        w = buf.give(np.uint64, m)
        path = "packed words"
        if not drop:
            np.bitwise_and(w, low, out=w)
            res = w.view(np.int64)
        else:
            path = "packed words, %d low key bits fixed up" % drop
            res, tied, spanning = _positions_fixed(comm, w, index_bits, u, first, in_counts)
            ties = {"tied_elements": tied, "spanning_elements": spanning}
            if res is None:
                path = "records of key and position (too many ties in packed words)"
    t2 = time.perf_counter()
    if res is None:
        res = _argsort_records(comm, plan, a, u, n, first, cfg, st, progress)
    t3 = time.perf_counter()
    _fill_stats(stats, st, {"check_s": t1 - t0, "words_s": t2 - t1, "records_s": t3 - t2,
                            "total_s": t3 - t0}, dict(ties, path=path).items())
    return res


# ---- files ---------------------------------------------------------------------------------------

_DTYPE_FORMATS = {np.dtype("<u8"): "u64", np.dtype("<i8"): "i64", np.dtype("<f8"): "f64"}


def _file_format(fmt):
    """(format handle, whether to free it, comparable form) of a format argument: a name
    ('u64', 'i64', 'f64', 'gensort'), a numpy dtype of 8-byte little-endian numbers, or a
    record layout (record_size, key_offset, key_size)."""
    if isinstance(fmt, (tuple, list)):
        if len(fmt) != 3:
            raise ValueError("a record layout is (record_size, key_offset, key_size), not %r"
                             % (fmt,))
        r, o, k = (_count(n, v, 0) for n, v in zip(("record_size", "key_offset", "key_size"),
                                                     fmt))
        f = ctypes.c_void_p()
        if _lib.sortex_format_layout(r, o, k, ctypes.byref(f)) != 0:
            raise ValueError("not a record layout: %d-byte records, a %d-byte key at %d "
                             "(records 1 to 65536 bytes, the key within them)" % (r, k, o))
        return f.value, True, (r, o, k)
    if not isinstance(fmt, str):
        try:
            fmt = _DTYPE_FORMATS[np.dtype(fmt)]
        except (TypeError, KeyError):
            raise TypeError("format must be a name, a dtype of 8-byte numbers or a layout "
                            "(record_size, key_offset, key_size), not %r" % (fmt,)) from None
    f = _lib.sortex_format_find(fmt.encode())
    if not f:
        raise ValueError("unknown format %r; the formats are u64, i64, f64, gensort, or a "
                         "layout (record_size, key_offset, key_size)" % (fmt,))
    return f, False, fmt


def sort_file(input, output, format="u64", comm=None, **options):
    """Sorts the binary file input into output with every rank of comm, as the sortex program
    does (output appears whole, by a rename, or not at all): in memory when every rank's share
    fits (mem_limit, or a share of the node's memory), else through temporary files, unless
    external says otherwise. Returns this rank's statistics as a dict; its "external" says which
    way the file was sorted."""
    comm = _comm_of(comm)
    exc, key, fmt, owned, stats = None, None, None, False, None
    options = dict(options)
    exchange = options.pop("exchange", "alltoallv")
    try:
        paths = (os.fsencode(input), os.fsencode(output))
        cfg, opts, stats = _config(exchange, options, _FILE_OPTIONS)
        fmt, owned, shown = _file_format(format)
        cfg.format = fmt
        key = (paths, shown, opts)
    except (TypeError, ValueError) as e:
        exc = e
    try:
        _agree(comm, exc, key, None)
        st = _lib.Stats()
        _call(comm, "sortex_sort_file", _lib.sortex_sort_file,
              (_lib.comm_handle(comm), paths[0], paths[1], cfg, st),
              bool(options.get("progress")))
    finally:
        if owned:
            _lib.sortex_format_free(fmt)
    d = _lib.stats_dict(st)
    if stats is not None:
        stats.clear()
        stats.update(d)
    return d

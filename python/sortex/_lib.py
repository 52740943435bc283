"""sortex._lib: the C library through ctypes: loading libsortex.so, the structs of
<sortex/sortex.h>, the MPI communicator handle, and the library's error line.

Only this file knows the C side. The structs mirror sort/sortex.h field for field; the Python
suite (tests/63-python.bats) compares their sizes and offsets with the C compiler's, so a header
change that is not made here too fails a test instead of corrupting memory.
"""

import ctypes
import ctypes.util
import os
import re
import sys
import threading

from mpi4py import MPI

# ---- the library ---------------------------------------------------------------------------------

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    """Where libsortex.so may be, in order: the file make install recorded beside this package,
    the build tree this package lies in (python/sortex/ -> build/release/lib/libsortex.so.X.Y.Z,
    the version of the tree's sort/sortex.h, as the Makefile names it), the loader's own search
    (ldconfig, LD_LIBRARY_PATH). The ABI is not told by a name here: the Python suite checks
    the structs below against the header."""
    try:
        from sortex import _install  # written by make install
        yield _install.LIBRARY
    except ImportError:
        pass
    top = os.path.dirname(os.path.dirname(_HERE))
    version = {}
    try:
        with open(os.path.join(top, "sort", "sortex.h")) as f:
            for line in f:
                m = re.match(r"#define SORTEX_VERSION_(MAJOR|MINOR|PATCH) (\d+)$", line.strip())
                if m:
                    version[m.group(1)] = m.group(2)
    except OSError:
        pass
    if len(version) == 3:
        yield os.path.join(top, "build", "release", "lib", "libsortex.so.%s.%s.%s" % (
            version["MAJOR"], version["MINOR"], version["PATCH"]))
    found = ctypes.util.find_library("sortex")
    if found:
        yield found


def _mapped_mpi_libraries():
    """The MPI libraries mapped into this process (Open MPI's libmpi, MPICH's libmpich)."""
    found = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rsplit(None, 1)[-1]
                base = os.path.basename(path)
                if base.startswith("libmpi.so") or base.startswith("libmpich.so"):
                    found.add(base.split(".so")[0])
    except OSError:
        pass
    return found


def _load():
    tried = []
    for path in _candidates():
        try:
            # RTLD_GLOBAL: the library's MPI is the one mpi4py loaded already, shared.
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        # One MPI per process: a libsortex built against another MPI than mpi4py's would call
        # into a second, uninitialised MPI library.
        mpis = _mapped_mpi_libraries()
        if len(mpis) > 1:
            raise ImportError("sortex: %s is built against another MPI than mpi4py (%s): "
                              "both %s are loaded" % (path, MPI.Get_library_version().split(
                                  ",")[0].strip(), " and ".join(sorted(mpis))))
        return lib, path
    raise ImportError("sortex: cannot load libsortex.so; tried %s (make builds it; make "
                      "install installs it)" % ("; ".join(tried) or "nothing found"))


lib, LIBRARY_PATH = _load()

# ---- the structs of sort/sortex.h ----------------------------------------------------------------

PHASES = ("read", "local_sort", "sample", "splitters", "bucket", "exchange", "finish", "write",
          "check", "distribute", "sort_buckets")
BALANCES = ("auto", "eps", "exact", "sample")  # enum sortex_balance, in order
FINISHES = ("auto", "merge", "sort")            # enum sortex_finish
IOS = ("mpiio", "root", "rootv")                 # enum sortex_io
EXTERNALS = ("auto", "never", "always")          # enum sortex_external
EXCHANGE_MAX_EXTRA = 8
LEVELS_MAX = 4                                   # SORTEX_LEVELS_MAX

# enum sortex_error
OK, EUSAGE, EIO, ENOMEM, EMPI, EINJECT, ECHECK = 0, -1, -2, -3, -4, -5, -6


class Config(ctypes.Structure):
    """struct sortex_config."""
    _fields_ = [
        ("exchange", ctypes.c_void_p),
        ("exchange_auto", ctypes.c_int),
        ("format", ctypes.c_void_p),
        ("threads", ctypes.c_int),
        ("epsilon", ctypes.c_double),
        ("oversample", ctypes.c_uint64),
        ("balance", ctypes.c_int),
        ("finish", ctypes.c_int),
        ("mem_limit", ctypes.c_uint64),
        ("progress", ctypes.c_int),
        ("sync", ctypes.c_int),
        ("io", ctypes.c_int),
        ("check", ctypes.c_int),
        ("levels", ctypes.c_int),
        ("external", ctypes.c_int),
        ("temp_dirs", ctypes.POINTER(ctypes.c_char_p)),
    ]


class _Extra(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_double)]


class ExchangeStats(ctypes.Structure):
    """struct sortex_exchange_stats."""
    _fields_ = [
        ("bytes_sent", ctypes.c_uint64),
        ("bytes_recv", ctypes.c_uint64),
        ("messages", ctypes.c_uint64),
        ("rounds", ctypes.c_uint64),
        ("max_message", ctypes.c_uint64),
        ("seconds", ctypes.c_double),
        ("nextra", ctypes.c_int),
        ("extra", _Extra * EXCHANGE_MAX_EXTRA),
    ]


class LevelStats(ctypes.Structure):
    """struct sortex_level_stats."""
    _fields_ = [
        ("groups", ctypes.c_int),
        ("ranks", ctypes.c_int),
        ("exchange", ctypes.c_char_p),
        ("messages", ctypes.c_uint64),
        ("bytes_sent", ctypes.c_uint64),
        ("seconds", ctypes.c_double),
    ]


class Stats(ctypes.Structure):
    """struct sortex_stats."""
    _fields_ = [
        ("phase_seconds", ctypes.c_double * len(PHASES)),
        ("total_seconds", ctypes.c_double),
        ("n_total", ctypes.c_uint64),
        ("n_in", ctypes.c_uint64),
        ("n_out", ctypes.c_uint64),
        ("imbalance", ctypes.c_double),
        ("epsilon_bound", ctypes.c_double),
        ("samples", ctypes.c_uint64),
        ("splitter_rounds", ctypes.c_uint64),
        ("balance", ctypes.c_int),
        ("oversample", ctypes.c_uint64),
        ("threads", ctypes.c_int),
        ("finish", ctypes.c_char_p),
        ("check", ctypes.c_char_p),
        ("peak_rss_kib", ctypes.c_long),
        ("buffer_bytes", ctypes.c_uint64),
        ("exchange", ExchangeStats),
        ("exchange_name", ctypes.c_char_p),
        ("exchange_predicted", ctypes.c_double),
        ("external", ctypes.c_int),
        ("mem_budget", ctypes.c_uint64),
        ("mem_need", ctypes.c_uint64),
        ("mem_source", ctypes.c_char_p),
        ("buckets", ctypes.c_uint64),
        ("split_buckets", ctypes.c_uint64),
        ("temp_bytes", ctypes.c_uint64),
        ("pass_bytes", (ctypes.c_uint64 * 2) * 2),
        ("shifted", ctypes.c_uint64),
        ("levels", ctypes.c_int),
        ("levels_auto", ctypes.c_int),
        ("levels_price", ctypes.c_double * LEVELS_MAX),
        ("level", LevelStats * LEVELS_MAX),
    ]


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else None


def stats_dict(st):
    """A struct sortex_stats as a dict: per-rank figures are this rank's, global ones agree on
    every rank (the README's "The --stats file" names them)."""
    ex = st.exchange
    return {
        "phases": {name: st.phase_seconds[i] for i, name in enumerate(PHASES)},
        "total_seconds": st.total_seconds,
        "n_total": st.n_total, "n_in": st.n_in, "n_out": st.n_out,
        "imbalance": st.imbalance, "epsilon_bound": st.epsilon_bound,
        "samples": st.samples, "splitter_rounds": st.splitter_rounds,
        "balance": BALANCES[st.balance] if 0 <= st.balance < len(BALANCES) else st.balance,
        "oversample": st.oversample, "threads": st.threads,
        "finish": _text(st.finish), "check": _text(st.check),
        "peak_rss_kib": st.peak_rss_kib, "buffer_bytes": st.buffer_bytes,
        "exchange": _text(st.exchange_name),
        "exchange_predicted_s": st.exchange_predicted,
        "exchange_stats": dict(
            {"bytes_sent": ex.bytes_sent, "bytes_recv": ex.bytes_recv,
             "messages": ex.messages, "rounds": ex.rounds, "max_message": ex.max_message,
             "seconds": ex.seconds},
            **{_text(ex.extra[i].name): ex.extra[i].value
               for i in range(min(ex.nextra, EXCHANGE_MAX_EXTRA))}),
        # The external sort (sort_file through temporary files); zeros in memory.
        "external": bool(st.external),
        "mem_budget": st.mem_budget, "mem_need": st.mem_need,
        "mem_source": _text(st.mem_source),
        "buckets": st.buckets, "split_buckets": st.split_buckets,
        "temp_bytes": st.temp_bytes,
        "passes": [{"bytes_read": st.pass_bytes[i][0], "bytes_written": st.pass_bytes[i][1]}
                   for i in range(2)],
        # The levels (one for a one-level sort): each level's groups, messages and bytes.
        "levels": st.levels, "levels_auto": bool(st.levels_auto),
        "levels_price": [st.levels_price[i] for i in range(LEVELS_MAX)],
        "shifted": st.shifted,
        "level": [{"groups": lv.groups, "ranks": lv.ranks, "exchange": _text(lv.exchange),
                   "messages": lv.messages, "bytes_sent": lv.bytes_sent, "seconds": lv.seconds}
                  for lv in st.level[:max(0, min(st.levels, LEVELS_MAX))]],
    }


# ---- MPI communicators ---------------------------------------------------------------------------

# MPI_Comm is a pointer in Open MPI and an int in MPICH; mpi4py knows which.
CommHandle = ctypes.c_void_p if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_void_p) \
    else ctypes.c_int


def comm_handle(comm):
    """The C handle of an mpi4py communicator, as the library takes it."""
    return CommHandle(MPI._handleof(comm))


# ---- the functions -------------------------------------------------------------------------------

_u64p = ctypes.POINTER(ctypes.c_uint64)


def _declare(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


sortex_version = _declare("sortex_version", ctypes.c_char_p)
sortex_config_default = _declare("sortex_config_default", None, ctypes.POINTER(Config))
sortex_exchange_find = _declare("sortex_exchange_find", ctypes.c_void_p, ctypes.c_char_p)
sortex_exchange_name = _declare("sortex_exchange_name", ctypes.c_char_p, ctypes.c_int)
sortex_format_find = _declare("sortex_format_find", ctypes.c_void_p, ctypes.c_char_p)
sortex_format_layout = _declare("sortex_format_layout", ctypes.c_int, ctypes.c_size_t,
                                ctypes.c_size_t, ctypes.c_size_t,
                                ctypes.POINTER(ctypes.c_void_p))
sortex_format_free = _declare("sortex_format_free", None, ctypes.c_void_p)
sortex_record_size = _declare("sortex_record_size", ctypes.c_size_t, ctypes.c_void_p)
sortex_alloc_keys = _declare("sortex_alloc_keys", ctypes.c_void_p, ctypes.c_uint64)
sortex_free_keys = _declare("sortex_free_keys", None, ctypes.c_void_p)
sortex_alloc_records = _declare("sortex_alloc_records", ctypes.c_void_p, ctypes.c_void_p,
                                ctypes.c_uint64)
sortex_free_records = _declare("sortex_free_records", None, ctypes.c_void_p)
sortex_sort = _declare("sortex_sort", ctypes.c_int, CommHandle, ctypes.POINTER(ctypes.c_void_p),
                       _u64p, ctypes.POINTER(Config), ctypes.POINTER(Stats))
sortex_sort_records = _declare("sortex_sort_records", ctypes.c_int, CommHandle,
                               ctypes.POINTER(ctypes.c_void_p), _u64p, ctypes.POINTER(Config),
                               ctypes.POINTER(Stats))
sortex_sort_file = _declare("sortex_sort_file", ctypes.c_int, CommHandle, ctypes.c_char_p,
                            ctypes.c_char_p, ctypes.POINTER(Config), ctypes.POINTER(Stats))

VERSION = sortex_version().decode()


def exchange_names():
    """The registered back-ends, the default first."""
    names, i = [], 0
    while True:
        name = sortex_exchange_name(i)
        if name is None:
            return names
        names.append(name.decode())
        i += 1


# ---- the library's error line --------------------------------------------------------------------

_libc = ctypes.CDLL(None)
_libc.fflush.argtypes = [ctypes.c_void_p]
_PREFIX = "sortex: error: "


class Captured:
    """Runs a library call with file descriptor 2 (stderr) redirected, because the library
    reports a failure by one line there and returns only a code. The error line, if any, is
    kept in .error (without "sortex: error: "); every other line goes on to the real stderr:
    after the call from a memory file, or, with live (the library's progress reports, which
    must appear as they come), at once through a pipe that a thread reads while the call runs
    (ctypes lets go of Python's lock during a foreign call)."""

    def __init__(self, live=False):
        self.live = live
        self.error = None

    def _keep(self, text):
        """The lines of text that are not the error line (which is kept)."""
        other = []
        for line in text.splitlines(True):
            if line.startswith(_PREFIX) and self.error is None:
                self.error = line[len(_PREFIX):].rstrip("\n")
            else:
                other.append(line)
        return "".join(other)

    def _forward(self, fd):
        """The live mode's reader: whole lines from the pipe, on to the real stderr."""
        pending = b""
        while True:
            b = os.read(fd, 1 << 16)
            if not b:
                break
            pending += b
            lines, _, pending = pending.rpartition(b"\n")
            if lines:
                out = self._keep((lines + b"\n").decode("utf-8", "replace"))
                if out:
                    os.write(self._saved, out.encode())
        out = self._keep(pending.decode("utf-8", "replace")) if pending else ""
        if out:
            os.write(self._saved, out.encode())
        os.close(fd)

    def __enter__(self):
        sys.stderr.flush()
        _libc.fflush(None)
        self._saved = os.dup(2)
        if self.live:
            r, w = os.pipe()
            self._thread = threading.Thread(target=self._forward, args=(r,), daemon=True)
            self._thread.start()
            os.dup2(w, 2)
            os.close(w)
        else:
            self._file = os.memfd_create("sortex-stderr", os.MFD_CLOEXEC)
            os.dup2(self._file, 2)
        return self

    def __exit__(self, *exc):
        _libc.fflush(None)
        os.dup2(self._saved, 2)  # the pipe's last writer goes: the reader sees its end
        if self.live:
            self._thread.join()
        else:
            os.lseek(self._file, 0, os.SEEK_SET)
            chunks = []
            while True:
                b = os.read(self._file, 1 << 16)
                if not b:
                    break
                chunks.append(b)
            os.close(self._file)
            out = self._keep(b"".join(chunks).decode("utf-8", "replace"))
            if out:
                sys.stderr.write(out)
                sys.stderr.flush()
        os.close(self._saved)
        return False

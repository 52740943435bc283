"""bench/python_sort.py: the Python module's kernel for bench/run's python suite, run on every
rank of an MPI job:

    mpirun -np P python3 bench/python_sort.py INPUT REPS THREADS WORKDIR

Every rank reads its slice of INPUT (uint64 keys, slice r of P as the sortex program reads it),
then, after one untimed call of each, times REPS calls of sortex.sort() and sortex.argsort()
alternately, each between barriers, as the slowest rank's wall time. Rank 0 prints one JSON
line per call: {"kind": "sort" | "argsort", "rep", "seconds", "library_s" (the library's own
local_sort to finish, each phase's slowest rank, summed: the figure the sortex program's --stats
gives as in-memory), "path"}, and a last line {"kind": "check", "argsort_ok"}.

The last sort's slices are written in rank order into WORKDIR/sorted.bin for bench/run to check
with sortex-verify; the last argsort's positions are checked here against the input (rank 0
reads it whole): a permutation, and the input taken at them in order.
"""

import json
import os
import sys
import time

import numpy as np
from mpi4py import MPI

import sortex

PHASES = ("local_sort", "sample", "splitters", "bucket", "exchange", "finish")


def main(argv):
    path, reps, threads, work = argv[0], int(argv[1]), int(argv[2]), argv[3]
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    n = os.path.getsize(path) // 8
    lo, hi = n * rank // size, n * (rank + 1) // size
    a = np.fromfile(path, dtype="<u8", count=hi - lo, offset=8 * lo)

    def timed(f):
        st = {}
        comm.Barrier()
        t = time.perf_counter()
        r = f(a, threads=threads, stats=st)
        t = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
        lib = sum(comm.allreduce(st["phases"][p], op=MPI.MAX) for p in PHASES)
        return r, t, lib, st["python"]["path"]

    timed(sortex.sort)
    timed(sortex.argsort)
    last = {}
    for rep in range(1, reps + 1):
        for kind, f in (("sort", sortex.sort), ("argsort", sortex.argsort)):
            last.pop(kind, None)  # the previous result of the kind goes before the call
            last[kind], t, lib, how = timed(f)
            if rank == 0:
                print(json.dumps({"kind": kind, "rep": rep, "seconds": t, "library_s": lib,
                                  "path": how}), flush=True)
    last_sort, last_argsort = last["sort"], last["argsort"]
    # The checks, outside the timing.
    offset = comm.exscan(len(last_sort)) or 0
    fh = MPI.File.Open(comm, os.path.join(work, "sorted.bin"),
                       MPI.MODE_WRONLY | MPI.MODE_CREATE)
    fh.Set_size(0)
    fh.Write_at_all(8 * offset, last_sort)
    fh.Close()
    parts = comm.gather(last_argsort, root=0)
    if rank == 0:
        idx = np.concatenate(parts)
        whole = np.fromfile(path, dtype="<u8")
        ok = (len(idx) == n and np.array_equal(np.sort(idx), np.arange(n))
              and bool(np.all(whole[idx][:-1] <= whole[idx][1:])))
        # Stable: equal keys in input order.
        if ok and n > 1:
            ties = whole[idx][:-1] == whole[idx][1:]
            ok = bool(np.all(idx[:-1][ties] < idx[1:][ties]))
        print(json.dumps({"kind": "check", "argsort_ok": ok}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

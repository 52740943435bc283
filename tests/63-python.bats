#!/usr/bin/env bats
# The Python module (python/sortex/): numpy arrays over mpi4py communicators, through the shared
# library, with Debian's python3, numpy and mpi4py. tests/python/sortex_cases.py holds the cases
# (every dtype, empty ranks, structured records, out, options, errors, files), each checked
# against an oracle of its own (Python's stable sorted() with keys written from each order's
# definition); here they run at P = 1 to 4, with the test hooks, and from an install.
bats_require_minimum_version 1.5.0
load helper

# Debian's interpreter, whatever else is first on PATH (its numpy and mpi4py are Debian's).
PY=/usr/bin/python3
CASES=$TOP/tests/python/sortex_cases.py
export PYTHONPATH=$TOP/python

# cases NP [CASE...]: the cases on NP ranks; every one listed must pass.
cases() {
    local np=$1 n
    shift
    CASES_TMPDIR=$BATS_TEST_TMPDIR run mpi "$np" "$PY" "$CASES" "$@"
    n=${#@}
    [[ $n -gt 0 ]] || n=$(grep -c '^@case$' "$CASES")
    assert_success
    assert_line "cases: $n, failed: 0"
    run grep -c '^ok: ' <<<"$output"
    assert_output "$n"
}

@test "the module's ctypes structs have the layout of sort/sortex.h" {
    run -0 mpicc -I"$TOP" -o "$BATS_TEST_TMPDIR/layout" "$TOP/tests/python/layout.c"
    run -0 "$BATS_TEST_TMPDIR/layout"
    local c=$output
    run -0 "$PY" - <<'PY'
import ctypes
from sortex import _lib
for name, cls in (("sortex_config", _lib.Config), ("sortex_exchange_stats", _lib.ExchangeStats),
                  ("sortex_level_stats", _lib.LevelStats), ("sortex_stats", _lib.Stats)):
    print(name, ctypes.sizeof(cls))
    for field, _ in cls._fields_:
        d = getattr(cls, field)
        print("%s.%s %d %d" % (name, field, d.offset, d.size))
print("SORTEX_PHASE_COUNT", len(_lib.PHASES))
print("SORTEX_EXCHANGE_MAX_EXTRA", _lib.EXCHANGE_MAX_EXTRA)
print("SORTEX_LEVELS_MAX", _lib.LEVELS_MAX)
PY
    assert_equal "$output" "$c"
    run grep -c . <<<"$c"
    assert_output 69
}

@test "every dtype, records, files and errors of the module at P = 1 to 4" {
    local np
    for np in 1 2 3 4; do
        cases "$np"
    done
}

@test "a failure inside the library raises its message everywhere; check catches a corruption" {
    SORTEX_FAIL=exchange:1 cases 3 injected_failure
    SORTEX_CORRUPT=order:0 cases 2 corrupted_check
}

@test "progress reports reach stderr as they come, and an error still raises the library's line" {
    run --separate-stderr -0 mpi 2 "$PY" -c "
import numpy as np, sortex
from mpi4py import MPI
sortex.sort(np.arange(100000), progress=True)
try:
    sortex.sort(np.arange(100000), progress=True, mem_limit=10)
except sortex.OutOfMemory as e:
    if MPI.COMM_WORLD.rank == 0:
        print(e)"
    assert_line --index 0 "rank 0: key buffers of 1609392 bytes exceed --mem-limit (10 bytes)"
    assert_regex "$stderr" "sortex: \[2/8\] +local_sort +[0-9.]+ s"
    refute_regex "$stderr" "sortex: error:"
}

@test "sort_file's output passes sortex-verify: records, root I/O and the external sort" {
    local in out=$BATS_TEST_TMPDIR/out.bin
    in=$(gen_input zipf 300007 3)
    run -0 mpi 3 "$PY" -c "import sortex
from mpi4py import MPI
st = sortex.sort_file('$in', '$out')
if MPI.COMM_WORLD.rank == 0:
    print(st['n_total'])"
    assert_output 300007
    run -0 "$VERIFY" "$out" --input "$in"
    in=$(SORT_FORMAT="--record-size 13 --key-offset 3 --key-size 5" gen_input few 30011 2)
    rm -f "$out"
    run -0 mpi 2 "$PY" -c "import sortex; sortex.sort_file('$in', '$out', (13, 3, 5), io='rootv')"
    run -0 "$VERIFY" "$out" --input "$in" --record-size 13 --key-offset 3 --key-size 5
    stable_sort_of "$in" "$out" 13 3 5
    # A share beyond mem_limit: the library sorts through temporary files, and says so.
    in=$(SORT_FORMAT="--format gensort" gen_input gensort 40009 3)
    rm -f "$out"
    run -0 mpi 3 "$PY" -c "import sortex
from mpi4py import MPI
st = sortex.sort_file('$in', '$out', 'gensort', mem_limit=1 << 20, temp_dirs='$BATS_TEST_TMPDIR')
if MPI.COMM_WORLD.rank == 0:
    print(st['external'], st['mem_source'])"
    assert_output "True --mem-limit"
    run -0 "$VERIFY" "$out" --input "$in" --format gensort
    stable_sort_of "$in" "$out" 100 0 10
    no_temp_left
}

@test "the README's Python example runs and checks itself" {
    # The example is the README's code block that starts with "# sortex_example.py".
    awk '/^```python$/ { on = 0 } on { print } /^# sortex_example.py/ { on = 1; print }
        /^```$/ { on = 0 }' "$TOP/README.md" | sed '/^```$/d' >"$BATS_TEST_TMPDIR/example.py"
    run grep -c . "$BATS_TEST_TMPDIR/example.py"
    [[ $output -gt 10 ]]
    cd "$BATS_TEST_TMPDIR"
    run -0 mpi 3 "$PY" example.py
    assert_line --regexp '^3000000 values sorted on 3 ranks in [0-9.]+ s, imbalance [0-9.]+$'
    assert_line --regexp '^refused: rank 0: key buffers of [0-9]+ bytes exceed --mem-limit'
    run -0 "$VERIFY" sorted.bin --input keys.bin --format i64
}

@test "a Python process without mpirun sorts alone, as MPI's singleton" {
    run -0 "$PY" -c "
import numpy as np, sortex
a = np.array([3, -1, 2, -1], np.int16)
print(sortex.sort(a).tolist(), sortex.argsort(a).tolist())"
    assert_output "[-1, -1, 2, 3] [1, 3, 2, 0]"
}

@test "the module refuses to sort in one-rank jobs that a launcher of another MPI started" {
    # MPICH's mpiexec starts Open MPI's mpi4py as unrelated one-rank jobs: each would sort its
    # part alone.
    # Each process writes its message to a file of its own (their standard outputs interleave).
    cd "$BATS_TEST_TMPDIR"
    run -0 timeout 60 mpiexec.mpich -n 2 "$PY" -c "
import numpy as np, os, sortex
try:
    sortex.sort(np.arange(3))
except RuntimeError as e:
    open('refused.' + os.environ['PMI_RANK'], 'w').write(str(e))"
    run -0 cat refused.0
    assert_output --partial "is one of 2 the launcher started (PMI_SIZE), but MPI sees a job of one"
    run -0 cat refused.1
    assert_output --partial "is one of 2 the launcher started (PMI_SIZE), but MPI sees a job of one"
}

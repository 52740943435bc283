#!/usr/bin/env bats
# MPICH: the tree built against Debian's MPICH (make MPI=mpich, into build/mpich/) and run by
# MPICH's own launcher, mpiexec.mpich (Hydra): every back-end at P = 1..5, the record formats,
# root I/O and the installed library. What sortex does only under Open MPI (the forced alltoallv
# algorithms of the benchmarks) is shown to step aside with a note.
#
# The inputs come from the Open MPI build's sortex-gen and every output is checked by the Open MPI
# build's sortex-verify, so the two builds check each other. Ranks run with tests/mpich/yield.c
# preloaded: MPICH 4.0 polls without ever yielding, which costs a scheduler time slice per message
# when there are more ranks than cores (as here: up to 5 ranks on 2 cores); the shim changes
# no result, only the time (a small sort at P = 5: 0.4 s instead of 1.7 s).
bats_require_minimum_version 1.5.0
load helper

MPICH_BUILD=$TOP/build/mpich
# The sort under test; sortex_case's inputs and checks stay the Open MPI build's.
SORTEX=$MPICH_BUILD/bin/sortex

setup_file() {
    # make test built it already (then this does nothing); run alone, the suite builds it.
    top_make MPI=mpich programs lib >"$BATS_FILE_TMPDIR/build.log" 2>&1 ||
        { cat "$BATS_FILE_TMPDIR/build.log" >&2; return 1; }
    cc -O2 -shared -fPIC -o "$BATS_FILE_TMPDIR/yield.so" "$TOP/tests/mpich/yield.c" -ldl
}

# header_version: MAJOR.MINOR.PATCH of sort/sortex.h, which names the library's file (Makefile).
header_version() {
    sed -n 's/^#define SORTEX_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
        "$TOP/sort/sortex.h" | paste -sd.
}

# mpi NP CMD...: MPICH's mpiexec instead of Open MPI's mpirun, with the same timeout.
mpi() {
    local np=$1
    shift
    timeout --kill-after=10 "$SORTEX_TEST_TIMEOUT" \
        mpiexec.mpich -n "$np" -genv LD_PRELOAD "$BATS_FILE_TMPDIR/yield.so" "$@"
}

@test "make MPI=mpich builds against MPICH, and mpicc stays Open MPI's" {
    run -0 "$SORTEX" --version
    assert_line --regexp '^built against: MPICH '
    run -0 ldd "$SORTEX"
    assert_output --partial libmpich.so
    refute_output --partial libmpi.so
    run -0 ldd "$MPICH_BUILD/lib/libsortex.so.$(header_version)"
    assert_output --partial libmpich.so
    # The default build is Open MPI's whatever else is installed (tools/deps.sh sees to it).
    run -0 mpicc --showme:version
    assert_output --partial "Open MPI"
    run -0 "$SORTEX_BIN/sortex" --version
    assert_line --regexp '^built against: Open MPI '
}

@test "each build refuses the other MPI's launcher, which would start one-rank jobs" {
    local in
    in=$(gen_input uniform 1000 2)
    run --separate-stderr timeout 60 mpiexec.mpich -n 3 "$SORTEX_BIN/sortex" --input "$in" \
        --output "$BATS_TEST_TMPDIR/o.bin"
    assert_equal "$status" 2
    assert_equal "$stderr" "sortex: error: the launcher started 3 processes but MPI sees a job of \
one: launch sortex with its own MPI's launcher (Open MPI's mpirun)"
    run --separate-stderr timeout 60 mpirun -q -np 2 "$SORTEX" --input "$in" \
        --output "$BATS_TEST_TMPDIR/o.bin"
    assert_equal "$status" 2
    assert_regex "$stderr" "MPI sees a job of one: launch sortex with its own MPI's launcher \
\(MPICH's mpiexec, mpiexec.mpich on Debian\)"
    assert_not_exists "$BATS_TEST_TMPDIR/o.bin"
}

@test "tools/deps.sh sets mpicc and mpirun back to Open MPI's when MPICH's have taken them" {
    # A stand-in update-alternatives: "mpi" (mpicc) set by hand to MPICH's, "mpirun" Open MPI's;
    # it records what deps.sh asks of it. The machine's own alternatives are not touched.
    [[ $(id -u) -eq 0 ]] || skip "deps.sh sets alternatives only as root"
    local fake=$BATS_TEST_TMPDIR/fake
    mkdir -p "$fake"
    cat >"$fake/update-alternatives" <<'SH'
#!/bin/bash
if [[ $1 == --query ]]; then
    [[ $2 == mpi ]] && echo "Value: /usr/bin/mpicc.mpich" || echo "Value: /usr/bin/mpirun.openmpi"
    exit 0
fi
echo "$*" >>"$(dirname "$0")/calls"
SH
    chmod +x "$fake/update-alternatives"
    PATH=$fake:$PATH run -0 "$TOP/tools/deps.sh"
    assert_output --partial "mpi pointed to /usr/bin/mpicc.mpich; set back"
    run -0 cat "$fake/calls"
    assert_output "--quiet --set mpi /usr/bin/mpicc.openmpi"
}

@test "MPICH: every back-end sorts at P = 1 to 5" {
    # Every (back-end, P) pair once; the input walks through distributions and sizes (0 keys
    # and fewer keys than ranks among them), so each P meets several of each.
    local list backend np k=0 dists=(uniform zipf staggered dd few) sizes=(30011 0 3 30011)
    list=$(backends)
    for backend in $list; do
        for np in 1 2 3 4 5; do
            sort_case "$np" "$backend" "${dists[$((k % 5))]}" "${sizes[$((k % 4))]}"
            k=$((k + 1))
        done
    done
    assert_equal "$k" "$((5 * $(wc -l <<<"$list")))"
}

@test "MPICH: signed, floating-point, gensort and odd-layout records sort, records stably" {
    local in
    SORT_FORMAT="--format i64" sort_case 3 forward uniform 20011
    SORT_FORMAT="--format f64" sort_case 4 grid gaussian 20011
    SORT_FORMAT="--format gensort" sort_case 5 alltoallv gensort 20011
    in=$(SORT_FORMAT="--format gensort" gen_input gensort 20011 5)
    stable_sort_of "$in" "$BATS_TEST_TMPDIR/out.bin" 100 0 10
    # 13-byte records, a 5-byte key at offset 3, at most 16 distinct keys.
    SORT_FORMAT="--record-size 13 --key-offset 3 --key-size 5" sort_case 3 direct few 20011
    in=$(SORT_FORMAT="--record-size 13 --key-offset 3 --key-size 5" gen_input few 20011 3)
    stable_sort_of "$in" "$BATS_TEST_TMPDIR/out.bin" 13 3 5
}

@test "MPICH: root I/O sorts files with both scatter schemes, and writes standard output" {
    local in out=$BATS_TEST_TMPDIR/piped.bin
    sort_case 3 alltoallv uniform 100003 --io root
    sort_case 5 pairwise staggered 100003 --io rootv
    # Standard output: through MPICH's mpiexec, which forwards rank 0's (sort/io_root.c writes
    # straight into Open MPI's mpirun only), 4 MB here.
    in=$(gen_input uniform 500000 4)
    mpi 4 "$SORTEX" --io root --input "$in" --output - >"$out"
    run -0 "$VERIFY" "$out" --input "$in"
    assert_output --partial "verdict:   valid"
}

@test "MPICH: programs built with pkg-config or CMake against the MPICH install sort" {
    local prefix=$BATS_FILE_TMPDIR/prefix exe=$BATS_TEST_TMPDIR/use_sortex in soname
    run -0 top_make MPI=mpich install PREFIX="$prefix"
    soname=$(readlink "$prefix/lib/libsortex.so")
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig LD_LIBRARY_PATH=$prefix/lib
    run -0 pkg-config --print-requires sortex
    assert_output mpich
    # shellcheck disable=SC2046 # pkg-config's flags are words
    run -0 mpicc.mpich -Wall -Wextra -Werror -o "$exe" "$TOP/tests/install/use_sortex.c" \
        $(pkg-config --cflags --libs sortex)
    run -0 ldd "$exe"
    assert_line --partial "$soname => $prefix/lib/$soname"
    in=$(gen_input zipf 200003 3)
    run -0 mpi 3 "$exe" "$in" "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin" shift
    assert_line --regexp '^memory: 200003 keys, imbalance'
    run -0 "$VERIFY" "$BATS_TEST_TMPDIR/file.bin" --input "$in"
    run -0 "$VERIFY" "$BATS_TEST_TMPDIR/memory.bin" --input "$in"
    # The layout records of the library, in memory, stably.
    in=$(SORT_FORMAT="--record-size 13 --key-offset 3 --key-size 5" gen_input few 30011 3)
    rm -f "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin"
    run -0 mpi 3 "$exe" "$in" "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin" \
        hypercube 13:3:5
    assert_line --regexp '^memory: 30011 records, imbalance'
    stable_sort_of "$in" "$BATS_TEST_TMPDIR/memory.bin" 13 3 5
    cmp "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin"
    # find_package(sortex) of the MPICH install brings MPICH, whichever mpicc is the default.
    run -0 cmake -S "$TOP/tests/install" -B "$BATS_TEST_TMPDIR/cmake" -DCMAKE_PREFIX_PATH="$prefix"
    assert_output --partial "on MPICH, from $prefix/lib/cmake/sortex"
    run -0 cmake --build "$BATS_TEST_TMPDIR/cmake" --target use_sortex
    run -0 ldd "$BATS_TEST_TMPDIR/cmake/use_sortex"
    assert_output --partial libmpich.so
    refute_output --partial libmpi.so
    in=$(gen_input uniform 100003 2)
    rm -f "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin"
    run -0 mpi 2 "$BATS_TEST_TMPDIR/cmake/use_sortex" "$in" "$BATS_TEST_TMPDIR/file.bin" \
        "$BATS_TEST_TMPDIR/memory.bin"
    run -0 "$VERIFY" "$BATS_TEST_TMPDIR/memory.bin" --input "$in"
    # The Python module of this install cannot run on Debian's mpi4py, which is Open MPI's: it
    # says so instead of calling into a second MPI.
    PYTHONPATH=$prefix/lib/python3/dist-packages run /usr/bin/python3 -c "import sortex"
    assert_failure
    assert_output --partial "$soname is built against another MPI than mpi4py (Open MPI"
    assert_output --partial "both libmpi and libmpich are loaded"
}

@test "MPICH: the exchange benchmark runs every back-end and says why Open MPI's rows are missing" {
    local res=$BATS_TEST_TMPDIR/results n list
    # The ranks yield as mpi runs them (bench/run's mpiexec.mpich passes the environment on).
    LD_PRELOAD=$BATS_FILE_TMPDIR/yield.so run -0 "$TOP/bench/run" --smoke --suites exchange \
        --bin "$MPICH_BUILD/bin" --results "$res" --no-plots
    assert_output --partial "no ompi-linear and ompi-pairwise rows: they force Open MPI's"
    list=$(backends)
    n=$(wc -l <<<"$list")
    # Every back-end on each of the smoke scale's 3 patterns and 2 volumes, every key intact, no
    # Open MPI row; the launcher and the MPI recorded beside the figures.
    run -0 python3 - "$res/exchange/sizes-p2.csv" "$n" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == int(sys.argv[2]) * 3 * 2, len(rows)
assert all(r["valid"] == "1" for r in rows), rows
assert not [r for r in rows if r["backend"].startswith("ompi-")], rows
meta = json.load(open(sys.argv[1][:-4] + ".meta.json"))
assert meta["launcher_command"].startswith("mpiexec.mpich "), meta["launcher_command"]
assert meta["mpi"].startswith("MPICH"), meta["mpi"]
assert meta["ompi_baselines"] == {} and "MPICH" in meta["ompi_baselines_skipped"], meta
print("rows", len(rows))
PY
    assert_output --regexp '^rows [0-9]+$'
}

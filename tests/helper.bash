# tests/helper.bash: shared set-up of every Bats suite, and every helper more than one file uses.
#
# Loads Debian's bats-support, bats-assert and bats-file; finds the binaries; offers mpi and
# run_mpi, through which every MPI job of the suite runs, with everything running here needs
# (root, oversubscription, a timeout); run_unit for the C unit tests; inputs, sorts and their
# checks; the checks of a job that must fail (one error line, nothing written); jobs stalled on
# purpose (stall_then); and the emulated cluster's set-up (tests/cluster/).

bats_load_library bats-support
bats_load_library bats-assert
bats_load_library bats-file

TOP=$(cd "$(dirname "${BATS_TEST_FILENAME}")/.." && pwd)
: "${SORTEX_BIN:=$TOP/bin}"
: "${SORTEX_BUILD:=$TOP/build/release}"
export SORTEX_BIN SORTEX_BUILD
SORTEX=$SORTEX_BIN/sortex
GEN=$SORTEX_BIN/sortex-gen
VERIFY=$SORTEX_BIN/sortex-verify

# Open MPI refuses root without these; they are harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Quiet, single-node defaults; vader (shared memory) + self is what one host uses.
# Naming the one-host transports spares each launch probing the others (UCX, OFI, openib), a
# third of a two-rank start-up (commit 808d88a). A test that wants more (the emulated cluster's
# TCP) says so on its command line, which wins over these.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-cma}
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}

# Seconds one MPI job may take before it is killed (a hang is a failure, not a stall).
: "${SORTEX_TEST_TIMEOUT:=120}"
export SORTEX_TEST_TIMEOUT

# mpi NP ARGS...: an MPI job of NP ranks: mpirun (or $MPIRUN, such as the emulated cluster's)
# with oversubscription, unbound ranks and the timeout SORTEX_TEST_TIMEOUT; ARGS are more mpirun
# options (-q, --stdin none, --timeout S), then the program and its arguments. Exported, so that
# a job can run under a command that changes its environment (env, taskset) or in a pipeline
# (bash -c 'mpi ... | head').
mpi() {
    local np=$1
    shift
    timeout --kill-after=10 "$SORTEX_TEST_TIMEOUT" \
        "${MPIRUN:-mpirun}" -np "$np" --oversubscribe --bind-to none "$@"
}
export -f mpi

# run_mpi NP ARGS...: mpi under Bats' run ($status, $output).
run_mpi() {
    run mpi "$@"
}

# mpi_stdin NP CMD...: an MPI job whose rank 0 reads the job's standard input. mpirun --stdin
# none: rank 0 reads mpirun's standard input itself, not through Open MPI 4.x's forwarding,
# which can crash mpirun (open-mpi/ompi#7483; the README's "Standard input and output").
mpi_stdin() {
    local np=$1
    shift
    mpi "$np" --stdin none "$@"
}

# run_unit [-np NP] PROGRAM [ARGS...]: runs the C unit test PROGRAM (tests/unit/PROGRAM.c, on the
# harness of tests/unit/test.h), through mpi on NP ranks when NP is given, under
# run --separate-stderr ($output, $stderr). ARGS are test names (none: every test) and KEY=VALUE
# parameters. Fails, showing what the program printed, unless it exits 0, its summary line counts
# at least one test run and none failed, and every test named printed "ok NAME".
run_unit() {
    local launch=() bin prog name
    if [[ $1 == -np ]]; then
        launch=(mpi "$2")
        shift 2
    fi
    prog=$1
    bin=$SORTEX_BUILD/tests/$prog
    shift
    [[ -x $bin ]] || fail "missing $bin (make unit builds it)"
    run --separate-stderr "${launch[@]}" "$bin" "$@"
    if [[ $status -ne 0 ]] || ! grep -qE "^$prog: [1-9][0-9]* ran, 0 failed, " <<<"$output"; then
        fail "$(printf '%s exited %d:\n%s\n%s' "$prog $*" "$status" "$output" "$stderr")"
    fi
    for name in "$@"; do
        [[ $name == *=* ]] || grep -qxF "ok $name" <<<"$output" ||
            fail "$(printf '%s: no "ok %s" line:\n%s' "$prog" "$name" "$output")"
    done
}

# top_make ARGS...: make in the source tree with the variables a `make test` around us was given
# (NATIVE=1 ...: MAKEFLAGS carries them after " --"), so that it finds what that built instead of
# building again under the other suites' feet, but not under its jobserver, whose descriptors are
# not ours. Run alone, after a plain `make`, it works on that build.
top_make() {
    local vars=()
    # shellcheck disable=SC2162 # without -r: MAKEFLAGS escapes a blank in a value as "\ "
    [[ ${MAKEFLAGS:-} == *" -- "* ]] && read -a vars <<<"${MAKEFLAGS#* -- }"
    env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$TOP" --no-print-directory "${vars[@]}" "$@"
}

# A loop over a list a program printed must not pass by running zero times. So the helpers that
# print such lists fail, with a line saying why, when the program fails or lists too few items;
# and a test takes the list into a variable before its loop (list=$(backends)), where a failure
# fails the test, as it would not in a for's word list (for x in $(backends)).

# ran_ok WHAT CMD...: runs CMD and prints its output, or fails with a line naming WHAT.
ran_ok() {
    local what=$1 out
    shift
    out=$("$@") || { echo "$what: the command failed: $*" >&2; return 1; }
    printf '%s\n' "$out"
}

# at_least MIN WHAT: copies stdin, a list of one item a line, to stdout; fails with a line
# naming WHAT when it has fewer than MIN items.
at_least() {
    local min=$1 what=$2 out count
    out=$(cat)
    count=$(grep -c . <<<"$out") || true
    ((count >= min)) || { echo "$what: $count listed, at least $min expected" >&2; return 1; }
    printf '%s\n' "$out"
}

# The back-ends registered in the binary, one per line (the test matrix is driven by this); the
# README's table has 9.
backends() {
    local help
    help=$(ran_ok "back-ends" "$SORTEX" --exchange help) || return 1
    awk 'NR > 1 && NF { print $1 }' <<<"$help" | at_least 9 "back-ends"
}

# sha256 of a file, for "the input is unchanged" checks.
checksum() {
    sha256sum "$1" | cut -d' ' -f1
}

# Number of 8-byte keys in a file.
nkeys() {
    echo $(($(stat -c %s "$1") / 8))
}

# The key distributions datagen knows, one per line (16 in --list's first table); with yes or
# no, only the seeded or the unseeded ones (at least 14 and 2).
distributions() {
    local list want=${1:-} min=16
    [[ $want == yes ]] && min=14
    [[ $want == no ]] && min=2
    list=$(ran_ok "distributions" "$GEN" --list) || return 1
    awk -v want="$want" '($2 == "yes" || $2 == "no") && (want == "" || $2 == want) { print $1 }' \
        <<<"$list" | at_least "$min" "distributions${want:+ (seeded: $want)}"
}

# The record format of the inputs gen_input makes and sort_case sorts and verifies: format
# flags as one word list ("--format gensort", "--record-size 13 --key-offset 3 --key-size 5");
# empty for 8-byte keys.
SORT_FORMAT=

# gen_input DIST N P [SEED]: prints the path of a generated input, cached for the test file.
gen_input() {
    local dist=$1 n=$2 p=$3 seed=${4:-1} fmt=${SORT_FORMAT// /}
    local f=$BATS_FILE_TMPDIR/in-$dist-$n-$p-$seed$fmt.bin
    if [[ $n -eq 0 ]]; then
        : >"$f" # datagen refuses n = 0; an empty input is an empty file
    elif [[ ! -f $f ]]; then
        # shellcheck disable=SC2086 # the format flags are words
        "$GEN" --dist "$dist" --n "$n" --ranks "$p" --seed "$seed" $SORT_FORMAT -o "$f" \
            >/dev/null ||
            { echo "datagen failed: $dist n=$n P=$p" >&2; return 1; }
    fi
    echo "$f"
}

# sort_case NP BACKEND DIST N [sortex options...]: generates, sorts on NP ranks, verifies the
# output against the input (order, count, checksum) and checks the input is unchanged. Leaves
# the stats JSON in $BATS_TEST_TMPDIR/stats.json. Prints the case and fails on any problem.
sort_case() {
    local np=$1 backend=$2 dist=$3 n=$4
    shift 4
    local case="P=$np exchange=$backend dist=$dist n=$n $SORT_FORMAT $*"
    local in out=$BATS_TEST_TMPDIR/out.bin sum
    in=$(gen_input "$dist" "$n" "$np") || return 1
    sum=$(checksum "$in")
    sort_file "$np" "$backend" "$in" "$out" "$BATS_TEST_TMPDIR/stats.json" "$@" ||
        { echo "sort failed: $case" >&2; return 1; }
    verified "$out" "$in" || { echo "verify failed: $case" >&2; return 1; }
    if [[ $(checksum "$in") != "$sum" ]]; then
        echo "input changed: $case" >&2
        return 1
    fi
}

# verified OUT IN: sortex-verify says OUT is IN sorted (order, count, permutation checksum), both
# files of the format $SORT_FORMAT; otherwise fails with the verifier's report.
verified() {
    # shellcheck disable=SC2086 # the format flags are words
    "$VERIFY" "$1" --input "$2" $SORT_FORMAT >"$BATS_TEST_TMPDIR/verify.log" 2>&1 ||
        { echo "not IN sorted: $1 ($2)" >&2; cat "$BATS_TEST_TMPDIR/verify.log" >&2; return 1; }
}

# sort_file NP BACKEND IN OUT STATS [sortex options...]: sorts IN (format $SORT_FORMAT) on NP
# ranks with BACKEND into OUT (removed first), the stats in STATS; prints the case and the log on
# failure.
sort_file() {
    local np=$1 backend=$2 in=$3 out=$4 stats=$5
    shift 5
    rm -f "$out"
    # shellcheck disable=SC2086 # the format flags are words
    if ! mpi "$np" "$SORTEX" --input "$in" --output "$out" --exchange "$backend" \
        --stats "$stats" $SORT_FORMAT "$@" >"$BATS_TEST_TMPDIR/sort.log" 2>&1; then
        echo "sort failed: P=$np exchange=$backend input=$in $SORT_FORMAT $*" >&2
        cat "$BATS_TEST_TMPDIR/sort.log" >&2
        return 1
    fi
}

# sort_with NP BACKEND IN [sortex options...]: sort_file into $BATS_TEST_TMPDIR/out-BACKEND.bin,
# the stats in stats-BACKEND.json.
sort_with() {
    sort_file "$1" "$2" "$3" "$BATS_TEST_TMPDIR/out-$2.bin" "$BATS_TEST_TMPDIR/stats-$2.json" \
        "${@:4}"
}

# json_get PATH: reads one JSON object on stdin and prints the field at PATH ("order.first_bad").
json_get() {
    python3 -c '
import json, sys
v = json.load(sys.stdin)
for part in sys.argv[1].split("."):
    v = v[part]
print(json.dumps(v) if isinstance(v, (bool, type(None), dict, list)) else v)' "$1"
}

# stat_field EXPR [FILE]: a value from a stats file (default the last stats.json): a python
# expression on d, the document, and e, its exchange_stats.
stat_field() {
    python3 -c "import json, sys
d = json.load(open(sys.argv[1])); e = d.get('exchange_stats')
print($1)" "${2:-$BATS_TEST_TMPDIR/stats.json}"
}

# check_balance N P: the imbalance is within the sort's guarantee (1+eps) n/P + P.
check_balance() {
    local n=$1 p=$2
    python3 - "$BATS_TEST_TMPDIR/stats.json" "$n" "$p" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); p = int(sys.argv[3])
bound = (1 + d["epsilon_bound"]) * n / p + p
worst = max(r["n_out"] for r in d["ranks"])
assert d["epsilon_bound"] <= d["epsilon"] + 1e-9, ("bound above epsilon", d["epsilon_bound"])
if worst > bound:
    sys.exit(f"imbalance: a rank holds {worst} keys > bound {bound:.1f} (n={n}, P={p})")
PY
}

# stable_sort_of IN OUT R O K: fails unless OUT is IN's R-byte records sorted stably by their
# K-byte key at offset O, compared with coreutils' stable sort of the records as hex lines (a
# reference that shares nothing with sortex).
stable_sort_of() {
    local in=$1 out=$2 r=$3 o=$4 k=$5
    cmp <(xxd -p -c "$r" "$in" | LC_ALL=C sort -s -k "1.$((2 * o + 1)),1.$((2 * (o + k)))" |
        xxd -r -p) "$out"
}

# ---- inputs, and jobs that must fail --------------------------------------------------------

# setup_input N [SEED]: IN, a file of N uniform random keys (sortex-gen, seed SEED, default 1)
# in the test's directory; SUM, its checksum; OUT, an output name beside it, not yet there.
setup_input() {
    IN=$BATS_TEST_TMPDIR/in.bin
    OUT=$BATS_TEST_TMPDIR/out.bin
    "$GEN" --dist uniform --n "$1" --seed "${2:-1}" -o "$IN" >/dev/null
    SUM=$(checksum "$IN")
}

# no_temp_left [DIR]: no temporary file of sortex under DIR (default the test's directory):
# neither an output's (NAME.sortex-tmp.*) nor the external sort's (.sortex-ext.*).
no_temp_left() {
    local left
    left=$(find "${1:-$BATS_TEST_TMPDIR}" -name '*sortex-tmp*' -o -name '.sortex-ext.*')
    [[ -z $left ]] || { echo "left behind: $left" >&2; return 1; }
}

# nothing_written [DIR]: no file under the output name $OUT, no temporary file under DIR
# (no_temp_left), and the input $IN as it was ($SUM, setup_input).
nothing_written() {
    assert_file_not_exists "$OUT"
    no_temp_left "${1:-$BATS_TEST_TMPDIR}"
    assert_equal "$(checksum "$IN")" "$SUM"
}

# one_error_line PATTERN [PROGRAM]: $stderr (of run --separate-stderr, mpirun -q) is exactly one
# line, PROGRAM's error line (default sortex) matching "^PROGRAM: error: .*PATTERN".
one_error_line() {
    assert_equal "$(printf '%s\n' "$stderr" | grep -c .)" 1
    assert_regex "$stderr" "^${2:-sortex}: error: .*$1"
}

# refused PROGRAM MESSAGE CMD...: CMD exits 2, printing nothing on standard output and one line on
# standard error, "PROGRAM: error: MESSAGE" ($output, $stderr as run --separate-stderr leaves them).
refused() {
    local prog=$1 want=$2
    shift 2
    # A usage error ends every rank by itself: mpirun (Open MPI) need not wait the 2 s it
    # gives ranks between SIGTERM and SIGKILL when a job fails.
    local -x OMPI_MCA_odls_base_sigkill_timeout=0
    run -2 --separate-stderr "$@"
    assert_equal "${#stderr_lines[@]}" 1
    assert_equal "${stderr_lines[0]}" "$prog: error: $want"
    assert_output ""
}

# mount_small SIZE: SMALL, a tmpfs of SIZE (mount's size=, as 256k) in the test's directory, for
# a file system that fills up; skips the test where none can be mounted. unmount_small, in
# teardown, takes away whatever a test mounted there.
mount_small() {
    SMALL=$BATS_TEST_TMPDIR/small
    mkdir -p "$SMALL"
    mount -t tmpfs -o "size=$1" tmpfs "$SMALL" 2>/dev/null || skip "cannot mount a tmpfs here"
}
unmount_small() {
    if [[ -n ${SMALL:-} ]] && mountpoint -q "$SMALL"; then
        umount "$SMALL"
    fi
}

# ---- waiting, and jobs stalled on purpose ---------------------------------------------------

# Microseconds since the epoch, for measuring how fast a job ends.
now_us() {
    echo "${EPOCHREALTIME/./}"
}

# wait_for FILE REGEX SECONDS: waits until a line of FILE matches, or fails after SECONDS.
wait_for() {
    local deadline=$((SECONDS + $3))
    until grep -q "$2" "$1" 2>/dev/null; do
        if ((SECONDS >= deadline)); then
            echo "no line matching '$2' in $1 after $3 s:" >&2
            cat "$1" >&2
            return 1
        fi
        sleep 0.05
    done
}

# wait_gone PID...: waits until each process has ended (gone, or a zombie), 10 s at most each.
# mpirun may return before the ranks it signalled have ended (they are left to init).
wait_gone() {
    local pid state
    for pid in "$@"; do
        for _ in $(seq 200); do
            state=$(ps -o stat= -p "$pid" 2>/dev/null || true)
            [[ -z $state || $state == Z* ]] && break
            sleep 0.05
        done
    done
}

# mpirun_of PID: the mpirun that process PID is or started, at any depth (a job started as
# `mpi ... &` runs it under timeout).
mpirun_of() {
    local pid=$1
    until [[ $(ps -o comm= -p "$pid") == mpirun ]]; do
        pid=$(pgrep -P "$pid" | head -n 1)
        [[ -n $pid ]] || { echo "no mpirun under process $1" >&2; return 1; }
    done
    echo "$pid"
}

# stall_then ACTION SPEC CMD...: runs CMD (a job: mpi NP -q PROGRAM ARGS..., a program, or
# cluster_sort IN) in the background with SORTEX_STALL=SPEC, its standard error in $log. Once a
# process announces its stall ("... pid N stalling ..."), runs ACTION (a command line, eval'd;
# $rank_pid is the first process that stalled, $mpirun_pid its parent: a job's own mpirun, never
# another job's), then waits for the job: its exit status in $rc, the time it ended in $ended
# (now_us). Returns once the stalled process has ended too (wait_gone).
stall_then() {
    local action=$1 spec=$2
    shift 2
    log=$BATS_TEST_TMPDIR/job.log
    : >"$log"
    SORTEX_STALL=$spec "$@" 2>"$log" &
    local job=$!
    wait_for "$log" stalling 30
    rank_pid=$(grep -oP 'pid \K[0-9]+' "$log" | head -n 1)
    mpirun_pid=$(ps -o ppid= -p "$rank_pid" | tr -d ' ')
    eval "$action"
    rc=0
    wait "$job" || rc=$?
    ended=$(now_us)
    wait_gone "$rank_pid"
}

# assert_failed_within MS: the job ended with a failure of its own ($rc: not 0, nor the
# timeout's 124, or 137 after its SIGKILL) within MS milliseconds ($ms).
assert_failed_within() {
    assert [ "$rc" -ne 0 -a "$rc" -ne 124 -a "$rc" -ne 137 ]
    assert [ "$ms" -lt "$1" ]
}

# ---- the emulated cluster (tests/cluster/) --------------------------------------------------

CLUSTER=$TOP/tests/cluster/cluster.sh

# cluster_setup_file: for setup_file: where the emulated cluster cannot be made here, exports
# CLUSTER_UNAVAILABLE, the reason, and returns 1.
cluster_setup_file() {
    local reason
    reason=$("$CLUSTER" check 2>&1) && return 0
    export CLUSTER_UNAVAILABLE=${reason#cluster: unavailable: }
    return 1
}

# cluster_skip: for setup: skips the test, with the reason, where the cluster cannot be made.
cluster_skip() {
    [[ -z ${CLUSTER_UNAVAILABLE:-} ]] || skip "emulated cluster unavailable: $CLUSTER_UNAVAILABLE"
}

# cluster_up ARGS...: a cluster owned by this test (its watchdog removes it should the test
# process die), its CLUSTER_* variables exported here, its prefix added to PREFIXES, and its
# mpirun the one mpi runs (MPIRUN).
cluster_up() {
    local exports
    exports=$("$CLUSTER" up --owner $$ --state "$BATS_TEST_TMPDIR/cluster" "$@")
    eval "$exports"
    PREFIXES+=("$CLUSTER_PREFIX")
    MPIRUN=$CLUSTER_MPIRUN
}

# cluster_down_all: for teardown: takes down every cluster still up whose state is in the test's
# directory (a failed test leaves them).
cluster_down_all() {
    [[ -z ${CLUSTER_UNAVAILABLE:-} ]] || return 0
    local state
    for state in "$BATS_TEST_TMPDIR"/*/prefix; do
        if [[ -f $state ]]; then
            "$CLUSTER" --state "${state%/prefix}" down
        fi
    done
}

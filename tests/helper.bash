# tests/helper.bash: shared set-up of every Bats suite.
#
# Loads Debian's bats-support, bats-assert and bats-file; finds the binaries; offers run_mpi,
# which runs an MPI job with everything running here needs (root, oversubscription, a timeout).

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
# Naming the one-host transports spares each launch probing the others (UCX, OFI, openib):
# 0.33 s instead of 0.54 s for two ranks. A test that wants more (the emulated cluster's TCP)
# says so on its command line, which wins over these.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-cma}
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}

# Seconds one MPI job may take before it is killed (a hang is a failure, not a stall).
: "${SORTEX_TEST_TIMEOUT:=120}"

# run_mpi NP CMD...: mpirun with oversubscription, unbound ranks and a timeout.
mpi() {
    local np=$1
    shift
    timeout --kill-after=10 "$SORTEX_TEST_TIMEOUT" \
        mpirun -np "$np" --oversubscribe --bind-to none "$@"
}
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
    local in out sum
    in=$(gen_input "$dist" "$n" "$np") || return 1
    out=$BATS_TEST_TMPDIR/out.bin
    rm -f "$out"
    sum=$(checksum "$in")
    # shellcheck disable=SC2086 # the format flags are words
    if ! mpi "$np" "$SORTEX" --input "$in" --output "$out" --exchange "$backend" \
        --stats "$BATS_TEST_TMPDIR/stats.json" $SORT_FORMAT "$@" >"$BATS_TEST_TMPDIR/sort.log" 2>&1; then
        echo "sort failed: $case" >&2
        cat "$BATS_TEST_TMPDIR/sort.log" >&2
        return 1
    fi
    # shellcheck disable=SC2086
    if ! "$VERIFY" "$out" --input "$in" $SORT_FORMAT >"$BATS_TEST_TMPDIR/verify.log" 2>&1; then
        echo "verify failed: $case" >&2
        cat "$BATS_TEST_TMPDIR/verify.log" >&2
        return 1
    fi
    if [[ $(checksum "$in") != "$sum" ]]; then
        echo "input changed: $case" >&2
        return 1
    fi
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

# stat_field EXPR: a value from the last stats.json (a python expression on d).
stat_field() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" \
        "$BATS_TEST_TMPDIR/stats.json"
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

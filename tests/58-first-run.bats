#!/usr/bin/env bats
# What a new user meets first: the README's commands as written, the default thread count, the
# stats file. Every sort is checked by the verifier.
# bats serial
bats_require_minimum_version 1.5.0
load helper

# readme_block WORDS...: the first sh block of the README, after "## Running", holding every
# one of WORDS.
readme_block() {
    python3 - "$TOP/README.md" "$@" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = text[text.index("\n## Running"):]
for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
    if all(w in block for w in sys.argv[2:]):
        print(block, end="")
        break
else:
    sys.exit("no such block")
PY
}

# laptop_sized BLOCK: every sortex-gen of BLOCK writes at most 100 MB (the sort then needs about
# twice that: "Memory" in the README), as a first example on a laptop should.
laptop_sized() {
    python3 - "$1" <<'PY'
import re, sys
units = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
gens = [l for l in sys.argv[1].splitlines() if "sortex-gen" in l]
assert gens, "no sortex-gen in the block"
for line in gens:
    n, unit = re.search(r"--n (\d+)([KMG]i?)?\b", line).groups()
    size = int(n) * units[unit or ""] * (100 if "gensort" in line else 8)
    assert size <= 100 * 10**6, f"{size / 1e6:.0f} MB: {line}"
PY
}

@test "the README's Running block works as written (with a smaller count)" {
    local block
    # The block after "## Running", laptop-sized, with 10^7 keys turned into 10^6 to stay quick.
    block=$(readme_block bin/sortex-gen mpirun sortex-verify)
    laptop_sized "$block"
    [[ $block == *"--n 10M "* ]] || fail "the count changed: adapt the substitution below"
    block=${block//--n 10M/--n 1M}
    cd "$BATS_TEST_TMPDIR"
    ln -s "$SORTEX_BIN" bin
    # As a new user's shell has it: none of the test harness's Open MPI settings.
    run env -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
        -u OMPI_MCA_rmaps_base_oversubscribe -u OMPI_MCA_hwloc_base_binding_policy \
        -u OMPI_MCA_pml -u OMPI_MCA_btl \
        bash -c "set -e; $block"
    assert_success
    assert_output --partial "verdict:   valid"
}

# threads_of NP [CMD...]: sorts on NP ranks (mpi), the job started under CMD (env, taskset: a
# command that runs its arguments), and prints the thread count the stats file records.
threads_of() {
    local np=$1 in out
    shift
    in=$(gen_input uniform 100000 1)
    out=$BATS_TEST_TMPDIR/out.bin
    "$@" bash -c 'mpi "$@"' mpi "$np" "$SORTEX" --input "$in" --output "$out" \
        --stats "$BATS_TEST_TMPDIR/t.json" >/dev/null 2>&1 || return 1
    "$VERIFY" "$out" --input "$in" >/dev/null || return 1
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["threads"])' \
        "$BATS_TEST_TMPDIR/t.json"
}

@test "the README's gensort block generates, sorts and verifies, as written (with fewer records)" {
    local block
    block=$(readme_block "--dist gensort")
    laptop_sized "$block"
    [[ $block == *"bin/sortex "* && $block == *"sortex-verify"* ]] ||
        fail "the block does not sort what it verifies: $block"
    [[ $block == *"--n 1M "* ]] || fail "the count changed: adapt the substitution below"
    block=${block//--n 1M/--n 10K}
    cd "$BATS_TEST_TMPDIR"
    ln -s "$SORTEX_BIN" bin
    run bash -c "set -e; $block"
    assert_success
    assert_output --partial "SUCCESS - all records are in order"
    assert_output --partial "verdict:   valid"
}

@test "the default thread count follows OMP_NUM_THREADS, Slurm's CPUs per task and the affinity mask" {
    local cpus
    cpus=$(nproc)
    run threads_of 1 env -u OMP_NUM_THREADS
    assert_output "$cpus"
    run threads_of 1 env -u OMP_NUM_THREADS taskset -c 0
    assert_output "1"
    run threads_of 1 env OMP_NUM_THREADS=3
    assert_output "3"
    run threads_of 1 env -u OMP_NUM_THREADS SLURM_CPUS_PER_TASK=2
    assert_output "2"
    # Two unbound ranks share the node's CPUs; bound to a core each, each has one.
    run threads_of 2 env -u OMP_NUM_THREADS
    assert_output "$((cpus / 2 > 0 ? cpus / 2 : 1))"
}

@test "the stats file names the command line and the time of the sort" {
    local in
    in=$(gen_input uniform 10000 2)
    run_mpi 2 "$SORTEX" --input "$in" --output "$BATS_TEST_TMPDIR/o.bin" --stats \
        "$BATS_TEST_TMPDIR/stats.json" --epsilon 0.2
    assert_success
    run stat_field 'd["command"].endswith("--epsilon 0.2"), d["time"][:2], d["time"][-1]'
    assert_output "True 20 Z"
}

@test "--progress reports a long phase every 2 s with its rate and time left, then every phase" {
    local in
    in=$(gen_input uniform 1000000 2)
    # Rank 0 holds the read back for 5 s after its first chunk: a slow read to watch.
    SORTEX_STALL=read-chunk:0:5 run --separate-stderr mpi 2 -q "$SORTEX" --input "$in" \
        --output "$BATS_TEST_TMPDIR/o.bin" --progress
    assert_success
    run -0 "$VERIFY" "$BATS_TEST_TMPDIR/o.bin" --input "$in"
    local ongoing
    ongoing=$(printf '%s\n' "$stderr" | grep -cE '^sortex: \[1/8\] +read +[0-9.]+ s \.\.\.  100%  4 MB of 4 MB  [0-9]+ (M|G)B/s  ETA [0-9.]+ s$' || true)
    ((ongoing >= 2))
    for phase in read local_sort sample splitters bucket exchange finish write; do
        assert_regex "$stderr" "sortex: \[[1-8]/8\] +$phase +[0-9.]+ s"
    done
}

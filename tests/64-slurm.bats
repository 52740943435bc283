#!/usr/bin/env bats
# Slurm: sortex under a real Slurm (Debian's slurmctld, slurmd and munge) that tests/slurm/slurm.sh
# starts on this machine for the file, with a configuration, key, state and ports of its own, and
# stops at the end: the README's batch script through sbatch, srun launching the ranks through
# Slurm's PMIx, mpirun inside an allocation, and the threads under srun -c. Every output is
# checked by sortex-verify. Skips, with the reason, where a private Slurm cannot run (not root).
bats_require_minimum_version 1.5.0
load helper

SLURM=$TOP/tests/slurm/slurm.sh

setup_file() {
    local reason exports
    if ! reason=$("$SLURM" check 2>&1); then
        export SLURM_UNAVAILABLE=${reason#slurm: unavailable: }
        return 0
    fi
    # Taken down by teardown_file, or by slurm.sh itself if this Bats process ends first. A
    # Slurm that does not start fails every test here, with its daemons' last log lines.
    exports=$("$SLURM" up --owner $$) || return 1
    eval "$exports"
    export SLURM_CONF TEST_SLURM_STATE
}

teardown_file() {
    if [[ -n ${TEST_SLURM_STATE:-} ]]; then
        "$SLURM" down "$TEST_SLURM_STATE"
    fi
}

setup() {
    if [[ -n ${SLURM_UNAVAILABLE:-} ]]; then
        skip "a private Slurm cannot run here: $SLURM_UNAVAILABLE"
    fi
    # The programs as a user's PATH has them; jobs get this environment (sbatch --export=ALL).
    export PATH=$SORTEX_BIN:$PATH
    # More ranks and threads than cores: Open MPI yields when it waits, as mpirun would tell it.
    export OMPI_MCA_mpi_yield_when_idle=1
    unset OMP_NUM_THREADS
}

# submit SBATCH-ARGS...: submits a batch job and waits for its end (sbatch --wait looks after 2 s,
# then after 10); prints its final state and exit code, "COMPLETED 0:0" when it succeeded.
submit() {
    local job state i
    job=$(sbatch --parsable "$@") || return 1
    for ((i = 0; i < 1200; i++)); do
        state=$(scontrol show job -o "$job" |
            sed -n 's/.*JobState=\([A-Z_]*\).* ExitCode=\([0-9:]*\).*/\1 \2/p')
        case $state in
        PENDING* | RUNNING* | CONFIGURING* | COMPLETING* | "") sleep 0.1 ;;
        *) echo "$state"; return 0 ;;
        esac
    done
    echo "job $job did not end: $state"
    return 1
}

@test "sbatch runs the README's batch script, and its output passes sortex-verify" {
    # The script is the README's code block that starts with "#!/bin/bash" and "# sortex.sbatch".
    awk '/^```sh$/ { getline; if ($0 == "#!/bin/bash") { on = 1; buf = $0; next } }
        on && /^```$/ { on = 0; if (buf ~ /# sortex.sbatch/) { print buf; exit } }
        on { buf = buf "\n" $0 }' "$TOP/README.md" >"$BATS_TEST_TMPDIR/sortex.sbatch"
    run -0 grep -c '^#SBATCH' "$BATS_TEST_TMPDIR/sortex.sbatch"
    [[ $output -ge 3 ]]
    local in out=$BATS_TEST_TMPDIR/out.bin
    in=$(gen_input zipf 300007 4)
    cd "$BATS_TEST_TMPDIR"
    run -0 submit --output=job.log sortex.sbatch "$in" "$out"
    assert_output "COMPLETED 0:0"
    run -0 cat job.log
    assert_output --partial "verdict:   valid"
    run -0 "$VERIFY" "$out" --input "$in"
    # 4 tasks of 2 CPUs: 4 ranks of 2 threads.
    run -0 stat_field 'd["P"], d["threads"]' "$out.json"
    assert_output "4 2"
}

@test "srun starts the ranks itself through Slurm's PMIx" {
    local in out=$BATS_TEST_TMPDIR/out.bin
    in=$(gen_input uniform 500009 3)
    run -0 timeout 120 srun --mpi=pmix -n 3 -c 1 sortex --input "$in" --output "$out" \
        --stats "$BATS_TEST_TMPDIR/s.json"
    run -0 "$VERIFY" "$out" --input "$in"
    run -0 stat_field 'd["P"], d["threads"]' "$BATS_TEST_TMPDIR/s.json"
    assert_output "3 1"
    # Without PMIx (Slurm's default here, MpiDefault=none) Open MPI refuses to start, and nothing
    # is written.
    rm -f "$out"
    run timeout 120 srun -n 2 sortex --input "$in" --output "$out"
    assert_failure
    assert_not_exists "$out"
}

@test "mpirun inside a Slurm allocation starts its ranks through Slurm" {
    local in out=$BATS_TEST_TMPDIR/out.bin
    in=$(gen_input staggered 500009 2)
    cd "$BATS_TEST_TMPDIR"
    run -0 submit -n 2 -c 1 --output=job.log --wrap \
        "mpirun --bind-to none sortex --input $in --output $out --stats s.json"
    assert_output "COMPLETED 0:0"
    run -0 "$VERIFY" "$out" --input "$in"
    run -0 stat_field 'd["P"], d["threads"]' s.json
    assert_output "2 1"
}

@test "threads default to srun -c, and OMP_NUM_THREADS still wins" {
    local in c
    in=$(gen_input uniform 100003 1)
    for c in 1 2 3; do
        run -0 timeout 120 srun --mpi=pmix -n 1 -c "$c" sortex --input "$in" \
            --output "$BATS_TEST_TMPDIR/out$c.bin" --stats "$BATS_TEST_TMPDIR/s$c.json"
        run -0 stat_field 'd["threads"]' "$BATS_TEST_TMPDIR/s$c.json"
        assert_output "$c"
        run -0 "$VERIFY" "$BATS_TEST_TMPDIR/out$c.bin" --input "$in"
    done
    OMP_NUM_THREADS=1 run -0 timeout 120 srun --mpi=pmix -n 1 -c 3 sortex --input "$in" \
        --output "$BATS_TEST_TMPDIR/out.bin" --stats "$BATS_TEST_TMPDIR/s.json"
    run -0 stat_field 'd["threads"]' "$BATS_TEST_TMPDIR/s.json"
    assert_output 1
}

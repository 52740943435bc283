#!/usr/bin/env bats
# Signals at the worst moment, and a rank that freezes: a signal to mpirun before the rename or
# during the write, a rank stopped in the exchange. The job ends; no temporary file is left; an
# output, if any, is a complete sort.
# bats serial
bats_require_minimum_version 1.5.0
load helper

setup() {
    setup_input 1000000 5
}

@test "a signal to mpirun before the rename leaves neither the output nor a temporary file" {
    local sig
    for sig in TERM INT HUP; do
        stall_then "kill -$sig \$mpirun_pid" commit:0:60 mpi 3 -q "$SORTEX" --input "$IN" \
            --output "$OUT"
        [[ $rc -ne 0 ]]
        nothing_written
    done
}

@test "a signal during the write leaves no temporary file, and any output is a complete sort" {
    local big=$BATS_TEST_TMPDIR/big.bin trial io delay sig job mpirun_pid tmp ranks
    "$GEN" --dist uniform --n 8000000 -o "$big" >/dev/null
    # Rank 0 holds the rename back for 30 s (SORTEX_STALL=commit): from the moment its
    # temporary file appears, the job is in its write phase until the signal ends it. The
    # signal goes out when that file is seen, after a delay: at 0 it lands in the collective
    # write (64 MB take ~0.2 s), later ones in the write's end or at the commit.
    for trial in "mpiio 0 TERM" "mpiio 0.05 INT" "mpiio 0.15 HUP" "mpiio 0.5 TERM" \
        "root 0 INT" "root 0.1 TERM"; do
        read -r io delay sig <<<"$trial"
        rm -f "$OUT"
        SORTEX_STALL=commit:0:30 mpi 3 -q "$SORTEX" --input "$big" --output "$OUT" --io "$io" \
            2>"$BATS_TEST_TMPDIR/job.log" &
        job=$!
        tmp=
        for _ in $(seq 1000); do
            # The sort's own temporary name (MPI-IO may add files of its own beside it).
            tmp=$(compgen -G "$BATS_TEST_TMPDIR/.out.bin.sortex-tmp.*" |
                grep -E '/\.out\.bin\.sortex-tmp\.[0-9]+-[0-9a-f]+$' || true)
            [[ -n $tmp ]] && break
            sleep 0.01
        done
        [[ -n $tmp ]] || fail "$trial: no temporary file appeared"
        sleep "$delay"
        # The trial interrupts the write: the temporary file is there, the output is not yet.
        mpirun_pid=$(mpirun_of "$job")
        ranks=$(pgrep -P "$mpirun_pid" | tr '\n' ' ')
        [[ -n $ranks ]] || fail "$trial: no ranks under mpirun $mpirun_pid"
        assert_file_exists "$tmp"
        assert_file_not_exists "$OUT"
        kill -"$sig" "$mpirun_pid"
        rc=0
        wait "$job" || rc=$?
        [[ $rc -ne 0 && $rc -ne 124 ]] || fail "$trial: the job exited $rc"
        # shellcheck disable=SC2086 # the ranks' pids are words
        wait_gone $ranks
        no_temp_left || fail "$trial: a temporary file was left behind"
        if [[ -e $OUT ]]; then
            run "$VERIFY" "$OUT" --input "$big"
            assert_success
        fi
    done
}

@test "a frozen rank is ended by mpirun --timeout with nothing written" {
    local start
    stall_then 'kill -STOP "$rank_pid"; start=$(date +%s)' exchange:1:60 mpi 3 -q --timeout 5 \
        "$SORTEX" --input "$IN" --output "$OUT"
    [[ $rc -ne 0 ]]
    (($(date +%s) - start <= 20))
    nothing_written
}

#!/usr/bin/env bats
# The emulated multi-host cluster (tests/cluster/): hosts made of network namespaces, MPI jobs
# across them over TCP, lost hosts and links, rate limits, and a clean teardown every time.
# Skips, with the reason, where network namespaces cannot be made.
# bats serial
bats_require_minimum_version 1.5.0
load helper

setup_file() {
    cluster_setup_file || return 0
    # One probe binary for the whole file.
    PROBE=$("$CLUSTER" build-probe "$BATS_FILE_TMPDIR")
    export PROBE
}

setup() {
    cluster_skip
    ROOT_BEFORE=$(root_namespace)
    PREFIXES=()
}

# Every test leaves nothing behind: no namespace or hosts file of its clusters, and the root
# namespace exactly as it was (links, addresses, routes).
teardown() {
    [[ -z ${CLUSTER_UNAVAILABLE:-} ]] || return 0
    local pfx
    # Clusters a failed test left up (every cluster of a test has its state under its tmpdir).
    cluster_down_all
    for pfx in "${PREFIXES[@]}"; do
        assert_nothing_left "$pfx"
    done
    assert_equal "$(root_namespace)" "$ROOT_BEFORE"
}

# The root namespace's links, addresses and routes (what the cluster must never change).
root_namespace() {
    ip -o link show | awk '{ print $2, $3 }'
    ip -o addr show | awk '{ print $2, $3, $4 }'
    ip route show
}

assert_nothing_left() {
    local pfx=$1
    run -0 bash -c "ip netns list | awk '{ print \$1 }' | grep '^$pfx-' || true"
    assert_output ""
    run -0 bash -c "ls -d /etc/netns/$pfx-* /tmp/ompi.$pfx-* /dev/shm/vader_segment.$pfx-* 2>/dev/null || true"
    assert_output ""
}

# start_probe OUT: a never-ending probe job on all slots in the background (pid in JOB_PID),
# returning once it is busy exchanging data.
start_probe() {
    local out=$1
    mpi "$CLUSTER_NP" "$PROBE" --mib 1 --forever >"$out" 2>&1 3>&- &
    JOB_PID=$!
    wait_for "$out" '^round 3 done' 30
}

# probe_broken_by CMD...: a probe job on 3 hosts (start_probe), busy exchanging data, until CMD
# breaks the cluster. Leaves the job's exit status in $rc and the milliseconds from CMD to the
# job's end in $ms, and shows what the job printed.
probe_broken_by() {
    local t0
    cluster_up --hosts 3
    start_probe "$BATS_TEST_TMPDIR/job.out"
    rc=0
    t0=$(now_us)
    "$@"
    wait "$JOB_PID" || rc=$?
    ms=$((($(now_us) - t0) / 1000))
    cat "$BATS_TEST_TMPDIR/job.out"
}

@test "check says network namespaces work here, and names root as the need otherwise" {
    run -0 "$CLUSTER" check
    assert_output --partial "work here"
    run -1 setpriv --reuid=65534 --regid=65534 --clear-groups "$CLUSTER" check
    assert_output --partial "need root"
}

@test "rejects unknown commands, bad options and missing clusters with exit code 2" {
    run -2 "$CLUSTER" frobnicate
    assert_output --partial "unknown command (frobnicate)"
    run -2 "$CLUSTER" up --hosts 0
    assert_output --partial "--hosts must be 1..200 (0)"
    run -2 "$CLUSTER" up --hosts 2 --subnet 8.8.8
    assert_output --partial "must be private"
    run -2 "$CLUSTER" up --hosts 2 --duplex third
    assert_output --partial "--duplex must be full or half (third)"
    run -2 "$CLUSTER" up --hosts 2 --duplex half
    assert_output --partial "--duplex half needs --rate"
    run -2 env -u CLUSTER_STATE "$CLUSTER" counters
    assert_output --partial "no cluster given"
}

@test "gives each host its own name, address and hosts file, in namespaces only" {
    cluster_up --hosts 3
    run -0 "$CLUSTER_EXEC" "$CLUSTER_PREFIX-h2" \
        sh -c 'hostname; ip -br -4 addr show eth0; getent hosts "$0"' "$CLUSTER_PREFIX-h3"
    assert_line --index 0 "$CLUSTER_PREFIX-h2"
    assert_line --index 1 --regexp '^eth0@if[0-9]+ +UP +10\.213\.0\.2/24'
    assert_line --index 2 --regexp "^10\.213\.0\.3 +$CLUSTER_PREFIX-h3$"
    # The names exist only inside the hosts.
    run -2 getent hosts "$CLUSTER_PREFIX-h3"
    run -0 cat "$CLUSTER_HOSTFILE"
    assert_output "$(printf '%s slots=2\n' $CLUSTER_HOSTS)"
}

@test "runs a job on 3 hosts x 2 ranks whose alltoall crosses every link" {
    cluster_up --hosts 3 --slots 2
    run -0 mpi 6 "$PROBE" --mib 1 --iters 2
    assert_line "hosts 3"
    local i r
    for ((r = 0; r < 6; r++)); do
        assert_line "rank $r of 6 on $CLUSTER_PREFIX-h$((r / 2 + 1))"
    done
    assert_line "alltoall ok"
    # Each host's 2 ranks sent 1 MiB to each of 4 remote ranks, twice: 16 MiB each way per link.
    run -0 "$CLUSTER" counters
    echo "$output"
    for ((i = 1; i <= 3; i++)); do
        read -r _ tx rx < <(grep "^$CLUSTER_PREFIX-h$i " <<<"$output")
        assert [ "$tx" -ge $((16 << 20)) -a "$rx" -ge $((16 << 20)) ]
    done
}

@test "fails the job within 10 s when every process of one host is killed" {
    probe_broken_by "$CLUSTER" kill-host 2
    echo "# kill-host: job exited with $rc after $ms ms" >&3
    assert_failed_within 10000
}

@test "aborts the job within 15 s when one host's link goes down" {
    probe_broken_by "$CLUSTER" link-down 3
    echo "# link-down: job exited with $rc after $ms ms" >&3
    assert_failed_within 15000
    run -0 grep -c "lost communication with a remote daemon" "$BATS_TEST_TMPDIR/job.out"
    # And with the cable back in, the same cluster runs jobs again.
    "$CLUSTER" link-up 3
    run -0 mpi 6 "$PROBE" --mib 0.25
    assert_line "alltoall ok"
}

@test "fails a job within 10 s when one host is unreachable at launch" {
    cluster_up --hosts 3
    "$CLUSTER" link-down 2
    local t0 rc=0 ms
    t0=$(now_us)
    mpi 6 "$PROBE" >"$BATS_TEST_TMPDIR/job.out" 2>&1 || rc=$?
    ms=$((($(now_us) - t0) / 1000))
    echo "# unreachable at launch: job exited with $rc after $ms ms" >&3
    cat "$BATS_TEST_TMPDIR/job.out"
    assert_failed_within 10000
}

@test "slows a 20 MiB exchange down to the configured link rate" {
    local fast slow
    cluster_up --hosts 2 --slots 1
    run -0 mpi 2 "$PROBE" --mib 10
    fast=$(awk '/^alltoall mib/ { print $NF }' <<<"$output")
    "$CLUSTER" down
    cluster_up --hosts 2 --slots 1 --rate 50mbit
    run -0 mpi 2 "$PROBE" --mib 10
    slow=$(awk '/^alltoall mib/ { print $NF }' <<<"$output")
    # 10 MiB each way over 50 Mbit/s takes 1.68 s at best; loose bounds keep this stable.
    echo "# 20 MiB exchange: ${fast} s unlimited, ${slow} s at 50mbit (1.68 s ideal)" >&3
    awk -v f="$fast" -v s="$slow" 'BEGIN { exit !(s >= 1.2 && s > 2 * f) }'
}

@test "a half-duplex link shares its rate between what a host sends and what it receives" {
    local full half
    cluster_up --hosts 2 --slots 1 --rate 50mbit
    run -0 mpi 2 "$PROBE" --mib 10
    full=$(awk '/^alltoall mib/ { print $NF }' <<<"$output")
    "$CLUSTER" down
    cluster_up --hosts 2 --slots 1 --rate 50mbit --duplex half
    run -0 "$CLUSTER" status
    assert_output --partial "(half duplex)"
    run -0 mpi 2 "$PROBE" --mib 10
    assert_line "alltoall ok"
    half=$(awk '/^alltoall mib/ { print $NF }' <<<"$output")
    # Each host sends 10 MiB and receives 10 MiB: 1.68 s at best when the directions have a
    # rate each, 3.36 s when they share one. Loose bounds keep this stable.
    echo "# 20 MiB exchange at 50mbit: ${full} s full duplex, ${half} s half duplex" >&3
    awk -v f="$full" -v h="$half" 'BEGIN { exit !(h >= 2.4 && h > 1.4 * f) }'
}

@test "runs two clusters side by side with the same subnet without collisions" {
    "$CLUSTER" up --hosts 2 --slots 1 --owner $$ --state "$BATS_TEST_TMPDIR/a" >/dev/null
    "$CLUSTER" up --hosts 2 --slots 1 --owner $$ --state "$BATS_TEST_TMPDIR/b" >/dev/null
    PREFIXES+=("$(cat "$BATS_TEST_TMPDIR/a/prefix")" "$(cat "$BATS_TEST_TMPDIR/b/prefix")")
    MPIRUN=$BATS_TEST_TMPDIR/a/mpirun mpi 2 "$PROBE" --mib 4 --iters 3 \
        >"$BATS_TEST_TMPDIR/a.out" 2>&1 3>&- &
    local pid=$!
    MPIRUN=$BATS_TEST_TMPDIR/b/mpirun run -0 mpi 2 "$PROBE" --mib 4 --iters 3
    assert_line "alltoall ok"
    wait "$pid"
    run -0 cat "$BATS_TEST_TMPDIR/a.out"
    assert_line "alltoall ok"
    "$CLUSTER" --state "$BATS_TEST_TMPDIR/a" down
    "$CLUSTER" --state "$BATS_TEST_TMPDIR/b" down
}

@test "with runs a command on a fresh cluster and removes it, passing the exit status" {
    run -3 "$CLUSTER" with --hosts 2 --state "$BATS_TEST_TMPDIR/cluster" -- bash -c \
        'echo "prefix $CLUSTER_PREFIX"; MPIRUN=$CLUSTER_MPIRUN mpi 4 "$0" --mib 0.5; exit 3' \
        "$PROBE"
    assert_line "hosts 2"
    assert_line "alltoall ok"
    PREFIXES+=("$(awk '/^prefix / { print $2 }' <<<"$output")")
    assert_dir_not_exists "$BATS_TEST_TMPDIR/cluster"
}

@test "removes everything when up fails halfway or the owner is killed" {
    # tc rejects a zero rate after the namespaces exist: up must undo them.
    run -1 "$CLUSTER" up --hosts 3 --rate 0bit --prefix "sxf$$" --state "$BATS_TEST_TMPDIR/f"
    assert_output --partial "up failed; removing what it made"
    PREFIXES+=("sxf$$")
    assert_dir_not_exists "$BATS_TEST_TMPDIR/f"
    # A SIGKILLed "with" cannot clean up itself: its watchdog does, within a few seconds.
    "$CLUSTER" with --hosts 2 --prefix "sxk$$" --state "$BATS_TEST_TMPDIR/k" -- \
        sh -c 'echo $$ >"$0"; exec sleep 60' "$BATS_TEST_TMPDIR/cmd.pid" >/dev/null 2>&1 3>&- &
    local pid=$!
    PREFIXES+=("sxk$$")
    wait_for "$BATS_TEST_TMPDIR/cmd.pid" . 10
    kill -KILL "$pid"
    local deadline=$((SECONDS + 10))
    while ip netns list | grep -q "^sxk$$-" && ((SECONDS < deadline)); do
        sleep 0.2
    done
    echo "# watchdog removed the cluster $((10 - deadline + SECONDS)) s after its owner died" >&3
    # The command outlives its killed parent; it is this test's own: end it by its pid.
    kill "$(cat "$BATS_TEST_TMPDIR/cmd.pid")"
    assert_nothing_left "sxk$$"
    assert_dir_not_exists "$BATS_TEST_TMPDIR/k"
}

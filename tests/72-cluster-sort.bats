#!/usr/bin/env bats
# The sort across an emulated cluster (tests/cluster/): 3 hosts x 2 ranks over TCP, every
# back-end verified; a host killed or its link pulled mid-exchange ends the job quickly with no
# output file. Skips, with the reason, where network namespaces cannot be made.
# bats serial
bats_require_minimum_version 1.5.0
load helper

CLUSTER=$TOP/tests/cluster/cluster.sh

setup_file() {
    local reason
    if ! reason=$("$CLUSTER" check 2>&1); then
        export CLUSTER_UNAVAILABLE=${reason#cluster: unavailable: }
    fi
}

setup() {
    [[ -z ${CLUSTER_UNAVAILABLE:-} ]] || skip "emulated cluster unavailable: $CLUSTER_UNAVAILABLE"
    eval "$("$CLUSTER" up --hosts 3 --slots 2 --owner $$ --state "$BATS_TEST_TMPDIR/cluster")"
    OUT=$BATS_TEST_TMPDIR/out.bin
}

teardown() {
    [[ -z ${CLUSTER_UNAVAILABLE:-} ]] || return 0
    "$CLUSTER" --state "$BATS_TEST_TMPDIR/cluster" down
}

# cluster_sort IN [sortex options]: the sort on all 6 ranks of the cluster.
cluster_sort() {
    local in=$1
    shift
    timeout --kill-after=5 120 "$CLUSTER_MPIRUN" -np "$CLUSTER_NP" "$SORTEX" --input "$in" \
        --output "$OUT" "$@"
}

# stall_and KILLCMD: starts a sort whose rank 2 (on host 2) stalls in the exchange, runs
# KILLCMD once every rank is in place, and prints the job's exit code and milliseconds taken.
stall_and() {
    local in log=$BATS_TEST_TMPDIR/job.log t0 rc=0
    in=$(gen_input uniform 600000 6)
    SORTEX_STALL=exchange:2:60 cluster_sort "$in" >"$log" 2>&1 &
    local job=$!
    for _ in $(seq 300); do
        grep -q "rank 2 pid" "$log" && break
        sleep 0.1
    done
    grep -q "rank 2 pid" "$log"
    sleep 1 # the other ranks reach the exchange
    t0=${EPOCHREALTIME/./}
    "$@"
    wait "$job" || rc=$?
    echo "$rc $(((${EPOCHREALTIME/./} - t0) / 1000))"
}

@test "sorts on 3 hosts x 2 ranks over TCP with every back-end, and the data crosses the links" {
    local in backend before after list
    list=$(backends)
    in=$(gen_input staggered 1000000 6)
    before=$("$CLUSTER" counters | awk -v h="$CLUSTER_PREFIX-h2" '$1 == h { print $2 }')
    for backend in $list; do
        rm -f "$OUT"
        run cluster_sort "$in" --exchange "$backend" --stats "$BATS_TEST_TMPDIR/stats.json"
        assert_success
        run "$VERIFY" "$OUT" --input "$in"
        assert_success
        run stat_field 'len({r["host"] for r in d["ranks"]})'
        assert_output "3"
    done
    after=$("$CLUSTER" counters | awk -v h="$CLUSTER_PREFIX-h2" '$1 == h { print $2 }')
    # Host 2's ranks hold a third of 8 MB and send most of it away, once per back-end.
    assert [ $((after - before)) -gt 2000000 ]
}

@test "sorts with root I/O across the hosts" {
    local in
    in=$(gen_input dd 300000 6)
    run cluster_sort "$in" --io root
    assert_success
    run "$VERIFY" "$OUT" --input "$in"
    assert_success
}

@test "killing every process of one host mid-exchange fails the job within 10 s, no output" {
    read -r rc ms < <(stall_and "$CLUSTER" kill-host 2)
    echo "# kill-host: exit $rc after $ms ms" >&3
    assert [ "$rc" -ne 0 -a "$rc" -ne 124 -a "$rc" -ne 137 ]
    assert [ "$ms" -lt 10000 ]
    assert_file_not_exists "$OUT"
}

@test "pulling one host's link mid-exchange aborts the job within 15 s, no output" {
    read -r rc ms < <(stall_and "$CLUSTER" link-down 3)
    echo "# link-down: exit $rc after $ms ms" >&3
    assert [ "$rc" -ne 0 -a "$rc" -ne 124 -a "$rc" -ne 137 ]
    assert [ "$ms" -lt 15000 ]
    assert_file_not_exists "$OUT"
}

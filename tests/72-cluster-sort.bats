#!/usr/bin/env bats
# The sort across an emulated cluster (tests/cluster/): 3 hosts x 2 ranks over TCP, every
# back-end verified; a host killed or its link pulled mid-exchange ends the job quickly with no
# output file. Skips, with the reason, where network namespaces cannot be made.
# bats serial
bats_require_minimum_version 1.5.0
load helper

setup_file() {
    cluster_setup_file || true
}

setup() {
    cluster_skip
    cluster_up --hosts 3 --slots 2
    OUT=$BATS_TEST_TMPDIR/out.bin
}

teardown() {
    cluster_down_all
}

# cluster_sort IN [sortex options]: the sort on all 6 ranks of the cluster.
cluster_sort() {
    local in=$1
    shift
    mpi "$CLUSTER_NP" "$SORTEX" --input "$in" --output "$OUT" "$@"
}

# broken_mid_exchange CMD...: a sort whose rank 2 (on host 2) stalls in the exchange; once every
# rank is in place, CMD breaks the cluster. Leaves the job's exit status in $rc and the
# milliseconds from CMD to the job's end in $ms.
broken_mid_exchange() {
    local in t0 breaker=("$@")
    in=$(gen_input uniform 600000 6)
    # The other ranks reach the exchange within the second before the cluster breaks.
    stall_then 'sleep 1; t0=$(now_us); "${breaker[@]}"' exchange:2:60 cluster_sort "$in"
    ms=$(((ended - t0) / 1000))
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
    broken_mid_exchange "$CLUSTER" kill-host 2
    echo "# kill-host: exit $rc after $ms ms" >&3
    assert_failed_within 10000
    assert_file_not_exists "$OUT"
}

@test "pulling one host's link mid-exchange aborts the job within 15 s, no output" {
    broken_mid_exchange "$CLUSTER" link-down 3
    echo "# link-down: exit $rc after $ms ms" >&3
    assert_failed_within 15000
    assert_file_not_exists "$OUT"
}

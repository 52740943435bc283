#!/usr/bin/env bats
# tests/15-localsort.bats: the node-local kernels (local_sort, local_merge_runs) through
# their C unit test binary; every case is compared with glibc qsort of the same input.

bats_require_minimum_version 1.5.0
load helper

UNIT=$SORTEX_BUILD/tests/test_localsort

# unit GROUP: runs one group of cases; passes when every case of the group passed.
unit() {
    run --separate-stderr "$UNIT" "$1"
    assert_success
    assert_output --regexp "^$1: [0-9]+ cases, 0 failed$"
}

@test "sorts every distribution of 0 to 1000 keys with 1 and 2 threads" {
    unit small
}

@test "sorts every distribution around each threshold of the process tuning, with either kernel" {
    # The kernel the tuning picks, then the other one forced: both kernels at this machine's
    # caches, with one sweep fewer than the picked kernel forced again would cost.
    local picked other
    unit thresholds
    picked=$(grep -oP '^tuning: kernel \K(radix|vqsort)(?=,)' <<<"$stderr")
    [[ $picked == radix || $picked == vqsort ]] || fail "no kernel in the tuning line: $stderr"
    other=radix
    [[ $picked == radix ]] && other=vqsort
    SORTEX_KERNEL=$other unit thresholds
    assert_regex "$stderr" "tuning: kernel $other,"
}

@test "reads the cache sizes at run time: a smaller L2 shrinks the radix kernel's buckets" {
    SORTEX_KERNEL=radix SORTEX_L2_BYTES=262144 unit thresholds
    assert_regex "$stderr" "tuning: kernel radix, bucket 8192 keys, spread 9 bits"
    SORTEX_KERNEL=radix SORTEX_L2_BYTES=2097152 unit thresholds
    assert_regex "$stderr" "tuning: kernel radix, bucket 65536 keys, spread 12 bits"
}

@test "sorts 10^6 keys of every distribution and 10^7 uniform and skewed keys" {
    unit large
}

@test "sorts inputs with one huge bucket correctly with 1 to 4 threads" {
    unit skewed
}

@test "refuses bad arguments with a usage error and accepts empty inputs" {
    unit errors
}

@test "merges 1 to 65 runs with empty runs and skewed sizes with 1, 2 and 3 threads" {
    unit merge
}

@test "merges duplicate-heavy runs exactly at every thread split" {
    unit merge-dups
}

@test "sorts records of every layout stably by key with 1 to 3 threads" {
    unit records
}

#!/usr/bin/env bats
# tests/15-localsort.bats: the node-local kernels (local_sort, local_merge_runs) through
# their C unit test binary; every case is compared with glibc qsort of the same input.

bats_require_minimum_version 1.5.0
load helper


@test "sorts every distribution of 0 to 1000 keys with 1 and 2 threads" {
    run_unit test_localsort small
}

@test "sorts every distribution around each threshold of the process tuning, with either kernel" {
    # The kernel the tuning picks, then the other one forced: both kernels at this machine's
    # caches, with one sweep fewer than the picked kernel forced again would cost.
    local picked other
    run_unit test_localsort thresholds
    picked=$(grep -oP '^tuning: kernel \K(radix|vqsort)(?=,)' <<<"$stderr")
    [[ $picked == radix || $picked == vqsort ]] || fail "no kernel in the tuning line: $stderr"
    other=radix
    [[ $picked == radix ]] && other=vqsort
    SORTEX_KERNEL=$other run_unit test_localsort thresholds
    assert_regex "$stderr" "tuning: kernel $other,"
}

@test "reads the cache sizes at run time: a smaller L2 shrinks the radix kernel's buckets" {
    SORTEX_KERNEL=radix SORTEX_L2_BYTES=262144 run_unit test_localsort thresholds
    assert_regex "$stderr" "tuning: kernel radix, bucket 8192 keys, spread 9 bits"
    SORTEX_KERNEL=radix SORTEX_L2_BYTES=2097152 run_unit test_localsort thresholds
    assert_regex "$stderr" "tuning: kernel radix, bucket 65536 keys, spread 12 bits"
}

@test "sorts 10^6 keys of every distribution and 10^7 uniform and skewed keys" {
    run_unit test_localsort large
}

@test "sorts inputs with one huge bucket correctly with 1 to 4 threads" {
    run_unit test_localsort skewed
}

@test "refuses bad arguments with a usage error and accepts empty inputs" {
    run_unit test_localsort errors
}

@test "merges 1 to 65 runs with empty runs and skewed sizes with 1, 2 and 3 threads" {
    run_unit test_localsort merge
}

@test "merges duplicate-heavy runs exactly at every thread split" {
    run_unit test_localsort merge_dups
}

@test "sorts records of every layout stably by key with 1 to 3 threads" {
    run_unit test_localsort records
}

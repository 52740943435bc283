/*
 * sort/local_sort.h: the node-local kernels of the sort module (internal header).
 *
 * Two kernels work on unsigned 64-bit keys inside one process:
 *   - sortex_local_sort(): an OpenMP-parallel radix sort, used for the "local sort" phase and
 *     for re-sorting the received pieces in the "finish" phase;
 *   - sortex_merge_runs(): a threaded multi-way merge of sorted runs, the other way to finish.
 *
 * Neither allocates big buffers: the caller allocates the key arrays once (util_alloc_big) and
 * reuses them; the kernels only take small bookkeeping arrays from util_malloc().
 * Both are callable from C++ (the benchmark baselines link against them).
 */
#ifndef SORTEX_SORT_LOCAL_SORT_H
#define SORTEX_SORT_LOCAL_SORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Tuning constants of sortex_local_sort(), chosen by measurement on the project machine (see
 * the comments in local_sort.c). They are here so that the unit tests can straddle them.
 */
/**
 * Buckets of at most this many keys are sorted inside the cache: 2^17 keys plus their scratch
 * fill the 2 MiB L2 of the project machine. 2^17 measured ~15% faster than 2^16 and 2^15 on 10^8
 * uniform keys (fewer spread buckets), 2^18 and 2^19 no faster.
 */
#define SORTEX_CACHE_KEYS ((size_t)1 << 17)
/** Buckets of at most this many keys are sorted by insertion. */
#define SORTEX_SMALL_KEYS ((size_t)32)
/** Inputs below this many keys are sorted by one thread; also the smallest parallel bucket. */
#define SORTEX_PAR_MIN_KEYS ((size_t)1 << 17)
/** Merges of fewer keys than this run on one thread. */
#define SORTEX_MERGE_PAR_MIN ((size_t)1 << 16)
/**
 * Finishing P sorted runs: sortex_merge_runs() is faster than sortex_local_sort() of the
 * concatenation up to about this many runs, slower beyond. Measured on 10^7 and 10^8 uniform
 * keys in equal and Zipf-sized runs, 1 and 2 threads (CPU time): the merge is 4.3x faster for
 * 2 runs, 1.5-2x for 4-16, 1.2x for 32; at 64 it wins by 20% on 10^7 keys and ties (within 6%)
 * on 10^8; from 128 runs on re-sorting wins (by 10-45%). Measured before the merge worked
 * from both ends, which made it 1.2-1.6x faster up to 32 runs and left 64 as it was, so the
 * crossover has not moved down.
 */
#define SORTEX_MERGE_MAX_RUNS 64

/**
 * Sorts @keys[0..n) ascending in place with @threads OpenMP threads.
 *
 * @scratch must hold @n keys, must not overlap @keys, and is clobbered; the sorted result is
 * always in @keys. Both arrays belong to the caller, who should pre-touch them (util_pretouch):
 * page faults inside the sort are counted in its time. Already sorted and reverse-sorted input
 * are detected in one read-only pass (reverse input is then reversed in place).
 *
 * Returns 0, or UTIL_EUSAGE when @threads < 1 or a pointer is NULL while @n > 1. It does not
 * fail for lack of memory: when its small bookkeeping arrays (~40 KiB per thread) cannot
 * be allocated it finishes the sort on one thread, which needs none. Never exits, prints
 * nothing.
 */
int sortex_local_sort(uint64_t *keys, uint64_t *scratch, size_t n, int threads);

/**
 * Merges @runs sorted runs into @out with @threads OpenMP threads.
 *
 * @in holds the runs back to back: run r has @run_counts[r] keys (zero is fine) and starts
 * where run r-1 ends; each run must be sorted ascending (not checked). @out receives all
 * sum(run_counts) keys in ascending order; it must not overlap @in. The output is split into
 * @threads equal parts by exact multi-sequence selection, so the parts are independent and
 * balanced whatever the duplicates; each part is merged with a loser tree (a branch-free
 * two-way merge when only two runs are left in it), from both ends at once up to 32 runs.
 *
 * Returns 0, UTIL_EUSAGE when @runs < 0, @threads < 1 or a needed pointer is NULL, or
 * UTIL_ENOMEM when its small bookkeeping arrays cannot be allocated (checked before any key is
 * written: @out is then untouched). Never exits and prints nothing.
 */
int sortex_merge_runs(const uint64_t *in, const uint64_t *run_counts, int runs, uint64_t *out,
                      int threads);

#ifdef __cplusplus
}
#endif

#endif

/*
 * local/internal.h: what the files of local/ share among themselves (not part of its contract,
 * local/local.h): the split of n items into parts, the in-cache LSD kernel, the merges' common
 * steps.
 */
#ifndef SORTEX_LOCAL_INTERNAL_H
#define SORTEX_LOCAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "local/config.h"
#include "local/local.h"

/* The first index of part @t of @n items split into @parts near-equal parts. */
static inline size_t local_part_begin(size_t n, size_t t, size_t parts)
{
    size_t q = n / parts, r = n % parts;
    return q * t + (t < r ? t : r);
}

/* Index of the highest set bit of @x (x != 0). */
static inline unsigned local_high_bit(uint64_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

/* The bits that differ between keys of a[0..n) (0: all keys are equal). */
uint64_t local_varying_bits(const uint64_t *a, size_t n);

/* The in-cache LSD radix sort of x[0..m) over the varying bits @vary, with y as scratch; the
 * result lands in y when @to_y, else in x (local/radix.c). */
void local_lsd_sort(uint64_t *x, uint64_t *y, size_t m, uint64_t vary, bool to_y);

/* The in-cache kernel the tuning @t chose on x[0..m): the result in y when @to_y, else in x
 * (local/kernel.c). */
void local_kernel_sort(uint64_t *x, uint64_t *y, size_t m, bool to_y, const struct local_tuning *t);

/* The merges' common steps (local/merge.c): a threaded copy of @total elements of @esize
 * bytes; the argument checks both merges make (0 with the element count in *@total, or
 * UTIL_EUSAGE); where each run starts and the first and last rows of the split table (parts + 1
 * rows of @runs: where part g starts in run r); the leaves of a tree for @runs sources. */
void local_merge_copy(void *out, const void *in, size_t total, size_t esize, int threads);
int local_runs_total(const void *in, const uint64_t *run_counts, int runs, const void *out,
                     int threads, size_t *total);
void local_runs_layout(const uint64_t *run_counts, int runs, size_t parts, size_t *begin,
                       size_t *split);
size_t local_tree_leaves(size_t runs);

#endif

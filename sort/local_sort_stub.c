/* Temporary stand-ins for the node-local kernels until the radix sort lands. */
#include <stdlib.h>
#include <string.h>

#include "sort/sortex.h"

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

int sortex_local_sort(uint64_t *keys, uint64_t *scratch, size_t n, int threads)
{
    (void)scratch;
    (void)threads;
    qsort(keys, n, sizeof(uint64_t), cmp_u64);
    return 0;
}

int sortex_merge_runs(const uint64_t *in, const uint64_t *run_counts, int runs, uint64_t *out,
                      int threads)
{
    size_t n = 0;
    for (int r = 0; r < runs; r++) {
        n += run_counts[r];
    }
    memcpy(out, in, n * sizeof(uint64_t));
    return sortex_local_sort(out, NULL, n, threads);
}

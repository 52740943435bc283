/*
 * local/kernel.c: the in-cache kernels the radix sort ends its buckets with (see local/local.h):
 * insertion sort for the smallest, an LSD radix sort over the varying bits, or Highway's vqsort
 * (local/vqsort.cc), whichever the tuning chose (local/tuning.c).
 */
#include <stdbool.h>
#include <string.h>

#include "local/internal.h"

#define LSD_BITS LOCAL_LSD_BITS
#define LSD_RADIX ((size_t)1 << LSD_BITS)
#define LSD_MASK ((uint64_t)LSD_RADIX - 1)
/* At most this many LSD digits: each starts at a varying bit at least LSD_BITS above the last. */
#define MAX_DIGITS ((64 + LSD_BITS - 1) / LSD_BITS)

uint64_t local_varying_bits(const uint64_t *a, size_t n)
{
    uint64_t and_all = ~(uint64_t)0, or_all = 0;
    for (size_t i = 0; i < n; i++) {
        and_all &= a[i];
        or_all |= a[i];
    }
    return and_all ^ or_all;
}

/* Straight insertion sort: the fastest for the few keys of the smallest buckets. */
static void insertion_sort(uint64_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/*
 * LSD radix sort of a cache-sized bucket x[0..m) whose differing bits are @vary (nonzero). The
 * result ends in y when @to_y, else in x; the other array is scratch. Digits start at varying
 * bits only, so constant stretches of bits cost nothing. Counts fit in 32 bits (m < 2^31).
 */
void local_lsd_sort(uint64_t *x, uint64_t *y, size_t m, uint64_t vary, bool to_y)
{
    unsigned shift[MAX_DIGITS];
    unsigned nd = 0;
    uint32_t count[MAX_DIGITS][LSD_RADIX];

    /* Digits: each starts at the lowest varying bit not yet covered. */
    for (uint64_t rest = vary; rest != 0;) {
        unsigned s = (unsigned)__builtin_ctzll(rest);
        shift[nd++] = s;
        rest = s + LSD_BITS >= 64 ? 0 : rest & (~(uint64_t)0 << (s + LSD_BITS));
    }

    /* All histograms in one pass. */
    memset(count, 0, nd * sizeof(count[0]));
    for (size_t i = 0; i < m; i++) {
        uint64_t v = x[i];
        for (unsigned d = 0; d < nd; d++) {
            count[d][(v >> shift[d]) & LSD_MASK]++;
        }
    }

    /* One stable counting scatter per digit, ping-ponging between x and y. */
    uint64_t *src = x, *dst = y;
    for (unsigned d = 0; d < nd; d++) {
        uint32_t *pos = count[d];
        uint32_t sum = 0;
        for (size_t b = 0; b < LSD_RADIX; b++) {
            uint32_t c = pos[b];
            pos[b] = sum;
            sum += c;
        }
        unsigned s = shift[d];
        for (size_t i = 0; i < m; i++) {
            uint64_t v = src[i];
            dst[pos[(v >> s) & LSD_MASK]++] = v;
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }

    /* An odd/even digit count may leave the result on the wrong side: one in-cache copy. */
    uint64_t *want = to_y ? y : x;
    if (src != want) {
        memcpy(want, src, m * sizeof(*src));
    }
}

/* The in-cache kernel on x[0..m): the result in y when @to_y, else in x. */
void local_kernel_sort(uint64_t *x, uint64_t *y, size_t m, bool to_y,
                        const struct local_tuning *t)
{
    uint64_t *dst = to_y ? y : x;
    if (t->kernel == LOCAL_KERNEL_VQSORT) {
        if (to_y) {
            memcpy(y, x, m * sizeof(*x));
        }
        local_vqsort_u64(dst, m);
        return;
    }
    if (m <= t->small_keys) {
        if (to_y) {
            memcpy(y, x, m * sizeof(*x));
        }
        insertion_sort(dst, m);
        return;
    }
    if (m >= LOCAL_LSD_MAX_KEYS) { /* only a caller's tuning gets here: 32-bit counts would wrap */
        if (to_y) {
            memcpy(y, x, m * sizeof(*x));
        }
        local_vqsort_u64(dst, m);
        return;
    }
    uint64_t vary = local_varying_bits(x, m);
    if (vary == 0) {
        if (to_y) {
            memcpy(y, x, m * sizeof(*x));
        }
        return;
    }
    local_lsd_sort(x, y, m, vary, to_y);
}


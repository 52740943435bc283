/*
 * sort/local_sort.c: the OpenMP-parallel radix sort of uint64 keys (see local_sort.h).
 *
 * Scheme, for n keys, T threads and b significant bits:
 *  1. Scan. One parallel read-only pass computes the AND and the OR of all keys and whether the
 *     input is non-decreasing or non-increasing. Sorted input stops here; reverse input is
 *     reversed in place (one more pass). Bits where AND == OR are equal in every key and are
 *     never looked at again, so keys sharing their top bytes (the "radix adversary") or their
 *     low bytes cost no extra pass. Cost: n reads.
 *  2. Spread. One parallel MSD counting pass on the top r varying bits, keys -> scratch, with r
 *     chosen so that the average bucket fits in L2 (n / 2^r <= CACHE_KEYS), and raised further
 *     where that saves every bucket an LSD digit (see par_sort()). Each thread counts
 *     its own contiguous chunk, one exclusive prefix over (bucket, thread) gives every thread
 *     private write positions, then each thread scatters its chunk: no atomics. Cost: 2n reads,
 *     n writes.
 *  3. Buckets. A bucket larger than a thread's fair share is sorted by all threads with the same
 *     scheme (recursively, scratch and keys swapping roles); the others are taken dynamically
 *     by the threads, largest first. A bucket larger than the cache gets sequential MSD passes
 *     of DIGIT_BITS; a cache-sized bucket gets an LSD radix sort over its own varying bits only
 *     (digits of LSD_BITS starting at varying bits, all histograms counted in one pass), and a
 *     tiny one insertion sort. Each bucket's result lands in the array the caller wants.
 *
 * Every level consumes at least one more significant bit, so recursion is bounded by 64 levels
 * (in practice one parallel level and at most a few sequential ones). For 10^8 uniform keys the
 * data crosses main memory about four times (scan, count, scatter, the bucket passes) and the
 * remaining ceil((64 - r) / 9) passes run inside L2. Few distinct values end early: a bucket
 * whose keys are all equal is recognised by its AND == OR and only copied.
 *
 * Background: MSD partitioning into cache-resident parts followed by LSD inside the cache, with
 * per-thread histograms for the parallel partitioning pass, is the layout studied by
 * Polychroniou & Ross, "A comprehensive study of main-memory partitioning and its application
 * to large-scale comparison- and radix-sort", SIGMOD 2014 (their partitioning passes and the
 * MSD-then-LSD radix sort built on them). Skipping the digits on which all keys agree is the
 * usual refinement of LSD radix sorts (as in ska_sort).
 */
#include "sort/local_sort.h"

#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/util.h"

/* The tuning constants of local_sort.h, under short names. */
#define CACHE_KEYS SORTEX_CACHE_KEYS
#define SMALL_KEYS SORTEX_SMALL_KEYS
#define PAR_MIN_KEYS SORTEX_PAR_MIN_KEYS
/* Widest digit of the parallel spread pass (4096 counters per thread stay in L1/L2). */
#define SPREAD_MAX_BITS 12
/* Digit of the sequential MSD passes over buckets larger than the cache. */
#define DIGIT_BITS 8
#define DIGIT_RADIX ((size_t)1 << DIGIT_BITS)
#define DIGIT_MASK ((uint64_t)DIGIT_RADIX - 1)
/* Digit of the in-cache LSD passes: 9 bits (6 passes for 54 bits) measured faster than 8 (7
 * passes) and 11 (5 passes, but 2048-way scatters). */
#define LSD_BITS 9
#define LSD_RADIX ((size_t)1 << LSD_BITS)
#define LSD_MASK ((uint64_t)LSD_RADIX - 1)
/* At most this many LSD digits: each starts at a varying bit at least LSD_BITS above the last. */
#define MAX_DIGITS ((64 + LSD_BITS - 1) / LSD_BITS)

/* What one read-only pass learns about the input. */
struct scan {
    uint64_t and_all;   /* AND of all keys */
    uint64_t or_all;    /* OR of all keys */
    bool ascending;     /* non-decreasing */
    bool descending;    /* non-increasing */
};

/* Index of the highest set bit of @x (x != 0). */
static unsigned high_bit(uint64_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

/* The first index of part @t of @n items split into @parts near-equal parts. */
static size_t part_begin(size_t n, size_t t, size_t parts)
{
    size_t q = n / parts, r = n % parts;
    return q * t + (t < r ? t : r);
}

/* Copies @n keys with @threads threads (one thread below the parallel threshold). */
static void copy_keys(uint64_t *dst, const uint64_t *src, size_t n, int threads)
{
    if (threads <= 1 || n < PAR_MIN_KEYS) {
        util_copy(dst, src, n * sizeof(*src));
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t lo = part_begin(n, t, nt), hi = part_begin(n, t + 1, nt);
        util_copy(dst + lo, src + lo, (hi - lo) * sizeof(*src));
    }
}

/* Step 1: AND, OR and monotonicity of a[0..n), n >= 1, in one parallel read-only pass. */
static void scan_keys(const uint64_t *a, size_t n, int threads, struct scan *s)
{
    uint64_t and_all = a[n - 1], or_all = a[n - 1];
    unsigned not_up = 0, not_down = 0;
#pragma omp parallel for num_threads(threads) if (threads > 1 && n >= PAR_MIN_KEYS) \
    schedule(static) reduction(& : and_all) reduction(| : or_all, not_up, not_down)
    for (size_t i = 0; i < n - 1; i++) {
        uint64_t x = a[i], y = a[i + 1];
        and_all &= x;
        or_all |= x;
        not_up |= x > y;
        not_down |= x < y;
    }
    s->and_all = and_all;
    s->or_all = or_all;
    s->ascending = !not_up;
    s->descending = !not_down;
}

/* The bits that differ between keys of a[0..n) (0: all keys are equal). */
static uint64_t varying_bits(const uint64_t *a, size_t n)
{
    uint64_t and_all = ~(uint64_t)0, or_all = 0;
    for (size_t i = 0; i < n; i++) {
        and_all &= a[i];
        or_all |= a[i];
    }
    return and_all ^ or_all;
}

/* Reverses a[0..n) in place. */
static void reverse_keys(uint64_t *a, size_t n, int threads)
{
#pragma omp parallel for num_threads(threads) if (threads > 1 && n >= PAR_MIN_KEYS) \
    schedule(static)
    for (size_t i = 0; i < n / 2; i++) {
        uint64_t t = a[i];
        a[i] = a[n - 1 - i];
        a[n - 1 - i] = t;
    }
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

/* How many LSD digits lsd_sort() takes for the varying bits @vary below bit @below: each digit
 * starts at the lowest varying bit not yet covered. */
static unsigned lsd_digits(uint64_t vary, unsigned below)
{
    uint64_t rest = below >= 64 ? vary : vary & (((uint64_t)1 << below) - 1);
    unsigned nd = 0;
    while (rest != 0) {
        unsigned s = (unsigned)__builtin_ctzll(rest);
        nd++;
        rest = s + LSD_BITS >= 64 ? 0 : rest & (~(uint64_t)0 << (s + LSD_BITS));
    }
    return nd;
}

/*
 * LSD radix sort of a cache-sized bucket x[0..m) whose differing bits are @vary (nonzero). The
 * result ends in y when @to_y, else in x; the other array is scratch. Digits start at varying
 * bits only, so constant stretches of bits cost nothing. Counts fit in 32 bits (m <= CACHE_KEYS).
 */
static void lsd_sort(uint64_t *x, uint64_t *y, size_t m, uint64_t vary, bool to_y)
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

/*
 * Sequential sort of x[0..m) into y (@to_y) or in place in x (!@to_y), the other array being
 * scratch: insertion sort for tiny buckets, LSD for cache-sized ones, otherwise one MSD pass on
 * the top DIGIT_BITS varying bits and recursion into the sub-buckets (roles of x and y swapped).
 */
static void seq_sort(uint64_t *x, uint64_t *y, size_t m, bool to_y)
{
    if (m <= SMALL_KEYS) {
        if (to_y) {
            memcpy(y, x, m * sizeof(*x));
            x = y;
        }
        insertion_sort(x, m);
        return;
    }
    uint64_t vary = varying_bits(x, m);
    if (vary == 0) {
        if (to_y) {
            memcpy(y, x, m * sizeof(*x));
        }
        return;
    }
    if (m <= CACHE_KEYS) {
        lsd_sort(x, y, m, vary, to_y);
        return;
    }

    /* One MSD counting pass x -> y on the top varying bits. */
    unsigned top = high_bit(vary) + 1;
    unsigned bits = top < DIGIT_BITS ? top : DIGIT_BITS;
    unsigned shift = top - bits;
    size_t nb = (size_t)1 << bits;
    uint64_t mask = nb - 1;
    size_t pos[DIGIT_RADIX] = {0};
    size_t start[DIGIT_RADIX + 1];
    for (size_t i = 0; i < m; i++) {
        pos[(x[i] >> shift) & mask]++;
    }
    size_t sum = 0;
    for (size_t b = 0; b < nb; b++) {
        start[b] = sum;
        sum += pos[b];
        pos[b] = start[b];
    }
    start[nb] = sum;
    for (size_t i = 0; i < m; i++) {
        uint64_t v = x[i];
        y[pos[(v >> shift) & mask]++] = v;
    }

    /* Sub-buckets now sit in y; each goes back to x unless the caller wants y. */
    for (size_t b = 0; b < nb; b++) {
        size_t c = start[b + 1] - start[b];
        seq_sort(y + start[b], x + start[b], c, !to_y);
    }
}

/*
 * Step 2: one parallel MSD counting pass x[0..m) -> y on digit (key >> shift) & (nb - 1).
 * Bucket b ends in y[start[b] .. start[b + 1]); @hist holds threads * nb counters of scratch.
 * Stable: thread t's keys of a bucket precede thread t+1's.
 *
 * The scatter writes straight into the nb output streams. Staging keys in per-bucket
 * cache-line buffers and writing whole lines (with streaming stores for big outputs), as the
 * Polychroniou & Ross paper does, was measured here and lost: ~35% more cycles in this pass at
 * 1 thread and no wall-time gain at 2 threads for 10^8 keys and 1024-2048 buckets.
 */
static void spread_pass(const uint64_t *x, uint64_t *y, size_t m, unsigned shift, size_t nb,
                        size_t *start, size_t *hist, int threads)
{
    const uint64_t mask = nb - 1;
#pragma omp parallel num_threads(threads)
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t lo = part_begin(m, t, nt), hi = part_begin(m, t + 1, nt);
        size_t *h = hist + t * nb;

        /* Count this thread's chunk. */
        memset(h, 0, nb * sizeof(*h));
        for (size_t i = lo; i < hi; i++) {
            h[(x[i] >> shift) & mask]++;
        }
#pragma omp barrier
        /* Exclusive prefix over (bucket, thread): private write positions for everyone. */
#pragma omp single
        {
            size_t sum = 0;
            for (size_t b = 0; b < nb; b++) {
                start[b] = sum;
                for (size_t u = 0; u < nt; u++) {
                    size_t c = hist[u * nb + b];
                    hist[u * nb + b] = sum;
                    sum += c;
                }
            }
            start[nb] = sum;
        }
        /* Scatter this thread's chunk (the single's barrier published the positions). */
        for (size_t i = lo; i < hi; i++) {
            uint64_t v = x[i];
            y[h[(v >> shift) & mask]++] = v;
        }
    }
}

/* A bucket of the spread pass, for scheduling the largest first. */
struct bucket {
    size_t begin;
    size_t count;
};

static int bucket_larger_first(const void *a, const void *b)
{
    const struct bucket *p = a, *q = b;
    return (p->count < q->count) - (p->count > q->count);
}

/*
 * Parallel sort of x[0..m) (differing bits @vary, nonzero) into y (@to_y) or in place in x,
 * the other array being scratch: step 2 into the opposite array, then step 3 on the buckets.
 */
static void par_sort(uint64_t *x, uint64_t *y, size_t m, uint64_t vary, bool to_y, int threads)
{
    size_t *hist = NULL, *start = NULL;
    struct bucket *order = NULL;

    /* Enough buckets for the average to fit in L2 and for the threads to share them out. */
    unsigned top = high_bit(vary) + 1;
    unsigned bits = 4;
    while ((1u << (bits - 4)) < (unsigned)threads && bits < SPREAD_MAX_BITS) {
        bits++;
    }
    while ((m >> bits) > CACHE_KEYS && bits < SPREAD_MAX_BITS) {
        bits++;
    }
    if (bits > top) {
        bits = top;
    }
    /* More buckets where that saves the buckets an LSD digit (each digit is a pass over every
     * key; an extra spread bit only makes the buckets smaller), as long as they keep at least
     * an eighth of CACHE_KEYS (the 512-way histograms must stay small beside them). Measured on
     * uniform keys, one thread: 2^24 to 2^26 keys spread on 8 or 9 bits (7 digits left; at 2^26
     * half the buckets also just above CACHE_KEYS, which cost them an extra MSD pass) ran 72-74
     * Mkeys/s; on 10 bits (6 digits), 91-95; 10^8 keys already got 10 bits. */
    unsigned cap = top < SPREAD_MAX_BITS ? top : SPREAD_MAX_BITS;
    unsigned best = bits;
    for (unsigned b = bits + 1; b <= cap && (m >> b) >= CACHE_KEYS / 8; b++) {
        if (lsd_digits(vary, top - b) < lsd_digits(vary, top - best)) {
            best = b;
        }
    }
    bits = best;
    size_t nb = (size_t)1 << bits;

    hist = util_malloc((size_t)threads * nb * sizeof(*hist));
    start = util_malloc((nb + 1) * sizeof(*start));
    order = util_malloc(nb * sizeof(*order));
    if (hist == NULL || start == NULL || order == NULL) {
        /* No bookkeeping memory: the sequential sort needs none, so it still gets sorted. */
        seq_sort(x, y, m, to_y);
        goto done;
    }
    spread_pass(x, y, m, top - bits, nb, start, hist, threads);

    /* Buckets above a thread's fair share (by a margin) are sorted by all threads together. */
    size_t big = m / (8 * (size_t)threads);
    if (big < PAR_MIN_KEYS) {
        big = PAR_MIN_KEYS;
    }
    size_t nsmall = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t c = start[b + 1] - start[b];
        if (c == 0) {
            continue;
        }
        if (c <= big || threads == 1) {
            order[nsmall++] = (struct bucket){start[b], c};
            continue;
        }
        /* The bucket is in y: sort it back into x unless the caller wants y. */
        uint64_t *bx = y + start[b], *by = x + start[b];
        struct scan s;
        scan_keys(bx, c, threads, &s);
        if (s.ascending || s.and_all == s.or_all) {
            if (!to_y) {
                copy_keys(by, bx, c, threads);
            }
            continue;
        }
        par_sort(bx, by, c, s.and_all ^ s.or_all, !to_y, threads);
    }

    /* The rest: dynamically, largest first (longest-processing-time order). */
    qsort(order, nsmall, sizeof(*order), bucket_larger_first);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (size_t k = 0; k < nsmall; k++) {
        size_t b0 = order[k].begin;
        seq_sort(y + b0, x + b0, order[k].count, !to_y);
    }

done:
    util_free(order);
    util_free(start);
    util_free(hist);
}

int sortex_local_sort(uint64_t *keys, uint64_t *scratch, size_t n, int threads)
{
    if (threads < 1) {
        return UTIL_EUSAGE;
    }
    if (n < 2) {
        return UTIL_OK;
    }
    if (keys == NULL || scratch == NULL) {
        return UTIL_EUSAGE;
    }
    if (n < PAR_MIN_KEYS) {
        threads = 1;
    }

    /* Step 1: sorted and reverse-sorted input end here. */
    struct scan s;
    scan_keys(keys, n, threads, &s);
    if (s.ascending) {
        return UTIL_OK;
    }
    if (s.descending) {
        reverse_keys(keys, n, threads);
        return UTIL_OK;
    }

    /* Steps 2 and 3 (small inputs: the sequential version of the same scheme). */
    if (n < PAR_MIN_KEYS) {
        seq_sort(keys, scratch, n, false);
        return UTIL_OK;
    }
    par_sort(keys, scratch, n, s.and_all ^ s.or_all, false, threads);
    return UTIL_OK;
}

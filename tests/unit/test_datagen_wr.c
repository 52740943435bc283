/*
 * tests/unit/test_datagen_wr.c: the worst-case regular input really drives regular sampling to
 * its bound.
 *
 * Regular sampling here is exactly the convention documented in datagen/wr.c: rank i sorts its
 * slice of m keys and samples positions floor((k+1) m / s) - 1, k = 0..s-1; the P s samples
 * are sorted into y_0..y_(Ps-1); the splitters are y_s, y_2s, ..., y_((P-1)s); bucket j holds
 * the keys x with y_(js) <= x < y_((j+1)s). For every (P, n, s) below the test builds the wr
 * input with datagen_fill(), runs that bucketing, and checks:
 *   - P | n and s | m: the largest bucket is bucket 0 and holds exactly m + P(m/s - 1) keys;
 *   - otherwise: it is within 2P keys of n/P + P(n/(Ps) - 1) (floors) and never above the
 *     bound for the longest runs, s c + P(c - 1) with c = ceil(max m / s);
 *   - uniform random input never exceeds the bound (it is an upper bound, not just a target).
 * Two tests, "exact" and "rounded", of the two kinds of (P, n, s); each case prints its largest
 * bucket and the bound. On the harness of tests/unit/test.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datagen/datagen.h"
#include "tests/unit/test.h"
#include "util/alloc.h"
#include "util/util.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Number of splitters <= key: the bucket of key under [y_js, y_(j+1)s) buckets. */
static uint64_t bucket_of(const uint64_t *split, uint64_t nsplit, uint64_t key)
{
    uint64_t lo = 0, hi = nsplit;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (split[mid] <= key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Regular sampling of keys[0..n) over P ranks with s samples each; fills load[0..P). */
static void psrs_loads(const uint64_t *keys, uint64_t n, uint64_t P, uint64_t s, uint64_t *load)
{
    uint64_t *sorted = util_malloc(n * sizeof(uint64_t));
    uint64_t *samples = util_malloc(P * s * sizeof(uint64_t));
    uint64_t *split = util_malloc(P * sizeof(uint64_t));
    if (sorted == NULL || samples == NULL || split == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    /* 1. Local sort and s samples per rank, the last key of each part of the floor split. */
    memcpy(sorted, keys, n * sizeof(uint64_t));
    for (uint64_t i = 0; i < P; i++) {
        uint64_t b = datagen_slice_begin(n, P, i), m = datagen_slice_begin(n, P, i + 1) - b;
        qsort(sorted + b, m, sizeof(uint64_t), cmp_u64);
        for (uint64_t k = 0; k < s; k++) {
            samples[i * s + k] = sorted[b + datagen_slice_begin(m, s, k + 1) - 1];
        }
    }
    /* 2. Splitters: every s-th sorted sample, starting at y_s. */
    qsort(samples, P * s, sizeof(uint64_t), cmp_u64);
    for (uint64_t j = 1; j < P; j++) {
        split[j - 1] = samples[j * s];
    }
    /* 3. Buckets. */
    memset(load, 0, P * sizeof(uint64_t));
    for (uint64_t x = 0; x < n; x++) {
        load[bucket_of(split, P - 1, keys[x])]++;
    }
    util_free(sorted);
    util_free(samples);
    util_free(split);
}

static uint64_t max_of(const uint64_t *v, uint64_t c, uint64_t *at)
{
    uint64_t best = 0;
    for (uint64_t i = 0; i < c; i++) {
        if (v[i] > best) {
            best = v[i];
            *at = i;
        }
    }
    return best;
}

static void one_case(uint64_t P, uint64_t n, uint64_t s, uint64_t seed)
{
    struct datagen_params p;
    datagen_params_init(&p);
    p.dist = datagen_find("wr");
    p.n = n;
    p.ranks = P;
    p.samples = s;
    p.seed = seed;
    int rc = datagen_check(&p);
    expect_d_eq(rc, UTIL_OK, "P=%llu n=%llu s=%llu: parameters refused", (unsigned long long)P,
                (unsigned long long)n, (unsigned long long)s);
    if (rc != UTIL_OK) {
        return;
    }
    uint64_t *keys = util_malloc(n * sizeof(uint64_t));
    uint64_t *load = util_malloc(P * sizeof(uint64_t));
    if (keys == NULL || load == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    (void)datagen_fill(&p, 0, n, keys);
    psrs_loads(keys, n, P, s, load);
    uint64_t at = 0, worst = max_of(load, P, &at);

    /* The keys are distinct (the bound assumes it). */
    uint64_t *copy = util_malloc(n * sizeof(uint64_t));
    if (copy == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memcpy(copy, keys, n * sizeof(uint64_t));
    qsort(copy, n, sizeof(uint64_t), cmp_u64);
    uint64_t dups = 0;
    for (uint64_t i = 1; i < n; i++) {
        dups += copy[i] == copy[i - 1];
    }
    util_free(copy);
    expect_u64_eq(dups, 0, "P=%llu n=%llu s=%llu: duplicate keys", (unsigned long long)P,
                  (unsigned long long)n, (unsigned long long)s);

    double m = (double)n / (double)P;
    double bound = m + (double)P * (m / (double)s - 1.0);
    if (n % P == 0 && (n / P) % s == 0) {
        uint64_t mm = n / P, exact = mm + P * (mm / s - 1);
        expect_u64_eq(worst, exact, "P=%llu n=%llu s=%llu: the largest bucket's keys",
                      (unsigned long long)P, (unsigned long long)n, (unsigned long long)s);
        expect_u64_eq(at, 0, "P=%llu n=%llu s=%llu: the largest bucket", (unsigned long long)P,
                      (unsigned long long)n, (unsigned long long)s);
    } else {
        uint64_t mmax = datagen_slice_begin(n, P, 1); /* slices differ by at most one */
        mmax = n - datagen_slice_begin(n, P, P - 1) > mmax ? n - datagen_slice_begin(n, P, P - 1)
                                                           : mmax;
        uint64_t c = (mmax + s - 1) / s, upper = s * c + P * (c - 1);
        expect_dbl_ge((double)worst, bound - 2.0 * (double)P,
                      "P=%llu n=%llu s=%llu: the largest bucket, within 2P of the bound",
                      (unsigned long long)P, (unsigned long long)n, (unsigned long long)s);
        expect_u64_le(worst, upper, "P=%llu n=%llu s=%llu: the largest bucket, the upper bound",
                      (unsigned long long)P, (unsigned long long)n, (unsigned long long)s);
    }
    printf("wr P=%llu n=%llu s=%llu seed=%llu: largest bucket %llu keys (bound %.1f)\n",
           (unsigned long long)P, (unsigned long long)n, (unsigned long long)s,
           (unsigned long long)seed, (unsigned long long)worst, bound);

    /* Uniform keys stay within the bound when it is exact. */
    if (n % P == 0 && (n / P) % s == 0) {
        p.dist = datagen_find("uniform");
        (void)datagen_fill(&p, 0, n, keys);
        psrs_loads(keys, n, P, s, load);
        uint64_t mm = n / P, worst_u = max_of(load, P, &at);
        expect_u64_le(worst_u, mm + P * (mm / s - 1), "P=%llu n=%llu s=%llu: uniform keys",
                      (unsigned long long)P, (unsigned long long)n, (unsigned long long)s);
    }
    util_free(keys);
    util_free(load);
}

/* The cases of @n shapes (P, n, s), each with seeds 0 and 1. */
static void cases(const uint64_t (*shapes)[3], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (uint64_t seed = 0; seed < 2; seed++) {
            one_case(shapes[i][0], shapes[i][1], shapes[i][2], seed);
        }
    }
}

/* m divisible by s: the bound is hit exactly. */
static void test_exact(void)
{
    static const uint64_t shapes[][3] = {
        {2, 16, 2},     {2, 2 * 300, 3}, {3, 3 * 24, 4},   {3, 3 * 100, 10},   {4, 4 * 64, 4},
        {5, 5 * 60, 6}, {7, 7 * 49, 7},  {8, 8 * 128, 16}, {16, 16 * 256, 16},
    };
    cases(shapes, sizeof(shapes) / sizeof(shapes[0]));
}

/* P not dividing n, s not dividing m: within rounding. */
static void test_rounded(void)
{
    static const uint64_t shapes[][3] = {
        {3, 1000, 5}, {5, 997, 3}, {6, 6 * 50 + 4, 6}, {7, 10007, 9}};
    cases(shapes, sizeof(shapes) / sizeof(shapes[0]));
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {TEST(exact), TEST(rounded), TEST_END};
    return test_main(argc, argv, tests);
}

/*
 * tests/unit/test_count.c: the histogram selection's count (sort/rules.h, sort_count_below())
 * against brute force.
 *
 * usage: test_count [seed=N] [NAME ...]
 *
 *   count   random sorted keys (distinct, a few values, all equal), every length around the
 *           index's stride, random global offsets; sorted candidates drawn among and between the
 *           keys' (key, position) pairs, counted one after the other from where the last count
 *           ended, with the index and without: each answer is the number of keys below the
 *           candidate in (key, position) order, computed by a linear scan.
 *   probes  a candidate far from where the count starts costs, through the index, at most
 *           2 log2(m / stride) + log2(stride) + 4 probes, and a near one (inside the stride it
 *           starts in) no more than the gallop alone: the index helps far searches and costs
 *           near ones nothing.
 */
#include <math.h>
#include <stdlib.h>

#include "sort/rules.h"
#include "tests/unit/test.h"

/* The keys below @c among @m keys at global positions from @offset, by a scan. */
static uint64_t brute(const uint64_t *keys, uint64_t m, uint64_t offset, const struct sort_tuple *c)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < m; i++) {
        struct sort_tuple e = {offset + i, keys[i]};
        n += sort_tuple_order(&e, c) < 0;
    }
    return n;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* @m sorted keys of shape @shape: 0 distinct and wide, 1 a few values, 2 all equal. */
static void make_keys(uint64_t *keys, uint64_t m, int shape)
{
    for (uint64_t i = 0; i < m; i++) {
        keys[i] = shape == 0 ? test_rand() : shape == 1 ? test_below(5) * 1000 : 77;
    }
    qsort(keys, m, sizeof(uint64_t), cmp_u64);
}

static void test_count(void)
{
    const uint64_t S = SORT_COUNT_STRIDE;
    const uint64_t lengths[] = {0, 1, 2, S - 1, S, S + 1, 2 * S, 3 * S - 1, 7 * S + 5, 50 * S + 3};
    for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++) {
        for (int shape = 0; shape < 3; shape++) {
            uint64_t m = lengths[li], offset = test_below(1000) * 3;
            uint64_t *keys = test_calloc(m + 1, sizeof(uint64_t));
            uint64_t *index = test_calloc(sort_count_index_len(m) + 1, sizeof(uint64_t));
            make_keys(keys, m, shape);
            sort_count_index(keys, m, index);
            /* Candidates: a key of the rank with a position around its own, or a key between. */
            uint64_t c_n = 1 + test_below(m < 1200 ? 3 * m / 2 + 8 : 1800);
            struct sort_tuple *c = test_calloc(c_n, sizeof(*c));
            for (uint64_t i = 0; i < c_n; i++) {
                uint64_t at = test_below(m + 1);
                c[i].key = m && at < m && test_below(4) ? keys[at]
                           : shape == 0                 ? test_rand()
                                                        : test_below(5000);
                c[i].pos = offset + at + test_below(3) - 1 + (at == 0 && offset == 0);
            }
            qsort(c, c_n, sizeof(*c), sort_tuple_cmp);
            uint64_t with = 0, without = 0, bad = 0;
            for (uint64_t i = 0; i < c_n; i++) {
                uint64_t want = brute(keys, m, offset, &c[i]);
                with = sort_count_below(keys, m, offset, index, &c[i], with, NULL);
                without = sort_count_below(keys, m, offset, NULL, &c[i], without, NULL);
                bad += with != want || without != want;
            }
            expect_u64_eq(bad, 0, "m %llu shape %d: counts off brute force", (unsigned long long)m,
                          shape);
            free(c);
            free(index);
            free(keys);
        }
    }
}

static void test_probes(void)
{
    const uint64_t S = SORT_COUNT_STRIDE, m = 1 << 16;
    uint64_t *keys = test_calloc(m, sizeof(uint64_t));
    uint64_t *index = test_calloc(sort_count_index_len(m), sizeof(uint64_t));
    for (uint64_t i = 0; i < m; i++) {
        keys[i] = 10 * i;
    }
    sort_count_index(keys, m, index);
    double lg_s = 0, lg_n = 0;
    while ((1ULL << (int)lg_s) < S) {
        lg_s++;
    }
    while ((1ULL << (int)lg_n) < m / S) {
        lg_n++;
    }
    for (int t = 0; t < 200; t++) {
        /* Far: from the start to anywhere. */
        struct sort_tuple c = {0, test_below(10 * m)};
        uint64_t p = 0, q = 0;
        uint64_t a = sort_count_below(keys, m, 0, index, &c, 0, &p);
        expect_u64_eq(a, c.key / 10 + (c.key % 10 != 0), "far count of %llu",
                      (unsigned long long)c.key);
        expect_u64_le(p, (uint64_t)(2 * lg_n + lg_s + 4), "probes of a far count to %llu",
                      (unsigned long long)a);
        /* Near: inside the stride where the count starts. */
        uint64_t from = test_below(m / S - 1) * S + test_below(S / 2);
        struct sort_tuple d = {0, 10 * (from + test_below(S / 2)) + 5};
        p = 0;
        (void)sort_count_below(keys, m, 0, index, &d, from, &p);
        (void)sort_count_below(keys, m, 0, NULL, &d, from, &q);
        expect_u64_le(p, q + 1, "probes of a near count from %llu", (unsigned long long)from);
    }
    free(index);
    free(keys);
}

static void test_cost(void)
{
    /* A probe a unit whatever the cache: the gallop's 2 log2(g + 1) + 1 probes. */
    for (double g = 0; g < 1e7; g = 2 * g + 1) {
        expect_dbl_le(fabs(sort_count_cost(g, 0, 1, 1) - (2 * log2(g + 1) + 1)), 1e-9,
                      "gallop of %g keys", g);
    }
    /* Misses dear, hits cheap: far gaps cost less through the index, near ones about the same,
     * and near ones less than far ones. */
    for (double g = 4 * SORT_COUNT_STRIDE; g < 1e7; g *= 2) {
        expect_true(sort_count_cost(g, 1, 28, 4) < 0.6 * sort_count_cost(g, 0, 28, 4),
                    "the index at a gap of %g keys", g);
    }
    expect_true(sort_count_cost(3, 1, 28, 4) <= sort_count_cost(3, 0, 28, 4) + 4, "a near gap");
    expect_true(sort_count_cost(3, 0, 28, 4) < sort_count_cost(500, 0, 28, 4) / 5, "near and far");
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {TEST(count), TEST(probes), TEST(cost), TEST_END};
    return test_main(argc, argv, tests);
}

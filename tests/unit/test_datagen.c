/*
 * tests/unit/test_datagen.c: the pure parts of datagen/.
 *   - the slice split: begin(0) = 0, begin(P) = n, slice_of() inverts begin(), 128-bit cases;
 *   - every distribution in every kind of format (8-byte keys, gensort records, layouts with
 *     short and long keys): any range filled on its own (datagen_fill_records) or with threads
 *     (datagen_fill_records_threads, datagen_fill_threads) equals the same range of a fill of
 *     the whole file;
 *   - records of a key distribution: the key bytes are the key big-endian (memcmp order is
 *     the key order), and the payloads of any two records differ;
 *   - recipes checked more easily here than from a shell: reverse is sorted backwards, nearly
 *     moves exactly 2 floor(f n / 2) keys and keeps the multiset, zipf's first two values have
 *     frequencies in ratio 2^s, gaussian keys centre on 2^63, --type i64 flips the sign bit.
 * On the harness of tests/unit/test.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datagen/datagen.h"
#include "tests/unit/test.h"
#include "util/alloc.h"
#include "util/format.h"
#include "util/util.h"

static uint64_t *alloc_keys(uint64_t n)
{
    uint64_t *k = util_malloc((n ? n : 1) * sizeof(uint64_t));
    if (k == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return k;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The slice split: floor(i n / P) and its inverse, 128-bit products included. */
static void test_split(void)
{
    static const uint64_t ns[] = {1, 2, 7, 1000, 4099, (uint64_t)1 << 40, ((uint64_t)1 << 60) - 3};
    static const uint64_t ps[] = {1, 2, 3, 5, 16, 1000, (uint64_t)1 << 24};
    test_seed(12345);
    for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
        for (size_t b = 0; b < sizeof(ps) / sizeof(ps[0]); b++) {
            uint64_t n = ns[a], P = ps[b];
            expect_u64_eq(datagen_slice_begin(n, P, 0), 0, "n=%" PRIu64 " P=%" PRIu64, n, P);
            expect_u64_eq(datagen_slice_begin(n, P, P), n, "n=%" PRIu64 " P=%" PRIu64, n, P);
            for (int t = 0; t < 200; t++) {
                uint64_t i = test_rand() % P;
                uint64_t want = (uint64_t)(((unsigned __int128)i * n) / P);
                expect_u64_eq(datagen_slice_begin(n, P, i), want,
                              "n=%" PRIu64 " P=%" PRIu64 " i=%" PRIu64, n, P, i);
                expect_u64_le(datagen_slice_begin(n, P, i), datagen_slice_begin(n, P, i + 1),
                              "n=%" PRIu64 " P=%" PRIu64 " i=%" PRIu64, n, P, i);
                uint64_t pos = test_rand() % n;
                uint64_t r = datagen_slice_of(n, P, pos);
                expect_true(r < P && datagen_slice_begin(n, P, r) <= pos &&
                                pos < datagen_slice_begin(n, P, r + 1),
                            "n=%" PRIu64 " P=%" PRIu64 ": position %" PRIu64 " in slice %" PRIu64,
                            n, P, pos, r);
            }
        }
    }
}

/* Parameters valid for (dist, n, P): wr needs s <= n/P. */
static int make_params(struct datagen_params *p, const struct datagen_dist *d, uint64_t n,
                       uint64_t P, uint64_t seed)
{
    datagen_params_init(p);
    p->dist = d;
    p->n = n;
    p->ranks = P;
    p->seed = seed;
    if (strcmp(d->name, "wr") == 0) {
        if (n / P == 0) {
            return -1;
        }
        p->samples = P <= n / P ? P : n / P;
    }
    p->fraction = 0.3;
    return datagen_check(p);
}

/* The formats every distribution is filled in: a named one, or a layout (R, O, K). */
static const struct {
    const char *name;
    size_t r, o, k;
} formats[] = {{"u64", 0, 0, 0}, {"f64", 0, 0, 0},  {"gensort", 0, 0, 0},
               {NULL, 13, 3, 5}, {NULL, 24, 2, 19}, {NULL, 3, 0, 3}};

/* Sets p->format to formats[i] (a layout lives in @storage). False when the distribution
 * implies a format of its own and this is another. */
static bool set_format(struct datagen_params *p, size_t i, struct util_format *storage)
{
    if (formats[i].name != NULL) {
        p->format = util_format_find(formats[i].name);
    } else {
        (void)util_format_layout(formats[i].r, formats[i].o, formats[i].k, storage);
        p->format = storage;
    }
    if (p->dist->records != NULL && strcmp(p->format->name, p->dist->format) != 0) {
        return false;
    }
    return true;
}

/* Every distribution in every format: any range, any thread count, as the whole file holds it. */
static void test_ranges(void)
{
    static const struct {
        uint64_t n, P;
    } shapes[] = {{1, 1}, {7, 3}, {1000, 4}, {4099, 5}, {70001, 7}, {200000, 3}};
    for (const struct datagen_dist *const *it = datagen_list(); *it != NULL; it++) {
        for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
            struct util_format layout;
            char what[160];
            (void)snprintf(what, sizeof(what), "%s as %s %zu/%zu/%zu", (*it)->name,
                           formats[f].name ? formats[f].name : "layout", formats[f].r, formats[f].o,
                           formats[f].k);
            for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
                struct datagen_params p;
                /* The largest shape in the first format only: time goes to the rest. */
                if ((f > 0 && shapes[s].n > 100000) ||
                    make_params(&p, *it, shapes[s].n, shapes[s].P, 42) != UTIL_OK ||
                    !set_format(&p, f, &layout) || datagen_check(&p) != UTIL_OK) {
                    continue;
                }
                if ((*it)->records != NULL) {
                    p.start = test_rand(); /* any first record number */
                }
                uint64_t n = p.n;
                size_t r = datagen_format(&p)->record_size;
                unsigned char *whole = util_malloc(n * r), *part = util_malloc(n * r);
                if (whole == NULL || part == NULL) {
                    fprintf(stderr, "out of memory\n");
                    exit(2);
                }
                expect_d_eq(datagen_fill_records(&p, 0, n, whole), UTIL_OK, "%s: n=%" PRIu64, what,
                            n);
                /* Random ranges, one at a time. */
                for (int t = 0; t < 50; t++) {
                    uint64_t first = test_rand() % n, count = test_rand() % (n - first + 1);
                    expect_d_eq(datagen_fill_records(&p, first, count, part), UTIL_OK,
                                "%s: n=%" PRIu64 " records [%" PRIu64 ", +%" PRIu64 ")", what, n,
                                first, count);
                    expect_true(memcmp(part, whole + first * r, count * r) == 0,
                                "%s: n=%" PRIu64 " records [%" PRIu64 ", +%" PRIu64 ")", what, n,
                                first, count);
                }
                /* Threads, and the key interface for the 8-byte formats. */
                memset(part, 0, n * r);
                expect_d_eq(datagen_fill_records_threads(&p, 0, n, part, 2), UTIL_OK,
                            "%s: n=%" PRIu64 ", 2 threads", what, n);
                expect_true(memcmp(part, whole, n * r) == 0, "%s: n=%" PRIu64 ", 2 threads", what,
                            n);
                if (r == 8 && !datagen_format(&p)->byte_key) {
                    memset(part, 0, n * r);
                    expect_d_eq(datagen_fill_threads(&p, 0, n, (uint64_t *)(void *)part, 2),
                                UTIL_OK, "%s: n=%" PRIu64 ", keys, 2 threads", what, n);
                    expect_true(memcmp(part, whole, n * r) == 0,
                                "%s: n=%" PRIu64 ", keys, 2 threads", what, n);
                }
                util_free(whole);
                util_free(part);
            }
        }
    }
}

/* Records of a key distribution: keys big-endian in the key bytes, payloads all different. */
static void test_key_records(void)
{
    const uint64_t n = 5000;
    struct datagen_params p;
    struct util_format layout;
    uint64_t *keys = alloc_keys(n);
    make_params(&p, datagen_find("uniform"), n, 3, 5);
    datagen_fill(&p, 0, n, keys);
    (void)util_format_layout(21, 4, 12, &layout); /* 9 payload bytes, 4 before the key */
    p.format = &layout;
    unsigned char *rec = util_malloc(n * 21);
    if (rec == NULL) {
        exit(2);
    }
    datagen_fill_records(&p, 0, n, rec);
    int distinct = 1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t be = 0;
        for (int b = 0; b < 8; b++) {
            be = be << 8 | rec[i * 21 + 4 + (size_t)b];
        }
        expect_u64_eq(be, keys[i], "record %" PRIu64 ": key bytes 0..7 are the key big-endian", i);
    }
    /* Payloads: bytes 0..3 and 16..20; the first eight payload bytes differ for any pair. */
    for (uint64_t i = 1; i < n && distinct; i++) {
        for (uint64_t j = 0; j < i; j++) {
            unsigned char a[8], b[8];
            memcpy(a, rec + i * 21, 4);
            memcpy(a + 4, rec + i * 21 + 16, 4);
            memcpy(b, rec + j * 21, 4);
            memcpy(b + 4, rec + j * 21 + 16, 4);
            if (memcmp(a, b, 8) == 0) {
                distinct = 0;
                break;
            }
        }
    }
    expect_true(distinct, "records of uniform keys: no two payloads are equal");
    util_free(rec);
    util_free(keys);
}

/* The key interface refuses record formats instead of writing past 8-byte slots. */
static void test_keys_only(void)
{
    struct datagen_params p;
    uint64_t k[4];
    make_params(&p, datagen_find("gensort"), 4, 1, 0);
    fprintf(stderr, "(two expected error lines follow)\n");
    expect_d_eq(datagen_fill(&p, 0, 4, k), UTIL_EUSAGE, "datagen_fill of gensort records");
    make_params(&p, datagen_find("uniform"), 4, 1, 0);
    p.format = util_format_find("gensort");
    expect_d_eq(datagen_fill_threads(&p, 0, 4, k, 2), UTIL_EUSAGE,
                "datagen_fill_threads of uniform keys as gensort records");
}

static void test_bad_range(void)
{
    struct datagen_params p;
    uint64_t k[4];
    make_params(&p, datagen_find("uniform"), 3, 1, 0);
    fprintf(stderr, "(one expected error line follows)\n");
    expect_d_eq(datagen_fill(&p, 2, 2, k), UTIL_EUSAGE, "a range past n is refused");
}

static void test_orders(void)
{
    const uint64_t n = 100003;
    struct datagen_params p;
    uint64_t *a = alloc_keys(n), *b = alloc_keys(n);

    make_params(&p, datagen_find("sorted"), n, 4, 7);
    datagen_fill(&p, 0, n, a);
    make_params(&p, datagen_find("reverse"), n, 4, 7);
    datagen_fill(&p, 0, n, b);
    for (uint64_t i = 0; i < n; i++) {
        expect_u64_eq(a[i], b[n - 1 - i], "key %" PRIu64 ": reverse is sorted backwards", i);
        expect_true(i == 0 || a[i - 1] < a[i], "key %" PRIu64 ": sorted is strictly increasing", i);
    }

    make_params(&p, datagen_find("nearly"), n, 4, 7);
    p.fraction = 0.1;
    datagen_fill(&p, 0, n, b);
    uint64_t moved = 0;
    for (uint64_t i = 0; i < n; i++) {
        moved += a[i] != b[i];
    }
    qsort(b, n, sizeof(uint64_t), cmp_u64);
    expect_u64_eq(moved, 2 * (uint64_t)(0.1 * (double)n / 2.0),
                  "nearly moves exactly 2 floor(f n/2) keys of the sorted file");
    expect_true(memcmp(a, b, n * 8) == 0, "nearly keeps the keys of the sorted file");

    make_params(&p, datagen_find("nearly"), n, 4, 7);
    p.fraction = 0.0;
    datagen_fill(&p, 0, n, b);
    expect_true(memcmp(a, b, n * 8) == 0, "nearly with fraction 0 is the sorted file");
    util_free(a);
    util_free(b);
}

static void test_zipf_gaussian(void)
{
    const uint64_t n = 1000000;
    struct datagen_params p;
    uint64_t *a = alloc_keys(n);
    static const double exps[] = {0.5, 1.0, 1.5};
    for (size_t e = 0; e < sizeof(exps) / sizeof(exps[0]); e++) {
        make_params(&p, datagen_find("zipf"), n, 4, 3);
        p.exponent = exps[e];
        p.domain = 1000;
        datagen_fill(&p, 0, n, a);
        uint64_t c0 = 0, c1 = 0, big = 0;
        for (uint64_t i = 0; i < n; i++) {
            c0 += a[i] == 0;
            c1 += a[i] == 1;
            big += a[i] >= 1000;
        }
        /* Frequency of value 0 over value 1 is 2^s; the H_1000,s normaliser fixes c0. */
        double h = 0;
        for (int v = 1; v <= 1000; v++) {
            h += pow(v, -exps[e]);
        }
        double ratio = (double)c0 / (double)c1, want0 = (double)n / h;
        printf("zipf s=%.1f: P(0)/P(1) = %.3f (want %.3f), count(0) %llu (want %.0f)\n", exps[e],
               ratio, pow(2.0, exps[e]), (unsigned long long)c0, want0);
        expect_u64_eq(big, 0, "zipf s=%.1f: values beyond the domain", exps[e]);
        expect_dbl_le(fabs(ratio / pow(2.0, exps[e]) - 1.0), 0.03,
                      "zipf s=%.1f: P(0)/P(1) = %.3f (want %.3f)", exps[e], ratio,
                      pow(2.0, exps[e]));
        expect_dbl_le(fabs((double)c0 / want0 - 1.0), 0.03,
                      "zipf s=%.1f: count(0) %llu (want %.0f)", exps[e], (unsigned long long)c0,
                      want0);
    }

    make_params(&p, datagen_find("gaussian"), n, 4, 3);
    datagen_fill(&p, 0, n, a);
    double mean = 0, var = 0;
    for (uint64_t i = 0; i < n; i++) {
        mean += (double)a[i] / 0x1p64;
    }
    mean /= (double)n;
    for (uint64_t i = 0; i < n; i++) {
        double d = (double)a[i] / 0x1p64 - mean;
        var += d * d;
    }
    var /= (double)n;
    /* The mean of four U(0,1) has mean 1/2 and variance 1/48. */
    expect_dbl_le(fabs(mean - 0.5), 0.002, "gaussian: mean 1/2 of the key range");
    expect_dbl_le(fabs(var * 48.0 - 1.0), 0.02, "gaussian: variance 1/48 of the key range");
    util_free(a);
}

static void test_type(void)
{
    const uint64_t n = 1000;
    struct datagen_params p;
    uint64_t *a = alloc_keys(n), *b = alloc_keys(n);
    make_params(&p, datagen_find("uniform"), n, 4, 9);
    datagen_fill(&p, 0, n, a);
    p.format = util_format_find("i64");
    datagen_fill(&p, 0, n, b);
    for (uint64_t i = 0; i < n; i++) {
        expect_u64_eq(b[i], a[i] ^ ((uint64_t)1 << 63),
                      "key %" PRIu64 ": --type i64 writes the same order with the sign bit flipped",
                      i);
    }
    util_free(a);
    util_free(b);
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {
        TEST(split),  TEST(ranges),        TEST(key_records), TEST(keys_only), TEST(bad_range),
        TEST(orders), TEST(zipf_gaussian), TEST(type),        TEST_END,
    };
    return test_main(argc, argv, tests);
}

/*
 * tests/unit/test_localsort.c: correctness of local_sort() and local_merge_runs().
 *
 *   test_localsort [TEST ...]   TEST: small | thresholds | large | skewed | errors | merge |
 *                                     merge_dups | records (none: all)
 *
 * Each test runs a matrix of cases and compares every result with glibc qsort() of the same
 * input (so the output is both sorted and a permutation). On the harness of tests/unit/test.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local/local.h"
#include "tests/unit/test.h"
#include "util/alloc.h"
#include "util/format.h"
#include "util/util.h"

/* The splitmix64 draw after state @x: counter-based, so every case is reproducible from its
 * numbers. */
static uint64_t mix(uint64_t x)
{
    return util_splitmix64(&x);
}

enum dist {
    DIST_UNIFORM,   /* random 64-bit keys */
    DIST_EQUAL,     /* one key repeated */
    DIST_FEW,       /* 7 distinct random keys */
    DIST_SORTED,    /* ascending with duplicates */
    DIST_REVERSE,   /* descending with duplicates */
    DIST_NEARLY,    /* ascending, then 1% of the keys swapped */
    DIST_ADVERSARY, /* the top 5 bytes shared, random below */
    DIST_LOW,       /* only the low 8 bits random */
    DIST_HIGH,      /* only the top 8 bits random */
    DIST_EXTREMES,  /* only 0 and UINT64_MAX */
    DIST_SKEWED,    /* 90% of the keys below 2^20, the rest anywhere: one huge bucket */
    DIST_SPARSE,    /* random bits 3, 17, 40 and 63 only: varying bits far apart */
    DIST_BITS42,    /* the low 42 bits random: spread bits that save an LSD digit at 2^21 keys */
    DIST_COUNT
};

static const char *const dist_names[DIST_COUNT] = {
    "uniform",  "equal",     "few",      "sorted", "reverse",     "nearly", "radix-adversary",
    "low-bits", "high-bits", "extremes", "skewed", "sparse-bits", "bits42",
};

static void generate(uint64_t *a, size_t n, enum dist d, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = mix(seed * 0x100000001b3ULL + i);
        switch (d) {
        case DIST_UNIFORM:
            a[i] = r;
            break;
        case DIST_EQUAL:
            a[i] = mix(seed);
            break;
        case DIST_FEW:
            a[i] = mix(seed + r % 7);
            break;
        case DIST_SORTED:
        case DIST_NEARLY:
            a[i] = i / 3 * 1000003;
            break;
        case DIST_REVERSE:
            a[i] = (n - i) / 2 * 77;
            break;
        case DIST_ADVERSARY:
            a[i] = 0xfedcba9876ULL << 24 | (r & 0xffffff);
            break;
        case DIST_LOW:
            a[i] = r & 0xff;
            break;
        case DIST_HIGH:
            a[i] = r & 0xff00000000000000ULL;
            break;
        case DIST_EXTREMES:
            a[i] = r & 1 ? UINT64_MAX : 0;
            break;
        case DIST_SKEWED:
            a[i] = r % 10 ? r >> 44 : r;
            break;
        case DIST_SPARSE:
            a[i] = r & (1ULL << 3 | 1ULL << 17 | 1ULL << 40 | 1ULL << 63);
            break;
        case DIST_BITS42:
            a[i] = r & ((1ULL << 42) - 1);
            break;
        case DIST_COUNT:
            break;
        }
    }
    if (d == DIST_NEARLY && n > 1) {
        for (size_t j = 0; j < n / 100 + 1; j++) {
            size_t p = mix(seed + 2 * j) % n, q = mix(seed + 2 * j + 1) % n;
            uint64_t t = a[p];
            a[p] = a[q];
            a[q] = t;
        }
    }
}

static int cmp_u64(const void *p, const void *q)
{
    uint64_t a = *(const uint64_t *)p, b = *(const uint64_t *)q;
    return (a > b) - (a < b);
}

/* Allocates @n keys (at least one) or exits: a test binary may. */
static uint64_t *keys_alloc(size_t n)
{
    uint64_t *p = util_alloc_big((n ? n : 1) * sizeof(uint64_t));
    if (p == NULL) {
        fprintf(stderr, "test_localsort: cannot allocate %zu keys\n", n);
        exit(1);
    }
    return p;
}

/* The tuning the sort cases use: NULL (the process default) or one a test forces. */
static const struct local_tuning *tuning;

/* The index of the first of @n keys where @a and @b differ; @n when they do not. */
static size_t first_difference(const uint64_t *a, const uint64_t *b, size_t n)
{
    size_t i = 0;
    while (i < n && a[i] == b[i]) {
        i++;
    }
    return i;
}

/* Sorts a copy of @input with local_sort_tuned() and compares it with @expect. */
static void check_sort(const uint64_t *input, const uint64_t *expect, size_t n, int threads,
                       const char *dist, uint64_t *keys, uint64_t *scratch)
{
    memcpy(keys, input, n * sizeof(*keys));
    int rc = local_sort_tuned(keys, scratch, n, threads, tuning);
    expect_d_eq(rc, 0, "sort returned an error: dist=%s n=%zu threads=%d", dist, n, threads);
    if (rc == 0) {
        expect_zu_eq(first_difference(keys, expect, n), n,
                     "sort differs from qsort: dist=%s n=%zu threads=%d", dist, n, threads);
    }
}

/* Every distribution at each of @sizes, with 1 to @max_threads threads. */
static void sort_matrix_threads(const size_t *sizes, size_t nsizes, int dist_from, int dist_to,
                                int max_threads)
{
    size_t max = 0;
    for (size_t i = 0; i < nsizes; i++) {
        max = sizes[i] > max ? sizes[i] : max;
    }
    uint64_t *input = keys_alloc(max), *expect = keys_alloc(max);
    uint64_t *keys = keys_alloc(max), *scratch = keys_alloc(max);
    for (size_t i = 0; i < nsizes; i++) {
        size_t n = sizes[i];
        for (int d = dist_from; d < dist_to; d++) {
            generate(input, n, (enum dist)d, n * 31 + (uint64_t)d);
            memcpy(expect, input, n * sizeof(*input));
            qsort(expect, n, sizeof(*expect), cmp_u64);
            for (int threads = 1; threads <= max_threads; threads++) {
                check_sort(input, expect, n, threads, dist_names[d], keys, scratch);
            }
        }
    }
    util_free_big(scratch);
    util_free_big(keys);
    util_free_big(expect);
    util_free_big(input);
}

/* Every distribution at each of @sizes, with 1 and 2 threads. */
static void sort_matrix(const size_t *sizes, size_t nsizes, int dist_from, int dist_to)
{
    sort_matrix_threads(sizes, nsizes, dist_from, dist_to, 2);
}

static void test_small(void)
{
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 100, 255, 256, 257, 1000};
    sort_matrix(sizes, sizeof(sizes) / sizeof(sizes[0]), 0, DIST_COUNT);
}

/* Adds @t - 1, @t and @t + 1 to sizes[*ns]. */
static void straddle(size_t *sizes, size_t *ns, size_t t)
{
    sizes[(*ns)++] = t - 1;
    sizes[(*ns)++] = t;
    sizes[(*ns)++] = t + 1;
}

/*
 * Sizes one below, at and one above every threshold the sort computes at run time, with a
 * tuning forced small so that every path runs on any machine: each kernel, the insertion
 * sort, buckets one over the kernel's size (a sequential spread), two spread levels, the
 * parallel threshold, the streaming stores, and 1 to 3 threads; then the process's own
 * tuning around its own thresholds.
 */
static void test_thresholds(void)
{
    /* The radix kernel with each way of scattering; vqsort with spreads at every level, with
     * one spread level from a size on, and with sorted chunks and a merge below a size. */
    static const struct {
        enum local_kernel kernel;
        enum local_scatter scatter;
        int merges;
        size_t spread_min, merge_max;
        unsigned levels;
    } variants[] = {
        {LOCAL_KERNEL_RADIX, LOCAL_SCATTER_AUTO, 0, 0, 0, 0},
        {LOCAL_KERNEL_RADIX, LOCAL_SCATTER_PLAIN, 0, 0, 0, 0},
        {LOCAL_KERNEL_RADIX, LOCAL_SCATTER_STREAM, 0, 0, 0, 0},
        {LOCAL_KERNEL_VQSORT, LOCAL_SCATTER_AUTO, 0, 0, 0, 0},
        {LOCAL_KERNEL_VQSORT, LOCAL_SCATTER_AUTO, 3, 5000, 4000, 1},
    };
    for (size_t k = 0; k < sizeof(variants) / sizeof(variants[0]); k++) {
        struct local_tuning small = {
            .kernel = variants[k].kernel,
            .bucket_keys = 256,
            .spread_bits = 4,
            .spread_min_keys = variants[k].spread_min,
            .spread_levels = variants[k].levels,
            .par_min_keys = 2048,
            .small_keys = 8,
            .stream_keys = 3000,
            .scatter = variants[k].scatter,
            .merge_threads = variants[k].merges,
            .merge_max_keys = variants[k].merge_max,
        };
        size_t sizes[32], ns = 0;
        straddle(sizes, &ns, small.small_keys);
        straddle(sizes, &ns, small.bucket_keys);
        straddle(sizes, &ns, small.bucket_keys << small.spread_bits); /* two spread levels */
        straddle(sizes, &ns, small.par_min_keys);
        straddle(sizes, &ns, small.stream_keys);
        if (variants[k].spread_min != 0) {
            straddle(sizes, &ns, variants[k].spread_min);
            straddle(sizes, &ns, variants[k].merge_max);
        }
        sizes[ns++] = 100003; /* three levels and every bucket size between */
        tuning = &small;
        sort_matrix_threads(sizes, ns, 0, DIST_COUNT, 3);
    }
    struct local_tuning def;
    local_tuning_default(&def);
    size_t sizes[12], ns = 0;
    straddle(sizes, &ns, def.small_keys);
    straddle(sizes, &ns, def.bucket_keys);
    straddle(sizes, &ns, def.par_min_keys);
    tuning = NULL;
    sort_matrix(sizes, ns, 0, DIST_COUNT);
    fprintf(stderr,
            "tuning: kernel %s, bucket %zu keys, spread %u bits, parallel from %zu keys, "
            "one thread spreads from %zu keys, threads merge below %zu keys\n",
            local_kernel_name(def.kernel), def.bucket_keys, def.spread_bits, def.par_min_keys,
            def.spread_min_keys, def.merge_max_keys);
}

static void test_large(void)
{
    static const size_t mid[] = {1000000};
    sort_matrix(mid, 1, 0, DIST_COUNT);
    static const size_t big[] = {10000000};
    sort_matrix(big, 1, DIST_UNIFORM, DIST_UNIFORM + 1);
    sort_matrix(big, 1, DIST_SKEWED, DIST_SKEWED + 1);
    static const size_t raised[] = {(size_t)1 << 21};
    sort_matrix(raised, 1, DIST_BITS42, DIST_BITS42 + 1);
}

/* Buckets far above a thread's share (sorted by all threads together), with 1 to 4 threads. */
static void test_skewed(void)
{
    size_t n = 3000000;
    uint64_t *input = keys_alloc(n), *expect = keys_alloc(n);
    uint64_t *keys = keys_alloc(n), *scratch = keys_alloc(n);
    const enum dist ds[] = {DIST_SKEWED, DIST_FEW, DIST_EXTREMES, DIST_SPARSE, DIST_NEARLY};
    for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
        generate(input, n, ds[i], 99 + i);
        memcpy(expect, input, n * sizeof(*input));
        qsort(expect, n, sizeof(*expect), cmp_u64);
        for (int threads = 1; threads <= 4; threads++) {
            check_sort(input, expect, n, threads, dist_names[ds[i]], keys, scratch);
        }
    }
    util_free_big(scratch);
    util_free_big(keys);
    util_free_big(expect);
    util_free_big(input);
}

/* Expects @got == @want for the call described by @what. */
static void expect_rc(int got, int want, const char *what)
{
    expect_d_eq(got, want, "%s", what);
}

static void test_errors(void)
{
    uint64_t k[4] = {3, 1, 2, 0}, s[4], counts[2] = {2, 2};
    expect_rc(local_sort(k, s, 4, 0), UTIL_EUSAGE, "sort with 0 threads");
    expect_rc(local_sort(NULL, s, 4, 1), UTIL_EUSAGE, "sort of NULL keys");
    expect_rc(local_sort(k, NULL, 4, 1), UTIL_EUSAGE, "sort with NULL scratch");
    expect_rc(local_sort(NULL, NULL, 0, 1), UTIL_OK, "sort of nothing");
    expect_rc(local_sort(k, NULL, 1, 1), UTIL_OK, "sort of one key");
    expect_rc(local_merge_runs(k, counts, 2, s, 0), UTIL_EUSAGE, "merge with 0 threads");
    expect_rc(local_merge_runs(k, counts, -1, s, 1), UTIL_EUSAGE, "merge of -1 runs");
    expect_rc(local_merge_runs(k, NULL, 2, s, 1), UTIL_EUSAGE, "merge without counts");
    expect_rc(local_merge_runs(NULL, counts, 2, s, 1), UTIL_EUSAGE, "merge of NULL input");
    expect_rc(local_merge_runs(k, counts, 2, NULL, 1), UTIL_EUSAGE, "merge into NULL");
    expect_rc(local_merge_runs(NULL, NULL, 0, NULL, 1), UTIL_OK, "merge of no runs");
    uint64_t zero[3] = {0, 0, 0};
    expect_rc(local_merge_runs(NULL, zero, 3, NULL, 2), UTIL_OK, "merge of empty runs");
    /* A key at the top of the range survives the merge sentinel. */
    uint64_t in[4] = {1, UINT64_MAX, 0, UINT64_MAX}, out[4] = {0, 0, 0, 0};
    uint64_t three[3] = {2, 0, 2};
    expect_true(local_merge_runs(in, three, 3, out, 1) == 0 && out[0] == 0 && out[1] == 1 &&
                    out[2] == UINT64_MAX && out[3] == UINT64_MAX,
                "merge with UINT64_MAX keys");
}

/* How the keys and sizes of the runs of one merge case are drawn. */
enum run_kind {
    RUNS_EQUAL,     /* equal sizes, uniform keys */
    RUNS_SKEWED,    /* sizes proportional to 1/(r+1)^2, every third run empty */
    RUNS_DUPS,      /* equal sizes, keys from 3 values */
    RUNS_ALL_EQUAL, /* one key everywhere */
    RUNS_EXTREMES,  /* 0 and UINT64_MAX only, random sizes */
    RUNS_ONE_FULL,  /* every key in one run, the others empty */
    RUNS_COUNT
};

static const char *const run_names[RUNS_COUNT] = {"equal",     "skewed",   "dups",
                                                  "all-equal", "extremes", "one-full"};

/* Builds @runs sorted runs with @total keys in @in; fills @counts. */
static void make_runs(uint64_t *in, uint64_t *counts, int runs, size_t total, enum run_kind kind,
                      uint64_t seed)
{
    double w[80], sum = 0;
    for (int r = 0; r < runs; r++) {
        switch (kind) {
        case RUNS_SKEWED:
            w[r] = r % 3 == 1 ? 0 : 1.0 / ((r + 1.0) * (r + 1.0));
            break;
        case RUNS_EXTREMES:
            w[r] = (double)(mix(seed + (uint64_t)r) % 100);
            break;
        case RUNS_ONE_FULL:
            w[r] = r == runs / 2 ? 1 : 0;
            break;
        default:
            w[r] = 1;
            break;
        }
        sum += w[r];
    }
    size_t off = 0;
    for (int r = 0; r < runs; r++) {
        size_t c = sum > 0 ? (size_t)((double)total * w[r] / sum) : 0;
        if (r == runs - 1 || off + c > total) {
            c = total - off;
        }
        counts[r] = c;
        for (size_t i = 0; i < c; i++) {
            uint64_t x = mix(seed ^ (off + i) * 0x9e3779b97f4a7c15ULL);
            switch (kind) {
            case RUNS_DUPS:
                x = x % 3 * 1000;
                break;
            case RUNS_ALL_EQUAL:
                x = 42;
                break;
            case RUNS_EXTREMES:
                x = x & 1 ? UINT64_MAX : 0;
                break;
            default:
                break;
            }
            in[off + i] = x;
        }
        qsort(in + off, c, sizeof(*in), cmp_u64);
        off += c;
    }
}

/* Every run count 1..65 for each kind and a few totals, with 1, 2 and 3 threads. */
static void merge_matrix(const size_t *totals, size_t ntotals, int kind_from, int kind_to,
                         int runs_step)
{
    size_t max = 0;
    for (size_t i = 0; i < ntotals; i++) {
        max = totals[i] > max ? totals[i] : max;
    }
    uint64_t *in = keys_alloc(max), *expect = keys_alloc(max), *out = keys_alloc(max + 1);
    uint64_t counts[80];
    for (size_t ti = 0; ti < ntotals; ti++) {
        size_t total = totals[ti];
        for (int kind = kind_from; kind < kind_to; kind++) {
            for (int runs = 1; runs <= 65; runs += runs < 10 ? 1 : runs_step) {
                make_runs(in, counts, runs, total, (enum run_kind)kind, total + (uint64_t)runs);
                memcpy(expect, in, total * sizeof(*in));
                qsort(expect, total, sizeof(*expect), cmp_u64);
                for (int threads = 1; threads <= 3; threads++) {
                    out[total] = 0x5a5a5a5a; /* a canary past the end */
                    int rc = local_merge_runs(in, counts, runs, out, threads);
                    size_t at = rc == 0 ? first_difference(out, expect, total) : 0;
                    expect_true(rc == 0 && at == total && out[total] == 0x5a5a5a5a,
                                "merge: kind=%s total=%zu runs=%d threads=%d rc=%d first "
                                "difference at %zu",
                                run_names[kind], total, runs, threads, rc, at);
                }
            }
        }
    }
    util_free_big(out);
    util_free_big(expect);
    util_free_big(in);
}

/*
 * Two runs of every pair of sizes up to 40 keys, one thread: the two-way merge works from both
 * ends and switches to one end, then to a copy, where an input runs out. Keys are distinct and
 * interleaved, from 4 values, or one run entirely below the other (either way round).
 */
static void merge_two_sizes(void)
{
    enum { MAX = 40 };
    uint64_t in[2 * MAX], expect[2 * MAX], out[2 * MAX + 1];
    for (int pattern = 0; pattern < 4; pattern++) {
        for (size_t na = 0; na <= MAX; na++) {
            for (size_t nb = 0; nb <= MAX; nb++) {
                for (size_t i = 0; i < na + nb; i++) {
                    uint64_t x = mix(na * 1000 + nb * 10 + (uint64_t)pattern + i * 7919);
                    if (pattern == 1) {
                        x %= 4;
                    } else if (pattern >= 2) {
                        /* Run a (the first na keys) below run b, or above it. */
                        x = (x >> 8) + ((i < na) == (pattern == 2) ? 0 : (uint64_t)1 << 60);
                    }
                    in[i] = x;
                }
                qsort(in, na, sizeof(*in), cmp_u64);
                qsort(in + na, nb, sizeof(*in), cmp_u64);
                memcpy(expect, in, (na + nb) * sizeof(*in));
                qsort(expect, na + nb, sizeof(*expect), cmp_u64);
                uint64_t counts[2] = {na, nb};
                out[na + nb] = 0x5a5a5a5a;
                int rc = local_merge_runs(in, counts, 2, out, 1);
                expect_true(rc == 0 && memcmp(out, expect, (na + nb) * sizeof(*out)) == 0 &&
                                out[na + nb] == 0x5a5a5a5a,
                            "merge of two runs: pattern=%d sizes %zu and %zu rc=%d", pattern, na,
                            nb, rc);
            }
        }
    }
}

static void test_merge(void)
{
    merge_two_sizes();
    /* Sizes smaller than the run count: every run count. */
    const size_t tiny[] = {0, 1, 5, 64, 1000};
    merge_matrix(tiny, sizeof(tiny) / sizeof(tiny[0]), 0, RUNS_COUNT, 1);
    /* Below, at and above the parallel threshold. */
    const size_t totals[] = {LOCAL_MERGE_PAR_MIN - 1, LOCAL_MERGE_PAR_MIN, LOCAL_MERGE_PAR_MIN + 7,
                             200003};
    merge_matrix(totals, sizeof(totals) / sizeof(totals[0]), 0, RUNS_COUNT, 8);
}

static void test_merge_dups(void)
{
    const size_t totals[] = {600000};
    merge_matrix(totals, 1, RUNS_DUPS, RUNS_COUNT, 16);
    merge_matrix(totals, 1, RUNS_EQUAL, RUNS_SKEWED + 1, 55);
}

/* ---- records ---------------------------------------------------------------------------- */

/* The reference: record indices sorted stably by key (qsort on (key, index)). */
static const unsigned char *ref_rec;
static const struct util_format *ref_fmt;

static int ref_cmp(const void *p, const void *q)
{
    size_t a = *(const size_t *)p, b = *(const size_t *)q;
    int c = util_format_cmp(ref_fmt, ref_rec + a * ref_fmt->record_size,
                            ref_rec + b * ref_fmt->record_size);
    return c != 0 ? c : (a > b) - (a < b);
}

/* One record case: @n records of format @f, keys from @distinct values (0: random bytes). */
static void record_case(const struct util_format *f, size_t n, uint64_t distinct, int threads)
{
    size_t R = f->record_size;
    unsigned char *rec = util_malloc(n * R + 1), *scr = util_malloc(n * R + 1);
    struct local_rec_tuple *tup = util_malloc((n ? local_record_tuples(n, f) : 1) * sizeof(*tup));
    size_t *order = util_malloc((n ? n : 1) * sizeof(*order));
    if (!rec || !scr || !tup || !order) {
        fprintf(stderr, "test_localsort: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char *r = rec + i * R;
        for (size_t b = 0; b < R; b++) {
            r[b] = (unsigned char)mix(i * 131 + b); /* payload: unique per record */
        }
        uint64_t v = distinct ? mix(i) % distinct : 0;
        for (size_t b = 0; b < f->key_size; b++) {
            r[f->key_offset + b] =
                distinct ? (unsigned char)mix(v * 977 + b) % 3 : (unsigned char)mix(i * 7919 + b);
        }
        order[i] = i;
    }
    ref_rec = rec;
    ref_fmt = f;
    qsort(order, n, sizeof(*order), ref_cmp);
    void *sorted = NULL;
    int rc = local_record_sort(rec, scr, tup, n, f, threads, &sorted);
    const unsigned char *out = sorted;
    size_t bad = n;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (memcmp(out + i * R, rec + order[i] * R, R) != 0) {
            bad = i;
            break;
        }
    }
    expect_true(rc == 0 && bad == n,
                "records R=%zu O=%zu K=%zu n=%zu distinct=%llu threads=%d rc=%d first difference "
                "at %zu",
                f->record_size, f->key_offset, f->key_size, n, (unsigned long long)distinct,
                threads, rc, bad);
    util_free(order);
    util_free(tup);
    util_free(scr);
    util_free(rec);
}

/* Records of every shape against a stable reference sort: the Sort Benchmark's, an odd layout
 * with many equal keys, keys over 10 bytes (ties settled by their tail), tiny records. */
static void test_records(void)
{
    static const size_t layouts[][3] = {{100, 0, 10}, {13, 3, 5},  {24, 4, 16}, {1, 0, 1},
                                        {9, 0, 9},    {40, 8, 32}, {12, 2, 8}};
    static const size_t sizes[] = {0, 1, 2, 17, 1000, 40000, 100003};
    static const uint64_t distinct[] = {0, 1, 7, 1000};
    for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
        struct util_format f;
        int rc = util_format_layout(layouts[l][0], layouts[l][1], layouts[l][2], &f);
        expect_d_eq(rc, 0, "layout %zu/%zu/%zu", layouts[l][0], layouts[l][1], layouts[l][2]);
        if (rc != 0) {
            continue;
        }
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            for (size_t d = 0; d < sizeof(distinct) / sizeof(distinct[0]); d++) {
                for (int threads = 1; threads <= 3; threads++) {
                    if (sizes[s] > 1000 && threads == 2 && d > 1) {
                        continue; /* enough cases at this size */
                    }
                    record_case(&f, sizes[s], distinct[d], threads);
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {
        TEST(small), TEST(thresholds), TEST(large),   TEST(skewed), TEST(errors),
        TEST(merge), TEST(merge_dups), TEST(records), TEST_END,
    };
    return test_main(argc, argv, tests);
}

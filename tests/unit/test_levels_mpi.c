/*
 * tests/unit/test_levels_mpi.c: the multi-level sort on every datagen distribution, through the
 * library's sortex_sort_records(), against the one-level sort of the same records.
 *
 * usage: mpirun -np P test_levels_mpi [levels=L] [NAME ...]   (L: 2 by default)
 *
 * A test per format (u64, i64, f64, gensort and a 13-byte layout with a 5-byte key at offset 3).
 * For every distribution of datagen's registry that the format can hold (the gensort family
 * only as gensort records), every rank makes its slice of the file sortex-gen would write for
 * P ranks (datagen_fill_records()), sorts one copy with one level and one with L levels, the
 * back-end of the L-level sort walking through every back-end and auto. Rank 0 gathers both
 * outputs and checks that the L-level output is in order (the format's comparison), holds the
 * records of the input (an order-independent checksum of every record's bytes and the count),
 * and is byte for byte the one-level output: with equal keys in input order (the sort is
 * stable) a sorted sequence has one right answer. Every rank ends with floor or ceil of n/P
 * records (the levels' final shift under --balance auto). Rank 0 prints a line per sort.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datagen/datagen.h"
#include "sort/sortex.h"
#include "tests/unit/test_mpi.h"
#include "util/format.h"

/* Records a rank holds on average: uneven slices (n is not a multiple of P), a few hundred
 * records each, so that every level has several records a rank and the job stays short. */
#define PER_RANK 613

/* An order-independent checksum of @n records of @r bytes: sums of two mixes of each
 * record's bytes (FNV-1a, then a multiply-xorshift). */
static void sums(const unsigned char *rec, uint64_t n, size_t r, uint64_t out[2])
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (size_t b = 0; b < r; b++) {
            h = (h ^ rec[i * r + b]) * 0x100000001b3ULL;
        }
        uint64_t x = h * 0xff51afd7ed558ccdULL;
        out[0] += h;
        out[1] += x ^ (x >> 33);
    }
}

/* Record @a after record @b in format @f's order: the bytes of the key, or the number. */
static int out_of_order(const struct util_format *f, const unsigned char *a, const unsigned char *b)
{
    if (f->byte_key) {
        return util_format_cmp(f, a, b) > 0;
    }
    uint64_t k[2];
    memcpy(&k[0], a, 8);
    memcpy(&k[1], b, 8);
    if (f->to_ordered != NULL) {
        f->to_ordered(k, 2);
    }
    return k[0] > k[1];
}

/* Sorts a copy of @in (@m records of @fmt) on every rank with @levels levels and back-end
 * @backend (NULL: auto); the slice it ends with in *@out (sortex_free_records()), *@count
 * records, the statistics in *@st (may be NULL). Returns sortex_sort_records()'s code. */
static int sort_copy(const struct util_format *fmt, const void *in, uint64_t m, int levels,
                     const char *backend, void **out, uint64_t *count, struct sortex_stats *st)
{
    size_t r = sortex_record_size(fmt);
    struct sortex_config cfg;
    sortex_config_default(&cfg);
    cfg.format = fmt;
    cfg.threads = 1;
    cfg.levels = levels;
    cfg.exchange_auto = backend == NULL;
    cfg.exchange = backend ? sortex_exchange_find(backend) : NULL;
    *out = sortex_alloc_records(fmt, m ? m : 1);
    *count = m;
    if (*out == NULL) {
        return SORTEX_ENOMEM;
    }
    memcpy(*out, in, m * r);
    return sortex_sort_records(MPI_COMM_WORLD, out, count, &cfg, st);
}

/* Every rank's @m records of @r bytes at @mine, concatenated on rank 0 (NULL elsewhere). */
static unsigned char *gather(const void *mine, uint64_t m, size_t r)
{
    int bytes = (int)(m * r), *counts = NULL, *offs = NULL;
    unsigned char *all = NULL;
    if (test_rank == 0) {
        counts = malloc((size_t)test_size * sizeof(int));
        offs = malloc((size_t)test_size * sizeof(int));
    }
    MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (test_rank == 0) {
        int total = 0;
        for (int i = 0; i < test_size; i++) {
            offs[i] = total;
            total += counts[i];
        }
        all = malloc(total ? (size_t)total : 1);
    }
    MPI_Gatherv(mine, bytes, MPI_BYTE, all, counts, offs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(offs);
    return all;
}

/* One distribution @d in format @fmt: the L-level sort against the input and the one-level
 * sort. Returns 1 when it ran, 0 when the format cannot hold @d. */
static int one_dist(const struct datagen_dist *d, const struct util_format *fmt,
                    const char *fmt_name, int levels, const char *backend)
{
    struct datagen_params p;
    datagen_params_init(&p);
    p.dist = d;
    p.format = fmt;
    p.ranks = (uint64_t)test_size;
    p.n = (uint64_t)PER_RANK * (uint64_t)test_size + 11;
    p.seed = 7;
    if (d->format != NULL && strcmp(d->format, fmt_name) != 0) {
        return 0;
    }
    expect_d_eq(datagen_check(&p), 0, "%s %s: the parameters", d->name, fmt_name);
    size_t r = sortex_record_size(fmt);
    uint64_t first = datagen_slice_begin(p.n, p.ranks, (uint64_t)test_rank);
    uint64_t m = datagen_slice_begin(p.n, p.ranks, (uint64_t)test_rank + 1) - first;
    unsigned char *in = malloc(m ? m * r : 1);
    uint64_t before[2] = {0, 0}, after[2] = {0, 0};
    expect_true(in != NULL, "out of memory");
    if (in == NULL) {
        return 1;
    }
    expect_d_eq(datagen_fill_records(&p, first, m, in), 0, "%s %s: generated", d->name, fmt_name);
    sums(in, m, r, before);
    MPI_Allreduce(MPI_IN_PLACE, before, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);

    void *one = NULL, *many = NULL;
    uint64_t n1 = 0, nl = 0;
    struct sortex_stats st;
    int rc1 = sort_copy(fmt, in, m, 1, "alltoallv", &one, &n1, NULL);
    int rcl = sort_copy(fmt, in, m, levels, backend, &many, &nl, &st);
    free(in);
    expect_d_eq(rc1, 0, "%s %s: one level", d->name, fmt_name);
    expect_d_eq(rcl, 0, "%s %s: %d levels, %s", d->name, fmt_name, levels,
                backend ? backend : "auto");
    expect_d_eq(rcl == 0 ? st.levels : levels, levels, "%s %s: the levels that ran", d->name,
                fmt_name);
    uint64_t lo = p.n / p.ranks, hi = lo + (p.n % p.ranks != 0);
    expect_true(nl >= lo && nl <= hi, "%s %s: %llu records on rank %d, not floor or ceil of n/P",
                d->name, fmt_name, (unsigned long long)nl, test_rank);
    sums(many, nl, r, after);
    MPI_Allreduce(MPI_IN_PLACE, after, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t total[2] = {n1, nl};
    MPI_Allreduce(MPI_IN_PLACE, total, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    unsigned char *all1 = gather(one, n1, r), *alll = gather(many, nl, r);
    if (test_rank == 0) {
        expect_u64_eq(total[1], p.n, "%s %s: records after %d levels", d->name, fmt_name, levels);
        expect_u64_eq(total[0], p.n, "%s %s: records after one level", d->name, fmt_name);
        expect_true(after[0] == before[0] && after[1] == before[1],
                    "%s %s: the records changed through %d levels", d->name, fmt_name, levels);
        uint64_t bad = 0;
        for (uint64_t i = 1; i < total[1] && total[1] == p.n; i++) {
            bad += out_of_order(fmt, alll + (i - 1) * r, alll + i * r);
        }
        expect_u64_eq(bad, 0, "%s %s: records out of order after %d levels", d->name, fmt_name,
                      levels);
        expect_true(total[0] == total[1] && memcmp(all1, alll, total[0] * r) == 0,
                    "%s %s: %d levels (%s) are not the one-level sort's bytes", d->name, fmt_name,
                    levels, backend ? backend : "auto");
        printf("%-18s %-8s n %llu, %d levels with %s: the one-level bytes\n", d->name, fmt_name,
               (unsigned long long)p.n, levels, backend ? backend : "auto");
    }
    free(all1);
    free(alll);
    sortex_free_records(one);
    sortex_free_records(many);
    return 1;
}

/* Every distribution in format @name (a layout when NULL), the back-ends walking from @walk. */
static void every_dist(const char *name, int expected)
{
    static int walk; /* carried over the formats, so that each meets other back-ends */
    int levels = (int)test_param_long("levels", 2), backends = 0, ran = 0;
    while (sortex_exchange_name(backends) != NULL) {
        backends++;
    }
    expect_d_ge(backends, 10, "back-ends listed");
    const struct util_format *fmt = NULL;
    if (name != NULL) {
        fmt = sortex_format_find(name);
    } else {
        expect_d_eq(sortex_format_layout(13, 3, 5, &fmt), 0, "the layout");
    }
    expect_true(fmt != NULL, "format %s", name ? name : "layout");
    if (fmt == NULL) {
        return;
    }
    for (const struct datagen_dist *const *d = datagen_list(); *d != NULL; d++) {
        int b = walk % (backends + 1); /* the last: auto */
        if (one_dist(*d, fmt, name ? name : "layout", levels,
                     b < backends ? sortex_exchange_name(b) : NULL)) {
            ran++;
            walk++;
        }
    }
    expect_d_ge(ran, expected, "distributions sorted in %s", name ? name : "layout");
    sortex_format_free(fmt);
}

/* Key distributions: datagen's registry less the gensort family. */
#define KEY_DISTS 16

static void test_u64(void)
{
    every_dist("u64", KEY_DISTS);
}

static void test_i64(void)
{
    every_dist("i64", KEY_DISTS);
}

static void test_f64(void)
{
    every_dist("f64", KEY_DISTS);
}

static void test_gensort(void)
{
    every_dist("gensort", KEY_DISTS + 4);
}

static void test_layout(void)
{
    every_dist(NULL, KEY_DISTS);
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {TEST(u64),     TEST(i64),    TEST(f64),
                                        TEST(gensort), TEST(layout), TEST_END};
    return test_mpi_main(argc, argv, tests);
}

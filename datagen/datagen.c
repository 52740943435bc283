/*
 * datagen/datagen.c: the registry, parameter defaults and checks, the slice split, and the
 * fill driver that cuts a range of the file at slice boundaries and hands each piece to the
 * distribution (see datagen.h).
 */
#include "datagen/datagen.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "datagen/internal.h"
#include "util/alloc.h"
#include "util/util.h"

/* The registry, in --list order: the benchmark family of Helman, Bader and JaJa first. */
static const struct datagen_dist *const registry[] = {
    &datagen_uniform,
    &datagen_gaussian,
    &datagen_ggroup,
    &datagen_bucket,
    &datagen_staggered,
    &datagen_zero,
    &datagen_dd,
    &datagen_rd,
    &datagen_wr,
    &datagen_sorted,
    &datagen_reverse,
    &datagen_nearly,
    &datagen_few,
    &datagen_zipf,
    &datagen_radix,
    &datagen_npb,
    &datagen_gensort,
    &datagen_gensort_skew,
    &datagen_gensort_ascii,
    &datagen_gensort_ascii_skew,
    NULL,
};

static const char *const param_names[DATAGEN_P_COUNT] = {
    [DATAGEN_P_GROUPS] = "groups",   [DATAGEN_P_BLOCKS] = "blocks",
    [DATAGEN_P_SAMPLES] = "samples", [DATAGEN_P_FRACTION] = "fraction",
    [DATAGEN_P_UNIQUE] = "unique",   [DATAGEN_P_EXPONENT] = "exponent",
    [DATAGEN_P_DOMAIN] = "domain",   [DATAGEN_P_PREFIX] = "prefix",
    [DATAGEN_P_MAX_KEY] = "max-key", [DATAGEN_P_START] = "start",
};

/* Pieces of datagen_fill_threads(): small enough to balance, large enough to amortise. */
#define FILL_PIECE ((uint64_t)1 << 16)
/* Keys generated at a time for byte-key records: a 512 KiB scratch buffer. */
#define RECORD_CHUNK ((uint64_t)1 << 16)

void datagen_params_init(struct datagen_params *p)
{
    memset(p, 0, sizeof(*p));
    p->ranks = 4;
    p->blocks = 32;
    p->fraction = 0.01;
    p->unique = 16;
    p->exponent = 1.0;
    p->domain = (uint64_t)1 << 20;
    p->prefix = 4;
}

const char *datagen_param_name(enum datagen_param param)
{
    return (unsigned)param < DATAGEN_P_COUNT ? param_names[param] : "?";
}

/* One generic range rule: an unsigned parameter in [lo, hi]. */
static int check_range(const char *what, uint64_t v, uint64_t lo, uint64_t hi)
{
    if (v < lo || v > hi) {
        return util_error("%s must be in %llu..%llu (%llu)", what, (unsigned long long)lo,
                          (unsigned long long)hi, (unsigned long long)v);
    }
    return UTIL_OK;
}

int datagen_check(const struct datagen_params *p)
{
    const struct datagen_dist *d = p->dist;
    if (d == NULL) {
        return util_error("no distribution given (--dist)");
    }
    if (p->n == 0) {
        return util_error("the key count must be at least 1 (0)");
    }
    if (p->n > DATAGEN_MAX_N) {
        return util_error("the key count must be at most 2^60 (%llu)", (unsigned long long)p->n);
    }
    /* A distribution that makes records of its own format takes no other. */
    const struct util_format *f = datagen_format(p);
    if (d->records != NULL && p->format != NULL) {
        const struct util_format *own = util_format_find(d->format);
        if (own == NULL || !util_format_same_layout(own, p->format)) {
            char want[128];
            util_format_describe(p->format, want, sizeof(want));
            return util_error("--dist %s makes %s records (it implies --format %s), not %s",
                              d->name, d->format, d->format, want);
        }
    }
    if ((dg_u128)p->n * f->record_size > DATAGEN_MAX_BYTES) {
        return util_error("the file would be larger than 2^63 bytes (%llu records of %zu bytes)",
                          (unsigned long long)p->n, f->record_size);
    }
    if (check_range("--ranks", p->ranks, 1, DATAGEN_MAX_RANKS) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    /* The generic ranges of the parameters this distribution reads. */
    unsigned use = d->params;
    int rc = UTIL_OK;
    /* A group is g of the P ranks: it cannot hold more of them than there are (the slices'
     * parts would wrap around the buckets). g may leave a smaller last group. */
    if (rc == UTIL_OK && (use & DATAGEN_PARAM_BIT(DATAGEN_P_GROUPS)) && p->groups != 0 &&
        (p->groups < 1 || p->groups > p->ranks)) {
        rc = util_error("--groups must be in 1..P, the ranks a group is made of (--groups %llu, "
                        "--ranks %llu)",
                        (unsigned long long)p->groups, (unsigned long long)p->ranks);
    }
    if (rc == UTIL_OK && (use & DATAGEN_PARAM_BIT(DATAGEN_P_BLOCKS))) {
        rc = check_range("--blocks", p->blocks, 1, (uint64_t)1 << 20);
    }
    if (rc == UTIL_OK && (use & DATAGEN_PARAM_BIT(DATAGEN_P_UNIQUE))) {
        rc = check_range("--unique", p->unique, 1, UINT64_MAX);
    }
    if (rc == UTIL_OK && (use & DATAGEN_PARAM_BIT(DATAGEN_P_DOMAIN))) {
        rc = check_range("--domain", p->domain, 1, (uint64_t)1 << 53);
    }
    if (rc == UTIL_OK && (use & DATAGEN_PARAM_BIT(DATAGEN_P_PREFIX))) {
        rc = check_range("--prefix", p->prefix, 1, 7);
    }
    if (rc == UTIL_OK && (use & DATAGEN_PARAM_BIT(DATAGEN_P_FRACTION)) &&
        !(p->fraction >= 0.0 && p->fraction <= 1.0)) {
        rc = util_error("--fraction must be in [0, 1] (%g)", p->fraction);
    }
    if (rc == UTIL_OK && (use & DATAGEN_PARAM_BIT(DATAGEN_P_EXPONENT)) &&
        !(p->exponent > 0.0 && p->exponent <= 64.0)) {
        rc = util_error("--exponent must be in (0, 64] (%g)", p->exponent);
    }
    if (rc == UTIL_OK && d->check != NULL) {
        rc = d->check(p);
    }
    return rc;
}

const struct util_format *datagen_format(const struct datagen_params *p)
{
    if (p->format != NULL) {
        return p->format;
    }
    if (p->dist != NULL && p->dist->format != NULL) {
        const struct util_format *own = util_format_find(p->dist->format);
        if (own != NULL) {
            return own;
        }
    }
    return util_format_default();
}

uint64_t datagen_slice_begin(uint64_t n, uint64_t p, uint64_t i)
{
    uint64_t prod;
    if (p == 0) {
        return 0;
    }
    /* 64-bit division when i n fits: the common case, and several times faster. */
    if (!__builtin_mul_overflow(i, n, &prod)) {
        return prod / p;
    }
    return (uint64_t)(((dg_u128)i * n) / p);
}

uint64_t datagen_slice_of(uint64_t n, uint64_t p, uint64_t pos)
{
    /* begin(i) <= pos  <=>  i n <= (pos+1) p - 1, so i = floor(((pos+1) p - 1) / n). */
    uint64_t prod;
    if (n == 0) {
        return 0;
    }
    if (!__builtin_mul_overflow(pos + 1, p, &prod)) {
        return (prod - 1) / n;
    }
    return (uint64_t)(((dg_u128)(pos + 1) * p - 1) / n);
}

const struct datagen_dist *datagen_find(const char *name)
{
    for (size_t i = 0; registry[i] != NULL; i++) {
        if (strcmp(registry[i]->name, name) == 0) {
            return registry[i];
        }
    }
    return NULL;
}

const struct datagen_dist *const *datagen_list(void)
{
    return registry;
}

void datagen_names(char *buf, size_t cap)
{
    size_t used = 0;
    if (cap == 0) {
        return;
    }
    buf[0] = '\0';
    for (size_t i = 0; registry[i] != NULL && used < cap; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", registry[i]->name);
        if (w < 0) {
            break;
        }
        used += (size_t)w;
    }
}

/* The range [first, first + count) lies in the file. */
static int check_span(const struct datagen_params *p, uint64_t first, uint64_t count)
{
    if (first > p->n || count > p->n - first) {
        return util_error("record range %llu+%llu is past the end of the file (%llu records)",
                          (unsigned long long)first, (unsigned long long)count,
                          (unsigned long long)p->n);
    }
    return UTIL_OK;
}

/* The file holds 8-byte keys (datagen_fill()'s contract), not records. */
static int check_keys(const struct datagen_params *p)
{
    const struct util_format *f = datagen_format(p);
    if (f->byte_key || p->dist->records != NULL) {
        return util_error("the file holds %zu-byte records, not 8-byte keys (--format %s)",
                          f->record_size, f->name);
    }
    return UTIL_OK;
}

/* Ordered keys [first, first + count) of a key distribution, cut at slice boundaries: the
 * distribution sees one slice at a time. */
static void fill_ordered(const struct datagen_params *p, uint64_t first, uint64_t count,
                         uint64_t *out)
{
    uint64_t pos = first, end = first + count;
    while (pos < end) {
        uint64_t rank = datagen_slice_of(p->n, p->ranks, pos);
        uint64_t b = datagen_slice_begin(p->n, p->ranks, rank);
        uint64_t e = datagen_slice_begin(p->n, p->ranks, rank + 1);
        uint64_t stop = e < end ? e : end;
        p->dist->slice(p, rank, b, e - b, pos - b, stop - pos, out + (pos - first));
        pos = stop;
    }
}

int datagen_fill(const struct datagen_params *p, uint64_t first, uint64_t count, uint64_t *out)
{
    if (check_span(p, first, count) != UTIL_OK || check_keys(p) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    fill_ordered(p, first, count, out);
    /* Ordered keys to the file's encoding. */
    const struct util_format *f = datagen_format(p);
    if (f->from_ordered != NULL) {
        f->from_ordered(out, (size_t)count);
    }
    return UTIL_OK;
}

int datagen_fill_records(const struct datagen_params *p, uint64_t first, uint64_t count, void *out)
{
    if (check_span(p, first, count) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    const struct util_format *f = datagen_format(p);
    if (p->dist->records != NULL) {
        p->dist->records(p, first, count, out);
        return UTIL_OK;
    }
    if (!f->byte_key) {
        return datagen_fill(p, first, count, out);
    }
    /* A key distribution in a byte-key format: keys into scratch, then records. */
    if (count == 0) {
        return UTIL_OK;
    }
    uint64_t chunk = count < RECORD_CHUNK ? count : RECORD_CHUNK;
    uint64_t *keys = util_malloc((size_t)chunk * sizeof(*keys));
    if (keys == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory for %llu keys", (unsigned long long)chunk);
    }
    unsigned char *rec = out;
    for (uint64_t done = 0; done < count; done += chunk) {
        uint64_t c = count - done < chunk ? count - done : chunk;
        fill_ordered(p, first + done, c, keys);
        dg_key_records(f, first + done, c, keys, rec + done * f->record_size);
    }
    util_free(keys);
    return UTIL_OK;
}

int datagen_fill_records_threads(const struct datagen_params *p, uint64_t first, uint64_t count,
                                 void *out, int threads)
{
    if (check_span(p, first, count) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    size_t r = datagen_format(p)->record_size;
    uint64_t pieces = (count + FILL_PIECE - 1) / FILL_PIECE;
    int err = UTIL_OK;
    if (threads <= 0) {
        threads = omp_get_max_threads();
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (pieces > 1)
    for (uint64_t k = 0; k < pieces; k++) {
        uint64_t off = k * FILL_PIECE;
        uint64_t c = count - off < FILL_PIECE ? count - off : FILL_PIECE;
        int e = datagen_fill_records(p, first + off, c, (unsigned char *)out + off * r);
        if (e != UTIL_OK) {
#pragma omp atomic write
            err = e;
        }
    }
    return err;
}

int datagen_fill_threads(const struct datagen_params *p, uint64_t first, uint64_t count,
                         uint64_t *out, int threads)
{
    if (check_span(p, first, count) != UTIL_OK || check_keys(p) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    /* 8-byte keys: their records are the keys (datagen_fill() of each piece). */
    return datagen_fill_records_threads(p, first, count, out, threads);
}

/* util/format.c: the table of record formats, the numbers' order-preserving maps onto uint64,
 * and byte-key layouts (see format.h). */
#include "util/format.h"

#include <stdio.h>
#include <string.h>

#include "util/util.h"

#define SIGN_BIT ((uint64_t)1 << 63)

/* Two's complement: flipping the sign bit maps INT64_MIN..INT64_MAX onto 0..UINT64_MAX. */
static void i64_flip(uint64_t *keys, size_t n)
{
#pragma omp parallel for simd schedule(static) if (parallel : n > 100000)
    for (size_t i = 0; i < n; i++) {
        keys[i] ^= SIGN_BIT;
    }
}

/* IEEE 754: negative values flip every bit, non-negative ones the sign bit (-0 < +0; NaNs go
 * to the ends by their sign). */
static void f64_to(uint64_t *keys, size_t n)
{
#pragma omp parallel for simd schedule(static) if (parallel : n > 100000)
    for (size_t i = 0; i < n; i++) {
        uint64_t k = keys[i];
        keys[i] = (k & SIGN_BIT) ? ~k : k ^ SIGN_BIT;
    }
}

static void f64_from(uint64_t *keys, size_t n)
{
#pragma omp parallel for simd schedule(static) if (parallel : n > 100000)
    for (size_t i = 0; i < n; i++) {
        uint64_t k = keys[i];
        keys[i] = (k & SIGN_BIT) ? k ^ SIGN_BIT : ~k;
    }
}

static const struct util_format format_u64 = {
    "u64", "unsigned 64-bit integers, little-endian (default)", 8, 0, 8, false, NULL, NULL};
static const struct util_format format_i64 = {
    "i64", "signed 64-bit integers, little-endian", 8, 0, 8, false, i64_flip, i64_flip};
static const struct util_format format_f64 = {
    "f64", "IEEE 754 doubles, little-endian (-0 before +0, NaNs at the ends by sign)", 8, 0, 8,
    false, f64_to, f64_from};
static const struct util_format format_gensort = {
    "gensort", "the Sort Benchmark's 100-byte records, 10-byte key first (memcmp order)", 100, 0,
    10, true, NULL, NULL};

static const struct util_format *const formats[] = {&format_u64, &format_i64, &format_f64,
                                                    &format_gensort, NULL};

const struct util_format *util_format_find(const char *name)
{
    for (size_t i = 0; formats[i] != NULL; i++) {
        if (strcmp(formats[i]->name, name) == 0) {
            return formats[i];
        }
    }
    return NULL;
}

const struct util_format *const *util_format_list(void)
{
    return formats;
}

const struct util_format *util_format_default(void)
{
    return &format_u64;
}

void util_format_names(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; formats[i] != NULL && used < cap; i++) {
        int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", formats[i]->name);
        if (n < 0) {
            break;
        }
        used += (size_t)n;
    }
}

int util_format_layout(size_t record_size, size_t key_offset, size_t key_size,
                       struct util_format *out)
{
    if (record_size == 0) {
        return util_error("--record-size must be at least 1 byte (%zu)", record_size);
    }
    if (record_size > UTIL_RECORD_MAX) {
        return util_error("--record-size is at most %zu bytes (%zu)", UTIL_RECORD_MAX,
                          record_size);
    }
    if (key_size == 0) {
        return util_error("--key-size must be at least 1 byte (%zu)", key_size);
    }
    if (key_offset > record_size || key_size > record_size - key_offset) {
        return util_error("the key reaches past the record: --key-offset + --key-size > "
                          "--record-size (%zu + %zu > %zu)",
                          key_offset, key_size, record_size);
    }
    *out = (struct util_format){"layout", "records of R bytes, K-byte key at offset O (memcmp)",
                                record_size, key_offset, key_size, true, NULL, NULL};
    return UTIL_OK;
}

int util_format_cmp(const struct util_format *f, const void *a, const void *b)
{
    return memcmp((const unsigned char *)a + f->key_offset,
                  (const unsigned char *)b + f->key_offset, f->key_size);
}

bool util_format_same_layout(const struct util_format *a, const struct util_format *b)
{
    return a->record_size == b->record_size && a->key_offset == b->key_offset &&
           a->key_size == b->key_size && a->byte_key == b->byte_key &&
           a->to_ordered == b->to_ordered;
}

void util_format_describe(const struct util_format *f, char *buf, size_t cap)
{
    if (!f->byte_key) {
        (void)snprintf(buf, cap, "%s", f->name);
        return;
    }
    (void)snprintf(buf, cap, "%s: %zu-byte records, %zu-byte key at offset %zu", f->name,
                   f->record_size, f->key_size, f->key_offset);
}

/* ---- the format options -------------------------------------------------------------------- */

void util_format_args_init(struct util_format_args *a)
{
    memset(a, 0, sizeof(*a));
}

bool util_format_given(const struct util_format_args *a)
{
    return a->named != NULL || a->have_record_size || a->have_key_offset || a->have_key_size;
}

/* A layout number: a count (util_parse_count() syntax) that fits a size_t. */
static int parse_layout_number(const char *flag, const char *arg, uint64_t *out)
{
    if (util_parse_count(arg, out) != UTIL_OK || *out > SIZE_MAX) {
        return util_error("%s needs a number of bytes such as 100 or 4Ki (%s)", flag, arg);
    }
    return UTIL_OK;
}

int util_format_parse(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    struct util_format_args *a = (struct util_format_args *)((char *)dest + opt->off);
    char names[128];
    if (strcmp(opt->name, "record-size") == 0) {
        a->have_record_size = true;
        return parse_layout_number("--record-size", arg, &a->record_size);
    }
    if (strcmp(opt->name, "key-offset") == 0) {
        a->have_key_offset = true;
        return parse_layout_number("--key-offset", arg, &a->key_offset);
    }
    if (strcmp(opt->name, "key-size") == 0) {
        a->have_key_size = true;
        return parse_layout_number("--key-size", arg, &a->key_size);
    }
    /* --format and its alias --type */
    a->named = util_format_find(arg);
    if (a->named == NULL) {
        util_format_names(names, sizeof(names));
        return util_error("unknown format, expected one of %s or a layout (--record-size) (%s)",
                          names, arg);
    }
    return UTIL_OK;
}

int util_format_resolve(struct util_format_args *a, const struct util_format *dflt,
                        const struct util_format **out)
{
    bool layout = a->have_record_size || a->have_key_offset || a->have_key_size;
    if (!layout) {
        *out = a->named != NULL ? a->named : dflt;
        return UTIL_OK;
    }
    if (!a->have_record_size) {
        return util_error("%s needs --record-size (%llu)",
                          a->have_key_offset ? "--key-offset" : "--key-size",
                          (unsigned long long)(a->have_key_offset ? a->key_offset : a->key_size));
    }
    /* The key defaults to the named format's, else to the rest of the record (from offset 0);
     * an offset past the record is caught below. */
    const struct util_format *nb = a->named != NULL && a->named->byte_key ? a->named : NULL;
    uint64_t r = a->record_size;
    uint64_t o = a->have_key_offset ? a->key_offset : nb != NULL ? nb->key_offset : 0;
    uint64_t k = a->have_key_size ? a->key_size : nb != NULL ? nb->key_size : o < r ? r - o : 0;
    if (!a->have_key_size && r > 0 && o >= r) {
        return util_error("--key-offset must be below --record-size %llu (%llu)",
                          (unsigned long long)r, (unsigned long long)o);
    }
    if (util_format_layout((size_t)r, (size_t)o, (size_t)k, &a->layout) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    if (a->named != NULL) {
        if (!util_format_same_layout(a->named, &a->layout)) {
            return util_error("--format %s contradicts the layout flags (--record-size %llu "
                              "--key-offset %llu --key-size %llu)",
                              a->named->name, (unsigned long long)r, (unsigned long long)o,
                              (unsigned long long)k);
        }
        *out = a->named;
        return UTIL_OK;
    }
    *out = &a->layout;
    return UTIL_OK;
}

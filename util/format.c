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
        return util_error("the key reaches past the record: offset %zu + size %zu > %zu bytes "
                          "(--key-offset, --key-size, --record-size)",
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

/* util/keytype.c: order-preserving maps of key types onto uint64 (see keytype.h). */
#include "util/keytype.h"

#include <stdio.h>
#include <string.h>

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

static const struct util_keytype type_u64 = {"u64", "unsigned 64-bit integers (default)", 8,
                                             NULL, NULL};
static const struct util_keytype type_i64 = {"i64", "signed 64-bit integers", 8, i64_flip,
                                             i64_flip};
static const struct util_keytype type_f64 = {"f64", "IEEE 754 doubles (-0 before +0)", 8, f64_to,
                                             f64_from};

static const struct util_keytype *const types[] = {&type_u64, &type_i64, &type_f64, NULL};

const struct util_keytype *util_keytype_find(const char *name)
{
    for (size_t i = 0; types[i] != NULL; i++) {
        if (strcmp(types[i]->name, name) == 0) {
            return types[i];
        }
    }
    return NULL;
}

const struct util_keytype *const *util_keytype_list(void)
{
    return types;
}

void util_keytype_names(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; types[i] != NULL && used < cap; i++) {
        int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", types[i]->name);
        if (n < 0) {
            break;
        }
        used += (size_t)n;
    }
}

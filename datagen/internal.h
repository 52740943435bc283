/*
 * datagen/internal.h: helpers shared by the distribution files of datagen/ (not public).
 *
 * Random bits: dg_rand(stream, c) is the SplitMix64 output function (Steele, Lea and Flood,
 * "Fast splittable pseudorandom number generators", OOPSLA 2014) applied to stream + c * gamma.
 * For a fixed stream the values for c = 1, 2, 3, ... are exactly the SplitMix64 sequence, which
 * passes BigCrush; being a function of the counter, any position can be computed directly.
 * Streams are keyed by the seed and a purpose constant through the same mixer, so the streams
 * of different purposes (values, weights, swap permutation, ...) are unrelated.
 */
#ifndef SORTEX_DATAGEN_INTERNAL_H
#define SORTEX_DATAGEN_INTERNAL_H

#include <stdint.h>

#include "datagen/datagen.h"

typedef unsigned __int128 dg_u128;

#define DG_GAMMA 0x9e3779b97f4a7c15ull

/* Stream purposes: one constant each, so that no two uses of the seed share random bits. */
enum dg_stream {
    DG_S_KEYS = 1, /* the per-position keys */
    DG_S_GAUSS,    /* the four uniforms of a gaussian key */
    DG_S_CONST,    /* single values: zero's key, radix's prefix */
    DG_S_WEIGHTS,  /* rd block weights */
    DG_S_VALUES,   /* rd block values, few's value table */
    DG_S_PERM,     /* nearly's swap permutation */
    DG_S_OFFSET,   /* wr's value offset */
    DG_S_COUNT
};

/* The SplitMix64 output function: a bijection on 64 bits with full avalanche. */
static inline uint64_t dg_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The stream of @purpose for @seed (and a sub-stream, e.g. the rank). */
static inline uint64_t dg_stream(uint64_t seed, enum dg_stream purpose, uint64_t sub)
{
    return dg_mix(dg_mix(seed ^ ((uint64_t)purpose << 56)) + sub * DG_GAMMA);
}

/* Random 64 bits number @c of @stream. */
static inline uint64_t dg_rand(uint64_t stream, uint64_t c)
{
    return dg_mix(stream + (c + 1) * DG_GAMMA);
}

/* floor(x * w / 2^64): a uniform 64-bit x scaled into [0, w) (w = 0 means 2^64, giving x). */
static inline uint64_t dg_scale(uint64_t x, uint64_t w)
{
    return w == 0 ? x : (uint64_t)(((dg_u128)x * w) >> 64);
}

/* Part k of the floor split of c items into q parts starts here (k = q gives c). */
static inline uint64_t dg_split(uint64_t c, uint64_t q, uint64_t k)
{
    return datagen_slice_begin(c, q, k);
}

/* The part of the floor split of c items into q parts that holds item t < c. */
static inline uint64_t dg_part_of(uint64_t c, uint64_t q, uint64_t t)
{
    return datagen_slice_of(c, q, t);
}

/* Lower end of value bucket b of P: floor(b 2^64 / P). */
static inline uint64_t dg_bucket_lo(uint64_t b, uint64_t P)
{
    return b == 0 ? 0 : (uint64_t)(((dg_u128)b << 64) / P);
}

/* Width of value bucket b of P (0 stands for 2^64, only when P = 1). */
static inline uint64_t dg_bucket_width(uint64_t b, uint64_t P)
{
    uint64_t hi = b + 1 == P ? 0 : dg_bucket_lo(b + 1, P); /* 2^64 wraps to 0 */
    return hi - dg_bucket_lo(b, P);
}

/* Keys [t0, t0+count) of a slice, all U(b): uniform in value bucket b of P. */
static inline void dg_fill_bucket(uint64_t stream, uint64_t b, uint64_t P, uint64_t pos,
                                  uint64_t count, uint64_t *out)
{
    uint64_t lo = dg_bucket_lo(b, P);
    uint64_t w = dg_bucket_width(b, P);
    for (uint64_t k = 0; k < count; k++) {
        out[k] = lo + dg_scale(dg_rand(stream, pos + k), w);
    }
}

/* floor(log2(x)) for x >= 1. */
static inline unsigned dg_log2(uint64_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

/*
 * Turns the ordered keys of records [first, first + count) of the file into @count records of
 * byte-key format @f at @out (datagen/records.c; the recipe is in datagen/README.md).
 */
void dg_key_records(const struct util_format *f, uint64_t first, uint64_t count,
                    const uint64_t *keys, unsigned char *out);

/* The registered distributions, one const instance each (defined in their files). */
extern const struct datagen_dist datagen_uniform, datagen_gaussian, datagen_ggroup, datagen_bucket,
    datagen_staggered, datagen_zero, datagen_dd, datagen_rd, datagen_wr, datagen_sorted,
    datagen_reverse, datagen_nearly, datagen_few, datagen_zipf, datagen_radix, datagen_npb,
    datagen_gensort, datagen_gensort_skew, datagen_gensort_ascii, datagen_gensort_ascii_skew;

#endif

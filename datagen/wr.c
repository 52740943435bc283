/*
 * datagen/wr.c: worst-case regular [WR], the input that drives regular sampling to its
 * guaranteed worst bucket, m + P(m/s - 1) keys on one rank.
 *
 * The attacked scheme (parallel sorting by regular sampling, Shi and Schaeffer, JPDC 14(4),
 * 1992; bound as in Helman, JaJa and Bader, "A new deterministic parallel sorting algorithm
 * with an experimental evaluation", JEA 3, 1998), with this exact sample convention:
 *   1. rank i sorts its m keys a_0 <= ... <= a_(m-1) and takes s samples, the last key of each
 *      part of the floor split of m into s: positions floor((k+1) m / s) - 1, k = 0..s-1;
 *   2. the P s samples are sorted, y_0 <= ... <= y_(Ps-1); splitter j = y_(js), j = 1..P-1;
 *   3. bucket j holds the keys x with y_(js) <= x < y_((j+1)s) (bucket 0: x < y_s; bucket P-1:
 *      x >= y_((P-1)s)); bucket j goes to rank j.
 * The bound, for distinct keys, m divisible by s, w = m/s: if rank i has c_i samples below
 * bucket j's upper splitter and d_i below its lower one, it has at most (c_i + 1) w - 1 keys
 * below the upper one (at most m when c_i = s) and at least d_i w below the lower one; the
 * c_i - d_i add up to s, so the bucket holds at most s w + P (w - 1) = m + P(m/s - 1).
 *
 * Construction from that property: give rank i c_i "small" samples, the floor split of s over
 * P ranks (all c_i < s once P >= 2 and s >= 2). Every key of rank i before its (c_i+1)-th sample
 * (position floor((c_i+1) m / s) - 1) is small, that sample and everything after it large, and
 * every small key is below every large one. Exactly s samples are small, so splitter 1 is the
 * smallest large sample, which is no larger than any large key: bucket 0 is exactly the small
 * keys, sum_i (floor((c_i+1) m_i / s) - 1) = m + P(m/s - 1) when s divides m and P divides n
 * (within about 2P otherwise, from the floors). With s = 1 or P = 1 no c_i can stay below s, and
 * the rank with c_i = s contributes its m keys, not m + w - 1.
 *
 * Keys are distinct: a bijective 63-bit scramble of (position + a seeded offset), with the top
 * bit set for large keys. Within a slice the small keys come first. Cost O(1) per key.
 */
#include <stdio.h>

#include "datagen/internal.h"
#include "util/util.h"

#define MASK63 (((uint64_t)1 << 63) - 1)

/* The samples per rank actually used: --samples, or P by default (classic PSRS). */
static uint64_t wr_samples(const struct datagen_params *p)
{
    return p->samples != 0 ? p->samples : p->ranks;
}

/* A bijection on [0, 2^63): xor-shifts and odd multipliers, each invertible modulo 2^63. */
static uint64_t scramble63(uint64_t x)
{
    x &= MASK63;
    x ^= x >> 31;
    x = (x * 0x7fb5d329728ea185ull) & MASK63;
    x ^= x >> 27;
    x = (x * 0x81dadef4bc2dd44dull) & MASK63;
    x ^= x >> 33;
    return x;
}

static void wr_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                     uint64_t t0, uint64_t count, uint64_t *out)
{
    uint64_t s = wr_samples(p);
    uint64_t off = dg_rand(dg_stream(p->seed, DG_S_OFFSET, 0), 0);
    /* c: this rank's small samples; small: its keys before sample c. */
    uint64_t c = dg_split(s, p->ranks, rank + 1) - dg_split(s, p->ranks, rank);
    uint64_t small = c >= s ? m : dg_split(m, s, c + 1) - 1;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t t = t0 + k;
        uint64_t v = scramble63(begin + t + off);
        out[k] = t < small ? v : v | ((uint64_t)1 << 63);
    }
}

/* Every slice needs at least s keys to take s samples. */
static int wr_check(const struct datagen_params *p)
{
    uint64_t s = wr_samples(p);
    uint64_t least = p->n / p->ranks;
    if (s < 1 || s > least) {
        return util_error("wr needs 1 <= s <= floor(n/P) = %llu samples per rank "
                          "(--samples, default P) (%llu)",
                          (unsigned long long)least, (unsigned long long)s);
    }
    return UTIL_OK;
}

const struct datagen_dist datagen_wr = {
    .name = "wr",
    .summary = "[WR] bucket 0 of regular sampling gets m + P(m/s - 1) keys (samples at "
               "floor((k+1)m/s)-1, splitters y_s, y_2s, ..., buckets [y_js, y_(j+1)s)); s = P "
               "by default",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_SAMPLES),
    .seeded = true,
    .check = wr_check,
    .slice = wr_slice,
};

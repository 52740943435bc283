/*
 * datagen/hbj.c: the sample-sort benchmark inputs of Helman, Bader and JaJa, "A Randomized
 * Parallel Sorting Algorithm with an Experimental Study" (JPDC 52(1), 1998), section 4: uniform
 * [U], gaussian [G], g-group [g-G], bucket-sorted [B], staggered [S], zero [Z], deterministic
 * duplicates [DD] and randomized duplicates [RD]. Worst-case regular [WR] is in wr.c.
 *
 * The paper defines them for P a power of two and m = n/P keys per processor, with 31-bit keys;
 * here keys span 64 bits and the recipes are extended to any P and any n with the floor split
 * (datagen.h): wherever the paper takes "m/q keys" for q parts, part k is
 * [floor(k m / q), floor((k+1) m / q)), and P/2 means floor(P/2). Each recipe costs O(1) per
 * key (rd: O(r) per slice piece), so these generate at memory speed.
 */
#include "datagen/internal.h"
#include "util/util.h"

/* [U] Every key uniform in [0, 2^64). */
static void uniform_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                          uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)m;
    uint64_t s = dg_stream(p->seed, DG_S_KEYS, 0);
    uint64_t pos = begin + t0;
    for (uint64_t k = 0; k < count; k++) {
        out[k] = dg_rand(s, pos + k);
    }
}

/* [G] The mean of four uniform 64-bit values, rounded down (exact, through 66-bit sums). */
static void gaussian_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin,
                           uint64_t m, uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)m;
    uint64_t s = dg_stream(p->seed, DG_S_GAUSS, 0);
    uint64_t pos = begin + t0;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t c = 4 * (pos + k);
        dg_u128 sum =
            (dg_u128)dg_rand(s, c) + dg_rand(s, c + 1) + dg_rand(s, c + 2) + dg_rand(s, c + 3);
        out[k] = (uint64_t)(sum >> 2);
    }
}

/*
 * Calls fill for every part of the floor split of a slice of m keys into q parts that meets
 * [t0, t0 + count): part k gets bucket bucket_of(k). Empty parts are skipped in O(1).
 */
typedef uint64_t bucket_of_fn(const struct datagen_params *p, uint64_t rank, uint64_t part);

static void fill_parts(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                       uint64_t q, bucket_of_fn *bucket_of, uint64_t t0, uint64_t count,
                       uint64_t *out)
{
    uint64_t s = dg_stream(p->seed, DG_S_KEYS, 0);
    uint64_t t = t0, end = t0 + count;
    while (t < end) {
        uint64_t part = dg_part_of(m, q, t);
        uint64_t stop = dg_split(m, q, part + 1);
        stop = stop < end ? stop : end;
        dg_fill_bucket(s, bucket_of(p, rank, part), p->ranks, begin + t, stop - t, out + (t - t0));
        t = stop;
    }
}

/* The g of ggroup: --groups, by default 2 (P on one rank, where a group has one rank). */
static uint64_t ggroup_g(const struct datagen_params *p)
{
    return p->groups != 0 ? p->groups : p->ranks < 2 ? p->ranks : 2;
}

/* [g-G] Group of rank i starts at rank i - (i mod g); v = (that + floor(P/2)) mod P; part k of
 * g holds U((v + k) mod P). A last group smaller than g (g not dividing P) keeps the rule;
 * g <= P (datagen_check()). */
static uint64_t ggroup_bucket(const struct datagen_params *p, uint64_t rank, uint64_t part)
{
    uint64_t P = p->ranks;
    uint64_t v = ((rank - rank % ggroup_g(p)) + P / 2) % P;
    return (v + part % P) % P;
}

static void ggroup_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                         uint64_t t0, uint64_t count, uint64_t *out)
{
    fill_parts(p, rank, begin, m, ggroup_g(p), ggroup_bucket, t0, count, out);
}

/* [B] Part b of P of every slice holds U(b): each slice is sorted by bucket. */
static uint64_t bucket_bucket(const struct datagen_params *p, uint64_t rank, uint64_t part)
{
    (void)p;
    (void)rank;
    return part;
}

static void bucket_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                         uint64_t t0, uint64_t count, uint64_t *out)
{
    fill_parts(p, rank, begin, m, p->ranks, bucket_bucket, t0, count, out);
}

/* [S] With h = floor(P/2): rank i < h holds U(2i + 1), rank i >= h holds U(2(i - h)). For
 * even P this is the paper's 2i - P; for odd P the h + 1 upper ranks take the even buckets. */
static void staggered_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin,
                            uint64_t m, uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)m;
    uint64_t h = p->ranks / 2;
    uint64_t b = rank < h ? 2 * rank + 1 : 2 * (rank - h);
    dg_fill_bucket(dg_stream(p->seed, DG_S_KEYS, 0), b, p->ranks, begin + t0, count, out);
}

/* [Z] Every key the same value, drawn from the seed. */
static void zero_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                       uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)begin;
    (void)m;
    (void)t0;
    uint64_t v = dg_rand(dg_stream(p->seed, DG_S_CONST, 0), 0);
    for (uint64_t k = 0; k < count; k++) {
        out[k] = v;
    }
}

/* floor(log2(a / b)) for a >= b >= 1. */
static uint64_t log2_ratio(uint64_t a, uint64_t b)
{
    unsigned q = dg_log2(a) - dg_log2(b);
    if (((dg_u128)b << q) > a) {
        q--;
    }
    return q;
}

/* max(v, 0) for a possibly negative duplicate value. */
static uint64_t clamp0(int64_t v)
{
    return v < 0 ? 0 : (uint64_t)v;
}

/*
 * [DD] L = floor(log2 n). The ranks halve into groups: group q = ranks
 * [P - floor(P/2^q), P - floor(P/2^(q+1))) (P/2 ranks, then P/4, ..., for P a power of two)
 * holds only L - q. The last rank is the last group on its own and halves its m keys the same
 * way: part k = [m - floor(m/2^k), m - floor(m/2^(k+1))) holds L - floor(log2 P) - k. Values
 * below zero (tiny n) are clamped to 0.
 */
static void dd_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                     uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)begin;
    int64_t L = (int64_t)dg_log2(p->n);
    uint64_t P = p->ranks;
    if (rank + 1 < P) {
        uint64_t v = clamp0(L - (int64_t)log2_ratio(P, P - rank));
        for (uint64_t k = 0; k < count; k++) {
            out[k] = v;
        }
        return;
    }
    /* The last rank: halving parts, walked incrementally. */
    int64_t base = L - (int64_t)dg_log2(P);
    uint64_t part = log2_ratio(m, m - t0);
    uint64_t stop = m - (m >> (part + 1));
    for (uint64_t k = 0; k < count; k++) {
        uint64_t t = t0 + k;
        while (t >= stop) {
            part++;
            stop = m - (m >> (part + 1));
        }
        out[k] = clamp0(base - (int64_t)part);
    }
}

/*
 * [RD] Per rank: r weights w_b = 1 + (uniform in 0..r-1) with total S, prefix sums C_b;
 * block b = [floor(m C_b / S), floor(m C_(b+1) / S)) holds one value, uniform in 0..r-1. The
 * weights and values are drawn from streams of (seed, rank), so every slice differs.
 */
static void rd_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                     uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)begin;
    uint64_t r = p->blocks;
    uint64_t ws = dg_stream(p->seed, DG_S_WEIGHTS, rank);
    uint64_t vs = dg_stream(p->seed, DG_S_VALUES, rank);
    uint64_t total = 0;
    for (uint64_t b = 0; b < r; b++) {
        total += 1 + dg_scale(dg_rand(ws, b), r);
    }
    /* Walk the blocks; fill the part of each that meets [t0, t0 + count). */
    uint64_t cum = 0, end = t0 + count;
    for (uint64_t b = 0; b < r; b++) {
        uint64_t lo = (uint64_t)((dg_u128)m * cum / total);
        cum += 1 + dg_scale(dg_rand(ws, b), r);
        uint64_t hi = (uint64_t)((dg_u128)m * cum / total);
        if (hi <= t0) {
            continue;
        }
        if (lo >= end) {
            break;
        }
        uint64_t v = dg_scale(dg_rand(vs, b), r);
        uint64_t from = lo > t0 ? lo : t0, to = hi < end ? hi : end;
        for (uint64_t t = from; t < to; t++) {
            out[t - t0] = v;
        }
    }
}

const struct datagen_dist datagen_uniform = {
    .name = "uniform",
    .summary = "[U] every key uniform in [0, 2^64)",
    .seeded = true,
    .slice = uniform_slice,
};

const struct datagen_dist datagen_gaussian = {
    .name = "gaussian",
    .summary = "[G] each key the mean of four uniform keys, rounded down",
    .seeded = true,
    .slice = gaussian_slice,
};

const struct datagen_dist datagen_ggroup = {
    .name = "ggroup",
    .summary = "[g-G] rank i: v = (i - i mod g + floor(P/2)) mod P; part k of g of the slice is "
               "U((v+k) mod P)",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_GROUPS),
    .seeded = true,
    .slice = ggroup_slice,
};

const struct datagen_dist datagen_bucket = {
    .name = "bucket",
    .summary = "[B] part b of P of every slice is U(b): slices sorted by value bucket",
    .seeded = true,
    .slice = bucket_slice,
};

const struct datagen_dist datagen_staggered = {
    .name = "staggered",
    .summary = "[S] h = floor(P/2): rank i < h holds U(2i+1), rank i >= h holds U(2(i-h))",
    .seeded = true,
    .slice = staggered_slice,
};

const struct datagen_dist datagen_zero = {
    .name = "zero",
    .summary = "[Z] every key the same value (drawn from the seed)",
    .seeded = true,
    .slice = zero_slice,
};

const struct datagen_dist datagen_dd = {
    .name = "dd",
    .summary = "[DD] L = floor(log2 n); rank group q = [P - P/2^q, P - P/2^(q+1)) holds L-q; "
               "the last rank's part k = [m - m/2^k, m - m/2^(k+1)) holds L - log2 P - k "
               "(floors, clamped at 0)",
    .seeded = false,
    .slice = dd_slice,
};

const struct datagen_dist datagen_rd = {
    .name = "rd",
    .summary = "[RD] per rank: r blocks sized by weights uniform in 1..r, each one value "
               "uniform in 0..r-1",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_BLOCKS),
    .seeded = true,
    .slice = rd_slice,
};

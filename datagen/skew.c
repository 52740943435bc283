/*
 * datagen/skew.c: inputs with skewed values: few unique values, a Zipf law, and keys that
 * share their top bytes (an adversary for radix sorts that start at the most significant
 * digit). All three are defined on the whole file, not per rank; O(1) per key.
 */
#include <math.h>

#include "datagen/internal.h"

/* few: k values drawn once from the seed (at most k distinct); each key picks one uniformly. */
static void few_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                      uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)m;
    uint64_t s = dg_stream(p->seed, DG_S_KEYS, 0), vs = dg_stream(p->seed, DG_S_VALUES, 0);
    for (uint64_t k = 0; k < count; k++) {
        uint64_t which = dg_scale(dg_rand(s, begin + t0 + k), p->unique);
        out[k] = dg_rand(vs, which);
    }
}

/*
 * zipf: value v in 0..D-1 with probability proportional to (v+1)^-s, drawn by
 * rejection-inversion (Hoermann and Derflinger, "Rejection-inversion to generate variates
 * from monotone discrete distributions", ACM TOMACS 6(3), 1996): invert the integral H of the
 * hat h(x) = x^-s at a uniform point, round to the nearest integer k and accept unless the point
 * falls in the hat's excess over k^-s. O(1) expected per key for every s > 0 and D: over 98% of
 * first attempts are accepted for s from 0.5 to 3. Attempt a of key j draws from stream a, so
 * every key still depends only on its position.
 */
struct zipf {
    double s;       /* exponent */
    double h_x1;    /* H(1.5) - 1 */
    double h_n;     /* H(D + 0.5) */
    double squeeze; /* accept at once when k - x <= this */
    double d;       /* D */
};

/* expm1(y)/y and log1p(y)/y, with their Taylor series near 0 (where s is close to 1). */
static double expm1_ratio(double y)
{
    return fabs(y) > 1e-8 ? expm1(y) / y : 1.0 + y * 0.5 * (1.0 + y / 3.0 * (1.0 + 0.25 * y));
}

static double log1p_ratio(double y)
{
    return fabs(y) > 1e-8 ? log1p(y) / y : 1.0 - y * (0.5 - y * (1.0 / 3.0 - 0.25 * y));
}

/* H(x) = integral of t^-s from 1 to x; h(x) = x^-s; H^-1. */
static double zipf_H(const struct zipf *z, double x)
{
    double lx = log(x);
    return expm1_ratio((1.0 - z->s) * lx) * lx;
}

static double zipf_h(const struct zipf *z, double x)
{
    return exp(-z->s * log(x));
}

static double zipf_H_inv(const struct zipf *z, double u)
{
    double t = u * (1.0 - z->s);
    if (t < -1.0) {
        t = -1.0; /* rounding guard: H^-1 is only defined above -1/(1-s) */
    }
    return exp(log1p_ratio(t) * u);
}

static void zipf_init(struct zipf *z, double s, uint64_t domain)
{
    z->s = s;
    z->d = (double)domain;
    z->h_x1 = zipf_H(z, 1.5) - 1.0;
    z->h_n = zipf_H(z, z->d + 0.5);
    z->squeeze = 2.0 - zipf_H_inv(z, zipf_H(z, 2.5) - zipf_h(z, 2.0));
}

/* One Zipf variate in 1..D from the random bits of position j. */
static uint64_t zipf_draw(const struct zipf *z, uint64_t seed, uint64_t s0, uint64_t j)
{
    for (uint64_t a = 0;; a++) {
        uint64_t bits = a == 0 ? dg_rand(s0, j) : dg_rand(dg_stream(seed, DG_S_KEYS, a), j);
        double u01 = (double)(bits >> 11) * 0x1p-53;
        double u = z->h_n + u01 * (z->h_x1 - z->h_n);
        double x = zipf_H_inv(z, u);
        double kd = floor(x + 0.5);
        kd = kd < 1.0 ? 1.0 : (kd > z->d ? z->d : kd);
        if (kd - x <= z->squeeze || u >= zipf_H(z, kd + 0.5) - zipf_h(z, kd)) {
            return (uint64_t)kd;
        }
    }
}

static void zipf_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                       uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)m;
    struct zipf z;
    zipf_init(&z, p->exponent, p->domain);
    uint64_t s0 = dg_stream(p->seed, DG_S_KEYS, 0);
    for (uint64_t k = 0; k < count; k++) {
        out[k] = zipf_draw(&z, p->seed, s0, begin + t0 + k) - 1;
    }
}

/* radix: the top B bytes are one value drawn from the seed, the other bytes uniform. */
static void radix_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                        uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)m;
    uint64_t top = ~(uint64_t)0 << (64 - 8 * p->prefix);
    uint64_t prefix = dg_rand(dg_stream(p->seed, DG_S_CONST, 0), 0) & top;
    uint64_t s = dg_stream(p->seed, DG_S_KEYS, 0);
    for (uint64_t k = 0; k < count; k++) {
        out[k] = prefix | (dg_rand(s, begin + t0 + k) & ~top);
    }
}

const struct datagen_dist datagen_few = {
    .name = "few",
    .summary = "k values drawn from the seed; every key one of them, uniformly (<= k distinct)",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_UNIQUE),
    .seeded = true,
    .slice = few_slice,
};

const struct datagen_dist datagen_zipf = {
    .name = "zipf",
    .summary = "key v in 0..D-1 with probability proportional to (v+1)^-s (rejection-inversion)",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_EXPONENT) | DATAGEN_PARAM_BIT(DATAGEN_P_DOMAIN),
    .seeded = true,
    .slice = zipf_slice,
};

const struct datagen_dist datagen_radix = {
    .name = "radix",
    .summary = "the top B bytes of every key are one value drawn from the seed, the rest uniform",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_PREFIX),
    .seeded = true,
    .slice = radix_slice,
};

/*
 * datagen/order.c: presorted inputs: sorted, reverse and nearly sorted. They are defined on
 * the whole file, not per rank.
 *
 * sorted: with step = floor((2^64 - 1) / n), key j is uniform in [j step, (j+1) step), so the
 * file is strictly increasing and spread over the whole key range. reverse is the same file
 * backwards (key j = sorted key n-1-j). nearly applies floor(f n / 2) disjoint swaps to the
 * sorted file, between positions paired by a random permutation pi of [0, n): pi(2q) and
 * pi(2q+1) trade keys for q < floor(f n / 2), so exactly that many pairs are out of place,
 * anywhere in the file.
 *
 * pi is a keyed four-round Feistel network on the smallest even number of bits that holds n,
 * restricted to [0, n) by cycle walking (Black and Rogaway, "Ciphers with arbitrary finite
 * domains", CT-RSA 2002, section 4): a bijection computable at any position, so key j needs only
 * pi^-1(j) and, for a swapped key, pi of its partner. The domain is below 4n, so a walk takes
 * under four steps on average; nearly costs some tens of nanoseconds a key.
 */
#include "datagen/internal.h"

#define FEISTEL_ROUNDS 4

/* The swap permutation: half-width, mask and round keys. */
struct feistel {
    unsigned half;
    uint64_t mask;
    uint64_t n;
    uint64_t key[FEISTEL_ROUNDS];
};

static void feistel_init(struct feistel *f, uint64_t seed, uint64_t n)
{
    unsigned bits = n > 1 ? dg_log2(n - 1) + 1 : 1;
    f->half = (bits + 1) / 2;
    f->mask = ((uint64_t)1 << f->half) - 1;
    f->n = n;
    uint64_t s = dg_stream(seed, DG_S_PERM, 0);
    for (int r = 0; r < FEISTEL_ROUNDS; r++) {
        f->key[r] = dg_rand(s, (uint64_t)r);
    }
}

static uint64_t feistel_round(const struct feistel *f, int r, uint64_t x)
{
    return dg_mix(x + f->key[r]) & f->mask;
}

/* pi: encrypt, walking the cycle until the value falls inside [0, n). */
static uint64_t feistel_perm(const struct feistel *f, uint64_t x)
{
    do {
        uint64_t l = x >> f->half, r = x & f->mask;
        for (int k = 0; k < FEISTEL_ROUNDS; k++) {
            uint64_t t = l ^ feistel_round(f, k, r);
            l = r;
            r = t;
        }
        x = (l << f->half) | r;
    } while (x >= f->n);
    return x;
}

/* pi^-1: the rounds backwards, with the same walk. */
static uint64_t feistel_inverse(const struct feistel *f, uint64_t y)
{
    do {
        uint64_t l = y >> f->half, r = y & f->mask;
        for (int k = FEISTEL_ROUNDS - 1; k >= 0; k--) {
            uint64_t t = r ^ feistel_round(f, k, l);
            r = l;
            l = t;
        }
        y = (l << f->half) | r;
    } while (y >= f->n);
    return y;
}

/* Key j of the sorted file. */
static uint64_t sorted_key(uint64_t s, uint64_t step, uint64_t j)
{
    return j * step + dg_scale(dg_rand(s, j), step);
}

static void sorted_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                         uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)m;
    uint64_t s = dg_stream(p->seed, DG_S_KEYS, 0), step = UINT64_MAX / p->n;
    for (uint64_t k = 0; k < count; k++) {
        out[k] = sorted_key(s, step, begin + t0 + k);
    }
}

static void reverse_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                          uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)m;
    uint64_t s = dg_stream(p->seed, DG_S_KEYS, 0), step = UINT64_MAX / p->n;
    uint64_t last = p->n - 1;
    for (uint64_t k = 0; k < count; k++) {
        out[k] = sorted_key(s, step, last - (begin + t0 + k));
    }
}

static void nearly_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                         uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)m;
    uint64_t s = dg_stream(p->seed, DG_S_KEYS, 0), step = UINT64_MAX / p->n;
    uint64_t pairs = (uint64_t)(p->fraction * (double)p->n / 2.0);
    pairs = pairs > p->n / 2 ? p->n / 2 : pairs;
    struct feistel f;
    feistel_init(&f, p->seed, p->n);
    for (uint64_t k = 0; k < count; k++) {
        uint64_t j = begin + t0 + k;
        /* Position x = pi^-1(j) of the pairing; the first 2 * pairs are swapped. */
        if (pairs > 0) {
            uint64_t x = feistel_inverse(&f, j);
            if (x < 2 * pairs) {
                j = feistel_perm(&f, x ^ 1);
            }
        }
        out[k] = sorted_key(s, step, j);
    }
}

const struct datagen_dist datagen_sorted = {
    .name = "sorted",
    .summary = "key j uniform in [j d, (j+1) d), d = floor((2^64-1)/n): strictly increasing",
    .seeded = true,
    .slice = sorted_slice,
};

const struct datagen_dist datagen_reverse = {
    .name = "reverse",
    .summary = "the sorted file backwards: strictly decreasing",
    .seeded = true,
    .slice = reverse_slice,
};

const struct datagen_dist datagen_nearly = {
    .name = "nearly",
    .summary = "the sorted file with floor(f n/2) disjoint swaps of random position pairs "
               "(a fraction f of keys moved)",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_FRACTION),
    .seeded = true,
    .slice = nearly_slice,
};

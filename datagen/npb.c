/*
 * datagen/npb.c: the key stream of the NAS Parallel Benchmarks IS kernel (Bailey et al., "The
 * NAS Parallel Benchmarks", RNR-94-007, 1994, section 2.6; NPB 3.x is.c create_seq()).
 *
 * x_(k+1) = a x_k mod 2^46 with a = 5^13 and x_0 = 314159265; key i is
 * floor(MAX_KEY/4 (r_(4i+1) + r_(4i+2) + r_(4i+3) + r_(4i+4))) with r_k = x_k / 2^46, i.e. in
 * exact integers floor(MAX_KEY (x_(4i+1) + ... + x_(4i+4)) / 2^48). NPB computes it in doubles;
 * for MAX_KEY a power of two (every NPB class) every step is exact there too, so the keys agree
 * bit for bit; class S (2^16 keys, MAX_KEY 2^11) starts 1585, 825, 1060, 1343.
 *
 * The stream is fixed: --seed does not change it. A piece starting at key i jumps straight to
 * x_(4i+1) = a^(4i+1) x_0 mod 2^46, computing a^(4i+1) by repeated squaring (O(log i)), which is
 * NPB's own find_my_seed(). Products are taken modulo 2^64 and masked: 2^46 divides 2^64, so the
 * low 46 bits are exact. Cost: five multiplications a key, one of them on the dependency
 * chain.
 */
#include "datagen/internal.h"
#include "util/util.h"

#define NPB_A    1220703125ull /* 5^13 */
#define NPB_X0   314159265ull
#define NPB_MASK ((((uint64_t)1) << 46) - 1)

/* a^e mod 2^46 by repeated squaring. */
static uint64_t npb_pow(uint64_t a, uint64_t e)
{
    uint64_t r = 1;
    while (e > 0) {
        if (e & 1) {
            r = (r * a) & NPB_MASK;
        }
        a = (a * a) & NPB_MASK;
        e >>= 1;
    }
    return r;
}

/*
 * MAX_KEY: --max-key, or the NPB class whose key count is n (S, W, A, B, C, D), or 2^19
 * (class A's) for any other n.
 */
static uint64_t npb_max_key(const struct datagen_params *p)
{
    static const struct {
        unsigned keys_log2, max_key_log2;
    } classes[] = {{16, 11}, {20, 16}, {23, 19}, {25, 21}, {27, 23}, {31, 27}};
    if (p->max_key != 0) {
        return p->max_key;
    }
    for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
        if (p->n == (uint64_t)1 << classes[c].keys_log2) {
            return (uint64_t)1 << classes[c].max_key_log2;
        }
    }
    return (uint64_t)1 << 19;
}

static void npb_slice(const struct datagen_params *p, uint64_t rank, uint64_t begin, uint64_t m,
                      uint64_t t0, uint64_t count, uint64_t *out)
{
    (void)rank;
    (void)m;
    uint64_t max_key = npb_max_key(p);
    uint64_t i = begin + t0;
    /* x = x_(4i); the four terms of key i are a^1..a^4 times it, independent of each other,
     * so only one multiplication a key is on the dependency chain. */
    uint64_t x = (npb_pow(NPB_A, 4 * i) * NPB_X0) & NPB_MASK;
    uint64_t a1 = NPB_A, a2 = npb_pow(NPB_A, 2), a3 = npb_pow(NPB_A, 3), a4 = npb_pow(NPB_A, 4);
    for (uint64_t k = 0; k < count; k++) {
        uint64_t sum = ((x * a1) & NPB_MASK) + ((x * a2) & NPB_MASK) + ((x * a3) & NPB_MASK);
        x = (x * a4) & NPB_MASK;
        sum += x;
        out[k] = (uint64_t)(((dg_u128)max_key * sum) >> 48);
    }
}

static int npb_check(const struct datagen_params *p)
{
    if (p->max_key > ((uint64_t)1 << 62)) {
        return util_error("--max-key must be in 1..2^62 (%llu)", (unsigned long long)p->max_key);
    }
    return UTIL_OK;
}

const struct datagen_dist datagen_npb = {
    .name = "npb",
    .summary = "NAS IS keys floor(MAX_KEY/4 (r1+r2+r3+r4)), x' = 5^13 x mod 2^46 from "
               "314159265 (fixed stream); MAX_KEY by NPB class of n, else 2^19",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_MAX_KEY),
    .seeded = false,
    .check = npb_check,
    .slice = npb_slice,
};

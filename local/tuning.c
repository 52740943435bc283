/*
 * local/tuning.c: how the local sort is tuned on this machine (see local/local.h): from the
 * caches read at run time (util/cpu.h), the constants of local/config.h, and a calibration of
 * the two in-cache kernels of a few milliseconds, once per process.
 */
#include <math.h>
#include <string.h>

#include "local/internal.h"
#include "util/alloc.h"
#include "util/cpu.h"
#include "util/knobs.h"
#include "util/util.h"

static const char *const kernel_names[LOCAL_KERNEL_COUNT] = {"auto", "radix", "vqsort"};

const char *local_kernel_name(enum local_kernel kernel)
{
    return (unsigned)kernel < LOCAL_KERNEL_COUNT ? kernel_names[kernel] : "unknown";
}

/* Seconds one kernel takes for @m keys shaped like a bucket after a spread (the top 12 bits
 * equal, the rest random): the best of three runs on fresh copies. */
static double time_kernel(enum local_kernel k, uint64_t *orig, uint64_t *a, uint64_t *b, size_t m)
{
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        memcpy(a, orig, m * sizeof(*a));
        double t0 = util_now();
        if (k == LOCAL_KERNEL_VQSORT) {
            local_vqsort_u64(a, m);
        } else {
            local_lsd_sort(a, b, m, local_varying_bits(a, m), false);
        }
        double t = util_now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

/*
 * The calibration: each kernel per key on a bucket that fills half the L2 (S/32 keys with its
 * scratch for the radix kernel, S/16 for vqsort). Where vqsort wins in the cache, it wins on
 * the whole array as well, with at most one spread in front of it: its partitioning levels
 * cost ~0.17 ns a key each while they run in the caches and ~0.35 ns beyond (measured on an
 * AVX-512 CPU with a 32 MiB L3: 2.4 ns a key at 2^12 keys, 3.7 at 2^20, 5.2 at 2^24, 6.2 at
 * 10^8), and a spread pass costs ~1.4 ns a key (0.4 to count, 1.0 to scatter with plain
 * stores). One pass of 9 bits saves 9 levels, ~2 ns a key beyond the L3, less inside it; a
 * second pass saves less than it costs.
 */
static enum local_kernel calibrate(size_t radix_keys, size_t vq_keys, double *ns_per_key)
{
    size_t m = radix_keys > vq_keys ? radix_keys : vq_keys;
    uint64_t *orig = util_malloc(3 * m * sizeof(uint64_t));
    if (orig == NULL) {
        *ns_per_key = 0;
        return LOCAL_KERNEL_RADIX; /* needs no memory of its own beyond its scratch */
    }
    uint64_t *a = orig + m, *b = orig + 2 * m, x = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < m; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        orig[i] = (0xabcULL << 52) | (x >> 12);
    }
    double radix = time_kernel(LOCAL_KERNEL_RADIX, orig, a, b, radix_keys) / (double)radix_keys;
    double vq = time_kernel(LOCAL_KERNEL_VQSORT, orig, a, b, vq_keys) / (double)vq_keys;
    util_free(orig);
    *ns_per_key = 1e9 * (vq < radix ? vq : radix);
    return vq < radix ? LOCAL_KERNEL_VQSORT : LOCAL_KERNEL_RADIX;
}

/* The largest k with 2^k <= x (x >= 1). */
static unsigned floor_log2(size_t x)
{
    return local_high_bit((uint64_t)x);
}


/* The tuning for caches @c and kernel @k (AUTO resolved by the caller). */
static void tuning_for(const struct util_caches *c, enum local_kernel k,
                       struct local_tuning *t)
{
    size_t l2 = c->l2 >= (64u << 10) ? c->l2 : (512u << 10); /* unknown: the smaller kind */
    *t = (struct local_tuning){.kernel = k};
    unsigned bits = floor_log2(l2 / 512);
    t->spread_bits = bits < LOCAL_SPREAD_BITS_MIN   ? LOCAL_SPREAD_BITS_MIN
                     : bits > LOCAL_SPREAD_BITS_MAX ? LOCAL_SPREAD_BITS_MAX
                                                    : bits;
    t->par_min_keys = LOCAL_PAR_MIN_KEYS;
    if (k == LOCAL_KERNEL_VQSORT) {
        /* At most one spread, into buckets of about an L2 each, then vqsort on each bucket
         * whatever its size (the calibration's comment says why). The spread writes with plain
         * stores, one line in flight per bucket: at most as many buckets as the L1 holds
         * lines. One thread spreads only inputs beyond 4 L3s (below, vqsort's partitioning
         * levels run from the L3 and cost less than a pass); threads spread from 8 L2s on,
         * below which a sorted chunk each and a merge are cheaper. */
        size_t l1 = c->l1d >= (8u << 10) ? c->l1d : (32u << 10);
        size_t l3 = c->l3 > l2 ? c->l3 : 32 * l2;
        unsigned l1_bits = floor_log2(l1 / 64);
        t->spread_bits = l1_bits < LOCAL_SPREAD_BITS_MIN   ? LOCAL_SPREAD_BITS_MIN
                         : l1_bits > LOCAL_SPREAD_BITS_MAX ? LOCAL_SPREAD_BITS_MAX
                                                           : l1_bits;
        t->bucket_keys = l2 / sizeof(uint64_t);
        t->spread_min_keys = LOCAL_VQ_SPREAD_L3S * (l3 / sizeof(uint64_t));
        t->spread_levels = 1;
        t->merge_max_keys = LOCAL_VQ_MERGE_BUCKETS * t->bucket_keys;
    } else {
        t->bucket_keys = l2 / LOCAL_RADIX_BUCKET_DIV;
        t->spread_min_keys = 0;
        t->spread_levels = 0;
        t->merge_max_keys = 0;
    }
    t->merge_threads = LOCAL_VQ_MERGE_THREADS;
    t->small_keys = LOCAL_SMALL_KEYS;
    t->stream_keys = LOCAL_STREAM_L2S * l2; /* a pass over 32 L2s' worth of bytes may stream */
    t->scatter = (enum local_scatter)util_knob_u64(UTIL_KNOB_SCATTER); /* 0 auto, 1, 2 */
}

/* The bucket size the calibration timed its kernel on (for the estimate). */
static size_t calibrated_keys;

double local_sort_estimate(size_t n, int threads)
{
    struct local_tuning t;
    local_tuning_default(&t);
    if (t.kernel_ns_per_key <= 0 || n == 0 || calibrated_keys == 0) {
        return 0;
    }
    double doublings = n > calibrated_keys ? log2((double)n / (double)calibrated_keys) : 0;
    double ns = t.kernel_ns_per_key * (1.0 + 0.065 * doublings);
    if (t.kernel == LOCAL_KERNEL_RADIX) {
        ns = t.kernel_ns_per_key + 4.0 * ceil(doublings / t.spread_bits); /* spread passes */
    }
    return 1e-9 * ns * (double)n / (threads > 1 ? 0.8 * threads : 1.0);
}

void local_tuning_default(struct local_tuning *t)
{
    static struct local_tuning cached;
    static int ready; /* 0: not computed, 1: done */
    if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        *t = cached;
        return;
    }
#pragma omp critical(local_tuning_default)
    {
        if (!ready) {
            const struct util_caches *c = util_caches();
            struct local_tuning radix, vq;
            tuning_for(c, LOCAL_KERNEL_RADIX, &radix);
            tuning_for(c, LOCAL_KERNEL_VQSORT, &vq);
            size_t l2 = radix.bucket_keys * 32; /* the calibration's bucket sizes */
            uint64_t force = util_knob_u64(UTIL_KNOB_KERNEL); /* 1 radix, 2 vqsort */
            enum local_kernel k;
            double ns = 0;
            if (force == 1) {
                k = LOCAL_KERNEL_RADIX;
            } else if (force == 2) {
                k = LOCAL_KERNEL_VQSORT;
            } else {
                k = calibrate(l2 / 32, l2 / 16, &ns);
            }
            cached = k == LOCAL_KERNEL_VQSORT ? vq : radix;
            cached.kernel_ns_per_key = ns;
            calibrated_keys = k == LOCAL_KERNEL_VQSORT ? l2 / 16 : l2 / 32;
            __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
        }
    }
    *t = cached;
}

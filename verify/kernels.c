/*
 * verify/kernels.c: the in-memory kernels: the order-independent checksum and the order checks
 * (see verify.h).
 *
 * Scheme: checksum(S) = (|S|, sum over k in S of XXH3_64bits(k), sum of XXH64(k, 0)), all mod
 * 2^64. Cost: two hashes of 8 bytes per key, a few multiplications each, no memory beyond the
 * keys. The multiset-hash idea (a sum of per-element hashes is incremental and independent of
 * order) is Clarke, Devadas, van Dijk, Gassend and Suh, "Incremental Multiset Hash Functions
 * and Their Application to Memory Integrity Checking", ASIACRYPT 2003 (their MSet-Add-Hash);
 * here with a non-keyed, non-cryptographic hash, so it guards against accidents, not adversaries.
 *
 * The hash functions come from Debian's libxxhash header, inlined (XXH_INLINE_ALL) so that the
 * compiler sees the fixed length of 8 and can vectorize the loop: with AVX-512 (64-bit vector
 * multiplies) a key costs ~0.4 ns instead of ~2.5 ns. The binary stays portable: the AVX-512
 * copy of the loop is compiled with a target attribute and chosen at run time. The results are
 * bit-identical to the library's exported XXH3_64bits() and XXH64() (tests/unit/test_verify.c).
 *
 * The descent count gets the same treatment: an unsigned 64-bit compare has no SSE2
 * instruction, so the portable loop stays scalar (~1 cycle a key) while AVX-512 compares eight
 * keys at once.
 */
#include "verify/verify.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* GCC 12 knows the x86-64-v4 level both as a target and in __builtin_cpu_supports(). Define it
 * as 0 on the compiler's command line to measure or test the portable loop alone. */
#ifndef VERIFY_HAVE_X86_V4
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define VERIFY_HAVE_X86_V4 1
#else
#define VERIFY_HAVE_X86_V4 0
#endif
#endif

/*
 * The loops. Each has a portable copy, left to the compiler's cost model (at -O2 it stays scalar,
 * which is right: SSE2 has no 64-bit multiply or unsigned 64-bit compare, and forcing vectors
 * there is slower than scalar code), and an AVX-512 copy where "omp simd" asks for vectors even
 * under -O2's cheap cost model. "flatten" inlines the xxhash functions into each copy (XXH64 is
 * not forced inline by its header, and a call would keep the loop scalar).
 */
#define HASH_STEP(keys, i, a, b)                                                                   \
    do {                                                                                           \
        (a) += XXH3_64bits(&(keys)[i], sizeof((keys)[i]));                                         \
        (b) += XXH64(&(keys)[i], sizeof((keys)[i]), 0);                                            \
    } while (0)

__attribute__((flatten)) static struct verify_checksum hash_generic(const uint64_t *keys, size_t n)
{
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        HASH_STEP(keys, i, a, b);
    }
    return (struct verify_checksum){.count = n, .xxh3 = a, .xxh64 = b};
}

#if VERIFY_HAVE_X86_V4
/* AVX-512 (F, DQ, VL, BW, CD): vpmullq does eight 64-bit multiplies at once. */
__attribute__((target("arch=x86-64-v4"), flatten)) static struct verify_checksum
hash_v4(const uint64_t *keys, size_t n)
{
    uint64_t a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
    for (size_t i = 0; i < n; i++) {
        HASH_STEP(keys, i, a, b);
    }
    return (struct verify_checksum){.count = n, .xxh3 = a, .xxh64 = b};
}
#endif

struct verify_checksum verify_checksum_keys(const uint64_t *keys, size_t n)
{
    if (n == 0) {
        return (struct verify_checksum){0, 0, 0};
    }
#if VERIFY_HAVE_X86_V4
    /* A load and a test of libgcc's CPU model (filled by a constructor): cheap per call. */
    if (__builtin_cpu_supports("x86-64-v4")) {
        return hash_v4(keys, n);
    }
#endif
    return hash_generic(keys, n);
}

struct verify_checksum verify_checksum_combine(struct verify_checksum a, struct verify_checksum b)
{
    return (struct verify_checksum){
        .count = a.count + b.count, .xxh3 = a.xxh3 + b.xxh3, .xxh64 = a.xxh64 + b.xxh64};
}

bool verify_checksum_equal(struct verify_checksum a, struct verify_checksum b)
{
    return a.count == b.count && a.xxh3 == b.xxh3 && a.xxh64 == b.xxh64;
}

/* Branch-free: no misprediction on unsorted data, and vectors where the ISA allows. */
static uint64_t descents_generic(const uint64_t *k, size_t n)
{
    uint64_t d = 0;
    for (size_t i = 1; i < n; i++) {
        d += k[i - 1] > k[i];
    }
    return d;
}

#if VERIFY_HAVE_X86_V4
__attribute__((target("arch=x86-64-v4"))) static uint64_t descents_v4(const uint64_t *k, size_t n)
{
    uint64_t d = 0;
#pragma omp simd reduction(+ : d)
    for (size_t i = 1; i < n; i++) {
        d += k[i - 1] > k[i];
    }
    return d;
}
#endif

uint64_t verify_count_descents(const uint64_t *keys, size_t n)
{
#if VERIFY_HAVE_X86_V4
    if (__builtin_cpu_supports("x86-64-v4")) {
        return descents_v4(keys, n);
    }
#endif
    return descents_generic(keys, n);
}

uint64_t verify_first_descent(const uint64_t *keys, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (keys[i - 1] > keys[i]) {
            return i;
        }
    }
    return VERIFY_NONE;
}

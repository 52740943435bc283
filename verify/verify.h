/*
 * verify/verify.h: the verifier of sortex.
 *
 * Two questions are answered about a sorted output: is it non-decreasing, and does it hold the
 * same multiset of keys as the input. Order is checked key by key. The multiset is compared
 * through an order-independent checksum: the key count plus two wrapping 64-bit sums, one of
 * XXH3_64bits() and one of XXH64() (seed 0) over the 8 bytes of every key as stored in the file.
 * Sums commute and associate, so checksums of pieces (blocks, threads, ranks, files) combine
 * into the checksum of the whole, and the order of the keys does not matter. What this can and
 * cannot detect is in verify/README.md.
 *
 * Both hashes are bijections on 8-byte inputs, so one changed key always changes both sums; two
 * or more changes cancel only by a coincidence of ~2^-64 per sum.
 */
#ifndef SORTEX_VERIFY_H
#define SORTEX_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/format.h"

/** "No position": the value of verify_result.first_bad when the keys are in order. */
#define VERIFY_NONE UINT64_MAX

/** Default bytes read per block and thread by verify_files(): 512 KiB stays in L2. */
#define VERIFY_BLOCK_DEFAULT ((size_t)512 * 1024)

/**
 * The order-independent checksum of a multiset of 8-byte keys. The all-zero value is the
 * checksum of the empty multiset.
 */
struct verify_checksum {
    uint64_t count; /* number of keys */
    uint64_t xxh3;  /* wrapping sum of XXH3_64bits(key, 8) */
    uint64_t xxh64; /* wrapping sum of XXH64(key, 8, 0) */
};

/**
 * Returns the checksum of @keys[0..n), hashing each key's 8 bytes as they are in memory, i.e.
 * in the file encoding (hash before util_format.to_ordered or after from_ordered, so that
 * checksums of memory and of files agree). @keys may be NULL when @n is 0. Sequential, no
 * state: safe to call from any thread and inside OpenMP regions; combine per-thread results
 * with verify_checksum_combine().
 */
struct verify_checksum verify_checksum_keys(const uint64_t *keys, size_t n);

/** Returns the checksum of the union of the multisets @a and @b (associative, commutative). */
struct verify_checksum verify_checksum_combine(struct verify_checksum a, struct verify_checksum b);

/** True when @a and @b have the same count and the same two sums. */
bool verify_checksum_equal(struct verify_checksum a, struct verify_checksum b);

/**
 * Returns the first index i in [1, n) with keys[i-1] > keys[i] (unsigned comparison), or
 * VERIFY_NONE when @keys[0..n) is non-decreasing. Keys of other types must be mapped with
 * util_format.to_ordered first. @keys may be NULL when @n is 0.
 */
uint64_t verify_first_descent(const uint64_t *keys, size_t n);

/**
 * Returns the number of indices i in [1, n) with keys[i-1] > keys[i] (unsigned comparison):
 * 0 exactly when @keys[0..n) is non-decreasing. Faster than verify_first_descent() on sorted
 * data (no branches); call that one to locate the first descent when the count is not 0.
 */
uint64_t verify_count_descents(const uint64_t *keys, size_t n);

/** What verify_files() checks and how. The caller owns every pointer. */
struct verify_config {
    const char *const *sorted; /* sorted file(s), verified as one concatenated sequence */
    size_t n_sorted;           /* at least 1 */
    const char *const *inputs; /* original file(s), one multiset; NULL/0: no comparison */
    size_t n_inputs;
    const struct util_format *format; /* key type for the order check; NULL: u64 */
    int threads;                     /* OpenMP threads; <= 0: omp_get_max_threads() */
    size_t block_bytes;              /* bytes per read, a multiple of 8; 0: default */
};

/** What verify_files() found. */
struct verify_result {
    bool valid;              /* sorted and, with inputs, the same multiset */
    bool sorted;             /* the sequence is non-decreasing */
    uint64_t descents;       /* number of positions i with key[i-1] > key[i] */
    uint64_t first_bad;      /* smallest such i (global index), or VERIFY_NONE */
    size_t bad_file;         /* which sorted file holds key first_bad */
    uint64_t bad_file_index; /* index of key first_bad inside that file (0: a file boundary) */
    uint64_t bad_prev;       /* key first_bad - 1, in the file encoding */
    uint64_t bad_key;        /* key first_bad, in the file encoding */
    struct verify_checksum sorted_sum; /* checksum of all sorted files */
    bool compared;                     /* inputs were given and compared */
    struct verify_checksum input_sum;  /* checksum of all input files (if compared) */
    bool same_count;                   /* counts are equal (if compared) */
    bool same_multiset;                /* counts and both sums are equal (if compared) */
    uint64_t bytes;                    /* bytes read from all files */
    double seconds;                    /* wall-clock time of the reading passes */
    int threads;                       /* threads used */
};

/**
 * Verifies the files named by @cfg: reads the sorted files as one sequence in bounded memory
 * (one block per thread, read with pread) and checks that it is non-decreasing under
 * @cfg->format, including across block and file boundaries; with inputs, also checksums them and
 * compares counts and checksums. Fills @res whatever the verdict.
 *
 * Returns UTIL_OK when a verdict was reached (valid or not: see res->valid), UTIL_EUSAGE when a
 * file is missing, unreadable, not a regular file or not a whole number of keys, or the
 * configuration is wrong, UTIL_EIO when reading fails or a file changes size, UTIL_ENOMEM when
 * a buffer cannot be allocated. Each failure prints one error line on stderr.
 */
int verify_files(const struct verify_config *cfg, struct verify_result *res);

/** Prints @res as labelled lines (what was checked, checksums, verdict) on @out. */
void verify_print_text(FILE *out, const struct verify_config *cfg, const struct verify_result *res);

/**
 * Prints @res as one JSON object on one line on @out. Key values are strings in the key type's
 * notation (64-bit integers and NaN survive any JSON parser), checksums are "0x" hex strings.
 */
void verify_print_json(FILE *out, const struct verify_config *cfg, const struct verify_result *res);

#endif

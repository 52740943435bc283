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
 *
 * Records of a byte-key format (gensort, R/O/K layouts) are checked the same way, each hash over
 * the whole record (key and payload), and with the Sort Benchmark's figures as valsort prints
 * them: the record count, the number of duplicate keys (adjacent equal keys), and gensort's
 * checksum, the 128-bit sum of zlib's crc32 of every record.
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

/** Key bytes verify_result keeps of an out-of-order pair of records, for the report. */
#define VERIFY_KEY_SHOWN 32

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

/**
 * Returns the checksum of @n records of @record_size bytes at @recs, each hash taken over the
 * whole record: a multiset of records, key and payload together. For @record_size 8 the same
 * as verify_checksum_keys() of the same bytes. Sequential and thread-safe.
 */
struct verify_checksum verify_checksum_records(const void *recs, size_t n, size_t record_size);

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

/**
 * gensort's checksum of a set of records, as gensort -c and valsort print it: the sum of zlib's
 * crc32() of every record, as a 128-bit integer (high and low halves). Order-independent.
 */
struct verify_crc_sum {
    uint64_t hi, lo;
};

/** gensort's checksum of @n records of @record_size bytes (at most 2^32 - 1) at @recs. */
struct verify_crc_sum verify_crc_records(const void *recs, size_t n, size_t record_size);

/** The sum of two gensort checksums (with the carry into the high half). */
struct verify_crc_sum verify_crc_combine(struct verify_crc_sum a, struct verify_crc_sum b);

/**
 * Writes @c as valsort prints it, lower-case hex without leading zeros ("1ea6370b955"), into
 * @buf; 33 bytes always suffice.
 */
void verify_crc_format(struct verify_crc_sum c, char *buf, size_t cap);

/** The order of a run of records, over its adjacent pairs. */
struct verify_order {
    uint64_t descents;      /* pairs with key[i-1] > key[i]: valsort's unordered records */
    uint64_t duplicates;    /* pairs with key[i-1] == key[i]: valsort's duplicate keys */
    uint64_t first_descent; /* the smallest such i, or VERIFY_NONE */
};

/**
 * The order of @n records of byte-key format @f at @recs: keys compared as unsigned bytes
 * (memcmp) of f->key_size bytes at f->key_offset. Sequential and thread-safe.
 */
struct verify_order verify_order_records(const struct util_format *f, const void *recs, size_t n);

/** What verify_files() checks and how. The caller owns every pointer. */
struct verify_config {
    const char *const *sorted; /* sorted file(s), verified as one concatenated sequence */
    size_t n_sorted;           /* at least 1 */
    const char *const *inputs; /* original file(s), one multiset; NULL/0: no comparison */
    size_t n_inputs;
    const struct util_format *format; /* the files' format (8-byte numbers: the key type of
                                       * the order check; byte keys: records); NULL: u64 */
    int threads;                     /* OpenMP threads; <= 0: omp_get_max_threads() */
    size_t block_bytes;              /* bytes per read, a multiple of 8 (records: rounded
                                      * down to whole records, at least one); 0: default */
};

/** What verify_files() found. */
struct verify_result {
    bool valid;              /* sorted and, with inputs, the same multiset */
    bool sorted;             /* the sequence is non-decreasing */
    uint64_t descents;       /* number of positions i with key[i-1] > key[i] */
    uint64_t first_bad;      /* smallest such i (global index), or VERIFY_NONE */
    size_t bad_file;         /* which sorted file holds key first_bad */
    uint64_t bad_file_index; /* index of key first_bad inside that file (0: a file boundary) */
    uint64_t bad_prev;       /* key first_bad - 1, in the file encoding (8-byte formats) */
    uint64_t bad_key;        /* key first_bad, in the file encoding (8-byte formats) */
    struct verify_checksum sorted_sum; /* checksum of all sorted files */
    /* Records of a byte-key format only (records is true): */
    bool records;                      /* the files hold records of a byte-key format */
    uint64_t duplicates;               /* pairs of adjacent equal keys (valsort's count) */
    struct verify_crc_sum sorted_crc;  /* gensort's checksum of the sorted files */
    struct verify_crc_sum input_crc;   /* gensort's checksum of the inputs (if compared) */
    size_t bad_shown;                  /* key bytes kept below (at most VERIFY_KEY_SHOWN) */
    unsigned char bad_prev_bytes[VERIFY_KEY_SHOWN]; /* key of record first_bad - 1 */
    unsigned char bad_key_bytes[VERIFY_KEY_SHOWN];  /* key of record first_bad */
    bool compared;                     /* inputs were given and compared */
    struct verify_checksum input_sum;  /* checksum of all input files (if compared) */
    bool same_count;                   /* counts are equal (if compared) */
    bool same_multiset;                /* counts and both sums (records: and gensort's
                                        * checksums) are equal (if compared) */
    uint64_t bytes;                    /* bytes read from all files */
    double seconds;                    /* wall-clock time of the reading passes */
    int threads;                       /* threads used */
};

/**
 * Verifies the files named by @cfg: reads the sorted files as one sequence in bounded memory
 * (one block per thread, read with pread) and checks that it is non-decreasing under
 * @cfg->format, including across block and file boundaries; with inputs, also checksums them and
 * compares counts and checksums. For a byte-key format also counts duplicate keys and sums
 * gensort's checksum (res->records). Fills @res whatever the verdict.
 *
 * Returns UTIL_OK when a verdict was reached (valid or not: see res->valid), UTIL_EUSAGE when a
 * file is missing, unreadable, not a regular file or not a whole number of records, or the
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

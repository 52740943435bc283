/*
 * util/format.h: the record formats of the data files, one table for every program.
 *
 * A data file is n fixed-size records without a header: n = size / R. A record's key is K bytes
 * at offset O; the rest is payload that travels with it. Two kinds of key exist:
 *   - 8-byte numbers (u64, i64, f64): the record is the key, little-endian in the file. Every
 *     algorithm works on them as unsigned 64-bit integers: other types enter through an
 *     order-preserving bijection onto uint64, applied right after reading and undone right
 *     before writing, so adding a numeric type is one table entry, never a copied algorithm.
 *   - byte strings (gensort, and any layout given by --record-size R --key-offset O --key-size
 *     K): keys compare as unsigned big-endian byte strings, i.e. memcmp() order, as the Sort
 *     Benchmark's valsort compares its 10-byte keys.
 * Adding a named format is one entry in the table of util/format.c.
 */
#ifndef SORTEX_UTIL_FORMAT_H
#define SORTEX_UTIL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sortex reads little-endian key files and supports little-endian hosts only"
#endif

/** The largest record a layout may have, in bytes. */
#define UTIL_RECORD_MAX ((size_t)1 << 16)

/** Converts @n keys in place between the file's encoding and order-preserving uint64. */
typedef void util_key_map_fn(uint64_t *keys, size_t n);

struct util_format {
    const char *name;              /* "u64", "i64", "f64", "gensort"; "layout" for R/O/K */
    const char *summary;           /* one line for --help and --format help */
    size_t record_size;            /* R: bytes per record in the file */
    size_t key_offset;             /* O: where the key starts in the record */
    size_t key_size;               /* K: bytes of key */
    bool byte_key;                 /* the key is a byte string (memcmp order); otherwise the
                                    * record is one 8-byte little-endian number (R = K = 8) */
    util_key_map_fn *to_ordered;   /* numbers: file encoding -> sortable uint64 (NULL: identity) */
    util_key_map_fn *from_ordered; /* numbers: sortable uint64 -> file encoding (NULL: identity) */
};

/** Looks a format up by name (u64, i64, f64, gensort); NULL if unknown. */
const struct util_format *util_format_find(const char *name);
/** The NULL-terminated table of named formats, for listing. */
const struct util_format *const *util_format_list(void);
/** Writes "u64, i64, f64, gensort" into @buf for error messages. */
void util_format_names(char *buf, size_t cap);
/** The default format: u64. */
const struct util_format *util_format_default(void);

/**
 * Fills @out with the byte-key layout of @record_size-byte records whose key is @key_size
 * bytes at @key_offset. Returns 0, or UTIL_EUSAGE after printing one error line naming the
 * problem: R = 0, K = 0, R beyond UTIL_RECORD_MAX, a key reaching past the record.
 */
int util_format_layout(size_t record_size, size_t key_offset, size_t key_size,
                       struct util_format *out);

/**
 * The first 8 bytes of the key of @rec as a big-endian integer (zero-padded when K < 8): for
 * byte keys, a < b as prefixes implies a < b as keys, and equal prefixes leave the rest of the
 * key (K > 8) to compare. Byte-key formats only.
 */
static inline uint64_t util_format_prefix(const struct util_format *f, const void *rec)
{
    const unsigned char *k = (const unsigned char *)rec + f->key_offset;
    uint64_t v = 0;
    size_t n = f->key_size < 8 ? f->key_size : 8;
    for (size_t i = 0; i < n; i++) {
        v |= (uint64_t)k[i] << (56 - 8 * i);
    }
    return v;
}

/** memcmp() of the keys of two records of byte-key format @f: <0, 0 or >0. */
int util_format_cmp(const struct util_format *f, const void *a, const void *b);

#endif

/*
 * util/keytype.h: key types of the data files.
 *
 * Every algorithm in sortex (sort, sample, bucket, exchange, merge, verify) works on unsigned
 * 64-bit keys. Other fixed-width key types enter through an order-preserving bijection onto
 * uint64: applied in place right after reading and undone right before writing, so adding a
 * type is one table entry here, never a copied algorithm. Record types wider than a key (the
 * Sort Benchmark's 100-byte records with 10-byte keys) would add a payload permutation on top of
 * the same key sort; they are not supported yet.
 *
 * Files are raw little-endian keys without a header.
 */
#ifndef SORTEX_UTIL_KEYTYPE_H
#define SORTEX_UTIL_KEYTYPE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sortex reads little-endian key files and supports little-endian hosts only"
#endif

/** Converts @n keys in place between the file's encoding and order-preserving uint64. */
typedef void util_key_map_fn(uint64_t *keys, size_t n);

struct util_keytype {
    const char *name;            /* "u64", "i64", "f64" */
    const char *summary;         /* one line for --help */
    size_t size;                 /* bytes per record in the file */
    util_key_map_fn *to_ordered;   /* file encoding -> sortable uint64 (NULL: identity) */
    util_key_map_fn *from_ordered; /* sortable uint64 -> file encoding (NULL: identity) */
};

/** Looks a key type up by name; NULL if unknown. */
const struct util_keytype *util_keytype_find(const char *name);
/** The NULL-terminated table of key types, for listing. */
const struct util_keytype *const *util_keytype_list(void);
/** Writes "u64, i64, f64" into @buf for error messages. */
void util_keytype_names(char *buf, size_t cap);

#endif

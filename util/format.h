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
#include <stdio.h>

#include "util/cli.h"

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

/** True when @a and @b describe the same bytes: the same R, O, K and kind of key. */
bool util_format_same_layout(const struct util_format *a, const struct util_format *b);

/**
 * Writes a short description of @f into @buf: "u64" for the numbers, "gensort: 100-byte
 * records, 10-byte key at offset 0" for byte keys. Always terminated.
 */
void util_format_describe(const struct util_format *f, char *buf, size_t cap);

/*
 * The format options, rows of every program's command-line table (util/cli.h: sortex,
 * sortex-gen, sortex-verify), so that they take the same flags the same way:
 *
 *   --format NAME (alias --type)   a named format: u64, i64, f64, gensort
 *   --record-size R                a layout of R-byte records (1..UTIL_RECORD_MAX) ...
 *   --key-offset O                 ... whose key starts at byte O (default 0) ...
 *   --key-size K                   ... and is K bytes long (default R - O: the rest of the record)
 *
 * Numbers take util_parse_count()'s suffixes (4Ki). A layout's key is compared as unsigned
 * bytes (memcmp order), whatever R and K. --format NAME together with layout flags is accepted
 * when both describe the same layout and refused otherwise; O and K then default to the named
 * format's (--format gensort --record-size 100 is gensort, --record-size 13 is refused).
 *
 * Use: put UTIL_FORMAT_ROWS() into the program's table, its field a struct util_format_args;
 * after parsing, call util_format_resolve() once. Every error is one line through util_error()
 * and UTIL_EUSAGE.
 */

/**
 * The parse function of the format rows: records the option (the row's name) with value @arg
 * in the struct util_format_args the row points to. Returns 0, or UTIL_EUSAGE after one error
 * line: an unknown format name (the line lists the names), a number that is not a count.
 */
int util_format_parse(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);

/* clang-format off */
/** The rows of the format options, filling the struct util_format_args @field of @type; their
 * help as every program's --help states it. */
#define UTIL_FORMAT_ROWS(type, field)                                                              \
    {.name = "format", .arg = "NAME", .def = "u64",                                                \
     .help = "record format (default: {def}): u64, i64, f64 (8-byte\n"                            \
             "little-endian numbers) or gensort (100-byte records,\n"                              \
             "10-byte key at offset 0); --type is an alias",                                       \
     .parse = util_format_parse, UTIL_CLI_DEST(type, field)},                                      \
        {.name = "type", .arg = "NAME", .parse = util_format_parse, UTIL_CLI_DEST(type, field)},   \
        {.name = "record-size", .arg = "R",                                                       \
         .help = "instead, records of R bytes ({min}..{max}) whose key\n"                          \
                 "compares as unsigned bytes (memcmp order), with",                                \
         .parse = util_format_parse, UTIL_CLI_DEST(type, field), .min = 1,                        \
         .max = UTIL_RECORD_MAX},                                                                  \
        {.name = "key-offset", .arg = "O", .def = "0",                                             \
         .help = "the key's first byte in the record (default: {def})",                            \
         .parse = util_format_parse, UTIL_CLI_DEST(type, field)},                                  \
        {.name = "key-size", .arg = "K", .def = "R - O",                                           \
         .help = "the key's length in bytes (default: {def})", .parse = util_format_parse,         \
         UTIL_CLI_DEST(type, field)}
/* clang-format on */

/** What the format options said. Zero-initialise it (or use util_format_args_init()). */
struct util_format_args {
    const struct util_format *named; /* --format NAME, or NULL */
    uint64_t record_size, key_offset, key_size;
    bool have_record_size, have_key_offset, have_key_size;
    struct util_format layout; /* storage of a resolved layout: util_format_resolve() may
                                * return a pointer to it, valid as long as the args */
};

/** Sets @a to "no format option given". */
void util_format_args_init(struct util_format_args *a);

/** True when at least one format option was given. */
bool util_format_given(const struct util_format_args *a);

/**
 * The format the options describe, into *@out: the named format, the layout (checked by
 * util_format_layout(): R = 0, K = 0, R beyond UTIL_RECORD_MAX, a key past the record), or
 * @dflt when no option was given (@dflt may be NULL). Returns 0, or UTIL_EUSAGE after one
 * error line, also for --key-offset or --key-size without --record-size and for a named format
 * that contradicts the layout flags. *@out may point into @a.
 */
int util_format_resolve(struct util_format_args *a, const struct util_format *dflt,
                        const struct util_format **out);

#endif

/*
 * datagen/datagen.h: reproducible benchmark inputs for sortex.
 *
 * A data file is n records without a header: raw little-endian 64-bit keys by default, or
 * records of any format of util/format.h. It is laid out as P rank slices back to back: slice
 * i holds the records [floor(i n / P), floor((i+1) n / P)), exactly
 * the part a sort on P ranks reads (datagen_slice_begin()). Distributions that are defined per
 * rank (the benchmark family of Helman, Bader and JaJa) are built on this split.
 *
 * Every key is a pure function of (distribution, n, P, seed, parameters, position): a
 * counter-based generator (the SplitMix64 output function applied to seed-keyed counters)
 * gives the random bits of position j without touching positions before it. Any range of the
 * file can therefore be generated on its own, in any order and by any number of threads, and
 * datagen_fill_records() of a range gives the same bytes as that range of the file. The
 * gensort family does the same through its generator's skip-ahead.
 *
 * Conventions used by all recipes (the exact definitions are in datagen/README.md):
 *   - Floor split: dividing c items into q parts, part k is [floor(k c / q), floor((k+1) c / q)).
 *     It is used for rank slices, for the parts inside a slice and for value buckets.
 *   - Value bucket b of P: [floor(b 2^64 / P), floor((b+1) 2^64 / P)); U(b) is a key uniform in
 *     it. For P a power of two these are the buckets [b W, (b+1) W) with W = 2^64 / P.
 *   - m is the size of the slice in question (it differs by at most one between ranks).
 *
 * The registry (datagen_list(), in this order; parameters in brackets):
 *   uniform, gaussian, ggroup [g], bucket, staggered, zero, dd, rd [r], wr [s]: the benchmark
 *     family of Helman, Bader and JaJa, defined per rank slice. For any P: ggroup's groups are
 *     ranks [i - i mod g, ...) with a smaller last group; staggered gives rank i < floor(P/2)
 *     U(2i+1) and the others U(2(i - floor(P/2))), a bijection onto the buckets for odd P too;
 *     dd's rank groups are [P - floor(P/2^q), P - floor(P/2^(q+1))) holding floor(log2 n) - q,
 *     the last rank halving its keys the same way; wr attacks regular sampling with s samples
 *     per rank (the exact sample convention is in wr.c).
 *   sorted, reverse, nearly [fraction], few [k], zipf [exponent, domain], radix [prefix bytes],
 *     npb [MAX_KEY]: defined on the whole file, independent of P.
 *   gensort, gensort-skew, gensort-ascii, gensort-ascii-skew [start]: the records of the Sort
 *     Benchmark's generator, gensort 1.5 by Chris Nyberg, byte for byte (datagen/gensort.c);
 *     they imply the gensort format.
 *
 * Keys are generated as ordered uint64 values. With a key type other than u64 the type's
 * order-preserving map (util/format.h) turns them into that encoding, so a sort of the file
 * as that type sees exactly the same order (f64 files may then hold NaN bit patterns, which
 * sortex orders by their bits). With a byte-key format (gensort, or a layout of R-byte records
 * with a K-byte key at offset O) every key becomes one record: the key bytes big-endian, so
 * memcmp order is the distribution's order, and a payload made from the record's position.
 */
#ifndef SORTEX_DATAGEN_H
#define SORTEX_DATAGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The parameters a distribution may use; each distribution names the ones it reads. */
enum datagen_param {
    DATAGEN_P_GROUPS,   /* ggroup: ranks per group g */
    DATAGEN_P_BLOCKS,   /* rd: blocks r per rank, values in 0..r-1 */
    DATAGEN_P_SAMPLES,  /* wr: samples s per rank of the attacked regular sampling */
    DATAGEN_P_FRACTION, /* nearly: fraction of keys moved by swaps */
    DATAGEN_P_UNIQUE,   /* few: number k of distinct values */
    DATAGEN_P_EXPONENT, /* zipf: exponent s */
    DATAGEN_P_DOMAIN,   /* zipf: number of values D */
    DATAGEN_P_PREFIX,   /* radix: shared top bytes */
    DATAGEN_P_MAX_KEY,  /* npb: MAX_KEY */
    DATAGEN_P_START,    /* the gensort family: the first record number (gensort's -b) */
    DATAGEN_P_COUNT
};

/** Bit of enum datagen_param @p in struct datagen_dist.params. */
#define DATAGEN_PARAM_BIT(p) (1u << (p))

/** Largest n a file may hold: 2^60 records, and at most 2^63 bytes (DATAGEN_MAX_BYTES), so
 * that byte offsets never overflow. */
#define DATAGEN_MAX_N ((uint64_t)1 << 60)
/** Largest file: 2^63 bytes (2^60 8-byte keys). */
#define DATAGEN_MAX_BYTES ((uint64_t)1 << 63)
/** Largest P (--ranks). */
#define DATAGEN_MAX_RANKS ((uint64_t)1 << 24)

struct datagen_params;

/**
 * Writes the keys [t0, t0 + count) of rank @rank's slice into @out, as ordered uint64 keys.
 * The slice starts at global position @begin and holds @m keys; t0 + count <= m. The
 * parameters have passed datagen_check(). Pure and thread-safe.
 */
typedef void datagen_slice_fn(const struct datagen_params *p, uint64_t rank, uint64_t begin,
                              uint64_t m, uint64_t t0, uint64_t count, uint64_t *out);

/**
 * Writes the whole records [first, first + count) of the file into @out (count times the
 * record size bytes), @first counted from the start of the file. For distributions that define
 * records themselves (the gensort family), whatever --ranks is. Pure and thread-safe.
 */
typedef void datagen_records_fn(const struct datagen_params *p, uint64_t first, uint64_t count,
                                unsigned char *out);

/**
 * Checks the distribution's own parameter rules beyond the generic ranges (e.g. wr needs
 * s <= n/P). Prints one error line and returns UTIL_EUSAGE when they fail, else 0.
 */
typedef int datagen_check_fn(const struct datagen_params *p);

/**
 * One distribution: a const instance per recipe, listed in the registry. Most make ordered
 * 8-byte keys (slice), which any format can hold: a number format encodes them, a byte-key
 * format turns each into a record (datagen/records.c). A few make whole records of one format
 * themselves (records, format): the gensort family.
 */
struct datagen_dist {
    const char *name;        /* short lowercase name for --dist */
    const char *summary;     /* one-line recipe for --list, including the non-power-of-two rules */
    unsigned params;         /* DATAGEN_PARAM_BIT()s of the parameters it reads */
    bool seeded;             /* false: the output does not depend on --seed */
    datagen_check_fn *check; /* extra parameter rules; NULL when there are none */
    datagen_slice_fn *slice; /* the key generator (NULL when records is set) */
    datagen_records_fn *records; /* the record generator, or NULL */
    const char *format;          /* with records: the named format they are (gensort) */
};

/**
 * Everything that determines the bytes of a file. Fill with datagen_params_init() (the
 * documented defaults), then set dist, n and whatever else is wanted.
 */
struct datagen_params {
    const struct datagen_dist *dist; /* required */
    const struct util_format *format; /* file format; NULL = u64, or the one the
                                       * distribution implies (datagen_format()) */
    uint64_t n;                      /* records (keys) in the file, 1..DATAGEN_MAX_N */
    uint64_t ranks;                  /* P, 1..DATAGEN_MAX_RANKS (default 4) */
    uint64_t seed;                   /* default 0 */
    uint64_t groups;                 /* ggroup g in 1..P; 0 = 2, or P when P = 1 (default) */
    uint64_t blocks;                 /* rd r in 1..2^20 (default 32) */
    uint64_t samples;                /* wr s in 1..floor(n/P); 0 = P (default) */
    double fraction;                 /* nearly: in [0, 1] (default 0.01) */
    uint64_t unique;                 /* few k >= 1 (default 16) */
    double exponent;                 /* zipf s in (0, 64] (default 1.0) */
    uint64_t domain;                 /* zipf D in 1..2^53 (default 2^20) */
    uint64_t prefix;                 /* radix: shared top bytes, 1..7 (default 4) */
    uint64_t max_key;                /* npb MAX_KEY in 1..2^62; 0 = by NAS class of n */
    uint64_t start;                  /* gensort family: first record number (default 0) */
};

/** Sets every field of @p to its default (dist NULL, n 0: the caller must set those). */
void datagen_params_init(struct datagen_params *p);

/**
 * Validates @p: dist set, n, P and every parameter the distribution reads in range, the
 * distribution's own rules, and the format: a distribution that implies one (gensort) refuses
 * any other, and the file must stay within DATAGEN_MAX_BYTES. Prints one error line
 * "<what> (<value>)" through util_error() and returns UTIL_EUSAGE on the first problem;
 * returns 0 when @p may be generated.
 */
int datagen_check(const struct datagen_params *p);

/**
 * The format of the file @p describes: p->format, else the one the distribution implies, else
 * u64. Never NULL.
 */
const struct util_format *datagen_format(const struct datagen_params *p);

/** Short name of parameter @param as used in --list and error messages ("groups"). */
const char *datagen_param_name(enum datagen_param param);

/**
 * First global position of slice @i when @n keys are split over @p ranks: floor(i n / p),
 * exact for every 64-bit n (128-bit product). i may equal p (then the result is n). This is
 * the split of the sort's read phase; slice i is [begin(i), begin(i+1)).
 */
uint64_t datagen_slice_begin(uint64_t n, uint64_t p, uint64_t i);

/** The slice holding global position @pos < n (the largest i with begin(i) <= pos). */
uint64_t datagen_slice_of(uint64_t n, uint64_t p, uint64_t pos);

/** Looks a distribution up by name; NULL when unknown. */
const struct datagen_dist *datagen_find(const char *name);

/** The registry: a NULL-terminated table of every distribution, in --list order. */
const struct datagen_dist *const *datagen_list(void);

/** Writes the distribution names, comma separated, into @buf (always terminated). */
void datagen_names(char *buf, size_t cap);

/**
 * Writes the keys [first, first + count) of the file described by @p (checked with
 * datagen_check()) into @out, in the file's encoding: byte for byte what the file holds there.
 * Generates on the calling thread, so it may be used inside a parallel region (only the i64
 * and f64 maps of util/format.h open a parallel loop, for long ranges outside one). Returns
 * 0, or UTIL_EUSAGE (one error line) when the range goes past n or the format is not one of
 * 8-byte keys (records need datagen_fill_records()).
 */
int datagen_fill(const struct datagen_params *p, uint64_t first, uint64_t count, uint64_t *out);

/**
 * datagen_fill() with @threads OpenMP threads (0 = the OpenMP default). The bytes do not depend
 * on the thread count.
 */
int datagen_fill_threads(const struct datagen_params *p, uint64_t first, uint64_t count,
                         uint64_t *out, int threads);

/**
 * Writes the records [first, first + count) of the file described by @p (checked with
 * datagen_check()) into @out, count times datagen_format(p)->record_size bytes: byte for byte
 * what the file holds there, in any format (for 8-byte keys the same as datagen_fill()). Records
 * of a distribution that makes keys are built by the recipe of datagen/README.md ("Records").
 * Generates on the calling thread, like datagen_fill(). Returns 0, UTIL_EUSAGE (one error line)
 * when the range goes past n, or UTIL_ENOMEM when a key distribution's scratch buffer
 * (512 KiB at most) cannot be allocated.
 */
int datagen_fill_records(const struct datagen_params *p, uint64_t first, uint64_t count,
                         void *out);

/**
 * datagen_fill_records() with @threads OpenMP threads (0 = the OpenMP default). The bytes do not
 * depend on the thread count.
 */
int datagen_fill_records_threads(const struct datagen_params *p, uint64_t first, uint64_t count,
                                 void *out, int threads);

/** Options of datagen_write(). */
struct datagen_write_opts {
    int threads;   /* OpenMP threads; 0 = the OpenMP default */
    bool progress; /* report progress on stderr */
};

/**
 * Writes the whole file described by @p (checked with datagen_check()) to @path, generating
 * blocks of keys in parallel into reused per-thread buffers (memory does not grow with n).
 * @opts may be NULL: OpenMP's thread count, no progress. The data goes to a temporary name
 * beside @path (util/temp.h) that is renamed to @path at the end; on any failure the
 * temporary file is removed and @path is left as it was. Returns 0; UTIL_EUSAGE when the
 * output cannot be created or does not fit into the free space; UTIL_EIO when a write fails;
 * UTIL_ENOMEM. Each failure prints one error line.
 */
int datagen_write(const struct datagen_params *p, const char *path,
                  const struct datagen_write_opts *opts);

#ifdef __cplusplus
}
#endif

#endif

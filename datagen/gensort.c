/*
 * datagen/gensort.c: the records of gensort 1.5, the input generator of the Sort Benchmark
 * (gensort/valsort by Chris Nyberg, sortbenchmark.org), byte for byte, for any first record
 * number and count, generated in parallel. Written from the definition below (datagen/README.md
 * gives it in full); tests/11-gensort.bats compares with files gensort 1.5 wrote.
 *
 * The definition:
 *   - A 128-bit linear congruential generator X_0 = 0, X_(i+1) = (a X_i + c) mod 2^128 (a from
 *     L'Ecuyer's tables of good LCGs, Math. Comp. 68, 1999; c odd).
 *   - Record number r (128-bit; gensort's -b sets the first) is made of the ten numbers
 *     R_j = X_(r+1+j), j = 0..9. Binary: bytes 10j..10j+9 are the top ten bytes (big-endian)
 *     of R_j XOR a ten-byte constant K_j (K_0 = 0); the key is bytes 0..9, the top of R_0.
 *   - ASCII: the key is ten base-95 digits of R_0 as printable characters, then the record
 *     number in hex and a filler made from R_0's low bits, ending with CR LF.
 *   - Skewed variants replace the top bits (binary) or bytes (ASCII) of the key, a random
 *     number of them taken from R_0, with those of record k's key, k being about log2 r (the
 *     skew index): early records' keys recur, increasingly often.
 *
 * Skip-ahead: X_n = f^n(0) for the affine map f(x) = a x + c. Compositions of affine maps are
 * affine, and f^(2^(i+1)) = f^(2^i) o f^(2^i) has a' = a^2, c' = a c + c; since powers of f
 * commute, applying f^(2^i) for each bit i of n to x = 0 gives X_n in at most 128 steps of two
 * 128-bit multiplications (square-and-multiply). So any range of records starts on its own,
 * which is what lets threads and ranks generate their parts independently; after the start,
 * one multiply-add per record, since record r + 1 shares nine of record r's ten numbers.
 * Cost per binary record: one 128-bit multiply-add and ten 10-byte big-endian stores.
 */
#include <string.h>

#include "datagen/internal.h"

typedef unsigned __int128 u128;

#define GS_A       (((u128)0x2360ed051fc65da4ull << 64) | 0x4385df649fccf645ull)
#define GS_C       (((u128)0x4a696d4772617952ull << 64) | 0x4950202020202001ull)
#define GS_RECORD  100 /* bytes per record */
#define GS_PARTS   10  /* ten-byte parts of a binary record, one number each */
#define GS_SKEW    6   /* key bytes the skew tables hold */
#define GS_CHUNK   256 /* records per window of numbers */
#define GS_NO_SKEW 255 /* no skew index cached yet */

static const char gs_hex[] = "0123456789ABCDEF";

/* X_n: f^n(0) by square-and-multiply on the affine map f(x) = a x + c (see above). */
static u128 gs_at(u128 n)
{
    u128 ma = GS_A, mc = GS_C, x = 0; /* (ma, mc) is f^(2^i) */
    while (n != 0) {
        if (n & 1) {
            x = ma * x + mc;
        }
        mc = ma * mc + mc;
        ma = ma * ma;
        n >>= 1;
    }
    return x;
}

/*
 * The XOR masks of the ten parts as 128-bit numbers, the ten constant bytes at the top: K_1 to
 * K_7 are the 70 byte values with exactly four bits set, in descending order, ten to a part;
 * K_8 and K_9 are gensort's own.
 */
static void gs_masks(u128 mask[GS_PARTS])
{
    static const unsigned char k8[10] = {0xC8, 0xC4, 0xC2, 0xC1, 0x98,
                                         0x94, 0x92, 0x91, 0x8C, 0xE0};
    static const unsigned char k9[10] = {0x17, 0x0F, 0x33, 0x2E, 0x2D,
                                         0x2B, 0x27, 0x1E, 0x1D, 0x1B};
    unsigned char k[GS_PARTS][10];
    memset(k, 0, sizeof(k));
    int m = 0;
    for (int v = 255; v >= 0; v--) {
        if (__builtin_popcount((unsigned)v) == 4) {
            k[1 + m / 10][m % 10] = (unsigned char)v;
            m++;
        }
    }
    memcpy(k[8], k8, sizeof(k8));
    memcpy(k[9], k9, sizeof(k9));
    for (int j = 0; j < GS_PARTS; j++) {
        mask[j] = 0;
        for (int i = 0; i < 10; i++) {
            mask[j] |= (u128)k[j][i] << (8 * (15 - i));
        }
    }
}

/* Stores the top ten bytes of @hi:@lo (the 128-bit number's halves) big-endian at @p. */
static inline void gs_put10(unsigned char *p, uint64_t hi, uint64_t lo)
{
    uint64_t h = __builtin_bswap64(hi);
    uint16_t l = __builtin_bswap16((uint16_t)(lo >> 48));
    memcpy(p, &h, sizeof(h));
    memcpy(p + 8, &l, sizeof(l));
}

/*
 * The skew index of record number @r: 0 for record 0, else about its bit length: for r < 2^64
 * the bit length of r, or 64 when one of r's top four bits is set; above, 64 plus the bit
 * length of r's high half, or 128 when one of its top four bits is set.
 */
static unsigned gs_skew_index(u128 r)
{
    uint64_t hi = (uint64_t)(r >> 64), lo = (uint64_t)r;
    if (hi == 0) {
        if (lo == 0) {
            return 0;
        }
        return (lo >> 60) != 0 ? 64 : 64u - (unsigned)__builtin_clzll(lo);
    }
    return (hi >> 60) != 0 ? 128 : 128u - (unsigned)__builtin_clzll(hi);
}

/* Four base-95 digits of @v < 95^4 as characters, least significant first. */
static inline void gs_digits4(uint32_t v, unsigned char *p)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (unsigned char)(' ' + v % 95);
        v /= 95;
    }
}

/*
 * The ASCII key of the record whose first number is @x: ten base-95 digits as characters ' '
 * to '~', least significant first, eight of the high half and two of the low half. The high
 * half is cut at 95^4 once, so that its two groups of four digits are two short chains of
 * 32-bit divisions instead of one long chain of 64-bit ones.
 */
static void gs_ascii_key(u128 x, unsigned char key[10])
{
    const uint64_t b4 = (uint64_t)95 * 95 * 95 * 95;
    uint64_t h = (uint64_t)(x >> 64), l = (uint64_t)x;
    gs_digits4((uint32_t)(h % b4), key);
    gs_digits4((uint32_t)((h / b4) % b4), key + 4);
    key[8] = (unsigned char)(' ' + l % 95);
    key[9] = (unsigned char)(' ' + (l / 95) % 95);
}

/* Adds one to the 32-digit upper-case hex number @d (the record number, wrapping at 2^128). */
static void gs_hex_increment(unsigned char d[32])
{
    for (int i = 31; i >= 0; i--) {
        if (d[i] == 'F') {
            d[i] = '0'; /* carry on */
        } else {
            d[i] = d[i] == '9' ? 'A' : (unsigned char)(d[i] + 1);
            return;
        }
    }
}

/*
 * Binary records [r0, r0 + count) into @out; with @skew, gensort -s. Numbers are generated in
 * windows: x[i] = X_(r+1+i) for the window's records r0.., the last nine carried over.
 */
static void gs_binary(u128 r0, uint64_t count, bool skew, unsigned char *out)
{
    u128 mask[GS_PARTS];
    u128 x[GS_CHUNK + GS_PARTS - 1];
    gs_masks(mask);
    unsigned skew_cached = GS_NO_SKEW;
    uint64_t skew_key = 0; /* top 48 key bits of record skew_cached, at the top of a word */

    x[0] = gs_at(r0 + 1);
    for (int i = 1; i < GS_PARTS - 1; i++) {
        x[i] = GS_A * x[i - 1] + GS_C;
    }
    for (uint64_t done = 0; done < count;) {
        size_t c = count - done < GS_CHUNK ? (size_t)(count - done) : GS_CHUNK;
        /* The window: numbers 9 .. c + 8 are new (0 .. 8 are carried over). */
        for (size_t i = GS_PARTS - 1; i < c + GS_PARTS - 1; i++) {
            x[i] = GS_A * x[i - 1] + GS_C;
        }
        for (size_t i = 0; i < c; i++) {
            unsigned char *rec = out + (done + i) * GS_RECORD;
            uint64_t hi = (uint64_t)(x[i] >> 64), lo = (uint64_t)x[i];
            if (skew) {
                /* 0..48 top key bits from record k's key, k the skew index; 49..63 mean 0. */
                unsigned bits = (unsigned)(lo >> 32) & 63;
                if (bits > 8 * GS_SKEW) {
                    bits = 0;
                }
                if (bits > 0) {
                    unsigned k = gs_skew_index(r0 + done + i);
                    if (k != skew_cached) {
                        skew_cached = k;
                        skew_key = (uint64_t)(gs_at((u128)k + 1) >> 64) & ~(uint64_t)0xffff;
                    }
                    uint64_t top = ~(uint64_t)0 << (64 - bits);
                    hi = (hi & ~top) | (skew_key & top);
                }
            }
            gs_put10(rec, hi, lo);
            for (int j = 1; j < GS_PARTS; j++) {
                u128 v = x[i + (size_t)j] ^ mask[j];
                gs_put10(rec + 10 * j, (uint64_t)(v >> 64), (uint64_t)v);
            }
        }
        memmove(x, x + c, (GS_PARTS - 1) * sizeof(x[0]));
        done += c;
    }
}

/* ASCII records [r0, r0 + count) into @out; with @skew, gensort -a -s. One number a record;
 * the record number's hex digits are counted up in place rather than converted each time. */
static void gs_ascii(u128 r0, uint64_t count, bool skew, unsigned char *out)
{
    unsigned skew_cached = GS_NO_SKEW;
    unsigned char skew_key[10], number[32];
    u128 x = gs_at(r0 + 1);
    for (int d = 0; d < 32; d++) {
        number[d] = (unsigned char)gs_hex[(unsigned)(r0 >> (124 - 4 * d)) & 15];
    }
    for (uint64_t i = 0; i < count; i++, x = GS_A * x + GS_C) {
        unsigned char *rec = out + i * GS_RECORD;
        u128 r = r0 + i;
        uint64_t lo = (uint64_t)x;
        gs_ascii_key(x, rec);
        if (skew) {
            /* 0..6 leading key bytes from record k's ASCII key; 7 means 0. */
            unsigned bytes = (unsigned)(lo >> 32) & 7;
            if (bytes > GS_SKEW) {
                bytes = 0;
            }
            if (bytes > 0) {
                unsigned k = gs_skew_index(r);
                if (k != skew_cached) {
                    skew_cached = k;
                    gs_ascii_key(gs_at((u128)k + 1), skew_key);
                }
                memcpy(rec, skew_key, bytes);
            }
        }
        rec[10] = ' ';
        rec[11] = ' ';
        /* The record number in 32 upper-case hex digits. */
        memcpy(rec + 12, number, sizeof(number));
        gs_hex_increment(number);
        rec[44] = ' ';
        rec[45] = ' ';
        /* Thirteen hex digits of the low half, bits 48..51 down to 0..3, each four times. */
        for (int d = 0; d < 13; d++) {
            memset(rec + 46 + 4 * d, gs_hex[(lo >> (48 - 4 * d)) & 15], 4);
        }
        rec[98] = '\r';
        rec[99] = '\n';
    }
}

/* Record numbers count from --start: the file's record i is record start + i. */
static u128 gs_first(const struct datagen_params *p, uint64_t first)
{
    return (u128)p->start + first;
}

static void gensort_records(const struct datagen_params *p, uint64_t first, uint64_t count,
                            unsigned char *out)
{
    gs_binary(gs_first(p, first), count, false, out);
}

static void gensort_skew_records(const struct datagen_params *p, uint64_t first, uint64_t count,
                                 unsigned char *out)
{
    gs_binary(gs_first(p, first), count, true, out);
}

static void gensort_ascii_records(const struct datagen_params *p, uint64_t first, uint64_t count,
                                  unsigned char *out)
{
    gs_ascii(gs_first(p, first), count, false, out);
}

static void gensort_ascii_skew_records(const struct datagen_params *p, uint64_t first,
                                       uint64_t count, unsigned char *out)
{
    gs_ascii(gs_first(p, first), count, true, out);
}

const struct datagen_dist datagen_gensort = {
    .name = "gensort",
    .summary = "gensort 1.5's binary records (gensort -bSTART N): random 10-byte keys, "
               "90-byte payloads",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_START),
    .records = gensort_records,
    .format = "gensort",
};

const struct datagen_dist datagen_gensort_skew = {
    .name = "gensort-skew",
    .summary = "gensort 1.5's skewed binary records (gensort -s): up to 48 top key bits "
               "from an earlier record's key",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_START),
    .records = gensort_skew_records,
    .format = "gensort",
};

const struct datagen_dist datagen_gensort_ascii = {
    .name = "gensort-ascii",
    .summary = "gensort 1.5's ASCII records (gensort -a): printable keys, the record number "
               "in hex, CR LF",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_START),
    .records = gensort_ascii_records,
    .format = "gensort",
};

const struct datagen_dist datagen_gensort_ascii_skew = {
    .name = "gensort-ascii-skew",
    .summary = "gensort 1.5's skewed ASCII records (gensort -a -s): up to 6 key bytes from "
               "an earlier record's key",
    .params = DATAGEN_PARAM_BIT(DATAGEN_P_START),
    .records = gensort_ascii_skew_records,
    .format = "gensort",
};

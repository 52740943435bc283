/*
 * datagen/records.c: records of a byte-key format (gensort, or a layout of R-byte records with
 * a K-byte key at offset O) made from a distribution's ordered 64-bit keys, one record a key.
 *
 * The recipe (datagen/README.md, "Records"), for record j of the file (its global index) with
 * ordered key k:
 *   - key: the eight bytes of k big-endian, so that memcmp order is the distribution's order;
 *     K < 8 keeps the first K of them (equal prefixes become equal keys, the order is kept);
 *     K > 8 continues with the words mix(k + (w+1) gamma), w = 0, 1, ..., big-endian, cut at
 *     K bytes: a function of k alone, so equal keys stay equal and the first eight bytes decide
 *     between different ones.
 *   - payload: the R - K other bytes, the bytes before the key first, are the little-endian
 *     bytes of the words mix(u_j + (w+1) gamma), w = 0, 1, ..., cut at R - K bytes, where
 *     u_j = mix((j+1) gamma) is the j-th SplitMix64 output from state 0. mix is a bijection,
 *     so with 8 or more payload bytes the first payload word differs between any two records:
 *     a payload moved to another record shows.
 * mix and gamma are SplitMix64's (datagen/internal.h). Cost: one mix per 8 bytes of record
 * beyond the first 8 of the key.
 */
#include <string.h>

#include "datagen/internal.h"

/* Copies bytes [from, from + len) of the stream of words w -> mix(base + (w+1) gamma) into
 * @dst, each word big-endian (@be) or little-endian. */
static void stream_bytes(uint64_t base, size_t from, size_t len, bool be, unsigned char *dst)
{
    while (len > 0) {
        size_t w = from / 8, skip = from % 8;
        uint64_t v = dg_rand(base, w);
        v = be ? __builtin_bswap64(v) : v; /* the host is little-endian (util/format.h) */
        size_t take = 8 - skip < len ? 8 - skip : len;
        memcpy(dst, (const unsigned char *)&v + skip, take);
        dst += take;
        from += take;
        len -= take;
    }
}

void dg_key_records(const struct util_format *f, uint64_t first, uint64_t count,
                    const uint64_t *keys, unsigned char *out)
{
    const size_t r = f->record_size, o = f->key_offset, k = f->key_size;
    const size_t head = k < 8 ? k : 8;
    for (uint64_t i = 0; i < count; i++) {
        unsigned char *rec = out + i * r;
        /* The key: k big-endian, then (K > 8) words keyed by k. */
        uint64_t be = __builtin_bswap64(keys[i]);
        memcpy(rec + o, &be, head);
        if (k > 8) {
            stream_bytes(keys[i], 0, k - 8, true, rec + o + 8);
        }
        /* The payload: the bytes before the key, then those after it. */
        uint64_t u = dg_rand(0, first + i);
        stream_bytes(u, 0, o, false, rec);
        stream_bytes(u, o, r - o - k, false, rec + o + k);
    }
}

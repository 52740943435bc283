/*
 * verify/records.c: the in-memory kernels for records of a byte-key format (gensort, or an
 * R/O/K layout): the multiset checksum over whole records, gensort's checksum, and the order
 * of the keys with valsort's figures (see verify.h).
 *
 * The multiset checksum is the one of 8-byte keys (kernels.c) with each hash taken over all R
 * bytes of a record: (|S|, sum of XXH3_64bits(rec, R), sum of XXH64(rec, R, 0)) mod 2^64. A
 * record is key and payload together, so a payload moved to another key changes the multiset
 * and (but for a coincidence of about 2^-64 per sum) both sums. For R = 8 the value equals
 * verify_checksum_keys() of the same bytes.
 *
 * gensort's checksum is what gensort -c and valsort print: the sum, as a 128-bit integer, of
 * zlib's crc32() of every record (Chris Nyberg, gensort/valsort 1.5, the Sort Benchmark). It is
 * order-independent as well, so it adds up across blocks, threads and files; the CRC comes from
 * Debian's zlib rather than a copy of it.
 *
 * Order: keys compare as unsigned byte strings (memcmp) of K bytes at offset O, eight bytes at a
 * time as big-endian words. Per adjacent pair: a descent (key[i-1] > key[i], valsort's
 * "unordered record") or a duplicate (equal keys, valsort's "duplicate keys", counted on any
 * file, sorted or not, as valsort counts them).
 */
#include "verify/verify.h"

#include <string.h>
#include <zlib.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* memcmp() of @k bytes, a word at a time: <0, 0 or >0. */
static inline int key_cmp(const unsigned char *a, const unsigned char *b, size_t k)
{
    size_t i = 0;
    for (; i + 8 <= k; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, sizeof(x));
        memcpy(&y, b + i, sizeof(y));
        if (x != y) {
            return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
        }
    }
    for (; i < k; i++) {
        if (a[i] != b[i]) {
            return a[i] < b[i] ? -1 : 1;
        }
    }
    return 0;
}

struct verify_checksum verify_checksum_records(const void *recs, size_t n, size_t record_size)
{
    const unsigned char *r = recs;
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < n; i++, r += record_size) {
        a += XXH3_64bits(r, record_size);
        b += XXH64(r, record_size, 0);
    }
    return (struct verify_checksum){.count = n, .xxh3 = a, .xxh64 = b};
}

struct verify_crc_sum verify_crc_records(const void *recs, size_t n, size_t record_size)
{
    const unsigned char *r = recs;
    unsigned __int128 sum = 0;
    for (size_t i = 0; i < n; i++, r += record_size) {
        /* zlib takes a uInt length: a record is at most UTIL_RECORD_MAX bytes. */
        sum += crc32(0, r, (uInt)record_size);
    }
    return (struct verify_crc_sum){.hi = (uint64_t)(sum >> 64), .lo = (uint64_t)sum};
}

struct verify_crc_sum verify_crc_combine(struct verify_crc_sum a, struct verify_crc_sum b)
{
    struct verify_crc_sum s = {.hi = a.hi + b.hi, .lo = a.lo + b.lo};
    s.hi += s.lo < a.lo; /* the carry */
    return s;
}

void verify_crc_format(struct verify_crc_sum c, char *buf, size_t cap)
{
    if (c.hi == 0) {
        (void)snprintf(buf, cap, "%llx", (unsigned long long)c.lo);
    } else {
        (void)snprintf(buf, cap, "%llx%016llx", (unsigned long long)c.hi, (unsigned long long)c.lo);
    }
}

struct verify_order verify_order_records(const struct util_format *f, const void *recs, size_t n)
{
    struct verify_order o = {0, 0, VERIFY_NONE};
    const size_t r = f->record_size, k = f->key_size;
    const unsigned char *key = (const unsigned char *)recs + f->key_offset;
    for (size_t i = 1; i < n; i++) {
        int c = key_cmp(key + (i - 1) * r, key + i * r, k);
        if (c > 0) {
            if (o.descents == 0) {
                o.first_descent = i;
            }
            o.descents++;
        } else if (c == 0) {
            o.duplicates++;
        }
    }
    return o;
}

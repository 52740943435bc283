/*
 * tests/unit/test_verify.c: the pure parts of verify/: the checksum against libxxhash's own
 * exported functions (whatever vector path the CPU selects), its combination law, and the
 * in-memory order check; for records, the whole-record checksum (equal to the keys' for 8-byte
 * records), gensort's CRC-32 sum with its carry and valsort's hex, and the order with
 * duplicates. Prints one line per failure and exits non-zero on any.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zlib.h>

#include "verify/verify.h"

int main(void);

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

/* splitmix64: a reproducible key stream. */
static uint64_t next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The definition, one library call per key. */
static struct verify_checksum reference(const uint64_t *keys, size_t n)
{
    struct verify_checksum c = {n, 0, 0};
    for (size_t i = 0; i < n; i++) {
        c.xxh3 += XXH3_64bits(&keys[i], 8);
        c.xxh64 += XXH64(&keys[i], 8, 0);
    }
    return c;
}

static void test_matches_library(void)
{
    enum { N = 1000 };
    uint64_t keys[N], state = 42;
    for (size_t i = 0; i < N; i++) {
        keys[i] = next(&state);
    }
    keys[0] = 0;
    keys[1] = UINT64_MAX;
    /* Every length up to N covers the vector loops' remainders. */
    for (size_t n = 0; n <= N; n++) {
        struct verify_checksum a = verify_checksum_keys(keys, n), b = reference(keys, n);
        CHECK(verify_checksum_equal(a, b), "checksum of %zu keys differs from libxxhash", n);
    }
    CHECK(verify_checksum_keys(NULL, 0).count == 0, "empty checksum is not zero");
}

static void test_combine(void)
{
    enum { N = 777 };
    uint64_t keys[N], rev[N], state = 7;
    for (size_t i = 0; i < N; i++) {
        keys[i] = next(&state) % 50; /* duplicates */
        rev[N - 1 - i] = keys[i];
    }
    struct verify_checksum whole = verify_checksum_keys(keys, N);
    for (size_t cut = 0; cut <= N; cut += 37) {
        struct verify_checksum parts = verify_checksum_combine(
            verify_checksum_keys(keys, cut), verify_checksum_keys(keys + cut, N - cut));
        CHECK(verify_checksum_equal(whole, parts), "split at %zu does not combine", cut);
    }
    CHECK(verify_checksum_equal(whole, verify_checksum_keys(rev, N)),
          "checksum depends on the order");

    /* One changed, dropped or duplicated key changes the checksum. */
    uint64_t saved = keys[100];
    keys[100] += 1;
    CHECK(!verify_checksum_equal(whole, verify_checksum_keys(keys, N)), "+1 not detected");
    keys[100] = keys[101] == saved ? keys[102] : keys[101];
    CHECK(!verify_checksum_equal(whole, verify_checksum_keys(keys, N)), "copy not detected");
    keys[100] = saved;
    CHECK(!verify_checksum_equal(whole, verify_checksum_keys(keys, N - 1)), "drop not detected");
}

static void test_first_descent(void)
{
    uint64_t k[] = {1, 2, 2, UINT64_MAX, 0, 5, 4};
    CHECK(verify_first_descent(k, 0) == VERIFY_NONE, "empty");
    CHECK(verify_first_descent(k, 1) == VERIFY_NONE, "one key");
    CHECK(verify_first_descent(k, 4) == VERIFY_NONE, "sorted prefix with duplicates");
    CHECK(verify_first_descent(k, 7) == 4, "first descent at %" PRIu64, verify_first_descent(k, 7));
}

static void test_records(void)
{
    enum { N = 500, R = 13 };
    static unsigned char rec[N * R];
    uint64_t keys[N], state = 99;
    for (size_t i = 0; i < N; i++) {
        keys[i] = next(&state);
    }
    memcpy(rec, keys, sizeof(keys));
    CHECK(verify_checksum_equal(verify_checksum_records(rec, N, 8), verify_checksum_keys(keys, N)),
          "8-byte records and keys differ");

    /* Whole records: every record's own hashes, and gensort's CRC sum. */
    for (size_t i = 0; i < sizeof(rec); i++) {
        rec[i] = (unsigned char)next(&state);
    }
    struct verify_checksum want = {N, 0, 0};
    uint64_t crc = 0;
    for (size_t i = 0; i < N; i++) {
        want.xxh3 += XXH3_64bits(rec + i * R, R);
        want.xxh64 += XXH64(rec + i * R, R, 0);
        crc += crc32(0, rec + i * R, R);
    }
    CHECK(verify_checksum_equal(verify_checksum_records(rec, N, R), want), "record checksum");
    struct verify_crc_sum c = verify_crc_records(rec, N, R);
    CHECK(c.hi == 0 && c.lo == crc, "crc sum %" PRIx64, c.lo);

    /* The carry into the high half, and valsort's hex without leading zeros. */
    struct verify_crc_sum big = {0, UINT64_MAX - 5}, one = {0, 10};
    struct verify_crc_sum sum = verify_crc_combine(big, one);
    char hex[40];
    verify_crc_format(sum, hex, sizeof(hex));
    CHECK(sum.hi == 1 && sum.lo == 4, "carry");
    CHECK(strcmp(hex, "10000000000000004") == 0, "hex %s", hex);
    verify_crc_format((struct verify_crc_sum){0, 0x1ea6370b955}, hex, sizeof(hex));
    CHECK(strcmp(hex, "1ea6370b955") == 0, "hex %s", hex);

    /* Order of 13-byte records with a 5-byte key at offset 3: bytes beyond the key and before
     * it do not count; equal keys are duplicates; the first descent is located. */
    struct util_format f;
    CHECK(util_format_layout(R, 3, 5, &f) == 0, "layout");
    memset(rec, 0, sizeof(rec));
    for (size_t i = 0; i < 6; i++) {
        rec[i * R + 0] = (unsigned char)(100 - i); /* payload: decreasing, must not count */
        rec[i * R + 7] = (unsigned char)(i / 2);   /* last key byte: 0 0 1 1 2 2 */
        rec[i * R + 12] = (unsigned char)(50 - i);
    }
    struct verify_order o = verify_order_records(&f, rec, 6);
    CHECK(o.descents == 0 && o.duplicates == 3 && o.first_descent == VERIFY_NONE,
          "sorted with duplicates: %" PRIu64 " %" PRIu64, o.descents, o.duplicates);
    rec[4 * R + 3] = 0; /* unchanged: key of record 4 is 0 0 0 0 2 */
    rec[3 * R + 3] = 9; /* record 3 now above record 4 */
    o = verify_order_records(&f, rec, 6);
    CHECK(o.descents == 1 && o.first_descent == 4 && o.duplicates == 2,
          "one descent at 4: %" PRIu64 " at %" PRIu64 ", %" PRIu64 " duplicates", o.descents,
          o.first_descent, o.duplicates);
}

int main(void)
{
    test_matches_library();
    test_combine();
    test_first_descent();
    test_records();
    if (failures == 0) {
        printf("test_verify: all passed\n");
    }
    return failures == 0 ? 0 : 1;
}

/*
 * tests/unit/test_verify.c: the pure parts of verify/: the checksum against libxxhash's own
 * exported functions (whatever vector path the CPU selects), its combination law, and the
 * in-memory order check; for records, the whole-record checksum (equal to the keys' for 8-byte
 * records), gensort's CRC-32 sum with its carry and valsort's hex, and the order with
 * duplicates. On the harness of tests/unit/test.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zlib.h>

#include "tests/unit/test.h"
#include "verify/verify.h"

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
    uint64_t keys[N];
    test_seed(42);
    for (size_t i = 0; i < N; i++) {
        keys[i] = test_rand();
    }
    keys[0] = 0;
    keys[1] = UINT64_MAX;
    /* Every length up to N covers the vector loops' remainders. */
    for (size_t n = 0; n <= N; n++) {
        struct verify_checksum a = verify_checksum_keys(keys, n), b = reference(keys, n);
        expect_true(verify_checksum_equal(a, b), "checksum of %zu keys differs from libxxhash", n);
    }
    expect_u64_eq(verify_checksum_keys(NULL, 0).count, 0, "empty checksum is not zero");
}

static void test_combine(void)
{
    enum { N = 777 };
    uint64_t keys[N], rev[N];
    test_seed(7);
    for (size_t i = 0; i < N; i++) {
        keys[i] = test_rand() % 50; /* duplicates */
        rev[N - 1 - i] = keys[i];
    }
    struct verify_checksum whole = verify_checksum_keys(keys, N);
    for (size_t cut = 0; cut <= N; cut += 37) {
        struct verify_checksum parts = verify_checksum_combine(
            verify_checksum_keys(keys, cut), verify_checksum_keys(keys + cut, N - cut));
        expect_true(verify_checksum_equal(whole, parts), "split at %zu does not combine", cut);
    }
    expect_true(verify_checksum_equal(whole, verify_checksum_keys(rev, N)),
                "checksum depends on the order");

    /* One changed, dropped or duplicated key changes the checksum. */
    uint64_t saved = keys[100];
    keys[100] += 1;
    expect_false(verify_checksum_equal(whole, verify_checksum_keys(keys, N)), "+1 not detected");
    keys[100] = keys[101] == saved ? keys[102] : keys[101];
    expect_false(verify_checksum_equal(whole, verify_checksum_keys(keys, N)), "copy not detected");
    keys[100] = saved;
    expect_false(verify_checksum_equal(whole, verify_checksum_keys(keys, N - 1)),
                 "drop not detected");
}

static void test_first_descent(void)
{
    uint64_t k[] = {1, 2, 2, UINT64_MAX, 0, 5, 4};
    expect_u64_eq(verify_first_descent(k, 0), VERIFY_NONE, "empty");
    expect_u64_eq(verify_first_descent(k, 1), VERIFY_NONE, "one key");
    expect_u64_eq(verify_first_descent(k, 4), VERIFY_NONE, "sorted prefix with duplicates");
    expect_u64_eq(verify_first_descent(k, 7), 4, "first descent");
}

static void test_records(void)
{
    enum { N = 500, R = 13 };
    static unsigned char rec[N * R];
    uint64_t keys[N];
    test_seed(99);
    for (size_t i = 0; i < N; i++) {
        keys[i] = test_rand();
    }
    memcpy(rec, keys, sizeof(keys));
    expect_true(
        verify_checksum_equal(verify_checksum_records(rec, N, 8), verify_checksum_keys(keys, N)),
        "8-byte records and keys differ");

    /* Whole records: every record's own hashes, and gensort's CRC sum. */
    for (size_t i = 0; i < sizeof(rec); i++) {
        rec[i] = (unsigned char)test_rand();
    }
    struct verify_checksum want = {N, 0, 0};
    uint64_t crc = 0;
    for (size_t i = 0; i < N; i++) {
        want.xxh3 += XXH3_64bits(rec + i * R, R);
        want.xxh64 += XXH64(rec + i * R, R, 0);
        crc += crc32(0, rec + i * R, R);
    }
    expect_true(verify_checksum_equal(verify_checksum_records(rec, N, R), want), "record checksum");
    struct verify_crc_sum c = verify_crc_records(rec, N, R);
    expect_u64_eq(c.hi, 0, "crc sum %" PRIx64, c.lo);
    expect_u64_eq(c.lo, crc, "crc sum");

    /* The carry into the high half, and valsort's hex without leading zeros. */
    struct verify_crc_sum big = {0, UINT64_MAX - 5}, one = {0, 10};
    struct verify_crc_sum sum = verify_crc_combine(big, one);
    char hex[40];
    verify_crc_format(sum, hex, sizeof(hex));
    expect_u64_eq(sum.hi, 1, "carry");
    expect_u64_eq(sum.lo, 4, "carry");
    expect_str_eq(hex, "10000000000000004", "hex");
    verify_crc_format((struct verify_crc_sum){0, 0x1ea6370b955}, hex, sizeof(hex));
    expect_str_eq(hex, "1ea6370b955", "hex");

    /* Order of 13-byte records with a 5-byte key at offset 3: bytes beyond the key and before
     * it do not count; equal keys are duplicates; the first descent is located. */
    struct util_format f;
    expect_d_eq(util_format_layout(R, 3, 5, &f), 0, "layout");
    memset(rec, 0, sizeof(rec));
    for (size_t i = 0; i < 6; i++) {
        rec[i * R + 0] = (unsigned char)(100 - i); /* payload: decreasing, must not count */
        rec[i * R + 7] = (unsigned char)(i / 2);   /* last key byte: 0 0 1 1 2 2 */
        rec[i * R + 12] = (unsigned char)(50 - i);
    }
    struct verify_order o = verify_order_records(&f, rec, 6);
    expect_u64_eq(o.descents, 0, "sorted with duplicates");
    expect_u64_eq(o.duplicates, 3, "sorted with duplicates");
    expect_u64_eq(o.first_descent, VERIFY_NONE, "sorted with duplicates");
    rec[4 * R + 3] = 0; /* unchanged: key of record 4 is 0 0 0 0 2 */
    rec[3 * R + 3] = 9; /* record 3 now above record 4 */
    o = verify_order_records(&f, rec, 6);
    expect_u64_eq(o.descents, 1, "one descent at 4");
    expect_u64_eq(o.first_descent, 4, "one descent at 4");
    expect_u64_eq(o.duplicates, 2, "one descent at 4");
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {
        TEST(matches_library), TEST(combine), TEST(first_descent), TEST(records), TEST_END,
    };
    return test_main(argc, argv, tests);
}

/*
 * tests/unit/test_transpose.c: the pure part of the transpose back-end, without an MPI run.
 *
 * 1. The arithmetic dealing count (exchange_transpose_share) equals dealing key by key.
 * 2. The bin bounds on adversarial count matrices: every key to one rank, staggered, random,
 *    ranks without keys, and a matrix built to reach the bound exactly; for P = 2..9 and larger.
 *    Round 1 bins stay <= floor(n_max/P + (P-1)/2) <= n_max/P + P/2, round 2 bins <= the same
 *    in h; exhaustively over small count vectors too, where the bound is also shown reached.
 * 3. The split of an exchange into steps: pieces follow each other and add up to the runs.
 * 4. The whole exchange simulated in one process (memcpy for the two MPI_Alltoall rounds), in
 *    one step or many, on elements of 8, 1, 13 and 100 bytes (the cases walk the sizes): every
 *    rank ends with exactly the layout alltoallv delivers, byte for byte, each source's run in
 *    order.
 * Tests: share, bounds, bounds_exhaustive, steps, simulated_exchange; each prints what it
 * covered. On the harness of tests/unit/test.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/transpose.h"
#include "tests/unit/test.h"

/* ---- 1. the dealing rule --------------------------------------------------------------------- */

static void test_share(void)
{
    int cases = 0;
    for (int p = 1; p <= 9; p++) {
        uint64_t *bins = test_calloc((size_t)p, sizeof(uint64_t));
        for (int s = 0; s < p; s++) {
            for (int j = 0; j < p; j++) {
                for (uint64_t c = 0; c <= (uint64_t)(3 * p + 1); c++) {
                    /* Key by key: the first to bin (s + j) mod P, each next one to the next bin. */
                    memset(bins, 0, (size_t)p * sizeof(uint64_t));
                    int b = (s + j) % p;
                    for (uint64_t k = 0; k < c; k++) {
                        bins[b]++;
                        b = (b + 1) % p;
                    }
                    for (b = 0; b < p; b++) {
                        uint64_t got = exchange_transpose_share(c, s, j, b, p);
                        expect_true(got == bins[b],
                                    "P=%d s=%d j=%d c=%" PRIu64 " b=%d: %" PRIu64 " != %" PRIu64, p,
                                    s, j, c, b, got, bins[b]);
                        cases++;
                    }
                }
            }
        }
        free(bins);
    }
    printf("share: the arithmetic count equals key-by-key dealing (%d cases)\n", cases);
}

/* ---- 2. the bounds --------------------------------------------------------------------------- */

/* The largest round-1 and round-2 bins over all ranks of matrix c, checked against the bounds.
 * Returns the round-1 maximum minus its bound (0 when the bound is reached); the same for
 * round 2 in *gap2 when it is not NULL. */
static long check_bounds(const uint64_t *c, int p, const char *what, long *gap2)
{
    struct exchange_transpose_plan plan;
    uint64_t max1 = 0, max2 = 0, n_max = 0, h = 0;
    for (int r = 0; r < p; r++) {
        if (exchange_transpose_plan_init(&plan, p, r, sizeof(uint64_t)) != 0) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        exchange_transpose_plan_set(&plan, c);
        max1 = plan.max_bin1 > max1 ? plan.max_bin1 : max1;
        max2 = plan.max_bin2 > max2 ? plan.max_bin2 : max2;
        n_max = plan.n_max;
        h = plan.h;
        expect_true(plan.max_bin1 <= plan.block1,
                    "%s P=%d rank %d: round-1 bin %" PRIu64 " > %" PRIu64, what, p, r,
                    plan.max_bin1, plan.block1);
        expect_true(plan.max_bin2 <= plan.block2,
                    "%s P=%d rank %d: round-2 bin %" PRIu64 " > %" PRIu64, what, p, r,
                    plan.max_bin2, plan.block2);
        exchange_transpose_plan_free(&plan);
    }
    /* The paper's form, in exact rational arithmetic: bin * 2P <= 2 n + P^2. */
    expect_true(max1 * 2 * (uint64_t)p <= 2 * n_max + (uint64_t)p * p,
                "%s P=%d: round-1 bin %" PRIu64 " > n_max/P + P/2 (n_max %" PRIu64 ")", what, p,
                max1, n_max);
    expect_true(max2 * 2 * (uint64_t)p <= 2 * h + (uint64_t)p * p,
                "%s P=%d: round-2 bin %" PRIu64 " > h/P + P/2 (h %" PRIu64 ")", what, p, max2, h);
    if (gap2 != NULL) {
        *gap2 = (long)max2 - (long)exchange_transpose_bound(h, p);
    }
    return (long)max1 - (long)exchange_transpose_bound(n_max, p);
}

/* Matrix builders: c[s * p + j] keys from rank s to rank j. */
static void all_to_one(uint64_t *c, int p, uint64_t n, int dest)
{
    for (int s = 0; s < p; s++) {
        for (int j = 0; j < p; j++) {
            c[(size_t)s * p + j] = j == dest ? n / (uint64_t)p + (s < (int)(n % (uint64_t)p)) : 0;
        }
    }
}

/* Rank s's keys all go to one rank, a different one per source (the staggered input's bucket
 * t = 2s+1 or 2s-P mapped to ranks), with slightly uneven slices. */
static void staggered(uint64_t *c, int p, uint64_t n)
{
    for (int s = 0; s < p; s++) {
        int t = s < p / 2 ? 2 * s + 1 : 2 * s - p;
        for (int j = 0; j < p; j++) {
            c[(size_t)s * p + j] = j == t % p ? n / (uint64_t)p + (uint64_t)s : 0;
        }
    }
}

static void random_matrix(uint64_t *c, int p, uint64_t range)
{
    for (size_t i = 0; i < (size_t)p * p; i++) {
        /* A mix of zeros, small counts (residues matter) and large ones. */
        uint64_t kind = test_rand() % 4;
        c[i] = kind == 0   ? 0
               : kind == 1 ? test_rand() % (uint64_t)(2 * p)
                           : test_rand() % (range + 1);
    }
}

/* Reaches both bounds. Rank s gives destination j = (-d - s) mod P (d = 0..P-2) a run of
 * q*P + d + 1 keys, whose d + 1 extras start at bin (s + j) = -d and so end at bin 0, and the
 * last destination q*P keys: bin 0 of every rank holds qP + P - 1 = n/P + (P-1)/2 keys. For a
 * fixed j the sources' d = (-j - s) mod P take every value once, so every column sums to the
 * same h = n, and rank 0's round-2 bin j collects the P-1 extra keys of all sources for j: the
 * round-2 bound is reached as well. */
static void tight(uint64_t *c, int p, uint64_t q)
{
    for (int s = 0; s < p; s++) {
        for (int j = 0; j < p; j++) {
            c[(size_t)s * p + j] = q * (uint64_t)p;
        }
        for (int d = 0; d + 1 < p; d++) {
            int j = ((0 - d - s) % p + 2 * p) % p;
            c[(size_t)s * p + j] += (uint64_t)d + 1;
        }
    }
}

static void test_bounds(void)
{
    static const int ps[] = {2, 3, 4, 5, 6, 7, 8, 9, 16, 31, 64, 100};
    int nps = (int)(sizeof(ps) / sizeof(ps[0]));
    int cases = 0;
    test_seed(0x5eed);
    for (int i = 0; i < nps; i++) {
        int p = ps[i];
        uint64_t *c = test_calloc((size_t)p * p, sizeof(uint64_t));
        static const uint64_t ns[] = {0, 1, 7, 1000, 100003, 2000000};
        for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
            for (int dest = 0; dest < p; dest += (p > 9 ? p / 3 : 1)) {
                all_to_one(c, p, ns[k], dest);
                check_bounds(c, p, "all-to-one", NULL);
                cases++;
            }
            staggered(c, p, ns[k]);
            check_bounds(c, p, "staggered", NULL);
            cases++;
        }
        for (int r = 0; r < (p <= 9 ? 400 : 8); r++) {
            random_matrix(c, p, r % 2 ? 50 : 1000000);
            check_bounds(c, p, "random", NULL);
            cases++;
        }
        for (uint64_t q = 0; q < 4; q++) {
            tight(c, p, q * 1000 + q);
            long gap2 = -1, gap = check_bounds(c, p, "tight", &gap2);
            expect_true(gap == 0 && gap2 == 0,
                        "tight P=%d q=%" PRIu64 ": bins %ld, %ld below the bounds", p, q, gap,
                        gap2);
            /* And the exact value: n/P + (P-1)/2 with n = qP^2 + P(P-1)/2 per rank. */
            uint64_t n = (q * 1000 + q) * (uint64_t)p * p + (uint64_t)p * (p - 1) / 2;
            expect_true(exchange_transpose_bound(n, p) * 2 == 2 * (q * 1000 + q) * p + 2 * (p - 1),
                        "tight P=%d: bound of %" PRIu64 " is %" PRIu64, p, n,
                        exchange_transpose_bound(n, p));
            cases++;
        }
        free(c);
    }
    printf("bounds: round 1 <= n_max/P + (P-1)/2, round 2 <= h/P + (P-1)/2, reached (%d "
           "matrices)\n",
           cases);
}

/* Exhaustive for small P: every count vector of one rank with counts <= limit. The largest bin
 * never exceeds the bound of the vector's total, and for every total the bound is reached by
 * some vector whenever the total allows a full set of extras. */
static void test_bounds_exhaustive(void)
{
    long vectors = 0;
    for (int p = 2; p <= 4; p++) {
        int limit = 3 * p;
        int base = limit + 1;
        long total_vectors = 1;
        for (int j = 0; j < p; j++) {
            total_vectors *= base;
        }
        uint64_t best[64] = {0}; /* best[n]: largest bin seen over vectors of total n */
        uint64_t *c = test_calloc((size_t)p * p, sizeof(uint64_t));
        for (long v = 0; v < total_vectors; v++) {
            long x = v;
            uint64_t n = 0;
            for (int j = 0; j < p; j++) {
                c[j] = (uint64_t)(x % base); /* rank 0's row; the other rows stay empty */
                n += c[j];
                x /= base;
            }
            struct exchange_transpose_plan plan;
            if (exchange_transpose_plan_init(&plan, p, 0, sizeof(uint64_t)) != 0) {
                exit(2);
            }
            exchange_transpose_plan_set(&plan, c);
            expect_true(plan.max_bin1 <= exchange_transpose_bound(n, p),
                        "P=%d n=%" PRIu64 ": bin %" PRIu64 " > bound %" PRIu64, p, n, plan.max_bin1,
                        exchange_transpose_bound(n, p));
            if (n < 64 && plan.max_bin1 > best[n]) {
                best[n] = plan.max_bin1;
            }
            exchange_transpose_plan_free(&plan);
            vectors++;
        }
        /* Totals n >= P(P-1)/2 whose extras fit the vector limit reach the bound. */
        for (uint64_t n = (uint64_t)p * (p - 1) / 2; n < (uint64_t)limit; n++) {
            expect_true(best[n] == exchange_transpose_bound(n, p),
                        "P=%d n=%" PRIu64 ": best bin %" PRIu64 " != bound %" PRIu64, p, n, best[n],
                        exchange_transpose_bound(n, p));
        }
        free(c);
    }
    printf("bounds exhaustive: %ld count vectors for P = 2..4, bound never exceeded and "
           "reached\n",
           vectors);
}

/* ---- 3. the exchange simulated in one process ------------------------------------------------ */

/* Element k of run (s, j), @e bytes at @out: byte b is byte b % 8 of a bijective hash of
 * (s, j, k, b / 8), so that an element in the wrong place, or a part of one, shows. */
static void elem_of(int s, int j, uint64_t k, size_t e, unsigned char *out)
{
    uint64_t key = ((uint64_t)s << 48) | ((uint64_t)j << 32) | k;
    for (size_t at = 0; at < e; at += 8) {
        uint64_t w = util_mix64(key + (at / 8) * 0x9e3779b97f4a7c15ULL);
        for (size_t b = at; b < e && b < at + 8; b++) {
            out[b] = (unsigned char)(w >> (8 * (b - at)));
        }
    }
}

/* Runs deal, round 1, regroup, round 2 and unpack for all P ranks of matrix c, elements of @e
 * bytes, in @steps steps as the back-end does, and compares every rank's result with the
 * alltoallv layout, byte for byte. @wide: the back-end's layout, where every block has room for
 * both bins (stride block1 + block2) and the round-2 bin sits behind the round-1 bin; otherwise
 * blocks are exactly one bin wide. */
static void simulate_layout(const uint64_t *c, int p, uint64_t steps, int threads, int wide,
                            size_t e, const char *what)
{
    size_t pp = (size_t)p * (size_t)p;
    struct exchange_transpose_plan *plan = test_calloc((size_t)p, sizeof(*plan));
    unsigned char **send = test_calloc((size_t)p, sizeof(unsigned char *));
    unsigned char **recv = test_calloc((size_t)p, sizeof(unsigned char *));
    unsigned char **x = test_calloc((size_t)p, sizeof(unsigned char *));
    unsigned char **y = test_calloc((size_t)p, sizeof(unsigned char *));
    unsigned char *want = test_calloc(e, 1);
    uint64_t *part = test_calloc(pp, sizeof(uint64_t)), *first = test_calloc(pp, sizeof(uint64_t));
    uint64_t *sdispl = test_calloc(pp, sizeof(uint64_t)), *rdispl = test_calloc(pp, sizeof(uint64_t));
    uint64_t *srun = test_calloc((size_t)p, sizeof(uint64_t));
    uint64_t *rrun = test_calloc((size_t)p, sizeof(uint64_t));
    for (int r = 0; r < p; r++) {
        if (exchange_transpose_plan_init(&plan[r], p, r, e) != 0) {
            exit(2);
        }
        uint64_t row = 0, col = 0;
        for (int j = 0; j < p; j++) {
            sdispl[(size_t)r * p + j] = row; /* where run (r, j) starts in rank r's send */
            rdispl[(size_t)r * p + j] = col; /* where run (j, r) starts in rank r's recv */
            row += c[(size_t)r * p + j];
            col += c[(size_t)j * p + r];
        }
        send[r] = test_calloc(row, e);
        recv[r] = test_calloc(col, e);
        memset(recv[r], 0xff, col * e);
        uint64_t at = 0;
        for (int j = 0; j < p; j++) {
            for (uint64_t k = 0; k < c[(size_t)r * p + j]; k++) {
                elem_of(r, j, k, e, send[r] + e * at++);
            }
        }
    }
    for (uint64_t k = 0; k < steps; k++) {
        exchange_transpose_step(c, p, k, steps, part, first);
        for (int r = 0; r < p; r++) {
            exchange_transpose_plan_set(&plan[r], part);
        }
        uint64_t b1 = plan[0].block1, b2 = plan[0].block2;
        uint64_t s1 = wide ? b1 + b2 : b1, s2 = wide ? b1 + b2 : b2, off2 = wide ? b1 : 0;
        uint64_t half = (uint64_t)p * (b1 + b2);
        for (int r = 0; r < p; r++) {
            expect_true(plan[r].block1 == b1 && plan[r].block2 == b2, "%s: ranks disagree", what);
            /* Scratch poisoned: a key read from padding would show up in a result. */
            x[r] = test_calloc(half, e);
            y[r] = test_calloc(half, e);
            memset(x[r], 0xff, half * e);
            for (int j = 0; j < p; j++) {
                srun[j] = sdispl[(size_t)r * p + j] + first[(size_t)r * p + j];
            }
            exchange_transpose_deal(&plan[r], send[r], steps > 1 ? srun : NULL, x[r], s1, threads);
        }
        /* Round 1 stands in for MPI_Alltoall: block b of rank s to block s of rank b. */
        for (int s = 0; s < p; s++) {
            for (int b = 0; b < p; b++) {
                memcpy(y[b] + (uint64_t)s * s1 * e, x[s] + (uint64_t)b * s1 * e, b1 * e);
            }
        }
        for (int r = 0; r < p; r++) {
            memset(x[r], 0xff, half * e);
            exchange_transpose_regroup(&plan[r], y[r], s1, x[r] + off2 * e, s2, threads);
        }
        for (int b = 0; b < p; b++) {
            for (int j = 0; j < p; j++) {
                memcpy(y[j] + ((uint64_t)b * s2 + off2) * e, x[b] + ((uint64_t)j * s2 + off2) * e,
                       b2 * e);
            }
        }
        for (int r = 0; r < p; r++) {
            for (int s = 0; s < p; s++) {
                rrun[s] = rdispl[(size_t)r * p + s] + first[(size_t)s * p + r];
            }
            exchange_transpose_unpack(&plan[r], y[r] + off2 * e, s2, recv[r],
                                      steps > 1 ? rrun : NULL, threads);
            free(x[r]);
            free(y[r]);
        }
    }
    /* The alltoallv layout: source 0's run first, each run in send order. */
    for (int j = 0; j < p; j++) {
        uint64_t at = 0;
        int bad = 0;
        for (int s = 0; s < p && !bad; s++) {
            for (uint64_t k = 0; k < c[(size_t)s * p + j]; k++, at++) {
                elem_of(s, j, k, e, want);
                if (memcmp(recv[j] + at * e, want, e) != 0) {
                    expect_true(0,
                                "%s P=%d steps=%" PRIu64 " wide=%d e=%zu rank %d: element %" PRIu64
                                " (from %d, #%" PRIu64 ") differs",
                                what, p, steps, wide, e, j, at, s, k);
                    bad = 1;
                    break;
                }
            }
        }
    }
    for (int r = 0; r < p; r++) {
        free(send[r]);
        free(recv[r]);
        exchange_transpose_plan_free(&plan[r]);
    }
    free(plan);
    free(send);
    free(recv);
    free(x);
    free(y);
    free(part);
    free(first);
    free(sdispl);
    free(rdispl);
    free(srun);
    free(rrun);
    free(want);
}

/* The element sizes the simulated cases walk: keys, bytes, an odd record, gensort's record. */
static const size_t elem_sizes[] = {8, 1, 13, 100};
static unsigned elem_turn;

/* Both layouts of the exchange, on elements of the next size in turn; a matrix of more than
 * 200,000 elements takes the next size below 100 bytes, so that the large cases cost about what
 * they cost with keys. */
static void simulate(const uint64_t *c, int p, uint64_t steps, int threads, const char *what)
{
    uint64_t n = 0;
    for (size_t i = 0; i < (size_t)p * (size_t)p; i++) {
        n += c[i];
    }
    size_t e;
    do {
        e = elem_sizes[elem_turn++ % (sizeof(elem_sizes) / sizeof(*elem_sizes))];
    } while (n > 200000 && e > 16);
    simulate_layout(c, p, steps, threads, 0, e, what);
    simulate_layout(c, p, steps, threads, 1, e, what);
}

/* The split into steps: pieces add up to the runs, follow each other, and no step gives a rank
 * more than 1/steps of its keys plus P. */
static void test_steps(void)
{
    int cases = 0;
    expect_true(exchange_transpose_steps(0, 0, 100) == 0, "no keys, no steps");
    expect_true(exchange_transpose_steps(100, 7, 100) == 1, "one full step");
    expect_true(exchange_transpose_steps(7, 101, 100) == 2, "h decides");
    for (int p = 1; p <= 9; p++) {
        size_t pp = (size_t)p * (size_t)p;
        uint64_t *c = test_calloc(pp, sizeof(uint64_t)), *part = test_calloc(pp, sizeof(uint64_t));
        uint64_t *first = test_calloc(pp, sizeof(uint64_t)), *sum = test_calloc(pp, sizeof(uint64_t));
        for (int r = 0; r < 20; r++) {
            random_matrix(c, p, r % 2 ? 50 : 100000);
            uint64_t steps = 1 + test_rand() % 40;
            memset(sum, 0, pp * sizeof(uint64_t));
            for (uint64_t k = 0; k < steps; k++) {
                exchange_transpose_step(c, p, k, steps, part, first);
                for (int s = 0; s < p; s++) {
                    uint64_t row = 0, whole = 0;
                    for (int j = 0; j < p; j++) {
                        size_t i = (size_t)s * p + j;
                        expect_true(first[i] == sum[i],
                                    "P=%d step %" PRIu64 ": piece does not follow", p, k);
                        sum[i] += part[i];
                        row += part[i];
                        whole += c[i];
                    }
                    expect_true(row <= whole / steps + (uint64_t)p,
                                "P=%d: step row %" PRIu64 " too big", p, row);
                }
            }
            expect_true(memcmp(sum, c, pp * sizeof(uint64_t)) == 0, "P=%d: pieces do not add up",
                        p);
            cases++;
        }
        free(c);
        free(part);
        free(first);
        free(sum);
    }
    printf("steps: pieces add up, follow each other, and stay within 1/steps + P (%d)\n", cases);
}

static void test_simulated_exchange(void)
{
    int cases = 0;
    for (int p = 1; p <= 9; p++) {
        uint64_t *c = test_calloc((size_t)p * p, sizeof(uint64_t));
        simulate(c, p, 1, 1, "empty");
        for (uint64_t n = 1; n < (uint64_t)p + 2; n++) {
            all_to_one(c, p, n, p - 1);
            simulate(c, p, 1, 1, "few keys");
            simulate(c, p, n, 1, "few keys, a step per key");
        }
        all_to_one(c, p, 100003, 0);
        simulate(c, p, 1, 2, "all-to-one");
        simulate(c, p, 7, 1, "all-to-one in steps");
        staggered(c, p, 30011);
        simulate(c, p, 1, 2, "staggered");
        simulate(c, p, 3, 2, "staggered in steps");
        tight(c, p, 7);
        simulate(c, p, 1, 1, "tight");
        for (int r = 0; r < 30; r++) {
            random_matrix(c, p, r % 3 ? 300 : 40000);
            simulate(c, p, 1 + (uint64_t)(r % 4) * (r % 5), 1 + r % 2, "random");
        }
        /* Large runs, so that the threaded copies are used. */
        for (size_t i = 0; i < (size_t)p * p; i++) {
            c[i] = 50000 + test_rand() % 1000;
        }
        simulate(c, p, 1, 2, "large");
        simulate(c, p, 4, 2, "large in steps");
        cases += 2 * (p + 1) + 1 + 2 + 2 + 1 + 30 + 2;
        free(c);
    }
    printf("simulated exchange: every rank gets the alltoallv layout, runs in order, in one "
           "step or many (%d cases, P = 1..9)\n",
           cases);
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {
        TEST(share), TEST(bounds), TEST(bounds_exhaustive), TEST(steps), TEST(simulated_exchange),
        TEST_END,
    };
    return test_main(argc, argv, tests);
}

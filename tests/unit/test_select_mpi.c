/*
 * tests/unit/test_select_mpi.c: the splitter selections on adversarial inputs, through the
 * library's sortex_sort().
 *
 * usage: mpirun -np P test_select_mpi [auto|eps|exact|sample ...]   (default: all four)
 *
 * For inputs chosen to break splitter selection (all keys equal, two values, one rank holding
 * every key, fewer keys than ranks, empty ranks, a key per rank, random keys in skewed
 * amounts, and every key but one equal) every rank builds its keys deterministically, sorts
 * them with each --balance mode, and checks: every rank's slice is in order and follows the
 * previous rank's; the key count and an order-independent checksum of the keys are unchanged;
 * and each rank holds no more than its mode promises: floor(n/P) or ceil(n/P) keys for exact,
 * at most n/P + 1 + eps n/P for eps, at most (1 + (P+1)/S) n/P + P for sample. Rank 0 prints
 * one line per mode and input. A test per mode, on the harness of tests/unit/test_mpi.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sort/sortex.h"
#include "tests/unit/test_mpi.h"

enum input {
    INPUT_EQUAL,     /* every key 42 */
    INPUT_TWO,       /* keys 1 and 2, alternating in runs */
    INPUT_ONE_RANK,  /* rank P-1 holds every key, the others none */
    INPUT_FEW,       /* fewer keys than ranks: rank 0 holds P/2 */
    INPUT_EMPTY,     /* every other rank empty, uniform keys elsewhere */
    INPUT_ONE_EACH,  /* one key per rank, descending by rank */
    INPUT_SKEWED,    /* random keys, rank r holding (r+1)^2 * 3000 */
    INPUT_ALL_BUT_1, /* every key 7 but one huge key on rank 0 */
    INPUT_NONE,      /* no key anywhere */
    INPUT_COUNT
};

static const char *const input_names[INPUT_COUNT] = {
    "all-equal",    "two-values",    "one-rank",    "fewer-than-P", "empty-ranks",
    "one-per-rank", "skewed-random", "all-but-one", "none",
};

/* This rank's keys of input @in, in a buffer from sortex_alloc_keys(). */
static uint64_t *make(enum input in, uint64_t *n)
{
    uint64_t s = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(test_rank + 1) * 0x632be59bd9b4e019ULL;
    uint64_t m = 20000;
    switch (in) {
    case INPUT_ONE_RANK:
        m = test_rank == test_size - 1 ? 50000 : 0;
        break;
    case INPUT_FEW:
        m = test_rank == 0 ? (uint64_t)test_size / 2 : 0;
        break;
    case INPUT_EMPTY:
        m = test_rank % 2 ? 0 : 30000;
        break;
    case INPUT_ONE_EACH:
        m = 1;
        break;
    case INPUT_SKEWED:
        m = (uint64_t)(test_rank + 1) * (uint64_t)(test_rank + 1) * 3000;
        break;
    case INPUT_NONE:
        m = 0;
        break;
    default:
        break;
    }
    uint64_t *k = sortex_alloc_keys(m ? m : 1);
    for (uint64_t i = 0; k != NULL && i < m; i++) {
        switch (in) {
        case INPUT_EQUAL:
            k[i] = 42;
            break;
        case INPUT_TWO:
            k[i] = ((i / 97) % 2) + 1;
            break;
        case INPUT_ONE_EACH:
            k[i] = (uint64_t)(test_size - test_rank);
            break;
        case INPUT_ALL_BUT_1:
            k[i] = test_rank == 0 && i == 0 ? UINT64_MAX : 7;
            break;
        default:
            k[i] = util_splitmix64(&s);
            break;
        }
    }
    *n = m;
    return k;
}

/* An order-independent checksum of a multiset of keys: sum and sum of a mix. */
static void sums(const uint64_t *k, uint64_t n, uint64_t out[2])
{
    out[0] = out[1] = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t x = k[i] * 0xff51afd7ed558ccdULL;
        out[0] += k[i];
        out[1] += x ^ (x >> 33);
    }
}

static void run(enum sortex_balance mode, const char *mode_name, enum input in)
{
    uint64_t n = 0, before[2], after[2], total = 0;
    uint64_t *keys = make(in, &n);
    expect_true(keys != NULL, "out of memory");
    if (keys == NULL) {
        return;
    }
    sums(keys, n, before);
    MPI_Allreduce(MPI_IN_PLACE, before, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&n, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);

    struct sortex_config cfg;
    struct sortex_stats st;
    sortex_config_default(&cfg);
    cfg.balance = mode;
    cfg.threads = 1;
    int rc = sortex_sort(MPI_COMM_WORLD, &keys, &n, &cfg, &st);
    expect_true(rc == 0, "%s %s: sortex_sort returned %d", mode_name, input_names[in], rc);
    if (rc != 0) {
        return;
    }
    /* In order, and after the previous rank's last key. */
    for (uint64_t i = 1; i < n; i++) {
        if (keys[i - 1] > keys[i]) {
            expect_true(0, "%s %s: keys %llu and %llu out of order", mode_name, input_names[in],
                        (unsigned long long)i - 1, (unsigned long long)i);
            break;
        }
    }
    uint64_t edge[2] = {n ? keys[0] : UINT64_MAX, n ? keys[n - 1] : 0};
    uint64_t *edges = malloc(2 * (size_t)test_size * sizeof(uint64_t));
    uint64_t *counts = malloc((size_t)test_size * sizeof(uint64_t));
    MPI_Allgather(edge, 2, MPI_UINT64_T, edges, 2, MPI_UINT64_T, MPI_COMM_WORLD);
    MPI_Allgather(&n, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    uint64_t last = 0;
    int seen = 0;
    for (int r = 0; r < test_size; r++) {
        if (counts[r] == 0) {
            continue;
        }
        expect_true(!seen || last <= edges[2 * r], "%s %s: rank %d starts below the rank before",
                    mode_name, input_names[in], r);
        last = edges[2 * r + 1];
        seen = 1;
    }
    /* The same keys. */
    sums(keys, n, after);
    MPI_Allreduce(MPI_IN_PLACE, after, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t out_total = 0;
    for (int r = 0; r < test_size; r++) {
        out_total += counts[r];
    }
    expect_true(out_total == total && after[0] == before[0] && after[1] == before[1],
                "%s %s: the keys changed (%llu of %llu)", mode_name, input_names[in],
                (unsigned long long)out_total, (unsigned long long)total);
    /* The promise of the mode. */
    double share = (double)total / test_size;
    for (int r = 0; r < test_size; r++) {
        enum sortex_balance ran = st.balance; /* auto: the selection it resolved to */
        expect_true(mode == SORTEX_BALANCE_AUTO || ran == mode, "%s: ran selection %d", mode_name,
                    (int)ran);
        double bound = ran == SORTEX_BALANCE_EXACT ? ceil(share)
                       : ran == SORTEX_BALANCE_EPS ? share + 1 + 0.1 * share
                                                   : (1 + st.epsilon_bound) * share + test_size;
        expect_true((double)counts[r] <= bound + 1e-9, "%s %s: rank %d holds %llu keys, bound %.1f",
                    mode_name, input_names[in], r, (unsigned long long)counts[r], bound);
        if (ran == SORTEX_BALANCE_EXACT) {
            expect_true((double)counts[r] >= floor(share),
                        "%s %s: rank %d holds %llu keys, below %.0f", mode_name, input_names[in], r,
                        (unsigned long long)counts[r], floor(share));
        }
    }
    if (test_rank == 0) {
        printf("%s %s: n %llu, max %.4f of n/P, %llu candidates, %llu rounds\n", mode_name,
               input_names[in], (unsigned long long)total, st.imbalance,
               (unsigned long long)st.samples, (unsigned long long)st.splitter_rounds);
    }
    free(edges);
    free(counts);
    sortex_free_keys(keys);
}

/* The --balance modes, as sortex_config names them. */
static const char *const mode_names[SORTEX_BALANCE_COUNT] = {"auto", "eps", "exact", "sample"};
static const enum sortex_balance modes[SORTEX_BALANCE_COUNT] = {
    SORTEX_BALANCE_AUTO, SORTEX_BALANCE_EPS, SORTEX_BALANCE_EXACT, SORTEX_BALANCE_SAMPLE};

/* One mode (*@row) on every input. */
static void test_mode(const void *row)
{
    enum sortex_balance mode = *(const enum sortex_balance *)row;
    for (int in = 0; in < INPUT_COUNT; in++) {
        run(mode, mode_names[mode], (enum input)in);
    }
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {
        {"auto", NULL, test_mode, &modes[0]},
        {"eps", NULL, test_mode, &modes[1]},
        {"exact", NULL, test_mode, &modes[2]},
        {"sample", NULL, test_mode, &modes[3]},
        TEST_END,
    };
    return test_mpi_main(argc, argv, tests);
}

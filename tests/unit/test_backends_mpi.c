/*
 * tests/unit/test_backends_mpi.c: the exchange contract, checked directly on each back-end.
 *
 * usage: mpirun -np P test_backends_mpi [BACKEND...]   (default: every registered back-end)
 *
 * For a set of count patterns (random, empty, all to one rank, only the own bucket, one rank
 * sending everything, large pieces) every rank fills its send buffer with keys that encode (source,
 * destination, index), runs alltoallv as the reference and then each back-end, and checks that
 * recv_counts and the received keys are identical to the reference (grouped by source, each
 * source's keys in their original order), with the receive counts left to the back-end and with
 * them given (exchange_args.recv_counts_known), that the stats add up (bytes received at least the
 * keys received from others, messages and rounds present when keys moved), and that a receive
 * buffer one key too small is refused with UTIL_EUSAGE without hanging. Run it with
 * SORTEX_INT_LIMIT lowered to exercise the chunked paths, and with SORTEX_SCATTER_MIN=0 to send
 * every bundle scattered (then checked through the stats). Rank 0 prints one "ok" line per
 * back-end; the exit status is 1 when any check failed on any rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

enum pattern {
    PATTERN_RANDOM,   /* 0..64 keys per pair */
    PATTERN_EMPTY,    /* nothing at all */
    PATTERN_SPARSE,   /* most pairs empty, a few with keys */
    PATTERN_TO_ONE,   /* every rank sends everything to one rank */
    PATTERN_OWN,      /* only the own bucket */
    PATTERN_FROM_ONE, /* one rank sends to everyone, the others nothing */
    PATTERN_LARGE,    /* 2000..6000 keys per pair: beyond a lowered int limit */
    PATTERN_HUGE,     /* 9000..12000 keys per pair: synchronous rounds, scattered bundles */
    PATTERN_MIXED,    /* rank 0 sends rank 1 a huge piece, everything else is small */
    PATTERN_COUNT
};

static const char *const pattern_names[PATTERN_COUNT] = {
    "random", "empty", "sparse", "to-one", "own", "from-one", "large", "huge", "mixed",
};

static int rank, size, failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL rank %d: ", rank);                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failed = 1;                                                                            \
        }                                                                                          \
    } while (0)

/* A small deterministic generator, seeded per (pattern, rank). */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void make_counts(enum pattern pat, uint64_t *counts)
{
    uint64_t seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(pat + 1) + (uint64_t)rank * 7919 + 1;
    for (int d = 0; d < size; d++) {
        uint64_t r = rnd(&seed);
        switch (pat) {
        case PATTERN_RANDOM: counts[d] = r % 65; break;
        case PATTERN_EMPTY: counts[d] = 0; break;
        case PATTERN_SPARSE: counts[d] = r % 5 == 0 ? 1 + r % 300 : 0; break;
        case PATTERN_TO_ONE: counts[d] = d == size / 2 ? 1000 + (uint64_t)rank : 0; break;
        case PATTERN_OWN: counts[d] = d == rank ? 500 : 0; break;
        case PATTERN_FROM_ONE: counts[d] = rank == size - 1 ? 100 + (uint64_t)d : 0; break;
        case PATTERN_LARGE: counts[d] = 2000 + r % 4001; break;
        case PATTERN_HUGE: counts[d] = 9000 + r % 3001; break;
        case PATTERN_MIXED: counts[d] = rank == 0 && d == 1 % size ? 20000 : r % 50; break;
        default: counts[d] = 0; break;
        }
    }
}

/* Key j of the piece from s to d: distinct everywhere, so any misplacement shows. */
static uint64_t key_of(int s, int d, uint64_t j)
{
    return (uint64_t)s << 48 | (uint64_t)d << 32 | j;
}

/* Runs one back-end with recv room for cap keys; returns its error code. known: recv_counts
 * holds the receive counts on entry (exchange_args.recv_counts_known), as the sort passes them. */
static int run(const struct exchange_ops *ops, MPI_Comm comm, const uint64_t *send,
               const uint64_t *send_counts, uint64_t *recv, uint64_t cap, uint64_t *recv_counts,
               struct exchange_stats *st, int known)
{
    struct exchange_args args = {
        .comm = comm,
        .threads = 1,
        .send = send,
        .send_counts = send_counts,
        .recv = recv,
        .recv_cap = cap,
        .recv_counts = recv_counts,
        .stats = st,
        .recv_counts_known = known,
    };
    return ops->run(&args);
}

static void test_pattern(const struct exchange_ops *ops, enum pattern pat, MPI_Comm comm,
                         int known)
{
    uint64_t *send_counts = util_calloc((size_t)size, sizeof(uint64_t));
    uint64_t *ref_counts = util_calloc((size_t)size, sizeof(uint64_t));
    uint64_t *got_counts = util_calloc((size_t)size, sizeof(uint64_t));
    make_counts(pat, send_counts);
    uint64_t nsend = 0, nrecv = 0;
    for (int d = 0; d < size; d++) {
        nsend += send_counts[d];
    }
    MPI_Reduce_scatter_block(send_counts, &nrecv, 1, MPI_UINT64_T, MPI_SUM, comm);
    uint64_t *send = util_alloc_big((nsend + 1) * sizeof(uint64_t));
    uint64_t *ref = util_alloc_big((nrecv + 1) * sizeof(uint64_t));
    uint64_t *got = util_alloc_big((nrecv + 1) * sizeof(uint64_t));
    uint64_t k = 0;
    for (int d = 0; d < size; d++) {
        for (uint64_t j = 0; j < send_counts[d]; j++) {
            send[k++] = key_of(rank, d, j);
        }
    }
    struct exchange_stats st;
    const struct exchange_ops *ref_ops = exchange_find("alltoallv");
    CHECK(run(ref_ops, comm, send, send_counts, ref, nrecv, ref_counts, &st, 0) == 0,
          "alltoallv failed (%s)", pattern_names[pat]);
    memset(got, 0xA5, (nrecv + 1) * sizeof(uint64_t));
    memset(&st, 0xA5, sizeof(st));
    if (known) {
        memcpy(got_counts, ref_counts, (size_t)size * sizeof(uint64_t));
    }
    int rc = run(ops, comm, send, send_counts, got, nrecv, got_counts, &st, known);
    CHECK(rc == 0, "%s failed with %d (%s)", ops->name, rc, pattern_names[pat]);

    /* The reference itself has the contract's layout, and the back-end equals it. */
    uint64_t off = 0, from_others = 0;
    for (int s = 0; s < size; s++) {
        CHECK(got_counts[s] == ref_counts[s], "%s %s: %llu keys from %d, alltoallv %llu",
              ops->name, pattern_names[pat], (unsigned long long)got_counts[s], s,
              (unsigned long long)ref_counts[s]);
        for (uint64_t j = 0; j < ref_counts[s] && off + j < nrecv; j++) {
            CHECK(ref[off + j] == key_of(s, rank, j), "alltoallv misplaced a key");
        }
        off += ref_counts[s];
        from_others += s == rank ? 0 : ref_counts[s];
    }
    CHECK(off == nrecv, "alltoallv delivered %llu keys, not %llu", (unsigned long long)off,
          (unsigned long long)nrecv);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < nrecv; i++) {
        bad += got[i] != ref[i];
    }
    CHECK(bad == 0, "%s %s: %llu of %llu keys differ from alltoallv", ops->name,
          pattern_names[pat], (unsigned long long)bad, (unsigned long long)nrecv);
    CHECK(got[nrecv] == 0xA5A5A5A5A5A5A5A5ULL, "%s %s: wrote past the received keys", ops->name,
          pattern_names[pat]);

    /* Stats: honest enough to be checked from outside. */
    CHECK(st.bytes_recv >= from_others * sizeof(uint64_t), "%s %s: bytes_recv %llu < %llu",
          ops->name, pattern_names[pat], (unsigned long long)st.bytes_recv,
          (unsigned long long)(from_others * sizeof(uint64_t)));
    CHECK(st.seconds >= 0 && st.nextra >= 0 && st.nextra <= EXCHANGE_MAX_EXTRA,
          "%s: stats not filled", ops->name);
    CHECK(st.max_message <= st.bytes_sent, "%s: max_message above bytes_sent", ops->name);
    uint64_t total_sent = st.bytes_sent, total_recv = st.bytes_recv;
    MPI_Allreduce(MPI_IN_PLACE, &total_sent, 1, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, &total_recv, 1, MPI_UINT64_T, MPI_SUM, comm);
    CHECK(total_sent == total_recv, "%s %s: %llu bytes sent in all, %llu received", ops->name,
          pattern_names[pat], (unsigned long long)total_sent, (unsigned long long)total_recv);
    if (from_others > 0) {
        CHECK(st.rounds > 0, "%s %s: keys arrived in 0 rounds", ops->name, pattern_names[pat]);
    }
    /* Forced scattering shows in the stats of the back-ends that bundle. */
    const struct util_knob_value *smin = util_knob(UTIL_KNOB_SCATTER_MIN);
    for (int i = 0; smin->valid && smin->value == 0 && i < st.nextra; i++) {
        if (strcmp(st.extra[i].name, "scattered_bundles") == 0 && st.messages > 0) {
            CHECK(st.extra[i].value > 0, "%s %s: nothing scattered", ops->name,
                  pattern_names[pat]);
        }
    }

    util_free_big(send);
    util_free_big(ref);
    util_free_big(got);
    util_free(send_counts);
    util_free(ref_counts);
    util_free(got_counts);
}

/* A receive buffer one key short on one rank is refused there, and nobody hangs. */
static void test_too_small(const struct exchange_ops *ops, MPI_Comm comm, int known)
{
    uint64_t *counts = util_calloc((size_t)size, sizeof(uint64_t));
    uint64_t *rcounts = util_calloc((size_t)size, sizeof(uint64_t));
    uint64_t *send = util_alloc_big((size_t)size * 10 * sizeof(uint64_t));
    uint64_t *recv = util_alloc_big((size_t)size * 10 * sizeof(uint64_t));
    for (int d = 0; d < size; d++) {
        counts[d] = 10;
    }
    for (int i = 0; i < size * 10; i++) {
        send[i] = (uint64_t)i;
    }
    struct exchange_stats st;
    uint64_t cap = rank == 0 ? (uint64_t)size * 10 - 1 : (uint64_t)size * 10;
    for (int s = 0; s < size; s++) {
        rcounts[s] = 10; /* what every rank receives from each, given when known */
    }
    int rc = run(ops, comm, send, counts, recv, cap, rcounts, &st, known);
    if (rank == 0) {
        CHECK(rc == UTIL_EUSAGE, "%s: a too small receive buffer gave %d", ops->name, rc);
    }
    util_free_big(send);
    util_free_big(recv);
    util_free(counts);
    util_free(rcounts);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    util_set_progname("test_backends_mpi");

    const struct exchange_ops *const *all = exchange_list();
    for (size_t i = 0; all[i] != NULL; i++) {
        const struct exchange_ops *ops = all[i];
        int wanted = argc <= 1;
        for (int a = 1; a < argc; a++) {
            wanted |= strcmp(argv[a], ops->name) == 0;
        }
        if (!wanted) {
            continue;
        }
        for (int pat = 0; pat < PATTERN_COUNT; pat++) {
            test_pattern(ops, (enum pattern)pat, comm, 0);
            test_pattern(ops, (enum pattern)pat, comm, 1); /* the counts given, as by the sort */
        }
        test_too_small(ops, comm, 0);
        test_too_small(ops, comm, 1);
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
        if (rank == 0) {
            printf("%s %s: P=%d, %d patterns, int limit %llu\n", failed ? "FAIL" : "ok",
                   ops->name, size, (int)PATTERN_COUNT, (unsigned long long)exchange_int_limit());
        }
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}

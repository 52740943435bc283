/*
 * tests/unit/test_backends_mpi.c: the exchange contract, checked directly on each back-end.
 *
 * usage: mpirun -np P test_backends_mpi [sizes=SIZE,...] [BACKEND...]
 *        (default: elements of 8 bytes, every registered back-end)
 *
 * A test per registered back-end. For every element size of sizes= (bytes per element: 8 is a key,
 * 100 a gensort record, 13 an odd layout, 1 a byte) and a set of count patterns (random, empty, all
 * to one rank, only the own bucket, one rank sending everything, large pieces) every rank fills its
 * send buffer with elements whose every byte is a function of (source, destination, index, byte),
 * runs alltoallv as the reference and then each back-end, and checks that recv_counts equal the
 * reference and that every byte received is the one expected (grouped by source, each source's
 * elements in their original order: byte-exact delivery), with the receive counts left to the
 * back-end and with them given (exchange_args.recv_counts_known), that nothing is written past the
 * received elements, that the stats add up (bytes received at least the bytes received from others,
 * messages and rounds present when elements moved), and that a receive buffer one element too
 * small is refused with UTIL_EUSAGE without hanging. The large patterns are given in bytes (as
 * many elements as 8-byte keys would fill), so that every size crosses the same thresholds. Run
 * it with SORTEX_INT_LIMIT lowered to exercise the chunked paths (below the element size, chunks
 * cut elements), and with SORTEX_SCATTER_MIN=0 to send every bundle scattered (then checked
 * through the stats). Rank 0 prints a line per back-end and element size. On the harness of
 * tests/unit/test_mpi.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "tests/unit/test_mpi.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

enum pattern {
    PATTERN_RANDOM,   /* 0..64 elements per pair */
    PATTERN_EMPTY,    /* nothing at all */
    PATTERN_SPARSE,   /* most pairs empty, a few with elements */
    PATTERN_TO_ONE,   /* every rank sends everything to one rank */
    PATTERN_OWN,      /* only the own bucket */
    PATTERN_FROM_ONE, /* one rank sends to everyone, the others nothing */
    PATTERN_LARGE,    /* 16..48 KB per pair: beyond a lowered int limit */
    PATTERN_HUGE,     /* 72..96 KB per pair: synchronous rounds, scattered bundles */
    PATTERN_MIXED,    /* rank 0 sends rank 1 a huge piece (160 KB), everything else is small */
    PATTERN_COUNT
};

static const char *const pattern_names[PATTERN_COUNT] = {
    "random", "empty", "sparse", "to-one", "own", "from-one", "large", "huge", "mixed",
};

/* Elements of @e bytes that fill as many bytes as @keys 8-byte keys (at least one). */
static uint64_t as_keys(uint64_t keys, size_t e)
{
    uint64_t n = keys * sizeof(uint64_t) / e;
    return n > 0 ? n : 1;
}

static void make_counts(enum pattern pat, size_t e, uint64_t *counts)
{
    uint64_t seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(pat + 1) + (uint64_t)test_rank * 7919 + 1;
    for (int d = 0; d < test_size; d++) {
        uint64_t r = util_splitmix64(&seed);
        switch (pat) {
        case PATTERN_RANDOM:
            counts[d] = r % 65;
            break;
        case PATTERN_EMPTY:
            counts[d] = 0;
            break;
        case PATTERN_SPARSE:
            counts[d] = r % 5 == 0 ? 1 + r % 300 : 0;
            break;
        case PATTERN_TO_ONE:
            counts[d] = d == test_size / 2 ? 1000 + (uint64_t)test_rank : 0;
            break;
        case PATTERN_OWN:
            counts[d] = d == test_rank ? 500 : 0;
            break;
        case PATTERN_FROM_ONE:
            counts[d] = test_rank == test_size - 1 ? 100 + (uint64_t)d : 0;
            break;
        case PATTERN_LARGE:
            counts[d] = as_keys(2000 + r % 4001, e);
            break;
        case PATTERN_HUGE:
            counts[d] = as_keys(9000 + r % 3001, e);
            break;
        case PATTERN_MIXED:
            counts[d] = test_rank == 0 && d == 1 % test_size ? as_keys(20000, e) : r % 50;
            break;
        default:
            counts[d] = 0;
            break;
        }
    }
}

/* Element j of the piece from s to d, @e bytes at @out: byte b is byte b % 8 of a bijective
 * hash of (s, d, j, b / 8), so from 8 bytes on any misplaced element shows, and below that
 * almost any. */
static void elem_of(int s, int d, uint64_t j, size_t e, unsigned char *out)
{
    uint64_t key = (uint64_t)s << 48 | (uint64_t)d << 32 | j;
    for (size_t at = 0; at < e; at += sizeof(uint64_t)) {
        /* splitmix64's finaliser: a bijection */
        uint64_t w = util_mix64(key + (at / sizeof(uint64_t)) * 0x9E3779B97F4A7C15ULL);
        for (size_t b = at; b < e && b < at + sizeof(uint64_t); b++) {
            out[b] = (unsigned char)(w >> (8 * (b - at)));
        }
    }
}

/* The elements of @buf (grouped by source, @counts[s] from each) that are not the ones source
 * s sent this rank, byte for byte. */
static uint64_t wrong_elements(const unsigned char *buf, const uint64_t *counts, size_t e,
                               unsigned char *want)
{
    uint64_t bad = 0, at = 0;
    for (int s = 0; s < test_size; s++) {
        for (uint64_t j = 0; j < counts[s]; j++, at++) {
            elem_of(s, test_rank, j, e, want);
            bad += memcmp(buf + at * e, want, e) != 0;
        }
    }
    return bad;
}

/* Runs one back-end with recv room for cap elements of e bytes; returns its error code. known:
 * recv_counts holds the receive counts on entry (exchange_args.recv_counts_known), as the sort
 * passes them. */
static int run(const struct exchange_ops *ops, MPI_Comm comm, size_t e, const void *send,
               const uint64_t *send_counts, void *recv, uint64_t cap, uint64_t *recv_counts,
               struct exchange_stats *st, int known)
{
    struct exchange_args args = {
        .comm = comm,
        .threads = 1,
        .elem_size = e,
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

static void test_pattern(const struct exchange_ops *ops, enum pattern pat, size_t e, MPI_Comm comm,
                         int known)
{
    uint64_t *send_counts = util_calloc((size_t)test_size, sizeof(uint64_t));
    uint64_t *ref_counts = util_calloc((size_t)test_size, sizeof(uint64_t));
    uint64_t *got_counts = util_calloc((size_t)test_size, sizeof(uint64_t));
    unsigned char *want = util_malloc(e);
    make_counts(pat, e, send_counts);
    uint64_t nsend = 0, nrecv = 0;
    for (int d = 0; d < test_size; d++) {
        nsend += send_counts[d];
    }
    MPI_Reduce_scatter_block(send_counts, &nrecv, 1, MPI_UINT64_T, MPI_SUM, comm);
    /* Room for 8 bytes past the end of what arrives: a back-end must leave them alone. */
    const size_t tail = sizeof(uint64_t);
    unsigned char *send = util_alloc_big(nsend * e + tail);
    unsigned char *ref = util_alloc_big(nrecv * e + tail);
    unsigned char *got = util_alloc_big(nrecv * e + tail);
    uint64_t k = 0;
    for (int d = 0; d < test_size; d++) {
        for (uint64_t j = 0; j < send_counts[d]; j++) {
            elem_of(test_rank, d, j, e, send + e * k++);
        }
    }
    struct exchange_stats st;
    const struct exchange_ops *ref_ops = exchange_find("alltoallv");
    expect_true(run(ref_ops, comm, e, send, send_counts, ref, nrecv, ref_counts, &st, 0) == 0,
                "alltoallv failed (%s, %zu-byte elements)", pattern_names[pat], e);
    memset(got, 0xA5, nrecv * e + tail);
    memset(&st, 0xA5, sizeof(st));
    if (known) {
        memcpy(got_counts, ref_counts, (size_t)test_size * sizeof(uint64_t));
    }
    int rc = run(ops, comm, e, send, send_counts, got, nrecv, got_counts, &st, known);
    expect_true(rc == 0, "%s failed with %d (%s, %zu-byte elements)", ops->name, rc,
                pattern_names[pat], e);

    /* The reference itself has the contract's layout, and the back-end delivers every byte of
     * it, nothing more. */
    uint64_t off = 0, from_others = 0;
    for (int s = 0; s < test_size; s++) {
        expect_true(got_counts[s] == ref_counts[s],
                    "%s %s e=%zu: %llu elements from %d, alltoallv %llu", ops->name,
                    pattern_names[pat], e, (unsigned long long)got_counts[s], s,
                    (unsigned long long)ref_counts[s]);
        off += ref_counts[s];
        from_others += s == test_rank ? 0 : ref_counts[s];
    }
    expect_true(off == nrecv, "alltoallv delivered %llu elements, not %llu",
                (unsigned long long)off, (unsigned long long)nrecv);
    expect_true(off != nrecv || wrong_elements(ref, ref_counts, e, want) == 0,
                "alltoallv misplaced an element (%s, e=%zu)", pattern_names[pat], e);
    uint64_t bad = off == nrecv ? wrong_elements(got, ref_counts, e, want) : nrecv;
    expect_true(bad == 0, "%s %s e=%zu: %llu of %llu elements are not the ones sent", ops->name,
                pattern_names[pat], e, (unsigned long long)bad, (unsigned long long)nrecv);
    static const unsigned char untouched[8] = {0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5};
    expect_true(memcmp(got + nrecv * e, untouched, tail) == 0,
                "%s %s e=%zu: wrote past the received "
                "elements",
                ops->name, pattern_names[pat], e);

    /* Stats: honest enough to be checked from outside. */
    expect_true(st.bytes_recv >= from_others * e, "%s %s e=%zu: bytes_recv %llu < %llu", ops->name,
                pattern_names[pat], e, (unsigned long long)st.bytes_recv,
                (unsigned long long)(from_others * e));
    expect_true(st.seconds >= 0 && st.nextra >= 0 && st.nextra <= EXCHANGE_MAX_EXTRA,
                "%s: stats not filled", ops->name);
    expect_true(st.max_message <= st.bytes_sent, "%s: max_message above bytes_sent", ops->name);
    uint64_t total_sent = st.bytes_sent, total_recv = st.bytes_recv;
    MPI_Allreduce(MPI_IN_PLACE, &total_sent, 1, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, &total_recv, 1, MPI_UINT64_T, MPI_SUM, comm);
    expect_true(total_sent == total_recv, "%s %s e=%zu: %llu bytes sent in all, %llu received",
                ops->name, pattern_names[pat], e, (unsigned long long)total_sent,
                (unsigned long long)total_recv);
    if (from_others > 0) {
        expect_true(st.rounds > 0, "%s %s: elements arrived in 0 rounds", ops->name,
                    pattern_names[pat]);
    }
    /* A message beyond one MPI call shows as "chunked" in the stats of the back-ends that report
     * it: alltoallv when any rank sends or receives more than the int limit in all, pairwise
     * and shift when one of this rank's pieces from or to another rank exceeds a chunk. So a
     * lowered SORTEX_INT_LIMIT is seen to take the chunked paths, whatever the element size. */
    int over_all = nsend * e > exchange_int_limit() || nrecv * e > exchange_int_limit();
    MPI_Allreduce(MPI_IN_PLACE, &over_all, 1, MPI_INT, MPI_MAX, comm);
    int over_piece = 0;
    for (int q = 0; q < test_size; q++) {
        uint64_t most = send_counts[q] > ref_counts[q] ? send_counts[q] : ref_counts[q];
        over_piece |= q != test_rank && most * e > exchange_chunk_bytes(e);
    }
    for (int i = 0; rc == 0 && i < st.nextra; i++) {
        if (strcmp(st.extra[i].name, "chunked") == 0) {
            int expect = strcmp(ops->name, "alltoallv") == 0 ? over_all : over_piece;
            expect_true(st.extra[i].value == expect, "%s %s e=%zu: chunked %g, expected %d",
                        ops->name, pattern_names[pat], e, st.extra[i].value, expect);
        }
    }
    /* Forced scattering shows in the stats of the back-ends that bundle. */
    const struct util_knob_value *smin = util_knob(UTIL_KNOB_SCATTER_MIN);
    for (int i = 0; smin->valid && smin->value == 0 && i < st.nextra; i++) {
        if (strcmp(st.extra[i].name, "scattered_bundles") == 0 && st.messages > 0) {
            expect_true(st.extra[i].value > 0, "%s %s: nothing scattered", ops->name,
                        pattern_names[pat]);
        }
    }

    util_free_big(send);
    util_free_big(ref);
    util_free_big(got);
    util_free(want);
    util_free(send_counts);
    util_free(ref_counts);
    util_free(got_counts);
}

/* A receive buffer one element short on one rank is refused there, and nobody hangs. */
static void test_too_small(const struct exchange_ops *ops, size_t e, MPI_Comm comm, int known)
{
    uint64_t *counts = util_calloc((size_t)test_size, sizeof(uint64_t));
    uint64_t *rcounts = util_calloc((size_t)test_size, sizeof(uint64_t));
    unsigned char *send = util_alloc_big((size_t)test_size * 10 * e);
    unsigned char *recv = util_alloc_big((size_t)test_size * 10 * e);
    for (int d = 0; d < test_size; d++) {
        counts[d] = 10;
    }
    for (size_t i = 0; i < (size_t)test_size * 10 * e; i++) {
        send[i] = (unsigned char)i;
    }
    struct exchange_stats st;
    uint64_t cap = test_rank == 0 ? (uint64_t)test_size * 10 - 1 : (uint64_t)test_size * 10;
    for (int s = 0; s < test_size; s++) {
        rcounts[s] = 10; /* what every rank receives from each, given when known */
    }
    int rc = run(ops, comm, e, send, counts, recv, cap, rcounts, &st, known);
    if (test_rank == 0) {
        expect_true(rc == UTIL_EUSAGE, "%s: a too small receive buffer gave %d (e=%zu)", ops->name,
                    rc, e);
    }
    util_free_big(send);
    util_free_big(recv);
    util_free(counts);
    util_free(rcounts);
}

/* The element sizes of sizes= (default: 8-byte keys), and the communicator the tests use (the
 * world's duplicate, as the library would be given). */
static size_t sizes[16] = {sizeof(uint64_t)};
static int nsizes = 1;
static MPI_Comm job;

/* Parses sizes='s list of element sizes into sizes[0..nsizes); returns 0, or 1 after a
 * message. */
static int parse_sizes(const char *text)
{
    char *end;
    nsizes = 0;
    for (const char *p = text; *p != '\0'; p = *end == ',' ? end + 1 : end) {
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v < 1 || v > 65536 || (*end != ',' && *end != '\0') ||
            nsizes == (int)(sizeof(sizes) / sizeof(sizes[0]))) {
            fprintf(stderr, "test_backends_mpi: error: bad list of sizes (%s)\n", text);
            return 1;
        }
        sizes[nsizes++] = v;
    }
    return nsizes == 0;
}

/* The back-end *@row: every pattern at every element size, with the receive counts left to it
 * and given (as the sort gives them), and a receive buffer one element short. */
static void test_backend(const void *row)
{
    const struct exchange_ops *ops = row;
    for (int z = 0; z < nsizes; z++) {
        size_t e = sizes[z];
        for (int pat = 0; pat < PATTERN_COUNT; pat++) {
            test_pattern(ops, (enum pattern)pat, e, job, 0);
            test_pattern(ops, (enum pattern)pat, e, job, 1);
        }
        test_too_small(ops, e, job, 0);
        test_too_small(ops, e, job, 1);
        if (test_rank == 0) {
            printf("%s: P=%d, %zu-byte elements, %d patterns, int limit %llu bytes\n", ops->name,
                   test_size, e, (int)PATTERN_COUNT, (unsigned long long)exchange_int_limit());
        }
    }
}

int main(int argc, char **argv)
{
    /* A test per registered back-end, named after it. */
    static struct test tests[64];
    const struct exchange_ops *const *all = exchange_list();
    size_t n = 0;
    for (; all[n] != NULL && n + 1 < sizeof(tests) / sizeof(tests[0]); n++) {
        tests[n] = (struct test){all[n]->name, NULL, test_backend, all[n]};
    }
    tests[n] = (struct test)TEST_END;
    test_init(argc, argv, tests);
    if (parse_sizes(test_param("sizes", "8")) != 0) {
        return 2;
    }
    MPI_Init(&argc, &argv);
    test_mpi_begin();
    MPI_Comm_dup(MPI_COMM_WORLD, &job);
    test_run_all(tests);
    int status = test_finish();
    MPI_Comm_free(&job);
    test_mpi_end();
    MPI_Finalize();
    return status;
}

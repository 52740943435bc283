/*
 * exchange/sparse.c: back-end `sparse`, point-to-point messages for the non-empty pieces only.
 *
 * Scheme: the counts by MPI_Alltoall unless the caller knows them (the multi-level sort does:
 * sort/levels.c), then every non-empty piece posted at once, receives first, as non-blocking
 * messages of at most exchange_chunk_bytes() each (the large-count rule of every back-end), and
 * the own piece copied. Cost: one start-up a non-empty piece (a chunk of it beyond INT_MAX
 * bytes) and every byte moved once: alpha m + beta max(sent, received) for m non-empty pieces.
 *
 * Why a back-end of its own: MPI_Alltoallv costs a start-up per peer whatever the counts (Open
 * MPI's linear algorithm posts the empty messages too, and its pairwise one sends them in P - 1
 * rounds), and so do the round-based back-ends (P - 1 rounds). A level of the multi-level sort
 * (AMS-sort: Axtmann, Bingmann, Sanders and Schulz, SPAA 2015, section 4.3) hands its exchange
 * a matrix in which a rank sends to about 2 P^(1/L) of the P ranks of its group: here that is
 * what it costs. On a dense matrix it is MPI's linear algorithm without the collective.
 */
#include "exchange/exchange.h"

#include <math.h>
#include <string.h>

#include "exchange/fwd_ring.h"
#include "exchange/model.h"
#include "exchange/tags.h"
#include "util/alloc.h"
#include "util/util.h"

/* Messages of the non-empty pieces of @counts (the own one excluded), in chunks of @chunk. */
static uint64_t pieces(const uint64_t *counts, uint64_t e, uint64_t chunk, int rank, int size)
{
    uint64_t n = 0;
    for (int p = 0; p < size; p++) {
        if (p != rank) {
            n += (counts[p] * e + chunk - 1) / chunk;
        }
    }
    return n;
}

static int sparse_run(const struct exchange_args *a)
{
    int rank, size, err = UTIL_OK;
    double t0 = util_now();
    void *drain = NULL;
    MPI_Comm_rank(a->comm, &rank);
    MPI_Comm_size(a->comm, &size);
    struct exchange_stats *st = a->stats;
    memset(st, 0, sizeof(*st));
    if ((err = exchange_check_args(a, rank)) != UTIL_OK) {
        return err;
    }
    const uint64_t e = a->elem_size;
    uint64_t *sdispl = util_malloc(2 * (size_t)size * sizeof(uint64_t));
    if (sdispl == NULL) {
        exchange_abort_midway(a->comm, rank, "out of memory for bookkeeping");
    }
    uint64_t *rdispl = sdispl + size;
    MPI_Request *req = NULL;

    /* 1. Counts, unless the caller knows them. */
    if (!a->recv_counts_known && MPI_Alltoall(a->send_counts, 1, MPI_UINT64_T, a->recv_counts, 1,
                                              MPI_UINT64_T, a->comm) != MPI_SUCCESS) {
        err = util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Alltoall of counts failed", rank);
        goto done;
    }
    (void)exchange_displs(a->send_counts, size, sdispl);
    uint64_t recvd = exchange_displs(a->recv_counts, size, rdispl);
    /* Refused or not, take part (into a buffer thrown away after), so no peer waits. */
    struct exchange_args to = *a;
    int refused = UTIL_OK;
    to.recv = exchange_recv_target(a, recvd, rank, &drain, &refused);
    a = &to;

    /* 2. Every non-empty piece at once: receives, then sends in shift order (so that the
     * ranks do not all start with rank 0), then the own piece. A rank that cannot allocate its
     * requests once its peers may be sending to it cannot leave: it aborts the job. */
    uint64_t chunk = exchange_chunk_bytes(e);
    uint64_t nreq =
        pieces(a->send_counts, e, chunk, rank, size) + pieces(a->recv_counts, e, chunk, rank, size);
    req = util_malloc((nreq ? nreq : 1) * sizeof(*req));
    if (req == NULL) {
        exchange_abort_midway(a->comm, rank, "out of memory for the requests");
    }
    int r = 0, cap = (int)(nreq ? nreq : 1), chunked = 0;
    char *send = (char *)a->send, *recv = a->recv;
    for (int i = 1; i < size && err == UTIL_OK; i++) {
        int p = (rank - i + size) % size;
        uint64_t bytes = a->recv_counts[p] * e;
        chunked |= bytes > chunk;
        err = exchange_post_piece(recv + rdispl[p] * e, bytes, e, p, 0, EXCHANGE_TAG_SPARSE,
                                  a->comm, &req, &r, &cap);
    }
    for (int i = 1; i < size && err == UTIL_OK; i++) {
        int p = (rank + i) % size;
        uint64_t bytes = a->send_counts[p] * e;
        chunked |= bytes > chunk;
        err = exchange_post_piece(send + sdispl[p] * e, bytes, e, p, 1, EXCHANGE_TAG_SPARSE,
                                  a->comm, &req, &r, &cap);
        st->messages += bytes > 0;
        st->bytes_sent += bytes;
        st->bytes_recv += a->recv_counts[(rank - i + size) % size] * e;
        st->max_message = bytes > st->max_message ? bytes : st->max_message;
    }
    if (err != UTIL_OK) {
        err = util_fail(UTIL_EMPI, "rank %d: exchange: posting a message failed", rank);
        goto done;
    }
    util_copy(recv + rdispl[rank] * e, send + sdispl[rank] * e, a->send_counts[rank] * e);
    if (MPI_Waitall(r, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
        err = util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Waitall failed", rank);
        goto done;
    }
    st->rounds = 1;
    exchange_stats_extra(st, "chunked", chunked ? 1.0 : 0.0);
    err = refused;
done:
    st->seconds = util_now() - t0;
    util_free(drain);
    util_free(req);
    util_free(sdispl);
    return err;
}

/* ---- the model ----------------------------------------------------------------------------- */

/* Every non-empty piece at once: one round, the busiest rank's start-ups (its non-empty pieces)
 * and volume, after the counts' MPI_Alltoall unless the caller knew them; asynchronously, each
 * transfer when both ends are free. */
static int model_sparse(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return exchange_model_at_once(c, r, 1);
}

/* Equal blocks: every piece non-empty, one round of P-1 messages of a block each (none when the
 * blocks are empty), after the counts unless the caller knew them. */
static int equal_sparse(const struct exchange_model_equal *e, struct exchange_model_result *r)
{
    uint64_t p = (uint64_t)e->p;
    if (p > 1 && e->block > 0) {
        exchange_model_equal_rounds(e, 1, p - 1, (p - 1) * e->block, e->block, r);
    }
    if (p > 1) {
        exchange_model_equal_extras(e, !e->counts_known, sizeof(uint64_t), 0, 0, r);
    }
    return UTIL_OK;
}

static const struct exchange_model model_sparse_pieces = {
    .name = "sparse",
    .summary = "the non-empty pieces at once: alpha m + beta max(sent, received), m pieces",
    .duplex = "full",
    .run = model_sparse,
    .equal = equal_sparse,
};

static const struct exchange_model *const sparse_models[] = {&model_sparse_pieces, NULL};

const struct exchange_ops exchange_sparse = {
    .name = "sparse",
    .summary = "point-to-point messages for the non-empty pieces only: the levels' exchanges",
    .run = sparse_run,
    .models = sparse_models,
};

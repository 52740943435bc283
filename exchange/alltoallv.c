/*
 * exchange/alltoallv.c: the reference back-end, MPI's own irregular all-to-all.
 *
 * Scheme: MPI_Alltoall of the 64-bit counts (unless the caller knows them), then MPI_Alltoallv
 * of the elements as bytes (MPI_BYTE, counts and displacements scaled by the element size).
 * Cost: whatever the MPI library's algorithm costs (Open MPI picks linear or pairwise); at best
 * one start-up per peer and every byte moved once.
 *
 * MPI counts and displacements are int. When any byte count or displacement exceeds the limit
 * (INT_MAX bytes, 2 GiB, or SORTEX_INT_LIMIT in tests) the elements move instead by non-blocking
 * point-to-point messages of at most exchange_chunk_bytes() each, addressed by 64-bit pointers,
 * so no size is ever truncated. A chunk holds whole elements unless an element exceeds the
 * limit; then the chunks, received back to back, put it together again exactly.
 */
#include "exchange/exchange.h"

#include <math.h>
#include <string.h>

#include "exchange/model.h"
#include "exchange/tags.h"
#include "util/alloc.h"
#include "util/util.h"

/* Requests the large-count path posts on this rank: one per chunk of <= chunk bytes. */
static uint64_t chunked_requests(const struct exchange_args *a, uint64_t chunk, int rank, int size)
{
    uint64_t nreq = 0, e = a->elem_size;
    for (int p = 0; p < size; p++) {
        if (p != rank) {
            nreq += (a->send_counts[p] * e + chunk - 1) / chunk +
                    (a->recv_counts[p] * e + chunk - 1) / chunk;
        }
    }
    return nreq;
}

/* The large-count path: every pair of ranks exchanges its block in chunks of <= chunk bytes,
 * with room for chunked_requests() requests in req. Displacements in elements. */
static int exchange_chunked(const struct exchange_args *a, const uint64_t *sdispl,
                            const uint64_t *rdispl, uint64_t chunk, int rank, int size,
                            MPI_Request *req)
{
    int err = UTIL_OK;
    uint64_t r = 0, e = a->elem_size;
    const char *send = a->send;
    char *recv = a->recv;
    /* Receives first, then sends in shift order so that peers do not all hit rank 0 at once. */
    for (int i = 1; i < size; i++) {
        int p = (rank - i + size) % size;
        uint64_t bytes = a->recv_counts[p] * e;
        for (uint64_t off = 0; off < bytes; off += chunk) {
            uint64_t c = bytes - off < chunk ? bytes - off : chunk;
            MPI_Irecv(recv + rdispl[p] * e + off, (int)c, MPI_BYTE, p, EXCHANGE_TAG_ALLTOALLV_BIG,
                      a->comm, &req[r++]);
        }
    }
    for (int i = 1; i < size; i++) {
        int p = (rank + i) % size;
        uint64_t bytes = a->send_counts[p] * e;
        for (uint64_t off = 0; off < bytes; off += chunk) {
            uint64_t c = bytes - off < chunk ? bytes - off : chunk;
            MPI_Isend(send + sdispl[p] * e + off, (int)c, MPI_BYTE, p, EXCHANGE_TAG_ALLTOALLV_BIG,
                      a->comm, &req[r++]);
        }
    }
    /* The own block is a local copy. */
    util_copy(recv + rdispl[rank] * e, send + sdispl[rank] * e, a->send_counts[rank] * e);
    if (MPI_Waitall((int)r, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
        err = util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Waitall failed", rank);
    }
    return err;
}

/* 1. Counts, unless the caller knows them; then the displacements on both sides, in elements,
 * and the elements this rank sends (*sent) and receives (*recvd). */
static int alltoallv_counts(const struct exchange_args *a, int rank, int size, uint64_t *sdispl,
                            uint64_t *rdispl, uint64_t *sent, uint64_t *recvd)
{
    if (!a->recv_counts_known && MPI_Alltoall(a->send_counts, 1, MPI_UINT64_T, a->recv_counts, 1,
                                              MPI_UINT64_T, a->comm) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Alltoall of counts failed", rank);
    }
    *sent = exchange_displs(a->send_counts, size, sdispl);
    *recvd = exchange_displs(a->recv_counts, size, rdispl);
    return UTIL_OK;
}

/* The int-count path: one MPI_Alltoallv of the elements as bytes, its byte counts and
 * displacements in ibuf ([4 * size] ints). */
static int alltoallv_ints(const struct exchange_args *a, const uint64_t *sdispl,
                          const uint64_t *rdispl, int *ibuf, int rank, int size)
{
    const uint64_t e = a->elem_size;
    int *sc = ibuf, *sd = ibuf + size, *rc = ibuf + 2 * size, *rd = ibuf + 3 * size;
    for (int p = 0; p < size; p++) {
        sc[p] = (int)(a->send_counts[p] * e);
        sd[p] = (int)(sdispl[p] * e);
        rc[p] = (int)(a->recv_counts[p] * e);
        rd[p] = (int)(rdispl[p] * e);
    }
    if (MPI_Alltoallv(a->send, sc, sd, MPI_BYTE, a->recv, rc, rd, MPI_BYTE, a->comm) !=
        MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Alltoallv failed", rank);
    }
    return UTIL_OK;
}

/* 2. Elements: one MPI_Alltoallv when every byte count and displacement fits the int
 * limit, else chunks; the ranks agree on which, and on having room for the chunks'
 * requests, before any element moves. *fits says which path ran. */
static int alltoallv_elements(const struct exchange_args *a, const uint64_t *sdispl,
                              const uint64_t *rdispl, uint64_t sent, uint64_t recvd, int *ibuf,
                              int rank, int size, int *fits)
{
    int err = UTIL_OK;
    const uint64_t e = a->elem_size;
    uint64_t limit = exchange_int_limit(), chunk = exchange_chunk_bytes(a->elem_size);
    uint64_t nreq = chunked_requests(a, chunk, rank, size);
    MPI_Request *req = util_malloc((nreq ? nreq : 1) * sizeof(*req));
    if (req == NULL) {
        err = util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory for %llu requests", rank,
                        (unsigned long long)nreq);
    }
    int agreed[2] = {sent <= limit / e && recvd <= limit / e, req != NULL};
    MPI_Allreduce(MPI_IN_PLACE, agreed, 2, MPI_INT, MPI_MIN, a->comm);
    *fits = agreed[0];
    if (!agreed[1]) {
        err = err != UTIL_OK ? err : UTIL_ENOMEM; /* reported by the rank that failed */
    } else if (*fits) {
        err = alltoallv_ints(a, sdispl, rdispl, ibuf, rank, size);
    } else {
        err = exchange_chunked(a, sdispl, rdispl, chunk, rank, size, req);
    }
    util_free(req);
    return err;
}

/* Stats: what crossed between ranks, the own block excluded. */
static void alltoallv_stats(const struct exchange_args *a, int rank, int size, int fits,
                            struct exchange_stats *st)
{
    const uint64_t e = a->elem_size;
    for (int p = 0; p < size; p++) {
        if (p == rank) {
            continue;
        }
        uint64_t sb = a->send_counts[p] * e;
        st->bytes_sent += sb;
        st->bytes_recv += a->recv_counts[p] * e;
        st->messages += sb > 0;
        st->max_message = sb > st->max_message ? sb : st->max_message;
    }
    st->rounds = 1;
    exchange_stats_extra(st, "chunked", fits ? 0.0 : 1.0);
}

static int alltoallv_run(const struct exchange_args *a)
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

    uint64_t *sdispl = util_malloc(2 * (size_t)size * sizeof(uint64_t));
    int *ibuf = util_malloc(4 * (size_t)size * sizeof(int));
    if (sdispl == NULL || ibuf == NULL) {
        exchange_abort_midway(a->comm, rank, "out of memory for bookkeeping");
    }
    uint64_t *rdispl = sdispl + size;

    uint64_t sent = 0, recvd = 0;
    if ((err = alltoallv_counts(a, rank, size, sdispl, rdispl, &sent, &recvd)) != UTIL_OK) {
        goto fail;
    }
    /* Refused or not, take part (into a buffer thrown away after), so no peer waits. */
    struct exchange_args to = *a;
    int refused = UTIL_OK;
    to.recv = exchange_recv_target(a, recvd, rank, &drain, &refused);
    if (to.recv == NULL) {
        err = refused;
        goto fail;
    }
    a = &to;

    int fits;
    err = alltoallv_elements(a, sdispl, rdispl, sent, recvd, ibuf, rank, size, &fits);
    if (err != UTIL_OK) {
        goto fail;
    }
    alltoallv_stats(a, rank, size, fits, st);
    err = refused;
fail:
    st->seconds = util_now() - t0;
    util_free(drain);
    util_free(sdispl);
    util_free(ibuf);
    return err;
}

/* ---- the models: the two algorithms Open MPI picks from ------------------------------------ */

int exchange_model_at_once(const struct exchange_model_case *c, struct exchange_model_result *r,
                           int skip_empty)
{
    int p = c->p;
    struct exchange_model_rounds w;
    int err = exchange_model_rounds_init(&w, c, r);
    if (err != UTIL_OK) {
        return err;
    }
    w.priced_async = skip_empty;
    if (!c->counts_known) {
        exchange_model_rounds_collective(&w, sizeof(uint64_t)); /* MPI_Alltoall of the counts */
    }
    for (int i = 0; i < p; i++) {
        for (int j = 0; j < p; j++) {
            uint64_t b = c->bytes[(size_t)i * p + j];
            if (i != j && (b > 0 || !skip_empty)) {
                exchange_model_rounds_msg(&w, i, j, b);
            }
            if (i != j && b > 0 && skip_empty) {
                exchange_model_async_xfer(&w.async, i, j, c->alpha + c->beta * (double)b);
            }
        }
    }
    if (p > 1) {
        exchange_model_rounds_close(&w);
    }
    exchange_model_rounds_free(&w);
    r->steps = NAN; /* all messages at once: no schedule of steps to count */
    return UTIL_OK;
}

/* Linear: every rank posts its P-1 messages at once; one round of P-1 start-ups (the empty
 * messages are posted too), then the busiest rank's volume at full bandwidth. */
static int model_linear(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return exchange_model_at_once(c, r, 0);
}

/* Pairwise: Open MPI's shift rounds (Birkeland and Sørevik §3.1), every message sent, empty ones
 * too, so every round synchronises every rank with two others. */
static int model_ompi_pairwise(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return exchange_model_shift_rounds(c, r, 0);
}

/* Equal blocks: one round of P-1 messages of a block each. */
static int equal_linear(const struct exchange_model_equal *e, struct exchange_model_result *r)
{
    uint64_t p = (uint64_t)e->p;
    if (p > 1) {
        exchange_model_equal_rounds(e, 1, p - 1, (p - 1) * e->block, e->block, r);
        exchange_model_equal_extras(e, !e->counts_known, sizeof(uint64_t), 0, 0, r);
    }
    return UTIL_OK;
}

static int equal_ompi_pairwise(const struct exchange_model_equal *e, struct exchange_model_result *r)
{
    if (e->p > 1) {
        exchange_model_equal_extras(e, !e->counts_known, sizeof(uint64_t), 0, 0, r);
    }
    return exchange_model_shift_equal(e, r, 0);
}

static const struct exchange_model model_alltoallv_linear = {
    .name = "alltoallv-linear",
    .summary = "all P-1 messages at once: alpha (P-1) + beta max(sent, received)",
    .duplex = "full",
    .run = model_linear,
    .equal = equal_linear,
};

static const struct exchange_model model_alltoallv_pairwise = {
    .name = "alltoallv-pairwise",
    .summary = "Open MPI's pairwise: P-1 shift rounds (to r+k, from r-k), empty messages sent too",
    .duplex = "full",
    .run = model_ompi_pairwise,
    .equal = equal_ompi_pairwise,
};

static const struct exchange_model *const alltoallv_models[] = {
    &model_alltoallv_linear,
    &model_alltoallv_pairwise,
    NULL,
};

const struct exchange_ops exchange_alltoallv = {
    .name = "alltoallv",
    .summary = "MPI_Alltoall of the counts, then MPI_Alltoallv of the elements (the reference)",
    .run = alltoallv_run,
    .models = alltoallv_models,
};

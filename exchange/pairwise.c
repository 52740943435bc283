/*
 * exchange/pairwise.c: direct exchange in rounds with one partner per round, under two
 * schedules: `pairwise` (the 1-factorization) and `shift` (Open MPI's own pairwise algorithm),
 * kept side by side so that they can be compared on the same code path.
 *
 * pairwise (Sanders and Solis-Oba, section 4.1): the 1-factorization of the complete graph. For odd
 * P there are P rounds; in round i PE j exchanges with (i - j) mod P and idles when that is j. For
 * even P, PEs 0..P-2 do the same with P-1 in place of P and the PE that would idle exchanges with
 * P-1: P-1 rounds, nobody idles. Each round every pair talks both ways at once (one MPI_Sendrecv
 * with the same peer), so a round costs alpha + beta * max(m_jk, m_kj) on a full-duplex link and
 * the P-1 (P) rounds add up to the optimal (P-1) l for a regular instance of pieces of length l (P
 * l for odd P).
 *
 * shift (Birkeland and Sørevik, section 3.1): P-1 rounds; in round i every rank sends to (rank + i)
 * mod P and receives from (rank - i) mod P: two different peers per round, no idle PE.
 *
 * Both: the counts go first by one MPI_Alltoall (the receiver must know each size to receive in
 * place), unless the caller knows them (exchange_args.recv_counts_known); a rank whose receive
 * buffer is too small reports it and still takes part, into a buffer it throws away, so nobody
 * hangs and the usual case pays for no agreement round. The own bucket is a local copy; every other
 * piece moves once, straight from the send buffer to its final place in the receive buffer (no
 * scratch), as bytes in chunks of exchange_chunk_bytes() (whole elements unless an element is
 * larger than the int limit; the chunks land back to back, so it arrives whole). A pair with
 * nothing to send either way skips its round.
 *
 * Synchronous rounds (one blocking MPI_Sendrecv each, the papers' model) let each rank stream
 * to one peer at a time, which pays off for large pieces when every rank has a core of its own.
 * Otherwise (small pieces, or an oversubscribed node: exchange_post_all()) a rank posts all its
 * rounds at once, non-blocking, in the same schedule order. SORTEX_ROUNDS=sync or async
 * overrides the choice (for tests and measurements). Ranks decide alone: every pair meets once
 * per direction, so matching never depends on timing.
 *
 * Cost: (P-1) or P rounds of alpha + beta * (largest piece of the round); every byte moved once.
 */
#include "exchange/exchange.h"

#include <stdlib.h>
#include <string.h>

#include "exchange/bundle.h"
#include "exchange/model.h"
#include "exchange/tags.h"
#include "exchange/topo.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

/* Whether this rank posts all its rounds at once (see above); biggest: its largest piece in
 * bytes. */
static int rounds_async(uint64_t biggest)
{
    uint64_t force = util_knob_u64(UTIL_KNOB_ROUNDS); /* 0: not forced, 1: sync, 2: async */
    if (force != 0) {
        return force == 2;
    }
    return exchange_post_all(biggest);
}

enum round_schedule {
    SCHEDULE_FACTOR, /* the 1-factorization: one peer per round, both directions */
    SCHEDULE_SHIFT,  /* send to rank + i, receive from rank - i */
    SCHEDULE_COUNT
};

static int rounds_run(const struct exchange_args *a, enum round_schedule schedule)
{
    int rank, size, err = UTIL_OK;
    double t0 = util_now();
    struct bundle_io io;
    void *drain = NULL;
    MPI_Comm_rank(a->comm, &rank);
    MPI_Comm_size(a->comm, &size);
    struct exchange_stats *st = a->stats;
    memset(st, 0, sizeof(*st));
    if ((err = exchange_check_args(a, rank)) != UTIL_OK) {
        return err;
    }
    const size_t e = a->elem_size;
    exchange_bundle_init(&io, a->comm, a->threads, e, st);
    uint64_t *sdispl = util_malloc(2 * (size_t)size * sizeof(uint64_t));
    if (sdispl == NULL) {
        exchange_abort_midway(a->comm, rank, "out of memory for bookkeeping");
    }
    uint64_t *rdispl = sdispl + size;

    /* 1. Counts, unless the caller knows them. */
    if (!a->recv_counts_known &&
        MPI_Alltoall(a->send_counts, 1, MPI_UINT64_T, a->recv_counts, 1, MPI_UINT64_T, a->comm) !=
            MPI_SUCCESS) {
        err = util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Alltoall of counts failed", rank);
        goto fail;
    }
    exchange_displs(a->send_counts, size, sdispl);
    uint64_t recvd = exchange_displs(a->recv_counts, size, rdispl), chunk = io.limit;
    /* Refused or not, take part in every round (into a buffer thrown away after). */
    char *recv = exchange_recv_target(a, recvd, rank, &drain, &err);
    const char *send = a->send;
    if (recv == NULL) {
        goto fail;
    }

    /* 2. The rounds, each one MPI_Sendrecv (more only beyond the int limit). */
    int rounds = schedule == SCHEDULE_FACTOR ? topo_factor_rounds(size) : size - 1, chunked = 0;
    uint64_t biggest = 0;
    for (int q = 0; q < size; q++) {
        biggest = a->send_counts[q] > biggest && q != rank ? a->send_counts[q] : biggest;
        biggest = a->recv_counts[q] > biggest && q != rank ? a->recv_counts[q] : biggest;
    }
    int async = rounds_async(biggest * e);
    for (int i = 0; i < rounds && size > 1; i++) {
        int to, from;
        if (schedule == SCHEDULE_FACTOR) {
            to = from = topo_factor_partner(i, rank, size);
            if (to == rank) {
                continue; /* this PE's idle round (odd P) */
            }
        } else {
            to = topo_shift_to(i + 1, rank, size);
            from = topo_shift_from(i + 1, rank, size);
        }
        chunked |= a->send_counts[to] * e > chunk || a->recv_counts[from] * e > chunk;
        int rc = (async ? exchange_bundle_post_pair : exchange_bundle_sendrecv)(
            &io, send + sdispl[to] * e, a->send_counts[to], to, recv + rdispl[from] * e,
            a->recv_counts[from], from, EXCHANGE_TAG_PAIRWISE);
        if (rc != UTIL_OK) {
            err = rc;
            goto fail;
        }
    }
    /* 3. The own bucket, while the posted rounds move. */
    exchange_bundle_copy(recv + rdispl[rank] * e, send + sdispl[rank] * e, a->send_counts[rank] * e,
                         a->threads);
    if (async) {
        int rc = exchange_bundle_wait_recvs(&io);
        rc = rc == UTIL_OK ? exchange_bundle_wait(&io) : rc;
        if (rc != UTIL_OK) {
            err = rc;
            goto fail;
        }
    }
    st->rounds = (uint64_t)(size > 1 ? rounds : 0);
    exchange_stats_extra(st, "chunked", chunked);
fail:
    st->seconds = util_now() - t0;
    exchange_bundle_free(&io);
    util_free(drain);
    util_free(sdispl);
    return err;
}

static int pairwise_run(const struct exchange_args *a)
{
    return rounds_run(a, SCHEDULE_FACTOR);
}

static int shift_run(const struct exchange_args *a)
{
    return rounds_run(a, SCHEDULE_SHIFT);
}

/* ---- the models ------------------------------------------------------------------------------ */

/* Whether the run posts every round at once for case @c (rounds_async() as the model sees it:
 * SORTEX_ROUNDS, else the largest piece and the machine's crowding). */
static int rounds_posted(const struct exchange_model_case *c)
{
    uint64_t force = util_knob_u64(UTIL_KNOB_ROUNDS), largest = 0;
    if (force != 0) {
        return force == 2;
    }
    for (int i = 0; i < c->p; i++) {
        for (int j = 0; j < c->p; j++) {
            largest = i != j ? exchange_model_max(largest, c->bytes[(size_t)i * c->p + j]) : largest;
        }
    }
    return exchange_model_posted(c, largest);
}

/*
 * Shift rounds (Birkeland and Sørevik §3.1, exchange/topo.h): in round k = 1..P-1 rank i sends to i
 * + k and receives from i - k (mod P). Open MPI's pairwise alltoallv (@skip_empty 0) sends every
 * message, empty ones too, so every round synchronises every rank with two others; the shift
 * back-end (@skip_empty 1) sends only non-empty pieces.
 */
int exchange_model_shift_rounds(const struct exchange_model_case *c,
                                struct exchange_model_result *r, int skip_empty)
{
    int p = c->p;
    struct exchange_model_rounds w;
    int err = exchange_model_rounds_init(&w, c, r);
    if (err != UTIL_OK) {
        return err;
    }
    w.priced_async = 1;
    /* The shift back-end posts its rounds at once as exchange_post_all() says; Open MPI's
     * pairwise waits for each. */
    w.posted = skip_empty && rounds_posted(c);
    if (!c->counts_known) {
        exchange_model_rounds_collective(&w, sizeof(uint64_t)); /* MPI_Alltoall of the counts */
    }
    for (int k = 1; k < p; k++) {
        for (int i = 0; i < p; i++) {
            int j = topo_shift_to(k, i, p);
            uint64_t b = c->bytes[(size_t)i * p + j];
            if (b == 0 && skip_empty) {
                continue;
            }
            exchange_model_rounds_msg(&w, i, j, b);
            /* A send-receive: i's message to j is one transfer between the two. */
            exchange_model_async_xfer(&w.async, i, j, c->alpha + c->beta * (double)b);
        }
        for (int i = 0; i < p; i++) {
            exchange_model_async_commit(&w.async, i, topo_shift_to(k, i, p));
        }
        exchange_model_rounds_close(&w);
    }
    exchange_model_rounds_free(&w);
    return UTIL_OK;
}

/* rounds_posted() for equal blocks: the pieces are the block. */
static int equal_posted(const struct exchange_model_equal *e)
{
    uint64_t force = util_knob_u64(UTIL_KNOB_ROUNDS);
    return force != 0 ? force == 2 : exchange_model_equal_posted(e, e->block);
}

int exchange_model_shift_equal(const struct exchange_model_equal *e,
                               struct exchange_model_result *r, int skip_empty)
{
    if (e->p > 1 && (e->block > 0 || !skip_empty)) {
        uint64_t rounds = (uint64_t)e->p - 1;
        exchange_model_equal_rounds(e, rounds, 1, e->block, e->block, r);
        /* Rounds posted at once synchronise once (exchange_model_shift_rounds()). */
        if (skip_empty && equal_posted(e)) {
            r->sync_rounds -= (double)(rounds - 1);
        }
    }
    return UTIL_OK;
}

static int equal_shift(const struct exchange_model_equal *e, struct exchange_model_result *r)
{
    if (e->p > 1) {
        exchange_model_equal_extras(e, !e->counts_known, sizeof(uint64_t), 0, 0, r);
    }
    return exchange_model_shift_equal(e, r, 1);
}

/* Equal blocks: every 1-factor round swaps one block between partners; with odd P each rank
 * idles in one of the P rounds, so it sends P-1 blocks in all. */
static int equal_factor(const struct exchange_model_equal *e, struct exchange_model_result *r)
{
    if (e->p > 1 && e->block > 0) {
        uint64_t p = (uint64_t)e->p, rounds = (uint64_t)topo_factor_rounds(e->p);
        r->rounds += rounds;
        r->startups += p - 1;
        r->seconds += (double)rounds * (e->alpha + e->beta * (double)e->block);
        r->bytes_moved += p * (p - 1) * e->block;
        r->max_message = exchange_model_max(r->max_message, e->block);
        /* The critical path: a block a busy rank a round; with odd P one rank idles. */
        struct exchange_model_result x = {0};
        uint64_t eager = exchange_model_equal_eager(e);
        exchange_model_equal_units(e, (double)rounds, 1, eager > 0 && e->block > eager,
                                   (double)e->block, (double)(p - (p % 2)), &x);
        r->path_startups += x.path_startups;
        r->path_rndv += x.path_rndv;
        r->path_bytes += x.path_bytes;
        r->sync_rounds += equal_posted(e) ? 1 : x.sync_rounds;
    }
    if (e->p > 1) {
        exchange_model_equal_extras(e, !e->counts_known, sizeof(uint64_t), 0, 0, r);
    }
    return UTIL_OK;
}

static int model_shift(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return exchange_model_shift_rounds(c, r, 1);
}

/* 1-factor pairwise (Sanders and Solis-Oba §4.1, exchange/topo.h): P-1 rounds for even P, P for odd
 * P; partners swap both ways in one send-receive, an empty side sends nothing, and a pair with
 * nothing either way skips its round (as the pairwise back-end does). */
static int model_factor(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    int p = c->p, nrounds = p == 1 ? 0 : topo_factor_rounds(p);
    struct exchange_model_rounds w;
    int err = exchange_model_rounds_init(&w, c, r);
    if (err != UTIL_OK) {
        return err;
    }
    w.priced_async = 1;
    w.posted = rounds_posted(c);
    if (!c->counts_known && p > 1) {
        exchange_model_rounds_collective(&w, sizeof(uint64_t)); /* MPI_Alltoall of the counts */
    }
    for (int i = 0; i < nrounds; i++) {
        for (int j = 0; j < p; j++) {
            int q = topo_factor_partner(i, j, p);
            uint64_t out = c->bytes[(size_t)j * p + q], in = c->bytes[(size_t)q * p + j];
            if (q == j || out + in == 0) {
                continue; /* idle, or a pair with nothing either way */
            }
            if (out > 0) {
                exchange_model_rounds_msg(&w, j, q, out);
            }
            if (j < q) { /* one swap per pair, as long as the larger direction */
                double cost = c->alpha + c->beta * (double)exchange_model_max(out, in);
                exchange_model_async_xfer(&w.async, j, q, cost);
            }
        }
        for (int j = 0; j < p; j++) {
            exchange_model_async_commit(&w.async, j, topo_factor_partner(i, j, p));
        }
        exchange_model_rounds_close(&w);
    }
    exchange_model_rounds_free(&w);
    return UTIL_OK;
}

static const struct exchange_model model_pairwise = {
    .name = "pairwise",
    .summary = "1-factor rounds (P-1, P for odd P), partners swap: alpha + beta (largest message) "
               "each",
    .duplex = "full",
    .run = model_factor,
    .equal = equal_factor,
};

static const struct exchange_model model_shift_rounds = {
    .name = "shift",
    .summary = "P-1 shift rounds (to r+k, from r-k), non-empty pieces only: alpha + beta (largest)",
    .duplex = "full",
    .run = model_shift,
    .equal = equal_shift,
};

static const struct exchange_model *const pairwise_models[] = {&model_pairwise, NULL};
static const struct exchange_model *const shift_models[] = {&model_shift_rounds, NULL};

const struct exchange_ops exchange_pairwise = {
    .name = "pairwise",
    .summary = "1-factor rounds, one MPI_Sendrecv with one peer each (P-1 rounds, P for odd P)",
    .run = pairwise_run,
    .models = pairwise_models,
};

const struct exchange_ops exchange_shift = {
    .name = "shift",
    .summary = "P-1 rounds sending to rank+i, receiving from rank-i (Open MPI's pairwise)",
    .run = shift_run,
    .models = shift_models,
};

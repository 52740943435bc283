/*
 * exchange/scheduled.c: back-ends `direct`, `forward` and `fullduplex`: the exchange as an
 * explicitly scheduled h-relation (seed 004, Sanders and Solis-Oba, "How helpers hasten
 * h-relations"), executed with point-to-point MPI on slices of the real key buffers.
 *
 * Scheme: the counts are all-gathered, so every rank knows the whole P x P matrix; every rank
 * then computes the same schedule deterministically (exchange/sched.h: direct §2.1 in
 * <= 3 ceil(h/2) steps, forwarding §2.2-2.4 in <= 6/5 (h+1) steps for even P, full-duplex
 * bipartite colouring in max(send, receive) steps) and walks its own transfers in step order.
 * A packet is a fixed number of bytes chosen from the data (exchange_sched_packet_bytes(): h is
 * about 256 packets, packets at least 64 KiB); messages need not be multiples of it (the last
 * packet is short). Forwarded pieces pass through a small buffer on the helping rank.
 *
 * Why walking the transfers in step order cannot deadlock: take the pending transfer in the
 * earliest step; every earlier transfer of its two ranks is complete, so both have it as their
 * next one and it completes. Within a step a rank posts all its transfers (one in half-duplex,
 * a send and a receive in full-duplex) non-blocking; it waits for a step only when the
 * look-ahead's number of younger steps are posted, or before a forwarding step. A rank that
 * waits has posted everything up to the step it waits in, and waits only for transfers of that
 * step or earlier ones, so both ranks of the earliest pending transfer have posted it and the
 * argument is unchanged, whatever the look-ahead.
 *
 * Cost: one all-gather of P^2 counts, the schedule computation on every rank (measured in the
 * stats as schedule_seconds), and one message per transfer. On one node every forwarded byte
 * is an extra memory copy; the schedules pay off where links, not memory, are the bottleneck.
 */
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "exchange/sched.h"
#include "exchange/tags.h"
#include "util/alloc.h"
#include "util/util.h"

/*
 * Steps a rank may have in flight. The schedule's steps are half-duplex (or one send and one
 * receive); with the next step already posted, a full-duplex link carries both directions at
 * once, as real networks do. Transfers still start in step order on every rank, so the
 * deadlock argument above holds for the earliest unfinished step. Steps that forward run
 * alone: they fill and drain the one forwarding buffer. With small pieces or an oversubscribed
 * node (exchange_post_all()) every step is posted at once instead (measured at P = 8 on 2
 * cores, 1 KiB per pair: direct 1.8-2.0x alltoallv with 2 steps in flight, 1.4x with 8).
 */
#define SCHED_LOOKAHEAD 2
/* The most steps SORTEX_SCHED_LOOKAHEAD may ask for. */
#define SCHED_LOOKAHEAD_MAX 8

/*
 * Steps in flight: SORTEX_SCHED_LOOKAHEAD=1..8 for measurements, else all of them (0) when
 * exchange_post_all(@largest) says so, else SCHED_LOOKAHEAD. With 1 every step completes
 * before the next starts, which is the paper's model executed literally: on half-duplex links
 * (tests/cluster: --duplex half) the schedules' step counts then become their times, so
 * forward against direct can be measured where the theorems apply. Ranks may differ.
 */
static int lookahead(uint64_t largest)
{
    const char *env = getenv("SORTEX_SCHED_LOOKAHEAD");
    long v = 0;
    if (env != NULL && util_parse_int(env, 1, SCHED_LOOKAHEAD_MAX, &v) == UTIL_OK) {
        return (int)v;
    }
    return exchange_post_all(largest) ? 0 : SCHED_LOOKAHEAD;
}

/* Bytes in one MPI call: the int limit in keys, as bytes, and never above INT_MAX. */
static uint64_t chunk_bytes(void)
{
    uint64_t keys = exchange_int_limit();
    uint64_t b = keys * sizeof(uint64_t);
    return b > 2147483640ULL ? 2147483640ULL : b;
}

/* Posts one piece as non-blocking messages of at most chunk_bytes() each. */
static int post_piece(char *buf, uint64_t bytes, int peer, int is_send, MPI_Comm comm,
                      MPI_Request **req, int *nreq, int *capreq)
{
    uint64_t chunk = chunk_bytes();
    for (uint64_t off = 0; off < bytes; off += chunk) {
        uint64_t c = bytes - off < chunk ? bytes - off : chunk;
        if (*nreq == *capreq) {
            int ncap = *capreq * 2;
            MPI_Request *r = util_realloc(*req, (size_t)ncap * sizeof(MPI_Request));
            if (r == NULL) {
                int rank;
                MPI_Comm_rank(comm, &rank);
                exchange_abort_midway(comm, rank, "out of memory for requests");
            }
            *req = r;
            *capreq = ncap;
        }
        int rc = is_send ? MPI_Isend(buf + off, (int)c, MPI_BYTE, peer, EXCHANGE_TAG_SCHEDULE,
                                     comm, &(*req)[*nreq])
                         : MPI_Irecv(buf + off, (int)c, MPI_BYTE, peer, EXCHANGE_TAG_SCHEDULE,
                                     comm, &(*req)[*nreq]);
        if (rc != MPI_SUCCESS) {
            return UTIL_EMPI;
        }
        (*nreq)++;
    }
    return UTIL_OK;
}

/* Waits for the @steps oldest of the *@inflight posted steps (their requests end at bound[]),
 * and moves the younger steps' requests to the front. */
static int wait_oldest(int steps, int *bound, int *inflight, MPI_Request *req, int *nreq)
{
    int upto = bound[steps - 1];
    if (upto > 0 && MPI_Waitall(upto, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
        return UTIL_EMPI;
    }
    memmove(req, req + upto, (size_t)(*nreq - upto) * sizeof(*req));
    *nreq -= upto;
    for (int i = steps; i < *inflight; i++) {
        bound[i - steps] = bound[i] - upto;
    }
    *inflight -= steps;
    return UTIL_OK;
}

static int scheduled_run(const struct exchange_args *a, const char *algo_name)
{
    int rank, p, err = UTIL_OK;
    double t0 = util_now();
    MPI_Comm_rank(a->comm, &rank);
    MPI_Comm_size(a->comm, &p);
    struct exchange_stats *st = a->stats;
    memset(st, 0, sizeof(*st));
    const struct exchange_sched_algo *algo = exchange_sched_lookup(algo_name);
    struct exchange_sched *s = NULL;
    char *fwd = NULL;
    uint64_t *drain = NULL;
    int capreq = 8, nreq = 0;
    MPI_Request *req = util_malloc((size_t)capreq * sizeof(MPI_Request));
    uint64_t *keys = util_malloc((size_t)p * p * sizeof(uint64_t));
    uint64_t *pk = util_malloc((size_t)p * p * sizeof(uint64_t));
    uint64_t *displ = util_malloc(2 * (size_t)p * sizeof(uint64_t));
    if (algo == NULL) {
        err = util_fail(UTIL_EUSAGE, "rank %d: exchange: no schedule named %s", rank, algo_name);
        goto fail;
    }
    if (req == NULL || keys == NULL || pk == NULL || displ == NULL) {
        exchange_abort_midway(a->comm, rank, "out of memory for bookkeeping");
    }
    uint64_t *sdispl = displ, *rdispl = displ + p;

    /* 1. Every rank learns the whole matrix of counts (keys). */
    if (MPI_Allgather(a->send_counts, p, MPI_UINT64_T, keys, p, MPI_UINT64_T, a->comm) !=
        MPI_SUCCESS) {
        err = util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Allgather of counts failed", rank);
        goto fail;
    }
    for (int i = 0; i < p; i++) {
        a->recv_counts[i] = keys[(size_t)i * p + rank];
    }
    exchange_displs(a->send_counts, p, sdispl);
    /* Refused or not, walk the schedule (into a buffer thrown away after), so no peer waits. */
    int refused = UTIL_OK;
    uint64_t *recv = exchange_recv_target(a, exchange_displs(a->recv_counts, p, rdispl), rank,
                                          &drain, &refused);
    if (recv == NULL) {
        err = refused;
        goto fail;
    }

    /* 2. The same schedule on every rank, on the matrix in packets. */
    double ts = util_now();
    uint64_t psize = exchange_sched_packet_bytes(p, keys, sizeof(uint64_t));
    for (size_t k = 0; k < (size_t)p * p; k++) {
        pk[k] = exchange_sched_packets(keys[k] * sizeof(uint64_t), psize);
    }
    for (int i = 0; i < p; i++) {
        pk[(size_t)i * p + i] = 0;
    }
    /* Every rank builds the same schedule from the same matrix, so any failure but memory
     * happens on all of them alone; without memory, peers would wait for this rank's transfers. */
    if ((err = algo->build(p, pk, &s)) == UTIL_ENOMEM) {
        exchange_abort_midway(a->comm, rank, "out of memory for the schedule");
    }
    if (err != UTIL_OK) {
        err = util_fail(err, "rank %d: exchange: building the %s schedule failed", rank,
                        algo_name);
        goto fail;
    }
    double sched_seconds = util_now() - ts;
    uint64_t fwd_bytes = (s->fwd_units_max * psize + 4) / 5 + sizeof(uint64_t);
    fwd = util_malloc(fwd_bytes);
    if (fwd == NULL) {
        exchange_abort_midway(a->comm, rank, "out of memory for the forwarding buffer");
    }

    /* 3. The own bucket is a local copy. */
    memcpy(recv + rdispl[rank], a->send + sdispl[rank],
           a->send_counts[rank] * sizeof(uint64_t));

    /* 4. Walk this rank's transfers in step order, up to `window` steps in flight. */
    const char *sendb = (const char *)a->send;
    char *recvb = (char *)recv;
    uint64_t first = s->rank_begin[rank], end = s->rank_begin[rank + 1];
    uint64_t largest = 0; /* this rank's largest piece, sent or received, in bytes */
    for (int q = 0; q < p; q++) {
        uint64_t out = keys[(size_t)rank * p + q], in = keys[(size_t)q * p + rank];
        largest = q != rank && out > largest ? out : largest;
        largest = q != rank && in > largest ? in : largest;
    }
    /* With every step in flight (window 0) the posted steps count as one group in bound[0]. */
    int window = lookahead(largest * sizeof(uint64_t));
    int inflight = 0, bound[SCHED_LOOKAHEAD_MAX]; /* steps posted, not waited; their req ends */
    for (uint64_t k = first; k < end && err == UTIL_OK;) {
        uint64_t step = s->xfers[s->rank_xfers[k]].step;
        /* A step that forwards reads or fills the one forwarding buffer: it runs alone. */
        int forwards = 0;
        for (uint64_t q = k; q < end && s->xfers[s->rank_xfers[q]].step == step; q++) {
            forwards |= s->xfers[s->rank_xfers[q]].hop != EXCHANGE_SCHED_DIRECT;
        }
        if ((forwards && inflight > 0) || (window > 0 && inflight == window)) {
            err = wait_oldest(forwards ? inflight : 1, bound, &inflight, req, &nreq);
            if (err != UTIL_OK) {
                break;
            }
        }
        for (; k < end && s->xfers[s->rank_xfers[k]].step == step && err == UTIL_OK; k++) {
            const struct exchange_sched_xfer *x = &s->xfers[s->rank_xfers[k]];
            uint64_t msg_keys = keys[(size_t)x->msg_src * p + x->msg_dst];
            uint64_t boff, blen;
            exchange_sched_bytes(msg_keys * sizeof(uint64_t), psize, x->off, x->len, &boff, &blen);
            if (blen == 0) {
                continue; /* a piece past the end of a short last packet */
            }
            char *buf;
            int is_send = x->src == (uint32_t)rank;
            if (is_send) {
                buf = x->hop == EXCHANGE_SCHED_HOP2
                          ? fwd
                          : (char *)(sendb + sdispl[x->msg_dst] * sizeof(uint64_t) + boff);
                st->bytes_sent += blen;
                st->messages++;
                st->max_message = blen > st->max_message ? blen : st->max_message;
            } else {
                buf = x->hop == EXCHANGE_SCHED_HOP1
                          ? fwd
                          : recvb + rdispl[x->msg_src] * sizeof(uint64_t) + boff;
                st->bytes_recv += blen; /* forwarded pieces included, like bytes_sent */
            }
            err = post_piece(buf, blen, is_send ? (int)x->dst : (int)x->src, is_send, a->comm,
                             &req, &nreq, &capreq);
        }
        if (window == 0 && inflight > 0) {
            bound[0] = nreq;
        } else {
            bound[inflight++] = nreq;
        }
        if (err == UTIL_OK && forwards) {
            err = wait_oldest(inflight, bound, &inflight, req, &nreq);
        }
    }
    if (err == UTIL_OK && inflight > 0) {
        err = wait_oldest(inflight, bound, &inflight, req, &nreq);
    }
    if (err != UTIL_OK) {
        err = util_fail(err, "rank %d: exchange: %s step failed", rank, algo_name);
        goto fail;
    }

    /* Stats: the schedule's length in packet steps beside h and the theorem's bound. */
    uint64_t h, smax, rmax;
    exchange_sched_degrees(p, pk, &h, &smax, &rmax);
    double steps = (double)s->length / EXCHANGE_SCHED_UNITS;
    st->rounds = s->nsteps;
    exchange_stats_extra(st, "packet_bytes", (double)psize);
    exchange_stats_extra(st, "h_packets", (double)h);
    exchange_stats_extra(st, "steps", steps);
    exchange_stats_extra(st, "steps_per_h", h ? steps / (double)h : 0.0);
    exchange_stats_extra(st, "bound_steps", algo->bound(p, h, smax, rmax));
    exchange_stats_extra(st, "schedule_seconds", sched_seconds);
    err = refused;
fail:
    st->seconds = util_now() - t0;
    exchange_sched_free(s);
    util_free(fwd);
    util_free(drain);
    util_free(req);
    util_free(keys);
    util_free(pk);
    util_free(displ);
    return err;
}

static int direct_run(const struct exchange_args *a)
{
    return scheduled_run(a, "direct");
}

static int forward_run(const struct exchange_args *a)
{
    return scheduled_run(a, "forward");
}

static int fullduplex_run(const struct exchange_args *a)
{
    return scheduled_run(a, "fullduplex");
}

const struct exchange_ops exchange_direct = {
    .name = "direct",
    .summary = "half-duplex h-relation schedule, direct delivery, <= 3 ceil(h/2) steps (seed 004 2.1)",
    .run = direct_run,
};

const struct exchange_ops exchange_forward = {
    .name = "forward",
    .summary = "half-duplex h-relation schedule with forwarding, ~6/5 (h+1) steps (seed 004 2.2-2.4)",
    .run = forward_run,
};

const struct exchange_ops exchange_fullduplex = {
    .name = "fullduplex",
    .summary = "full-duplex schedule by bipartite edge colouring, max(send, recv) steps",
    .run = fullduplex_run,
};

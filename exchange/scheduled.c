/*
 * exchange/scheduled.c: back-ends `direct`, `forward` and `fullduplex`: the exchange as an
 * explicitly scheduled h-relation (Sanders and Solis-Oba, "How helpers hasten h-relations",
 * [SS01] in the README), executed with point-to-point MPI on slices of the real element buffers.
 *
 * Scheme: the counts are all-gathered, so every rank knows the whole P x P matrix; every rank
 * then computes the same schedule deterministically (exchange/sched.h: direct §2.1 in
 * <= 3 ceil(h/2) steps, forwarding §2.2-2.4 in <= 6/5 (h+1) steps for even P, full-duplex
 * bipartite colouring in max(send, receive) steps) and walks its own transfers in step order.
 * A packet is a fixed number of bytes chosen from the data (exchange_sched_packet_bytes(): h is
 * about 32 packets for direct and fullduplex, 8 for forward, whose pieces are fifths; packets at
 * least 64 KiB); messages need not be multiples of it (the last packet is short). Packets never
 * split an element: their size is a multiple of five elements (exchange_sched_quantum()), so
 * every fifth of a packet, the smallest piece a schedule moves, is whole elements, and a message
 * of whole elements ends on an element too. Forwarded pieces pass through a ring buffer on the
 * helping rank (exchange/fwd_ring.h). A piece longer than the int limit travels in chunks
 * (exchange_post_piece()), which land back to back and so put any element cut between two of
 * them (only under a lowered SORTEX_INT_LIMIT below the element size) together again exactly.
 *
 * Why walking the transfers in step order cannot deadlock. Within a step a rank posts its
 * transfers (one in half-duplex, a send and a receive in full-duplex) non-blocking, in the
 * schedule's order, so every pair of ranks posts its messages to each other in the same order
 * on both sides and they match whatever the timing (the second hops of forwarded pieces, which
 * may leave late, have a tag of their own and keep their order: the ring's FIFO). A rank blocks
 * only for transfers of steps before the one it is posting: the oldest step, when the
 * look-ahead's number of younger steps are posted; a piece's first hop, before its second;
 * the oldest piece, when the forwarding ring is full; and, once everything is posted, the
 * rest. A second hop left pending is posted as soon as its first hop is in, at the latest when
 * the rank next blocks. Now take the earliest step T with an unfinished transfer: every earlier
 * transfer is complete, so no rank is blocked short of posting its part of step T; both ranks
 * of each transfer of step T post it, and it completes. By induction every step does, whatever
 * the look-ahead (ranks may even choose different ones).
 *
 * Joined pieces. Where both ranks of a direct transfer have nothing else between it and their
 * next transfer, and that next one continues the same piece between the same two ranks
 * (exchange_sched_joins()), the rank sends or receives both as one message: fewer start-ups
 * (forward at P = 7, the sort's uniform matrix, 16 MiB per rank: 194 messages instead of 262)
 * and no change of order on either side, so the argument above holds with the joined piece
 * placed in the earlier step.
 * Every rank must join the same pieces, so whether to join (SORTEX_SCHED_JOIN=0 turns it off,
 * for measurements) travels with the counts and holds only if every rank says so.
 *
 * Packet size. h is cut into the algorithm's target_h packets (exchange/sched.h says why 32 for
 * direct and fullduplex and 8 for forward); SORTEX_SCHED_TARGET_H=H (1 to
 * EXCHANGE_SCHED_TARGET_H_MAX) sets another, for links where another serves better (sortex-sched
 * --target-h models it). Every rank must build the same schedule, so it travels with the counts
 * too, and rank 0's value holds.
 *
 * Cost: one all-gather of P^2 counts, the schedule computation on every rank (measured in the
 * stats as schedule_seconds), and one message per transfer or run of joined ones. On one node
 * every forwarded byte is an extra memory copy; the schedules pay off where links, not memory,
 * are the bottleneck.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "exchange/fwd_ring.h"
#include "exchange/model.h"
#include "exchange/sched.h"
#include "exchange/tags.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

/* What tells the three back-ends apart: the scheduling algorithm, and the number of packets
 * their run cuts h into when the data picks the packet size (exchange/sched.h says why 32 for
 * direct and fullduplex and 8 for forward). Their runs and their models both read it. */
struct sched_backend {
    const struct exchange_sched_algo *algo;
    uint64_t target_h;
};

static const struct sched_backend backend_direct = {&exchange_sched_algo_direct,
                                                    EXCHANGE_SCHED_TARGET_H};
static const struct sched_backend backend_forward = {&exchange_sched_algo_forward,
                                                     EXCHANGE_SCHED_TARGET_H_FORWARD};
static const struct sched_backend backend_fullduplex = {&exchange_sched_algo_fullduplex,
                                                        EXCHANGE_SCHED_TARGET_H};

/*
 * Steps a rank may have in flight. The schedule's steps are half-duplex (or one send and one
 * receive); with the next step already posted, a full-duplex link carries both directions at
 * once, as real networks do. Transfers still start in step order on every rank, so the
 * deadlock argument above holds for the earliest unfinished step. With small pieces or an
 * oversubscribed node (exchange_post_all()) every step is posted at once instead, as measured
 * faster there.
 */
#define SCHED_LOOKAHEAD 2
/* The most steps SORTEX_SCHED_LOOKAHEAD may ask for (its range in util/knobs.c). */
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
    uint64_t v = util_knob_u64(UTIL_KNOB_SCHED_LOOKAHEAD); /* 0: not set */
    if (v > 0) {
        return (int)v;
    }
    return exchange_post_all(largest) ? 0 : SCHED_LOOKAHEAD;
}

/* The target h this rank asks for: SORTEX_SCHED_TARGET_H, 0 when unset or empty (the
 * algorithm's own), UINT64_MAX when it is not a number from 1 to EXCHANGE_SCHED_TARGET_H_MAX. */
static uint64_t target_h_asked(void)
{
    const struct util_knob_value *v = util_knob(UTIL_KNOB_SCHED_TARGET_H);
    return !v->set ? 0 : v->valid ? v->value : UINT64_MAX;
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

/* The bytes of transfer @x: *@off within its message, *@len (0 for a piece past the end of a
 * short last packet). counts: the count matrix in elements of @elem bytes; psize: the packet
 * size. */
static void xfer_bytes(const struct exchange_sched_xfer *x, const uint64_t *counts, int p,
                       uint64_t elem, uint64_t psize, uint64_t *off, uint64_t *len)
{
    uint64_t msg = counts[(size_t)x->msg_src * p + x->msg_dst];
    exchange_sched_bytes(msg * elem, psize, x->off, x->len, off, len);
}

/* One scheduled exchange on this rank, carried from step to step of scheduled_run(). */
struct sched_run {
    const struct exchange_args *a;
    const struct sched_backend *be;
    int rank, p;
    uint64_t elem;             /* bytes per element */
    uint64_t *counts;          /* [p (p + 2)]: every rank's row, then packed to the p x p counts */
    uint64_t *row;             /* [p + 2]: this rank's counts, joining, target h */
    uint64_t *pk;              /* [p p]: the counts in packets, diagonal 0 */
    uint64_t *sdispl, *rdispl; /* [p] each */
    char *recv;                /* where the elements land */
    void *drain;               /* a refused buffer's stand-in */
    int refused;               /* UTIL_EUSAGE when the receive buffer was too small */
    int joining;               /* every rank joins pieces that run on */
    uint64_t target_h, psize;  /* packets h is cut into; the packet size in bytes */
    struct exchange_sched *s;
    uint8_t *join;             /* [s->nxfers]: exchange_sched_joins() */
    double sched_seconds;
    struct exchange_fwd_ring ring;
    MPI_Request *req; /* the direct pieces' requests in flight */
    int nreq, capreq;
    uint64_t joined; /* pieces this rank sent or received with the one before them */
};

/*
 * Step 1: every rank learns the whole matrix of counts (elements), whether every rank joins
 * pieces, and rank 0's target h (two more words in each rank's row; the rows are then packed to
 * p x p), and where its elements land. Returns 0 or an error agreed by every rank (a bad target h:
 * rank 0 says why) or UTIL_EMPI.
 */
static int run_gather(struct sched_run *r)
{
    const struct exchange_args *a = r->a;
    int p = r->p;
    const size_t rowlen = (size_t)p + 2;
    memcpy(r->row, a->send_counts, (size_t)p * sizeof(uint64_t));
    r->row[p] = util_knob_u64(UTIL_KNOB_SCHED_JOIN) != 0;
    r->row[p + 1] = target_h_asked();
    if (MPI_Allgather(r->row, (int)rowlen, MPI_UINT64_T, r->counts, (int)rowlen, MPI_UINT64_T,
                      a->comm) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Allgather of counts failed", r->rank);
    }
    /* Every rank sees rank 0's word, so all of them stop here, before any transfer, or none;
     * rank 0 says why. */
    if (r->counts[p + 1] == UINT64_MAX) {
        return r->rank != 0 ? UTIL_EUSAGE
                            : util_fail(UTIL_EUSAGE,
                                        "rank 0: exchange: SORTEX_SCHED_TARGET_H must be an "
                                        "integer from 1 to %d (%s)",
                                        EXCHANGE_SCHED_TARGET_H_MAX,
                                        util_knob(UTIL_KNOB_SCHED_TARGET_H)->text);
    }
    r->joining = 1;
    r->target_h = r->counts[p + 1] > 0 ? r->counts[p + 1] : r->be->target_h;
    for (int i = 0; i < p; i++) {
        r->joining &= r->counts[i * rowlen + p] != 0;
        memmove(r->counts + (size_t)i * p, r->counts + i * rowlen, (size_t)p * sizeof(uint64_t));
    }
    for (int i = 0; i < p; i++) {
        a->recv_counts[i] = r->counts[(size_t)i * p + r->rank];
    }
    exchange_displs(a->send_counts, p, r->sdispl);
    /* Refused or not, walk the schedule (into a buffer thrown away after), so no peer waits. */
    r->recv = exchange_recv_target(a, exchange_displs(a->recv_counts, p, r->rdispl), r->rank,
                                   &r->drain, &r->refused);
    return UTIL_OK;
}

/*
 * Step 2: the same schedule on every rank, on the matrix in packets, the pieces to join, and
 * the forwarding ring for what this rank forwards. Every rank builds the same schedule from the
 * same matrix, so any failure but memory happens on all of them alike; without memory, peers
 * would wait for this rank's transfers, so the job is aborted.
 */
static int run_schedule(struct sched_run *r)
{
    int p = r->p, rank = r->rank, err;
    MPI_Comm comm = r->a->comm;
    double ts = util_now();
    r->psize = exchange_sched_packet_bytes(p, r->counts, r->elem, r->elem, r->target_h);
    for (size_t k = 0; k < (size_t)p * p; k++) {
        r->pk[k] = exchange_sched_packets(r->counts[k] * r->elem, r->psize);
    }
    for (int i = 0; i < p; i++) {
        r->pk[(size_t)i * p + i] = 0;
    }
    if ((err = r->be->algo->build(p, r->pk, &r->s)) == UTIL_ENOMEM) {
        exchange_abort_midway(comm, rank, "out of memory for the schedule");
    }
    if (err != UTIL_OK) {
        return util_fail(err, "rank %d: exchange: building the %s schedule failed", rank,
                         r->be->algo->name);
    }
    const struct exchange_sched *s = r->s;
    r->join = util_calloc(s->nxfers ? s->nxfers : 1, 1);
    if (r->join == NULL || (r->joining && exchange_sched_joins(s, r->join) != UTIL_OK)) {
        exchange_abort_midway(comm, rank, "out of memory for the schedule");
    }
    r->sched_seconds = util_now() - ts;
    /* The ring: room for this rank's largest forwarded piece, and for all of them if they fit. */
    uint64_t total = 0, most = 0, off, len;
    for (uint64_t k = s->rank_begin[rank]; k < s->rank_begin[rank + 1]; k++) {
        const struct exchange_sched_xfer *x = &s->xfers[s->rank_xfers[k]];
        if (x->hop == EXCHANGE_SCHED_HOP1 && x->dst == (uint32_t)rank) {
            xfer_bytes(x, r->counts, p, r->elem, r->psize, &off, &len);
            total += len;
            most = len > most ? len : most;
        }
    }
    if (exchange_fwd_ring_init(&r->ring, total, most, r->elem, comm, r->be) != UTIL_OK) {
        exchange_abort_midway(comm, rank, "out of memory for the forwarding buffer");
    }
    return UTIL_OK;
}

/* Posts one transfer @x of @bytes from byte @off of its message (joined pieces included):
 * direct pieces from the send buffer or into the receive buffer, forwarded ones into and out
 * of the ring. @window: the steps in flight (0: all). Returns 0 or UTIL_EMPI. */
static int run_post(struct sched_run *r, const struct exchange_sched_xfer *x, uint64_t off,
                    uint64_t bytes, int window)
{
    struct exchange_stats *st = r->a->stats;
    int is_send = x->src == (uint32_t)r->rank;
    int peer = is_send ? (int)x->dst : (int)x->src;
    if (is_send) {
        st->bytes_sent += bytes;
        st->messages++;
        st->max_message = bytes > st->max_message ? bytes : st->max_message;
    } else {
        st->bytes_recv += bytes; /* forwarded pieces included, like bytes_sent */
    }
    if (x->hop == EXCHANGE_SCHED_HOP1 && !is_send) {
        /* A piece to forward comes in: into its own place in the ring. */
        return exchange_fwd_ring_recv(&r->ring, bytes, peer, EXCHANGE_TAG_SCHEDULE);
    }
    if (x->hop == EXCHANGE_SCHED_HOP2 && is_send) {
        /* Its second hop: the newest piece of the ring, sent at its place in the walk when
         * steps are waited for, else as soon as its first hop is in. */
        exchange_fwd_ring_due(&r->ring, bytes, peer);
        return window > 0 ? exchange_fwd_ring_send(&r->ring, 1) : UTIL_OK;
    }
    int tag = x->hop == EXCHANGE_SCHED_HOP2 ? EXCHANGE_TAG_SCHEDULE_FWD : EXCHANGE_TAG_SCHEDULE;
    char *buf = is_send ? (char *)r->a->send + r->sdispl[x->msg_dst] * r->elem + off
                        : r->recv + r->rdispl[x->msg_src] * r->elem + off;
    return exchange_post_piece(buf, bytes, r->elem, peer, is_send, tag, r->a->comm, &r->req,
                               &r->nreq, &r->capreq);
}

/*
 * Step 3: the own bucket as a local copy, then this rank's transfers in step order, up to
 * `window` steps in flight (see lookahead()), and everything waited for. Returns 0 or
 * UTIL_EMPI after one error line.
 */
static int run_walk(struct sched_run *r)
{
    const struct exchange_args *a = r->a;
    const struct exchange_sched *s = r->s;
    int p = r->p, rank = r->rank, err = UTIL_OK;
    util_copy(r->recv + r->rdispl[rank] * r->elem,
              (const char *)a->send + r->sdispl[rank] * r->elem, a->send_counts[rank] * r->elem);
    uint64_t first = s->rank_begin[rank], end = s->rank_begin[rank + 1];
    uint64_t largest = 0; /* this rank's largest piece, sent or received, in bytes */
    for (int q = 0; q < p; q++) {
        uint64_t out = r->counts[(size_t)rank * p + q], in = r->counts[(size_t)q * p + rank];
        largest = q != rank && out > largest ? out : largest;
        largest = q != rank && in > largest ? in : largest;
    }
    /* With every step in flight (window 0) the posted steps count as one group in bound[0]. */
    int window = lookahead(largest * r->elem);
    int inflight = 0, bound[SCHED_LOOKAHEAD_MAX]; /* steps posted, not waited; their req ends */
    for (uint64_t k = first; k < end && err == UTIL_OK;) {
        uint64_t step = s->xfers[s->rank_xfers[k]].step;
        if (window > 0 && inflight == window &&
            (err = wait_oldest(1, bound, &inflight, r->req, &r->nreq)) != UTIL_OK) {
            break;
        }
        for (; k < end && s->xfers[s->rank_xfers[k]].step == step && err == UTIL_OK; k++) {
            const struct exchange_sched_xfer *x = &s->xfers[s->rank_xfers[k]];
            uint64_t boff, blen, end_byte;
            xfer_bytes(x, r->counts, p, r->elem, r->psize, &boff, &blen);
            /* Pieces that run on into the next ones (exchange_sched_joins()) go as one. */
            for (end_byte = boff + blen; r->join[s->rank_xfers[k]]; k++) {
                uint64_t noff, nlen;
                xfer_bytes(&s->xfers[s->rank_xfers[k + 1]], r->counts, p, r->elem, r->psize, &noff,
                           &nlen);
                end_byte = noff + nlen > end_byte ? noff + nlen : end_byte;
                r->joined++;
            }
            /* A piece past the end of a short last packet (both hops) is not sent. */
            err = end_byte > boff ? run_post(r, x, boff, end_byte - boff, window) : UTIL_OK;
        }
        if (window == 0 && inflight > 0) {
            bound[0] = r->nreq;
        } else {
            bound[inflight++] = r->nreq;
        }
        /* Second hops whose first hop is in leave now. */
        if (err == UTIL_OK && exchange_fwd_ring_pending(&r->ring)) {
            err = exchange_fwd_ring_send(&r->ring, 0);
        }
    }
    err = err == UTIL_OK ? exchange_fwd_ring_drain(&r->ring) : err;
    if (err == UTIL_OK && inflight > 0) {
        err = wait_oldest(inflight, bound, &inflight, r->req, &r->nreq);
    }
    if (err != UTIL_OK) {
        return util_fail(err, "rank %d: exchange: %s step failed", rank, r->be->algo->name);
    }
    return UTIL_OK;
}

/* Step 4, the stats: the schedule's length in packet steps beside h and the theorem's bound. */
static void run_stats(const struct sched_run *r)
{
    struct exchange_stats *st = r->a->stats;
    uint64_t h, smax, rmax;
    exchange_sched_degrees(r->p, r->pk, &h, &smax, &rmax);
    double steps = (double)r->s->length / EXCHANGE_SCHED_UNITS;
    st->rounds = r->s->nsteps;
    exchange_stats_extra(st, "packet_bytes", (double)r->psize);
    exchange_stats_extra(st, "h_packets", (double)h);
    exchange_stats_extra(st, "steps", steps);
    exchange_stats_extra(st, "steps_per_h", h ? steps / (double)h : 0.0);
    exchange_stats_extra(st, "bound_steps", r->be->algo->bound(r->p, h, smax, rmax));
    exchange_stats_extra(st, "schedule_seconds", r->sched_seconds);
    exchange_stats_extra(st, "forwarded_bytes", (double)r->ring.forwarded);
    exchange_stats_extra(st, "joined_pieces", (double)r->joined);
}

/* The exchange of one scheduled back-end: gather, schedule, walk, stats. */
static int scheduled_run(const struct exchange_args *a, const struct sched_backend *be)
{
    struct sched_run r;
    double t0 = util_now();
    memset(&r, 0, sizeof(r));
    memset(a->stats, 0, sizeof(*a->stats));
    r.a = a;
    r.be = be;
    MPI_Comm_rank(a->comm, &r.rank);
    MPI_Comm_size(a->comm, &r.p);
    int err = exchange_check_args(a, r.rank);
    if (err != UTIL_OK) {
        return err;
    }
    r.elem = a->elem_size;
    size_t p = (size_t)r.p;
    r.capreq = 8;
    r.req = util_malloc((size_t)r.capreq * sizeof(MPI_Request));
    r.counts = util_malloc(p * (p + 2) * sizeof(uint64_t));
    r.row = util_malloc((p + 2) * sizeof(uint64_t));
    r.pk = util_malloc(p * p * sizeof(uint64_t));
    r.sdispl = util_malloc(2 * p * sizeof(uint64_t));
    if (r.req == NULL || r.counts == NULL || r.row == NULL || r.pk == NULL || r.sdispl == NULL) {
        exchange_abort_midway(a->comm, r.rank, "out of memory for bookkeeping");
    }
    r.rdispl = r.sdispl + p;
    err = run_gather(&r);
    if (err == UTIL_OK && r.recv == NULL) {
        err = r.refused;
    }
    if (err == UTIL_OK && (err = run_schedule(&r)) == UTIL_OK &&
        (err = run_walk(&r)) == UTIL_OK) {
        run_stats(&r);
        err = r.refused;
    }
    a->stats->seconds = util_now() - t0;
    exchange_sched_free(r.s);
    exchange_fwd_ring_free(&r.ring);
    util_free(r.drain);
    util_free(r.req);
    util_free(r.counts);
    util_free(r.row);
    util_free(r.join);
    util_free(r.pk);
    util_free(r.sdispl);
    return err;
}

static int direct_run(const struct exchange_args *a)
{
    return scheduled_run(a, &backend_direct);
}

static int forward_run(const struct exchange_args *a)
{
    return scheduled_run(a, &backend_forward);
}

static int fullduplex_run(const struct exchange_args *a)
{
    return scheduled_run(a, &backend_fullduplex);
}

/* ---- the models ------------------------------------------------------------------------------ */

/*
 * direct, forward, fullduplex: builds the schedule on the packet matrix (timed: this is what
 * every rank computes before the first byte moves), checks it, then walks its steps. A step
 * costs alpha + beta (its largest piece in real bytes); pieces past the end of a short last
 * packet are empty and, as in the executor, not sent; a step with nothing to send costs nothing.
 */
static int model_scheduled(const struct exchange_model_case *c, struct exchange_model_result *r,
                           const struct sched_backend *be)
{
    const struct exchange_sched_algo *algo = be->algo;
    const char *name = algo->name;
    struct exchange_sched *s = NULL;
    struct exchange_model_rounds w;
    struct exchange_model_case own = {0};
    size_t n = (size_t)c->p;
    int err, walking = 0;
    /* Without a packet size asked for, at the one this back-end would choose. */
    int own_rule = !c->packet_fixed && be->target_h != EXCHANGE_SCHED_TARGET_H;
    uint64_t psize = own_rule
                         ? exchange_model_packet_bytes(c->p, c->bytes, c->elem_bytes, be->target_h)
                         : c->packet_bytes;
    if (psize != c->packet_bytes) {
        if ((err = exchange_model_case_init(&own, c->p, c->bytes, c->elem_bytes, psize)) !=
            UTIL_OK) {
            return err;
        }
        own.alpha = c->alpha;
        own.beta = c->beta;
        own.validate = c->validate;
        own.machine = c->machine;
        own.counts_known = c->counts_known;
        c = &own;
        r->packet_bytes = c->packet_bytes;
        r->h = c->h;
    }
    double t0 = util_now();
    if ((err = algo->build(c->p, c->packets, &s)) != UTIL_OK) {
        goto fail; /* the builder reported it */
    }
    r->sched_seconds = util_now() - t0;
    if (c->validate) {
        char why[256];
        if (exchange_sched_validate(s, c->p, c->packets, NULL, why, sizeof(why)) != UTIL_OK) {
            err = util_fail(UTIL_EIO, "internal error: the %s schedule is invalid: %s", name, why);
            goto fail;
        }
    }
    if ((err = exchange_model_rounds_init(&w, c, r)) != UTIL_OK) {
        goto fail;
    }
    walking = 1;
    w.priced_async = 1;
    /* Steps posted all at once synchronise once (lookahead(): small pieces or a crowded node),
     * else each step waits for an earlier one. */
    uint64_t largest = 0;
    for (uint64_t k = 0; k < s->nxfers; k++) {
        const struct exchange_sched_xfer *x = &s->xfers[k];
        uint64_t off, len;
        exchange_sched_bytes(c->bytes[(size_t)x->msg_src * n + x->msg_dst], c->packet_bytes,
                             x->off, x->len, &off, &len);
        largest = exchange_model_max(largest, len);
    }
    uint64_t forced = util_knob_u64(UTIL_KNOB_SCHED_LOOKAHEAD);
    w.posted = forced != 0 ? 0 : exchange_model_posted(c, largest);
    /* Every rank all-gathers the rows of counts (and two words: joining, target h), always. */
    exchange_model_rounds_collective(&w, ((uint64_t)c->p + 2) * sizeof(uint64_t));
    /* Walk the steps: each a round of its pieces (a step with nothing to send costs nothing). */
    uint64_t fwd_bytes = 0;
    for (uint64_t t = 0; t < s->nsteps; t++) {
        for (uint64_t k = s->step_begin[t]; k < s->step_begin[t + 1]; k++) {
            const struct exchange_sched_xfer *x = &s->xfers[k];
            uint64_t off, len;
            exchange_sched_bytes(c->bytes[(size_t)x->msg_src * n + x->msg_dst], c->packet_bytes,
                                 x->off, x->len, &off, &len);
            if (len == 0) {
                continue;
            }
            exchange_model_rounds_msg(&w, (int)x->src, (int)x->dst, len);
            fwd_bytes += x->hop == EXCHANGE_SCHED_HOP1 ? len : 0;
            exchange_model_async_xfer(&w.async, (int)x->src, (int)x->dst,
                                      c->alpha + c->beta * (double)len);
        }
        for (uint64_t k = s->step_begin[t]; k < s->step_begin[t + 1]; k++) {
            exchange_model_async_commit(&w.async, (int)s->xfers[k].src, (int)s->xfers[k].dst);
        }
        exchange_model_rounds_close(&w);
    }
    exchange_model_rounds_free(&w);
    walking = 0;
    r->rounds = s->nsteps;
    r->steps = (double)s->length / EXCHANGE_SCHED_UNITS;
    r->bound = algo->bound(c->p, c->h, c->send_max, c->recv_max);
    exchange_model_detail(r, "xfers=%llu", (unsigned long long)s->nxfers);
    exchange_model_detail(r, "classes=%llu", (unsigned long long)s->matchings);
    exchange_model_detail(r, "forwarded_bytes=%llu", (unsigned long long)fwd_bytes);
    if (own_rule) {
        exchange_model_detail(r, "packet_bytes=%llu", (unsigned long long)r->packet_bytes);
        exchange_model_detail(r, "h_packets=%llu", (unsigned long long)r->h);
    }
fail:
    if (walking) {
        exchange_model_rounds_discard(&w);
    }
    exchange_sched_free(s);
    exchange_model_case_free(&own);
    return err;
}

static int model_direct(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return model_scheduled(c, r, &backend_direct);
}

static int model_forward(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return model_scheduled(c, r, &backend_forward);
}

static int model_fullduplex(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return model_scheduled(c, r, &backend_fullduplex);
}

static const struct exchange_model model_direct_steps = {
    .name = "direct",
    .summary = "the direct h-relation schedule: <= 3 ceil(h/2) steps of alpha + beta (piece)",
    .duplex = "half",
    .target_h = EXCHANGE_SCHED_TARGET_H,
    .run = model_direct,
};

static const struct exchange_model model_forward_steps = {
    .name = "forward",
    .summary = "the forwarding schedule: ~6/5 (h+1) steps (fifths), alpha + beta (piece) each",
    .duplex = "half",
    .target_h = EXCHANGE_SCHED_TARGET_H_FORWARD,
    .run = model_forward,
};

/* Equal blocks: the full-duplex schedule of a complete graph is its P-1 shift classes, every
 * pair's packets joined into one piece a step (SORTEX_SCHED_JOIN), as the walk finds. Direct's
 * and forward's half-duplex schedules depend on the colouring found; they have no such form. */
static int equal_fullduplex(const struct exchange_model_equal *e, struct exchange_model_result *r)
{
    if (util_knob_u64(UTIL_KNOB_SCHED_JOIN) == 0) {
        return UTIL_EUSAGE; /* pieces cut into packets: left to the walk */
    }
    if (e->p > 1) { /* the all-gather of the rows of counts, always */
        exchange_model_equal_extras(e, 1, ((uint64_t)e->p + 2) * sizeof(uint64_t), 0, 0, r);
    }
    return exchange_model_shift_equal(e, r, 1);
}

static const struct exchange_model model_fullduplex_steps = {
    .name = "fullduplex",
    .summary = "the full-duplex schedule: max(sent, received) steps of alpha + beta (piece)",
    .duplex = "full",
    .target_h = EXCHANGE_SCHED_TARGET_H,
    .run = model_fullduplex,
    .equal = equal_fullduplex,
};

static const struct exchange_model *const direct_models[] = {&model_direct_steps, NULL};
static const struct exchange_model *const forward_models[] = {&model_forward_steps, NULL};
static const struct exchange_model *const fullduplex_models[] = {&model_fullduplex_steps, NULL};

const struct exchange_ops exchange_direct = {
    .name = "direct",
    .summary = "half-duplex h-relation schedule, direct delivery, <= 3 ceil(h/2) steps "
               "(Sanders, Solis-Oba 2001, 2.1)",
    .run = direct_run,
    .models = direct_models,
};

const struct exchange_ops exchange_forward = {
    .name = "forward",
    .summary = "half-duplex h-relation schedule with forwarding, ~6/5 (h+1) steps "
               "(Sanders, Solis-Oba 2001, 2.2-2.4)",
    .run = forward_run,
    .models = forward_models,
};

const struct exchange_ops exchange_fullduplex = {
    .name = "fullduplex",
    .summary = "full-duplex schedule by bipartite edge colouring, max(send, recv) steps",
    .run = fullduplex_run,
    .models = fullduplex_models,
};

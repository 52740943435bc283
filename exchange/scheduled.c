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
 * about 32 packets for direct and fullduplex, 8 for forward, whose pieces are fifths; packets at
 * least 64 KiB); messages need not be multiples of it (the last packet is short). Forwarded pieces
 * pass through a ring buffer on the helping rank (below).
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
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
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
 * oversubscribed node (exchange_post_all()) every step is posted at once instead (measured at
 * P = 8 on 2 cores, 1 KiB per pair: direct 1.8-2.0x alltoallv with 2 steps in flight, 1.4x
 * with 8).
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

/* Bytes in one MPI call: the int limit in keys, as bytes, and never above INT_MAX. */
static uint64_t chunk_bytes(void)
{
    uint64_t keys = exchange_int_limit();
    uint64_t b = keys * sizeof(uint64_t);
    return b > 2147483640ULL ? 2147483640ULL : b;
}

/* Posts one piece as non-blocking messages of at most chunk_bytes() each. */
static int post_piece(char *buf, uint64_t bytes, int peer, int is_send, int tag, MPI_Comm comm,
                      MPI_Request **req, int *nreq, int *capreq)
{
    uint64_t chunk = chunk_bytes();
    for (uint64_t off = 0; off < bytes; off += chunk) {
        uint64_t c = bytes - off < chunk ? bytes - off : chunk;
        if (*nreq == *capreq) {
            int ncap = *capreq > 0 ? *capreq * 2 : 2;
            MPI_Request *r = util_realloc(*req, (size_t)ncap * sizeof(MPI_Request));
            if (r == NULL) {
                int rank;
                MPI_Comm_rank(comm, &rank);
                exchange_abort_midway(comm, rank, "out of memory for requests");
            }
            *req = r;
            *capreq = ncap;
        }
        int rc = is_send ? MPI_Isend(buf + off, (int)c, MPI_BYTE, peer, tag, comm, &(*req)[*nreq])
                         : MPI_Irecv(buf + off, (int)c, MPI_BYTE, peer, tag, comm, &(*req)[*nreq]);
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

/*
 * The forwarding ring of a helping rank. In the schedule a helper holds one piece at a time:
 * the piece's second hop comes in the step right after its first. Executed with steps in
 * flight, the next piece may arrive before the last one has left, so every piece gets its own
 * place in a ring buffer, and pieces leave in the order they arrive (a FIFO). One shared
 * buffer instead made every forwarding step wait for all transfers in flight before and after
 * it: forward took 1.5-1.8x alltoallv at P = 7 on 2 cores, against 1.0-1.2x for direct.
 *
 * Second hops travel under their own tag, so a helper may send them later than their place in
 * the walk without disturbing the order in which its direct messages match. With every step
 * in flight (window 0) it does: a second hop leaves as soon as its first hop is in, checked
 * after every step, and the walk never waits for one. With a window, the second hop leaves at
 * its place in the walk, after waiting for its first hop. Either way a full ring waits for its
 * oldest piece to arrive, leave and be delivered.
 *
 * The ring is scratch memory (util_alloc_scratch()): on huge pages once it holds 1 MiB, where
 * the single-copy transfers in and out of it pin and fault far fewer pages. Measured with
 * sortex-xbench on 2 cores (the sort's matrices of the nine benchmark inputs, 16 MiB per rank,
 * 9 repetitions, two launches against the malloc'ed ring, interleaved): on staggered, where 18%
 * of the bytes are forwarded, forward's median ratio to alltoallv fell from 1.45-1.54 to
 * 1.22-1.30 at P = 6 and from 1.38-1.39 to 1.18-1.26 at P = 7; elsewhere, P = 3 to 8, it moved
 * within the noise.
 *
 * It is kept from one exchange to the next while it is at most SCHED_FWD_RING_BYTES (a larger
 * one, for pieces above that, is freed after use): freed, its pages went back to the system and
 * every exchange faulted them in anew. Measured with sortex-xbench on 2 cores (oddcycle,
 * staggered, random and the sort's matrices of staggered and dd; P = 6 and 7; 4 and 16 MiB per
 * rank; 9 repetitions; three launches of each build, interleaved), forward's ratio to alltoallv
 * at 16 MiB went from 1.18-2.30 to 1.12-1.27 on oddcycle at P = 6, from 1.95-2.46 to
 * 1.12-1.16 at P = 7, and from 2.00-3.26 to 1.12-1.35 on staggered at P = 6 and 7; elsewhere
 * it moved within the noise. A sort exchanges once, so there it saves nothing.
 */
#define SCHED_FWD_RING_BYTES ((uint64_t)8 << 20) /* ring size, unless one piece is larger */
#define SCHED_FWD_PIECES     64                  /* pieces in transit at most */

struct fwd_piece {
    uint64_t off, bytes; /* its place in the ring */
    int peer;            /* where it goes, once its second hop is known (due) */
    int due;
    MPI_Request *req; /* its messages in (first hop), then out (second hop) */
    int nreq, capreq;
};

struct fwd_ring {
    char *buf;
    uint64_t size, next;        /* bytes; where the next piece would go */
    uint64_t taken, out, freed; /* pieces taken, sent on, and delivered, since the start */
    uint64_t forwarded;         /* bytes sent on */
    MPI_Comm comm;
    struct fwd_piece piece[SCHED_FWD_PIECES]; /* piece i at i % SCHED_FWD_PIECES */
};

/* The ring's memory, kept for the next exchange while it is at most SCHED_FWD_RING_BYTES (see
 * above); one per process, as a rank runs one exchange at a time. */
static char *ring_kept;
static uint64_t ring_kept_size;

/* The bytes of transfer @x: *@off within its message, *@len (0 for a piece past the end of a
 * short last packet). keys: the count matrix; psize: the packet size. */
static void xfer_bytes(const struct exchange_sched_xfer *x, const uint64_t *keys, int p,
                       uint64_t psize, uint64_t *off, uint64_t *len)
{
    uint64_t msg_keys = keys[(size_t)x->msg_src * p + x->msg_dst];
    exchange_sched_bytes(msg_keys * sizeof(uint64_t), psize, x->off, x->len, off, len);
}

/* Sizes the ring of @rank for schedule @s: room for its largest piece, and for all the pieces it
 * forwards when they fit in SCHED_FWD_RING_BYTES (or SORTEX_FWD_RING_BYTES, for the tests: 1
 * holds one piece at a time). Returns 0 or UTIL_ENOMEM. */
static int ring_init(struct fwd_ring *r, const struct exchange_sched *s, const uint64_t *keys,
                     int rank, uint64_t psize, MPI_Comm comm)
{
    uint64_t total = 0, most = 0, off, len;
    for (uint64_t k = s->rank_begin[rank]; k < s->rank_begin[rank + 1]; k++) {
        const struct exchange_sched_xfer *x = &s->xfers[s->rank_xfers[k]];
        if (x->hop == EXCHANGE_SCHED_HOP1 && x->dst == (uint32_t)rank) {
            xfer_bytes(x, keys, s->p, psize, &off, &len);
            total += len;
            most = len > most ? len : most;
        }
    }
    uint64_t cap = util_knob_u64(UTIL_KNOB_FWD_RING_BYTES);
    r->comm = comm;
    r->size = total < cap ? total : cap;
    r->size = most > r->size ? most : r->size;
    if (r->size > ring_kept_size) {
        util_free_scratch(ring_kept, ring_kept_size);
        ring_kept_size = 0;
        ring_kept = util_alloc_scratch(r->size);
        if (ring_kept == NULL) {
            return UTIL_ENOMEM;
        }
        ring_kept_size = r->size;
    }
    r->buf = ring_kept;
    return UTIL_OK;
}

/* Sends on the oldest piece not yet sent, if its second hop is due and its first hop is in;
 * @wait: wait for the first hop rather than check it. Sets *@sent; returns 0 or UTIL_EMPI. */
static int ring_send_one(struct fwd_ring *r, int wait, int *sent)
{
    struct fwd_piece *f = &r->piece[r->out % SCHED_FWD_PIECES];
    int in = 0;
    *sent = 0;
    if (r->out == r->taken || !f->due) {
        return UTIL_OK;
    }
    if (f->nreq > 0 &&
        (wait ? MPI_Waitall(f->nreq, f->req, MPI_STATUSES_IGNORE)
              : MPI_Testall(f->nreq, f->req, &in, MPI_STATUSES_IGNORE)) != MPI_SUCCESS) {
        return UTIL_EMPI;
    }
    if (!wait && !in && f->nreq > 0) {
        return UTIL_OK;
    }
    f->nreq = 0;
    r->out++;
    r->forwarded += f->bytes;
    *sent = 1;
    return post_piece(r->buf + f->off, f->bytes, f->peer, 1, EXCHANGE_TAG_SCHEDULE_FWD, r->comm,
                      &f->req, &f->nreq, &f->capreq);
}

/* Sends on every due piece whose first hop is in, oldest first; @wait: wait for the first hops
 * instead of stopping at one not yet in. */
static int ring_send(struct fwd_ring *r, int wait)
{
    int sent = 1, err = UTIL_OK;
    while (sent && err == UTIL_OK) {
        err = ring_send_one(r, wait, &sent);
    }
    return err;
}

/* Delivers the oldest piece (sending it on first if need be) and frees its place. Every piece
 * older than the one being taken is due (the schedule's one piece in transit), so this ends. */
static int ring_reclaim(struct fwd_ring *r)
{
    int sent = 1, err = UTIL_OK;
    while (r->out == r->freed && sent && err == UTIL_OK) {
        err = ring_send_one(r, 1, &sent);
    }
    assert(err != UTIL_OK || r->out > r->freed);
    struct fwd_piece *f = &r->piece[r->freed % SCHED_FWD_PIECES];
    if (err == UTIL_OK && f->nreq > 0 &&
        MPI_Waitall(f->nreq, f->req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
        err = UTIL_EMPI;
    }
    f->nreq = 0;
    r->freed++;
    return err;
}

/* Makes room for a piece of @bytes (at most r->size), reclaiming the oldest pieces as needed,
 * and returns it; NULL on an MPI error. */
static struct fwd_piece *ring_take(struct fwd_ring *r, uint64_t bytes)
{
    for (;;) {
        uint64_t count = r->taken - r->freed, at = count == 0 ? 0 : r->next, at_end = at;
        int fits = count == 0;
        if (count > 0 && count < SCHED_FWD_PIECES) {
            /* In use: from the oldest piece's place up to `next`, going round. */
            uint64_t tail = r->piece[r->freed % SCHED_FWD_PIECES].off;
            if (at > tail) {
                fits = r->size - at >= bytes || tail >= bytes;
                at_end = r->size - at >= bytes ? at : 0;
            } else if (at < tail) {
                fits = tail - at >= bytes;
            }
        }
        if (fits) {
            struct fwd_piece *f = &r->piece[r->taken % SCHED_FWD_PIECES];
            f->off = at_end;
            f->bytes = bytes;
            f->due = 0;
            f->nreq = 0;
            r->next = at_end + bytes;
            r->taken++;
            return f;
        }
        if (ring_reclaim(r) != UTIL_OK) {
            return NULL;
        }
    }
}

/* Sends on and delivers every piece in transit. */
static int ring_drain(struct fwd_ring *r)
{
    int err = ring_send(r, 1);
    while (r->freed < r->taken && err == UTIL_OK) {
        err = ring_reclaim(r);
    }
    return err;
}

static void ring_free(struct fwd_ring *r)
{
    for (size_t i = 0; i < SCHED_FWD_PIECES; i++) {
        util_free(r->piece[i].req);
    }
    if (ring_kept_size > SCHED_FWD_RING_BYTES) {
        util_free_scratch(ring_kept, ring_kept_size);
        ring_kept = NULL;
        ring_kept_size = 0;
    }
    r->buf = NULL;
}

static int scheduled_run(const struct exchange_args *a, const struct sched_backend *be)
{
    int rank, p, err = UTIL_OK;
    double t0 = util_now();
    MPI_Comm_rank(a->comm, &rank);
    MPI_Comm_size(a->comm, &p);
    struct exchange_stats *st = a->stats;
    memset(st, 0, sizeof(*st));
    const struct exchange_sched_algo *algo = be->algo;
    const char *algo_name = algo->name;
    struct exchange_sched *s = NULL;
    struct fwd_ring ring;
    memset(&ring, 0, sizeof(ring));
    uint64_t *drain = NULL;
    int capreq = 8, nreq = 0;
    MPI_Request *req = util_malloc((size_t)capreq * sizeof(MPI_Request));
    uint64_t *keys = util_malloc((size_t)p * (p + 2) * sizeof(uint64_t));
    uint64_t *row = util_malloc(((size_t)p + 2) * sizeof(uint64_t));
    uint8_t *join = NULL;
    uint64_t *pk = util_malloc((size_t)p * p * sizeof(uint64_t));
    uint64_t *displ = util_malloc(2 * (size_t)p * sizeof(uint64_t));
    if (req == NULL || keys == NULL || row == NULL || pk == NULL || displ == NULL) {
        exchange_abort_midway(a->comm, rank, "out of memory for bookkeeping");
    }
    uint64_t *sdispl = displ, *rdispl = displ + p;

    /* 1. Every rank learns the whole matrix of counts (keys), whether every rank joins pieces,
     * and rank 0's target h (two more words in each rank's row; the rows are then packed to
     * p x p). */
    const size_t rowlen = (size_t)p + 2;
    memcpy(row, a->send_counts, (size_t)p * sizeof(uint64_t));
    row[p] = util_knob_u64(UTIL_KNOB_SCHED_JOIN) != 0;
    row[p + 1] = target_h_asked();
    if (MPI_Allgather(row, (int)rowlen, MPI_UINT64_T, keys, (int)rowlen, MPI_UINT64_T, a->comm) !=
        MPI_SUCCESS) {
        err = util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Allgather of counts failed", rank);
        goto fail;
    }
    /* Every rank sees rank 0's word, so all of them stop here, before any transfer, or none;
     * rank 0 says why. */
    if (keys[p + 1] == UINT64_MAX) {
        err = rank != 0 ? UTIL_EUSAGE
                        : util_fail(UTIL_EUSAGE,
                                    "rank 0: exchange: SORTEX_SCHED_TARGET_H must be an integer "
                                    "from 1 to %d (%s)",
                                    EXCHANGE_SCHED_TARGET_H_MAX,
                                    util_knob(UTIL_KNOB_SCHED_TARGET_H)->text);
        goto fail;
    }
    int joining = 1;
    uint64_t target_h = keys[p + 1] > 0 ? keys[p + 1] : be->target_h;
    for (int i = 0; i < p; i++) {
        joining &= keys[i * rowlen + p] != 0;
        memmove(keys + (size_t)i * p, keys + i * rowlen, (size_t)p * sizeof(uint64_t));
    }
    for (int i = 0; i < p; i++) {
        a->recv_counts[i] = keys[(size_t)i * p + rank];
    }
    exchange_displs(a->send_counts, p, sdispl);
    /* Refused or not, walk the schedule (into a buffer thrown away after), so no peer waits. */
    int refused = UTIL_OK;
    uint64_t *recv =
        exchange_recv_target(a, exchange_displs(a->recv_counts, p, rdispl), rank, &drain, &refused);
    if (recv == NULL) {
        err = refused;
        goto fail;
    }

    /* 2. The same schedule on every rank, on the matrix in packets. */
    double ts = util_now();
    uint64_t psize = exchange_sched_packet_bytes(p, keys, sizeof(uint64_t), target_h);
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
        err = util_fail(err, "rank %d: exchange: building the %s schedule failed", rank, algo_name);
        goto fail;
    }
    join = util_calloc(s->nxfers ? s->nxfers : 1, 1);
    if (join == NULL || (joining && exchange_sched_joins(s, join) != UTIL_OK)) {
        exchange_abort_midway(a->comm, rank, "out of memory for the schedule");
    }
    double sched_seconds = util_now() - ts;
    if (ring_init(&ring, s, keys, rank, psize, a->comm) != UTIL_OK) {
        exchange_abort_midway(a->comm, rank, "out of memory for the forwarding buffer");
    }

    /* 3. The own bucket is a local copy. */
    util_copy(recv + rdispl[rank], a->send + sdispl[rank], a->send_counts[rank] * sizeof(uint64_t));

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
    uint64_t joined = 0; /* pieces this rank sent or received with the one before them */
    for (uint64_t k = first; k < end && err == UTIL_OK;) {
        uint64_t step = s->xfers[s->rank_xfers[k]].step;
        if (window > 0 && inflight == window) {
            if ((err = wait_oldest(1, bound, &inflight, req, &nreq)) != UTIL_OK) {
                break;
            }
        }
        for (; k < end && s->xfers[s->rank_xfers[k]].step == step && err == UTIL_OK; k++) {
            const struct exchange_sched_xfer *x = &s->xfers[s->rank_xfers[k]];
            uint64_t boff, blen, end_byte;
            xfer_bytes(x, keys, p, psize, &boff, &blen);
            /* Pieces that run on into the next ones (exchange_sched_joins()) go as one. */
            for (end_byte = boff + blen; join[s->rank_xfers[k]]; k++) {
                uint64_t noff, nlen;
                xfer_bytes(&s->xfers[s->rank_xfers[k + 1]], keys, p, psize, &noff, &nlen);
                end_byte = noff + nlen > end_byte ? noff + nlen : end_byte;
                joined++;
            }
            blen = end_byte - boff;
            if (blen == 0) {
                continue; /* a piece past the end of a short last packet (both hops) */
            }
            int is_send = x->src == (uint32_t)rank;
            int peer = is_send ? (int)x->dst : (int)x->src;
            if (is_send) {
                st->bytes_sent += blen;
                st->messages++;
                st->max_message = blen > st->max_message ? blen : st->max_message;
            } else {
                st->bytes_recv += blen; /* forwarded pieces included, like bytes_sent */
            }
            if (x->hop == EXCHANGE_SCHED_HOP1 && !is_send) {
                /* A piece to forward comes in: into its own place in the ring. */
                struct fwd_piece *f = ring_take(&ring, blen);
                err = f == NULL
                          ? UTIL_EMPI
                          : post_piece(ring.buf + f->off, blen, peer, 0, EXCHANGE_TAG_SCHEDULE,
                                       a->comm, &f->req, &f->nreq, &f->capreq);
            } else if (x->hop == EXCHANGE_SCHED_HOP2 && is_send) {
                /* Its second hop: the newest piece of the ring. */
                struct fwd_piece *f = &ring.piece[(ring.taken - 1) % SCHED_FWD_PIECES];
                assert(ring.taken > ring.out && f->bytes == blen && !f->due);
                f->due = 1;
                f->peer = peer;
                err = window > 0 ? ring_send(&ring, 1) : UTIL_OK;
            } else {
                int tag = x->hop == EXCHANGE_SCHED_HOP2 ? EXCHANGE_TAG_SCHEDULE_FWD
                                                        : EXCHANGE_TAG_SCHEDULE;
                char *buf = is_send ? (char *)(sendb + sdispl[x->msg_dst] * sizeof(uint64_t) + boff)
                                    : recvb + rdispl[x->msg_src] * sizeof(uint64_t) + boff;
                err = post_piece(buf, blen, peer, is_send, tag, a->comm, &req, &nreq, &capreq);
            }
        }
        if (window == 0 && inflight > 0) {
            bound[0] = nreq;
        } else {
            bound[inflight++] = nreq;
        }
        /* Second hops whose first hop is in leave now. */
        err = err == UTIL_OK && ring.out < ring.taken ? ring_send(&ring, 0) : err;
    }
    err = err == UTIL_OK ? ring_drain(&ring) : err;
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
    exchange_stats_extra(st, "forwarded_bytes", (double)ring.forwarded);
    exchange_stats_extra(st, "joined_pieces", (double)joined);
    err = refused;
fail:
    st->seconds = util_now() - t0;
    exchange_sched_free(s);
    ring_free(&ring);
    util_free(drain);
    util_free(req);
    util_free(keys);
    util_free(row);
    util_free(join);
    util_free(pk);
    util_free(displ);
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
    uint64_t *sends = NULL;
    struct exchange_model_async as = {NULL, NULL};
    struct exchange_model_case own = {0};
    size_t n = (size_t)c->p;
    int err;
    /* Without a packet size asked for, at the one this back-end would choose. */
    int own_rule = !c->packet_fixed && be->target_h != EXCHANGE_SCHED_TARGET_H;
    uint64_t psize =
        own_rule ? exchange_model_packet_bytes(c->p, c->bytes, be->target_h) : c->packet_bytes;
    if (psize != c->packet_bytes) {
        if ((err = exchange_model_case_init(&own, c->p, c->bytes, c->elem_bytes, psize)) !=
            UTIL_OK) {
            return err;
        }
        own.alpha = c->alpha;
        own.beta = c->beta;
        own.validate = c->validate;
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
    sends = util_calloc(n, sizeof(*sends));
    if (sends == NULL || exchange_model_async_init(&as, c->p) != UTIL_OK) {
        err = util_fail(UTIL_ENOMEM, "out of memory (%s model, P = %d)", name, c->p);
        goto fail;
    }
    /* Walk the steps: the largest piece of each, every piece's bytes, who sends how often. */
    uint64_t fwd_bytes = 0;
    for (uint64_t t = 0; t < s->nsteps; t++) {
        uint64_t big = 0, any = 0;
        for (uint64_t k = s->step_begin[t]; k < s->step_begin[t + 1]; k++) {
            const struct exchange_sched_xfer *x = &s->xfers[k];
            uint64_t off, len;
            exchange_sched_bytes(c->bytes[(size_t)x->msg_src * n + x->msg_dst], c->packet_bytes,
                                 x->off, x->len, &off, &len);
            if (len == 0) {
                continue;
            }
            any = 1;
            big = exchange_model_max(big, len);
            sends[x->src]++;
            r->bytes_moved += len;
            fwd_bytes += x->hop == EXCHANGE_SCHED_HOP1 ? len : 0;
            exchange_model_async_xfer(&as, (int)x->src, (int)x->dst,
                                      c->alpha + c->beta * (double)len);
        }
        for (uint64_t k = s->step_begin[t]; k < s->step_begin[t + 1]; k++) {
            exchange_model_async_commit(&as, (int)s->xfers[k].src, (int)s->xfers[k].dst);
        }
        if (any) {
            r->seconds += c->alpha + c->beta * (double)big;
            r->max_message = exchange_model_max(r->max_message, big);
        }
    }
    for (size_t i = 0; i < n; i++) {
        r->startups = exchange_model_max(r->startups, sends[i]);
    }
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
    r->async_seconds = exchange_model_async_done(&as, c->p);
    as.ready = NULL;
fail:
    util_free(as.ready);
    util_free(sends);
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

static const struct exchange_model model_fullduplex_steps = {
    .name = "fullduplex",
    .summary = "the full-duplex schedule: max(sent, received) steps of alpha + beta (piece)",
    .duplex = "full",
    .target_h = EXCHANGE_SCHED_TARGET_H,
    .run = model_fullduplex,
};

static const struct exchange_model *const direct_models[] = {&model_direct_steps, NULL};
static const struct exchange_model *const forward_models[] = {&model_forward_steps, NULL};
static const struct exchange_model *const fullduplex_models[] = {&model_fullduplex_steps, NULL};

const struct exchange_ops exchange_direct = {
    .name = "direct",
    .summary =
        "half-duplex h-relation schedule, direct delivery, <= 3 ceil(h/2) steps (seed 004 2.1)",
    .run = direct_run,
    .models = direct_models,
};

const struct exchange_ops exchange_forward = {
    .name = "forward",
    .summary =
        "half-duplex h-relation schedule with forwarding, ~6/5 (h+1) steps (seed 004 2.2-2.4)",
    .run = forward_run,
    .models = forward_models,
};

const struct exchange_ops exchange_fullduplex = {
    .name = "fullduplex",
    .summary = "full-duplex schedule by bipartite edge colouring, max(send, recv) steps",
    .run = fullduplex_run,
    .models = fullduplex_models,
};

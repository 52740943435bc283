/*
 * exchange/fwd_ring.c: the forwarding ring of the scheduled back-ends, and their transport of
 * pieces (see fwd_ring.h).
 *
 * In the schedule a helper holds one piece at a time: the piece's second hop comes in the step
 * right after its first. Executed with steps in flight, the next piece may arrive before the
 * last one has left, so every piece gets its own place in a ring buffer, and pieces leave in
 * the order they arrive (a FIFO). One shared buffer instead would make every forwarding step
 * wait for all transfers in flight before and after it, undoing the steps in flight.
 *
 * Second hops travel under their own tag, so a helper may send them later than their place in
 * the walk without disturbing the order in which its direct messages match. With every step
 * in flight (window 0) it does: a second hop leaves as soon as its first hop is in, checked
 * after every step, and the walk never waits for one. With a window, the second hop leaves at
 * its place in the walk, after waiting for its first hop. Either way a full ring waits for its
 * oldest piece to arrive, leave and be delivered.
 *
 * The ring is kept scratch memory (exchange/arena.h): on huge pages, where the single-copy
 * transfers in and out of it pin and fault far fewer pages, and kept from one exchange to the
 * next, so that a repeated exchange does not fault its pages in again. Both matter where much is
 * forwarded (count matrices like staggered and oddcycle), since every forwarded byte passes
 * through the ring twice. The measurements behind them are in the messages of the commits
 * "forward: put the forwarding ring on huge pages once it holds 1 MiB" and "forward: keep the
 * forwarding ring from one exchange to the next".
 */
#include "exchange/fwd_ring.h"

#include <assert.h>
#include <string.h>

#include "exchange/arena.h"
#include "exchange/exchange.h"
#include "exchange/tags.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

int exchange_post_piece(char *buf, uint64_t bytes, uint64_t elem, int peer, int is_send, int tag,
                        MPI_Comm comm, MPI_Request **req, int *nreq, int *capreq)
{
    uint64_t chunk = exchange_chunk_bytes(elem);
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

int exchange_fwd_ring_init(struct exchange_fwd_ring *r, uint64_t total, uint64_t most,
                           uint64_t elem, MPI_Comm comm, const void *owner)
{
    uint64_t cap = util_knob_u64(UTIL_KNOB_FWD_RING_BYTES);
    memset(r, 0, sizeof(*r));
    r->comm = comm;
    r->elem = elem;
    r->owner = owner;
    r->size = total < cap ? total : cap;
    r->size = most > r->size ? most : r->size;
    if (r->size > 0) {
        r->buf = exchange_arena_take(owner, r->size, &r->bytes, NULL);
        if (r->buf == NULL) {
            return UTIL_ENOMEM;
        }
    }
    return UTIL_OK;
}

/* Sends on the oldest piece not yet sent, if its second hop is due and its first hop is in;
 * @wait: wait for the first hop rather than check it. Sets *@sent; returns 0 or UTIL_EMPI. */
static int ring_send_one(struct exchange_fwd_ring *r, int wait, int *sent)
{
    struct exchange_fwd_piece *f = &r->piece[r->out % EXCHANGE_FWD_PIECES];
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
    return exchange_post_piece(r->buf + f->off, f->bytes, r->elem, f->peer, 1,
                               EXCHANGE_TAG_SCHEDULE_FWD, r->comm, &f->req, &f->nreq, &f->capreq);
}

int exchange_fwd_ring_send(struct exchange_fwd_ring *r, int wait)
{
    int sent = 1, err = UTIL_OK;
    while (sent && err == UTIL_OK) {
        err = ring_send_one(r, wait, &sent);
    }
    return err;
}

/* Delivers the oldest piece (sending it on first if need be) and frees its place. Every piece
 * older than the one being taken is due (the schedule's one piece in transit), so this ends. */
static int ring_reclaim(struct exchange_fwd_ring *r)
{
    int sent = 1, err = UTIL_OK;
    while (r->out == r->freed && sent && err == UTIL_OK) {
        err = ring_send_one(r, 1, &sent);
    }
    assert(err != UTIL_OK || r->out > r->freed);
    struct exchange_fwd_piece *f = &r->piece[r->freed % EXCHANGE_FWD_PIECES];
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
static struct exchange_fwd_piece *ring_take(struct exchange_fwd_ring *r, uint64_t bytes)
{
    for (;;) {
        uint64_t count = r->taken - r->freed, at = count == 0 ? 0 : r->next, at_end = at;
        int fits = count == 0;
        if (count > 0 && count < EXCHANGE_FWD_PIECES) {
            /* In use: from the oldest piece's place up to `next`, going round. */
            uint64_t tail = r->piece[r->freed % EXCHANGE_FWD_PIECES].off;
            if (at > tail) {
                fits = r->size - at >= bytes || tail >= bytes;
                at_end = r->size - at >= bytes ? at : 0;
            } else if (at < tail) {
                fits = tail - at >= bytes;
            }
        }
        if (fits) {
            struct exchange_fwd_piece *f = &r->piece[r->taken % EXCHANGE_FWD_PIECES];
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

int exchange_fwd_ring_drain(struct exchange_fwd_ring *r)
{
    int err = exchange_fwd_ring_send(r, 1);
    while (r->freed < r->taken && err == UTIL_OK) {
        err = ring_reclaim(r);
    }
    return err;
}

void exchange_fwd_ring_free(struct exchange_fwd_ring *r)
{
    for (size_t i = 0; i < EXCHANGE_FWD_PIECES; i++) {
        util_free(r->piece[i].req);
    }
    exchange_arena_give(r->buf, r->bytes); /* kept for the next exchange */
    if (r->owner != NULL) {
        exchange_arena_end(r->owner);
    }
    r->buf = NULL;
    r->bytes = 0;
}


int exchange_fwd_ring_recv(struct exchange_fwd_ring *r, uint64_t bytes, int peer, int tag)
{
    struct exchange_fwd_piece *f = ring_take(r, bytes);
    return f == NULL ? UTIL_EMPI
                     : exchange_post_piece(r->buf + f->off, bytes, r->elem, peer, 0, tag, r->comm,
                                           &f->req, &f->nreq, &f->capreq);
}

void exchange_fwd_ring_due(struct exchange_fwd_ring *r, uint64_t bytes, int peer)
{
    struct exchange_fwd_piece *f = &r->piece[(r->taken - 1) % EXCHANGE_FWD_PIECES];
    assert(r->taken > r->out && f->bytes == bytes && !f->due);
    (void)bytes;
    f->due = 1;
    f->peer = peer;
}

int exchange_fwd_ring_pending(const struct exchange_fwd_ring *r)
{
    return r->out < r->taken;
}

/*
 * exchange/fwd_ring.h: the forwarding ring of the scheduled back-ends, and their transport of
 * pieces (internal to exchange/; scheduled.c uses it).
 *
 * In a forwarding schedule (exchange/sched.h) a helping rank receives a piece in one step and
 * sends it on in the next. Executed with steps in flight, the next piece may arrive before the
 * last one has left, so every piece gets its own place in a ring buffer and pieces leave in the
 * order they arrive (a FIFO). Second hops travel under a tag of their own
 * (EXCHANGE_TAG_SCHEDULE_FWD), so a helper may send them later than their place in its walk
 * without disturbing the order in which its other messages match.
 */
#ifndef SORTEX_EXCHANGE_FWD_RING_H
#define SORTEX_EXCHANGE_FWD_RING_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/** Pieces a ring holds in transit at most. */
#define EXCHANGE_FWD_PIECES 64

/** One piece in transit. */
struct exchange_fwd_piece {
    uint64_t off, bytes; /* its place in the ring */
    int peer;            /* where it goes, once its second hop is known (due) */
    int due;
    MPI_Request *req; /* its messages in (first hop), then out (second hop) */
    int nreq, capreq;
};

/** A ring: its buffer and the pieces in it, piece i at i % EXCHANGE_FWD_PIECES. */
struct exchange_fwd_ring {
    char *buf;                  /* from the arena (exchange/arena.h), bytes long */
    size_t bytes;
    uint64_t size, next;        /* bytes used of it; where the next piece would go */
    uint64_t taken, out, freed; /* pieces taken, sent on, and delivered, since the start */
    uint64_t forwarded;         /* bytes sent on */
    uint64_t elem;              /* bytes per element of the pieces */
    MPI_Comm comm;
    const void *owner; /* whose kept buffer it is (exchange/arena.h) */
    struct exchange_fwd_piece piece[EXCHANGE_FWD_PIECES];
};

/**
 * Posts the piece [buf, buf + @bytes) of elements of @elem bytes to (@is_send) or from @peer
 * under @tag as non-blocking messages of at most exchange_chunk_bytes(@elem) each, appending
 * their requests to *@req (*@nreq of *@capreq used; grown as needed). Returns 0 or UTIL_EMPI (no
 * message); without memory for the requests it aborts the job (exchange_abort_midway()): peers
 * are already waiting for this rank.
 */
int exchange_post_piece(char *buf, uint64_t bytes, uint64_t elem, int peer, int is_send, int tag,
                        MPI_Comm comm, MPI_Request **req, int *nreq, int *capreq);

/**
 * Sets up @r on @comm for a rank that forwards @total bytes in pieces of at most @most, of
 * elements of @elem bytes: room for the largest piece, and for all of them when they fit in
 * SORTEX_FWD_RING_BYTES. Its buffer is @owner's (the back-end's) in the arena, kept for its next
 * exchange. Returns 0 or UTIL_ENOMEM (no message).
 */
int exchange_fwd_ring_init(struct exchange_fwd_ring *r, uint64_t total, uint64_t most,
                           uint64_t elem, MPI_Comm comm, const void *owner);

/**
 * A piece of @bytes (at most the largest piece given at init) is coming in from @peer under @tag:
 * takes its place in the ring, reclaiming the oldest pieces while there is no room, and posts
 * its receive. Returns 0 or UTIL_EMPI.
 */
int exchange_fwd_ring_recv(struct exchange_fwd_ring *r, uint64_t bytes, int peer, int tag);

/** The second hop of the newest piece, of @bytes, is due: it goes to @peer. */
void exchange_fwd_ring_due(struct exchange_fwd_ring *r, uint64_t bytes, int peer);

/** Whether a due piece is still waiting to be sent on. */
int exchange_fwd_ring_pending(const struct exchange_fwd_ring *r);

/**
 * Sends on every due piece whose first hop is in, oldest first; @wait: wait for the first hops
 * instead of stopping at the first one not yet in. Returns 0 or UTIL_EMPI.
 */
int exchange_fwd_ring_send(struct exchange_fwd_ring *r, int wait);

/** Sends on and delivers every piece in transit. Returns 0 or UTIL_EMPI. */
int exchange_fwd_ring_drain(struct exchange_fwd_ring *r);

/** Frees what the ring holds for this exchange; its buffer is kept for the next. */
void exchange_fwd_ring_free(struct exchange_fwd_ring *r);

#endif

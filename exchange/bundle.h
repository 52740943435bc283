/*
 * exchange/bundle.h: the point-to-point transport shared by the pairwise, shift, grid and
 * hypercube back-ends. Internal to exchange/.
 *
 * Two kinds of transfer:
 *   - a chunked MPI_Sendrecv whose sizes both sides know (pairwise, shift);
 *   - a bundle (grid, hypercube): the pieces one rank routes to one peer in one step, each
 *     piece the elements of one (source, destination) pair, announced by a header of their
 *     counts (one 64-bit word each, in elements) in an order both sides derive from the
 *     schedule. The receiver matches the bundle's first message with MPI_Mprobe and so learns
 *     its size without a separate size message.
 *
 * Everything travels as bytes (MPI_BYTE): a message is a byte string, its elements of
 * elem_size bytes back to back at any alignment (a packed bundle's payload follows its header
 * directly, so after an odd-sized element nothing is aligned); the header's words are read and
 * written with memcpy.
 *
 * A bundle travels in one of two forms, chosen by the sender from its payload:
 *   - packed (payload below SORTEX_SCATTER_MIN bytes, 64 KiB by default): header and elements
 *     copied into one message, one start-up per peer and step: the form for small pieces;
 *   - scattered: the header alone, then every non-empty piece as its own message straight from
 *     where its elements are, received straight into their next place: a piece the receiver will
 *     forward lands in that step's hop buffer, a piece destined to the receiver (a "final"
 *     piece, tag + 2) waits inside MPI until exchange_bundle_place() receives it into its
 *     final place in the result. No copies at all: the form for large pieces.
 * The receiver tells them apart by the first message's size: header plus elements is packed; the
 * header alone with a non-zero total announces scattered pieces.
 *
 * Every MPI count stays <= exchange_int_limit() bytes: messages are cut into chunks of
 * exchange_chunk_bytes() (`limit` below). A first message whose size the receiver does not know
 * is cut into chunks of exactly `limit` bytes followed by one shorter chunk (possibly empty):
 * the first chunk shorter than the limit ends it, and successive MPI_Mprobe calls match a
 * sender's chunks in order (MPI's non-overtaking rule), so its whole size is known before any
 * of it is received. A piece, whose size the header announced, is cut into exact chunks. Chunks
 * of a message land back to back, so an element cut between two (only when an element exceeds
 * a lowered limit) arrives whole.
 *
 * A short first message (under BUNDLE_EAGER_CHUNKS eager chunks) is cut the same way into
 * chunks of exactly `eager` bytes (SORTEX_EAGER_BYTES rounded down to whole 8-byte words,
 * 4032 bytes by default; 0: never): MPI
 * libraries send short messages eagerly and longer ones by a rendezvous, a round trip before
 * any data moves, and a packed bundle just over that limit (grid and hypercube at ~1 KiB per
 * pair) measured faster as two eager messages than as one rendezvous. The first chunk's size
 * tells the receiver which cut it is (eager < limit, and a limit-cut message is longer than
 * BUNDLE_EAGER_CHUNKS eager chunks), so both sides need only the same setting, as they have
 * when every rank gets the same environment.
 *
 * Tags: a step uses tag (first messages), tag + 1 (forwarded pieces) and tag + 2 (final
 * pieces); successive steps use tags three apart, so that a late piece never matches another
 * step's receive. Pieces from one sender under one tag are received in header order.
 */
#ifndef SORTEX_EXCHANGE_BUNDLE_H
#define SORTEX_EXCHANGE_BUNDLE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "exchange/exchange.h"
#include "exchange/model.h"

/** Tags one bundle step occupies (tag, tag + 1, tag + 2). */
#define BUNDLE_TAGS_PER_STEP 3

/** First messages shorter than this many eager chunks are cut into eager chunks. */
#define BUNDLE_EAGER_CHUNKS 4

/** Whether a bundle whose pieces hold @payload_bytes travels packed: below @scatter_min bytes
 * (SORTEX_SCATTER_MIN), else scattered. The transport and the cost model both ask this. */
static inline int exchange_bundle_packs(uint64_t payload_bytes, uint64_t scatter_min)
{
    return payload_bytes < scatter_min;
}

/**
 * The chunk a first message of @len bytes is cut into: @eager bytes when it is shorter than
 * BUNDLE_EAGER_CHUNKS of them (and eager > 0), else @limit. It then travels as len / chunk + 1
 * messages, every one of the chunk's size but the last, which is shorter (empty when the chunks
 * divide len): the receiver finds the end there.
 */
static inline uint64_t exchange_bundle_first_chunk(uint64_t len, uint64_t eager, uint64_t limit)
{
    return eager > 0 && len < BUNDLE_EAGER_CHUNKS * eager ? eager : limit;
}

/** The pending requests and the matched-but-unreceived messages of a rank, plus accounting. */
struct bundle_io {
    MPI_Comm comm;
    int rank;
    int threads;                  /* OpenMP threads for copies */
    size_t elem;                  /* bytes per element */
    uint64_t limit;               /* bytes of one MPI call: exchange_chunk_bytes(elem) */
    uint64_t eager;               /* eager chunk of short first messages, bytes (0: none) */
    uint64_t scatter_min;         /* payload bytes from which a bundle goes scattered */
    struct exchange_stats *stats; /* messages, bytes and the largest message are added here */
    MPI_Request *req;             /* sends, until exchange_bundle_wait() */
    size_t nreq, cap_req;
    MPI_Request *rreq; /* receives, until exchange_bundle_wait_recvs() */
    size_t nrreq, cap_rreq;
    MPI_Message *msg; /* first-message chunks matched since the last exchange_bundle_recv() */
    uint64_t *msg_bytes;
    size_t nmsg, cap_msg;
    uint64_t header_bytes; /* header words sent, in bytes */
    uint64_t packed, scattered; /* bundles sent in each form */
};

/**
 * One (source, destination) piece a rank holds or expects: n elements at data; data == NULL
 * with n > 0 is a final piece still waiting inside MPI, from peer under tag.
 */
struct bundle_piece {
    const char *data;
    uint64_t n;
    int peer, tag;
};

/** The bytes of a bundle header of @n counts: one 64-bit word each. */
#define BUNDLE_HEADER_BYTES(n) ((uint64_t)(n) * sizeof(uint64_t))

/** Prepares io for communicating elements of @elem bytes on comm, accounting into stats.
 * Always succeeds. */
void exchange_bundle_init(struct bundle_io *io, MPI_Comm comm, int threads, size_t elem,
                          struct exchange_stats *stats);

/** Releases what exchange_bundle_init() and later calls allocated (not waiting requests). */
void exchange_bundle_free(struct bundle_io *io);

/**
 * Exchanges with two peers at once: sends scount elements from sbuf to dest and receives rcount
 * elements from src into rbuf, both of which the peers know. Each side is cut into chunks of at
 * most the limit; a side with nothing (left) to move uses MPI_PROC_NULL, so an empty side costs
 * no message. One MPI_Sendrecv when both fit the limit. Returns 0 or UTIL_EMPI after reporting.
 */
int exchange_bundle_sendrecv(struct bundle_io *io, const void *sbuf, uint64_t scount, int dest,
                             void *rbuf, uint64_t rcount, int src, int tag);

/**
 * The non-blocking form of exchange_bundle_sendrecv(): posts the receive of rcount elements from
 * src into rbuf and the send of scount elements from sbuf to dest, in the same chunks, for
 * exchange_bundle_wait_recvs() and exchange_bundle_wait(). Returns 0 or a negative error.
 */
int exchange_bundle_post_pair(struct bundle_io *io, const void *sbuf, uint64_t scount, int dest,
                              void *rbuf, uint64_t rcount, int src, int tag);

/** Bytes of staging memory exchange_bundle_send() needs for these n pieces. */
uint64_t exchange_bundle_stage_bytes(const struct bundle_io *io, struct bundle_piece *const *pieces,
                                     size_t n);

/**
 * Sends the bundle of pieces[0..n) (all in memory) to peer under tag: final[i] says piece i is
 * destined to peer itself. stage has room for exchange_bundle_stage_bytes() bytes and, like the
 * pieces' elements, stays untouched until exchange_bundle_wait(). Returns 0 or a negative error
 * after reporting.
 */
int exchange_bundle_send(struct bundle_io *io, int peer, int tag,
                         struct bundle_piece *const *pieces, const unsigned char *final, size_t n,
                         char *stage);

/**
 * Matches every chunk of the first message of the next bundle from peer without receiving it
 * and stores its size in *bytes. Returns 0 or a negative error after reporting.
 */
int exchange_bundle_probe(struct bundle_io *io, int peer, int tag, uint64_t *bytes);

/**
 * Receives every first message matched since the last call into dst, one after the other in
 * the order they were probed (dst needs room for the sum of their sizes). Returns 0 or
 * UTIL_EMPI after reporting.
 */
int exchange_bundle_recv(struct bundle_io *io, char *dst);

/**
 * Bytes of hop buffer the forwarded pieces of a received first message b (@bytes long, header
 * of n counts) will need: their total when it announces scattered pieces, 0 when packed.
 */
uint64_t exchange_bundle_hop_bytes(const struct bundle_io *io, const char *b, uint64_t bytes,
                                   size_t n, const unsigned char *final);

/**
 * Opens a received first message b (@bytes long) of a bundle of n pieces from peer under tag:
 * fills pieces[i]; packed pieces point into b, scattered ones are received (posted now) into
 * *hop, which advances, or, when final[i], left waiting for exchange_bundle_place(). Returns 0,
 * or UTIL_EMPI after reporting a malformed bundle.
 */
int exchange_bundle_open(struct bundle_io *io, const char *b, uint64_t bytes, int peer, int tag,
                         struct bundle_piece *const *pieces, const unsigned char *final, size_t n,
                         char **hop);

/** Waits for every receive posted since the last call. Returns 0 or UTIL_EMPI. */
int exchange_bundle_wait_recvs(struct bundle_io *io);

/**
 * Lays out the result: mine[s] is the piece from source s, s = 0..p-1; copies those in memory
 * and receives the waiting ones straight into recv, source after source, and waits for them.
 * Returns 0 or UTIL_EMPI.
 */
int exchange_bundle_place(struct bundle_io *io, const struct bundle_piece *mine, int p, char *recv);

/** Waits for every send posted so far. Returns 0 or UTIL_EMPI after reporting. */
int exchange_bundle_wait(struct bundle_io *io);

/** Copies @bytes bytes, with up to threads OpenMP threads when the block is large. */
void exchange_bundle_copy(void *dst, const void *src, uint64_t bytes, int threads);

/** A scratch buffer from the kept arena (exchange/arena.h) of its owner, grown without keeping
 * its contents. Zero it and set the owner (the back-end's exchange_ops) to start. */
struct bundle_scratch {
    char *buf;
    size_t bytes;      /* the buffer's size */
    const void *owner; /* whose arena buffers it takes */
};

/**
 * Makes s hold room for at least @bytes (its old contents are lost when it grows). Returns 0;
 * without memory it aborts the job (exchange_abort_midway() on io's communicator), since the
 * peers of a bundle exchange are already waiting for this rank.
 */
int exchange_bundle_reserve(struct bundle_scratch *s, uint64_t bytes, const struct bundle_io *io);

/** Gives the buffer of s back to the arena, for the owner's next exchange. */
void exchange_bundle_release(struct bundle_scratch *s);

/* ---- the cost model of bundles (grid's and hypercube's models) --------------------------- */

/** One bundle as the cost model collects it: payload bytes, pieces (one header count each),
 * non-empty pieces and the largest piece. Zero it to start. The model's transport settings
 * follow the case's element size (exchange_chunk_bytes()). */
struct exchange_bundle_cost {
    uint64_t bytes, pieces, full, largest;
    uint64_t over; /* pieces beyond the eager limit they were added against */
};

/** Adds a piece of @bytes to the bundle @b; @eager is the machine's eager limit (the walk's
 * w->eager; 0: none), for the pieces that would travel scattered by a rendezvous. */
void exchange_bundle_cost_add(struct exchange_bundle_cost *b, uint64_t bytes, uint64_t eager);

/**
 * Prices bundle @b from @src to @dst in the current round of @w as exchange_bundle_send() sends
 * it, with the same settings (SORTEX_SCATTER_MIN, SORTEX_EAGER_BYTES, the int limit): packed,
 * the header and the pieces in one first message; or scattered, the header alone and then every
 * non-empty piece as a message of its own. Clears @b.
 */
void exchange_bundle_cost_send(struct exchange_model_rounds *w, int src, int dst,
                               struct exchange_bundle_cost *b);

/**
 * What exchange_bundle_cost_send() charges for a bundle of @pieces pieces of @piece_bytes each,
 * elements of @elem_bytes: its messages, its bytes (header included), its largest message and
 * how many of its messages exceed @rndv_limit bytes (the machine's eager limit; 0: none).
 * For the equal-blocks models, where every bundle of a round looks alike.
 */
void exchange_bundle_cost_equal(uint64_t pieces, uint64_t piece_bytes, uint64_t elem_bytes,
                                uint64_t rndv_limit, uint64_t *msgs, uint64_t *bytes,
                                uint64_t *largest, uint64_t *rndv);

#endif

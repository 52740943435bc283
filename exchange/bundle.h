/*
 * exchange/bundle.h: the point-to-point transport shared by the pairwise, shift, grid and
 * hypercube back-ends. Internal to exchange/.
 *
 * Two kinds of transfer:
 *   - a chunked MPI_Sendrecv whose sizes both sides know (pairwise, shift);
 *   - a "bundle": a header of per-(source, destination) counts followed by the pieces they
 *     count, sent as one message whose size only the sender knows (grid, hypercube). The
 *     receiver matches it with MPI_Mprobe, learns its size, then receives it: no separate size
 *     message, so a bundle costs one start-up.
 *
 * Every MPI count stays <= exchange_int_limit(): a longer transfer is cut into chunks of exactly
 * `limit` words followed by one shorter chunk (possibly empty), so a receiver that does not know
 * the size finds the end at the first chunk shorter than the limit. Successive MPI_Mprobe calls
 * match a sender's chunks in order (MPI's non-overtaking rule), so every chunk of a bundle is
 * matched before any is received and the whole size is known first.
 */
#ifndef SORTEX_EXCHANGE_BUNDLE_H
#define SORTEX_EXCHANGE_BUNDLE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "exchange/exchange.h"

/** The pending sends and the matched-but-unreceived messages of one step, plus accounting. */
struct bundle_io {
    MPI_Comm comm;
    int rank;
    uint64_t limit;               /* largest count of one MPI call, in keys */
    struct exchange_stats *stats; /* messages, bytes and the largest message are added here */
    MPI_Request *req;             /* sends posted since the last exchange_bundle_wait() */
    size_t nreq, cap_req;
    MPI_Message *msg; /* chunks matched since the last exchange_bundle_recv() */
    uint64_t *msg_words;
    size_t nmsg, cap_msg;
};

/**
 * Prepares io for communicating on comm, accounting into stats. Returns 0 or UTIL_ENOMEM after
 * reporting. Release with exchange_bundle_free() in every case.
 */
int exchange_bundle_init(struct bundle_io *io, MPI_Comm comm, struct exchange_stats *stats);

/** Releases what exchange_bundle_init() and later calls allocated. */
void exchange_bundle_free(struct bundle_io *io);

/**
 * Exchanges with two peers at once: sends scount keys from sbuf to dest and receives rcount
 * keys from src into rbuf, both of which the peers know. Each side is cut into chunks of at most
 * the limit; a side with nothing (left) to move uses MPI_PROC_NULL, so an empty side costs no
 * message. One MPI_Sendrecv when both fit the limit. Returns 0 or UTIL_EMPI after reporting.
 */
int exchange_bundle_sendrecv(struct bundle_io *io, const uint64_t *sbuf, uint64_t scount,
                             int dest, uint64_t *rbuf, uint64_t rcount, int src, int tag);

/**
 * Posts the non-blocking send of words [buf, buf + words) to peer in chunks (see above); buf
 * must stay untouched until exchange_bundle_wait(). Returns 0 or a negative error after
 * reporting.
 */
int exchange_bundle_isend(struct bundle_io *io, const uint64_t *buf, uint64_t words, int peer,
                          int tag);

/** Waits for every send posted since the last call. Returns 0 or UTIL_EMPI after reporting. */
int exchange_bundle_wait(struct bundle_io *io);

/**
 * Matches every chunk of the next bundle from peer without receiving it and stores its size in
 * *words. Returns 0 or a negative error after reporting.
 */
int exchange_bundle_probe(struct bundle_io *io, int peer, int tag, uint64_t *words);

/**
 * Receives every bundle matched since the last call into dst, one after the other in the order
 * they were probed (dst needs room for the sum of their sizes). Returns 0 or UTIL_EMPI.
 */
int exchange_bundle_recv(struct bundle_io *io, uint64_t *dst);

/** Copies n keys, with up to threads OpenMP threads when the block is large. */
void exchange_bundle_copy(uint64_t *dst, const uint64_t *src, uint64_t n, int threads);

/** A scratch buffer of keys from util_alloc_big(), grown without keeping its contents. */
struct bundle_scratch {
    uint64_t *keys;
    uint64_t cap;
};

/**
 * Makes s hold room for at least n keys (its old contents are lost when it grows). Returns 0
 * or UTIL_ENOMEM after reporting with rank.
 */
int exchange_bundle_reserve(struct bundle_scratch *s, uint64_t n, int rank);

/** Frees the buffer of s. */
void exchange_bundle_release(struct bundle_scratch *s);

#endif

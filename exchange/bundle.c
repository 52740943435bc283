/*
 * exchange/bundle.c: chunked point-to-point transport of the pairwise, shift, grid and hypercube
 * back-ends (see bundle.h for the wire rules).
 */
#include "exchange/bundle.h"

#include <stdlib.h>
#include <string.h>

#include "exchange/arena.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

/* Blocks larger than this many bytes are copied by several threads (below it one memcpy is
 * faster). */
#define BUNDLE_PARALLEL_COPY_BYTES ((uint64_t)8 << 20)
/*
 * The payload from which a bundle goes scattered (SORTEX_SCATTER_MIN, 64 KiB by default) and the
 * eager chunk of a short first message (SORTEX_EAGER_BYTES, 4032 bytes by default: Open MPI's
 * shared-memory transport sends up to 4 KiB, its match header included, eagerly and anything
 * longer by a rendezvous, which measured here cost more than a second eager message) come from
 * the knob table (util/knobs.c), as every rank's environment gives them. The eager chunk is
 * rounded down to whole 8-byte words, as it was when messages counted 8-byte keys.
 */
static uint64_t eager_bytes(void)
{
    return util_knob_u64(UTIL_KNOB_EAGER_BYTES) / sizeof(uint64_t) * sizeof(uint64_t);
}

/* Count i of a header at b (any alignment). */
static uint64_t header_get(const char *b, size_t i)
{
    uint64_t v;
    memcpy(&v, b + i * sizeof(uint64_t), sizeof(v));
    return v;
}

void exchange_bundle_init(struct bundle_io *io, MPI_Comm comm, int threads, size_t elem,
                          struct exchange_stats *stats)
{
    memset(io, 0, sizeof(*io));
    io->comm = comm;
    io->threads = threads;
    io->elem = elem > 0 ? elem : 1;
    io->stats = stats;
    io->limit = exchange_chunk_bytes(io->elem);
    uint64_t eager = eager_bytes();
    io->scatter_min = util_knob_u64(UTIL_KNOB_SCATTER_MIN);
    io->eager = eager < io->limit ? eager : 0;
    MPI_Comm_rank(comm, &io->rank);
}

void exchange_bundle_free(struct bundle_io *io)
{
    util_free(io->req);
    util_free(io->rreq);
    util_free(io->msg);
    util_free(io->msg_bytes);
    memset(io, 0, sizeof(*io));
}

/* Accounts one message of `bytes` sent. */
static void count_sent(struct bundle_io *io, uint64_t bytes)
{
    io->stats->messages++;
    io->stats->bytes_sent += bytes;
    io->stats->max_message = bytes > io->stats->max_message ? bytes : io->stats->max_message;
}

int exchange_bundle_sendrecv(struct bundle_io *io, const void *sbuf, uint64_t scount, int dest,
                             void *rbuf, uint64_t rcount, int src, int tag)
{
    uint64_t lim = io->limit, sbytes = scount * io->elem, rbytes = rcount * io->elem;
    uint64_t nsend = (sbytes + lim - 1) / lim, nrecv = (rbytes + lim - 1) / lim;
    uint64_t steps = nsend > nrecv ? nsend : nrecv;
    const char *s = sbuf;
    char *r = rbuf;
    /* Chunk k of each side travels in step k; a side that is done talks to MPI_PROC_NULL.
     * Both peers agree on every chunk's size, so no chunk needs a terminator here. */
    for (uint64_t k = 0; k < steps; k++) {
        uint64_t off = k * lim;
        uint64_t sc = k < nsend ? (sbytes - off < lim ? sbytes - off : lim) : 0;
        uint64_t rc = k < nrecv ? (rbytes - off < lim ? rbytes - off : lim) : 0;
        if (MPI_Sendrecv(s + (k < nsend ? off : 0), (int)sc, MPI_BYTE,
                         k < nsend ? dest : MPI_PROC_NULL, tag, r + (k < nrecv ? off : 0), (int)rc,
                         MPI_BYTE, k < nrecv ? src : MPI_PROC_NULL, tag, io->comm,
                         MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Sendrecv with %d and %d failed",
                             io->rank, dest, src);
        }
        if (k < nsend) {
            count_sent(io, sc);
        }
    }
    io->stats->bytes_recv += rbytes;
    return UTIL_OK;
}

/* Makes room for `need` requests in *arr (capacity *cap); aborts without memory (peers are
 * already in the exchange). */
static int reserve_reqs(MPI_Request **arr, size_t *cap, size_t need, MPI_Comm comm, int rank)
{
    if (need <= *cap) {
        return UTIL_OK;
    }
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        ncap *= 2;
    }
    MPI_Request *r = util_realloc(*arr, ncap * sizeof(*r));
    if (r == NULL) {
        exchange_abort_midway(comm, rank, "out of memory for requests");
    }
    *arr = r;
    *cap = ncap;
    return UTIL_OK;
}

/* Posts the sends of bytes [buf, buf + bytes) to peer: exact chunks of at most the limit, plus,
 * when `terminated`, an ending chunk shorter than the chunk size (empty if need be) so that a
 * receiver that does not know the size finds the end. A terminated message shorter than
 * BUNDLE_EAGER_CHUNKS eager chunks is cut into eager chunks instead (bundle.h). */
static int isend_chunks(struct bundle_io *io, const char *buf, uint64_t bytes, int peer, int tag,
                        int terminated)
{
    uint64_t lim =
        terminated ? exchange_bundle_first_chunk(bytes, io->eager, io->limit) : io->limit;
    uint64_t nchunks = terminated ? bytes / lim + 1 : (bytes + lim - 1) / lim;
    int err = reserve_reqs(&io->req, &io->cap_req, io->nreq + nchunks, io->comm, io->rank);
    if (err != UTIL_OK) {
        return err;
    }
    for (uint64_t k = 0; k < nchunks; k++) {
        uint64_t off = k * lim;
        uint64_t c = bytes - off < lim ? bytes - off : lim;
        if (MPI_Isend(buf + off, (int)c, MPI_BYTE, peer, tag, io->comm, &io->req[io->nreq]) !=
            MPI_SUCCESS) {
            return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Isend to %d failed", io->rank,
                             peer);
        }
        io->nreq++;
        count_sent(io, c);
    }
    return UTIL_OK;
}

/* Posts the receives of exactly `bytes` from peer into buf, in the sender's chunks. */
static int irecv_chunks(struct bundle_io *io, char *buf, uint64_t bytes, int peer, int tag)
{
    uint64_t lim = io->limit;
    uint64_t nchunks = (bytes + lim - 1) / lim;
    int err = reserve_reqs(&io->rreq, &io->cap_rreq, io->nrreq + nchunks, io->comm,
                           io->rank);
    if (err != UTIL_OK) {
        return err;
    }
    for (uint64_t k = 0; k < nchunks; k++) {
        uint64_t off = k * lim;
        uint64_t c = bytes - off < lim ? bytes - off : lim;
        if (MPI_Irecv(buf + off, (int)c, MPI_BYTE, peer, tag, io->comm, &io->rreq[io->nrreq]) !=
            MPI_SUCCESS) {
            return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Irecv from %d failed", io->rank,
                             peer);
        }
        io->nrreq++;
    }
    io->stats->bytes_recv += bytes;
    return UTIL_OK;
}

int exchange_bundle_post_pair(struct bundle_io *io, const void *sbuf, uint64_t scount, int dest,
                              void *rbuf, uint64_t rcount, int src, int tag)
{
    int err = irecv_chunks(io, rbuf, rcount * io->elem, src, tag);
    return err == UTIL_OK ? isend_chunks(io, sbuf, scount * io->elem, dest, tag, 0) : err;
}

/* Whether pieces with this payload (elements) travel packed. */
static int packed(const struct bundle_io *io, uint64_t payload)
{
    return exchange_bundle_packs(payload * io->elem, io->scatter_min);
}

uint64_t exchange_bundle_stage_bytes(const struct bundle_io *io, struct bundle_piece *const *pieces,
                                     size_t n)
{
    uint64_t payload = 0;
    for (size_t i = 0; i < n; i++) {
        payload += pieces[i]->n;
    }
    return BUNDLE_HEADER_BYTES(n) + (packed(io, payload) ? payload * io->elem : 0);
}

int exchange_bundle_send(struct bundle_io *io, int peer, int tag,
                         struct bundle_piece *const *pieces, const unsigned char *final, size_t n,
                         char *stage)
{
    uint64_t payload = 0;
    char *w = stage;
    for (size_t i = 0; i < n; i++) {
        memcpy(w, &pieces[i]->n, sizeof(uint64_t));
        w += sizeof(uint64_t);
        payload += pieces[i]->n;
    }
    io->header_bytes += BUNDLE_HEADER_BYTES(n);
    if (packed(io, payload)) {
        /* Header and elements in one message. */
        for (size_t i = 0; i < n; i++) {
            exchange_bundle_copy(w, pieces[i]->data, pieces[i]->n * io->elem, io->threads);
            w += pieces[i]->n * io->elem;
        }
        io->packed++;
        return isend_chunks(io, stage, (uint64_t)(w - stage), peer, tag, 1);
    }
    /* The header, then each piece from where it is. */
    int err = isend_chunks(io, stage, BUNDLE_HEADER_BYTES(n), peer, tag, 1);
    for (size_t i = 0; i < n && err == UTIL_OK; i++) {
        if (pieces[i]->n > 0) {
            err = isend_chunks(io, pieces[i]->data, pieces[i]->n * io->elem, peer,
                               tag + 1 + !!final[i], 0);
        }
    }
    io->scattered++;
    return err;
}

/* Makes room for `need` matched messages and their sizes. */
static int reserve_msgs(struct bundle_io *io, size_t need)
{
    if (need <= io->cap_msg) {
        return UTIL_OK;
    }
    size_t cap = io->cap_msg ? 2 * io->cap_msg : 16;
    MPI_Message *m = util_realloc(io->msg, cap * sizeof(*m));
    if (m != NULL) {
        io->msg = m;
    }
    uint64_t *w = m != NULL ? util_realloc(io->msg_bytes, cap * sizeof(*w)) : NULL;
    if (w == NULL) {
        exchange_abort_midway(io->comm, io->rank, "out of memory for matched messages");
    }
    io->msg_bytes = w;
    io->cap_msg = cap;
    return UTIL_OK;
}

int exchange_bundle_probe(struct bundle_io *io, int peer, int tag, uint64_t *bytes)
{
    uint64_t total = 0, chunk = 0; /* chunk: the message's chunk size, told by its first */
    for (;;) {
        MPI_Status st;
        int count = 0;
        int err = reserve_msgs(io, io->nmsg + 1);
        if (err != UTIL_OK) {
            return err;
        }
        if (MPI_Mprobe(peer, tag, io->comm, &io->msg[io->nmsg], &st) != MPI_SUCCESS ||
            MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count < 0) {
            return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Mprobe from %d failed", io->rank,
                             peer);
        }
        io->msg_bytes[io->nmsg++] = (uint64_t)count;
        total += (uint64_t)count;
        if (chunk == 0) {
            chunk = io->eager > 0 && (uint64_t)count == io->eager ? io->eager : io->limit;
        }
        if ((uint64_t)count != chunk) {
            break; /* the short chunk ends the message */
        }
    }
    *bytes = total;
    return UTIL_OK;
}

int exchange_bundle_recv(struct bundle_io *io, char *dst)
{
    uint64_t off = 0;
    for (size_t i = 0; i < io->nmsg; i++) {
        if (MPI_Mrecv(dst + off, (int)io->msg_bytes[i], MPI_BYTE, &io->msg[i], MPI_STATUS_IGNORE) !=
            MPI_SUCCESS) {
            io->nmsg = 0;
            return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Mrecv failed", io->rank);
        }
        off += io->msg_bytes[i];
    }
    io->stats->bytes_recv += off;
    io->nmsg = 0;
    return UTIL_OK;
}

uint64_t exchange_bundle_hop_bytes(const struct bundle_io *io, const char *b, uint64_t bytes,
                                   size_t n, const unsigned char *final)
{
    uint64_t hop = 0;
    if (bytes != BUNDLE_HEADER_BYTES(n)) {
        return 0; /* packed (or malformed: exchange_bundle_open() reports it) */
    }
    for (size_t i = 0; i < n; i++) {
        hop += final[i] ? 0 : header_get(b, i) * io->elem;
    }
    return hop;
}

int exchange_bundle_open(struct bundle_io *io, const char *b, uint64_t bytes, int peer, int tag,
                         struct bundle_piece *const *pieces, const unsigned char *final, size_t n,
                         char **hop)
{
    uint64_t payload = 0, header = BUNDLE_HEADER_BYTES(n);
    for (size_t i = 0; i < n && bytes >= header; i++) {
        payload += header_get(b, i);
    }
    int is_packed = bytes > header;
    if (bytes < header || (is_packed && bytes - header != payload * io->elem)) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: malformed bundle from %d (%llu bytes)",
                         io->rank, peer, (unsigned long long)bytes);
    }
    const char *data = b + header;
    for (size_t i = 0; i < n; i++) {
        struct bundle_piece *pc = pieces[i];
        pc->n = header_get(b, i);
        pc->peer = peer;
        pc->tag = tag + 2;
        if (is_packed || pc->n == 0) {
            pc->data = data; /* inside the message (any pointer will do when empty) */
            data += is_packed ? pc->n * io->elem : 0;
        } else if (final[i]) {
            pc->data = NULL; /* waits inside MPI for exchange_bundle_place() */
        } else {
            int err = irecv_chunks(io, *hop, pc->n * io->elem, peer, tag + 1);
            if (err != UTIL_OK) {
                return err;
            }
            pc->data = *hop;
            *hop += pc->n * io->elem;
        }
    }
    return UTIL_OK;
}

int exchange_bundle_wait_recvs(struct bundle_io *io)
{
    int rc = MPI_Waitall((int)io->nrreq, io->rreq, MPI_STATUSES_IGNORE);
    io->nrreq = 0;
    if (rc != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Waitall of receives failed",
                         io->rank);
    }
    return UTIL_OK;
}

int exchange_bundle_place(struct bundle_io *io, const struct bundle_piece *mine, int p, char *recv)
{
    uint64_t off = 0, e = io->elem;
    int err = UTIL_OK;
    /* Waiting pieces first, so that their transfers overlap the copies of the others. */
    for (int s = 0; s < p && err == UTIL_OK; s++) {
        if (mine[s].data == NULL && mine[s].n > 0) {
            err = irecv_chunks(io, recv + off, mine[s].n * e, mine[s].peer, mine[s].tag);
        }
        off += mine[s].n * e;
    }
    off = 0;
    for (int s = 0; s < p && err == UTIL_OK; s++) {
        if (mine[s].data != NULL) {
            exchange_bundle_copy(recv + off, mine[s].data, mine[s].n * e, io->threads);
        }
        off += mine[s].n * e;
    }
    return err == UTIL_OK ? exchange_bundle_wait_recvs(io) : err;
}

int exchange_bundle_wait(struct bundle_io *io)
{
    int rc = MPI_Waitall((int)io->nreq, io->req, MPI_STATUSES_IGNORE);
    io->nreq = 0;
    if (rc != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Waitall of sends failed", io->rank);
    }
    return UTIL_OK;
}

void exchange_bundle_copy(void *dst, const void *src, uint64_t bytes, int threads)
{
    char *d = dst;
    const char *s = src;
    if (bytes < BUNDLE_PARALLEL_COPY_BYTES || threads <= 1) {
        if (bytes > 0) {
            util_copy(d, s, bytes);
        }
        return;
    }
    /* Equal contiguous slices, one per thread. */
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; t++) {
        uint64_t lo = bytes * (uint64_t)t / (uint64_t)threads;
        uint64_t hi = bytes * (uint64_t)(t + 1) / (uint64_t)threads;
        util_copy(d + lo, s + lo, hi - lo);
    }
}

int exchange_bundle_reserve(struct bundle_scratch *s, uint64_t bytes, const struct bundle_io *io)
{
    if (s->buf != NULL && s->bytes >= bytes) {
        return UTIL_OK;
    }
    exchange_bundle_release(s);
    if (bytes <= SIZE_MAX) {
        s->buf = exchange_arena_take(s->owner, (size_t)bytes, &s->bytes, NULL);
    }
    if (s->buf == NULL) {
        char what[96];
        (void)snprintf(what, sizeof(what), "out of memory for %llu scratch bytes",
                       (unsigned long long)bytes);
        exchange_abort_midway(io->comm, io->rank, what);
    }
    return UTIL_OK;
}

void exchange_bundle_release(struct bundle_scratch *s)
{
    exchange_arena_give(s->buf, s->bytes);
    s->buf = NULL;
    s->bytes = 0;
}

/* ---- the cost model ------------------------------------------------------------------------- */

void exchange_bundle_cost_add(struct exchange_bundle_cost *b, uint64_t bytes, uint64_t eager)
{
    b->over += eager > 0 && bytes > eager;
    b->bytes += bytes;
    b->pieces++;
    b->full += bytes > 0;
    b->largest = exchange_model_max(b->largest, bytes);
}

/* Prices the first message of a bundle, @b bytes, cut as isend_chunks() cuts it. */
static void cost_first(struct exchange_model_rounds *w, int src, int dst, uint64_t b)
{
    /* The transport's settings for the case's elements, as exchange_bundle_init() takes them. */
    uint64_t limit = exchange_chunk_bytes(w->c->elem_bytes), eager = eager_bytes();
    uint64_t chunk = exchange_bundle_first_chunk(b, eager < limit ? eager : 0, limit);
    for (; b >= chunk; b -= chunk) {
        exchange_model_rounds_msg(w, src, dst, chunk);
    }
    exchange_model_rounds_msg(w, src, dst, b); /* the shorter last chunk, empty or not */
}

/* The messages cost_first() charges for a first message of @b bytes, and the largest. */
static uint64_t first_chunks(uint64_t b, uint64_t elem_bytes, uint64_t *largest)
{
    uint64_t limit = exchange_chunk_bytes(elem_bytes), eager = eager_bytes();
    uint64_t chunk = exchange_bundle_first_chunk(b, eager < limit ? eager : 0, limit);
    *largest = b >= chunk ? chunk : b;
    return b / chunk + 1; /* whole chunks, then the shorter last one, empty or not */
}

/* Of the messages cost_first() charges for a first message of @b bytes, those beyond
 * @rndv_limit bytes (0: none). */
static uint64_t first_chunks_over(uint64_t b, uint64_t elem_bytes, uint64_t rndv_limit)
{
    uint64_t limit = exchange_chunk_bytes(elem_bytes), eager = eager_bytes();
    uint64_t chunk = exchange_bundle_first_chunk(b, eager < limit ? eager : 0, limit);
    if (rndv_limit == 0) {
        return 0;
    }
    return (chunk > rndv_limit ? b / chunk : 0) + (b % chunk > rndv_limit);
}

void exchange_bundle_cost_equal(uint64_t pieces, uint64_t piece_bytes, uint64_t elem_bytes,
                                uint64_t rndv_limit, uint64_t *msgs, uint64_t *bytes,
                                uint64_t *largest, uint64_t *rndv)
{
    uint64_t header = BUNDLE_HEADER_BYTES(pieces), payload = pieces * piece_bytes;
    *bytes = header + payload;
    if (exchange_bundle_packs(payload, util_knob_u64(UTIL_KNOB_SCATTER_MIN))) {
        *msgs = first_chunks(header + payload, elem_bytes, largest);
        *rndv = first_chunks_over(header + payload, elem_bytes, rndv_limit);
    } else {
        *msgs = first_chunks(header, elem_bytes, largest) + (piece_bytes > 0 ? pieces : 0);
        *largest = exchange_model_max(*largest, piece_bytes);
        *rndv = first_chunks_over(header, elem_bytes, rndv_limit) +
                (rndv_limit > 0 && piece_bytes > rndv_limit ? pieces : 0);
    }
}

void exchange_bundle_cost_send(struct exchange_model_rounds *w, int src, int dst,
                               struct exchange_bundle_cost *b)
{
    uint64_t header = BUNDLE_HEADER_BYTES(b->pieces); /* one count per piece */
    if (exchange_bundle_packs(b->bytes, util_knob_u64(UTIL_KNOB_SCATTER_MIN))) {
        cost_first(w, src, dst, header + b->bytes);
        /* Packed: the sender copies the pieces in, the receiver copies them out. */
        exchange_model_rounds_copy(w, src, b->bytes);
        exchange_model_rounds_copy(w, dst, b->bytes);
    } else {
        cost_first(w, src, dst, header);
        /* The pieces as messages of their own: their bytes and start-ups at once. */
        w->sent[src] += b->bytes;
        w->recv[dst] += b->bytes;
        w->msgs[src] += b->full;
        w->rndv[src] += b->over;
        w->total_msgs[src] += b->full;
        w->r->bytes_moved += b->bytes;
        w->r->max_message = exchange_model_max(w->r->max_message, b->largest);
    }
    memset(b, 0, sizeof(*b));
}

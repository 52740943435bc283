/*
 * exchange/bundle.c: chunked point-to-point transport of the pairwise, shift, grid and hypercube
 * back-ends (see bundle.h for the wire rules).
 */
#include "exchange/bundle.h"

#include <string.h>

#include "util/alloc.h"
#include "util/util.h"

/* Blocks larger than this are copied by several threads (below it one memcpy is faster). */
#define BUNDLE_PARALLEL_COPY_KEYS (1u << 20)

int exchange_bundle_init(struct bundle_io *io, MPI_Comm comm, struct exchange_stats *stats)
{
    memset(io, 0, sizeof(*io));
    io->comm = comm;
    io->stats = stats;
    io->limit = exchange_int_limit();
    MPI_Comm_rank(comm, &io->rank);
    return UTIL_OK;
}

void exchange_bundle_free(struct bundle_io *io)
{
    util_free(io->req);
    util_free(io->msg);
    util_free(io->msg_words);
    memset(io, 0, sizeof(*io));
}

/* Accounts one message of `words` keys sent. */
static void count_sent(struct bundle_io *io, uint64_t words)
{
    uint64_t bytes = words * sizeof(uint64_t);
    io->stats->messages++;
    io->stats->bytes_sent += bytes;
    io->stats->max_message = bytes > io->stats->max_message ? bytes : io->stats->max_message;
}

int exchange_bundle_sendrecv(struct bundle_io *io, const uint64_t *sbuf, uint64_t scount,
                             int dest, uint64_t *rbuf, uint64_t rcount, int src, int tag)
{
    uint64_t lim = io->limit;
    uint64_t nsend = (scount + lim - 1) / lim, nrecv = (rcount + lim - 1) / lim;
    uint64_t steps = nsend > nrecv ? nsend : nrecv;
    /* Chunk k of each side travels in step k; a side that is done talks to MPI_PROC_NULL.
     * Both peers agree on every chunk's size, so no chunk needs a terminator here. */
    for (uint64_t k = 0; k < steps; k++) {
        uint64_t off = k * lim;
        uint64_t sc = k < nsend ? (scount - off < lim ? scount - off : lim) : 0;
        uint64_t rc = k < nrecv ? (rcount - off < lim ? rcount - off : lim) : 0;
        if (MPI_Sendrecv(sbuf + (k < nsend ? off : 0), (int)sc, MPI_UINT64_T,
                         k < nsend ? dest : MPI_PROC_NULL, tag, rbuf + (k < nrecv ? off : 0),
                         (int)rc, MPI_UINT64_T, k < nrecv ? src : MPI_PROC_NULL, tag, io->comm,
                         MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Sendrecv with %d and %d failed",
                             io->rank, dest, src);
        }
        if (k < nsend) {
            count_sent(io, sc);
        }
    }
    io->stats->bytes_recv += rcount * sizeof(uint64_t);
    return UTIL_OK;
}

/* Makes room for `need` pending send requests. */
static int reserve_reqs(struct bundle_io *io, size_t need)
{
    if (need <= io->cap_req) {
        return UTIL_OK;
    }
    size_t cap = io->cap_req ? io->cap_req : 16;
    while (cap < need) {
        cap *= 2;
    }
    MPI_Request *r = util_realloc(io->req, cap * sizeof(*r));
    if (r == NULL) {
        return util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory for %zu requests",
                         io->rank, cap);
    }
    io->req = r;
    io->cap_req = cap;
    return UTIL_OK;
}

int exchange_bundle_isend(struct bundle_io *io, const uint64_t *buf, uint64_t words, int peer,
                          int tag)
{
    uint64_t lim = io->limit;
    /* words / lim full chunks, then the short one that marks the end (empty if need be). */
    uint64_t nchunks = words / lim + 1;
    int err = reserve_reqs(io, io->nreq + nchunks);
    if (err != UTIL_OK) {
        return err;
    }
    for (uint64_t k = 0; k < nchunks; k++) {
        uint64_t off = k * lim;
        uint64_t c = words - off < lim ? words - off : lim;
        if (MPI_Isend(buf + off, (int)c, MPI_UINT64_T, peer, tag, io->comm,
                      &io->req[io->nreq]) != MPI_SUCCESS) {
            return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Isend to %d failed", io->rank,
                             peer);
        }
        io->nreq++;
        count_sent(io, c);
    }
    return UTIL_OK;
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
    uint64_t *w = m != NULL ? util_realloc(io->msg_words, cap * sizeof(*w)) : NULL;
    if (w == NULL) {
        return util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory for %zu messages",
                         io->rank, cap);
    }
    io->msg_words = w;
    io->cap_msg = cap;
    return UTIL_OK;
}

int exchange_bundle_probe(struct bundle_io *io, int peer, int tag, uint64_t *words)
{
    uint64_t total = 0;
    for (;;) {
        MPI_Status st;
        int count = 0;
        int err = reserve_msgs(io, io->nmsg + 1);
        if (err != UTIL_OK) {
            return err;
        }
        if (MPI_Mprobe(peer, tag, io->comm, &io->msg[io->nmsg], &st) != MPI_SUCCESS ||
            MPI_Get_count(&st, MPI_UINT64_T, &count) != MPI_SUCCESS || count < 0) {
            return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Mprobe from %d failed", io->rank,
                             peer);
        }
        io->msg_words[io->nmsg++] = (uint64_t)count;
        total += (uint64_t)count;
        if ((uint64_t)count < io->limit) {
            break; /* the short chunk ends the bundle */
        }
    }
    *words = total;
    return UTIL_OK;
}

int exchange_bundle_recv(struct bundle_io *io, uint64_t *dst)
{
    uint64_t off = 0;
    for (size_t i = 0; i < io->nmsg; i++) {
        if (MPI_Mrecv(dst + off, (int)io->msg_words[i], MPI_UINT64_T, &io->msg[i],
                      MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            io->nmsg = 0;
            return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Mrecv failed", io->rank);
        }
        off += io->msg_words[i];
    }
    io->stats->bytes_recv += off * sizeof(uint64_t);
    io->nmsg = 0;
    return UTIL_OK;
}

void exchange_bundle_copy(uint64_t *dst, const uint64_t *src, uint64_t n, int threads)
{
    if (n < BUNDLE_PARALLEL_COPY_KEYS || threads <= 1) {
        memcpy(dst, src, n * sizeof(uint64_t));
        return;
    }
    /* Equal contiguous slices, one per thread. */
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; t++) {
        uint64_t lo = n * (uint64_t)t / (uint64_t)threads;
        uint64_t hi = n * (uint64_t)(t + 1) / (uint64_t)threads;
        memcpy(dst + lo, src + lo, (hi - lo) * sizeof(uint64_t));
    }
}

int exchange_bundle_reserve(struct bundle_scratch *s, uint64_t n, int rank)
{
    if (s->keys != NULL && s->cap >= n) {
        return UTIL_OK;
    }
    util_free_big(s->keys);
    s->cap = 0;
    s->keys = n <= SIZE_MAX / sizeof(uint64_t) ? util_alloc_big(n * sizeof(uint64_t)) : NULL;
    if (s->keys == NULL) {
        return util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory for %llu scratch keys",
                         rank, (unsigned long long)n);
    }
    s->cap = n;
    return UTIL_OK;
}

void exchange_bundle_release(struct bundle_scratch *s)
{
    util_free_big(s->keys);
    s->keys = NULL;
    s->cap = 0;
}

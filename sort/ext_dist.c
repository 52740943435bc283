/*
 * sort/ext_dist.c: a distribution pass of the external sort (see sort/ext.h).
 *
 * The stream is read in rounds of one chunk, the next chunk's read in flight while this one is
 * worked on (util/aio.h). Each round: the chunk's elements are classified against the
 * splitters and grouped by bucket (a counting sort); with the exchange, the buckets of rank d
 * go to rank d through the job's back-end, the per-bucket counts by one MPI_Alltoall before
 * them, and every rank appends what it receives to its own buckets, whose full buffers the
 * I/O threads write while the next round runs. Without the exchange (a bucket split on its own
 * rank) the grouped chunk goes straight to the buckets.
 *
 * A round's exchange lands in a buffer of room->recv_cap elements. When the chunks of a round
 * would bring a rank more than that (input made of sorted runs sends every rank's chunk to the
 * same rank at once), the round is sent in sub-rounds in which each rank sends every other at
 * most recv_cap / P elements, so no rank ever receives more than its buffer holds: the memory
 * stays within the budget whatever the input, at the price of more rounds for such inputs.
 */
#include <errno.h>
#include <string.h>

#include "sort/ext.h"
#include "util/alloc.h"
#include "util/util.h"
#include "verify/verify.h"

/* The state of one pass. */
struct dist {
    struct sort_job *job;
    const struct ext_source *src;
    const struct ext_splitters *sp;
    struct ext_store *dst;
    size_t rsize;
    uint64_t chunk;
    unsigned char *rbuf[2];
    struct util_aio_req *rreq[2]; /* the reads in flight into rbuf[i] */
    uint64_t rreqs[2], rcap;
    uint32_t *ids;
    int map;            /* the keys go to their order's encoding as they are read */
    unsigned char *sbuf;
    uint64_t *counts;   /* [nb] this round's elements a bucket */
    uint64_t *start;    /* [nb + 1] where each bucket starts in sbuf */
    /* Exchange. */
    int exchange;
    uint64_t q;         /* buckets a rank */
    uint64_t recv_cap;
    unsigned char *rrecv;
    unsigned char *stage;
    uint64_t *recv_bc;  /* [P * q] what each source sends into each of my buckets */
    uint64_t *send_n, *recv_n; /* [P] */
    uint64_t *sent, *got;      /* [P] sub-rounds: sent to, received from */
    uint64_t *cur_b, *cur_off; /* [P] receive cursor: bucket and offset within it */
};

/* Reads of chunk @c into buffer @i, queued. */
static int start_read(struct dist *d, uint64_t c, int i)
{
    const struct ext_source *s = d->src;
    uint64_t first = c * d->chunk;
    uint64_t count = s->n - first < d->chunk ? s->n - first : d->chunk;
    d->rreqs[i] = 0;
    if (s->fd >= 0) {
        d->rreq[i][0] = (struct util_aio_req){.op = UTIL_AIO_READ, .fd = s->fd,
                                              .buf = d->rbuf[i], .len = count * d->rsize,
                                              .offset = s->file_offset + first * d->rsize};
        util_aio_submit(d->dst->aio, &d->rreq[i][0]);
        d->rreqs[i] = 1;
        return UTIL_OK;
    }
    return ext_store_read(s->store, s->bucket, first, count, d->rbuf[i], d->rreq[i],
                          &d->rreqs[i]);
}

static int wait_read(struct dist *d, int i)
{
    int first = 0;
    for (uint64_t r = 0; r < d->rreqs[i]; r++) {
        int e = util_aio_wait(d->dst->aio, &d->rreq[i][r]);
        first = first ? first : e;
    }
    d->rreqs[i] = 0;
    return first;
}

/* Appends what arrived from source @s (@n elements at @p) to its buckets, from the cursor. */
static int take_from(struct dist *d, int s, const unsigned char *p, uint64_t n)
{
    struct sort_job *job = d->job;
    const uint64_t *bc = d->recv_bc + (size_t)s * d->q;
    while (n > 0) {
        uint64_t b = d->cur_b[s];
        uint64_t left = bc[b] - d->cur_off[s];
        if (left == 0) {
            d->cur_b[s]++;
            d->cur_off[s] = 0;
            continue;
        }
        uint64_t take = left < n ? left : n;
        int err = ext_store_append(d->dst, job->rank, b, p, take, (uint32_t)s);
        if (err != UTIL_OK) {
            return err;
        }
        d->cur_off[s] += take;
        p += take * d->rsize;
        n -= take;
    }
    return UTIL_OK;
}

/* Runs the back-end on @send (grouped by destination, d->send_n) into d->rrecv, receiving
 * d->recv_n, and appends. */
static int exchange_once(struct dist *d, const unsigned char *send, const uint64_t *send_n,
                         uint64_t *recv_n)
{
    struct sort_job *job = d->job;
    struct exchange_stats st;
    memset(&st, 0, sizeof(st));
    struct exchange_args args = {
        .comm = job->comm,
        .threads = job->threads,
        .elem_size = d->rsize,
        .send = send,
        .send_counts = send_n,
        .recv = d->rrecv,
        .recv_cap = d->recv_cap,
        .recv_counts = recv_n,
        .stats = &st,
        .recv_counts_known = 1,
    };
    int err = job->size > 1 ? job->exchange->run(&args) : UTIL_OK;
    if (job->size == 1) {
        memcpy(d->rrecv, send, send_n[0] * d->rsize);
    }
    struct sortex_exchange_stats *x = &job->stats->exchange;
    x->bytes_sent += st.bytes_sent;
    x->bytes_recv += st.bytes_recv;
    x->messages += st.messages;
    x->rounds += st.rounds;
    x->max_message = st.max_message > x->max_message ? st.max_message : x->max_message;
    x->seconds += st.seconds;
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        return err;
    }
    const unsigned char *p = d->rrecv;
    for (int s = 0; s < job->size && err == UTIL_OK; s++) {
        err = take_from(d, s, p, recv_n[s]);
        p += recv_n[s] * d->rsize;
    }
    return err;
}

/* The exchange of one round's grouped chunk (d->sbuf, d->counts). Collective. */
static int exchange_round(struct dist *d)
{
    struct sort_job *job = d->job;
    const int p = job->size;
    const uint64_t q = d->q;
    MPI_Alltoall(d->counts, (int)q, MPI_UINT64_T, d->recv_bc, (int)q, MPI_UINT64_T, job->comm);
    uint64_t inflow = 0;
    for (int r = 0; r < p; r++) {
        d->send_n[r] = 0;
        d->recv_n[r] = 0;
        for (uint64_t b = 0; b < q; b++) {
            d->send_n[r] += d->counts[(size_t)r * q + b];
            d->recv_n[r] += d->recv_bc[(size_t)r * q + b];
        }
        inflow += d->recv_n[r];
        d->cur_b[r] = 0;
        d->cur_off[r] = 0;
    }
    /* Sub-rounds when some rank would receive more than its buffer: each sends each at most
     * quota a sub-round, and all agree how many sub-rounds that takes. */
    uint64_t quota = d->recv_cap / (uint64_t)p > 0 ? d->recv_cap / (uint64_t)p : 1;
    uint64_t subs = inflow > d->recv_cap;
    MPI_Allreduce(MPI_IN_PLACE, &subs, 1, MPI_UINT64_T, MPI_MAX, job->comm);
    if (subs == 0) {
        return exchange_once(d, d->sbuf, d->send_n, d->recv_n);
    }
    subs = 0;
    for (int r = 0; r < p; r++) {
        uint64_t k = (d->send_n[r] + quota - 1) / quota;
        subs = k > subs ? k : subs;
        d->sent[r] = 0;
        d->got[r] = 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &subs, 1, MPI_UINT64_T, MPI_MAX, job->comm);
    uint64_t *sn = d->send_n + p, *rn = d->recv_n + p; /* this sub-round's */
    int err = UTIL_OK;
    for (uint64_t k = 0; k < subs && err == UTIL_OK; k++) {
        unsigned char *w = d->stage;
        uint64_t base = 0;
        for (int r = 0; r < p; r++) {
            uint64_t left = d->send_n[r] - d->sent[r];
            sn[r] = left < quota ? left : quota;
            memcpy(w, d->sbuf + (base + d->sent[r]) * d->rsize, sn[r] * d->rsize);
            w += sn[r] * d->rsize;
            d->sent[r] += sn[r];
            base += d->send_n[r];
            uint64_t in = d->recv_n[r] - d->got[r];
            rn[r] = in < quota ? in : quota;
            d->got[r] += rn[r];
        }
        err = exchange_once(d, d->stage, sn, rn);
    }
    return err;
}

/* The checksum of @n elements of the input as read (file encoding), for --check. */
static void add_checksum(const struct dist *d, const unsigned char *e, uint64_t n, uint64_t *sum)
{
    struct verify_checksum c = d->job->fmt != NULL
                                   ? verify_checksum_records(e, n, d->rsize)
                                   : verify_checksum_keys((const uint64_t *)(const void *)e, n);
    sum[0] += c.count;
    sum[1] += c.xxh3;
    sum[2] += c.xxh64;
}

/* Groups the chunk at @e (@n elements, ids known) by bucket into d->sbuf. */
static void group(struct dist *d, const unsigned char *e, uint64_t n)
{
    const uint64_t nb = d->sp->nb;
    d->start[0] = 0;
    for (uint64_t b = 0; b < nb; b++) {
        d->start[b + 1] = d->start[b] + d->counts[b];
    }
    /* start[] is consumed as the write cursor and rebuilt after. */
    if (d->rsize == 8) {
        const uint64_t *k = (const uint64_t *)(const void *)e;
        uint64_t *o = (uint64_t *)(void *)d->sbuf;
        for (uint64_t i = 0; i < n; i++) {
            o[d->start[d->ids[i]]++] = k[i];
        }
    } else {
        for (uint64_t i = 0; i < n; i++) {
            memcpy(d->sbuf + d->start[d->ids[i]]++ * d->rsize, e + i * d->rsize, d->rsize);
        }
    }
    d->start[0] = 0;
    for (uint64_t b = 0; b < nb; b++) {
        d->start[b + 1] = d->start[b] + d->counts[b];
    }
}

static void dist_free(struct dist *d)
{
    for (int i = 0; i < 2; i++) {
        util_free_big(d->rbuf[i]);
        util_free(d->rreq[i]);
    }
    util_free_big(d->ids);
    util_free_big(d->sbuf);
    util_free_big(d->rrecv);
    util_free_big(d->stage);
    util_free(d->counts);
    util_free(d->start);
    util_free(d->recv_bc);
    util_free(d->send_n);
    util_free(d->recv_n);
    util_free(d->sent);
    util_free(d->got);
    util_free(d->cur_b);
    util_free(d->cur_off);
}

/* The pass's buffers: the reads', the classification's and, with the exchange, the exchange's;
 * with the exchange the ranks agree that every one got them. */
static int dist_alloc(struct dist *d)
{
    struct sort_job *job = d->job;
    const uint64_t nb = d->sp->nb;
    const size_t p = (size_t)job->size;
    int err = UTIL_OK;
    for (int i = 0; i < 2; i++) {
        d->rbuf[i] = util_alloc_big(d->chunk * d->rsize);
        d->rreq[i] = util_calloc(d->rcap, sizeof(struct util_aio_req));
    }
    d->ids = util_alloc_big(d->chunk * sizeof(uint32_t));
    d->sbuf = util_alloc_big(d->chunk * d->rsize);
    d->counts = util_calloc(nb, sizeof(uint64_t));
    d->start = util_calloc(nb + 1, sizeof(uint64_t));
    int ok = d->rbuf[0] && d->rbuf[1] && d->rreq[0] && d->rreq[1] && d->ids && d->sbuf &&
             d->counts && d->start;
    if (d->exchange) {
        d->rrecv = util_alloc_big(d->recv_cap * d->rsize);
        d->stage = util_alloc_big(d->recv_cap * d->rsize);
        d->recv_bc = util_calloc(p * d->q, sizeof(uint64_t));
        d->send_n = util_calloc(2 * p, sizeof(uint64_t));
        d->recv_n = util_calloc(2 * p, sizeof(uint64_t));
        d->sent = util_calloc(p, sizeof(uint64_t));
        d->got = util_calloc(p, sizeof(uint64_t));
        d->cur_b = util_calloc(p, sizeof(uint64_t));
        d->cur_off = util_calloc(p, sizeof(uint64_t));
        ok = ok && d->rrecv && d->stage && d->recv_bc && d->send_n && d->recv_n && d->sent &&
             d->got && d->cur_b && d->cur_off;
    }
    if (!ok) {
        err = util_fail(UTIL_ENOMEM,
                        "rank %d: external: out of memory for the distribution's "
                        "buffers",
                        job->rank);
    }
    if (d->exchange) {
        err = sort_agree(job, err);
    }
    return err;
}

/* Waits for the read of chunk c (into buffer c & 1) and queues the next of this rank's @mine
 * chunks into the other buffer. */
static int dist_read(struct dist *d, uint64_t c, uint64_t mine)
{
    struct sort_job *job = d->job;
    int i = (int)(c & 1), err = UTIL_OK;
    int e = wait_read(d, i);
    if (e != 0) {
        err = util_fail(UTIL_EIO, "rank %d: external: read: %s (%s)", job->rank,
                        e == EIO ? "the input changed while it was read: it ended early"
                                 : strerror(e),
                        d->src->fd >= 0 ? job->in_path : "a temporary file");
    }
    if (err == UTIL_OK && c + 1 < mine) {
        err = start_read(d, c + 1, i ^ 1);
    }
    return err;
}

/* The chunk at @e (@n elements, the first at index @first of the source): its checksum for
 * --check, its keys in their order's encoding, classified and grouped by bucket. */
static void dist_classify(struct dist *d, unsigned char *e, uint64_t n, uint64_t first,
                          uint64_t *check)
{
    struct sort_job *job = d->job;
    if (check != NULL) {
        add_checksum(d, e, n, check);
    }
    if (d->map) {
        job->cfg->format->to_ordered((uint64_t *)(void *)e, n);
    }
    ext_classify(d->sp, job->fmt, d->rsize, e, n, d->src->pos0 + first, d->ids, d->counts,
                 job->threads);
    group(d, e, n);
    if (d->exchange) {
        sort_progress_add(job, n * d->rsize); /* pass 1 counts the input read */
    }
}

/* Round c of the pass: this rank's chunk c (none past its @mine chunks) read, classified and
 * grouped; then the exchange of the buckets (collective), or their append to this rank's own. */
static int dist_round(struct dist *d, uint64_t c, uint64_t mine, uint64_t *check)
{
    struct sort_job *job = d->job;
    const struct ext_source *src = d->src;
    int err = UTIL_OK;
    uint64_t first = c * d->chunk;
    uint64_t n = c < mine ? (src->n - first < d->chunk ? src->n - first : d->chunk) : 0;
    if (n > 0) {
        err = dist_read(d, c, mine);
    }
    memset(d->counts, 0, d->sp->nb * sizeof(uint64_t));
    if (err == UTIL_OK && n > 0) {
        dist_classify(d, d->rbuf[c & 1], n, first, check);
    }
    if (d->exchange) {
        err = sort_agree(job, err);
        if (err != UTIL_OK) {
            return err; /* every rank leaves together */
        }
        err = exchange_round(d);
    } else {
        for (uint64_t b = 0; b < d->sp->nb && err == UTIL_OK; b++) {
            err = ext_store_append(d->dst, job->rank, b, d->sbuf + d->start[b] * d->rsize,
                                   d->counts[b], 0);
        }
    }
    sort_stall_at(job, "read-chunk"); /* the tests' slow read */
    return err;
}

int ext_distribute(struct sort_job *job, const struct ext_source *src, const struct ext_splitters *sp,
                   struct ext_store *dst, const struct ext_dist_room *room, int exchange,
                   uint64_t *check)
{
    struct dist d;
    memset(&d, 0, sizeof(d));
    d.job = job;
    d.src = src;
    d.sp = sp;
    d.dst = dst;
    d.rsize = job->rsize;
    d.chunk = room->chunk > 0 ? room->chunk : 1;
    d.exchange = exchange;
    d.q = exchange ? sp->nb / (uint64_t)job->size : sp->nb;
    d.recv_cap = room->recv_cap > 0 ? room->recv_cap : 1;
    /* Read requests: one for a file; a bucket's read of a chunk may take many. */
    d.rcap = src->fd >= 0 ? 1 : ext_store_requests(src->store, src->bucket);
    const struct util_format *kt = job->cfg->format;
    d.map = src->fd >= 0 && job->fmt == NULL && kt != NULL && kt->to_ordered != NULL;
    int err = dist_alloc(&d);
    if (err != UTIL_OK) {
        dist_free(&d);
        return err;
    }
    uint64_t mine = (src->n + d.chunk - 1) / d.chunk, rounds = mine;
    if (exchange) {
        MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_UINT64_T, MPI_MAX, job->comm);
    }
    if (mine > 0) {
        err = start_read(&d, 0, 0);
    }
    for (uint64_t c = 0; c < rounds && err == UTIL_OK; c++) {
        err = dist_round(&d, c, mine, check);
    }
    /* A read still in flight (after a failure) must end before its buffer goes. */
    (void)wait_read(&d, 0);
    (void)wait_read(&d, 1);
    dist_free(&d);
    return err;
}

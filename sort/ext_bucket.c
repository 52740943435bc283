/*
 * sort/ext_bucket.c: the external sort's buckets on disk (see sort/ext.h).
 *
 * Each rank keeps its buckets in unlinked temporary files, one a temporary directory: O_TMPFILE
 * gives a file with no name at all; where a file system lacks it (NFS), a file is created with
 * a unique name and unlinked at once. Either way the data lives only as long as the
 * descriptor, so nothing is left behind whatever ends the process, and nothing needs removing.
 *
 * A bucket receives pieces (one a source rank and round) into its append buffer; a full buffer
 * goes out as one write at the current end of the next file in turn (several temporary
 * directories share the traffic), and a spare buffer takes its place while the I/O threads
 * write it. The bucket keeps the segments in arrival order. Records also keep the pieces, so
 * that pass 2 can read each bucket source by source, in input order (sort/ext.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "sort/ext.h"
#include "util/alloc.h"
#include "util/util.h"

/* An unlinked temporary file in @dir, open for reading and writing; -1 with errno set. */
static int open_unlinked(const char *dir)
{
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
        return fd;
    }
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
        return -1;
    }
#endif
    /* No O_TMPFILE here: a fresh name, unlinked as soon as it is open. */
    char path[4096];
    for (int attempt = 0; attempt < 100; attempt++) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
            r = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL + (uint64_t)attempt;
        }
        if ((size_t)snprintf(path, sizeof(path), "%s/.sortex-ext.%ld-%016llx", dir, (long)getpid(),
                             (unsigned long long)r) >= sizeof(path)) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int made = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (made >= 0) {
            (void)unlink(path);
            return made;
        }
        if (errno != EEXIST) {
            return -1;
        }
    }
    errno = EEXIST;
    return -1;
}

int ext_store_open(struct ext_store *s, int rank, const char *const *dirs, int ndirs,
                   size_t rsize, int track_pieces, struct util_aio *aio)
{
    memset(s, 0, sizeof(*s));
    s->rsize = rsize;
    s->track_pieces = track_pieces;
    s->aio = aio;
    s->fd = util_malloc((size_t)ndirs * sizeof(int));
    s->end = util_calloc((size_t)ndirs, sizeof(uint64_t));
    if (s->fd == NULL || s->end == NULL) {
        return util_fail(UTIL_ENOMEM, "rank %d: external: out of memory", rank);
    }
    for (int i = 0; i < ndirs; i++) {
        s->fd[i] = open_unlinked(dirs[i]);
        if (s->fd[i] < 0) {
            int e = errno;
            s->nfiles = i;
            return util_fail(UTIL_EIO, "rank %d: external: cannot create a temporary file in "
                                       "%s: %s", rank, dirs[i], strerror(e));
        }
        s->nfiles = i + 1;
    }
    return UTIL_OK;
}

int ext_store_buckets(struct ext_store *s, uint64_t nb, uint64_t buf_elems, int spares)
{
    s->nb = nb;
    s->buf_elems = buf_elems > 0 ? buf_elems : 1;
    s->b = util_calloc(nb, sizeof(*s->b));
    s->npool = (int)nb + spares;
    s->pool = util_calloc((size_t)s->npool, sizeof(*s->pool));
    s->req = util_calloc((size_t)s->npool, sizeof(*s->req));
    s->pool_state = util_calloc((size_t)s->npool, sizeof(int));
    if (s->b == NULL || s->pool == NULL || s->req == NULL || s->pool_state == NULL) {
        return UTIL_ENOMEM;
    }
    for (int i = 0; i < s->npool; i++) {
        s->pool[i] = util_alloc_scratch(s->buf_elems * s->rsize);
        if (s->pool[i] == NULL) {
            return UTIL_ENOMEM;
        }
    }
    for (uint64_t b = 0; b < nb; b++) {
        s->b[b].buf = s->pool[b];
        s->pool_state[b] = 1;
    }
    return UTIL_OK;
}

/* The pool slot of buffer @buf. */
static int slot_of(const struct ext_store *s, const unsigned char *buf)
{
    for (int i = 0; i < s->npool; i++) {
        if (s->pool[i] == buf) {
            return i;
        }
    }
    return -1;
}

/* Remembers a segment of @count elements at @offset of file @file for bucket @b. */
static int add_segment(struct ext_bucket *b, int file, uint64_t offset, uint64_t count)
{
    if (b->nsegs == b->capsegs) {
        uint32_t cap = b->capsegs ? 2 * b->capsegs : 8;
        struct ext_seg *g = util_realloc(b->segs, (size_t)cap * sizeof(*g));
        if (g == NULL) {
            return UTIL_ENOMEM;
        }
        b->segs = g;
        b->capsegs = cap;
    }
    b->segs[b->nsegs++] = (struct ext_seg){offset, count, file};
    return UTIL_OK;
}

/* A buffer that is free: a spare, or the first one whose write has finished. */
static int take_free(struct ext_store *s, int *err)
{
    for (int i = 0; i < s->npool; i++) {
        if (s->pool_state[i] == 0) {
            return i;
        }
    }
    /* Every spare is being written: wait for the writes, oldest first (the lowest slot is
     * as good: all were queued before this). */
    for (int i = 0; i < s->npool; i++) {
        if (s->pool_state[i] == 2) {
            int e = util_aio_wait(s->aio, &s->req[i]);
            s->pool_state[i] = 0;
            if (e != 0 && *err == 0) {
                *err = e;
            }
            return i;
        }
    }
    return -1;
}

/* Writes bucket @bi's buffer out (its @fill elements) and gives it a fresh one (unless
 * @last). */
static int spill(struct ext_store *s, int rank, uint64_t bi, int last)
{
    struct ext_bucket *b = &s->b[bi];
    int err = 0;
    if (b->fill > 0) {
        int slot = slot_of(s, b->buf);
        int f = s->next_file;
        s->next_file = (s->next_file + 1) % s->nfiles;
        uint64_t bytes = b->fill * s->rsize;
        if (add_segment(b, f, s->end[f], b->fill) != UTIL_OK) {
            return util_fail(UTIL_ENOMEM, "rank %d: external: out of memory for the buckets' "
                                          "segments", rank);
        }
        s->req[slot] = (struct util_aio_req){.op = UTIL_AIO_WRITE, .fd = s->fd[f],
                                             .buf = b->buf, .len = bytes, .offset = s->end[f]};
        s->end[f] += bytes;
        s->temp_bytes += bytes;
        s->pool_state[slot] = 2;
        util_aio_submit(s->aio, &s->req[slot]);
        b->fill = 0;
        b->buf = NULL;
    }
    if (!last && b->buf == NULL) {
        int slot = take_free(s, &err);
        if (err != 0) {
            return util_fail(UTIL_EIO, "rank %d: external: cannot write a temporary file: %s",
                             rank, strerror(err));
        }
        s->pool_state[slot] = 1;
        b->buf = s->pool[slot];
    }
    return UTIL_OK;
}

/* Notes a piece of @count elements from @source for bucket @b (records), joining it to the
 * last piece when that came from the same source. */
static int add_piece(struct ext_bucket *b, uint32_t source, uint64_t count)
{
    while (count > 0) {
        if (b->npieces > 0 && b->pieces[b->npieces - 1].source == source &&
            b->pieces[b->npieces - 1].count < UINT32_MAX) {
            struct ext_piece *last = &b->pieces[b->npieces - 1];
            uint64_t room = UINT32_MAX - last->count;
            uint64_t take = count < room ? count : room;
            last->count += (uint32_t)take;
            count -= take;
            continue;
        }
        if (b->npieces == b->cappieces) {
            uint64_t cap = b->cappieces ? 2 * b->cappieces : 16;
            struct ext_piece *q = util_realloc(b->pieces, cap * sizeof(*q));
            if (q == NULL) {
                return UTIL_ENOMEM;
            }
            b->pieces = q;
            b->cappieces = cap;
        }
        uint64_t take = count < UINT32_MAX ? count : UINT32_MAX;
        b->pieces[b->npieces++] = (struct ext_piece){source, (uint32_t)take};
        count -= take;
    }
    return UTIL_OK;
}

int ext_store_append(struct ext_store *s, int rank, uint64_t bi, const void *src, uint64_t count,
                     uint32_t source)
{
    struct ext_bucket *b = &s->b[bi];
    const unsigned char *p = src;
    if (count == 0) {
        return UTIL_OK;
    }
    if (s->track_pieces && add_piece(b, source, count) != UTIL_OK) {
        return util_fail(UTIL_ENOMEM, "rank %d: external: out of memory for the buckets' "
                                      "pieces", rank);
    }
    b->n += count;
    while (count > 0) {
        uint64_t room = s->buf_elems - b->fill;
        uint64_t take = count < room ? count : room;
        memcpy(b->buf + b->fill * s->rsize, p, take * s->rsize);
        b->fill += take;
        p += take * s->rsize;
        count -= take;
        if (b->fill == s->buf_elems) {
            int err = spill(s, rank, bi, 0);
            if (err != UTIL_OK) {
                return err;
            }
        }
    }
    return UTIL_OK;
}

int ext_store_flush(struct ext_store *s, int rank)
{
    int err = UTIL_OK;
    for (uint64_t b = 0; b < s->nb && err == UTIL_OK; b++) {
        err = spill(s, rank, b, 1);
    }
    int first = 0;
    for (int i = 0; i < s->npool; i++) {
        if (s->pool_state[i] == 2) {
            int e = util_aio_wait(s->aio, &s->req[i]);
            first = first ? first : e;
        }
        s->pool_state[i] = 0;
        util_free_scratch(s->pool[i], s->buf_elems * s->rsize);
        s->pool[i] = NULL;
    }
    for (uint64_t b = 0; b < s->nb; b++) {
        s->b[b].buf = NULL;
    }
    if (err == UTIL_OK && first != 0) {
        err = util_fail(UTIL_EIO, "rank %d: external: cannot write a temporary file: %s", rank,
                        strerror(first));
    }
    return err;
}

uint64_t ext_store_requests(const struct ext_store *s, uint64_t b)
{
    /* A read covers whole segments and cuts one more at each piece's two ends. */
    const struct ext_bucket *k = &s->b[b];
    return k->nsegs + 2 * (s->track_pieces ? k->npieces : 0) + 2;
}

/* Queues reads of the bucket's arrival-order elements [from, from + count) into @dst; @starts
 * holds each segment's first arrival element (and the total after the last). Returns the
 * requests queued. */
static uint64_t read_arrival(struct ext_store *s, const struct ext_bucket *b, const uint64_t *starts,
                             uint64_t from, uint64_t count, unsigned char *dst,
                             struct util_aio_req *reqs)
{
    uint64_t n = 0;
    /* The segment holding @from: the last whose start is <= from. */
    uint64_t lo = 0, hi = b->nsegs;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= from) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    for (uint64_t g = lo; count > 0 && g < b->nsegs; g++) {
        const struct ext_seg *sg = &b->segs[g];
        uint64_t in = from - starts[g];
        uint64_t take = sg->count - in < count ? sg->count - in : count;
        reqs[n] = (struct util_aio_req){.op = UTIL_AIO_READ, .fd = s->fd[sg->file], .buf = dst,
                                        .len = take * s->rsize,
                                        .offset = sg->offset + in * s->rsize};
        util_aio_submit(s->aio, &reqs[n]);
        n++;
        dst += take * s->rsize;
        from += take;
        count -= take;
    }
    return n;
}

int ext_store_read(struct ext_store *s, uint64_t bi, uint64_t from, uint64_t count, void *dst,
                   struct util_aio_req *reqs, uint64_t *nreqs)
{
    struct ext_bucket *b = &s->b[bi];
    unsigned char *d = dst;
    *nreqs = 0;
    uint64_t *starts = util_malloc(((size_t)b->nsegs + 1) * sizeof(uint64_t));
    if (starts == NULL) {
        return UTIL_ENOMEM;
    }
    starts[0] = 0;
    for (uint32_t g = 0; g < b->nsegs; g++) {
        starts[g + 1] = starts[g] + b->segs[g].count;
    }
    if (!s->track_pieces || b->npieces == 0) {
        *nreqs = read_arrival(s, b, starts, from, count, d, reqs);
        util_free(starts);
        return UTIL_OK;
    }
    /* Stable order: the pieces of source 0 in arrival order, then source 1's, and so on: a
     * counting sort of the pieces by source, each with its first arrival element. */
    uint32_t sources = 0;
    for (uint64_t i = 0; i < b->npieces; i++) {
        sources = b->pieces[i].source + 1 > sources ? b->pieces[i].source + 1 : sources;
    }
    uint64_t *first = util_calloc((size_t)sources + 1, sizeof(uint64_t));
    uint64_t *order = util_malloc(b->npieces * sizeof(uint64_t));
    uint64_t *arrival = util_malloc(b->npieces * sizeof(uint64_t));
    if (first == NULL || order == NULL || arrival == NULL) {
        util_free(first);
        util_free(order);
        util_free(arrival);
        util_free(starts);
        return UTIL_ENOMEM;
    }
    uint64_t at = 0;
    for (uint64_t i = 0; i < b->npieces; i++) {
        first[b->pieces[i].source + 1]++;
        arrival[i] = at;
        at += b->pieces[i].count;
    }
    for (uint32_t src = 0; src < sources; src++) {
        first[src + 1] += first[src];
    }
    for (uint64_t i = 0; i < b->npieces; i++) {
        order[first[b->pieces[i].source]++] = i;
    }
    uint64_t n = 0, stable = 0;
    for (uint64_t k = 0; k < b->npieces && count > 0; k++) {
        const struct ext_piece *pc = &b->pieces[order[k]];
        uint64_t hi = stable + pc->count;
        if (hi > from) {
            uint64_t skip = from > stable ? from - stable : 0;
            uint64_t take = pc->count - skip < count ? pc->count - skip : count;
            n += read_arrival(s, b, starts, arrival[order[k]] + skip, take, d, reqs + n);
            d += take * s->rsize;
            from += take;
            count -= take;
        }
        stable = hi;
    }
    *nreqs = n;
    util_free(first);
    util_free(order);
    util_free(arrival);
    util_free(starts);
    return UTIL_OK;
}

int ext_store_wait(struct ext_store *s, struct util_aio_req *reqs, uint64_t n)
{
    int first = 0;
    for (uint64_t i = 0; i < n; i++) {
        int e = util_aio_wait(s->aio, &reqs[i]);
        first = first ? first : e;
    }
    return first;
}

void ext_store_drop_buckets(struct ext_store *s)
{
    for (uint64_t b = 0; s->b != NULL && b < s->nb; b++) {
        util_free(s->b[b].segs);
        util_free(s->b[b].pieces);
    }
    util_free(s->b);
    for (int i = 0; s->pool != NULL && i < s->npool; i++) {
        if (s->pool_state[i] == 2) {
            (void)util_aio_wait(s->aio, &s->req[i]);
        }
        util_free_scratch(s->pool[i], s->buf_elems * s->rsize);
    }
    util_free(s->pool);
    util_free(s->req);
    util_free(s->pool_state);
    s->b = NULL;
    s->pool = NULL;
    s->req = NULL;
    s->pool_state = NULL;
    s->nb = 0;
    s->npool = 0;
}

void ext_store_close(struct ext_store *s)
{
    ext_store_drop_buckets(s);
    for (int i = 0; s->fd != NULL && i < s->nfiles; i++) {
        (void)close(s->fd[i]);
    }
    util_free(s->fd);
    util_free(s->end);
    memset(s, 0, sizeof(*s));
}

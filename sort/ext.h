/*
 * sort/ext.h: the external sort, for inputs larger than the memory the ranks may use (internal
 * header of sort/; sort/ext.c describes the scheme).
 *
 * Three parts, each in its own file:
 *   ext_split.c   splitters from a random sample of (key, position) pairs, and the
 *                 classification of elements against them;
 *   ext_bucket.c  the buckets on disk: temporary files, append buffers, the segments written,
 *                 and reading a bucket back in its stable order;
 *   ext_dist.c    a distribution pass: a stream of elements classified into buckets, through
 *                 the exchange back-end to the ranks that own them (pass 1), or on one rank
 *                 alone (the extra pass that splits a bucket too big for memory);
 * and ext.c, which decides the mode, sizes the buffers and runs the passes (pass 2, each
 * bucket loaded, sorted and written at its place, lives there too).
 */
#ifndef SORTEX_SORT_EXT_H
#define SORTEX_SORT_EXT_H

#include <stdint.h>

#include "sort/internal.h"
#include "util/aio.h"

/*
 * ---- splitters (ext_split.c) -------------------------------------------------------------
 *
 * nb buckets are cut by nb - 1 splitters, each a (key, position) pair: an element belongs to
 * the bucket whose index is the number of splitters below it in (key, position) order, so
 * equal keys are divided by position as the in-memory sort divides them, and no bucket grows
 * with duplicates. Keys are compared as the sort orders them: the numbers after their map onto
 * unsigned order (util_format to_ordered), records as unsigned byte strings.
 */
struct ext_splitters {
    uint64_t nb;        /* buckets (splitters + 1) */
    size_t ksize;       /* records: key bytes; 0 for numbers */
    uint64_t *prefix;   /* [nb - 1] numbers: the ordered key; records: the first 8 key bytes,
                           big-endian (zero padded) */
    uint64_t *pos;      /* [nb - 1] the splitters' positions */
    unsigned char *key; /* records: [nb - 1][ksize] the whole keys; NULL for numbers */
    uint32_t *lut;      /* [2^b + 1] the search's table over the first words' top b bits */
    unsigned lut_shift; /* 64 - b */
};

/** Frees what a splitter set holds (the struct itself is the caller's). */
void ext_splitters_free(struct ext_splitters *s);

/**
 * Chooses @nb buckets' splitters from a random sample of the @n elements of a stream: @read is
 * called with sorted element indices [0, n) and fills @count elements of @rsize bytes each; the
 * sample is @per_bucket elements a bucket (at least 1), and the splitters are its elements of
 * ranks floor(j T / nb), j = 1 .. nb - 1, for T samples, in (key, index + @base) order. Local,
 * no MPI: ext_splitters_global() is the collective form. @fmt NULL: numbers (ordered keys).
 * Returns 0 or UTIL_ENOMEM / the first error of @read.
 */
typedef int ext_read_fn(void *arg, uint64_t index, uint64_t count, void *dst);

/**
 * The collective form over the job's ranks: each rank draws its proportional share of
 * @per_bucket * @nb samples at random positions of its slice of the input file (fd, global
 * position job->offset + i), all gather them, and every rank gets the same @nb - 1 splitters.
 */
int ext_splitters_global(struct sort_job *job, int fd, uint64_t nb, uint64_t per_bucket,
                         struct ext_splitters *s);

/** The local form: splitters for @n elements read by @read(@arg, ...) with positions @base + i. */
int ext_splitters_local(const struct sort_job *job, ext_read_fn *read, void *arg, uint64_t n,
                        uint64_t base, uint64_t nb, uint64_t per_bucket, struct ext_splitters *s);

/**
 * Classifies @n elements at @elems (rsize bytes apart; numbers already in ordered form) whose
 * positions are @pos0 + i: writes each one's bucket into @ids and adds to @counts[nb]. Threaded
 * with @threads.
 */
void ext_classify(const struct ext_splitters *s, const struct util_format *fmt, size_t rsize,
                  const void *elems, uint64_t n, uint64_t pos0, uint32_t *ids, uint64_t *counts,
                  int threads);

/*
 * ---- buckets on disk (ext_bucket.c) --------------------------------------------------------
 *
 * The buckets of one rank share its temporary files, one in each temporary directory, opened
 * unlinked (O_TMPFILE, or created and unlinked at once where a file system has no O_TMPFILE),
 * so that no name exists to leave behind: the files vanish when the process ends, however it
 * ends, SIGKILL included. What a bucket receives is appended to its buffer; a full buffer is
 * written, through the I/O threads, at the end of one of the files (the files take turns), and
 * the bucket remembers the segment. Records also keep, for each bucket, the pieces they came in
 * (source rank and count, in arrival order): arrival interleaves the sources round by round,
 * and reading the pieces source by source gives back the input order, which the stable sort
 * of pass 2 needs.
 */
struct ext_seg {
    uint64_t offset; /* bytes into its file */
    uint64_t count;  /* elements */
    int file;
};

struct ext_piece {
    uint32_t source;
    uint32_t count;
};

struct ext_bucket {
    uint64_t n;               /* elements, appended so far */
    struct ext_seg *segs;     /* written segments, in arrival order */
    uint32_t nsegs, capsegs;
    struct ext_piece *pieces; /* records: arrival pieces; NULL for numbers */
    uint64_t npieces, cappieces;
    unsigned char *buf;       /* the append buffer (pass 1), or NULL */
    uint64_t fill;            /* elements in buf */
};

struct ext_store {
    size_t rsize;
    int track_pieces;       /* records: keep the pieces (stability) */
    int nfiles;
    int *fd;                /* [nfiles] unlinked temporary files */
    uint64_t *end;          /* [nfiles] bytes appended so far */
    int next_file;
    uint64_t buf_elems;     /* elements an append buffer holds */
    uint64_t nb;
    struct ext_bucket *b;   /* [nb] */
    /* The append buffers' pool: nb in use, the rest spare or being written. */
    unsigned char **pool;
    struct util_aio_req *req; /* [npool] one write request a buffer */
    int *pool_state;          /* [npool] 0 free, 1 in use by a bucket, 2 being written */
    int npool;
    struct util_aio *aio;
    uint64_t temp_bytes;      /* bytes written to the temporary files */
};

/**
 * Opens @s: one unlinked temporary file in each of @dirs[0..ndirs), for buckets of @rsize-byte
 * elements. Returns 0, or UTIL_EIO after reporting (rank @rank) which directory failed.
 */
int ext_store_open(struct ext_store *s, int rank, const char *const *dirs, int ndirs,
                   size_t rsize, int track_pieces, struct util_aio *aio);

/**
 * Starts @nb empty buckets with append buffers of @buf_elems elements and @spares buffers more
 * (so that a full buffer is written while its bucket fills the next). Returns 0 or UTIL_ENOMEM.
 */
int ext_store_buckets(struct ext_store *s, uint64_t nb, uint64_t buf_elems, int spares);

/** Appends @count elements at @src to bucket @b, from source rank @source. Returns 0 or an
 * error (reported): a failed write, or memory for the bookkeeping. */
int ext_store_append(struct ext_store *s, int rank, uint64_t b, const void *src, uint64_t count,
                     uint32_t source);

/** Writes every append buffer out, waits for all writes and frees the buffers. */
int ext_store_flush(struct ext_store *s, int rank);

/**
 * Reads elements [from, from + count) of bucket @b in its stable order (the pieces source by
 * source; for numbers, arrival order) into @dst, through the I/O threads: the requests are
 * queued into @reqs (room for ext_store_requests() of them), *@nreqs says how many, and the
 * call returns at once; ext_store_wait() waits for them. Returns 0 or UTIL_ENOMEM (nothing
 * queued).
 */
int ext_store_read(struct ext_store *s, uint64_t b, uint64_t from, uint64_t count, void *dst,
                   struct util_aio_req *reqs, uint64_t *nreqs);

/** An upper bound of the requests ext_store_read() of bucket @b queues. */
uint64_t ext_store_requests(const struct ext_store *s, uint64_t b);

/** Waits for @n requests of ext_store_read(); returns 0 or the first errno. */
int ext_store_wait(struct ext_store *s, struct util_aio_req *reqs, uint64_t n);

/** Replaces the buckets by @nb new ones (the files and what they hold stay): the split pass. */
void ext_store_drop_buckets(struct ext_store *s);

/** Closes the files and frees everything. */
void ext_store_close(struct ext_store *s);

/*
 * ---- a distribution pass (ext_dist.c) -------------------------------------------------------
 */

/** Where a distribution pass gets its elements: @read fills @count elements of the stream from
 * element @index on (synchronously or through the I/O threads, see ext_dist.c). */
struct ext_source {
    uint64_t n;          /* elements in the stream (this rank's) */
    uint64_t pos0;       /* the position of the stream's first element */
    int fd;              /* the input file (pass 1), or -1 */
    uint64_t file_offset; /* bytes: where element 0 of the stream is in fd */
    struct ext_store *store; /* or: a bucket of this store (the split pass) */
    uint64_t bucket;
};

/** Buffers of a distribution pass, sized by ext.c from the memory budget. */
struct ext_dist_room {
    uint64_t chunk;    /* elements read a round */
    uint64_t recv_cap; /* elements a rank may receive a round (more goes in sub-rounds) */
};

/**
 * One distribution pass. Every element of @src is classified by @sp and appended to the bucket
 * of @dst that owns it: with @exchange (pass 1), buckets [r q, (r+1) q) belong to rank r and the
 * elements travel through the job's back-end; without (the split pass), all buckets are this
 * rank's. Numbers are mapped to ordered keys on the way in. With --check, the input's checksum
 * is summed as it is read (into job->check_in, before the all-reduce). Collective with
 * @exchange. Returns 0 or an error code.
 */
int ext_distribute(struct sort_job *job, const struct ext_source *src, const struct ext_splitters *sp,
                   struct ext_store *dst, const struct ext_dist_room *room, int exchange,
                   uint64_t *check);

/*
 * ---- the external sort (ext.c) ---------------------------------------------------------------
 */

/** Whether the file sort runs externally: with cfg->external AUTO, when some rank's in-memory
 * @need (bytes) exceeds its budget (cfg->mem_limit, or EXT_NODE_SHARE of its node's memory
 * over the node's ranks). Collective; sets job->mem_budget and the stats' memory figures;
 * returns 1 for external, 0 for in memory, or an agreed error (< 0): the external sort needs
 * files it can seek and --io mpiio. */
int ext_decide(struct sort_job *job, uint64_t need);

/** Sorts job->in_path into job->out_path externally (the whole file job of sortex_sort_file
 * after the paths were checked). Collective. */
int ext_sort_file(struct sort_job *job);

#endif

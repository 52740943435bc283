/*
 * sort/ext.c: the external sort, for files larger than the memory the ranks may use.
 *
 * Scheme: distribute, then sort (TritonSort: Rasmussen et al., "TritonSort: A Balanced
 * Large-Scale Sorting System", NSDI 2011, sections 3-4; Themis: Rasmussen et al., SoCC 2012),
 * in two passes that read and write every byte twice, the least for data larger than memory:
 *
 *   splitters  a random sample of (key, position) pairs of the input, S a bucket, all-gathered,
 *              gives the P q - 1 splitters of P q buckets, q a rank (ext_split.c);
 *   pass 1     every rank streams its slice of the input in chunks, classifies each element,
 *              and the job's exchange back-end takes every bucket to the rank that owns it,
 *              which appends it to its temporary files (ext_dist.c, ext_bucket.c); the network
 *              is crossed once;
 *   pass 2     every rank loads its buckets one at a time, sorts each with the local kernel
 *              (stably, records in input order), and writes it at its global offset, which the
 *              bucket sizes give (an all-gather of P q counts).
 *
 * Both passes overlap their I/O with their work (util/aio.h): pass 1 reads the next chunk and
 * writes full bucket buffers while it classifies and exchanges; pass 2 loads the next bucket
 * and writes the last while it sorts. Why this scheme rather than runs and a merge (DEMSort,
 * STXXL): the merge's selection over all runs and its all-to-all would cross the network a
 * second time, and its P-way merges read every run in small pieces; here pass 2 is purely
 * local, each rank's output is one contiguous range written in large blocks, and the exchange
 * is the sort's own back-end, every one of them.
 *
 * Sizes, for a memory budget M a rank: pass 2 holds four bucket buffers (the one loading, the
 * one sorting and its scratch, the one writing) and, for records, the sort's tuples, so a bucket
 * may hold B = 0.85 M / (4 R + tuples) elements; buckets aim at 0.6 B (q = n / (0.6 B P)), and
 * with 128 samples a bucket one exceeds B with a probability of about 1e-9 (a Gamma tail). A
 * bucket that does exceed B is split on its own rank by an extra pass over it alone (sampled,
 * distributed into smaller buckets, then sorted as the others), said by -v and counted in the
 * stats: never a crash and never a wrong result. Pass 1 reads chunks of M / 12 (two in flight),
 * receives up to twice that a round, and gives the buckets' append buffers a quarter of M.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sort/ext.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/mem.h"
#include "util/util.h"

/* The share of a node's memory its ranks use by default, as a fraction. */
#define EXT_NODE_SHARE 0.75
/* Samples a bucket (at most: fewer when the sample would not fit a rank's memory). */
#define EXT_SAMPLES 128
/* Buckets aim at this fraction of what pass 2 can hold (SORTEX_EXT_FILL, in percent, moves it
 * for the tests of the extra pass). */
static double ext_fill(void)
{
    return (double)util_knob_u64(UTIL_KNOB_EXT_FILL) / 100.0;
}
/* Depth of extra passes before a bucket is given up as unsplittable (never seen: with
 * positions in the sample, every bucket splits). */
#define EXT_MAX_DEPTH 4

/* Everything one external sort holds. */
struct ext {
    struct sort_job *job;
    uint64_t mem;        /* the budget, bytes */
    size_t rsize;
    double tuple_bytes;  /* records: tuple bytes the sort needs a record; 0 for numbers */
    uint64_t bmax;       /* elements a bucket may hold in pass 2 */
    uint64_t q;          /* buckets a rank */
    uint64_t per_bucket; /* samples a bucket */
    const char **dirs;
    int ndirs;
    char *dir_alloc;     /* the output's directory, when it is the one */
    struct util_aio *aio;
    int in_fd, out_fd;
    struct ext_store store;
    struct ext_splitters sp;
    uint64_t *sizes;     /* [P q] every bucket's elements, all ranks */
    /* Pass 2. */
    unsigned char *buf[4];
    int busy[4];         /* 0 free, 1 in use, 2 being written */
    struct util_aio_req wreq[4];
    void *tuples;
    struct util_aio_req *lreq;
    uint64_t lcap;
    /* --check over the output as it is written. */
    uint64_t bad, n_out;
    unsigned char *first, *last; /* copies of the rank's first and last output elements */
    int have_last;
    struct verify_checksum sum;
    uint64_t written;    /* bytes written to the output */
};

/* ---- the decision ---------------------------------------------------------------------------- */

/* The ranks of this node (MPI_COMM_TYPE_SHARED). Collective. */
static int node_ranks(MPI_Comm comm)
{
    MPI_Comm node;
    int n = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
    }
    return n;
}

int ext_decide(struct sort_job *job, uint64_t need)
{
    const struct sortex_config *cfg = job->cfg;
    int local = node_ranks(job->comm);
    enum util_mem_source src;
    uint64_t node = util_node_memory(&src);
    uint64_t budget = cfg->mem_limit;
    job->stats->mem_source = "--mem-limit";
    if (budget == 0) {
        budget = (uint64_t)((double)node * EXT_NODE_SHARE / (local > 0 ? local : 1));
        job->stats->mem_source = util_mem_source_name(src);
    }
    job->mem_budget = budget;
    job->stats->mem_budget = budget;
    job->stats->mem_need = need;
    int want = cfg->external == SORTEX_EXTERNAL_ALWAYS ||
               (cfg->external == SORTEX_EXTERNAL_AUTO && budget > 0 && need > budget);
    MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT, MPI_MAX, job->comm);
    if (!want) {
        return 0;
    }
    /* Pipes cannot be read twice, nor written out of order. */
    int err = UTIL_OK;
    if (job->rank == 0 && (strcmp(job->in_path, "-") == 0 || strcmp(job->out_path, "-") == 0)) {
        err = util_fail(UTIL_ENOMEM, "the input does not fit in memory (%llu bytes a rank, "
                                     "%llu allowed) and the external sort needs files, not "
                                     "standard input or output",
                        (unsigned long long)need, (unsigned long long)budget);
    } else if (job->rank == 0 && cfg->io != SORTEX_IO_MPIIO) {
        err = util_fail(UTIL_ENOMEM, "the input does not fit in memory (%llu bytes a rank, "
                                     "%llu allowed) and the external sort runs with --io mpiio "
                                     "only", (unsigned long long)need, (unsigned long long)budget);
    }
    err = sort_agree(job, err);
    return err != UTIL_OK ? err : 1;
}

/* ---- sizes ------------------------------------------------------------------------------------ */

/* Bytes a splitter's sample takes (as ext_split.c gathers it). */
static size_t sample_bytes(const struct sort_job *job)
{
    return 16 + (job->fmt ? (job->fmt->key_size + 7) / 8 * 8 : 0);
}

/* Plans the buffers for the budget: the bucket bound, q, the samples. Returns 0 or UTIL_ENOMEM
 * (reported) when the budget cannot hold even the smallest plan. */
static int plan(struct ext *x)
{
    struct sort_job *job = x->job;
    const uint64_t p = (uint64_t)job->size, n = job->n_total;
    x->rsize = job->rsize;
    if (job->fmt != NULL) {
        const uint64_t probe = (uint64_t)1 << 20;
        x->tuple_bytes = 16.0 * (double)local_record_tuples(probe, job->fmt) / (double)probe;
    }
    x->bmax = (uint64_t)(0.85 * (double)x->mem / (4.0 * (double)x->rsize + x->tuple_bytes));
    if (x->bmax < 16) {
        return util_fail(UTIL_ENOMEM, "rank %d: external: a memory of %llu bytes cannot hold "
                                      "the buffers of an external sort of %zu-byte records",
                         job->rank, (unsigned long long)x->mem, x->rsize);
    }
    /* q from the target fill, then the sample a bucket that fits an eighth of the budget (the
     * gathered sample), and, with fewer samples, a lower fill to keep the tail as thin. */
    x->per_bucket = EXT_SAMPLES;
    double fill = ext_fill();
    for (int pass = 0; pass < 3; pass++) {
        double target = fill * (double)x->bmax;
        x->q = (uint64_t)ceil((double)n / ((double)p * target));
        x->q = x->q > 0 ? x->q : 1;
        uint64_t fit = (x->mem / 8) / (sample_bytes(job) * p * x->q);
        if (fit >= x->per_bucket) {
            break;
        }
        x->per_bucket = fit >= 16 ? fit : 16;
        fill = 1.0 / (1.0 + 8.0 / sqrt((double)x->per_bucket));
    }
    if (x->q > UINT32_MAX / p) {
        return util_fail(UTIL_ENOMEM, "rank %d: external: the input needs %llu buckets a rank "
                                      "at %llu bytes of memory: give the ranks more memory",
                         job->rank, (unsigned long long)x->q, (unsigned long long)x->mem);
    }
    return UTIL_OK;
}

/* ---- temporary directories ------------------------------------------------------------------ */

/* The temporary directories: the configuration's, $TMPDIR, or the output's directory. */
static int temp_dirs(struct ext *x)
{
    struct sort_job *job = x->job;
    const char *const *given = job->cfg->temp_dirs;
    int n = 0;
    while (given != NULL && given[n] != NULL) {
        n++;
    }
    if (n == 0) {
        const char *env = util_knob(UTIL_KNOB_TMPDIR)->text;
        if (env != NULL && env[0] != '\0') {
            x->dir_alloc = util_malloc(strlen(env) + 1);
            if (x->dir_alloc != NULL) {
                memcpy(x->dir_alloc, env, strlen(env) + 1);
            }
        } else {
            const char *slash = strrchr(job->out_path, '/');
            size_t len = slash == NULL ? 1 : slash == job->out_path ? 1 : (size_t)(slash - job->out_path);
            x->dir_alloc = util_malloc(len + 1);
            if (x->dir_alloc != NULL) {
                memcpy(x->dir_alloc, slash == NULL ? "." : job->out_path, len);
                x->dir_alloc[len] = '\0';
            }
        }
        if (x->dir_alloc == NULL) {
            return util_fail(UTIL_ENOMEM, "rank %d: external: out of memory", job->rank);
        }
        n = 1;
    }
    x->dirs = util_malloc((size_t)n * sizeof(char *));
    if (x->dirs == NULL) {
        return util_fail(UTIL_ENOMEM, "rank %d: external: out of memory", job->rank);
    }
    for (int i = 0; i < n; i++) {
        x->dirs[i] = given != NULL && given[0] != NULL ? given[i] : x->dir_alloc;
        struct stat st;
        if (stat(x->dirs[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            return util_fail(UTIL_EUSAGE, "rank %d: temporary directory does not exist (%s)",
                             job->rank, x->dirs[i]);
        }
        if (access(x->dirs[i], W_OK | X_OK) != 0) {
            return util_fail(UTIL_EUSAGE, "rank %d: temporary directory is not writable (%s)",
                             job->rank, x->dirs[i]);
        }
    }
    x->ndirs = n;
    return UTIL_OK;
}

/*
 * Checks, before pass 1, that the temporary directories hold what the ranks will write to
 * them: a rank writes about its share of the input, n R / P, spread evenly over its
 * directories; ranks of one node whose directories are one file system add up. Each rank then
 * reserves its share (fallocate, where the file system has it), so that a file system filled
 * by someone else meanwhile fails before the data moves, not during pass 1. Collective.
 */
static int check_space(struct ext *x)
{
    struct sort_job *job = x->job;
    MPI_Comm node;
    int err = UTIL_OK;
    uint64_t share = (uint64_t)(1.1 * (double)job->n_total / job->size + 1) * x->rsize;
    uint64_t per_dir = share / (uint64_t)x->ndirs + 1;
    if (MPI_Comm_split_type(job->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS) {
        return sort_agree(job, util_fail(UTIL_EMPI, "rank %d: external: MPI_Comm_split_type "
                                                    "failed", job->rank));
    }
    int local = 1;
    MPI_Comm_size(node, &local);
    /* Every rank's directories as (device, need, free), gathered on the node. */
    uint64_t *mine = util_calloc(3 * (size_t)x->ndirs, sizeof(uint64_t));
    int nd = x->ndirs, same = 1, nd_max = nd;
    MPI_Allreduce(&nd, &nd_max, 1, MPI_INT, MPI_MAX, node);
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, node);
    uint64_t *all = util_calloc(3 * (size_t)nd_max * (size_t)local, sizeof(uint64_t));
    uint64_t *row = util_calloc(3 * (size_t)nd_max, sizeof(uint64_t));
    int ok = mine && all && row;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);
    if (!ok) {
        err = util_fail(UTIL_ENOMEM, "rank %d: external: out of memory", job->rank);
        goto done;
    }
    for (int i = 0; i < nd; i++) {
        struct stat st;
        struct statvfs vfs;
        row[3 * i] = stat(x->dirs[i], &st) == 0 ? (uint64_t)st.st_dev + 1 : 0;
        row[3 * i + 1] = per_dir;
        row[3 * i + 2] = statvfs(x->dirs[i], &vfs) == 0
                             ? (uint64_t)(geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail) *
                                   (uint64_t)vfs.f_frsize
                             : UINT64_MAX;
    }
    MPI_Allgather(row, 3 * nd_max, MPI_UINT64_T, all, 3 * nd_max, MPI_UINT64_T, node);
    for (int i = 0; i < nd && err == UTIL_OK; i++) {
        uint64_t dev = row[3 * i], want = 0;
        for (int r = 0; r < local; r++) {
            for (int j = 0; j < nd_max; j++) {
                const uint64_t *e = all + (size_t)r * 3 * nd_max + 3 * j;
                want += e[0] == dev && dev != 0 ? e[1] : 0;
            }
        }
        if (row[3 * i + 2] < want) {
            err = util_fail(UTIL_EIO, "rank %d: external: not enough temporary space in %s: "
                                      "%llu bytes needed on this node, %llu available",
                            job->rank, x->dirs[i], (unsigned long long)want,
                            (unsigned long long)row[3 * i + 2]);
        }
    }
    for (int i = 0; i < nd && err == UTIL_OK; i++) {
        int rc = fallocate(x->store.fd[i], FALLOC_FL_KEEP_SIZE, 0, (off_t)per_dir);
        if (rc != 0 && errno != EOPNOTSUPP && errno != ENOSYS) {
            err = util_fail(UTIL_EIO, "rank %d: external: cannot reserve %llu bytes of "
                                      "temporary space in %s: %s",
                            job->rank, (unsigned long long)per_dir, x->dirs[i], strerror(errno));
        }
    }
done:
    util_free(mine);
    util_free(all);
    util_free(row);
    MPI_Comm_free(&node);
    return sort_agree(job, err);
}

/* ---- pass 2 ----------------------------------------------------------------------------------- */

/* A free pass-2 buffer, waiting for the oldest write if every one is busy. */
static int free_buffer(struct ext *x, int *err)
{
    for (int i = 0; i < 4; i++) {
        if (x->busy[i] == 0) {
            return i;
        }
    }
    for (int i = 0; i < 4; i++) {
        if (x->busy[i] == 2) {
            int e = util_aio_wait(x->aio, &x->wreq[i]);
            x->busy[i] = 0;
            if (e != 0 && *err == UTIL_OK) {
                *err = util_fail(UTIL_EIO, "rank %d: write: %s (%s)", x->job->rank, strerror(e),
                                 x->job->tmp_path);
            }
            return i;
        }
    }
    return -1;
}

/* Waits for every write of pass 2. */
static int drain(struct ext *x)
{
    int err = UTIL_OK;
    for (int i = 0; i < 4; i++) {
        if (x->busy[i] == 2) {
            int e = util_aio_wait(x->aio, &x->wreq[i]);
            if (e != 0 && err == UTIL_OK) {
                err = util_fail(UTIL_EIO, "rank %d: write: %s (%s)", x->job->rank, strerror(e),
                                x->job->tmp_path);
            }
        }
        x->busy[i] = 0;
    }
    return err;
}

static int alloc_pass2(struct ext *x)
{
    for (int i = 0; i < 4; i++) {
        x->buf[i] = util_alloc_big(x->bmax * x->rsize);
        if (x->buf[i] == NULL) {
            return UTIL_ENOMEM;
        }
        x->busy[i] = 0;
    }
    if (x->job->fmt != NULL) {
        x->tuples = util_alloc_big(local_record_tuples(x->bmax, x->job->fmt) *
                                   sizeof(struct local_rec_tuple));
        if (x->tuples == NULL) {
            return UTIL_ENOMEM;
        }
    }
    return UTIL_OK;
}

static void free_pass2(struct ext *x)
{
    for (int i = 0; i < 4; i++) {
        util_free_big(x->buf[i]);
        x->buf[i] = NULL;
    }
    util_free_big(x->tuples);
    x->tuples = NULL;
    util_free(x->lreq);
    x->lreq = NULL;
    x->lcap = 0;
}

/* Room for @n load requests. */
static int load_room(struct ext *x, uint64_t n)
{
    if (n <= x->lcap) {
        return UTIL_OK;
    }
    struct util_aio_req *r = util_realloc(x->lreq, n * sizeof(*r));
    if (r == NULL) {
        return UTIL_ENOMEM;
    }
    x->lreq = r;
    x->lcap = n;
    return UTIL_OK;
}

/* Keeps what --check needs of a sorted bucket (ordered form): its order, the seam with the
 * element before, the rank's first and last elements. */
static void check_bucket(struct ext *x, const unsigned char *b, uint64_t n)
{
    struct sort_job *job = x->job;
    if (n == 0) {
        return;
    }
    x->bad += sort_check_descents(job, b, n);
    if (x->have_last) {
        int desc = job->fmt != NULL ? util_format_cmp(job->fmt, x->last, b) > 0
                                    : *(const uint64_t *)(const void *)x->last >
                                          *(const uint64_t *)(const void *)b;
        x->bad += desc;
    } else {
        memcpy(x->first, b, x->rsize);
    }
    memcpy(x->last, b + (n - 1) * x->rsize, x->rsize);
    x->have_last = 1;
}

/* Sorts @n elements in buffer @i (scratch: another free buffer); returns the buffer holding
 * the result, or -1 on failure (reported). */
static int sort_buffer(struct ext *x, int i, uint64_t n, int *err)
{
    struct sort_job *job = x->job;
    int s = free_buffer(x, err);
    if (s < 0 || *err != UTIL_OK) {
        return -1;
    }
    x->busy[s] = 1;
    int rc;
    void *sorted = x->buf[i];
    if (job->fmt != NULL) {
        rc = local_record_sort(x->buf[i], x->buf[s], x->tuples, n, job->fmt, job->threads,
                                &sorted);
    } else {
        uint64_t *out = (uint64_t *)(void *)x->buf[i];
        rc = local_sort_either((uint64_t *)(void *)x->buf[i], (uint64_t *)(void *)x->buf[s],
                                      n, job->threads, NULL, &out);
        sorted = out;
    }
    if (rc != UTIL_OK) {
        *err = util_fail(rc, "rank %d: sort_buckets: the sort of %llu %s failed", job->rank,
                         (unsigned long long)n, job->fmt ? "records" : "keys");
        x->busy[s] = 0;
        return -1;
    }
    int r = sorted == x->buf[i] ? i : s;
    x->busy[r == i ? s : i] = 0;
    return r;
}

/* Maps, checks and writes the sorted elements of buffer @r at output element @at. */
static void write_bucket(struct ext *x, int r, uint64_t n, uint64_t at)
{
    struct sort_job *job = x->job;
    unsigned char *b = x->buf[r];
    if (job->cfg->check) {
        if (!x->have_last && n > 0) {
            sort_check_corrupt(job, b, n); /* the test hook, on the rank's first bucket */
        }
        check_bucket(x, b, n);
    }
    const struct util_format *kt = job->cfg->format;
    if (job->fmt == NULL && kt != NULL && kt->from_ordered != NULL) {
        kt->from_ordered((uint64_t *)(void *)b, n);
    }
    if (job->cfg->check) {
        struct verify_checksum c = sort_check_sum(job, b, n, 0);
        x->sum = verify_checksum_combine(x->sum, c);
    }
    x->wreq[r] = (struct util_aio_req){.op = UTIL_AIO_WRITE, .fd = x->out_fd, .buf = b,
                                       .len = n * x->rsize, .offset = at * x->rsize};
    x->busy[r] = 2;
    x->n_out += n;
    x->written += n * x->rsize;
    util_aio_submit(x->aio, &x->wreq[r]);
    sort_progress_add(job, n * x->rsize);
}

/* Frees the temporary space of bucket @b of @s once it is read (its segments' blocks). */
static void punch(struct ext_store *s, uint64_t b)
{
    const struct ext_bucket *k = &s->b[b];
    for (uint32_t g = 0; g < k->nsegs; g++) {
        (void)fallocate(s->fd[k->segs[g].file], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        (off_t)k->segs[g].offset, (off_t)(k->segs[g].count * s->rsize));
    }
}

static int sort_store(struct ext *x, struct ext_store *s, uint64_t at, int depth);

/* The synchronous reader of a bucket for the split pass's sample. */
struct bucket_reader {
    struct ext *x;
    struct ext_store *s;
    uint64_t b;
};

static int read_bucket(void *arg, uint64_t index, uint64_t count, void *dst)
{
    struct bucket_reader *r = arg;
    uint64_t need = ext_store_requests(r->s, r->b), n = 0;
    if (load_room(r->x, need) != UTIL_OK ||
        ext_store_read(r->s, r->b, index, count, dst, r->x->lreq, &n) != UTIL_OK) {
        return UTIL_ENOMEM;
    }
    return ext_store_wait(r->s, r->x->lreq, n) == 0 ? UTIL_OK : UTIL_EIO;
}

/*
 * The extra pass: bucket @b of @s holds more than pass 2 can sort at once. It is split on this
 * rank alone: splitters from a sample of it (with positions in its stable order, so that equal
 * keys split too), one distribution pass into a store of smaller buckets, then those sorted
 * and written from output element @at as any bucket is.
 */
static int split_bucket(struct ext *x, struct ext_store *s, uint64_t b, uint64_t at, int depth)
{
    struct sort_job *job = x->job;
    uint64_t n = s->b[b].n;
    if (depth >= EXT_MAX_DEPTH) {
        return util_fail(UTIL_ENOMEM, "rank %d: external: a bucket of %llu %s does not split "
                                      "below the memory (%llu bytes)",
                         job->rank, (unsigned long long)n, job->fmt ? "records" : "keys",
                         (unsigned long long)x->mem);
    }
    job->stats->split_buckets++;
    uint64_t m = (uint64_t)ceil((double)n / (0.6 * (double)x->bmax));
    m = m > 1 ? m : 2;
    struct ext_splitters sp;
    struct bucket_reader rd = {x, s, b};
    int err = ext_splitters_local(job, read_bucket, &rd, n, 0, m, EXT_SAMPLES, &sp);
    if (err != UTIL_OK) {
        return util_fail(err, "rank %d: external: cannot sample a bucket to split it", job->rank);
    }
    /* The pass-2 buffers give their room to the split's and come back after. */
    free_pass2(x);
    util_release();
    struct ext_store sub;
    err = ext_store_open(&sub, job->rank, x->dirs, x->ndirs, x->rsize, 0, x->aio);
    uint64_t chunk = x->mem / 12 / x->rsize;
    chunk = chunk > 0 ? chunk : 1;
    uint64_t room_b = (x->mem / 4) / ((m + 8) * x->rsize);
    if (err == UTIL_OK && ext_store_buckets(&sub, m, room_b > 0 ? room_b : 1, 8) != UTIL_OK) {
        err = util_fail(UTIL_ENOMEM, "rank %d: external: out of memory for a split", job->rank);
    }
    if (err == UTIL_OK) {
        struct ext_source src = {.n = n, .pos0 = 0, .fd = -1, .store = s, .bucket = b};
        struct ext_dist_room room = {chunk, chunk};
        err = ext_distribute(job, &src, &sp, &sub, &room, 0, NULL);
    }
    if (err == UTIL_OK) {
        err = ext_store_flush(&sub, job->rank);
    }
    ext_splitters_free(&sp);
    job->stats->temp_bytes += sub.temp_bytes;
    if (err == UTIL_OK) {
        punch(s, b);
        util_release();
        err = alloc_pass2(x) == UTIL_OK
                  ? UTIL_OK
                  : util_fail(UTIL_ENOMEM, "rank %d: external: out of memory", job->rank);
    }
    if (err == UTIL_OK) {
        err = sort_store(x, &sub, at, depth + 1);
    }
    ext_store_close(&sub);
    return err;
}

/*
 * Pass 2 over the buckets of @s, in order, from output element @at: each is loaded (the next
 * one's reads queued while this one sorts), sorted, and written at its offset (the write left
 * in flight). A bucket larger than the buffers is split first (split_bucket()).
 */
static int sort_store(struct ext *x, struct ext_store *s, uint64_t at, int depth)
{
    struct sort_job *job = x->job;
    int err = UTIL_OK;
    int loaded = -1;      /* the buffer holding bucket `next_b`'s reads, or -1 */
    uint64_t nreq = 0;
    uint64_t b = 0;
    while (b < s->nb && err == UTIL_OK) {
        uint64_t n = s->b[b].n;
        if (n > x->bmax) {
            if ((err = drain(x)) == UTIL_OK) {
                err = split_bucket(x, s, b, at, depth);
            }
            loaded = -1;
            at += n;
            b++;
            continue;
        }
        if (loaded < 0) {
            /* Not prefetched: load it now. */
            int i = free_buffer(x, &err);
            if (err != UTIL_OK || i < 0 ||
                load_room(x, ext_store_requests(s, b)) != UTIL_OK ||
                ext_store_read(s, b, 0, n, x->buf[i], x->lreq, &nreq) != UTIL_OK) {
                err = err != UTIL_OK ? err : util_fail(UTIL_ENOMEM, "rank %d: out of memory",
                                                       job->rank);
                break;
            }
            x->busy[i] = 1;
            loaded = i;
        }
        int e = ext_store_wait(s, x->lreq, nreq);
        if (e != 0) {
            err = util_fail(UTIL_EIO, "rank %d: sort_buckets: cannot read a temporary file: %s",
                            job->rank, strerror(e));
            break;
        }
        punch(s, b);
        sort_stall_at(job, "sort-bucket"); /* the tests' signal in pass 2 */
        int cur = loaded;
        loaded = -1;
        /* Queue the next bucket's reads (when it fits a buffer) before sorting this one. */
        if (b + 1 < s->nb && s->b[b + 1].n <= x->bmax) {
            int i = free_buffer(x, &err);
            if (err == UTIL_OK && i >= 0 &&
                load_room(x, ext_store_requests(s, b + 1)) == UTIL_OK &&
                ext_store_read(s, b + 1, 0, s->b[b + 1].n, x->buf[i], x->lreq, &nreq) ==
                    UTIL_OK) {
                x->busy[i] = 1;
                loaded = i;
            } else if (err == UTIL_OK) {
                err = util_fail(UTIL_ENOMEM, "rank %d: out of memory", job->rank);
            }
        }
        int r = err == UTIL_OK ? sort_buffer(x, cur, n, &err) : -1;
        if (r >= 0) {
            write_bucket(x, r, n, at);
        }
        at += n;
        b++;
    }
    if (loaded >= 0) {
        (void)ext_store_wait(s, x->lreq, nreq);
        x->busy[loaded] = 0;
    }
    int d = drain(x);
    return err != UTIL_OK ? err : d;
}

/* ---- the job --------------------------------------------------------------------------------- */

/* Opens the input on every rank and checks it still has the size that was checked. */
static int open_input(struct ext *x)
{
    struct sort_job *job = x->job;
    x->in_fd = open(job->in_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (x->in_fd < 0) {
        return util_fail(UTIL_EIO, "rank %d: read: cannot open input: %s (%s)", job->rank,
                         strerror(errno), job->in_path);
    }
    if (fstat(x->in_fd, &st) != 0 || (uint64_t)st.st_size != job->n_total * x->rsize) {
        return util_fail(UTIL_EIO, "rank %d: read: the input changed size before it was read "
                                   "(%s)", job->rank, job->in_path);
    }
    (void)posix_fadvise(x->in_fd, (off_t)(job->offset * x->rsize),
                        (off_t)(job->n_local * x->rsize), POSIX_FADV_SEQUENTIAL);
    return UTIL_OK;
}

/* After pass 1: the input is the file that was checked, on every rank and on rank 0. */
static int input_unchanged(struct ext *x)
{
    struct sort_job *job = x->job;
    struct stat st;
    int err = UTIL_OK;
    if (fstat(x->in_fd, &st) != 0 || (uint64_t)st.st_size != job->n_total * x->rsize) {
        err = util_fail(UTIL_EIO, "rank %d: read: the input changed size while it was read "
                                  "(%s)", job->rank, job->in_path);
    }
    MPI_Barrier(job->comm);
    struct util_file_id now;
    if (err == UTIL_OK && job->rank == 0 &&
        (util_file_id_get(job->in_path, &now) != UTIL_OK || !util_file_id_same(&now, &job->in_id))) {
        err = util_fail(UTIL_EIO, "rank 0: read: the input changed while it was read; nothing "
                                  "was written (%s)", job->in_path);
    }
    return err;
}

/* Everything before pass 1: plan, directories, files, splitters. */
static int prepare(struct ext *x)
{
    struct sort_job *job = x->job;
    int err = plan(x);
    if ((err = sort_agree(job, err)) != UTIL_OK || (err = sort_agree(job, temp_dirs(x))) != UTIL_OK) {
        return err;
    }
    /* The output first, reserved in full: a full disk fails before the data moves. */
    if ((err = sort_write_name(job)) != UTIL_OK ||
        (err = sort_write_create(job, job->n_total * x->rsize)) != UTIL_OK) {
        return err;
    }
    err = open_input(x);
    if (err == UTIL_OK) {
        x->out_fd = open(job->tmp_path, O_WRONLY | O_CLOEXEC);
        if (x->out_fd < 0) {
            err = util_fail(UTIL_EIO, "rank %d: write: cannot open %s: %s", job->rank,
                            job->tmp_path, strerror(errno));
        }
    }
    if (err == UTIL_OK && (x->aio = util_aio_start(2)) == NULL) {
        err = util_fail(UTIL_ENOMEM, "rank %d: external: cannot start the I/O threads: %s",
                        job->rank, strerror(errno));
    }
    if (err == UTIL_OK) {
        err = ext_store_open(&x->store, job->rank, x->dirs, x->ndirs, x->rsize, job->fmt != NULL,
                             x->aio);
    }
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        return err;
    }
    return check_space(x);
}

/* The sample and the splitters (the "sample" phase). */
static int phase_sample(struct sort_job *job)
{
    struct ext *x = job->ext;
    return ext_splitters_global(job, x->in_fd, (uint64_t)job->size * x->q, x->per_bucket,
                                &x->sp);
}

/* Pass 1 (the "distribute" phase). */
static int phase_distribute(struct sort_job *job)
{
    struct ext *x = job->ext;
    uint64_t p = (uint64_t)job->size;
    int err = UTIL_OK;
    uint64_t chunk = x->mem / 12 / x->rsize;
    chunk = chunk > 0 ? chunk : 1;
    uint64_t spares = x->q / 8 > 2 ? x->q / 8 : 2;
    uint64_t per = (x->mem / 4) / ((x->q + spares) * x->rsize);
    if (ext_store_buckets(&x->store, x->q, per > 0 ? per : 1, (int)spares) != UTIL_OK) {
        err = util_fail(UTIL_ENOMEM, "rank %d: distribute: out of memory for %llu buckets' "
                                     "buffers", job->rank, (unsigned long long)x->q);
    }
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        return err;
    }
    sort_progress_measure(job, job->n_local * x->rsize, "bytes", 0);
    struct ext_source src = {.n = job->n_local, .pos0 = job->offset, .fd = x->in_fd,
                             .file_offset = job->offset * x->rsize};
    struct ext_dist_room room = {chunk, 2 * chunk};
    uint64_t check[3] = {0, 0, 0};
    err = ext_distribute(job, &src, &x->sp, &x->store, &room, 1,
                         job->cfg->check ? check : NULL);
    if (err == UTIL_OK) {
        err = ext_store_flush(&x->store, job->rank);
    }
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        return err;
    }
    if ((err = sort_agree(job, input_unchanged(x))) != UTIL_OK) {
        return err;
    }
    if (job->cfg->check) {
        MPI_Allreduce(check, job->check_in, 3, MPI_UINT64_T, MPI_SUM, job->comm);
    }
    /* Every bucket's size, for the offsets of pass 2. */
    x->sizes = util_malloc(p * x->q * sizeof(uint64_t));
    uint64_t *mine = util_malloc(x->q * sizeof(uint64_t));
    err = x->sizes && mine ? UTIL_OK : util_fail(UTIL_ENOMEM, "rank %d: out of memory", job->rank);
    if ((err = sort_agree(job, err)) == UTIL_OK) {
        for (uint64_t b = 0; b < x->q; b++) {
            mine[b] = x->store.b[b].n;
        }
        MPI_Allgather(mine, (int)x->q, MPI_UINT64_T, x->sizes, (int)x->q, MPI_UINT64_T, job->comm);
    }
    util_free(mine);
    ext_splitters_free(&x->sp);
    return err;
}

/* Pass 2 (the "sort_buckets" phase). */
static int phase_sort_buckets(struct sort_job *job)
{
    struct ext *x = job->ext;
    uint64_t at = 0, mine = 0;
    for (uint64_t i = 0; i < (uint64_t)job->rank * x->q; i++) {
        at += x->sizes[i];
    }
    for (uint64_t b = 0; b < x->q; b++) {
        mine += x->store.b[b].n;
    }
    sort_progress_measure(job, mine * x->rsize, "bytes", 0);
    /* Pass 1's buffers go back to the system before pass 2 takes its own (util_release). */
    util_release();
    x->first = util_malloc(x->rsize);
    x->last = util_malloc(x->rsize);
    int err = x->first && x->last && alloc_pass2(x) == UTIL_OK
                  ? UTIL_OK
                  : util_fail(UTIL_ENOMEM, "rank %d: sort_buckets: out of memory for the "
                                           "buffers", job->rank);
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        return err;
    }
    err = sort_store(x, &x->store, at, 0);
    if (err == UTIL_OK && job->cfg->sync && fsync(x->out_fd) != 0) {
        err = util_fail(UTIL_EIO, "rank %d: write: sync failed: %s (%s)", job->rank,
                        strerror(errno), job->tmp_path);
    }
    if (close(x->out_fd) != 0 && err == UTIL_OK) {
        err = util_fail(UTIL_EIO, "rank %d: write: %s (%s)", job->rank, strerror(errno),
                        job->tmp_path);
    }
    x->out_fd = -1;
    free_pass2(x);
    job->n_out = x->n_out;
    uint64_t split = job->stats->split_buckets;
    MPI_Allreduce(&split, &job->stats->split_buckets, 1, MPI_UINT64_T, MPI_SUM, job->comm);
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        return err;
    }
    /* The size check that catches a write which failed without saying so. */
    struct stat st = {0};
    if (job->rank == 0 && (stat(job->tmp_path, &st) != 0 ||
                           (uint64_t)st.st_size != job->n_total * x->rsize)) {
        err = util_fail(UTIL_EIO, "rank 0: write: output has %lld bytes, expected %llu (%s)",
                        (long long)st.st_size, (unsigned long long)(job->n_total * x->rsize),
                        job->tmp_path);
    }
    return err;
}

/* --check's verdict over what pass 2 saw (the "check" phase). */
static int phase_check(struct sort_job *job)
{
    struct ext *x = job->ext;
    return sort_check_verdict(job, x->bad, x->n_out, x->n_out ? x->first : NULL,
                              x->n_out ? x->last : NULL, x->sum);
}

int ext_sort_file(struct sort_job *job)
{
    struct ext x;
    memset(&x, 0, sizeof(x));
    x.job = job;
    x.mem = job->mem_budget;
    x.in_fd = -1;
    x.out_fd = -1;
    job->ext = &x;
    job->stats->external = 1;
    job->stats->exchange_name = job->exchange->name;
    job->stats->epsilon_bound = 0; /* the buckets' sizes follow the sample: no bound */
    job->stats->finish = "none";
    int err = prepare(&x);
    job->stats->buckets = (uint64_t)job->size * x.q;
    if (err == UTIL_OK) {
        err = sort_run_phase(job, SORTEX_PHASE_SAMPLE, phase_sample);
    }
    if (err == UTIL_OK) {
        err = sort_run_phase(job, SORTEX_PHASE_DISTRIBUTE, phase_distribute);
    }
    uint64_t rd = 0, wr = 0;
    if (x.aio != NULL) {
        util_aio_bytes(x.aio, &rd, &wr);
        job->stats->pass_bytes[0][0] += rd;
        job->stats->pass_bytes[0][1] += wr;
    }
    if (err == UTIL_OK) {
        err = sort_run_phase(job, SORTEX_PHASE_SORT_BUCKETS, phase_sort_buckets);
    }
    if (err == UTIL_OK && job->cfg->check) {
        err = sort_run_phase(job, SORTEX_PHASE_CHECK, phase_check);
    }
    if (x.aio != NULL) {
        uint64_t r2 = 0, w2 = 0;
        util_aio_bytes(x.aio, &r2, &w2);
        job->stats->pass_bytes[1][0] = r2 - rd;
        job->stats->pass_bytes[1][1] = w2 - wr;
    }
    job->stats->temp_bytes += x.store.temp_bytes;
    free_pass2(&x);
    ext_splitters_free(&x.sp);
    ext_store_close(&x.store);
    util_aio_stop(x.aio);
    if (x.in_fd >= 0) {
        (void)close(x.in_fd);
    }
    if (x.out_fd >= 0) {
        (void)close(x.out_fd);
    }
    util_free(x.sizes);
    util_free(x.first);
    util_free(x.last);
    util_free(x.dirs);
    util_free(x.dir_alloc);
    job->ext = NULL;
    return err;
}

/*
 * verify/files.c: verifying files in bounded memory with OpenMP threads (see verify.h).
 *
 * Scheme: the files of a sequence (the sorted parts, or the original inputs) are cut into
 * blocks of B records (8-byte keys, or records of a byte-key format), a block never spanning two
 * files, and numbered globally. Threads take blocks dynamically (so they stay close together in
 * the file and the kernel's readahead keeps working) and read each with pread into a private
 * buffer of B + 1 records. For the order check a block also reads the record just before it:
 * from its own file, or the last record of the nearest earlier non-empty file at a file
 * boundary; so every boundary is checked by exactly one block and no block needs another's
 * result. Per block of keys: checksum the keys as stored, map them with the key type's
 * to_ordered, count descents (a branch-free, vectorized loop), and only when there are some
 * find the first one. Per block of records (verify/records.c): checksum whole records, sum
 * gensort's CRC-32s, and count descents and duplicate keys in one loop. Checksums and counts
 * are sums (OpenMP reductions); the first bad position is a minimum over threads.
 *
 * Cost: one pass over the bytes, O(n / T) work per thread, memory T * (B + 1) records plus
 * three numbers per file. Nothing is ever mapped or held beyond one block per thread, so files
 * larger than memory are fine (the page cache does the rest).
 */
#include "verify/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

#define NO_FILE         SIZE_MAX
#define BLOCK_BYTES_MAX ((size_t)1 << 30)

/* A list of files read as one concatenated sequence of records. */
struct seq {
    size_t n;                 /* number of files */
    const char *what;         /* their role in messages: "sorted file", "input" */
    const char *const *paths; /* their names (owned by the caller) */
    size_t rsize;             /* bytes per record (8 for keys) */
    int *fd;                  /* open descriptors, -1 when not open */
    uint64_t *recs;           /* records in each file */
    uint64_t *start;          /* global index of each file's first record */
    uint64_t *block0;         /* n + 1 entries: global number of each file's first block */
    size_t *prev;             /* nearest earlier file holding records, or NO_FILE */
    uint64_t total;           /* records in all files */
};

/* What one pass over a sequence found. */
struct scan {
    struct verify_checksum sum;
    struct verify_crc_sum crc; /* records only */
    uint64_t descents;
    uint64_t duplicates; /* records only */
    uint64_t first_bad;  /* global index, VERIFY_NONE if none */
    size_t bad_file;
    uint64_t bad_file_index;
    uint64_t bad_prev; /* keys: in ordered encoding */
    uint64_t bad_key;
    unsigned char bad_prev_bytes[VERIFY_KEY_SHOWN]; /* records: the first key bytes */
    unsigned char bad_key_bytes[VERIFY_KEY_SHOWN];
};

static void seq_close(struct seq *s)
{
    for (size_t i = 0; s->fd != NULL && i < s->n; i++) {
        if (s->fd[i] >= 0) {
            (void)close(s->fd[i]);
        }
    }
    util_free(s->fd);
    util_free(s->recs);
    util_free(s->start);
    util_free(s->block0);
    util_free(s->prev);
    memset(s, 0, sizeof(*s));
}

/* Checks and opens every file of @paths (@what: their role, for messages) and lays out its
 * blocks of @block_recs records of @rsize bytes. */
static int seq_open(struct seq *s, const char *const *paths, size_t n, const char *what,
                    size_t rsize, size_t block_recs)
{
    int err = UTIL_OK;
    memset(s, 0, sizeof(*s));
    s->n = n;
    s->what = what;
    s->paths = paths;
    s->rsize = rsize;
    s->fd = util_malloc(n * sizeof(*s->fd));
    s->recs = util_malloc(n * sizeof(*s->recs));
    s->start = util_malloc(n * sizeof(*s->start));
    s->block0 = util_malloc((n + 1) * sizeof(*s->block0));
    s->prev = util_malloc(n * sizeof(*s->prev));
    if (s->fd == NULL || s->recs == NULL || s->start == NULL || s->block0 == NULL ||
        s->prev == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for the file table (%zu files)", n);
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        s->fd[i] = -1;
    }

    size_t last = NO_FILE;
    s->block0[0] = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t size = 0;
        err = util_check_input(paths[i], what, rsize, &size);
        if (err != UTIL_OK) {
            goto fail;
        }
        /* It was there a moment ago (util_check_input()): gone or unreadable now, it changed
         * while the program ran, a runtime failure. */
        s->fd[i] = open(paths[i], O_RDONLY | O_CLOEXEC);
        if (s->fd[i] < 0) {
            err = util_fail(UTIL_EIO, "cannot open %s: %s (%s)", what, strerror(errno), paths[i]);
            goto fail;
        }
        /* Blocks are taken mostly in order: ask for aggressive readahead. */
        (void)posix_fadvise(s->fd[i], 0, 0, POSIX_FADV_SEQUENTIAL);
        s->recs[i] = size / rsize;
        s->start[i] = s->total;
        s->total += s->recs[i];
        s->block0[i + 1] = s->block0[i] + (s->recs[i] + block_recs - 1) / block_recs;
        s->prev[i] = last;
        if (s->recs[i] > 0) {
            last = i;
        }
    }
    return UTIL_OK;

fail:
    seq_close(s);
    return err;
}

/* Reads exactly @count records at record index @first of file @f into @buf. */
static int read_recs(const struct seq *s, size_t f, void *buf, size_t count, uint64_t first)
{
    char *p = buf;
    size_t left = count * s->rsize;
    off_t off = (off_t)(first * s->rsize);
    while (left > 0) {
        ssize_t got = pread(s->fd[f], p, left, off);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return util_fail(UTIL_EIO, "cannot read %s: %s (%s)", s->what, strerror(errno),
                             s->paths[f]);
        }
        if (got == 0) {
            return util_fail(UTIL_EIO, "%s shrank while being read (%s)", s->what, s->paths[f]);
        }
        p += got;
        off += got;
        left -= (size_t)got;
    }
    return UTIL_OK;
}

/* Finds the file holding global block @b: the last file whose first block is <= b (a file
 * without blocks never qualifies, since the next file starts at the same block). */
static size_t file_of_block(const struct seq *s, uint64_t b)
{
    size_t lo = 0, hi = s->n; /* block0[lo] <= b < block0[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->block0[mid] <= b) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Records the first error of a parallel pass; later ones are dropped (they were reported). */
static void set_error(atomic_int *err, int e)
{
    int expected = UTIL_OK;
    (void)atomic_compare_exchange_strong(err, &expected, e);
}

/* Records: checksums of @count records at @data (the one before it at data - rsize when
 * @has_prev), and with @order their order, into @acc. @first: the block's first record in file
 * @f of @s. */
static void scan_records(const struct seq *s, size_t f, uint64_t first, const unsigned char *data,
                         size_t count, size_t has_prev, bool order, const struct util_format *fmt,
                         struct scan *acc)
{
    const size_t r = s->rsize;
    acc->sum = verify_checksum_combine(acc->sum, verify_checksum_records(data, count, r));
    acc->crc = verify_crc_combine(acc->crc, verify_crc_records(data, count, r));
    if (!order) {
        return;
    }
    const unsigned char *from = data - has_prev * r;
    struct verify_order o = verify_order_records(fmt, from, count + has_prev);
    acc->descents += o.descents;
    acc->duplicates += o.duplicates;
    if (o.descents > 0) {
        uint64_t in_file = first + o.first_descent - has_prev;
        uint64_t global = s->start[f] + in_file;
        if (global < acc->first_bad) {
            size_t shown = fmt->key_size < VERIFY_KEY_SHOWN ? fmt->key_size : VERIFY_KEY_SHOWN;
            acc->first_bad = global;
            acc->bad_file = f;
            acc->bad_file_index = in_file;
            memcpy(acc->bad_prev_bytes, from + (o.first_descent - 1) * r + fmt->key_offset, shown);
            memcpy(acc->bad_key_bytes, from + o.first_descent * r + fmt->key_offset, shown);
        }
    }
}

/*
 * Processes global block @b of @s into the thread's running totals: reads it (with the record
 * before it when @order), checksums it, and with @order checks it (keys: mapped first).
 */
static int scan_block(const struct seq *s, uint64_t b, size_t block_recs, bool order,
                      const struct util_format *type, unsigned char *buf, struct scan *acc)
{
    const size_t r = s->rsize;
    size_t f = file_of_block(s, b);
    uint64_t first = (b - s->block0[f]) * block_recs; /* index of the block's first record */
    size_t count = (size_t)(s->recs[f] - first < block_recs ? s->recs[f] - first : block_recs);
    unsigned char *data = buf + r;
    size_t has_prev = 0;
    int err;

    /* Read: the block, and for the order check the record just before it. */
    if (order && first > 0) {
        err = read_recs(s, f, buf, count + 1, first - 1);
        has_prev = 1;
    } else {
        err = read_recs(s, f, data, count, first);
        if (err == UTIL_OK && order && s->prev[f] != NO_FILE) {
            size_t p = s->prev[f];
            err = read_recs(s, p, buf, 1, s->recs[p] - 1);
            has_prev = 1;
        }
    }
    if (err != UTIL_OK) {
        return err;
    }
    if (type->byte_key) {
        scan_records(s, f, first, data, count, has_prev, order, type, acc);
        return UTIL_OK;
    }

    /* Keys: checksum them as stored (before the order-preserving map). The buffer is
     * aligned, and so is every 8-byte key in it. */
    uint64_t *keys = (uint64_t *)(void *)data;
    acc->sum = verify_checksum_combine(acc->sum, verify_checksum_keys(keys, count));
    if (!order) {
        return UTIL_OK;
    }

    /* Order: map, count descents, locate the first only when there is one. */
    uint64_t *from = keys - has_prev;
    size_t len = count + has_prev;
    if (type->to_ordered != NULL) {
        type->to_ordered(from, len);
    }
    uint64_t d = verify_count_descents(from, len);
    if (d > 0) {
        acc->descents += d;
        uint64_t i = verify_first_descent(from, len);
        uint64_t in_file = first + i - has_prev;
        uint64_t global = s->start[f] + in_file;
        if (global < acc->first_bad) {
            acc->first_bad = global;
            acc->bad_file = f;
            acc->bad_file_index = in_file;
            acc->bad_prev = from[i - 1];
            acc->bad_key = from[i];
        }
    }
    return UTIL_OK;
}

/* One parallel pass over @s with @threads threads: checksum, and with @order the order. */
static int scan_seq(const struct seq *s, bool order, const struct util_format *type, int threads,
                    size_t block_recs, struct scan *out)
{
    uint64_t nblocks = s->block0[s->n];
    atomic_int err = UTIL_OK;

    memset(out, 0, sizeof(*out));
    out->first_bad = VERIFY_NONE;

#pragma omp parallel num_threads(threads)
    {
        struct scan mine = {.first_bad = VERIFY_NONE};
        unsigned char *buf = util_malloc((block_recs + 1) * s->rsize);
        if (buf == NULL) {
            set_error(&err, util_fail(UTIL_ENOMEM, "out of memory for a read buffer (%zu bytes)",
                                      (block_recs + 1) * s->rsize));
        }

#pragma omp for schedule(dynamic, 1)
        for (uint64_t b = 0; b < nblocks; b++) {
            if (atomic_load_explicit(&err, memory_order_relaxed) != UTIL_OK) {
                continue; /* drain the loop quickly after a failure */
            }
            int e = scan_block(s, b, block_recs, order, type, buf, &mine);
            if (e != UTIL_OK) {
                set_error(&err, e);
            }
        }

        /* Merge: sums add up, the first bad position is the minimum. */
#pragma omp critical(verify_merge)
        {
            out->sum = verify_checksum_combine(out->sum, mine.sum);
            out->crc = verify_crc_combine(out->crc, mine.crc);
            out->descents += mine.descents;
            out->duplicates += mine.duplicates;
            if (mine.first_bad < out->first_bad) {
                out->first_bad = mine.first_bad;
                out->bad_file = mine.bad_file;
                out->bad_file_index = mine.bad_file_index;
                out->bad_prev = mine.bad_prev;
                out->bad_key = mine.bad_key;
                memcpy(out->bad_prev_bytes, mine.bad_prev_bytes, sizeof(mine.bad_prev_bytes));
                memcpy(out->bad_key_bytes, mine.bad_key_bytes, sizeof(mine.bad_key_bytes));
            }
        }
        util_free(buf);
    }
    return atomic_load(&err);
}

/* Maps one key from the ordered encoding back to the file's. */
static uint64_t to_file_encoding(const struct util_format *type, uint64_t k)
{
    if (type->from_ordered != NULL) {
        type->from_ordered(&k, 1);
    }
    return k;
}

static uint64_t seq_bytes(const struct seq *s)
{
    return s->total * s->rsize;
}

/* Check the configuration: the files, the key type (*type: u64 unless the caller chose one) and
 * the block size (*block_bytes: VERIFY_BLOCK_DEFAULT unless chosen). */
static int check_config(const struct verify_config *cfg, const struct util_format **type,
                        size_t *block_bytes)
{
    *type = cfg->format ? cfg->format : util_format_find("u64");
    *block_bytes = cfg->block_bytes ? cfg->block_bytes : VERIFY_BLOCK_DEFAULT;
    if (cfg->n_sorted == 0 || cfg->sorted == NULL) {
        return util_error("no sorted file given (%zu files)", cfg->n_sorted);
    }
    if (cfg->n_inputs > 0 && cfg->inputs == NULL) {
        return util_error("input files announced but not given (%zu files)", cfg->n_inputs);
    }
    if (*type == NULL || (!(*type)->byte_key && (*type)->record_size != sizeof(uint64_t))) {
        return util_error("key type is not 8 bytes wide (%s)", *type ? (*type)->name : "none");
    }
    if (*block_bytes % sizeof(uint64_t) != 0 || *block_bytes > BLOCK_BYTES_MAX) {
        return util_error("block size must be a multiple of 8 bytes, at most 1 GiB (%zu)",
                          *block_bytes);
    }
    return UTIL_OK;
}

/* The verdict on the sorted files (@so, the pass over @sorted): their order, checksums, and the
 * first descent as the file holds it. */
static void verdict_sorted(const struct scan *so, const struct seq *sorted,
                           const struct util_format *type, struct verify_result *res)
{
    res->sorted = so->descents == 0;
    res->descents = so->descents;
    res->sorted_sum = so->sum;
    res->bytes = seq_bytes(sorted);
    res->records = type->byte_key;
    res->duplicates = so->duplicates;
    res->sorted_crc = so->crc;
    if (!res->sorted) {
        res->first_bad = so->first_bad;
        res->bad_file = so->bad_file;
        res->bad_file_index = so->bad_file_index;
        if (type->byte_key) {
            res->bad_shown = type->key_size < VERIFY_KEY_SHOWN ? type->key_size : VERIFY_KEY_SHOWN;
            memcpy(res->bad_prev_bytes, so->bad_prev_bytes, res->bad_shown);
            memcpy(res->bad_key_bytes, so->bad_key_bytes, res->bad_shown);
        } else {
            res->bad_prev = to_file_encoding(type, so->bad_prev);
            res->bad_key = to_file_encoding(type, so->bad_key);
        }
    }
    res->valid = res->sorted;
}

/* The verdict of the comparison with the inputs (@in, the pass over @inputs): the same count,
 * the same multiset. */
static void verdict_inputs(const struct scan *so, const struct scan *in, const struct seq *inputs,
                           struct verify_result *res)
{
    res->compared = true;
    res->input_sum = in->sum;
    res->input_crc = in->crc;
    res->bytes += seq_bytes(inputs);
    res->same_count = so->sum.count == in->sum.count;
    res->same_multiset = verify_checksum_equal(so->sum, in->sum) && so->crc.hi == in->crc.hi &&
                         so->crc.lo == in->crc.lo;
    res->valid = res->valid && res->same_multiset;
}

int verify_files(const struct verify_config *cfg, struct verify_result *res)
{
    struct seq sorted = {0}, inputs = {0};
    struct scan so, in;
    const struct util_format *type;
    size_t block_bytes;
    int err;

    memset(res, 0, sizeof(*res));
    res->first_bad = VERIFY_NONE;

    if ((err = check_config(cfg, &type, &block_bytes)) != UTIL_OK) {
        return err;
    }
    const size_t rsize = type->record_size;
    size_t block_recs = block_bytes / rsize > 0 ? block_bytes / rsize : 1;
    int threads = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
    res->threads = threads;

    /* Open everything before reading anything: a missing input fails fast. */
    err = seq_open(&sorted, cfg->sorted, cfg->n_sorted, "sorted file", rsize, block_recs);
    if (err != UTIL_OK) {
        goto fail;
    }
    if (cfg->n_inputs > 0) {
        err = seq_open(&inputs, cfg->inputs, cfg->n_inputs, "input", rsize, block_recs);
        if (err != UTIL_OK) {
            goto fail;
        }
    }

    util_knob_stall("verify-read", 0); /* the tests' window to change a file before it is read */

    /* The passes. */
    double t0 = util_now();
    err = scan_seq(&sorted, true, type, threads, block_recs, &so);
    if (err != UTIL_OK) {
        goto fail;
    }
    if (cfg->n_inputs > 0) {
        err = scan_seq(&inputs, false, type, threads, block_recs, &in);
        if (err != UTIL_OK) {
            goto fail;
        }
    }
    res->seconds = util_now() - t0;

    /* The verdict. */
    verdict_sorted(&so, &sorted, type, res);
    if (cfg->n_inputs > 0) {
        verdict_inputs(&so, &in, &inputs, res);
    }

fail:
    seq_close(&sorted);
    seq_close(&inputs);
    return err;
}

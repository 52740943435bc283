/*
 * datagen/write.c: writes a whole data file (see datagen_write() in datagen.h).
 *
 * Scheme: the file is cut into blocks of about WRITE_BLOCK_BYTES (whole records); OpenMP threads
 * take blocks dynamically, generate each into their own reused buffer with
 * datagen_fill_records() and pwrite() it at its offset. Memory is threads x 4 MiB whatever n is,
 * and since every record depends only on its position the bytes do not depend on which thread
 * wrote which block. Generation of one block
 * overlaps the copy into the page cache of another, so on two threads uniform keys are written
 * at about the speed of the page cache. The data goes to a temporary name in the same directory
 * and is renamed at the end (atomic on POSIX file systems); every failure removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datagen/datagen.h"
#include "util/alloc.h"
#include "util/temp.h"
#include "util/util.h"

#define WRITE_BLOCK_BYTES ((uint64_t)4 << 20) /* a block: 4 MiB, or one record if larger */
#define PROGRESS_PERIOD 0.25 /* seconds between updates on a terminal */

/* pwrite() all of buf at off, retrying short writes and interruptions. Returns 0 or errno. */
static int write_all(int fd, const void *buf, size_t len, off_t off)
{
    const char *c = buf;
    while (len > 0) {
        ssize_t w = pwrite(fd, c, len, off);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        if (w == 0) {
            return EIO;
        }
        c += w;
        len -= (size_t)w;
        off += w;
    }
    return 0;
}

/* Progress on stderr: a rewritten line on a terminal, else one line a second. */
struct progress {
    bool on, tty, shown;
    double start, last;
    uint64_t total_bytes;
};

static void progress_show(struct progress *pr, uint64_t bytes, bool final)
{
    double now = util_now();
    double period = pr->tty ? PROGRESS_PERIOD : 1.0;
    if (!pr->on || (!final && now - pr->last < period)) {
        return;
    }
    pr->last = now;
    pr->shown = true;
    double secs = now - pr->start;
    double mb = (double)bytes / 1e6;
    double rate = secs > 0 ? mb / secs : 0.0;
    if (final) {
        fprintf(stderr, "%s: wrote %.1f MB in %.2f s (%.0f MB/s)\n", util_progname(), mb, secs,
                rate);
    } else {
        fprintf(stderr, "%s%s: %3.0f%% of %.1f MB (%.0f MB/s)%s", pr->tty ? "\r" : "",
                util_progname(), 100.0 * (double)bytes / (double)pr->total_bytes,
                (double)pr->total_bytes / 1e6, rate, pr->tty ? "" : "\n");
    }
    fflush(stderr);
}

/* One file being written: what its threads share. */
struct write_job {
    const struct datagen_params *p;
    int fd, threads;
    size_t rsize;
    uint64_t block_recs; /* records a block */
    uint64_t blocks;
    uint64_t done;    /* records written */
    int first_errno;  /* errno of the first failed write or close */
    int alloc_failed; /* 1: a thread could not get its buffer; 2: nor its scratch */
    struct progress pr;
};

/* Block b, generated into this thread's @buf and written at its offset; skipped after a
 * failure. Thread 0 shows the progress. */
static void write_block(struct write_job *w, uint64_t b, unsigned char *buf)
{
    const struct datagen_params *p = w->p;
    int failed, no_buf;
#pragma omp atomic read
    failed = w->first_errno;
#pragma omp atomic read
    no_buf = w->alloc_failed;
    if (failed != 0 || no_buf != 0 || buf == NULL) {
        return;
    }
    uint64_t first = b * w->block_recs;
    uint64_t c = p->n - first < w->block_recs ? p->n - first : w->block_recs;
    if (datagen_fill_records(p, first, c, buf) != UTIL_OK) {
#pragma omp atomic write
        w->alloc_failed = 2; /* a key distribution's scratch buffer (reported) */
        return;
    }
    int e = write_all(w->fd, buf, c * w->rsize, (off_t)(first * w->rsize));
    if (e != 0) {
        /* Keep the first errno; later ones are usually consequences of it. */
#pragma omp critical(datagen_write_error)
        {
            int cur;
#pragma omp atomic read
            cur = w->first_errno;
            if (cur == 0) {
#pragma omp atomic write
                w->first_errno = e;
            }
        }
    }
    uint64_t now_done;
#pragma omp atomic capture
    now_done = w->done += c;
    if (omp_get_thread_num() == 0) {
        progress_show(&w->pr, now_done * w->rsize, false);
    }
}

/* Generate and write the blocks; after a failure the remaining blocks are skipped. */
static void write_blocks(struct write_job *w)
{
#pragma omp parallel num_threads(w->threads)
    {
        unsigned char *buf = util_alloc_big((size_t)w->block_recs * w->rsize);
        if (buf == NULL) {
#pragma omp atomic write
            w->alloc_failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t b = 0; b < w->blocks; b++) {
            write_block(w, b, buf);
        }
        util_free_big(buf);
    }
}

/* Close (a late write error may surface here), then rename or clean up; the final progress
 * line after success (@bytes written). Frees @tmp. */
static int write_close(struct write_job *w, char *tmp, const char *path, uint64_t bytes)
{
    if (close(w->fd) != 0 && w->first_errno == 0) {
        w->first_errno = errno;
    }
    int rc = UTIL_OK;
    if (w->pr.tty && w->pr.shown) {
        fputc('\n', stderr); /* end the rewritten progress line before any other line */
    }
    if (w->alloc_failed == 2) {
        rc = UTIL_ENOMEM;
    } else if (w->alloc_failed) {
        rc = util_fail(UTIL_ENOMEM, "out of memory for the write buffers (%d threads)", w->threads);
    } else if (w->first_errno != 0) {
        rc = util_fail(UTIL_EIO, "cannot write output: %s (%s)", strerror(w->first_errno), path);
    }
    if (rc != UTIL_OK) {
        (void)util_temp_remove(tmp);
    } else if ((w->first_errno = util_temp_commit(tmp, path)) != 0) {
        rc = util_fail(UTIL_EIO, "cannot rename the output into place: %s (%s)",
                       util_temp_strerror(w->first_errno), path);
    }
    util_free(tmp);
    if (rc == UTIL_OK) {
        progress_show(&w->pr, bytes, true);
    }
    return rc;
}

int datagen_write(const struct datagen_params *p, const char *path,
                  const struct datagen_write_opts *opts)
{
    static const struct datagen_write_opts defaults = {0, false};
    opts = opts != NULL ? opts : &defaults;
    struct write_job w = {.p = p};
    w.threads = opts->threads > 0 ? opts->threads : omp_get_max_threads();
    char *tmp = NULL;
    w.fd = util_temp_create(path, &tmp);
    if (w.fd < 0) {
        /* util_check_output() found the directory writable: a failure here is the file
         * system's (no inode left, read-only now), a runtime failure. */
        return util_fail(UTIL_EIO, "cannot create output: %s (%s)", strerror(errno), path);
    }

    /* Refuse up front what cannot fit, rather than filling the file system first. */
    w.rsize = datagen_format(p)->record_size;
    w.block_recs = WRITE_BLOCK_BYTES / w.rsize > 0 ? WRITE_BLOCK_BYTES / w.rsize : 1;
    uint64_t bytes = p->n * w.rsize, avail = 0;
    if (util_temp_space(w.fd, bytes, &avail) != 0) {
        (void)close(w.fd);
        (void)util_temp_remove(tmp);
        util_free(tmp);
        return util_fail(UTIL_EIO, "not enough free space for %llu bytes, %llu available (%s)",
                         (unsigned long long)bytes, (unsigned long long)avail, path);
    }

    w.pr = (struct progress){opts->progress, isatty(STDERR_FILENO) == 1, false, util_now(), 0.0,
                             bytes};
    w.pr.last = w.pr.start;
    w.blocks = (p->n + w.block_recs - 1) / w.block_recs;
    write_blocks(&w);
    return write_close(&w, tmp, path, bytes);
}

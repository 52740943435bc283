/*
 * sort/io_write.c: phase 8, every rank writes its slice at its global offset (an exclusive scan of
 * the slice sizes) with collective MPI-IO into a temporary file beside the output; the output
 * name appears, by an atomic rename on rank 0, only after every rank has succeeded.
 *
 * The temporary file is ".NAME.sortex-tmp.<pid>-<random>" in the output's directory (NAME
 * shortened when the directory's name limit asks for it, util/temp.h). Rank 0 tracks it, so a
 * signal that ends rank 0 removes it (when the program installed util_temp_signals()); a job
 * killed with SIGKILL leaves at most that file behind. Whatever happens, a file under the
 * final name is always a complete sort: the rename is the last step, after every rank
 * succeeded.
 *
 * Collective MPI-IO does not always report a failed write: Open MPI's OMPIO component was seen
 * here to return success from a collective write that hit a full filesystem, leaving a short
 * file. So rank 0 creates the file and reserves its full size (fallocate, or on file systems
 * without it a free-space check) before any rank writes, which turns "disk full" into a clear
 * error up front, and checks the size of the finished file before the rename.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sort/internal.h"
#include "util/alloc.h"
#include "util/temp.h"
#include "util/util.h"


/* Rank 0 chooses the temporary name; every rank receives it, and all agree that each has it,
 * so that tmp_path is set on every rank or on none (the commit's collective depends on it). */
int sort_write_name(struct sort_job *job)
{
    char name[4096] = "";
    if (job->rank == 0) {
        char tag[UTIL_TEMP_TAG_MAX + 1];
        uint64_t r = 0;
        if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
            r = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20) ^ (uint64_t)rand();
        }
        (void)snprintf(tag, sizeof(tag), "%ld-%016llx", (long)getpid(), (unsigned long long)r);
        char *t = util_temp_name(job->out_path, tag);
        if (t != NULL && strlen(t) < sizeof(name)) {
            memcpy(name, t, strlen(t) + 1);
        }
        util_free(t);
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, job->comm);
    if (name[0] == '\0') {
        return job->rank == 0 ? util_fail(UTIL_ENOMEM, "write: cannot build a temporary name "
                                                       "beside %s", job->out_path)
                              : UTIL_ENOMEM;
    }
    job->tmp_path = util_malloc(strlen(name) + 1);
    int ok = job->tmp_path != NULL;
    if (ok) {
        memcpy(job->tmp_path, name, strlen(name) + 1);
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        int mine = job->tmp_path == NULL;
        util_free(job->tmp_path);
        job->tmp_path = NULL;
        return mine ? util_fail(UTIL_ENOMEM, "rank %d: write: out of memory", job->rank)
                    : UTIL_ENOMEM;
    }
    return UTIL_OK;
}

/* Rank 0 creates the temporary file and reserves its full size; all ranks learn the outcome. */
int sort_write_create(struct sort_job *job, uint64_t bytes)
{
    int err = UTIL_OK;
    if (job->rank == 0) {
        /* Tracked before it exists, so that no signal finds it created and not yet tracked (the
         * name is this process's own: its PID and 64 random bits). */
        util_temp_track(job->tmp_path);
        int fd = open(job->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) {
            /* Not ours (O_EXCL): never to be removed by the commit or a signal. */
            int e = errno;
            util_temp_done(job->tmp_path);
            err = util_fail(UTIL_EIO, "rank 0: write: cannot create %s: %s", job->tmp_path,
                            strerror(e));
        } else {
            job->tmp_created = 1;
            int rc = util_temp_reserve(fd, bytes);
            if (rc != 0) {
                err = util_fail(UTIL_EIO, "rank 0: write: cannot reserve %llu bytes: %s (%s)",
                                (unsigned long long)bytes, strerror(rc), job->tmp_path);
            }
            if (close(fd) != 0 && err == UTIL_OK) {
                err = util_fail(UTIL_EIO, "rank 0: write: %s (%s)", strerror(errno),
                                job->tmp_path);
            }
        }
    }
    return sort_agree(job, err);
}

/* Collective MPI-IO: each rank writes its slice at its offset into the reserved file. */
static int write_mpiio(struct sort_job *job)
{
    MPI_File fh;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, err = UTIL_OK;
    uint64_t offset = 0;
    MPI_Exscan(&job->n_out, &offset, 1, MPI_UINT64_T, MPI_SUM, job->comm);
    if (job->rank == 0) {
        offset = 0;
    }
    if ((err = sort_file_open(job, job->tmp_path, MPI_MODE_WRONLY, &fh, "write")) != UTIL_OK) {
        return err;
    }
    sort_progress_measure(job, job->n_out * job->rsize, "bytes", 0);
    uint64_t done = 0;
    int rc = sort_io_chunks(job, fh, 1, offset, job->out, job->n_out, &done);
    if (rc != MPI_SUCCESS || done != job->n_out) {
        if (rc != MPI_SUCCESS) {
            MPI_Error_string(rc, msg, &len);
        } else {
            (void)snprintf(msg, sizeof(msg), "short write");
        }
        err = util_fail(UTIL_EIO, "rank %d: write: %s (%s)", job->rank, msg, job->tmp_path);
    }
    if (err == UTIL_OK && job->cfg->sync && MPI_File_sync(fh) != MPI_SUCCESS) {
        err = util_fail(UTIL_EIO, "rank %d: write: sync failed (%s)", job->rank, job->tmp_path);
    }
    if (MPI_File_close(&fh) != MPI_SUCCESS && err == UTIL_OK) {
        err = util_fail(UTIL_EIO, "rank %d: write: close failed (%s)", job->rank, job->tmp_path);
    }
    return err;
}

/* Root I/O: rank 0 writes everything the gather brings to the temporary file or stdout. */
static int write_root(struct sort_job *job)
{
    int fd = -1, err = UTIL_OK;
    int to_stdout = job->tmp_path == NULL;
    if (job->rank == 0) {
        fd = to_stdout ? sort_root_stdout() : open(job->tmp_path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            err = util_fail(UTIL_EIO, "rank 0: write: cannot open %s: %s",
                            to_stdout ? "standard output" : job->tmp_path, strerror(errno));
        }
    }
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        return err;
    }
    err = sort_root_gather(job, fd);
    if (job->rank == 0 && to_stdout && fd != STDOUT_FILENO && close(fd) != 0 &&
        err == UTIL_OK) {
        err = util_fail(UTIL_EIO, "rank 0: write: %s (standard output)", strerror(errno));
    }
    if (job->rank == 0 && !to_stdout) {
        if (err == UTIL_OK && job->cfg->sync && fsync(fd) != 0) {
            err = util_fail(UTIL_EIO, "rank 0: write: sync failed: %s (%s)", strerror(errno),
                            job->tmp_path);
        }
        if (close(fd) != 0 && err == UTIL_OK) {
            err = util_fail(UTIL_EIO, "rank 0: write: %s (%s)", strerror(errno), job->tmp_path);
        }
    }
    return err;
}

int sort_write(struct sort_job *job)
{
    int err = UTIL_OK;
    uint64_t bytes = job->n_total * job->rsize;
    int to_stdout = job->cfg->io != SORTEX_IO_MPIIO && strcmp(job->out_path, "-") == 0;
    if (job->cfg->format && job->cfg->format->from_ordered) {
        job->cfg->format->from_ordered(job->out, job->n_out);
    }
    if (!to_stdout) {
        if ((err = sort_write_name(job)) != UTIL_OK || (err = sort_write_create(job, bytes)) != UTIL_OK) {
            return err;
        }
    }
    err = job->cfg->io == SORTEX_IO_MPIIO ? write_mpiio(job) : write_root(job);
    if (to_stdout) {
        return err;
    }
    /* The size check that catches a collective write which failed without saying so. */
    struct stat st = {0};
    if (err == UTIL_OK && job->rank == 0 &&
        (stat(job->tmp_path, &st) != 0 || (uint64_t)st.st_size != bytes)) {
        err = util_fail(UTIL_EIO, "rank 0: write: output has %lld bytes, expected %llu (%s)",
                        (long long)st.st_size, (unsigned long long)bytes, job->tmp_path);
    }
    return err;
}

int sort_write_commit(struct sort_job *job, int err)
{
    if (job->tmp_path == NULL) {
        return err; /* nothing was created (failure before the write phase) */
    }
    int rc = UTIL_OK;
    if (job->rank == 0) {
        if (err == UTIL_OK) {
            sort_stall_at(job, "commit"); /* the reliability tests' window before the rename */
            int e = util_temp_commit(job->tmp_path, job->out_path);
            if (e != 0) {
                rc = util_fail(UTIL_EIO, "rank 0: write: cannot rename %s to %s: %s",
                               job->tmp_path, job->out_path, util_temp_strerror(e));
            }
        } else if (job->tmp_created) {
            int e = util_temp_remove(job->tmp_path);
            if (e != 0) {
                util_warn("cannot remove the temporary file %s: %s", job->tmp_path, strerror(e));
            }
        }
        util_temp_done(job->tmp_path);
    }
    rc = sort_agree(job, rc);
    return err != UTIL_OK ? err : rc;
}

/*
 * sort/io_read.c: phase 1, every rank reads its contiguous slice with collective MPI-IO.
 *
 * Rank r reads keys [r n/P, (r+1) n/P), so n = 0, n < P and n not divisible by P all work
 * (some ranks read nothing). MPI counts are int: the read is issued in chunks of at most 2^24
 * keys (128 MiB), and every rank takes part in the same number of collective calls.
 *
 * The count MPI reports is not trusted alone: Open MPI's aggregating collective components
 * were seen here to report every key read when the file had shrunk under them, filling the
 * missing keys with zeros. So after the read every rank asks the open file for its size, and
 * once all have finished, rank 0 compares the file with what it checked before the read
 * (device, inode, size and modification time): a file that changed in between in any way,
 * truncated, extended, rewritten or replaced, fails the job instead of being sorted half old.
 */
#include <string.h>

#include "sort/internal.h"
#include "util/util.h"


/* Collective MPI-IO: each rank reads its own slice. */
static int read_mpiio(struct sort_job *job)
{
    MPI_File fh;
    int err = sort_file_open(job, job->in_path, MPI_MODE_RDONLY, &fh, "read");
    if (err != UTIL_OK) {
        return err;
    }
    const uint64_t rsize = job->rsize;
    sort_progress_measure(job, job->n_local * rsize, "bytes", 0);
    uint64_t done = 0;
    int rc = sort_io_chunks(job, fh, 0, job->offset, job->a, job->n_local, &done);
    if (rc != MPI_SUCCESS || done != job->n_local) {
        /* Every rank took part in every collective call; this one reports. */
        err = util_fail(UTIL_EIO, "rank %d: read: the input changed while it was read: "
                                  "it ended before %s %llu (%s)",
                        job->rank, job->fmt ? "record" : "key",
                        (unsigned long long)(job->offset + done), job->in_path);
    }
    /* The size as the open file sees it now, whatever the count said. */
    MPI_Offset size = -1;
    if (MPI_File_get_size(fh, &size) != MPI_SUCCESS ||
        (uint64_t)size != job->n_total * rsize) {
        if (err == UTIL_OK) {
            err = util_fail(UTIL_EIO, "rank %d: read: the input changed size while it was read "
                                      "(%lld bytes, expected %llu) (%s)",
                            job->rank, (long long)size,
                            (unsigned long long)(job->n_total * rsize), job->in_path);
        }
    }
    MPI_File_close(&fh);
    return err;
}

/* Rank 0, once every rank has read: the input is still the file that was checked. */
static int check_unchanged(struct sort_job *job)
{
    struct util_file_id now;
    if (job->rank != 0 || strcmp(job->in_path, "-") == 0) {
        return UTIL_OK;
    }
    if (util_file_id_get(job->in_path, &now) != UTIL_OK || !util_file_id_same(&now, &job->in_id)) {
        return util_fail(UTIL_EIO, "rank 0: read: the input changed while it was read; "
                                   "nothing was written (%s)", job->in_path);
    }
    return UTIL_OK;
}

int sort_read(struct sort_job *job)
{
    int err = UTIL_OK;
    if (job->cfg->io == SORTEX_IO_MPIIO) {
        err = read_mpiio(job);
        MPI_Barrier(job->comm); /* every rank is done reading before rank 0 looks */
        if (err == UTIL_OK) {
            err = check_unchanged(job);
        }
    } else {
        err = sort_root_scatter(job); /* rank 0 checked the file as it loaded it */
    }
    job->stats->n_in = job->n_local;
    return err;
}

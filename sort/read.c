/*
 * sort/read.c: phase 1, every rank reads its contiguous slice with collective MPI-IO.
 *
 * Rank r reads keys [r n/P, (r+1) n/P), so n = 0, n < P and n not divisible by P all work
 * (some ranks read nothing). MPI counts are int: the read is issued in chunks of at most 2^27
 * keys (1 GiB), and every rank takes part in the same number of collective calls.
 */
#include <string.h>

#include "sort/internal.h"
#include "util/util.h"

#define READ_CHUNK ((uint64_t)1 << 27)

/* Collective MPI-IO: each rank reads its own slice. */
static int read_mpiio(struct sort_job *job)
{
    MPI_File fh;
    int err = UTIL_OK;
    int rc = MPI_File_open(job->comm, job->in_path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        return util_fail(UTIL_EIO, "rank %d: read: cannot open input: %s (%s)", job->rank, msg,
                         job->in_path);
    }
    uint64_t chunks = (job->n_local + READ_CHUNK - 1) / READ_CHUNK;
    MPI_Allreduce(MPI_IN_PLACE, &chunks, 1, MPI_UINT64_T, MPI_MAX, job->comm);
    for (uint64_t c = 0; c < chunks; c++) {
        uint64_t first = c * READ_CHUNK;
        uint64_t count = 0;
        if (first < job->n_local) {
            count = job->n_local - first < READ_CHUNK ? job->n_local - first : READ_CHUNK;
        }
        MPI_Status status;
        MPI_Offset off = (MPI_Offset)((job->offset + first) * sizeof(uint64_t));
        rc = MPI_File_read_at_all(fh, off, job->a + first, (int)count, MPI_UINT64_T, &status);
        int got = 0;
        if (rc == MPI_SUCCESS) {
            MPI_Get_count(&status, MPI_UINT64_T, &got);
        }
        if ((rc != MPI_SUCCESS || (uint64_t)got != count) && err == UTIL_OK) {
            /* Keep taking part in the remaining collective calls; report once. */
            err = util_fail(UTIL_EIO, "rank %d: read: short read at key %llu (%s)", job->rank,
                            (unsigned long long)(job->offset + first), job->in_path);
        }
    }
    MPI_File_close(&fh);
    return err;
}

int sort_read(struct sort_job *job)
{
    int err = job->cfg->io == SORTEX_IO_MPIIO ? read_mpiio(job) : sort_root_scatter(job);
    job->stats->n_in = job->n_local;
    if (err == UTIL_OK && job->cfg->keytype && job->cfg->keytype->to_ordered) {
        job->cfg->keytype->to_ordered(job->a, job->n_local);
    }
    return err;
}

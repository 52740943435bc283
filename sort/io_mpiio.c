/*
 * sort/io_mpiio.c: opening the input and the output with MPI-IO, whatever the length of their
 * paths, and the chunked collective reads and writes of the in-memory sort.
 *
 * Open MPI 4.1's OMPIO asks every shared-file-pointer component about a file as it opens it, and
 * two of them build names from the path: lockedfile formats the whole path into a 256-byte
 * buffer (a path of about 245 characters or more aborts the process: "buffer overflow
 * detected"), and sm makes a file in the session directory named after the path's last
 * component plus ~30 characters (a long name fails with an error line on stderr). Both happen
 * inside MPI_File_open, for names the file system accepts. So a path of SORT_MPIIO_PATH_MAX
 * characters or more is opened by each rank with open(2) first and handed to MPI-IO as
 * "/proc/self/fd/N", a short name for the very same file; shorter paths go to MPI-IO as they
 * are, so that MPI-IO still sees the real path (ROMIO picks its file system driver by it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sort/internal.h"
#include "util/util.h"

/* Paths at least this long reach MPI-IO through /proc/self/fd (see above). */
#define SORT_MPIIO_PATH_MAX 200

int sort_file_open(struct sort_job *job, const char *path, int amode, MPI_File *fh,
                   const char *phase)
{
    char alias[64];
    const char *name = path;
    int fd = -1, err = UTIL_OK;
    if (strlen(path) >= SORT_MPIIO_PATH_MAX) {
        fd = open(path, ((amode & MPI_MODE_RDONLY) ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
        if (fd < 0) {
            err = util_fail(UTIL_EIO, "rank %d: %s: cannot open %s: %s", job->rank, phase, path,
                            strerror(errno));
        } else {
            (void)snprintf(alias, sizeof(alias), "/proc/self/fd/%d", fd);
            name = alias;
        }
    }
    /* Every rank takes part in the collective open, or none does. */
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        if (fd >= 0) {
            (void)close(fd);
        }
        return err;
    }
    int rc = MPI_File_open(job->comm, name, amode, MPI_INFO_NULL, fh);
    if (fd >= 0) {
        (void)close(fd); /* MPI-IO holds its own descriptor of the file now */
    }
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        return util_fail(UTIL_EIO, "rank %d: %s: cannot open %s: %s", job->rank, phase, path, msg);
    }
    return UTIL_OK;
}

int sort_io_chunks(struct sort_job *job, MPI_File fh, int write, uint64_t first_elem, void *buf,
                   uint64_t count, uint64_t *done)
{
    const uint64_t chunk = sort_io_chunk(job), rsize = job->rsize;
    uint64_t chunks = (count + chunk - 1) / chunk;
    MPI_Allreduce(MPI_IN_PLACE, &chunks, 1, MPI_UINT64_T, MPI_MAX, job->comm);
    int first_err = MPI_SUCCESS, short_at = 0;
    *done = 0;
    for (uint64_t c = 0; c < chunks; c++) {
        uint64_t from = c * chunk, n = 0;
        if (from < count) {
            n = count - from < chunk ? count - from : chunk;
        }
        MPI_Status status;
        MPI_Offset off = (MPI_Offset)((first_elem + from) * rsize);
        void *at = (unsigned char *)buf + from * rsize;
        int rc = write ? MPI_File_write_at_all(fh, off, at, (int)n, job->mem_type, &status)
                       : MPI_File_read_at_all(fh, off, at, (int)n, job->mem_type, &status);
        sort_progress_add(job, n * rsize);
        if (!write) {
            sort_stall_at(job, "read-chunk"); /* the tests' slow read */
        }
        int got = 0;
        if (rc == MPI_SUCCESS) {
            MPI_Get_count(&status, job->mem_type, &got);
        }
        /* Keep taking part in the remaining collective calls; the first failure counts. */
        if (first_err == MPI_SUCCESS && !short_at) {
            *done = from + (rc == MPI_SUCCESS ? (uint64_t)got : 0);
            first_err = rc;
            short_at = rc == MPI_SUCCESS && (uint64_t)got != n;
        }
    }
    if (first_err == MPI_SUCCESS && !short_at) {
        *done = count;
    }
    return first_err;
}

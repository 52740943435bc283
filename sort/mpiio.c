/*
 * sort/mpiio.c: opening the input and the output with MPI-IO, whatever the length of their
 * paths.
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

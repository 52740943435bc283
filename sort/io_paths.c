/*
 * sort/io_paths.c: the file sort's checks of its input and output before anything is read: a
 * readable input whose size is whole records, an output that can be written through a
 * temporary name beside it and is not the input, and for root I/O, a standard output that is
 * the job's (sort/io_root.c). The reads check the input again (sort/io_read.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sort/internal.h"
#include "util/util.h"

/* Rank 0 checks the input and output paths and notes the input's identity (sort_read() checks
 * it again after reading); all ranks learn the verdict and the input size. */
int sort_check_paths(struct sort_job *job, uint64_t *bytes)
{
    int err = UTIL_OK;
    *bytes = 0;
    if (job->rank == 0) {
        int root = job->cfg->io != SORTEX_IO_MPIIO; /* root I/O: "-" is a pipe */
        if (!root && (strcmp(job->in_path, "-") == 0 || strcmp(job->out_path, "-") == 0)) {
            err = util_error("standard input and output need --io root or rootv (-)");
        } else if (!root || strcmp(job->in_path, "-") != 0) {
            err = util_check_input(job->in_path, "input", job->rsize, bytes);
            if (err == UTIL_OK && util_file_id_get(job->in_path, &job->in_id) != UTIL_OK) {
                err = util_error("cannot open input: %s (%s)", strerror(errno), job->in_path);
            }
        }
        if (err == UTIL_OK && (!root || strcmp(job->out_path, "-") != 0)) {
            err = util_check_output(job->out_path);
        }
        if (err == UTIL_OK && util_same_file(job->in_path, job->out_path)) {
            err = util_error("output is the input file; refusing to overwrite it (%s)",
                             job->out_path);
        }
        if (err == UTIL_OK && root && strcmp(job->out_path, "-") == 0) {
            /* Standard output is looked at before the work, as it is written at the end. */
            int fd = sort_root_stdout();
            if (fd < 0 || (fd == STDOUT_FILENO && fcntl(fd, F_GETFL) < 0)) {
                err = util_fail(UTIL_EIO, "rank 0: write: cannot write to standard output: %s",
                                strerror(fd < 0 ? errno : EBADF));
            } else if (fd != STDOUT_FILENO) {
                (void)close(fd);
            }
        }
    }
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        return err;
    }
    MPI_Bcast(bytes, 1, MPI_UINT64_T, 0, job->comm);
    return UTIL_OK;
}

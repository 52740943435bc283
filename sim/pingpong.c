/*
 * sim/pingpong.c: sortex-sched --ping-pong, the measurement of the model's alpha and beta
 * between two ranks (see sim.h): alpha = the median one-way time of an 8-byte message, beta =
 * (the median one-way time of a large message - alpha) / its size.
 */
#include "sim/sim.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/util.h"

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sim_ping_pong_time(MPI_Comm comm, char *buf, int bytes, int trials, int reps, int both)
{
    double t[64];
    int rank;
    MPI_Comm_rank(comm, &rank);
    trials = trials < 64 ? trials : 64;
    for (int k = 0; k < trials; k++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            if (both) { /* both ways at once: one exchange each */
                MPI_Sendrecv_replace(buf, bytes, MPI_BYTE, 1 - rank, 0, 1 - rank, 0, comm,
                                     MPI_STATUS_IGNORE);
            } else if (rank == 0) {
                MPI_Send(buf, bytes, MPI_BYTE, 1, 0, comm);
                MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, 0, comm);
            }
        }
        t[k] = (MPI_Wtime() - t0) / ((both ? 1.0 : 2.0) * reps);
    }
    qsort(t, (size_t)trials, sizeof(double), dbl_cmp);
    return t[trials / 2];
}

int sim_ping_pong(const char *size_text, int *argc, char ***argv)
{
    uint64_t big = (uint64_t)64 << 20;
    if (*size_text != '\0' &&
        (util_parse_count(size_text, &big) != UTIL_OK || big < 1024 || big > ((uint64_t)1 << 30))) {
        return util_error("--ping-pong takes a message size from 1Ki to 1Gi (%s)", size_text);
    }
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "MPI_Init failed");
    }
    int rank, size, err = UTIL_OK;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = util_malloc((size_t)big);
    int ok = buf != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (size != 2) {
        err = rank == 0 ? util_error("--ping-pong needs exactly 2 ranks (%d)", size) : UTIL_EUSAGE;
    } else if (!all_ok) {
        err = util_fail(UTIL_ENOMEM, "rank %d: out of memory for %llu bytes", rank,
                        (unsigned long long)big);
    } else {
        memset(buf, 1, (size_t)big);
        (void)sim_ping_pong_time(MPI_COMM_WORLD, buf, 8, 3, 100, 0); /* warm-up */
        double lat = sim_ping_pong_time(MPI_COMM_WORLD, buf, 8, 31, 2000, 0);
        int reps = big >= ((uint64_t)16 << 20) ? 4 : 20;
        double tb = sim_ping_pong_time(MPI_COMM_WORLD, buf, (int)big, 11, reps, 0);
        double beta = (tb - lat) / (double)big;
        if (rank == 0) {
            printf("alpha %.3e s   one-way latency of 8 bytes (median of 31 trials)\n", lat);
            printf("beta  %.3e s/B one-way time per byte of %llu bytes (median of 11 trials): "
                   "%.2f GB/s\n",
                   beta, (unsigned long long)big, beta > 0 ? 1e-9 / beta : 0.0);
            printf("--alpha %.3e --beta %.3e\n", lat, beta);
        }
    }
    util_free(buf);
    MPI_Finalize();
    return err;
}

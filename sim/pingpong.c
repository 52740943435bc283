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

/* Median one-way time of @bytes between ranks 0 and 1: @trials trials of @reps round trips. */
static double ping_pong_time(char *buf, int bytes, int trials, int reps, int rank)
{
    double t[64];
    for (int k = 0; k < trials; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            if (rank == 0) {
                MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        t[k] = (MPI_Wtime() - t0) / (2.0 * reps);
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
        (void)ping_pong_time(buf, 8, 3, 100, rank); /* warm-up */
        double lat = ping_pong_time(buf, 8, 31, 2000, rank);
        int reps = big >= ((uint64_t)16 << 20) ? 4 : 20;
        double tb = ping_pong_time(buf, (int)big, 11, reps, rank);
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

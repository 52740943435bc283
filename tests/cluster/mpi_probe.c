/*
 * mpi_probe: a tiny MPI program that proves an (emulated) cluster works.
 *
 * Rank 0 prints one line per rank with the host it runs on and the number of distinct hosts,
 * then every rank takes part in MPI_Alltoall rounds of a known pattern, so real traffic crosses
 * the links between hosts, and the received data is checked element by element.
 *
 *   mpi_probe [--mib M] [--iters K | --forever]
 *
 *   --mib M      MiB each rank sends to every rank per round (default 1; 0 sends nothing)
 *   --iters K    rounds to run (default 1)
 *   --forever    run rounds until killed; prints "round N done" after each one, so a test can
 *                wait for the job to be busy before it breaks a host or a link
 *
 * Output (rank 0): "rank R of N on HOST" lines, "hosts H", then
 * "alltoall mib M iters K seconds S" and "alltoall ok" (or "alltoall BAD n").
 * Exit status: 0 when every check passed, 1 on a data mismatch, 2 on a usage error.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBE_HOST_MAX 256

struct probe_args {
    double mib;
    long iters;
    int forever;
};

/* The value rank src puts at index i of the block it sends to rank dst. */
static uint64_t pattern(int src, int dst, size_t i)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ (uint64_t)i;
}

/* Parses argv into args; returns 0, or -1 after printing a usage error (rank 0 only). */
static int parse_args(int argc, char **argv, int rank, struct probe_args *args)
{
    args->mib = 1.0;
    args->iters = 1;
    args->forever = 0;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc) {
            args->mib = strtod(argv[++i], &end);
            if (*end != '\0' || args->mib < 0 || args->mib > 1024) {
                goto bad;
            }
        } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
            args->iters = strtol(argv[++i], &end, 10);
            if (*end != '\0' || args->iters < 1) {
                goto bad;
            }
        } else if (strcmp(argv[i], "--forever") == 0) {
            args->forever = 1;
        } else {
            goto bad;
        }
    }
    return 0;
bad:
    if (rank == 0) {
        fprintf(stderr, "mpi_probe: error: bad argument (%s)\n", argv[argc > 1 ? argc - 1 : 0]);
        fprintf(stderr, "usage: mpi_probe [--mib M] [--iters K | --forever]\n");
    }
    return -1;
}

/* Gathers every rank's host name on rank 0, prints them and the number of distinct hosts. */
static void report_hosts(int rank, int size)
{
    char name[PROBE_HOST_MAX] = {0};
    char *all = NULL;

    gethostname(name, sizeof name - 1);
    if (rank == 0) {
        all = calloc((size_t)size, PROBE_HOST_MAX);
        if (all == NULL) {
            fprintf(stderr, "mpi_probe: error: out of memory (hosts)\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gather(name, PROBE_HOST_MAX, MPI_CHAR, all, PROBE_HOST_MAX, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank != 0) {
        return;
    }
    /* Distinct hosts: a name counts when no earlier rank had it (p is small). */
    int distinct = 0;
    for (int r = 0; r < size; r++) {
        const char *host = all + (size_t)r * PROBE_HOST_MAX;
        int seen = 0;
        for (int q = 0; q < r && !seen; q++) {
            seen = strcmp(host, all + (size_t)q * PROBE_HOST_MAX) == 0;
        }
        distinct += !seen;
        printf("rank %d of %d on %s\n", r, size, host);
    }
    printf("hosts %d\n", distinct);
    free(all);
}

int main(int argc, char **argv)
{
    int rank = 0;
    int size = 0;
    struct probe_args args;

    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parse_args(argc, argv, rank, &args) != 0) {
        MPI_Finalize();
        return 2;
    }
    report_hosts(rank, size);

    /* One block of n words per destination rank, in both buffers. */
    size_t n = (size_t)(args.mib * 1024 * 1024) / sizeof(uint64_t);
    size_t total = n * (size_t)size;
    uint64_t *sendbuf = malloc((total ? total : 1) * sizeof *sendbuf);
    uint64_t *recvbuf = malloc((total ? total : 1) * sizeof *recvbuf);
    if (sendbuf == NULL || recvbuf == NULL) {
        fprintf(stderr, "mpi_probe: error: out of memory (%zu words)\n", total);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int dst = 0; dst < size; dst++) {
        for (size_t i = 0; i < n; i++) {
            sendbuf[(size_t)dst * n + i] = pattern(rank, dst, i);
        }
    }

    /* The rounds: exchange, then check every word that arrived. */
    long bad = 0;
    long round = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    while (args.forever || round < args.iters) {
        memset(recvbuf, 0, total * sizeof *recvbuf);
        MPI_Alltoall(sendbuf, (int)n, MPI_UINT64_T, recvbuf, (int)n, MPI_UINT64_T,
                     MPI_COMM_WORLD);
        for (int src = 0; src < size; src++) {
            for (size_t i = 0; i < n; i++) {
                bad += recvbuf[(size_t)src * n + i] != pattern(src, rank, i);
            }
        }
        round++;
        if (args.forever && rank == 0) {
            printf("round %ld done\n", round);
        }
    }
    double seconds = MPI_Wtime() - t0;

    /* The slowest rank's time and the sum of mismatches decide the verdict. */
    double max_seconds = 0;
    long all_bad = 0;
    MPI_Reduce(&seconds, &max_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("alltoall mib %g iters %ld seconds %.3f\n", args.mib, round, max_seconds);
        if (all_bad == 0) {
            printf("alltoall ok\n");
        } else {
            printf("alltoall BAD %ld\n", all_bad);
        }
    }
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return all_bad == 0 ? 0 : 1;
}

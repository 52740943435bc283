/*
 * sort/example_main.c: bin/sortex-example, a small program using the library API in memory.
 *
 *   mpirun -np P sortex-example [N_PER_RANK] [SEED] [one]
 *
 * Every rank makes N keys (default 100000; rank r gets r extra keys, so slices are uneven;
 * with "one", rank 0 holds all P*N keys and the others none),
 * sorts them with sortex_sort(), and checks the result: each slice sorted, slices in rank order
 * (the last key of rank r <= the first of the next non-empty rank), and the same count and
 * order-independent checksum as before the sort. Prints "ok" on rank 0 and exits 0, or exits 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "sort/sortex.h"

/* A 64-bit mixer (the splitmix64 finaliser): keys from positions, and the checksum's hash. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t checksum(const uint64_t *k, uint64_t n)
{
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) {
        s += mix(k[i]);
    }
    return s;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t per_rank = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;

    /* This rank's keys: a few distinct values mixed with random ones, so ties matter. */
    int one = argc > 3 && argv[3][0] == 'o';
    uint64_t n = one ? (rank == 0 ? per_rank * (uint64_t)size : 0) : per_rank + (uint64_t)rank;
    uint64_t *keys = sortex_alloc_keys(n);
    if (keys == NULL) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = mix(seed ^ mix(((uint64_t)rank << 40) + i));
        keys[i] = (h & 3) == 0 ? h % 7 : h;
    }
    uint64_t before[2] = {n, checksum(keys, n)};
    MPI_Allreduce(MPI_IN_PLACE, before, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);

    struct sortex_config cfg;
    struct sortex_stats stats;
    sortex_config_default(&cfg);
    int err = sortex_sort(MPI_COMM_WORLD, &keys, &n, &cfg, &stats);
    if (err != 0) {
        MPI_Finalize();
        return 1;
    }

    /* Check: local order, order across ranks, count and checksum. */
    int bad = 0;
    for (uint64_t i = 1; i < n; i++) {
        bad |= keys[i - 1] > keys[i];
    }
    uint64_t edge[2] = {n ? keys[0] : UINT64_MAX, n ? keys[n - 1] : 0}; /* first, last */
    uint64_t *edges = malloc(2 * (size_t)size * sizeof(uint64_t));
    uint64_t *counts = malloc((size_t)size * sizeof(uint64_t));
    MPI_Allgather(edge, 2, MPI_UINT64_T, edges, 2, MPI_UINT64_T, MPI_COMM_WORLD);
    MPI_Allgather(&n, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    uint64_t last = 0;
    for (int r = 0; r < size; r++) {
        if (counts[r] > 0) {
            bad |= edges[2 * r] < last;
            last = edges[2 * r + 1];
        }
    }
    uint64_t after[2] = {n, checksum(keys, n)};
    MPI_Allreduce(MPI_IN_PLACE, after, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    bad |= after[0] != before[0] || after[1] != before[1];
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s: %llu keys on %d ranks, imbalance %.4f, exchange %s\n", bad ? "FAILED" : "ok",
               (unsigned long long)before[0], size, stats.imbalance, exchange_list()[0]->name);
    }
    free(edges);
    free(counts);
    sortex_free_keys(keys);
    MPI_Finalize();
    return bad ? 1 : 0;
}

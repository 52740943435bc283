/*
 * tests/install/use_sortex.c: a program that uses an installed sortex as a user's would, built
 * with `cc use_sortex.c $(pkg-config --cflags --libs sortex)` and nothing of the source tree:
 * only <sortex/sortex.h> and the public functions. tests/59-install.bats builds and runs it.
 *
 *   mpirun -np P use_sortex IN FILE_OUT MEMORY_OUT [EXCHANGE]
 *
 * Sorts the keys of IN twice with the back-end EXCHANGE (default: the library's): into FILE_OUT
 * with sortex_sort_file(), and in memory, every rank reading its slice of IN with MPI-IO, sorting
 * with sortex_sort() and writing its sorted slice at its global offset of MEMORY_OUT, so that
 * sortex-verify checks both against IN. Rank 0 prints the header's and the library's version
 * and a line per sort. Exits 0, or 1 after one line on stderr.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include <sortex/sortex.h>

#if SORTEX_VERSION_NUMBER < 100
#error "use_sortex needs sortex 0.1.0 or later"
#endif

/* Prints "use_sortex: error: WHAT" from the first rank that gets here and ends the job. */
static void fail(const char *what, int code)
{
    fprintf(stderr, "use_sortex: error: %s (%d)\n", what, code);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Reads this rank's slice of the keys in @path: keys [r n / P, (r + 1) n / P). */
static uint64_t *read_slice(const char *path, uint64_t *n)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_File f;
    MPI_Offset bytes = 0;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    if (rc != MPI_SUCCESS || MPI_File_get_size(f, &bytes) != MPI_SUCCESS) {
        fail("cannot read the input", rc);
    }
    uint64_t total = (uint64_t)bytes / sizeof(uint64_t);
    uint64_t begin = total * (uint64_t)rank / (uint64_t)size;
    uint64_t end = total * (uint64_t)(rank + 1) / (uint64_t)size;
    if ((end - begin) * sizeof(uint64_t) > INT_MAX) {
        fail("the input is too big for this test", 0);
    }
    uint64_t *keys = sortex_alloc_keys(end - begin);
    if (keys == NULL) {
        fail("out of memory", 0);
    }
    rc = MPI_File_read_at_all(f, (MPI_Offset)(begin * sizeof(uint64_t)), keys,
                              (int)((end - begin) * sizeof(uint64_t)), MPI_BYTE,
                              MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        fail("cannot read the input", rc);
    }
    MPI_File_close(&f);
    *n = end - begin;
    return keys;
}

/* Writes every rank's @n sorted keys after those of the ranks before it into @path. */
static void write_slices(const char *path, const uint64_t *keys, uint64_t n)
{
    uint64_t offset = 0;
    MPI_Exscan(&n, &offset, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        offset = 0; /* MPI_Exscan leaves rank 0's result undefined */
    }
    if (n * sizeof(uint64_t) > INT_MAX) {
        fail("a slice is too big for this test", 0);
    }
    MPI_File f;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                           &f);
    if (rc == MPI_SUCCESS) {
        rc = MPI_File_write_at_all(f, (MPI_Offset)(offset * sizeof(uint64_t)), keys,
                                   (int)(n * sizeof(uint64_t)), MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_close(&f);
    }
    if (rc != MPI_SUCCESS) {
        fail("cannot write the in-memory result", rc);
    }
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4 || argc > 5) {
        if (rank == 0) {
            fprintf(stderr, "usage: mpirun -np P use_sortex IN FILE_OUT MEMORY_OUT [EXCHANGE]\n");
        }
        MPI_Finalize();
        return 1;
    }

    /* The header and the library must agree: a program built against one version and run
     * with another would misread the structs. */
    if (strcmp(sortex_version(), SORTEX_VERSION) != 0) {
        fail("the library is not the version of the header", 0);
    }
    struct sortex_config cfg;
    sortex_config_default(&cfg);
    if (argc == 5 && (cfg.exchange = sortex_exchange_find(argv[4])) == NULL) {
        fail("no such exchange back-end", 0);
    }
    const char *exchange = argc == 5 ? argv[4] : sortex_exchange_name(0);
    if (rank == 0) {
        printf("header %s, library %s, exchange %s\n", SORTEX_VERSION, sortex_version(),
               exchange);
    }

    /* A file into a file. */
    struct sortex_stats stats;
    int err = sortex_sort_file(MPI_COMM_WORLD, argv[1], argv[2], &cfg, &stats);
    if (err != SORTEX_OK) {
        fail("sortex_sort_file failed", err);
    }
    if (rank == 0) {
        printf("file: %llu keys, imbalance %.3f, %s %.3f s\n", (unsigned long long)stats.n_total,
               stats.imbalance, sortex_phase_name(SORTEX_PHASE_EXCHANGE),
               stats.phase_seconds[SORTEX_PHASE_EXCHANGE]);
    }

    /* In memory: the keys this rank read become its slice of the global order. */
    uint64_t n;
    uint64_t *keys = read_slice(argv[1], &n);
    err = sortex_sort(MPI_COMM_WORLD, &keys, &n, &cfg, &stats);
    if (err != SORTEX_OK) {
        fail("sortex_sort failed", err);
    }
    write_slices(argv[3], keys, n);
    if (rank == 0) {
        printf("memory: %llu keys, imbalance %.3f, %llu bytes exchanged by rank 0\n",
               (unsigned long long)stats.n_total, stats.imbalance,
               (unsigned long long)stats.exchange.bytes_sent);
    }
    sortex_free_keys(keys);
    MPI_Finalize();
    return 0;
}

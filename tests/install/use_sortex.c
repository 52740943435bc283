/*
 * tests/install/use_sortex.c: a program that uses an installed sortex as a user's would, built
 * with `cc use_sortex.c $(pkg-config --cflags --libs sortex)` and nothing of the source tree:
 * only <sortex/sortex.h> and the public functions. tests/59-install.bats builds and runs it.
 *
 *   mpirun -np P use_sortex IN FILE_OUT MEMORY_OUT [EXCHANGE [FORMAT]]
 *
 * Sorts the keys of IN twice with the back-end EXCHANGE (default: the library's): into FILE_OUT
 * with sortex_sort_file(), and in memory, every rank reading its slice of IN with MPI-IO, sorting
 * with sortex_sort() and writing its sorted slice at its global offset of MEMORY_OUT, so that
 * sortex-verify checks both against IN. With FORMAT, a format name (gensort) or a layout R:O:K
 * (R-byte records, a K-byte key at offset O), IN holds records, sorted in memory by
 * sortex_sort_records(). Rank 0 prints the header's and the library's version and a line per
 * sort. Exits 0, or 1 after one line on stderr.
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

/* Reads this rank's slice of the @rsize-byte records (8-byte keys when @format is NULL) in
 * @path: records [r n / P, (r + 1) n / P), into a buffer for the sort. */
static void *read_slice(const char *path, const struct util_format *format, size_t rsize,
                        uint64_t *n)
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
    uint64_t total = (uint64_t)bytes / rsize;
    uint64_t begin = total * (uint64_t)rank / (uint64_t)size;
    uint64_t end = total * (uint64_t)(rank + 1) / (uint64_t)size;
    if ((end - begin) * rsize > INT_MAX) {
        fail("the input is too big for this test", 0);
    }
    void *buf = format != NULL ? sortex_alloc_records(format, end - begin)
                               : (void *)sortex_alloc_keys(end - begin);
    if (buf == NULL) {
        fail("out of memory", 0);
    }
    rc = MPI_File_read_at_all(f, (MPI_Offset)(begin * rsize), buf, (int)((end - begin) * rsize),
                              MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        fail("cannot read the input", rc);
    }
    MPI_File_close(&f);
    *n = end - begin;
    return buf;
}

/* Writes every rank's @n sorted @rsize-byte records after those of the ranks before it into
 * @path. */
static void write_slices(const char *path, const void *recs, uint64_t n, size_t rsize)
{
    uint64_t offset = 0;
    MPI_Exscan(&n, &offset, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        offset = 0; /* MPI_Exscan leaves rank 0's result undefined */
    }
    if (n * rsize > INT_MAX) {
        fail("a slice is too big for this test", 0);
    }
    MPI_File f;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                           &f);
    if (rc == MPI_SUCCESS) {
        rc = MPI_File_write_at_all(f, (MPI_Offset)(offset * rsize), recs, (int)(n * rsize),
                                   MPI_BYTE, MPI_STATUS_IGNORE);
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
    if (argc < 4 || argc > 6) {
        if (rank == 0) {
            fprintf(stderr, "usage: mpirun -np P use_sortex IN FILE_OUT MEMORY_OUT "
                            "[EXCHANGE [FORMAT]]\n");
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
    if (argc >= 5 && (cfg.exchange = sortex_exchange_find(argv[4])) == NULL) {
        fail("no such exchange back-end", 0);
    }
    const char *exchange = argc >= 5 ? argv[4] : sortex_exchange_name(0);
    /* Records: a named format, or a layout the program describes itself. */
    unsigned long r = 0, o = 0, k = 0;
    const struct util_format *layout = NULL;
    if (argc == 6 && sscanf(argv[5], "%lu:%lu:%lu", &r, &o, &k) == 3) {
        int rc = sortex_format_layout(r, o, k, &layout);
        if (rc != SORTEX_OK) {
            fail("not a record layout", rc);
        }
        cfg.format = layout;
    } else if (argc == 6 && (cfg.format = sortex_format_find(argv[5])) == NULL) {
        fail("no such format", 0);
    }
    const size_t rsize = sortex_record_size(cfg.format);
    const char *unit = argc == 6 ? "records" : "keys";
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
        printf("file: %llu %s, imbalance %.3f, %s %.3f s\n", (unsigned long long)stats.n_total,
               unit, stats.imbalance, sortex_phase_name(SORTEX_PHASE_EXCHANGE),
               stats.phase_seconds[SORTEX_PHASE_EXCHANGE]);
    }

    /* In memory: the keys or records this rank read become its slice of the global order. */
    uint64_t n;
    if (argc == 6) {
        void *recs = read_slice(argv[1], cfg.format, rsize, &n);
        err = sortex_sort_records(MPI_COMM_WORLD, &recs, &n, &cfg, &stats);
        if (err != SORTEX_OK) {
            fail("sortex_sort_records failed", err);
        }
        write_slices(argv[3], recs, n, rsize);
        sortex_free_records(recs);
    } else {
        uint64_t *keys = read_slice(argv[1], NULL, rsize, &n);
        err = sortex_sort(MPI_COMM_WORLD, &keys, &n, &cfg, &stats);
        if (err != SORTEX_OK) {
            fail("sortex_sort failed", err);
        }
        write_slices(argv[3], keys, n, rsize);
        sortex_free_keys(keys);
    }
    if (rank == 0) {
        printf("memory: %llu %s, imbalance %.3f, %llu bytes exchanged by rank 0\n",
               (unsigned long long)stats.n_total, unit, stats.imbalance,
               (unsigned long long)stats.exchange.bytes_sent);
    }
    sortex_format_free(layout);
    MPI_Finalize();
    return 0;
}

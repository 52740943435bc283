/*
 * sort/example_main.c: bin/sortex-example, a small program using the library API in memory.
 *
 *   mpirun -np P sortex-example [--n N] [--seed S] [--one] [--exchange NAME] [--levels L]
 *
 * Every rank makes N keys (rank r gets r extra keys, so slices are uneven; with --one, rank 0
 * holds all P*N keys and the others none), sorts them with sortex_sort(), and checks the
 * result: each slice sorted, slices in rank order (the last key of rank r <= the first of the
 * next non-empty rank), and the same count and order-independent checksum as before the sort.
 * Prints "ok: ..." on rank 0 and exits 0; exits 1 when the check fails, 2 on a usage error, 3
 * when the sort fails.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "sort/names.h"
#include "sort/sortex.h"
#include "util/cli.h"
#include "util/util.h"

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

struct cli {
    uint64_t per_rank, seed;
    int one;
    struct sortex_config cfg;
};

/* --exchange NAME: a back-end of the registry, or 'help' (lists them and exits). */
static int parse_exchange(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    char names[256];
    (void)opt;
    if (strcmp(arg, "help") == 0) {
        if (!quiet) {
            exchange_print_help(stdout);
        }
        return UTIL_CLI_DONE;
    }
    if ((cli->cfg.exchange = exchange_find(arg)) == NULL) {
        exchange_names(names, sizeof(names));
        return util_error("unknown exchange back-end (%s); valid: %s", arg, names);
    }
    return UTIL_OK;
}

static void usage(FILE *f);

#define DEST(field) UTIL_CLI_DEST(struct cli, field)

/* The options, in the order --help gives them. */
/* clang-format off */
static const struct util_cli_opt options[] = {
    {.name = "n", .key = 'n', .arg = "N", .def = "100000",
     .help = "keys per rank; rank r makes N + r of them [{def}]", .parse = util_cli_count,
     DEST(per_rank), .max = (uint64_t)1 << 32,
     .err = "{opt} must be a count up to 2^32 keys per rank ({arg})"},
    {.name = "seed", .key = 's', .arg = "S", .def = "1", .help = "seed of the keys [{def}]",
     .parse = util_cli_count, DEST(seed), .max = UINT64_MAX,
     .err = "{opt} must be a non-negative integer ({arg})"},
    {.name = "one", .def = "off", .help = "rank 0 holds all P*N keys, the others none [{def}]",
     .parse = util_cli_flag, DEST(one)},
    {.name = "exchange", .key = 'x', .arg = "NAME", .def = "alltoallv",
     .help = "exchange back-end [{def}]; 'help' lists them", .parse = parse_exchange},
    {.name = "levels", .arg = "L", .def = "auto", .help = "levels of the sort, {names} [{def}]",
     .parse = util_cli_enum, DEST(cfg.levels), .names = sort_levels_names},
    UTIL_CLI_HELP(usage, "this help"),
    UTIL_CLI_VERSION("version, commit and MPI library"),
    {0},
};
/* clang-format on */

#undef DEST

static const struct util_cli command_line = UTIL_CLI_COMMAND(options, 23);

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np P sortex-example [options]\n"
               "\n"
               "Sorts random keys in memory with sortex_sort() and checks the result: every\n"
               "slice in order, the slices in rank order, the same keys as before.\n"
               "\n"
               "options (default in brackets):\n");
    util_cli_help(f, &command_line);
    fprintf(f, "\n"
               "exit codes: 0 sorted and checked; 1 the check failed; 2 usage error;\n"
               "            3 the sort failed\n");
}

/* Parses argv (every rank does; only rank 0 prints: the others hold their error lines back
 * and drop them). Returns 0, UTIL_CLI_DONE (--help, --version, --exchange help), or
 * UTIL_EUSAGE. */
static int parse(int argc, char **argv, struct cli *cli, bool quiet)
{
    if (quiet) {
        util_report_defer(true);
    }
    int rc = util_cli_parse(&command_line, argc, argv, cli, quiet);
    if (quiet) {
        util_report_release(false);
        util_report_defer(false);
    }
    return rc;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    util_set_progname("sortex-example");
    util_check_stdout_at_exit();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct cli cli = {.per_rank = 100000, .seed = 1};
    sortex_config_default(&cli.cfg);
    int rc = parse(argc, argv, &cli, rank != 0);
    if (rc != UTIL_OK) {
        MPI_Finalize();
        return rc == UTIL_CLI_DONE ? UTIL_EXIT_OK : UTIL_EXIT_USAGE;
    }

    /* This rank's keys: a few distinct values mixed with random ones, so ties matter. */
    uint64_t n =
        cli.one ? (rank == 0 ? cli.per_rank * (uint64_t)size : 0) : cli.per_rank + (uint64_t)rank;
    uint64_t *keys = sortex_alloc_keys(n);
    if (keys == NULL) {
        fprintf(stderr, "sortex-example: error: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, UTIL_EXIT_RUNTIME);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = mix(cli.seed ^ mix(((uint64_t)rank << 40) + i));
        keys[i] = (h & 3) == 0 ? h % 7 : h;
    }
    uint64_t before[2] = {n, checksum(keys, n)};
    MPI_Allreduce(MPI_IN_PLACE, before, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);

    /* The sort: on success keys and n describe this rank's slice of the global order. */
    struct sortex_stats stats;
    int err = sortex_sort(MPI_COMM_WORLD, &keys, &n, &cli.cfg, &stats);
    if (err != 0) {
        MPI_Finalize();
        return util_exit_code(err);
    }

    /* Check: local order, order across ranks, count and checksum. */
    int bad = 0;
    for (uint64_t i = 1; i < n; i++) {
        bad |= keys[i - 1] > keys[i];
    }
    uint64_t edge[3] = {n, n ? keys[0] : 0, n ? keys[n - 1] : 0}; /* count, first, last */
    uint64_t *edges = malloc(3 * (size_t)size * sizeof(uint64_t));
    if (edges == NULL) {
        fprintf(stderr, "sortex-example: error: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, UTIL_EXIT_RUNTIME);
    }
    MPI_Allgather(edge, 3, MPI_UINT64_T, edges, 3, MPI_UINT64_T, MPI_COMM_WORLD);
    uint64_t last = 0;
    for (int r = 0; r < size; r++) {
        if (edges[3 * r] > 0) {
            bad |= edges[3 * r + 1] < last;
            last = edges[3 * r + 2];
        }
    }
    uint64_t after[2] = {n, checksum(keys, n)};
    MPI_Allreduce(MPI_IN_PLACE, after, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    bad |= after[0] != before[0] || after[1] != before[1];
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        const struct exchange_ops *ex = cli.cfg.exchange ? cli.cfg.exchange : exchange_list()[0];
        printf("%s: %llu keys on %d ranks, imbalance %.4f, exchange %s\n", bad ? "FAILED" : "ok",
               (unsigned long long)before[0], size, stats.imbalance, ex->name);
    }
    free(edges);
    sortex_free_keys(keys);
    MPI_Finalize();
    return bad ? UTIL_EXIT_INVALID : UTIL_EXIT_OK;
}

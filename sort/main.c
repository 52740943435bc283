/*
 * sort/main.c: bin/sortex, the command line over sortex_sort_file().
 *
 * Every rank parses the same arguments; only rank 0 prints, so a mistake gives one line, not P.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "sort/internal.h"
#include "sort/names.h"
#include "sort/sortex.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/knobs.h"
#include "util/format.h"
#include "util/temp.h"
#include "util/util.h"

/* The most --temp-dir a command line gives. */
#define TEMP_DIRS_MAX 16

/* The launcher to name when another MPI's has started this program. */
#if defined(OPEN_MPI)
#define LAUNCHER_OF_THIS_MPI "Open MPI's mpirun"
#elif defined(MPICH_VERSION)
#define LAUNCHER_OF_THIS_MPI "MPICH's mpiexec, mpiexec.mpich on Debian"
#else
#define LAUNCHER_OF_THIS_MPI "the mpirun of the MPI it was built with"
#endif

_Static_assert(SORTEX_THREADS_MAX == UTIL_CLI_THREADS_MAX, "--threads: one limit");

struct cli {
    const char *input, *output, *stats;
    struct util_format_args format; /* --format, --record-size, --key-offset, --key-size */
    struct sortex_config cfg;
    int verbose;
    int done; /* --help, --version or --exchange help: exit 0 after parsing */
    const char *temp_dirs[TEMP_DIRS_MAX + 1];
    int ntemp;
};

/* --exchange NAME: a back-end of the registry, 'auto', or 'help' (lists them and exits). */
static int parse_exchange(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct sortex_config *cfg = &((struct cli *)dest)->cfg;
    char names[256];
    (void)opt;
    if (strcmp(arg, "help") == 0) {
        if (!quiet) {
            exchange_print_help(stdout);
        }
        return UTIL_CLI_DONE;
    }
    cfg->exchange_auto = strcmp(arg, "auto") == 0;
    cfg->exchange = cfg->exchange_auto ? NULL : exchange_find(arg);
    if (cfg->exchange == NULL && !cfg->exchange_auto) {
        exchange_names(names, sizeof(names));
        return util_error("unknown exchange back-end (%s); valid: auto, %s", arg, names);
    }
    return UTIL_OK;
}

/* --temp-dir DIR, up to TEMP_DIRS_MAX times. */
static int parse_temp_dir(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    (void)quiet;
    if (cli->ntemp == TEMP_DIRS_MAX) {
        return util_cli_error(opt, arg, "{opt} is given at most {max} times ({arg})");
    }
    cli->temp_dirs[cli->ntemp++] = arg;
    cli->temp_dirs[cli->ntemp] = NULL;
    cli->cfg.temp_dirs = cli->temp_dirs;
    return UTIL_OK;
}

static void usage(FILE *f);

#define DEST(field) UTIL_CLI_DEST(struct cli, field)

/* The options, in the order --help gives them. */
/* clang-format off */
static const struct util_cli_opt options[] = {
    {.name = "input", .key = 'i', .arg = "FILE", .help = "input file (required)",
     .parse = util_cli_str, DEST(input)},
    {.name = "output", .key = 'o', .arg = "FILE",
     .help = "output file (required; written to a temporary name beside\n"
             "it and renamed when every rank has succeeded; naming the\n"
             "input is refused)",
     .parse = util_cli_str, DEST(output)},
    {.name = "exchange", .key = 'x', .arg = "NAME", .def = "alltoallv",
     .help = "exchange back-end [{def}]; 'help' lists them; 'auto'\n"
             "takes the one whose cost model predicts the shortest\n"
             "exchange for this sort's counts (-v says which)",
     .parse = parse_exchange},
    UTIL_CLI_THREADS(struct cli, cfg.threads, "T", .def = "cores of the node / ranks on it",
                     .help = "OpenMP threads per rank [{def}]"),
    {.name = "epsilon", .key = 'e', .arg = "E", .def = "0.1",
     .help = "imbalance bound: every rank gets <= (1+E) n/P + 1 keys\n"
             "(+ P with --balance sample), {fmin}..{fmax} [{def}]",
     .parse = util_cli_double, DEST(cfg.epsilon), .fmin = SORTEX_EPSILON_MIN,
     .fmax = SORTEX_EPSILON_MAX},
    {.name = "balance", .arg = "MODE", .def = "auto",
     .help = "how the splitters are chosen [{def}]: eps, by histogram\n"
             "rounds to within --epsilon; exact, every rank gets\n"
             "floor(n/P) or ceil(n/P) keys (a few more rounds); sample,\n"
             "one all-gathered regular sample of P S keys; auto, sample\n"
             "while that is at most 1 MiB a rank (about 80 ranks), else\n"
             "eps",
     .parse = util_cli_enum, DEST(cfg.balance), .names = sort_balance_names},
    {.name = "oversample", .key = 's', .arg = "S", .def = "max(256, ceil((P+1)/epsilon))",
     .help = "samples per bucket of the regular sample, {min}..{max}\n"
             "(implies --balance sample) [{def}]",
     .parse = util_cli_count, DEST(cfg.oversample), .min = 1, .max = SORTEX_OVERSAMPLE_MAX,
     .err = "{opt} must be an integer from {min} to {max} ({arg})"},
    {.name = "finish", .arg = "MODE", .def = "auto",
     .help = "{names}: how received runs are combined [{def}]", .parse = util_cli_enum,
     DEST(cfg.finish), .names = sort_finish_names},
    {.name = "levels", .arg = "L", .def = "auto",
     .help = "{names}: levels of P^(1/L) groups each [{def}]",
     .parse = util_cli_enum, DEST(cfg.levels), .names = sort_levels_names},
    UTIL_FORMAT_ROWS(struct cli, format),
    {.name = "mem-limit", .arg = "BYTES",
     .def = "3/4 of the\nnode's memory (cgroup, Slurm or physical) over its ranks",
     .help = "the memory a rank may use for its buffers; an input whose\n"
             "share does not fit is sorted externally [{def}];\n"
             "suffixes K M G T (10^3) and Ki Mi Gi Ti (2^10)",
     .parse = util_cli_count, DEST(cfg.mem_limit), .min = 1, .max = UINT64_MAX,
     .err = "{opt} must be a positive byte count ({arg})"},
    {.name = "external", .arg = "MODE", .def = "auto",
     .help = "auto: in memory when every rank's share fits, else in two\n"
             "passes through temporary files; always; never (a share\n"
             "beyond --mem-limit is refused) [{def}]",
     .parse = util_cli_enum, DEST(cfg.external), .names = sort_external_names},
    {.name = "temp-dir", .arg = "DIR", .def = "$TMPDIR, else the output's directory",
     .help = "the external sort's temporary files, in each DIR given\n(up to {max}) [{def}]",
     .parse = parse_temp_dir, .max = TEMP_DIRS_MAX},
    {.name = "sync", .def = "off", .help = "fsync the output before the final rename [{def}]",
     .parse = util_cli_flag, DEST(cfg.sync)},
    {.name = "check", .def = "off",
     .help = "prove the result in the same job, while it is in memory:\n"
             "the output is in order and holds the keys that were read\n"
             "(the verifier's checksum); a failed check writes nothing\n"
             "and exits 3 [{def}]",
     .parse = util_cli_flag, DEST(cfg.check)},
    {.name = "io", .arg = "MODE", .def = "mpiio",
     .help = "mpiio: every rank reads and writes its slice (shared\n"
             "filesystem); root: rank 0 reads and writes everything,\n"
             "binomial-tree scatter and gather; rootv: the same with\n"
             "MPI_Scatterv/Gatherv [{def}]; every format. With root\n"
             "and rootv, '-' means standard input (--input) or output\n"
             "(--output)",
     .parse = util_cli_enum, DEST(cfg.io), .names = sort_io_names},
    {.name = "stats", .arg = "FILE", .help = "write statistics as one JSON object ('-': stdout)",
     .parse = util_cli_str, DEST(stats)},
    {.name = "progress", .def = "off",
     .help = "on stderr: every phase when it ends, and every 2 s while\n"
             "a long one runs, its progress, rate and time left [{def}]",
     .parse = util_cli_flag, DEST(cfg.progress)},
    {.name = "verbose", .key = 'v', .help = "print a summary of phase times on stderr",
     .parse = util_cli_flag, DEST(verbose)},
    UTIL_CLI_HELP(usage, "this help"),
    {.name = "knobs",
     .help = "the environment variables sortex reads: settings with\n"
             "their defaults and units, test hooks apart",
     .parse = util_cli_print, .print = util_knobs_print},
    UTIL_CLI_VERSION("version, commit and MPI library"),
    {0},
};
/* clang-format on */

#undef DEST

static const struct util_cli command_line = UTIL_CLI_COMMAND(options, 25);

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np P sortex --input IN --output OUT [options]\n"
               "\n"
               "Sorts the records of IN (no header: raw little-endian 64-bit keys, or fixed-size\n"
               "records with a byte-string key, see --format) into OUT, one globally sorted file,\n"
               "with a sample sort over the MPI ranks. Records keep their payload, and equal keys\n"
               "leave in input order.\n"
               "\n"
               "options (default in brackets):\n");
    util_cli_help(f, &command_line);
    fprintf(f, "\n"
               "exit codes: 0 sorted; 2 usage error or bad input/output (nothing written);\n"
               "            3 runtime failure (I/O, memory, MPI; no output file is left behind,\n"
               "            except when only the --stats file failed after the sort succeeded)\n");
}

/* Parses argv: the table, then what concerns several options. Returns 0 (cli->done after
 * --help and the like) or UTIL_EUSAGE after one error line. */
static int parse_args(int argc, char **argv, struct cli *cli, int quiet)
{
    sortex_config_default(&cli->cfg);
    int err = util_cli_parse(&command_line, argc, argv, cli, quiet);
    if (err == UTIL_CLI_DONE) {
        cli->done = 1;
        return UTIL_OK;
    }
    if (err != UTIL_OK) {
        return err;
    }
    /* Samples per bucket belong to the regular sample: asking for them asks for it. */
    if (cli->cfg.oversample != 0 && cli->cfg.balance == SORTEX_BALANCE_AUTO) {
        cli->cfg.balance = SORTEX_BALANCE_SAMPLE;
    } else if (cli->cfg.oversample != 0 && cli->cfg.balance != SORTEX_BALANCE_SAMPLE) {
        return util_error("--oversample applies to --balance sample only (%llu)",
                          (unsigned long long)cli->cfg.oversample);
    }
    if (util_format_resolve(&cli->format, NULL, &cli->cfg.format) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    if (cli->input == NULL) {
        return util_error("--input is required (see --help)");
    }
    if (cli->output == NULL) {
        return util_error("--output is required (see --help)");
    }
    return UTIL_OK;
}

/* parse_args(), its helpers' error lines held back and dropped when @quiet. */
static int parse(int argc, char **argv, struct cli *cli, int quiet)
{
    if (quiet) {
        util_report_defer(true);
    }
    util_format_args_init(&cli->format);
    int err = parse_args(argc, argv, cli, quiet);
    if (quiet) {
        util_report_release(false);
        util_report_defer(false);
    }
    return err;
}

/* Rank 0 alone checks the --stats path (other ranks may not see the same file system, and one
 * line is enough): a writable place, and neither the input, the output nor the output's stream. */
static int check_stats(const struct cli *cli)
{
    const char *s = cli->stats;
    if (s == NULL) {
        return UTIL_OK;
    }
    if (strcmp(s, "-") == 0) {
        return strcmp(cli->output, "-") == 0
                   ? util_error("--stats - and --output - would share standard output")
                   : UTIL_OK;
    }
    if (util_check_output(s) != UTIL_OK) {
        return UTIL_EUSAGE; /* util_check_output printed the reason */
    }
    bool to_stdout = strcmp(cli->output, "-") == 0;
    if (util_same_file(s, cli->input) || (!to_stdout && util_same_path(s, cli->output)) ||
        strcmp(s, cli->input) == 0 || strcmp(s, cli->output) == 0) {
        return util_error("--stats names the input or the output file (%s)", s);
    }
    return UTIL_OK;
}

/* The command line as one string, arguments separated by spaces (NULL without memory). */
static char *join_args(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++) {
        len += strlen(argv[i]) + 1;
    }
    char *s = util_malloc(len);
    if (s != NULL) {
        s[0] = '\0';
        for (int i = 0; i < argc; i++) {
            strcat(s, argv[i]);
            if (i + 1 < argc) {
                strcat(s, " ");
            }
        }
    }
    return s;
}

/* A launcher of another MPI than this build's starts unrelated one-rank jobs, each of which would
 * sort the whole input (and print it, with --output -). Returns 1, after one error line from the
 * launcher's first process, when MPI sees a job of one but the launcher started several. */
static int foreign_launcher(void)
{
    int size, launch_rank, launched = util_launch_size(&launch_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1 || launched <= 1) {
        return 0;
    }
    if (launch_rank == 0) {
        util_error("the launcher started %d processes but MPI sees a job of one: launch sortex "
                   "with its own MPI's launcher (%s)",
                   launched, LAUNCHER_OF_THIS_MPI);
    }
    return 1;
}

int main(int argc, char **argv)
{
    struct cli cli = {0};
    struct sortex_stats stats;
    int provided, rank;
    util_set_progname("sortex");
    util_check_stdout_at_exit();
    /* --help, --version, --knobs and --exchange help answer before MPI_Init: no job start-up
     * (half a second), and they work where no launcher is; under one, the first process
     * prints. A command line with a mistake goes on to MPI, where rank 0 reports it. */
    if (parse(argc, argv, &cli, 1) == UTIL_OK && cli.done) {
        memset(&cli, 0, sizeof(cli));
        (void)parse(argc, argv, &cli, util_launch_rank() != 0);
        return UTIL_EXIT_OK;
    }
    memset(&cli, 0, sizeof(cli));
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        util_error("MPI_Init failed");
        return UTIL_EXIT_RUNTIME;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (foreign_launcher()) {
        MPI_Finalize();
        return UTIL_EXIT_USAGE;
    }
    /* A signal removes the temporary output; a closed pipe is a write error, not a death. */
    util_temp_signals();
    int err = parse(argc, argv, &cli, rank != 0);
    if (err == UTIL_OK && !cli.done) {
        if (rank == 0) {
            err = check_stats(&cli);
        }
        MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (err == UTIL_OK && !cli.done) {
        err = sortex_sort_file(MPI_COMM_WORLD, cli.input, cli.output, &cli.cfg, &stats);
        if (err == UTIL_OK && cli.stats != NULL) {
            char *command = join_args(argc, argv);
            err = sortex_stats_write_json(MPI_COMM_WORLD, &cli.cfg, &stats, cli.input, cli.output,
                                          command, cli.stats);
            util_free(command);
        }
        if (err == UTIL_OK && cli.verbose) {
            sort_stats_summary(MPI_COMM_WORLD, &cli.cfg, &stats);
        }
    }
    MPI_Finalize();
    return util_exit_code(err);
}

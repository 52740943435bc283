/*
 * bench/xbench_main.c: bin/sortex-xbench, the exchange micro-benchmark's command line over
 * bench_xbench_run() (bench/xbench.c) and the count-matrix patterns (sim/patterns.c).
 *
 * Every rank parses the same arguments; only rank 0 prints, so a mistake gives one line, not P.
 */
#include <errno.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/format.h"
#include "util/temp.h"
#include "util/util.h"

/* Limits of the lists on the command line. */
#define MAX_ITEMS 64

/* --bytes' default. */
#define BYTES_DEFAULT "64Ki,1Mi,16Mi"

struct cli {
    const char *backends_text, *patterns_text, *bytes_text; /* read once the options are */
    const struct exchange_ops *backends[MAX_ITEMS];
    struct sim_spec specs[MAX_ITEMS];
    struct util_cli_list bytes;
    const char *notes[MAX_ITEMS];
    int nbackends, nspecs, nnotes;
    long reps, warmup, threads, ranks;
    uint64_t seed;
    long record_size;     /* --record-size: bytes per element [8] */
    char record_note[40]; /* "record_size=R" for the header, when R is not 8 */
    const char *output;
    char matrix_file[SIM_PATH_MAX + 8]; /* --matrix FILE as the pattern file:FILE */
    int print_matrix, verbose, counts_given;
};

/* --exchange: 'all' (the registry, in its order) or names; an unknown name lists the valid. */
static int parse_backends(const char *text, struct cli *cli)
{
    char buf[1024], *items[MAX_ITEMS], names[256];
    int n;
    if (strcmp(text, "all") == 0) {
        const struct exchange_ops *const *all = exchange_list();
        for (cli->nbackends = 0; all[cli->nbackends] != NULL && cli->nbackends < MAX_ITEMS;) {
            cli->backends[cli->nbackends] = all[cli->nbackends];
            cli->nbackends++;
        }
        return UTIL_OK;
    }
    if (util_split_list(text, "--exchange", buf, sizeof(buf), items, MAX_ITEMS, &n) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    for (int i = 0; i < n; i++) {
        cli->backends[i] = exchange_find(items[i]);
        if (cli->backends[i] == NULL) {
            exchange_names(names, sizeof(names));
            return util_error("unknown exchange back-end (%s); valid: %s", items[i], names);
        }
    }
    cli->nbackends = n;
    return UTIL_OK;
}

/* --patterns: 'all' (every row pattern at its default parameter) or NAME[:PARAM] items. */
static int parse_patterns(const char *text, struct cli *cli)
{
    char buf[1024], *items[MAX_ITEMS];
    int n;
    if (strcmp(text, "all") == 0) {
        const struct sim_pattern *const *all = sim_pattern_list();
        cli->nspecs = 0;
        for (int i = 0; all[i] != NULL && cli->nspecs < MAX_ITEMS; i++) {
            if (all[i]->row != NULL) {
                struct sim_spec *s = &cli->specs[cli->nspecs++];
                s->pattern = all[i];
                s->param = s->pattern->param_default;
                s->dist = NULL;
            }
        }
        return UTIL_OK;
    }
    if (util_split_list(text, "--patterns", buf, sizeof(buf), items, MAX_ITEMS, &n) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    for (int i = 0; i < n; i++) {
        if (sim_spec_parse(items[i], &cli->specs[i]) != UTIL_OK) {
            return UTIL_EUSAGE;
        }
    }
    cli->nspecs = n;
    return UTIL_OK;
}

/* --exchange LIST, or 'help' (lists the back-ends and exits). */
static int parse_exchange(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)opt;
    if (strcmp(arg, "help") == 0) {
        if (!quiet) {
            exchange_print_help(stdout);
        }
        return UTIL_CLI_DONE;
    }
    ((struct cli *)dest)->backends_text = arg;
    return UTIL_OK;
}

/* --patterns LIST, or 'help' (lists the patterns and exits). */
static int parse_patterns_opt(const struct util_cli_opt *opt, const char *arg, void *dest,
                              bool quiet)
{
    (void)opt;
    if (strcmp(arg, "help") == 0) {
        if (!quiet) {
            sim_pattern_print_help(stdout);
        }
        return UTIL_CLI_DONE;
    }
    ((struct cli *)dest)->patterns_text = arg;
    return UTIL_OK;
}

/* --note KEY=VALUE, repeatable. */
static int parse_note(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    (void)quiet;
    if (strchr(arg, '=') == NULL || arg[0] == '=' || strchr(arg, '\n')) {
        return util_cli_error(opt, arg, "{opt} must be KEY=VALUE on one line ({arg})");
    }
    if (cli->nnotes == MAX_ITEMS) {
        return util_cli_error(opt, arg, "at most {max} {opt} options ({arg})");
    }
    cli->notes[cli->nnotes++] = arg;
    return UTIL_OK;
}

/* --matrix FILE: the pattern file:FILE. */
static int parse_matrix(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    (void)quiet;
    if ((size_t)snprintf(cli->matrix_file, sizeof(cli->matrix_file), "file:%s", arg) >=
        sizeof(cli->matrix_file)) {
        return util_cli_error(opt, arg, "{opt} needs a file name of at most {max} bytes ({arg})");
    }
    cli->patterns_text = cli->matrix_file;
    return UTIL_OK;
}

/* --counts WHO; given, said in the header too, as a note: the rows differ from exchanged ones. */
static int parse_counts(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    if (util_cli_enum(opt, arg, dest, quiet) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    if (cli->counts_given && cli->nnotes < MAX_ITEMS) {
        cli->notes[cli->nnotes++] = "counts=given";
    }
    return UTIL_OK;
}

/* --record-size R; other than 8, said in the header too, as a note: the rows count other
 * elements than keys. */
static int parse_record(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    if (util_cli_int(opt, arg, dest, quiet) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    if (cli->record_size != (long)sizeof(uint64_t) && cli->nnotes < MAX_ITEMS) {
        (void)snprintf(cli->record_note, sizeof(cli->record_note), "record_size=%ld",
                       cli->record_size);
        cli->notes[cli->nnotes++] = cli->record_note;
    }
    return UTIL_OK;
}

/* --counts: who learns the receive counts. */
static const struct util_name counts_names[] = {{"exchanged", 0}, {"given", 1}, {NULL, 0}};

static void usage(FILE *f);

#define DEST(field) UTIL_CLI_DEST(struct cli, field)

/* The options, in the order --help gives them. */
/* clang-format off */
static const struct util_cli_opt options[] = {
    {.name = "exchange", .key = 'x', .arg = "LIST", .def = "all",
     .help = "back-ends, comma separated, or 'all' [{def}]; 'help' lists",
     .parse = parse_exchange},
    {.name = "patterns", .key = 'p', .arg = "LIST", .def = "all",
     .help = "patterns NAME or NAME:PARAM, comma separated, or 'all'\n"
             "(every pattern with its default parameter) [{def}];\n"
             "'help' lists them; a pattern's counts are elements\n"
             "(--record-size); file:PATH replays a P x P matrix of\n"
             "elements saved as CSV (sortex-sched --print-matrix),\n"
             "once, whatever --bytes (no rank may send or receive\n"
             "more than --bytes' limit)",
     .parse = parse_patterns_opt},
    {.name = "bytes", .key = 'b', .arg = "LIST", .def = BYTES_DEFAULT,
     .help = "bytes each rank sends, its own block included, comma\n"
             "separated, rounded down to whole elements, at most 1Ti\n"
             "(2^40); suffixes K M G (10^3), Ki Mi Gi (2^10)\n"
             "[{def}]",
     .parse = util_cli_str, DEST(bytes_text)},
    {.name = "record-size", .arg = "R", .def = "8: keys",
     .help = "the back-ends move elements of R bytes, {min}..{max}, as a\n"
             "sort of R-byte records does; every byte of every\n"
             "element is checked [{def}]",
     .parse = parse_record, DEST(record_size), .min = 1, .max = UTIL_RECORD_MAX},
    {.name = "reps", .key = 'r', .arg = "R", .def = "5",
     .help = "timed repetitions, {min}..{max} [{def}]", .parse = util_cli_int, DEST(reps),
     .min = 1, .max = 100000},
    {.name = "warmup", .key = 'w', .arg = "W", .def = "1",
     .help = "untimed repetitions before them, {min}..{max} [{def}]", .parse = util_cli_int,
     DEST(warmup), .min = 0, .max = 1000},
    UTIL_CLI_THREADS(struct cli, threads, "T", .def = "1",
                     .help = "OpenMP threads per rank (back-ends, fill, check) [{def}]"),
    {.name = "seed", .arg = "S", .def = "1",
     .help = "seed of the random patterns and of the keys [{def}]", .parse = util_cli_count,
     DEST(seed), .max = UINT64_MAX, .err = "{opt} must be a non-negative integer ({arg})"},
    {.name = "output", .key = 'o', .arg = "FILE", .def = "stdout",
     .help = "write the CSV to FILE (complete or not at all) [{def}]", .parse = util_cli_str,
     DEST(output)},
    {.name = "note", .arg = "KEY=VALUE",
     .help = "add '# KEY: VALUE' to the header; repeatable", .parse = parse_note,
     .max = MAX_ITEMS},
    {.name = "matrix", .key = 'm', .arg = "FILE",
     .help = "time a P x P matrix of elements saved as CSV: the same as\n--patterns file:FILE",
     .parse = parse_matrix, .max = SIM_PATH_MAX - 1},
    {.name = "print-matrix",
     .help = "print the count matrices (elements, P rows of P) instead\n"
             "of timing, for the first volume of --bytes",
     .parse = util_cli_flag, DEST(print_matrix)},
    {.name = "ranks", .arg = "P", .def = "the number of ranks",
     .help = "P for --print-matrix [{def}]", .parse = util_cli_int, DEST(ranks), .min = 1,
     .max = 65536},
    {.name = "counts", .arg = "WHO", .def = "exchanged",
     .help = "exchanged: every back-end learns the receive counts\n"
             "itself; given: they are handed to it, as the sort does\n"
             "(the back-ends that exchange only counts skip that)\n"
             "[{def}]",
     .parse = parse_counts, DEST(counts_given), .names = counts_names},
    {.name = "verbose", .key = 'v',
     .help = "one line per pattern, volume and back-end on stderr", .parse = util_cli_flag,
     DEST(verbose)},
    UTIL_CLI_HELP(usage, "this help"),
    UTIL_CLI_VERSION("version, commit and MPI library"),
    {0},
};

/* --bytes' items, read once the options are (the last --bytes holds): at most BENCH_MAX_BYTES
 * per rank, far beyond memory, so that products stay in 64 bits. */
static const struct util_cli_opt bytes_items = {
    .name = "bytes", .parse = util_cli_counts, DEST(bytes), .max = BENCH_MAX_BYTES,
    .items = MAX_ITEMS, .err = "{opt} must be byte counts up to 1Ti, e.g. 64Ki,16Mi ({arg})"};

#undef DEST

static const struct util_cli command_line = {
    .opts = options,
    .col = 24,
    .unknown = "unknown option ({arg}); see --help",
    .unexpected = "unexpected argument ({arg}); see --help",
};
/* clang-format on */

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np P sortex-xbench [options]\n"
               "\n"
               "Times every exchange back-end on the same synthetic count matrices, skewed ones\n"
               "included, and checks every element that arrives, byte for byte. One CSV row per\n"
               "pattern, volume and back-end, after '# key: value' lines describing the machine.\n"
               "\n"
               "options (default in brackets):\n");
    util_cli_help(f, &command_line);
    fprintf(f, "\n"
               "Times: per repetition the slowest rank's, barrier to barrier; t_med, t_min, t_max\n"
               "over repetitions; t_fast_med the median of the fastest rank's. Back-ends run\n"
               "interleaved (A B C A B C ...) on buffers allocated once, on huge pages, "
               "pre-touched.\n"
               "ratio_med: the median over repetitions of the time over alltoallv's in the same\n"
               "repetition (empty when alltoallv is not run).\n"
               "\n"
               "exit codes: 0 every exchange delivered exactly what was sent; 1 some did not\n"
               "            (valid=0 rows); 2 usage error; 3 runtime failure (memory, MPI,\n"
               "            a back-end)\n");
}

/* Parses argv; prints and returns UTIL_EUSAGE on any mistake, UTIL_CLI_DONE after --help and
 * the like. @quiet: print nothing on stdout (the other ranks parse only after rank 0
 * succeeded, so that their lists parse without messages). */
static int parse(int argc, char **argv, struct cli *cli, int quiet)
{
    cli->reps = 5;
    cli->warmup = 1;
    cli->threads = 1;
    cli->seed = 1;
    cli->record_size = sizeof(uint64_t);
    cli->backends_text = "all";
    cli->patterns_text = "all";
    cli->bytes_text = BYTES_DEFAULT;
    int rc = util_cli_parse(&command_line, argc, argv, cli, quiet);
    if (rc == UTIL_OK) {
        rc = parse_backends(cli->backends_text, cli);
    }
    if (rc == UTIL_OK) {
        rc = parse_patterns(cli->patterns_text, cli);
    }
    if (rc == UTIL_OK) {
        rc = util_cli_counts(&bytes_items, cli->bytes_text, cli, quiet);
    }
    if (rc == UTIL_OK && !quiet && cli->output != NULL) {
        rc = util_check_output(cli->output); /* prints the reason */
    }
    return rc;
}

/* --print-matrix: every selected pattern's count matrix as CSV (pattern,param,src,c0,c1,...). */
static int print_matrices(const struct cli *cli, int P, FILE *out)
{
    uint64_t *m = util_malloc((size_t)P * (size_t)P * sizeof(uint64_t));
    if (m == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory for a %d x %d matrix", P, P);
    }
    fprintf(out, "pattern,param,src");
    for (int j = 0; j < P; j++) {
        fprintf(out, ",to%d", j);
    }
    fputc('\n', out);
    for (int i = 0; i < cli->nspecs; i++) {
        struct sim_spec spec = cli->specs[i];
        spec.ranks = P;
        spec.keys = cli->bytes.v[0] / (uint64_t)cli->record_size;
        spec.seed = cli->seed;
        int err = sim_spec_matrix(&spec, m); /* reports its own failure */
        if (err != UTIL_OK) {
            util_free(m);
            return err;
        }
        char param[64];
        sim_spec_param(&spec, param, sizeof(param));
        for (int s = 0; s < P; s++) {
            fprintf(out, "%s,%s,%d", spec.pattern->name, param, s);
            for (int j = 0; j < P; j++) {
                fprintf(out, ",%llu", (unsigned long long)m[(size_t)s * (size_t)P + (size_t)j]);
            }
            fputc('\n', out);
        }
    }
    util_free(m);
    return UTIL_OK;
}

/* Opens the output: stdout, or a temporary file beside FILE renamed into place at the end. */
static FILE *open_output(const struct cli *cli, char **tmp)
{
    *tmp = NULL;
    if (cli->output == NULL || strcmp(cli->output, "-") == 0) {
        return stdout;
    }
    FILE *f = util_temp_fopen(cli->output, tmp);
    if (f == NULL) {
        util_fail(UTIL_EIO, "cannot write the output: %s (%s)", strerror(errno), cli->output);
    }
    return f;
}

/* Closes the output; renames the temporary file into place only when everything succeeded. */
static int close_output(const struct cli *cli, FILE *f, char *tmp, int err)
{
    if (f == stdout) {
        return err; /* a failed write: util_check_stdout_at_exit() */
    }
    int bad = fclose(f) != 0;
    if (err == UTIL_OK && bad) {
        err = util_fail(UTIL_EIO, "cannot write the output (%s)", cli->output);
    }
    if (err != UTIL_OK) {
        (void)util_temp_remove(tmp);
    } else if ((bad = util_temp_commit(tmp, cli->output)) != 0) {
        err = util_fail(UTIL_EIO, "cannot rename the output into place: %s (%s)",
                        util_temp_strerror(bad), cli->output);
    }
    util_free(tmp);
    return err;
}

int main(int argc, char **argv)
{
    static struct cli cli;
    int provided, rank, size, invalid = 0;
    util_set_progname("sortex-xbench");
    util_check_stdout_at_exit();
    /* --help, --version and the 'help' lists answer before MPI_Init (as sortex does); a command
     * line with a mistake goes on to MPI, where rank 0 reports it. */
    util_report_defer(true);
    int pre = parse(argc, argv, &cli, 1);
    util_report_release(false);
    util_report_defer(false);
    if (pre == UTIL_CLI_DONE) {
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
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Rank 0 parses and reports; the others follow only when it succeeded. */
    int err = rank == 0 ? parse(argc, argv, &cli, 0) : UTIL_OK;
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err == UTIL_OK && rank != 0) {
        err = parse(argc, argv, &cli, 1);
    }
    if (err != UTIL_OK) {
        err = err == UTIL_CLI_DONE ? UTIL_OK : err; /* --help and the like: exit 0 */
        goto done;
    }

    /* Rank 0 owns the output; the others only take part in the collectives. */
    FILE *out = NULL;
    char *tmp = NULL;
    int ok = 1;
    if (rank == 0) {
        out = open_output(&cli, &tmp);
        ok = out != NULL;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        util_free(tmp);
        err = UTIL_EIO;
        goto done;
    }
    /* Either print the matrices, or describe the machine and measure. */
    if (cli.print_matrix) {
        err = rank == 0 ? print_matrices(&cli, cli.ranks ? (int)cli.ranks : size, out) : UTIL_OK;
        MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    } else {
        struct bench_xbench_config cfg = {
            .backends = cli.backends,
            .nbackends = cli.nbackends,
            .specs = cli.specs,
            .nspecs = cli.nspecs,
            .bytes = cli.bytes.v,
            .nbytes = cli.bytes.n,
            .record_size = (size_t)cli.record_size,
            .reps = (int)cli.reps,
            .warmup = (int)cli.warmup,
            .threads = (int)cli.threads,
            .seed = cli.seed,
            .verbose = cli.verbose,
            .counts_given = cli.counts_given,
        };
        bench_env_print(out, MPI_COMM_WORLD, "exchange", cfg.threads, argc, argv, cli.notes,
                        cli.nnotes);
        err = bench_xbench_run(MPI_COMM_WORLD, &cfg, out, &invalid);
    }
    /* The output appears under its name only when everything succeeded. */
    if (rank == 0) {
        err = close_output(&cli, out, tmp, err);
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
done:
    MPI_Finalize();
    if (err == UTIL_OK && invalid != 0) {
        return UTIL_EXIT_INVALID;
    }
    return util_exit_code(err);
}

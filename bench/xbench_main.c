/*
 * bench/xbench_main.c: bin/sortex-xbench, the exchange micro-benchmark's command line over
 * bench_xbench_run() (bench/xbench.c) and the count-matrix patterns (sim/patterns.c).
 *
 * Every rank parses the same arguments; only rank 0 prints, so a mistake gives one line, not P.
 */
#include <errno.h>
#include <getopt.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "util/alloc.h"
#include "util/format.h"
#include "util/temp.h"
#include "util/util.h"

/* Limits of the lists on the command line. */
#define MAX_ITEMS 64

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np P sortex-xbench [options]\n"
            "\n"
            "Times every exchange back-end on the same synthetic count matrices, skewed ones\n"
            "included, and checks every element that arrives, byte for byte. One CSV row per\n"
            "pattern, volume and back-end, after '# key: value' lines describing the machine.\n"
            "\n"
            "options (default in brackets):\n"
            "  -x, --exchange LIST   back-ends, comma separated, or 'all' [all]; 'help' lists\n"
            "  -p, --patterns LIST   patterns NAME or NAME:PARAM, comma separated, or 'all'\n"
            "                        (every pattern with its default parameter) [all];\n"
            "                        'help' lists them; a pattern's counts are elements\n"
            "                        (--record-size); file:PATH replays a P x P matrix of\n"
            "                        elements saved as CSV (sortex-sched --print-matrix),\n"
            "                        once, whatever --bytes (no rank may send or receive\n"
            "                        more than --bytes' limit)\n"
            "  -b, --bytes LIST      bytes each rank sends, its own block included, comma\n"
            "                        separated, rounded down to whole elements, at most 1Ti\n"
            "                        (2^40); suffixes K M G (10^3), Ki Mi Gi (2^10)\n"
            "                        [64Ki,1Mi,16Mi]\n"
            "      --record-size R   the back-ends move elements of R bytes, 1..%d, as a\n"
            "                        sort of R-byte records does; every byte of every\n"
            "                        element is checked [8: keys]\n"
            "  -r, --reps R          timed repetitions, 1..100000 [5]\n"
            "  -w, --warmup W        untimed repetitions before them, 0..1000 [1]\n"
            "  -t, --threads T       OpenMP threads per rank (back-ends, fill, check) [1]\n"
            "      --seed S          seed of the random patterns and of the keys [1]\n"
            "  -o, --output FILE     write the CSV to FILE (complete or not at all) [stdout]\n"
            "      --note KEY=VALUE  add '# KEY: VALUE' to the header; repeatable\n"
            "  -m, --matrix FILE     time a P x P matrix of elements saved as CSV: the same as\n"
            "                        --patterns file:FILE\n"
            "      --print-matrix    print the count matrices (elements, P rows of P) instead\n"
            "                        of timing, for the first volume of --bytes\n"
            "      --ranks P         P for --print-matrix [the number of ranks]\n"
            "      --counts WHO      exchanged: every back-end learns the receive counts\n"
            "                        itself; given: they are handed to it, as the sort does\n"
            "                        (the back-ends that exchange only counts skip that)\n"
            "                        [exchanged]\n"
            "  -v, --verbose         one line per pattern, volume and back-end on stderr\n"
            "  -h, --help            this help\n"
            "  -V, --version         version, commit and MPI library\n"
            "\n"
            "Times: per repetition the slowest rank's, barrier to barrier; t_med, t_min, t_max\n"
            "over repetitions; t_fast_med the median of the fastest rank's. Back-ends run\n"
            "interleaved (A B C A B C ...) on buffers allocated once, on huge pages, pre-touched.\n"
            "ratio_med: the median over repetitions of the time over alltoallv's in the same\n"
            "repetition (empty when alltoallv is not run).\n"
            "\n"
            "exit codes: 0 every exchange delivered exactly what was sent; 1 some did not\n"
            "            (valid=0 rows); 2 usage error; 3 runtime failure (memory, MPI,\n"
            "            a back-end)\n",
            (int)UTIL_RECORD_MAX);
}

enum {
    OPT_SEED = 256,
    OPT_NOTE,
    OPT_PRINT_MATRIX,
    OPT_RANKS,
    OPT_COUNTS,
    OPT_RECORD_SIZE,
};

struct cli {
    const struct exchange_ops *backends[MAX_ITEMS];
    struct sim_spec specs[MAX_ITEMS];
    uint64_t bytes[MAX_ITEMS];
    const char *notes[MAX_ITEMS];
    int nbackends, nspecs, nbytes, nnotes;
    long reps, warmup, threads, ranks;
    uint64_t seed;
    long record_size;     /* --record-size: bytes per element [8] */
    char record_note[40]; /* "record_size=R" for the header, when R is not 8 */
    const char *output;
    char matrix_file[SIM_PATH_MAX + 8]; /* --matrix FILE as the pattern file:FILE */
    int print_matrix, verbose, counts_given;
    int done; /* --help, --version or a 'help' list: exit 0 after parsing */
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

/* --bytes: byte counts with the usual suffixes. */
static int parse_bytes(const char *text, struct cli *cli)
{
    char buf[1024], *items[MAX_ITEMS];
    int n;
    if (util_split_list(text, "--bytes", buf, sizeof(buf), items, MAX_ITEMS, &n) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    for (int i = 0; i < n; i++) {
        /* At most BENCH_MAX_BYTES per rank: far beyond memory, and products stay in 64 bits. */
        if (util_parse_count(items[i], &cli->bytes[i]) != UTIL_OK ||
            cli->bytes[i] > BENCH_MAX_BYTES) {
            return util_error("--bytes must be byte counts up to 1Ti, e.g. 64Ki,16Mi (%s)",
                              items[i]);
        }
    }
    cli->nbytes = n;
    return UTIL_OK;
}

/* Parses argv; prints and returns UTIL_EUSAGE on any mistake. quiet: print nothing (the other
 * ranks parse only after rank 0 succeeded, so their lists parse without messages). */
static int parse(int argc, char **argv, struct cli *cli, int quiet)
{
    static const struct option longopts[] = {
        {"exchange", required_argument, NULL, 'x'},
        {"patterns", required_argument, NULL, 'p'},
        {"bytes", required_argument, NULL, 'b'},
        {"reps", required_argument, NULL, 'r'},
        {"warmup", required_argument, NULL, 'w'},
        {"threads", required_argument, NULL, 't'},
        {"seed", required_argument, NULL, OPT_SEED},
        {"output", required_argument, NULL, 'o'},
        {"note", required_argument, NULL, OPT_NOTE},
        {"matrix", required_argument, NULL, 'm'},
        {"print-matrix", no_argument, NULL, OPT_PRINT_MATRIX},
        {"ranks", required_argument, NULL, OPT_RANKS},
        {"counts", required_argument, NULL, OPT_COUNTS},
        {"record-size", required_argument, NULL, OPT_RECORD_SIZE},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c, rc = UTIL_OK;
    cli->reps = 5;
    cli->warmup = 1;
    cli->threads = 1;
    cli->seed = 1;
    cli->record_size = sizeof(uint64_t);
    opterr = 0;
#define CHECK(call)                                                                                \
    do {                                                                                           \
        if ((rc = (call)) != UTIL_OK) {                                                            \
            return rc;                                                                             \
        }                                                                                          \
    } while (0)
#define BAD(...) return quiet ? UTIL_EUSAGE : util_error(__VA_ARGS__)
    const char *backends = "all", *patterns = "all", *bytes = "64Ki,1Mi,16Mi";
    char opt[8]; /* an unknown short option, for the error line */
    while ((c = getopt_long(argc, argv, ":x:p:b:r:w:t:o:m:vhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'x':
            if (strcmp(optarg, "help") == 0) {
                if (!quiet) {
                    exchange_print_help(stdout);
                }
                cli->done = 1;
                return UTIL_OK;
            }
            backends = optarg;
            break;
        case 'p':
            if (strcmp(optarg, "help") == 0) {
                if (!quiet) {
                    sim_pattern_print_help(stdout);
                }
                cli->done = 1;
                return UTIL_OK;
            }
            patterns = optarg;
            break;
        case 'b':
            bytes = optarg;
            break;
        case 'r':
            if (util_parse_int(optarg, 1, 100000, &cli->reps) != UTIL_OK) {
                BAD("--reps must be an integer from 1 to 100000 (%s)", optarg);
            }
            break;
        case 'w':
            if (util_parse_int(optarg, 0, 1000, &cli->warmup) != UTIL_OK) {
                BAD("--warmup must be an integer from 0 to 1000 (%s)", optarg);
            }
            break;
        case 't':
            if (util_parse_int(optarg, 1, 4096, &cli->threads) != UTIL_OK) {
                BAD("--threads must be an integer from 1 to 4096 (%s)", optarg);
            }
            break;
        case OPT_SEED:
            if (util_parse_count(optarg, &cli->seed) != UTIL_OK) {
                BAD("--seed must be a non-negative integer (%s)", optarg);
            }
            break;
        case 'o':
            cli->output = optarg;
            break;
        case OPT_NOTE:
            if (strchr(optarg, '=') == NULL || optarg[0] == '=' || strchr(optarg, '\n')) {
                BAD("--note must be KEY=VALUE on one line (%s)", optarg);
            }
            if (cli->nnotes == MAX_ITEMS) {
                BAD("at most %d --note options (%s)", MAX_ITEMS, optarg);
            }
            cli->notes[cli->nnotes++] = optarg;
            break;
        case 'm':
            if ((size_t)snprintf(cli->matrix_file, sizeof(cli->matrix_file), "file:%s", optarg) >=
                sizeof(cli->matrix_file)) {
                BAD("--matrix needs a file name of at most %d bytes (%s)", SIM_PATH_MAX - 1,
                    optarg);
            }
            patterns = cli->matrix_file;
            break;
        case OPT_PRINT_MATRIX:
            cli->print_matrix = 1;
            break;
        case OPT_RANKS:
            if (util_parse_int(optarg, 1, 65536, &cli->ranks) != UTIL_OK) {
                BAD("--ranks must be an integer from 1 to 65536 (%s)", optarg);
            }
            break;
        case OPT_COUNTS:
            if (strcmp(optarg, "exchanged") != 0 && strcmp(optarg, "given") != 0) {
                BAD("--counts must be exchanged or given (%s)", optarg);
            }
            cli->counts_given = strcmp(optarg, "given") == 0;
            /* Said in the header too, as a note: the rows differ from exchanged ones. */
            if (cli->counts_given && cli->nnotes < MAX_ITEMS) {
                cli->notes[cli->nnotes++] = "counts=given";
            }
            break;
        case OPT_RECORD_SIZE:
            if (util_parse_int(optarg, 1, (long)UTIL_RECORD_MAX, &cli->record_size) != UTIL_OK) {
                BAD("--record-size must be an integer from 1 to %d (%s)", (int)UTIL_RECORD_MAX,
                    optarg);
            }
            /* Said in the header too, as a note: the rows count other elements than keys. */
            if (cli->record_size != (long)sizeof(uint64_t) && cli->nnotes < MAX_ITEMS) {
                (void)snprintf(cli->record_note, sizeof(cli->record_note), "record_size=%ld",
                               cli->record_size);
                cli->notes[cli->nnotes++] = cli->record_note;
            }
            break;
        case 'v':
            cli->verbose = 1;
            break;
        case 'h':
            if (!quiet) {
                usage(stdout);
            }
            cli->done = 1;
            return UTIL_OK;
        case 'V':
            if (!quiet) {
                util_print_version(stdout);
            }
            cli->done = 1;
            return UTIL_OK;
        case ':':
            BAD("option needs a value (%s)", argv[optind - 1]);
        default:
            BAD("unknown option (%s); see --help", util_bad_option(argv, opt, sizeof(opt)));
        }
    }
    if (optind < argc) {
        BAD("unexpected argument (%s); see --help", argv[optind]);
    }
    CHECK(parse_backends(backends, cli));
    CHECK(parse_patterns(patterns, cli));
    CHECK(parse_bytes(bytes, cli));
    if (!quiet && cli->output != NULL && util_check_output(cli->output) != UTIL_OK) {
        return UTIL_EUSAGE; /* util_check_output printed the reason */
    }
#undef BAD
#undef CHECK
    return UTIL_OK;
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
        spec.keys = cli->bytes[0] / (uint64_t)cli->record_size;
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
    if (pre == UTIL_OK && cli.done) {
        optind = 0; /* getopt starts over */
        memset(&cli, 0, sizeof(cli));
        (void)parse(argc, argv, &cli, util_launch_rank() != 0);
        return UTIL_EXIT_OK;
    }
    optind = 0;
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
    if (err != UTIL_OK || cli.done) {
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
            .bytes = cli.bytes,
            .nbytes = cli.nbytes,
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

/*
 * sort/main.c: bin/sortex, the command line over sortex_sort_file().
 *
 * Every rank parses the same arguments; only rank 0 prints, so a mistake gives one line, not P.
 */
#include <getopt.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "sort/internal.h"
#include "sort/sortex.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/format.h"
#include "util/temp.h"
#include "util/util.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np P sortex --input IN --output OUT [options]\n"
            "\n"
            "Sorts the records of IN (no header: raw little-endian 64-bit keys, or fixed-size\n"
            "records with a byte-string key, see --format) into OUT, one globally sorted file,\n"
            "with a sample sort over the MPI ranks. Records keep their payload, and equal keys\n"
            "leave in input order.\n"
            "\n"
            "options (default in brackets):\n"
            "  -i, --input FILE       input file (required)\n"
            "  -o, --output FILE      output file (required; written to a temporary name beside\n"
            "                         it and renamed when every rank has succeeded; naming the\n"
            "                         input is refused)\n"
            "  -x, --exchange NAME    exchange back-end [alltoallv]; 'help' lists them; 'auto'\n"
            "                         takes the one whose cost model predicts the shortest\n"
            "                         exchange for this sort's counts (-v says which)\n"
            "  -t, --threads T        OpenMP threads per rank [cores of the node / ranks on it]\n"
            "  -e, --epsilon E        imbalance bound: every rank gets <= (1+E) n/P + 1 keys\n"
            "                         (+ P with --balance sample), 0.001..10 [0.1]\n"
            "      --balance MODE     how the splitters are chosen [auto]: eps, by histogram\n"
            "                         rounds to within --epsilon; exact, every rank gets\n"
            "                         floor(n/P) or ceil(n/P) keys (a few more rounds); sample,\n"
            "                         one all-gathered regular sample of P S keys; auto, sample\n"
            "                         while that is at most 1 MiB a rank (about 80 ranks), else\n"
            "                         eps\n"
            "  -s, --oversample S     samples per bucket of the regular sample, 1..1000000\n"
            "                         (implies --balance sample) [max(256, ceil((P+1)/epsilon))]\n"
            "      --finish MODE      auto, merge or sort: how received runs are combined [auto]\n"
            "      --levels L         1..4 levels of P^(1/L) groups each, or auto [auto]\n"
            );
    util_format_usage(f, 25);
    fprintf(f,
            "      --mem-limit BYTES  the memory a rank may use for its buffers; an input whose\n"
            "                         share does not fit is sorted externally [3/4 of the\n"
            "                         node's memory (cgroup, Slurm or physical) over its ranks];\n"
            "                         suffixes K M G T (10^3) and Ki Mi Gi Ti (2^10)\n"
            "      --external MODE    auto: in memory when every rank's share fits, else in two\n"
            "                         passes through temporary files; always; never (a share\n"
            "                         beyond --mem-limit is refused) [auto]\n"
            "      --temp-dir DIR     the external sort's temporary files, in each DIR given\n"
            "                         (up to 16) [$TMPDIR, else the output's directory]\n"
            "      --sync             fsync the output before the final rename [off]\n"
            "      --check            prove the result in the same job, while it is in memory:\n"
            "                         the output is in order and holds the keys that were read\n"
            "                         (the verifier's checksum); a failed check writes nothing\n"
            "                         and exits 3 [off]\n"
            "      --io MODE          mpiio: every rank reads and writes its slice (shared\n"
            "                         filesystem); root: rank 0 reads and writes everything,\n"
            "                         binomial-tree scatter and gather; rootv: the same with\n"
            "                         MPI_Scatterv/Gatherv [mpiio]; every format. With root\n"
            "                         and rootv, '-' means standard input (--input) or output\n"
            "                         (--output)\n"
            "      --stats FILE       write statistics as one JSON object ('-': stdout)\n"
            "      --progress         on stderr: every phase when it ends, and every 2 s while\n"
            "                         a long one runs, its progress, rate and time left [off]\n"
            "  -v, --verbose          print a summary of phase times on stderr\n"
            "  -h, --help             this help\n"
            "      --knobs            the environment variables sortex reads: settings with\n"
            "                         their defaults and units, test hooks apart\n"
            "  -V, --version          version, commit and MPI library\n"
            "\n"
            "exit codes: 0 sorted; 2 usage error or bad input/output (nothing written);\n"
            "            3 runtime failure (I/O, memory, MPI; no output file is left behind,\n"
            "            except when only the --stats file failed after the sort succeeded)\n");
}

enum {
    OPT_FINISH = 256,
    OPT_BALANCE,
    OPT_MEM_LIMIT,
    OPT_SYNC,
    OPT_STATS,
    OPT_PROGRESS,
    OPT_IO,
    OPT_CHECK,
    OPT_KNOBS,
    OPT_EXTERNAL,
    OPT_TEMP_DIR,
    OPT_LEVELS,
};

/* The most --temp-dir a command line gives. */
#define TEMP_DIRS_MAX 16

struct cli {
    const char *input, *output, *stats;
    struct util_format_args format; /* --format, --record-size, --key-offset, --key-size */
    struct sortex_config cfg;
    int verbose;
    int done; /* --help, --version or --exchange help: exit 0 after parsing */
    const char *temp_dirs[TEMP_DIRS_MAX + 1];
    int ntemp;
};

/* Parses argv; prints (unless @quiet) and returns UTIL_EUSAGE on any mistake. */
static int parse_args(int argc, char **argv, struct cli *cli, int quiet)
{
    static const struct option longopts[] = {
        {"input", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},
        {"exchange", required_argument, NULL, 'x'},
        {"threads", required_argument, NULL, 't'},
        {"oversample", required_argument, NULL, 's'},
        {"epsilon", required_argument, NULL, 'e'},
        {"finish", required_argument, NULL, OPT_FINISH},
        {"balance", required_argument, NULL, OPT_BALANCE},
        UTIL_FORMAT_LONG_OPTIONS,
        {"mem-limit", required_argument, NULL, OPT_MEM_LIMIT},
        {"sync", no_argument, NULL, OPT_SYNC},
        {"stats", required_argument, NULL, OPT_STATS},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"io", required_argument, NULL, OPT_IO},
        {"check", no_argument, NULL, OPT_CHECK},
        {"external", required_argument, NULL, OPT_EXTERNAL},
        {"temp-dir", required_argument, NULL, OPT_TEMP_DIR},
        {"levels", required_argument, NULL, OPT_LEVELS},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"knobs", no_argument, NULL, OPT_KNOBS},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    char names[256];
    long lv;
    double dv;
    uint64_t uv;
    int c;
    opterr = 0;
    sortex_config_default(&cli->cfg);
#define BAD(...) return quiet ? UTIL_EUSAGE : util_error(__VA_ARGS__)
    char opt[8]; /* an unknown short option, for the error line */
    while ((c = getopt_long(argc, argv, ":i:o:x:t:s:e:vhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            cli->input = optarg;
            break;
        case 'o':
            cli->output = optarg;
            break;
        case 'x':
            if (strcmp(optarg, "help") == 0) {
                if (!quiet) {
                    exchange_print_help(stdout);
                }
                cli->done = 1;
                return UTIL_OK;
            }
            cli->cfg.exchange_auto = strcmp(optarg, "auto") == 0;
            cli->cfg.exchange = cli->cfg.exchange_auto ? NULL : exchange_find(optarg);
            if (cli->cfg.exchange == NULL && !cli->cfg.exchange_auto) {
                exchange_names(names, sizeof(names));
                BAD("unknown exchange back-end (%s); valid: auto, %s", optarg, names);
            }
            break;
        case 't':
            if (util_parse_int(optarg, 1, SORTEX_THREADS_MAX, &lv) != UTIL_OK) {
                BAD("--threads must be an integer from 1 to %d (%s)", SORTEX_THREADS_MAX, optarg);
            }
            cli->cfg.threads = (int)lv;
            break;
        case 's':
            if (util_parse_count(optarg, &uv) != UTIL_OK || uv < 1 || uv > SORTEX_OVERSAMPLE_MAX) {
                BAD("--oversample must be an integer from 1 to %d (%s)", SORTEX_OVERSAMPLE_MAX,
                    optarg);
            }
            cli->cfg.oversample = uv;
            break;
        case 'e':
            if (util_parse_double(optarg, SORTEX_EPSILON_MIN, SORTEX_EPSILON_MAX, &dv) != UTIL_OK) {
                BAD("--epsilon must be a number from %g to %g (%s)", SORTEX_EPSILON_MIN,
                    SORTEX_EPSILON_MAX, optarg);
            }
            cli->cfg.epsilon = dv;
            break;
        case OPT_FINISH:
            if (strcmp(optarg, "auto") == 0) {
                cli->cfg.finish = SORTEX_FINISH_AUTO;
            } else if (strcmp(optarg, "merge") == 0) {
                cli->cfg.finish = SORTEX_FINISH_MERGE;
            } else if (strcmp(optarg, "sort") == 0) {
                cli->cfg.finish = SORTEX_FINISH_SORT;
            } else {
                BAD("--finish must be auto, merge or sort (%s)", optarg);
            }
            break;
        case OPT_BALANCE:
            if (strcmp(optarg, "auto") == 0) {
                cli->cfg.balance = SORTEX_BALANCE_AUTO;
            } else if (strcmp(optarg, "eps") == 0) {
                cli->cfg.balance = SORTEX_BALANCE_EPS;
            } else if (strcmp(optarg, "exact") == 0) {
                cli->cfg.balance = SORTEX_BALANCE_EXACT;
            } else if (strcmp(optarg, "sample") == 0) {
                cli->cfg.balance = SORTEX_BALANCE_SAMPLE;
            } else {
                BAD("--balance must be auto, eps, exact or sample (%s)", optarg);
            }
            break;
        case OPT_MEM_LIMIT:
            if (util_parse_count(optarg, &uv) != UTIL_OK || uv == 0) {
                BAD("--mem-limit must be a positive byte count (%s)", optarg);
            }
            cli->cfg.mem_limit = uv;
            break;
        case OPT_SYNC:
            cli->cfg.sync = 1;
            break;
        case OPT_STATS:
            cli->stats = optarg;
            break;
        case OPT_IO:
            if (strcmp(optarg, "mpiio") == 0) {
                cli->cfg.io = SORTEX_IO_MPIIO;
            } else if (strcmp(optarg, "root") == 0) {
                cli->cfg.io = SORTEX_IO_ROOT;
            } else if (strcmp(optarg, "rootv") == 0) {
                cli->cfg.io = SORTEX_IO_ROOTV;
            } else {
                BAD("--io must be mpiio, root or rootv (%s)", optarg);
            }
            break;
        case OPT_PROGRESS:
            cli->cfg.progress = 1;
            break;
        case OPT_CHECK:
            cli->cfg.check = 1;
            break;
        case OPT_EXTERNAL:
            if (strcmp(optarg, "auto") == 0) {
                cli->cfg.external = SORTEX_EXTERNAL_AUTO;
            } else if (strcmp(optarg, "always") == 0) {
                cli->cfg.external = SORTEX_EXTERNAL_ALWAYS;
            } else if (strcmp(optarg, "never") == 0) {
                cli->cfg.external = SORTEX_EXTERNAL_NEVER;
            } else {
                BAD("--external must be auto, always or never (%s)", optarg);
            }
            break;
        case OPT_TEMP_DIR:
            if (cli->ntemp == TEMP_DIRS_MAX) {
                BAD("--temp-dir is given at most %d times (%s)", TEMP_DIRS_MAX, optarg);
            }
            cli->temp_dirs[cli->ntemp++] = optarg;
            cli->temp_dirs[cli->ntemp] = NULL;
            cli->cfg.temp_dirs = cli->temp_dirs;
            break;
        case OPT_LEVELS:
            if (strcmp(optarg, "auto") == 0) {
                cli->cfg.levels = 0;
            } else if (util_parse_int(optarg, 1, SORTEX_LEVELS_MAX, &lv) == UTIL_OK) {
                cli->cfg.levels = (int)lv;
            } else {
                BAD("--levels must be auto or from 1 to %d (%s)", SORTEX_LEVELS_MAX, optarg);
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
        case OPT_KNOBS:
            if (!quiet) {
                util_knobs_print(stdout);
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
            if (util_format_is_option(c)) {
                if (util_format_option(&cli->format, c, optarg) != UTIL_OK) {
                    return UTIL_EUSAGE; /* one line printed (held back when quiet) */
                }
                break;
            }
            BAD("unknown option (%s); see --help", util_bad_option(argv, opt, sizeof(opt)));
        }
    }
    if (optind < argc) {
        BAD("unexpected argument (%s); see --help", argv[optind]);
    }
    /* Samples per bucket belong to the regular sample: asking for them asks for it. */
    if (cli->cfg.oversample != 0 && cli->cfg.balance == SORTEX_BALANCE_AUTO) {
        cli->cfg.balance = SORTEX_BALANCE_SAMPLE;
    } else if (cli->cfg.oversample != 0 && cli->cfg.balance != SORTEX_BALANCE_SAMPLE) {
        BAD("--oversample applies to --balance sample only (%llu)",
            (unsigned long long)cli->cfg.oversample);
    }
    if (util_format_resolve(&cli->format, NULL, &cli->cfg.format) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    if (cli->input == NULL) {
        BAD("--input is required (see --help)");
    }
    if (cli->output == NULL) {
        BAD("--output is required (see --help)");
    }
#undef BAD
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

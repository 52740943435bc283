/*
 * sim/main.c: bin/sortex-sched, the schedule simulator's command line. Builds a P x P count
 * matrix (from a CSV file, from a datagen input as the sort would bucket it, or from a pattern:
 * sim/patterns.c), runs the cost models of every registered back-end on it and prints one line
 * per model (sim/report.c): rounds, steps against h and the theorems' bounds, bytes moved,
 * largest message, the alpha-beta time and the time the scheduler took. No MPI is initialised,
 * except by --ping-pong (sim/pingpong.c), which measures alpha and beta between two ranks.
 */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datagen/datagen.h"
#include "exchange/exchange.h"
#include "exchange/machine.h"
#include "exchange/sched.h"
#include "sim/sim.h"
#include "sim/sortmodel.h"
#include "util/alloc.h"
#include "util/format.h"
#include "util/util.h"

#define VOLUME_DEFAULT ((uint64_t)1 << 20)
#define MAX_ALGOS      32

/* Long-only options get values above the character range. */
enum {
    OPT_UNIT = 256,
    OPT_BALANCE,
    OPT_SEED,
    OPT_VOLUME,
    OPT_EPSILON,
    OPT_OVERSAMPLE,
    OPT_ALPHA,
    OPT_BETA,
    OPT_PACKET,
    OPT_TARGET_H,
    OPT_CSV,
    OPT_PRINT_MATRIX,
    OPT_NO_VALIDATE,
    OPT_PING_PONG,
    OPT_RECORD_SIZE,
    OPT_MACHINE,
    OPT_CALIBRATE,
};

/* Synthetic patterns the simulator names differently from the benchmark's registry. */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"permutation", "staggered"},
    {"lowerbound", "oddcycle"},
};

struct cli {
    const char *matrix, *dist, *pattern;
    int bytes_unit;       /* --unit bytes */
    uint64_t record_size; /* --record-size: bytes per element the back-ends move [8] */
    uint64_t n, volume, seed, oversample, packet, target_h;
    int balance, balance_set; /* --balance, as enum sortex_balance */
    int seed_set, volume_set, n_set, record_set;
    long ranks, threads;
    double epsilon, alpha, beta;
    int csv, print_matrix, validate;
    const char *ping_pong; /* non-NULL: measure; the large message size ("" = default) */
    const char *machine;   /* --machine FILE */
    const char *calibrate; /* non-NULL: --calibrate; its scratch directory ("" = default) */
    const struct exchange_model *algos[MAX_ALGOS];
    const struct exchange_ops *backend[MAX_ALGOS]; /* the back-end each models */
    int nalgos;
    int done; /* --help, --version or a 'help' list: exit 0 */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sortex-sched (--matrix FILE | --dist NAME --n N --ranks P |\n"
            "                     --pattern NAME[:PARAM] --ranks P) [options]\n"
            "       mpirun -np 2 sortex-sched --ping-pong[=BYTES]\n"
            "       mpirun -np P sortex-sched --calibrate[=DIR] > machine.txt\n"
            "\n"
            "Models every exchange back-end on one P x P count matrix without running MPI:\n"
            "rounds, steps of the h-relation schedules against h and their bounds, bytes moved,\n"
            "largest message, an alpha-beta time, and the time the scheduler itself took.\n"
            "\n"
            "input (exactly one):\n"
            "  -m, --matrix FILE      P lines of P non-negative integers, comma separated\n"
            "                         (row i: what rank i sends to each rank); lines starting\n"
            "                         with '#' and blank lines are skipped; P <= %d\n"
            "      --unit keys|bytes  what the --matrix counts are [keys: 8 bytes each, or\n"
            "                         records of --record-size bytes]\n"
            "      --record-size R    the back-ends move elements of R bytes, 1..%d, as a\n"
            "                         sort of R-byte records does (transpose deals and the\n"
            "                         schedules cut packets in whole records); the counts of\n"
            "                         every input are then records, --volume is rounded down\n"
            "                         to whole records; not with --unit bytes [8: keys]\n"
            "  -d, --dist NAME        the keys a P-rank sortex run would exchange on this\n"
            "                         datagen input (generated, sorted, sampled and bucketed\n"
            "                         as the sort does; all n keys are held in memory);\n"
            "                         needs --n and --ranks; sortex-gen --list names them\n"
            "  -n, --n N              keys of the --dist input (K M G powers of ten, Ki Mi Gi\n"
            "                         of two)\n"
            "  -e, --epsilon E        the sort's imbalance bound, 0.001..10 [0.1]\n"
            "      --balance MODE     the sort's splitter selection: auto, eps, exact or sample\n"
            "                         [auto: sample up to 1 MiB of samples a rank, else eps];\n"
            "                         eps and exact replay the sort's histogram rounds draw for\n"
            "                         draw up to 1024 ranks (beyond, the exact targets)\n"
            "  -s, --oversample S     the sort's samples per bucket of --balance sample (which it\n"
            "                         implies) [max(256, ceil((P+1)/E))]\n"
            "  -p, --pattern NAME     a synthetic matrix, NAME or NAME:PARAM; 'help' lists them\n"
            "                         (aliases: permutation = staggered, lowerbound = oddcycle,\n"
            "                         the 3-cycle lower-bound instance of the h-relation paper)\n"
            "      --volume BYTES     bytes every rank sends with --pattern, own block included\n"
            "                         (rounded down to whole keys or records) [1Mi]\n"
            "  -P, --ranks P          ranks, 1..%d (--dist, --pattern)\n"
            "      --seed S           seed of --dist [0] or --pattern [1]\n"
            "\n"
            "options (default in brackets):\n"
            "  -a, --algos LIST       models, comma separated, or 'all' [all]; 'help' lists\n"
            "      --machine FILE     the machine's constants, as --calibrate writes them\n"
            "                         [$SORTEX_MACHINE, else ~/.config/sortex/machine.txt,\n"
            "                         else built-in: a project machine's, and the table says so]\n"
            "      --alpha SECONDS    start-up time per message [the machine's]\n"
            "      --beta SECONDS     time per byte [the machine's]\n"
            "      --packet BYTES     packet size of direct, forward and fullduplex [their\n"
            "                         back-ends' rule: h bytes / %d (forward: / %d), at\n"
            "                         least 64 KiB, rounded up to 40 bytes, or to 5 lcm(R, 8)\n"
            "                         bytes for records of R bytes]\n"
            "      --target-h H       the back-ends' rule with h bytes / H instead, for all\n"
            "                         three, 1..2^20, as SORTEX_SCHED_TARGET_H=H makes\n"
            "                         a sort do (fine packets: the paper's bounds)\n"
            "      --csv              one CSV row per model instead of the table\n"
            "      --print-matrix     print the count matrix (CSV, as --matrix reads it) and exit\n"
            "      --no-validate      do not check the schedules with the validator\n"
            "  -t, --threads T        threads generating and sorting the --dist input [all]\n"
            "      --calibrate[=DIR]  under mpirun on the nodes to model: measure this machine\n"
            "                         (start-ups, bytes, copies, synchronisation, caches, cores;\n"
            "                         the whole-sort model's compute constants, scratch in DIR\n"
            "                         [/tmp]) and print it as a machine file (a minute or less)\n"
            "      --ping-pong[=BYTES]  under mpirun -np 2: measure alpha (8-byte one-way\n"
            "                         latency) and beta (one-way time per byte of a BYTES\n"
            "                         message, default 64Mi) and print them\n"
            "  -h, --help             this help\n"
            "  -V, --version          version, commit and MPI library\n"
            "\n"
            "The machine: every prediction rests on one machine file (--machine); without\n"
            "one, on the built-in constants of a project machine (one node, 2 cores, Open MPI\n"
            "shared memory), which the table's head names. Measure yours: run\n"
            "`mpirun -np P sortex-sched --calibrate > machine.txt` with the ranks and nodes\n"
            "you sort on, then give --machine machine.txt, or put it in ~/.config/sortex/,\n"
            "where sortex --exchange auto finds it too.\n"
            "\n"
            "--matrix and --pattern are priced as sortex-xbench times them by default (each\n"
            "back-end learns the counts itself); --dist as the sort runs (counts handed over).\n"
            "\n"
            "columns: rounds (communication rounds; the steps of a schedule), msgs (the most\n"
            "messages one rank sends), steps (packet steps of the scheduled back-ends' packet\n"
            "size, fractional for the round-based models; 'half' duplex: a rank sends or\n"
            "receives one packet per step, 'full': one of each), steps/h (h: the most packets\n"
            "one rank sends plus receives), bound (the schedule's guarantee), moved (bytes on\n"
            "links, forwarding, padding and headers included), largest (message), predicted\n"
            "(the machine's price: start-ups, bytes, local copies and synchronisations on the\n"
            "critical path, ranks sharing a node's cores or links, each term times the\n"
            "back-end's fitted factor; what --exchange auto compares), model (the\n"
            "alpha-beta time: every round costs alpha x the busiest rank's start-ups + beta x\n"
            "the most bytes one rank sends or receives in it), async (the same transfers\n"
            "without rounds: each starts when both its ends are free, as point-to-point\n"
            "back-ends run), sched (the measured time to build the schedule). model and async\n"
            "leave out the exchange of counts, local copies and shared cores.\n"
            "\n"
            "exit codes: 0 success; 2 usage error (bad option or value, unreadable or malformed\n"
            "            matrix); 3 runtime failure (out of memory, an invalid schedule, MPI)\n",
            EXCHANGE_MODEL_MAX_P, (int)UTIL_RECORD_MAX, EXCHANGE_MODEL_MAX_P,
            EXCHANGE_SCHED_TARGET_H, EXCHANGE_SCHED_TARGET_H_FORWARD);
}

static void print_algos(FILE *f)
{
    fprintf(f, "models (--algos NAME,...; the MPI back-end each models in brackets):\n");
    for (const struct exchange_ops *const *b = exchange_list(); *b != NULL; b++) {
        for (const struct exchange_model *const *m = (*b)->models; m != NULL && *m != NULL; m++) {
            fprintf(f, "%-19s [%s] %s\n", (*m)->name, (*b)->name, (*m)->summary);
        }
    }
}

/* Writes the model names of every back-end, comma separated, into @buf (always terminated). */
static void model_names(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const struct exchange_ops *const *b = exchange_list(); *b != NULL; b++) {
        const struct exchange_model *const *m = (*b)->models;
        for (; m != NULL && *m != NULL && used < cap; m++) {
            int k = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", (*m)->name);
            used += k > 0 ? (size_t)k : 0;
        }
    }
}

/* Adds every model of every back-end named @name ("all": of every back-end) to cli->algos;
 * returns how many it added, or -1 when there is no room. */
static int add_models(struct cli *cli, const char *name)
{
    int added = 0;
    for (const struct exchange_ops *const *b = exchange_list(); *b != NULL; b++) {
        for (const struct exchange_model *const *m = (*b)->models; m != NULL && *m != NULL; m++) {
            if (strcmp(name, "all") != 0 && strcmp(name, (*m)->name) != 0) {
                continue;
            }
            if (cli->nalgos == MAX_ALGOS) {
                return -1;
            }
            cli->backend[cli->nalgos] = *b;
            cli->algos[cli->nalgos++] = *m;
            added++;
        }
    }
    return added;
}

static void print_patterns(FILE *f)
{
    sim_pattern_print_help(f);
    for (size_t i = 0; i < sizeof(aliases) / sizeof(*aliases); i++) {
        fprintf(f, "%-21s alias of %s\n", aliases[i].alias, aliases[i].name);
    }
}

/* Parses --algos: a comma separated list of model names, or 'all'. */
static int parse_algos(const char *text, struct cli *cli)
{
    char buf[512], names[512];
    cli->nalgos = 0;
    if (strcmp(text, "all") == 0) {
        return add_models(cli, "all") >= 0 ? UTIL_OK : util_error("too many models (%s)", text);
    }
    if (strlen(text) >= sizeof(buf) || *text == '\0') {
        return util_error("bad --algos list (%s)", text);
    }
    strcpy(buf, text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        int added = add_models(cli, tok);
        if (added == 0) {
            model_names(names, sizeof(names));
            return util_error("unknown algorithm (%s); valid: %s", tok, names);
        }
        if (added < 0) {
            return util_error("too many --algos (%s)", text);
        }
    }
    return cli->nalgos > 0 ? UTIL_OK : util_error("empty --algos list (%s)", text);
}

/* The options and their combinations; prints one line and returns UTIL_EUSAGE on a mistake. */
static int parse(int argc, char **argv, struct cli *cli)
{
    static const struct option longopts[] = {
        {"matrix", required_argument, NULL, 'm'},
        {"unit", required_argument, NULL, OPT_UNIT},
        {"dist", required_argument, NULL, 'd'},
        {"n", required_argument, NULL, 'n'},
        {"epsilon", required_argument, NULL, 'e'},
        {"oversample", required_argument, NULL, 's'},
        {"balance", required_argument, NULL, OPT_BALANCE},
        {"pattern", required_argument, NULL, 'p'},
        {"volume", required_argument, NULL, OPT_VOLUME},
        {"ranks", required_argument, NULL, 'P'},
        {"seed", required_argument, NULL, OPT_SEED},
        {"algos", required_argument, NULL, 'a'},
        {"alpha", required_argument, NULL, OPT_ALPHA},
        {"beta", required_argument, NULL, OPT_BETA},
        {"packet", required_argument, NULL, OPT_PACKET},
        {"target-h", required_argument, NULL, OPT_TARGET_H},
        {"csv", no_argument, NULL, OPT_CSV},
        {"print-matrix", no_argument, NULL, OPT_PRINT_MATRIX},
        {"no-validate", no_argument, NULL, OPT_NO_VALIDATE},
        {"threads", required_argument, NULL, 't'},
        {"ping-pong", optional_argument, NULL, OPT_PING_PONG},
        {"record-size", required_argument, NULL, OPT_RECORD_SIZE},
        {"machine", required_argument, NULL, OPT_MACHINE},
        {"calibrate", optional_argument, NULL, OPT_CALIBRATE},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *algos = "all";
    long v;
    int c;
    cli->alpha = NAN; /* the machine's */
    cli->beta = NAN;
    cli->volume = VOLUME_DEFAULT;
    cli->record_size = sizeof(uint64_t);
    cli->validate = 1;
    opterr = 0;
    char opt[8]; /* an unknown short option, for the error line */
    while ((c = getopt_long(argc, argv, ":m:d:n:e:s:p:P:a:t:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'm':
            cli->matrix = optarg;
            break;
        case OPT_UNIT:
            if (strcmp(optarg, "keys") != 0 && strcmp(optarg, "bytes") != 0) {
                return util_error("--unit must be keys or bytes (%s)", optarg);
            }
            cli->bytes_unit = strcmp(optarg, "bytes") == 0;
            break;
        case 'd':
            cli->dist = optarg;
            break;
        case 'n':
            if (util_parse_count(optarg, &cli->n) != UTIL_OK || cli->n < 1 ||
                cli->n > DATAGEN_MAX_N) {
                return util_error("--n must be a key count from 1 to 2^60 (%s)", optarg);
            }
            cli->n_set = 1;
            break;
        case 'e':
            if (util_parse_double(optarg, 0.001, 10, &cli->epsilon) != UTIL_OK) {
                return util_error("--epsilon must be a number from 0.001 to 10 (%s)", optarg);
            }
            break;
        case 's':
            if (util_parse_int(optarg, 1, 1000000, &v) != UTIL_OK) {
                return util_error("--oversample must be an integer from 1 to 1000000 (%s)", optarg);
            }
            cli->oversample = (uint64_t)v;
            break;
        case OPT_BALANCE:
            if (strcmp(optarg, "auto") == 0) {
                cli->balance = SORTEX_BALANCE_AUTO;
            } else if (strcmp(optarg, "eps") == 0) {
                cli->balance = SORTEX_BALANCE_EPS;
            } else if (strcmp(optarg, "exact") == 0) {
                cli->balance = SORTEX_BALANCE_EXACT;
            } else if (strcmp(optarg, "sample") == 0) {
                cli->balance = SORTEX_BALANCE_SAMPLE;
            } else {
                return util_error("--balance must be auto, eps, exact or sample (%s)", optarg);
            }
            cli->balance_set = 1;
            break;
        case 'p':
            if (strcmp(optarg, "help") == 0) {
                print_patterns(stdout);
                cli->done = 1;
                return UTIL_OK;
            }
            cli->pattern = optarg;
            break;
        case OPT_VOLUME:
            if (util_parse_count(optarg, &cli->volume) != UTIL_OK ||
                cli->volume > ((uint64_t)1 << 50)) {
                return util_error("--volume must be a byte count up to 1Pi, e.g. 1Mi (%s)", optarg);
            }
            cli->volume_set = 1;
            break;
        case 'P':
            if (util_parse_int(optarg, 1, EXCHANGE_MODEL_MAX_P, &cli->ranks) != UTIL_OK) {
                return util_error("--ranks must be an integer from 1 to %d (%s)",
                                  EXCHANGE_MODEL_MAX_P, optarg);
            }
            break;
        case OPT_SEED:
            if (util_parse_count(optarg, &cli->seed) != UTIL_OK) {
                return util_error("--seed must be a non-negative integer (%s)", optarg);
            }
            cli->seed_set = 1;
            break;
        case 'a':
            if (strcmp(optarg, "help") == 0) {
                print_algos(stdout);
                cli->done = 1;
                return UTIL_OK;
            }
            algos = optarg;
            break;
        case OPT_ALPHA:
            if (util_parse_double(optarg, 0, 1e3, &cli->alpha) != UTIL_OK) {
                return util_error("--alpha must be seconds from 0 to 1000 (%s)", optarg);
            }
            break;
        case OPT_BETA:
            if (util_parse_double(optarg, 0, 1, &cli->beta) != UTIL_OK) {
                return util_error("--beta must be seconds per byte from 0 to 1 (%s)", optarg);
            }
            break;
        case OPT_PACKET:
            if (util_parse_count(optarg, &cli->packet) != UTIL_OK || cli->packet < 1 ||
                cli->packet > ((uint64_t)1 << 40)) {
                return util_error("--packet must be a byte count from 1 to 1Ti (%s)", optarg);
            }
            break;
        case OPT_TARGET_H:
            if (util_parse_int(optarg, 1, EXCHANGE_SCHED_TARGET_H_MAX, &v) != UTIL_OK) {
                return util_error("--target-h must be an integer from 1 to %d (%s)",
                                  EXCHANGE_SCHED_TARGET_H_MAX, optarg);
            }
            cli->target_h = (uint64_t)v;
            break;
        case OPT_CSV:
            cli->csv = 1;
            break;
        case OPT_PRINT_MATRIX:
            cli->print_matrix = 1;
            break;
        case OPT_NO_VALIDATE:
            cli->validate = 0;
            break;
        case 't':
            if (util_parse_int(optarg, 1, 4096, &cli->threads) != UTIL_OK) {
                return util_error("--threads must be an integer from 1 to 4096 (%s)", optarg);
            }
            break;
        case OPT_PING_PONG:
            cli->ping_pong = optarg != NULL ? optarg : "";
            break;
        case OPT_RECORD_SIZE:
            if (util_parse_int(optarg, 1, (long)UTIL_RECORD_MAX, &v) != UTIL_OK) {
                return util_error("--record-size must be an integer from 1 to %d (%s)",
                                  (int)UTIL_RECORD_MAX, optarg);
            }
            cli->record_size = (uint64_t)v;
            cli->record_set = 1;
            break;
        case OPT_MACHINE:
            cli->machine = optarg;
            break;
        case OPT_CALIBRATE:
            cli->calibrate = optarg != NULL ? optarg : "";
            break;
        case 'h':
            usage(stdout);
            cli->done = 1;
            return UTIL_OK;
        case 'V':
            util_print_version(stdout);
            cli->done = 1;
            return UTIL_OK;
        case ':':
            return util_error("option needs a value (%s)", argv[optind - 1]);
        default:
            return util_error("unknown option (%s); see --help",
                              util_bad_option(argv, opt, sizeof(opt)));
        }
    }
    if (optind < argc) {
        return util_error("unexpected argument (%s); see --help", argv[optind]);
    }
    if (cli->ping_pong != NULL || cli->calibrate != NULL) {
        return UTIL_OK; /* measures; every other option is ignored */
    }
    if (cli->packet > 0 && cli->target_h > 0) {
        return util_error("give --packet or --target-h, not both (%llu and %llu)",
                          (unsigned long long)cli->packet, (unsigned long long)cli->target_h);
    }
    /* Exactly one input, and only the options that input reads. */
    int inputs = (cli->matrix != NULL) + (cli->dist != NULL) + (cli->pattern != NULL);
    if (inputs != 1) {
        return util_error("give exactly one input: --matrix, --dist or --pattern (%d given)",
                          inputs);
    }
    if (cli->matrix != NULL && cli->ranks != 0) {
        return util_error("--ranks does not apply to --matrix: P is its size (%ld)", cli->ranks);
    }
    if (cli->matrix == NULL && cli->ranks == 0) {
        return util_error("--%s needs --ranks (%s)", cli->dist ? "dist" : "pattern",
                          cli->dist ? cli->dist : cli->pattern);
    }
    if (cli->dist != NULL && !cli->n_set) {
        return util_error("--dist needs --n (%s)", cli->dist);
    }
    if (cli->dist == NULL && (cli->n_set || cli->epsilon > 0 || cli->oversample > 0 ||
                              cli->balance_set)) {
        return util_error("--n, --epsilon, --balance and --oversample apply to --dist only (%s)",
                          cli->matrix ? cli->matrix : cli->pattern);
    }
    /* As sortex: samples per bucket belong to the regular sample, and ask for it. */
    if (cli->oversample > 0 && cli->balance == SORTEX_BALANCE_AUTO) {
        cli->balance = SORTEX_BALANCE_SAMPLE;
    } else if (cli->oversample > 0 && cli->balance != SORTEX_BALANCE_SAMPLE) {
        return util_error("--oversample applies to --balance sample only (%llu)",
                          (unsigned long long)cli->oversample);
    }
    if (cli->pattern == NULL && cli->volume_set) {
        return util_error("--volume applies to --pattern only (%llu)",
                          (unsigned long long)cli->volume);
    }
    if (cli->matrix == NULL && cli->bytes_unit) {
        return util_error("--unit applies to --matrix only (bytes)");
    }
    if (cli->bytes_unit && cli->record_set) {
        return util_error("--record-size counts records, not --unit bytes (%llu)",
                          (unsigned long long)cli->record_size);
    }
    if (cli->matrix != NULL && cli->seed_set) {
        return util_error("--seed does not apply to --matrix (%llu)",
                          (unsigned long long)cli->seed);
    }
    if (cli->pattern != NULL && !cli->seed_set) {
        cli->seed = 1; /* the exchange benchmark's default, so both see the same matrices */
    }
    return parse_algos(algos, cli);
}

/* ---- the inputs -------------------------------------------------------------------------- */

/* Builds the count matrix of the chosen input into *@m (keys, or bytes for --unit bytes). */
static int build_counts(const struct cli *cli, uint64_t **m, int *p, char *label, size_t cap)
{
    if (cli->matrix != NULL) {
        const char *base = strrchr(cli->matrix, '/');
        (void)snprintf(label, cap, "matrix:%s", base ? base + 1 : cli->matrix);
        for (char *q = label; *q; q++) {
            *q = *q == ',' ? '_' : *q; /* keep the CSV column whole */
        }
        return sim_matrix_read(cli->matrix, m, p);
    }
    size_t n = (size_t)cli->ranks;
    uint64_t *a = util_calloc(n * n, sizeof(*a));
    if (a == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory for a %ld x %ld matrix", cli->ranks,
                         cli->ranks);
    }
    int err;
    if (cli->dist != NULL) {
        /* A datagen input, bucketed as the sort would. */
        struct datagen_params dp;
        datagen_params_init(&dp);
        dp.dist = datagen_find(cli->dist);
        dp.n = cli->n;
        dp.ranks = (uint64_t)cli->ranks;
        dp.seed = cli->seed;
        if (dp.dist == NULL) {
            char names[512];
            datagen_names(names, sizeof(names));
            err = util_error("unknown distribution (%s); valid: %s", cli->dist, names);
        } else if ((err = datagen_check(&dp)) == UTIL_OK) {
            int threads = cli->threads > 0 ? (int)cli->threads : omp_get_max_threads();
            err = sim_sort_counts(&dp, cli->epsilon, cli->oversample,
                                  (enum sortex_balance)cli->balance, threads, a);
        }
        (void)snprintf(label, cap, "dist:%s:n=%llu:seed=%llu", cli->dist,
                       (unsigned long long)cli->n, (unsigned long long)cli->seed);
    } else {
        /* A synthetic pattern of the exchange benchmark, under its name or an alias. */
        char text[SIM_PATH_MAX + 64];
        const char *colon = strchr(cli->pattern, ':');
        size_t len = colon ? (size_t)(colon - cli->pattern) : strlen(cli->pattern);
        (void)snprintf(text, sizeof(text), "%s", cli->pattern);
        for (size_t i = 0; i < sizeof(aliases) / sizeof(*aliases); i++) {
            if (strlen(aliases[i].alias) == len &&
                strncmp(cli->pattern, aliases[i].alias, len) == 0) {
                (void)snprintf(text, sizeof(text), "%s%s", aliases[i].name, colon ? colon : "");
            }
        }
        struct sim_spec spec = {
            .ranks = (int)cli->ranks, .keys = cli->volume / cli->record_size, .seed = cli->seed};
        err = sim_spec_parse(text, &spec);
        if (err == UTIL_OK) {
            err = sim_spec_matrix(&spec, a); /* reports its own failure */
        }
        char spec_label[96] = "";
        if (err == UTIL_OK) {
            sim_spec_label(&spec, spec_label, sizeof(spec_label));
        }
        (void)snprintf(label, cap, "pattern:%s:volume=%llu:seed=%llu", spec_label,
                       (unsigned long long)cli->volume, (unsigned long long)cli->seed);
    }
    if (err != UTIL_OK) {
        util_free(a);
        return err;
    }
    *m = a;
    *p = (int)cli->ranks;
    return UTIL_OK;
}

/* ---- main -------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static struct cli cli;
    util_set_progname("sortex-sched");
    for (int i = 1; i < argc; i++) { /* the whole-sort model has a command line of its own */
        if (strcmp(argv[i], "--sort") == 0) {
            return sim_sort_main(argc, argv);
        }
    }
    int err = parse(argc, argv, &cli);
    if (err != UTIL_OK || cli.done) {
        return util_exit_code(err);
    }
    if (cli.ping_pong != NULL) {
        return util_exit_code(sim_ping_pong(cli.ping_pong, &argc, &argv));
    }
    if (cli.calibrate != NULL) {
        return util_exit_code(sim_calibrate(cli.calibrate, &argc, &argv));
    }
    uint64_t *counts = NULL, *bytes = NULL;
    struct exchange_model_case mc;
    memset(&mc, 0, sizeof(mc));
    char label[256];
    int p = 0;
    if ((err = build_counts(&cli, &counts, &p, label, sizeof(label))) != UTIL_OK) {
        goto done;
    }
    int unit_bytes = cli.bytes_unit;
    uint64_t elem = unit_bytes ? 1 : cli.record_size;
    if (cli.record_size != sizeof(uint64_t)) {
        /* Records: said in the label, so that rows of other sizes are told apart. */
        size_t used = strlen(label);
        (void)snprintf(label + used, sizeof(label) - used, ":record=%llu",
                       (unsigned long long)cli.record_size);
    }
    if (cli.print_matrix) {
        char unit[48];
        (void)snprintf(unit, sizeof(unit), "records of %llu bytes",
                       (unsigned long long)cli.record_size);
        sim_matrix_print(stdout, label, counts, p,
                         unit_bytes                 ? "bytes"
                         : elem == sizeof(uint64_t) ? "keys"
                                                    : unit);
        goto done;
    }

    /* Bytes for the models: keys are 8 bytes each, records --record-size. */
    size_t nn = (size_t)p * (size_t)p;
    bytes = unit_bytes ? counts : util_malloc(nn * sizeof(*bytes));
    if (bytes == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for a %d x %d matrix", p, p);
        goto done;
    }
    for (size_t k = 0; !unit_bytes && k < nn; k++) {
        if (counts[k] > UINT64_MAX / elem) {
            err = util_error("a count is too large to be %s (%llu)",
                             elem == sizeof(uint64_t) ? "keys" : "records",
                             (unsigned long long)counts[k]);
            goto done;
        }
        bytes[k] = counts[k] * elem;
    }
    uint64_t packet =
        cli.target_h > 0 ? exchange_model_packet_bytes(p, bytes, elem, cli.target_h) : cli.packet;
    if ((err = exchange_model_case_init(&mc, p, bytes, elem, packet)) != UTIL_OK) {
        goto done;
    }
    static struct exchange_machine machine;
    if ((err = sim_machine_setup(&machine, cli.machine, cli.alpha, cli.beta, &mc)) != UTIL_OK) {
        goto done;
    }
    mc.validate = cli.validate;
    mc.counts_known = cli.dist != NULL; /* a sort hands its counts; sortex-xbench's default not */

    /* One line per model. */
    if (cli.csv) {
        printf("%s\n", sim_report_columns);
    } else {
        sim_report_table_head(stdout, label, &mc, cli.algos, cli.nalgos);
    }
    struct exchange_model_result res[MAX_ALGOS];
    for (int a = 0; a < cli.nalgos && err == UTIL_OK; a++) {
        if ((err = exchange_model_run(cli.algos[a], &mc, &res[a])) != UTIL_OK) {
            break;
        }
        if (cli.csv) {
            sim_report_csv_row(stdout, label, &mc, cli.backend[a], &res[a]);
        } else {
            sim_report_table_row(stdout, &res[a]);
        }
        fflush(stdout);
    }
    if (err == UTIL_OK && !cli.csv) {
        sim_report_details(stdout, res, cli.nalgos);
    }
done:
    if (bytes != counts) {
        util_free(bytes);
    }
    util_free(counts);
    exchange_model_case_free(&mc);
    if (err == UTIL_OK && fflush(stdout) != 0) {
        err = util_fail(UTIL_EIO, "cannot write the output");
    }
    return util_exit_code(err);
}

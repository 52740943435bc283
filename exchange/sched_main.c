/*
 * exchange/sched_main.c: bin/sortex-sched, the schedule simulator. Builds a P x P count matrix
 * (from a CSV file, from a datagen input as the sort would bucket it, or from a synthetic
 * pattern), runs the cost models of every registered back-end on it and prints one line per model:
 * rounds, steps against h and the theorems' bounds, bytes moved, largest message, the alpha-beta
 * time and the time the scheduler took. No MPI is initialised, except by --ping-pong, which
 * measures alpha and beta between two ranks.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "datagen/datagen.h"
#include "exchange/exchange.h"
#include "exchange/model_sort.h"
#include "exchange/sched.h"
#include "util/alloc.h"
#include "util/util.h"

/*
 * Defaults of --alpha and --beta, measured on this machine (Open MPI 4.1.4, vader shared memory
 * with CMA single copy, 2 AMD EPYC cores) by `mpirun -np 2 sortex-sched --ping-pong`: alpha is
 * the median one-way time of an 8-byte message, beta the median one-way time of a 64 MiB
 * message less alpha, per byte. The machine was shared (1-minute load 8 to 14 on 2 cores), so
 * the measurement was repeated 11 times over 15 minutes and the medians of the 11 runs are
 * taken: alpha 0.10-3.4 us (0.36 us median; about 3.3 us when the two ranks shared a core with
 * other work), beta 0.23-0.78 ns/B (0.38 ns/B median, 2.6 GB/s; 1.3-4.3 GB/s).
 */
#define ALPHA_DEFAULT  3.6e-7  /* seconds per start-up */
#define BETA_DEFAULT   3.8e-10 /* seconds per byte: 2.6 GB/s */
#define VOLUME_DEFAULT ((uint64_t)1 << 20)
#define MAX_ALGOS      32

/* Long-only options get values above the character range. */
enum {
    OPT_UNIT = 256,
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
    int bytes_unit; /* --unit bytes */
    uint64_t n, volume, seed, oversample, packet, target_h;
    int seed_set, volume_set, n_set;
    long ranks, threads;
    double epsilon, alpha, beta;
    int csv, print_matrix, validate;
    const char *ping_pong; /* non-NULL: measure; the large message size ("" = default) */
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
            "\n"
            "Models every exchange back-end on one P x P count matrix without running MPI:\n"
            "rounds, steps of the h-relation schedules against h and their bounds, bytes moved,\n"
            "largest message, an alpha-beta time, and the time the scheduler itself took.\n"
            "\n"
            "input (exactly one):\n"
            "  -m, --matrix FILE      P lines of P non-negative integers, comma separated\n"
            "                         (row i: what rank i sends to each rank); lines starting\n"
            "                         with '#' and blank lines are skipped; P <= %d\n"
            "      --unit keys|bytes  what the --matrix counts are [keys: 8 bytes each]\n"
            "  -d, --dist NAME        the keys a P-rank sortex run would exchange on this\n"
            "                         datagen input (generated, sorted, sampled and bucketed\n"
            "                         as the sort does; all n keys are held in memory);\n"
            "                         needs --n and --ranks; sortex-gen --list names them\n"
            "  -n, --n N              keys of the --dist input (K M G powers of ten, Ki Mi Gi\n"
            "                         of two)\n"
            "  -e, --epsilon E        the sort's imbalance bound, 0.001..10 [0.1]\n"
            "  -s, --oversample S     the sort's samples per bucket [max(256, ceil((P+1)/E))]\n"
            "  -p, --pattern NAME     a synthetic matrix, NAME or NAME:PARAM; 'help' lists them\n"
            "                         (aliases: permutation = staggered, lowerbound = oddcycle,\n"
            "                         the 3-cycle lower-bound instance of the h-relation paper)\n"
            "      --volume BYTES     bytes every rank sends with --pattern, own block included\n"
            "                         (rounded down to whole keys) [1Mi]\n"
            "  -P, --ranks P          ranks, 1..%d (--dist, --pattern)\n"
            "      --seed S           seed of --dist [0] or --pattern [1]\n"
            "\n"
            "options (default in brackets):\n"
            "  -a, --algos LIST       models, comma separated, or 'all' [all]; 'help' lists\n"
            "      --alpha SECONDS    start-up time per message [%.1e, measured here]\n"
            "      --beta SECONDS     time per byte [%.1e = 1/(%.1f GB/s), measured here]\n"
            "      --packet BYTES     packet size of direct, forward and fullduplex [their\n"
            "                         back-ends' rule: h bytes / %d (forward: / %d), at\n"
            "                         least 64 KiB, rounded up to 40 bytes]\n"
            "      --target-h H       the back-ends' rule with h bytes / H instead, for all\n"
            "                         three, 1..2^20, as SORTEX_SCHED_TARGET_H=H makes\n"
            "                         a sort do (fine packets: the paper's bounds)\n"
            "      --csv              one CSV row per model instead of the table\n"
            "      --print-matrix     print the count matrix (CSV, as --matrix reads it) and exit\n"
            "      --no-validate      do not check the schedules with the validator\n"
            "  -t, --threads T        threads generating and sorting the --dist input [all]\n"
            "      --ping-pong[=BYTES]  under mpirun -np 2: measure alpha (8-byte one-way\n"
            "                         latency) and beta (one-way time per byte of a BYTES\n"
            "                         message, default 64Mi) and print them\n"
            "  -h, --help             this help\n"
            "  -V, --version          version, commit and MPI library\n"
            "\n"
            "alpha and beta: measured on this machine between 2 ranks (Open MPI vader shared\n"
            "memory, `mpirun -np 2 sortex-sched --ping-pong`, medians of 11 runs on a shared\n"
            "machine): alpha %.2f us, beta %.2f ns/B (%.1f GB/s).\n"
            "\n"
            "columns: rounds (communication rounds; the steps of a schedule), msgs (the most\n"
            "messages one rank sends), steps (packet steps of the scheduled back-ends' packet\n"
            "size, fractional for the round-based models; 'half' duplex: a rank sends or\n"
            "receives one packet per step, 'full': one of each), steps/h (h: the most packets\n"
            "one rank sends plus receives), bound (the schedule's guarantee), moved (bytes on\n"
            "links, forwarding, padding and headers included), largest (message), model (the\n"
            "alpha-beta time: every round costs alpha x the busiest rank's start-ups + beta x\n"
            "the most bytes one rank sends or receives in it), async (the same transfers\n"
            "without rounds: each starts when both its ends are free, as point-to-point\n"
            "back-ends run), sched (the measured time to build the schedule). The exchange of\n"
            "counts and local copies are not modelled.\n"
            "\n"
            "exit codes: 0 success; 2 usage error (bad option or value, unreadable or malformed\n"
            "            matrix); 3 runtime failure (out of memory, an invalid schedule, MPI)\n",
            EXCHANGE_MODEL_MAX_P, EXCHANGE_MODEL_MAX_P, ALPHA_DEFAULT, BETA_DEFAULT,
            1e-9 / BETA_DEFAULT, EXCHANGE_SCHED_TARGET_H, EXCHANGE_SCHED_TARGET_H_FORWARD,
            ALPHA_DEFAULT * 1e6, BETA_DEFAULT * 1e9, 1e-9 / BETA_DEFAULT);
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
        for (const struct exchange_model *const *m = (*b)->models; m != NULL && *m != NULL && used < cap; m++) {
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
    bench_pattern_print_help(f);
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
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *algos = "all";
    long v;
    int c;
    cli->alpha = ALPHA_DEFAULT;
    cli->beta = BETA_DEFAULT;
    cli->volume = VOLUME_DEFAULT;
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
    if (cli->ping_pong != NULL) {
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
    if (cli->dist == NULL && (cli->n_set || cli->epsilon > 0 || cli->oversample > 0)) {
        return util_error("--n, --epsilon and --oversample apply to --dist only (%s)",
                          cli->matrix ? cli->matrix : cli->pattern);
    }
    if (cli->pattern == NULL && cli->volume_set) {
        return util_error("--volume applies to --pattern only (%llu)",
                          (unsigned long long)cli->volume);
    }
    if (cli->matrix == NULL && cli->bytes_unit) {
        return util_error("--unit applies to --matrix only (bytes)");
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

/* Parses one CSV field: optional blanks, decimal digits, optional blanks. */
static int parse_field(const char *s, const char *e, uint64_t *out)
{
    while (s < e && (*s == ' ' || *s == '\t')) {
        s++;
    }
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) {
        e--;
    }
    if (s == e) {
        return UTIL_EUSAGE;
    }
    uint64_t v = 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) {
            return UTIL_EUSAGE;
        }
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return UTIL_OK;
}

/* Shortens a field for an error message. */
static const char *excerpt(const char *s, const char *e, char *buf, size_t cap)
{
    size_t len = (size_t)(e - s) < cap - 1 ? (size_t)(e - s) : cap - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

/* Reads a square CSV matrix into a new array *@m (util_free) of *@p x *@p counts. */
static int read_matrix(const char *path, uint64_t **m, int *p)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return util_error("cannot read the matrix (%s: %s)", path, strerror(errno));
    }
    char *line = NULL, buf[48];
    size_t cap = 0, lineno = 0;
    uint64_t *a = NULL;
    long cols = -1, rows = 0;
    int err = UTIL_OK;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        char *s = line, *end = line + len;
        while (end > s && (end[-1] == '\n' || end[-1] == '\r')) {
            end--;
        }
        const char *t = s;
        while (t < end && (*t == ' ' || *t == '\t')) {
            t++;
        }
        if (t == end || *t == '#') {
            continue; /* blank or comment */
        }
        /* Count the fields of this row; the first row fixes P. */
        long fields = 1;
        for (const char *q = s; q < end; q++) {
            fields += *q == ',';
        }
        if (cols < 0) {
            if (fields > EXCHANGE_MODEL_MAX_P) {
                err = util_error("%s:%zu: %ld counts in a row, at most %d ranks (P too large)",
                                 path, lineno, fields, EXCHANGE_MODEL_MAX_P);
                break;
            }
            cols = fields;
            a = util_malloc((size_t)cols * (size_t)cols * sizeof(*a));
            if (a == NULL) {
                err = util_fail(UTIL_ENOMEM, "out of memory for a %ld x %ld matrix", cols, cols);
                break;
            }
        } else if (fields != cols) {
            err = util_error("%s:%zu: ragged matrix: %ld counts, the first row has %ld (%s)", path,
                             lineno, fields, cols, excerpt(s, end, buf, sizeof(buf)));
            break;
        }
        if (rows == cols) {
            err = util_error("%s:%zu: more rows than the %ld columns (not a square matrix)", path,
                             lineno, cols);
            break;
        }
        /* Parse the fields into row `rows`. */
        const char *q = s;
        for (long j = 0; j < cols && err == UTIL_OK; j++) {
            const char *comma = memchr(q, ',', (size_t)(end - q));
            const char *fe = comma != NULL ? comma : end;
            if (parse_field(q, fe, &a[(size_t)rows * (size_t)cols + (size_t)j]) != UTIL_OK) {
                err = util_error("%s:%zu: count %ld is not a non-negative integer (%s)", path,
                                 lineno, j + 1, excerpt(q, fe, buf, sizeof(buf)));
            }
            q = fe + 1;
        }
        if (err != UTIL_OK) {
            break;
        }
        rows++;
    }
    if (err == UTIL_OK && ferror(f)) {
        err = util_error("cannot read the matrix (%s: %s)", path, strerror(errno));
    }
    if (err == UTIL_OK && cols < 0) {
        err = util_error("the matrix has no rows (%s)", path);
    }
    if (err == UTIL_OK && rows != cols) {
        err = util_error("%s: %ld rows of %ld counts: not a square matrix (ragged CSV)", path, rows,
                         cols);
    }
    free(line);
    fclose(f);
    if (err != UTIL_OK) {
        util_free(a);
        return err;
    }
    *m = a;
    *p = (int)cols;
    return UTIL_OK;
}

/* Builds the count matrix of the chosen input into *@m (keys, or bytes for --unit bytes). */
static int build_counts(const struct cli *cli, uint64_t **m, int *p, char *label, size_t cap)
{
    if (cli->matrix != NULL) {
        const char *base = strrchr(cli->matrix, '/');
        (void)snprintf(label, cap, "matrix:%s", base ? base + 1 : cli->matrix);
        for (char *q = label; *q; q++) {
            *q = *q == ',' ? '_' : *q; /* keep the CSV column whole */
        }
        return read_matrix(cli->matrix, m, p);
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
            err = exchange_model_sort_counts(&dp, cli->epsilon, cli->oversample, threads, a);
        }
        (void)snprintf(label, cap, "dist:%s:n=%llu:seed=%llu", cli->dist,
                       (unsigned long long)cli->n, (unsigned long long)cli->seed);
    } else {
        /* A synthetic pattern of the exchange benchmark, under its name or an alias. */
        char text[128];
        const char *colon = strchr(cli->pattern, ':');
        size_t len = colon ? (size_t)(colon - cli->pattern) : strlen(cli->pattern);
        (void)snprintf(text, sizeof(text), "%s", cli->pattern);
        for (size_t i = 0; i < sizeof(aliases) / sizeof(*aliases); i++) {
            if (strlen(aliases[i].alias) == len &&
                strncmp(cli->pattern, aliases[i].alias, len) == 0) {
                (void)snprintf(text, sizeof(text), "%s%s", aliases[i].name, colon ? colon : "");
            }
        }
        struct bench_spec spec = {
            .ranks = (int)cli->ranks, .keys = cli->volume / sizeof(uint64_t), .seed = cli->seed};
        err = bench_spec_parse(text, &spec);
        if (err == UTIL_OK && bench_spec_matrix(&spec, a) != UTIL_OK) {
            err = util_fail(UTIL_ENOMEM, "out of memory for the pattern's weights (%s)", text);
        }
        char spec_label[96] = "";
        if (err == UTIL_OK) {
            bench_spec_label(&spec, spec_label, sizeof(spec_label));
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

/* ---- output ------------------------------------------------------------------------------ */

/* A byte count with a binary unit: "512 B", "1.5 KiB", "3.0 GiB". */
static const char *fmt_bytes(uint64_t b, char *buf, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double x = (double)b;
    int u = 0;
    while (x >= 1024.0 && u < 5) {
        x /= 1024.0;
        u++;
    }
    (void)snprintf(buf, cap, "%.*f %s", u == 0 ? 0 : 1, x, unit[u]);
    return buf;
}

/* Seconds with a readable unit; "-" for NAN. */
static const char *fmt_secs(double s, char *buf, size_t cap)
{
    if (isnan(s)) {
        (void)snprintf(buf, cap, "-");
    } else if (s < 1e-3) {
        (void)snprintf(buf, cap, "%.1f us", s * 1e6);
    } else if (s < 1.0) {
        (void)snprintf(buf, cap, "%.2f ms", s * 1e3);
    } else {
        (void)snprintf(buf, cap, "%.3f s", s);
    }
    return buf;
}

/* A number with @prec decimals, or "-" for NAN. */
static const char *fmt_num(double x, int prec, char *buf, size_t cap)
{
    if (isnan(x)) {
        (void)snprintf(buf, cap, "-");
    } else {
        (void)snprintf(buf, cap, "%.*f", prec, x);
    }
    return buf;
}

/* CSV: a comma, then @x in style 'g', 'f' or 'e' with @prec digits; NAN as an empty field. */
static void csv_num(FILE *f, double x, char style, int prec)
{
    fputc(',', f);
    if (isnan(x)) {
        return;
    }
    if (style == 'f') {
        fprintf(f, "%.*f", prec, x);
    } else if (style == 'e') {
        fprintf(f, "%.*e", prec, x);
    } else {
        fprintf(f, "%.*g", prec, x);
    }
}

static const char csv_columns[] =
    "input,p,packet_bytes,h_packets,h_bytes,total_bytes,algo,backend,duplex,rounds,startups,"
    "steps,steps_per_h,bound_steps,bytes_moved,max_message,model_seconds,async_seconds,sched_"
    "seconds,alpha,"
    "beta,detail";

static void print_csv_row(FILE *f, const char *label, const struct exchange_model_case *c,
                          const struct exchange_ops *backend, const struct exchange_model_result *r)
{
    double per_h = r->h > 0 ? r->steps / (double)r->h : NAN;
    fprintf(f, "%s,%d,%llu,%llu,%llu,%llu,%s,%s,%s,%llu,%llu", label, c->p,
            (unsigned long long)r->packet_bytes, (unsigned long long)r->h,
            (unsigned long long)c->h_bytes, (unsigned long long)c->total_bytes, r->algo, backend->name,
            r->duplex, (unsigned long long)r->rounds, (unsigned long long)r->startups);
    csv_num(f, r->steps, 'g', 9);
    csv_num(f, per_h, 'f', 6);
    csv_num(f, r->bound, 'g', 9);
    fprintf(f, ",%llu,%llu", (unsigned long long)r->bytes_moved,
            (unsigned long long)r->max_message);
    csv_num(f, r->seconds, 'e', 6);
    csv_num(f, r->async_seconds, 'e', 6);
    csv_num(f, r->sched_seconds, 'e', 6);
    fprintf(f, ",%.6e,%.6e,%s\n", c->alpha, c->beta, r->detail);
}

static void print_table_head(FILE *f, const char *label, const struct exchange_model_case *c,
                             const struct cli *cli)
{
    char b1[32], b2[32], b3[32];
    fprintf(f, "input   %s\n", label);
    fprintf(f, "P       %d\n", c->p);
    fprintf(f, "volume  %s off the diagonal; h = %s (the most one rank sends + receives)\n",
            fmt_bytes(c->total_bytes, b1, sizeof(b1)), fmt_bytes(c->h_bytes, b2, sizeof(b2)));
    fprintf(f, "packets %s each: h = %llu packets (most sent %llu, most received %llu)\n",
            fmt_bytes(c->packet_bytes, b3, sizeof(b3)), (unsigned long long)c->h,
            (unsigned long long)c->send_max, (unsigned long long)c->recv_max);
    /* Back-ends whose own rule cuts h differently: their packets are in their detail below. */
    for (int i = 0; !c->packet_fixed && i < cli->nalgos; i++) {
        const struct exchange_model *m = cli->algos[i];
        if (m->target_h != 0 && m->target_h != EXCHANGE_SCHED_TARGET_H) {
            fprintf(f, "        (%s's packets are its own, h / %llu: see its packet_bytes below)\n",
                    m->name, (unsigned long long)m->target_h);
        }
    }
    fprintf(f, "model   alpha = %.3g us per start-up, beta = %.3g ns/B (%.2f GB/s)\n\n",
            c->alpha * 1e6, c->beta * 1e9, c->beta > 0 ? 1e-9 / c->beta : 0.0);
    fprintf(f, "%-19s %-4s %6s %6s %9s %7s %9s %10s %10s %10s %10s %10s\n", "algorithm", "dupl",
            "rounds", "msgs", "steps", "steps/h", "bound", "moved", "largest", "model", "async",
            "sched");
}

static void print_table_row(FILE *f, const struct exchange_model_result *r)
{
    char s1[32], s2[32], s3[32], s4[32], s5[32], s6[32], s7[32], s8[32];
    double per_h = r->h > 0 ? r->steps / (double)r->h : NAN;
    fprintf(f, "%-19s %-4s %6llu %6llu %9s %7s %9s %10s %10s %10s %10s %10s\n", r->algo, r->duplex,
            (unsigned long long)r->rounds, (unsigned long long)r->startups,
            fmt_num(r->steps, 1, s1, sizeof(s1)), fmt_num(per_h, 3, s2, sizeof(s2)),
            fmt_num(r->bound, 1, s3, sizeof(s3)), fmt_bytes(r->bytes_moved, s4, sizeof(s4)),
            fmt_bytes(r->max_message, s5, sizeof(s5)), fmt_secs(r->seconds, s6, sizeof(s6)),
            fmt_secs(r->async_seconds, s7, sizeof(s7)), fmt_secs(r->sched_seconds, s8, sizeof(s8)));
}

/* --print-matrix: the counts as --matrix reads them, after a comment line. */
static void print_matrix(FILE *f, const char *label, const uint64_t *m, int p, const char *unit)
{
    fprintf(f, "# %s, %s from row to column, P = %d\n", label, unit, p);
    for (size_t i = 0; i < (size_t)p; i++) {
        for (size_t j = 0; j < (size_t)p; j++) {
            fprintf(f, "%s%llu", j ? "," : "", (unsigned long long)m[i * (size_t)p + j]);
        }
        fputc('\n', f);
    }
}

/* ---- the ping-pong ----------------------------------------------------------------------- */

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median one-way time of @bytes between ranks 0 and 1: @trials trials of @reps round trips. */
static double ping_pong_time(char *buf, int bytes, int trials, int reps, int rank)
{
    double t[64];
    for (int k = 0; k < trials; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            if (rank == 0) {
                MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        t[k] = (MPI_Wtime() - t0) / (2.0 * reps);
    }
    qsort(t, (size_t)trials, sizeof(double), dbl_cmp);
    return t[trials / 2];
}

/*
 * --ping-pong: alpha = the median one-way time of an 8-byte message, beta = (the median
 * one-way time of a large message - alpha) / its size. Run under mpirun -np 2.
 */
static int ping_pong(const char *size_text, int *argc, char ***argv)
{
    uint64_t big = (uint64_t)64 << 20;
    if (*size_text != '\0' &&
        (util_parse_count(size_text, &big) != UTIL_OK || big < 1024 || big > ((uint64_t)1 << 30))) {
        return util_error("--ping-pong takes a message size from 1Ki to 1Gi (%s)", size_text);
    }
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "MPI_Init failed");
    }
    int rank, size, err = UTIL_OK;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = util_malloc((size_t)big);
    int ok = buf != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (size != 2) {
        err = rank == 0 ? util_error("--ping-pong needs exactly 2 ranks (%d)", size) : UTIL_EUSAGE;
    } else if (!all_ok) {
        err = util_fail(UTIL_ENOMEM, "rank %d: out of memory for %llu bytes", rank,
                        (unsigned long long)big);
    } else {
        memset(buf, 1, (size_t)big);
        (void)ping_pong_time(buf, 8, 3, 100, rank); /* warm-up */
        double lat = ping_pong_time(buf, 8, 31, 2000, rank);
        int reps = big >= ((uint64_t)16 << 20) ? 4 : 20;
        double tb = ping_pong_time(buf, (int)big, 11, reps, rank);
        double beta = (tb - lat) / (double)big;
        if (rank == 0) {
            printf("alpha %.3e s   one-way latency of 8 bytes (median of 31 trials)\n", lat);
            printf("beta  %.3e s/B one-way time per byte of %llu bytes (median of 11 trials): "
                   "%.2f GB/s\n",
                   beta, (unsigned long long)big, beta > 0 ? 1e-9 / beta : 0.0);
            printf("--alpha %.3e --beta %.3e\n", lat, beta);
        }
    }
    util_free(buf);
    MPI_Finalize();
    return err;
}

/* ---- main -------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static struct cli cli;
    util_set_progname("sortex-sched");
    int err = parse(argc, argv, &cli);
    if (err != UTIL_OK || cli.done) {
        return util_exit_code(err);
    }
    if (cli.ping_pong != NULL) {
        return util_exit_code(ping_pong(cli.ping_pong, &argc, &argv));
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
    if (cli.print_matrix) {
        print_matrix(stdout, label, counts, p, unit_bytes ? "bytes" : "keys");
        goto done;
    }

    /* Bytes for the models: keys are 8 bytes each. */
    size_t nn = (size_t)p * (size_t)p;
    bytes = unit_bytes ? counts : util_malloc(nn * sizeof(*bytes));
    if (bytes == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for a %d x %d matrix", p, p);
        goto done;
    }
    for (size_t k = 0; !unit_bytes && k < nn; k++) {
        if (counts[k] > UINT64_MAX / sizeof(uint64_t)) {
            err =
                util_error("a count is too large to be keys (%llu)", (unsigned long long)counts[k]);
            goto done;
        }
        bytes[k] = counts[k] * sizeof(uint64_t);
    }
    uint64_t packet =
        cli.target_h > 0 ? exchange_model_packet_bytes(p, bytes, cli.target_h) : cli.packet;
    if ((err = exchange_model_case_init(&mc, p, bytes, unit_bytes ? 1 : sizeof(uint64_t),
                                        packet)) != UTIL_OK) {
        goto done;
    }
    mc.alpha = cli.alpha;
    mc.beta = cli.beta;
    mc.validate = cli.validate;

    /* One line per model. */
    if (cli.csv) {
        printf("%s\n", csv_columns);
    } else {
        print_table_head(stdout, label, &mc, &cli);
    }
    struct exchange_model_result res[MAX_ALGOS];
    for (int a = 0; a < cli.nalgos && err == UTIL_OK; a++) {
        if ((err = exchange_model_run(cli.algos[a], &mc, &res[a])) != UTIL_OK) {
            break;
        }
        if (cli.csv) {
            print_csv_row(stdout, label, &mc, cli.backend[a], &res[a]);
        } else {
            print_table_row(stdout, &res[a]);
        }
        fflush(stdout);
    }
    if (err == UTIL_OK && !cli.csv) {
        /* The model-specific figures under the table. */
        int head = 0;
        for (int a = 0; a < cli.nalgos; a++) {
            if (res[a].detail[0] != '\0') {
                printf("%s%-19s %s\n", head++ ? "" : "\n", res[a].algo, res[a].detail);
            }
        }
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

/*
 * sim/main.c: bin/sortex-sched, the schedule simulator's command line. Builds a P x P count
 * matrix (from a CSV file, from a datagen input as the sort would bucket it, or from a pattern:
 * sim/patterns.c), runs the cost models of every registered back-end on it and prints one line
 * per model (sim/report.c): rounds, steps against h and the theorems' bounds, bytes moved,
 * largest message, the alpha-beta time and the time the scheduler took. No MPI is initialised,
 * except by --ping-pong (sim/pingpong.c), which measures alpha and beta between two ranks.
 */
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
#include "sort/names.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/format.h"
#include "util/util.h"

#define VOLUME_DEFAULT ((uint64_t)1 << 20)
#define MAX_ALGOS      32

/* Synthetic patterns the simulator names differently from the benchmark's registry. */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"permutation", "staggered"},
    {"lowerbound", "oddcycle"},
};

struct cli {
    const char *matrix, *dist, *pattern;
    const char *algos_text; /* --algos, read once the input is known */
    int bytes_unit;         /* --unit bytes */
    uint64_t record_size;   /* --record-size: bytes per element the back-ends move [8] */
    uint64_t n, volume, seed, oversample, packet, target_h;
    int balance; /* --balance, as enum sortex_balance */
    int balance_set, seed_set, volume_set, n_set, record_set;
    long ranks, threads;
    double epsilon, alpha, beta;
    int csv, print_matrix, no_validate;
    const char *ping_pong; /* non-NULL: measure; the large message size ("" = default) */
    const char *machine;   /* --machine FILE */
    const char *calibrate; /* non-NULL: --calibrate; its scratch directory ("" = default) */
    const struct exchange_model *algos[MAX_ALGOS];
    const struct exchange_ops *backend[MAX_ALGOS]; /* the back-end each models */
    int nalgos;
};

/* Whether a model of back-end @b has the back-end's own name (every one-model back-end's does;
 * alltoallv's two models are named after Open MPI's algorithms). */
static int has_own_model(const struct exchange_ops *b)
{
    for (const struct exchange_model *const *m = b->models; m != NULL && *m != NULL; m++) {
        if (strcmp((*m)->name, b->name) == 0) {
            return 1;
        }
    }
    return 0;
}

static void print_algos(FILE *f)
{
    fprintf(f, "models (--algos NAME,...; the MPI back-end each models in brackets):\n");
    for (const struct exchange_ops *const *b = exchange_list(); *b != NULL; b++) {
        if (!has_own_model(*b)) {
            fprintf(f, "%-19s the back-end: all of its models, below\n", (*b)->name);
        }
        for (const struct exchange_model *const *m = (*b)->models; m != NULL && *m != NULL; m++) {
            fprintf(f, "%-19s [%s] %s\n", (*m)->name, (*b)->name, (*m)->summary);
        }
    }
}

/* Writes the names --algos takes, comma separated, into @buf (always terminated): the back-ends
 * without a model of their own name, and every model. */
static void model_names(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const struct exchange_ops *const *b = exchange_list(); *b != NULL; b++) {
        if (!has_own_model(*b) && used < cap) {
            int k = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", (*b)->name);
            used += k > 0 ? (size_t)k : 0;
        }
        const struct exchange_model *const *m = (*b)->models;
        for (; m != NULL && *m != NULL && used < cap; m++) {
            int k = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", (*m)->name);
            used += k > 0 ? (size_t)k : 0;
        }
    }
}

/* Adds the models @name selects to cli->algos: the model of that name, every model of the
 * back-end of that name (alltoallv: both of Open MPI's algorithms), or with "all" every model
 * of every back-end. Returns how many it added, or -1 when there is no room. */
static int add_models(struct cli *cli, const char *name)
{
    int added = 0;
    for (const struct exchange_ops *const *b = exchange_list(); *b != NULL; b++) {
        int whole = strcmp(name, "all") == 0 || strcmp(name, (*b)->name) == 0;
        for (const struct exchange_model *const *m = (*b)->models; m != NULL && *m != NULL; m++) {
            if (!whole && strcmp(name, (*m)->name) != 0) {
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
    char buf[512], names[512], *items[MAX_ALGOS];
    int n;
    cli->nalgos = 0;
    if (strcmp(text, "all") == 0) {
        return add_models(cli, "all") >= 0 ? UTIL_OK : util_error("too many models (%s)", text);
    }
    if (util_split_list(text, "--algos", buf, sizeof(buf), items, MAX_ALGOS, &n) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    for (int i = 0; i < n; i++) {
        int added = add_models(cli, items[i]);
        if (added == 0) {
            model_names(names, sizeof(names));
            return util_error("unknown algorithm (%s); valid: %s", items[i], names);
        }
        if (added < 0) {
            return util_error("too many --algos (%s)", text);
        }
    }
    return UTIL_OK;
}

/* --pattern NAME[:PARAM], or 'help' (lists them and exits). */
static int parse_pattern(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)opt;
    (void)quiet;
    if (strcmp(arg, "help") == 0) {
        print_patterns(stdout);
        return UTIL_CLI_DONE;
    }
    ((struct cli *)dest)->pattern = arg;
    return UTIL_OK;
}

/* --algos LIST, or 'help' (lists them and exits); the list is read once the input is known. */
static int parse_algos_opt(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)opt;
    (void)quiet;
    if (strcmp(arg, "help") == 0) {
        print_algos(stdout);
        return UTIL_CLI_DONE;
    }
    ((struct cli *)dest)->algos_text = arg;
    return UTIL_OK;
}

/* --unit: what the --matrix counts are. */
static const struct util_name units[] = {{"keys", 0}, {"bytes", 1}, {NULL, 0}};

/* The default --help states for --packet, derived from the back-ends' rule by usage(). */
static char packet_def[256];

static void usage(FILE *f);

#define DEST(field)  UTIL_CLI_DEST(struct cli, field)
#define GIVEN(field) UTIL_CLI_GIVEN(struct cli, field)

/* The options, in the order --help gives them: the input, then the rest. */
/* clang-format off */
static const struct util_cli_opt options[] = {
    UTIL_CLI_TEXT("input (exactly one):"),
    {.name = "matrix", .key = 'm', .arg = "FILE",
     .help = "P lines of P non-negative integers, comma separated\n"
             "(row i: what rank i sends to each rank); lines starting\n"
             "with '#' and blank lines are skipped; P <= {max}",
     .parse = util_cli_str, DEST(matrix), .max = EXCHANGE_MODEL_MAX_P},
    {.name = "unit", .arg = "keys|bytes",
     .def = "keys: 8 bytes each, or\nrecords of --record-size bytes",
     .help = "what the --matrix counts are [{def}]", .parse = util_cli_enum, DEST(bytes_unit),
     .names = units},
    {.name = "record-size", .arg = "R", .def = "8: keys",
     .help = "the back-ends move elements of R bytes, {min}..{max}, as a\n"
             "sort of R-byte records does (transpose deals and the\n"
             "schedules cut packets in whole records); the counts of\n"
             "every input are then records, --volume is rounded down\n"
             "to whole records; not with --unit bytes [{def}]",
     .parse = util_cli_int, DEST(record_size), .min = 1, .max = UTIL_RECORD_MAX,
     GIVEN(record_set)},
    {.name = "dist", .key = 'd', .arg = "NAME",
     .help = "the keys a P-rank sortex run would exchange on this\n"
             "datagen input (generated, sorted, sampled and bucketed\n"
             "as the sort does; all n keys are held in memory);\n"
             "needs --n and --ranks; sortex-gen --list names them",
     .parse = util_cli_str, DEST(dist)},
    {.name = "n", .key = 'n', .arg = "N",
     .help = "keys of the --dist input (K M G powers of ten, Ki Mi Gi\nof two)",
     .parse = util_cli_count, DEST(n), .min = 1, .max = DATAGEN_MAX_N,
     .err = "{opt} must be a key count from 1 to 2^60 ({arg})", GIVEN(n_set)},
    {.name = "epsilon", .key = 'e', .arg = "E", .def = "0.1",
     .help = "the sort's imbalance bound, {fmin}..{fmax} [{def}]", .parse = util_cli_double,
     DEST(epsilon), .fmin = 0.001, .fmax = 10},
    {.name = "balance", .arg = "MODE",
     .def = "auto: sample up to 1 MiB of samples a rank, else eps",
     .help = "the sort's splitter selection: {names}\n"
             "[{def}];\n"
             "eps and exact replay the sort's histogram rounds draw for\n"
             "draw up to 1024 ranks (beyond, the exact targets)",
     .parse = util_cli_enum, DEST(balance), .names = sort_balance_names, GIVEN(balance_set)},
    {.name = "oversample", .key = 's', .arg = "S", .def = "max(256, ceil((P+1)/E))",
     .help = "the sort's samples per bucket of --balance sample (which it\nimplies) [{def}]",
     .parse = util_cli_int, DEST(oversample), .min = 1, .max = 1000000},
    {.name = "pattern", .key = 'p', .arg = "NAME",
     .help = "a synthetic matrix, NAME or NAME:PARAM; 'help' lists them\n"
             "(aliases: permutation = staggered, lowerbound = oddcycle,\n"
             "the 3-cycle lower-bound instance of the h-relation paper)",
     .parse = parse_pattern},
    {.name = "volume", .arg = "BYTES", .def = "1Mi",
     .help = "bytes every rank sends with --pattern, own block included\n"
             "(rounded down to whole keys or records) [{def}]",
     .parse = util_cli_count, DEST(volume), .max = (uint64_t)1 << 50,
     .err = "{opt} must be a byte count up to 1Pi, e.g. 1Mi ({arg})", GIVEN(volume_set)},
    {.name = "ranks", .key = 'P', .arg = "P", .help = "ranks, {min}..{max} (--dist, --pattern)",
     .parse = util_cli_int, DEST(ranks), .min = 1, .max = EXCHANGE_MODEL_MAX_P},
    {.name = "seed", .arg = "S", .help = "seed of --dist [0] or --pattern [1]",
     .parse = util_cli_count, DEST(seed), .max = UINT64_MAX,
     .err = "{opt} must be a non-negative integer ({arg})", GIVEN(seed_set)},
    UTIL_CLI_TEXT("\noptions (default in brackets):"),
    {.name = "algos", .key = 'a', .arg = "LIST", .def = "all",
     .help = "models, comma separated, or 'all' [{def}]; a back-end's\n"
             "name (alltoallv) selects all of its models; 'help' lists",
     .parse = parse_algos_opt},
    {.name = "machine", .arg = "FILE",
     .def = "$SORTEX_MACHINE, else ~/.config/sortex/machine.txt,\n"
            "else built-in: a project machine's, and the table says so",
     .help = "the machine's constants, as --calibrate writes them\n[{def}]",
     .parse = util_cli_str, DEST(machine)},
    {.name = "alpha", .arg = "SECONDS", .def = "the machine's",
     .help = "start-up time per message [{def}]", .parse = util_cli_double,
     DEST(alpha), .fmin = 0, .fmax = 1e3,
     .err = "{opt} must be seconds from {fmin} to {fmax} ({arg})"},
    {.name = "beta", .arg = "SECONDS", .def = "the machine's",
     .help = "time per byte [{def}]", .parse = util_cli_double, DEST(beta),
     .fmin = 0, .fmax = 1, .err = "{opt} must be seconds per byte from {fmin} to {fmax} ({arg})"},
    {.name = "packet", .arg = "BYTES", .def = packet_def,
     .help = "packet size of direct, forward and fullduplex [{def}]", .parse = util_cli_count,
     DEST(packet), .min = 1, .max = (uint64_t)1 << 40,
     .err = "{opt} must be a byte count from 1 to 1Ti ({arg})"},
    {.name = "target-h", .arg = "H",
     .help = "the back-ends' rule with h bytes / H instead, for all\n"
             "three, 1..2^20, as SORTEX_SCHED_TARGET_H=H makes\n"
             "a sort do (fine packets: the paper's bounds)",
     .parse = util_cli_int, DEST(target_h), .min = 1, .max = EXCHANGE_SCHED_TARGET_H_MAX},
    {.name = "csv", .help = "one CSV row per model instead of the table", .parse = util_cli_flag,
     DEST(csv)},
    {.name = "print-matrix",
     .help = "print the count matrix (CSV, as --matrix reads it) and exit",
     .parse = util_cli_flag, DEST(print_matrix)},
    {.name = "no-validate", .help = "do not check the schedules with the validator",
     .parse = util_cli_flag, DEST(no_validate)},
    UTIL_CLI_THREADS(struct cli, threads, "T", .def = "all",
                     .help = "threads generating and sorting the --dist input [{def}]"),
    {.name = "calibrate", .arg = "DIR", .flags = UTIL_CLI_OPTIONAL,
     .help = "under mpirun on the nodes to model: measure this machine\n"
             "(start-ups, bytes, copies, synchronisation, caches, cores;\n"
             "the whole-sort model's compute constants, scratch in DIR\n"
             "[/tmp]) and print it as a machine file (a minute or less)",
     .parse = util_cli_str, DEST(calibrate)},
    {.name = "ping-pong", .arg = "BYTES", .flags = UTIL_CLI_OPTIONAL,
     .help = "under mpirun -np 2: measure alpha (8-byte one-way\n"
             "latency) and beta (one-way time per byte of a BYTES\n"
             "message, default 64Mi) and print them",
     .parse = util_cli_str, DEST(ping_pong)},
    UTIL_CLI_HELP(usage, "this help"),
    UTIL_CLI_VERSION("version, commit and MPI library"),
    {0},
};
/* clang-format on */

#undef GIVEN
#undef DEST

static const struct util_cli command_line = {
    .opts = options,
    .col = 25,
    .unknown = "unknown option ({arg}); see --help",
    .unexpected = "unexpected argument ({arg}); see --help",
};

static void usage(FILE *f)
{
    (void)snprintf(packet_def, sizeof(packet_def),
                   "their\nback-ends' rule: h bytes / %d (forward: / %d), at\n"
                   "least 64 KiB, rounded up to 40 bytes, or to 5 lcm(R, 8)\n"
                   "bytes for records of R bytes",
                   EXCHANGE_SCHED_TARGET_H, EXCHANGE_SCHED_TARGET_H_FORWARD);
    fprintf(f, "usage: sortex-sched (--matrix FILE | --dist NAME --n N --ranks P |\n"
               "                     --pattern NAME[:PARAM] --ranks P) [options]\n"
               "       mpirun -np 2 sortex-sched --ping-pong[=BYTES]\n"
               "       mpirun -np P sortex-sched --calibrate[=DIR] > machine.txt\n"
               "\n"
               "Models every exchange back-end on one P x P count matrix without running MPI:\n"
               "rounds, steps of the h-relation schedules against h and their bounds, bytes "
               "moved,\n"
               "largest message, an alpha-beta time, and the time the scheduler itself took.\n"
               "\n");
    util_cli_help(f, &command_line);
    fprintf(f,
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
            "            matrix); 3 runtime failure (out of memory, an invalid schedule, MPI)\n");
}

/* The options that belong to one input, and --algos; one line and UTIL_EUSAGE on a mistake. */
static int check_input_options(struct cli *cli)
{
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
    return parse_algos(cli->algos_text, cli);
}

/* The options and their combinations; prints one line and returns UTIL_EUSAGE on a mistake,
 * UTIL_CLI_DONE after --help and the like. */
static int parse(int argc, char **argv, struct cli *cli)
{
    cli->algos_text = "all";
    cli->alpha = NAN; /* the machine's */
    cli->beta = NAN;
    cli->volume = VOLUME_DEFAULT;
    cli->record_size = sizeof(uint64_t);
    int err = util_cli_parse(&command_line, argc, argv, cli, false);
    if (err != UTIL_OK) {
        return err;
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
    if (cli->dist == NULL &&
        (cli->n_set || cli->epsilon > 0 || cli->oversample > 0 || cli->balance_set)) {
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
    return check_input_options(cli);
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

/* ---- the models ------------------------------------------------------------------------- */

/* Runs every model of --algos on the P x P count matrix @counts (keys, records, or bytes for
 * --unit bytes) and prints one line each, under @label. */
static int run_models(const struct cli *cli, uint64_t *counts, int p, const char *label)
{
    int unit_bytes = cli->bytes_unit;
    uint64_t elem = unit_bytes ? 1 : cli->record_size;
    struct exchange_model_case mc;
    memset(&mc, 0, sizeof(mc));
    int err = UTIL_OK;

    /* Bytes for the models: keys are 8 bytes each, records --record-size. */
    size_t nn = (size_t)p * (size_t)p;
    uint64_t *bytes = unit_bytes ? counts : util_malloc(nn * sizeof(*bytes));
    if (bytes == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory for a %d x %d matrix", p, p);
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
    uint64_t packet = cli->target_h > 0 ? exchange_model_packet_bytes(p, bytes, elem, cli->target_h)
                                        : cli->packet;
    if ((err = exchange_model_case_init(&mc, p, bytes, elem, packet)) != UTIL_OK) {
        goto done;
    }
    static struct exchange_machine machine;
    if ((err = sim_machine_setup(&machine, cli->machine, cli->alpha, cli->beta, &mc)) != UTIL_OK) {
        goto done;
    }
    mc.validate = !cli->no_validate;
    mc.counts_known = cli->dist != NULL; /* a sort hands its counts; sortex-xbench's default not */

    /* One line per model. */
    if (cli->csv) {
        printf("%s\n", sim_report_columns);
    } else {
        sim_report_table_head(stdout, label, &mc, cli->algos, cli->nalgos);
    }
    struct exchange_model_result res[MAX_ALGOS];
    for (int a = 0; a < cli->nalgos && err == UTIL_OK; a++) {
        if ((err = exchange_model_run(cli->algos[a], &mc, &res[a])) != UTIL_OK) {
            break;
        }
        if (cli->csv) {
            sim_report_csv_row(stdout, label, &mc, cli->backend[a], &res[a]);
        } else {
            sim_report_table_row(stdout, &res[a]);
        }
        fflush(stdout);
    }
    if (err == UTIL_OK && !cli->csv) {
        sim_report_details(stdout, res, cli->nalgos);
    }
done:
    if (bytes != counts) {
        util_free(bytes);
    }
    exchange_model_case_free(&mc);
    return err;
}

/* ---- main -------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static struct cli cli;
    util_set_progname("sortex-sched");
    util_check_stdout_at_exit();
    for (int i = 1; i < argc; i++) { /* the whole-sort model has a command line of its own */
        if (strcmp(argv[i], "--sort") == 0) {
            return sim_sort_main(argc, argv);
        }
    }
    int err = parse(argc, argv, &cli);
    if (err != UTIL_OK) {
        return err == UTIL_CLI_DONE ? UTIL_EXIT_OK : util_exit_code(err);
    }
    if (cli.ping_pong != NULL) {
        return util_exit_code(sim_ping_pong(cli.ping_pong, &argc, &argv));
    }
    if (cli.calibrate != NULL) {
        return util_exit_code(sim_calibrate(cli.calibrate, &argc, &argv));
    }
    uint64_t *counts = NULL;
    char label[256];
    int p = 0;
    if ((err = build_counts(&cli, &counts, &p, label, sizeof(label))) != UTIL_OK) {
        return util_exit_code(err);
    }
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
                         cli.bytes_unit                        ? "bytes"
                         : cli.record_size == sizeof(uint64_t) ? "keys"
                                                               : unit);
    } else {
        err = run_models(&cli, counts, p, label);
    }
    util_free(counts);
    return util_exit_code(err); /* a failed write to stdout: util_check_stdout_at_exit() */
}

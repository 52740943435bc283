/*
 * sim/sort_cli.c: sortex-sched --sort, the command line of the whole-sort model
 * (sim/sortmodel.h): one table (or CSV rows) of predicted phases per case.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datagen/datagen.h"
#include "sim/sortmodel.h"
#include "sort/names.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/format.h"
#include "util/util.h"

struct cli {
    struct util_cli_list ranks, sizes;
    const char *pattern, *dist, *exchange, *balance, *machine, *calibrate;
    double epsilon, alpha, beta;
    uint64_t oversample, elem, mem_limit;
    int threads, rpn, csv, sort, external;
    int levels, levels_given; /* --levels: 0 auto (when given), else 1..SORTEX_LEVELS_MAX */
};

static void usage(FILE *f);

#define DEST(field) UTIL_CLI_DEST(struct cli, field)

/* The options, in the order --help gives them; --sort itself, which brought us here, is one. */
/* clang-format off */
static const struct util_cli_opt options[] = {
    {.name = "sort", .key = 'S', .parse = util_cli_flag, DEST(sort)},
    {.name = "ranks", .key = 'P', .arg = "P[,P...]", .help = "ranks ({min}..{max})",
     .parse = util_cli_counts, DEST(ranks), .min = 1, .max = 1u << 20, .items = 32,
     .err = "{opt} must be from {min} to {max} ({arg})"},
    {.name = "n-per-rank", .key = 'n', .arg = "N[,N...]",
     .help = "elements each rank reads; K M G suffixes; every\n"
             "sort at most 2^60 elements and 2^63 bytes, the\n"
             "largest file",
     .parse = util_cli_counts, DEST(sizes), .min = 1, .max = (uint64_t)1 << 50, .items = 32,
     .err = "{opt} must be from {min} to {max} ({arg})"},
    {.name = "pattern", .key = 'p', .arg = "NAME",
     .def = "bucket: equal blocks, as uniform keys give",
     .help = "the exchange's count matrix (sortex-xbench --patterns\nhelp) [{def}]",
     .parse = util_cli_str, DEST(pattern)},
    {.name = "dist", .key = 'd', .arg = "NAME",
     .help = "the input distribution instead: uniform is equal\n"
             "blocks; others are the sort's counts for them\n"
             "(sort:NAME, P <= 4096)",
     .parse = util_cli_str, DEST(dist)},
    {.name = "exchange", .key = 'x', .arg = "NAME", .def = "auto",
     .help = "the back-end priced in the total: a name, 'auto' (the\n"
             "fastest of the model) or 'all' (also a row each) [{def}]",
     .parse = util_cli_str, DEST(exchange)},
    {.name = "balance", .key = 'b', .arg = "MODE", .def = "auto: as the sort resolves it",
     .help = "auto, eps, exact, sample, or all (a table each of the\nlast three) [{def}]",
     .parse = util_cli_str, DEST(balance)},
    {.name = "epsilon", .key = 'e', .arg = "E", .def = "0.1",
     .help = "as sortex --epsilon [{def}]", .parse = util_cli_double, DEST(epsilon),
     .fmin = 0.001, .fmax = 10},
    {.name = "oversample", .key = 's', .arg = "S", .def = "default",
     .help = "as sortex --oversample, for --balance sample [{def}]", .parse = util_cli_count,
     DEST(oversample), .min = 1, .max = UINT64_MAX,
     .err = "{opt} must be a positive count ({arg})"},
    UTIL_CLI_THREADS(struct cli, threads, "T", .def = "1", .help = "threads per rank [{def}]"),
    {.name = "levels", .arg = "L", .def = "one level, by the one-level model",
     .help = "{names}: model that many levels as sortex runs\nthem (auto: each L, and the cheapest) [{def}]",
     .parse = util_cli_enum, DEST(levels), .names = sort_levels_names,
     UTIL_CLI_GIVEN(struct cli, levels_given)},
    {.name = "ranks-per-node", .arg = "R", .def = "cores / threads",
     .help = "ranks sharing a node's cores [{def}]", .parse = util_cli_int, DEST(rpn), .min = 1,
     .max = 1 << 20, .err = "{opt} must be a positive integer ({arg})"},
    {.name = "record-size", .arg = "E", .def = "8",
     .help = "bytes an element takes, {min}..{max} [{def}]", .parse = util_cli_count, DEST(elem),
     .min = 1, .max = UTIL_RECORD_MAX, .err = "{opt} must be from {min} to {max} bytes ({arg})"},
    {.name = "mem-limit", .arg = "BYTES", .def = "none: in memory",
     .help = "as sortex --mem-limit: a share beyond it is predicted\n"
             "as the external sort's two passes [{def}]",
     .parse = util_cli_count, DEST(mem_limit), .min = 1, .max = UINT64_MAX,
     .err = "{opt} must be a positive byte count ({arg})"},
    {.name = "external", .arg = "MODE", .def = "auto",
     .help = "as sortex --external: auto, always or never [{def}]",
     .parse = util_cli_enum, DEST(external), .names = sort_external_names},
    {.name = "machine", .arg = "FILE",
     .def = "$SORTEX_MACHINE, else\n~/.config/sortex/machine.txt, else a project machine's;\nthe table's head says which",
     .help = "machine constants ('name value' lines, as --calibrate\nprints them) [{def}]",
     .parse = util_cli_str, DEST(machine)},
    {.name = "alpha", .arg = "S", .help = "the network's start-up and per-byte seconds",
     .parse = util_cli_double, DEST(alpha), .fmin = 0, .fmax = 1,
     .err = "{opt} must be seconds from {fmin} to {fmax} ({arg})",
     .label = "--alpha S, --beta S"},
    {.name = "beta", .arg = "S", .parse = util_cli_double, DEST(beta), .fmin = 0, .fmax = 1,
     .err = "{opt} must be seconds from {fmin} to {fmax} ({arg})"},
    {.name = "calibrate", .arg = "DIR", .flags = UTIL_CLI_OPTIONAL, .def = "/tmp",
     .help = "measure this machine's compute and file constants\n"
             "(scratch file in DIR [{def}]) and print them",
     .parse = util_cli_str, DEST(calibrate)},
    {.name = "csv",
     .help = "CSV rows: P,n_per_rank,balance,exchange,phase,seconds,\n"
             "rank_bytes,net_bytes,note",
     .parse = util_cli_flag, DEST(csv)},
    UTIL_CLI_HELP(usage, "this help"),
    {0},
};
/* clang-format on */

#undef DEST

static const struct util_cli command_line = {
    .opts = options,
    .col = 29,
    .unknown = "unknown option ({last}); see sortex-sched --sort --help",
    .unexpected = "unexpected argument ({arg})",
};

static void usage(FILE *f)
{
    fprintf(f, "usage: sortex-sched --sort --ranks P[,P...] --n-per-rank N[,N...] [options]\n"
               "\n"
               "Predicts every phase of a sortex run on P ranks of N elements each, from machine\n"
               "constants and the sort's own rules, without data: time on the slowest rank, the\n"
               "most memory one rank holds, and the bytes one rank sends.\n"
               "\n"
               "options (default in brackets):\n");
    util_cli_help(f, &command_line);
    fprintf(f, "\n"
               "exit codes: 0 printed; 2 usage error; 3 out of memory or the calibration failed\n");
}

static void print_bytes(FILE *f, double b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (b >= 1024 && u < 5) {
        b /= 1024;
        u++;
    }
    fprintf(f, u ? "%8.1f %-3s" : "%8.0f %-3s", b, unit[u]);
}

static void print_secs(FILE *f, double s)
{
    if (isinf(s)) {
        fprintf(f, "%12s", "refused");
    } else if (isnan(s)) {
        fprintf(f, "%12s", "-");
    } else if (s < 1e-3) {
        fprintf(f, "%9.1f us", s * 1e6);
    } else if (s < 1) {
        fprintf(f, "%9.2f ms", s * 1e3);
    } else {
        fprintf(f, "%10.3f s", s);
    }
}

/* The back-ends' exchanges alone (--exchange auto or all), each[] in the registry's order. */
struct exchanges {
    struct sim_phase each[64];
    int n;
};

/* Prints case @sc's prediction @res as CSV rows: the phases, then with --exchange all each
 * back-end's exchange. */
static void print_csv(const struct sim_sort_case *sc, const struct sim_sort_result *res,
                      const struct exchanges *ex, int all)
{
    const struct exchange_ops *const *list = exchange_list();
    const char *balance = util_name_of(sort_balance_names, (int)res->balance);
    for (int r = 0; r < SIM_ROW_COUNT; r++) {
        const struct sim_phase *ph = &res->phase[r];
        printf("%d,%llu,%s,%s,%s,%.9g,%llu,%llu,\"%s\"\n", sc->p, (unsigned long long)sc->per_rank,
               balance, sc->backend->name, sim_row_name((enum sim_row)r), ph->seconds,
               (unsigned long long)ph->rank_bytes, (unsigned long long)ph->net_bytes, ph->note);
    }
    sim_level_print(stdout, res, 1, sc->p, sc->per_rank, balance);
    for (int i = 0; all && i < ex->n; i++) {
        printf("%d,%llu,%s,%s,exchange:%s,%.9g,%llu,%llu,\"%s\"\n", sc->p,
               (unsigned long long)sc->per_rank, balance, list[i]->name, list[i]->name,
               ex->each[i].seconds, (unsigned long long)res->phase[SIM_ROW_EXCHANGE].rank_bytes,
               (unsigned long long)ex->each[i].net_bytes, ex->each[i].note);
    }
}

/* Prints case @sc's prediction @res as a table: a line of parameters, the phases, then with
 * --exchange all each back-end's exchange. */
static void print_table(const struct sim_sort_case *sc, const struct sim_sort_result *res,
                        const struct exchanges *ex, int all, int autopick)
{
    const struct exchange_ops *const *list = exchange_list();
    printf("P = %d, %llu elements of %llu bytes a rank, %d thread(s), %d rank(s) a node; "
           "--balance %s; exchange %s%s\n",
           sc->p, (unsigned long long)sc->per_rank, (unsigned long long)sc->elem, sc->threads,
           sc->ranks_per_node, util_name_of(sort_balance_names, (int)res->balance),
           sc->levels && autopick ? "auto" : sc->backend->name,
           !autopick    ? ""
           : sc->levels ? " (each level's, as the sort prices it)"
                        : " (the model's fastest)");
    printf("  %-11s %12s %12s %12s  %s\n", "phase", "time", "rank memory", "sent", "on");
    for (int r = 0; r < SIM_ROW_COUNT; r++) {
        const struct sim_phase *ph = &res->phase[r];
        printf("  %-11s ", sim_row_name((enum sim_row)r));
        print_secs(stdout, ph->seconds);
        printf(" ");
        print_bytes(stdout, (double)ph->rank_bytes);
        printf(" ");
        print_bytes(stdout, (double)ph->net_bytes);
        printf("  %s\n", ph->note);
    }
    sim_level_print(stdout, res, 0, sc->p, sc->per_rank,
                    util_name_of(sort_balance_names, (int)res->balance));
    if (all) {
        printf("  exchange by back-end:\n");
        for (int i = 0; i < ex->n; i++) {
            printf("    %-11s ", list[i]->name);
            print_secs(stdout, ex->each[i].seconds);
            printf("  %s\n", ex->each[i].note);
        }
    }
    printf("\n");
}

/* Prints the external sort's prediction @x of case @sc with @mem bytes a rank: CSV rows (the
 * passes as phases, their bytes in the note) or a table and the passes' I/O. */
static void print_external(const struct sim_sort_case *sc, const struct sim_ext_result *x,
                           uint64_t mem, int csv)
{
    const struct sim_phase *ph = x->phase;
    if (csv) {
        for (int r = 0; r < SIM_EXT_ROW_COUNT; r++) {
            printf("%d,%llu,external,%s,%s,%.9g,%llu,%llu,\"%s\"\n", sc->p,
                   (unsigned long long)sc->per_rank, sc->backend->name,
                   sim_ext_row_name((enum sim_ext_row)r), ph[r].seconds,
                   (unsigned long long)ph[r].rank_bytes, (unsigned long long)ph[r].net_bytes,
                   ph[r].note);
        }
        return;
    }
    printf("P = %d, %llu elements of %llu bytes a rank, %d thread(s), %d rank(s) a node; "
           "exchange %s\n  external sort: a rank's share needs ",
           sc->p, (unsigned long long)sc->per_rank, (unsigned long long)sc->elem, sc->threads,
           sc->ranks_per_node, sc->backend->name);
    print_bytes(stdout, (double)x->need);
    printf(", --mem-limit ");
    print_bytes(stdout, (double)mem);
    printf(": %llu buckets of at most %llu elements, two passes\n",
           (unsigned long long)x->buckets, (unsigned long long)x->bucket_elems);
    printf("  %-12s %12s %12s %12s  %s\n", "phase", "time", "rank memory", "sent", "on");
    for (int r = 0; r < SIM_EXT_ROW_COUNT; r++) {
        printf("  %-12s ", sim_ext_row_name((enum sim_ext_row)r));
        print_secs(stdout, ph[r].seconds);
        printf(" ");
        print_bytes(stdout, (double)ph[r].rank_bytes);
        printf(" ");
        print_bytes(stdout, (double)ph[r].net_bytes);
        printf("  %s\n", ph[r].note);
    }
    for (int pass = 0; pass < 2; pass++) {
        printf("  pass %d reads ", pass + 1);
        print_bytes(stdout, (double)x->io_bytes[pass][0]);
        printf(" and writes ");
        print_bytes(stdout, (double)x->io_bytes[pass][1]);
        printf(pass == 0 ? ";" : "; temporary space ");
    }
    print_bytes(stdout, (double)x->temp_bytes);
    printf(" (all ranks)\n\n");
}

/* The external sort's prediction for case @sc when --mem-limit or --external asks for it:
 * prints it and sets *@printed when the sort would run externally. */
static int model_external(const struct cli *cli, const struct sim_sort_case *sc,
                          const struct sim_machine *m, int *printed)
{
    *printed = 0;
    if (cli->mem_limit == 0) {
        return UTIL_OK;
    }
    uint64_t mem = cli->mem_limit;
    struct sim_ext_result x;
    int err = sim_ext_model(sc, m, mem, cli->external == SORTEX_EXTERNAL_ALWAYS, &x);
    if (err != UTIL_OK || !x.external) {
        return err;
    }
    *printed = 1;
    if (cli->external != SORTEX_EXTERNAL_NEVER) {
        print_external(sc, &x, mem, cli->csv);
        return UTIL_OK;
    }
    /* --external never and a share that does not fit: the sort refuses it (exit 3), as the
     * regular sample beyond its memory is refused, with an infinite total. */
    if (cli->csv) {
        printf("%d,%llu,external,%s,total,inf,%llu,0,\"refused: --external never and a share "
               "beyond --mem-limit\"\n",
               sc->p, (unsigned long long)sc->per_rank, sc->backend->name,
               (unsigned long long)x.need);
    } else {
        printf("P = %d, %llu elements of %llu bytes a rank: refused, as sortex --external never "
               "refuses it:\n  a rank's share needs ",
               sc->p, (unsigned long long)sc->per_rank, (unsigned long long)sc->elem);
        print_bytes(stdout, (double)x.need);
        printf(", --mem-limit ");
        print_bytes(stdout, (double)mem);
        printf("\n\n");
    }
    return UTIL_OK;
}

/* Models one case for every balance asked for, and prints it. */
static int run_case(const struct cli *cli, const struct sim_machine *m, int p, uint64_t per,
                    const struct sim_spec *spec)
{
    const struct exchange_ops *const *list = exchange_list();
    for (int bal = 0; bal < SORTEX_BALANCE_COUNT; bal++) {
        if (strcmp(cli->balance, "all") == 0
                ? bal == SORTEX_BALANCE_AUTO
                : util_name_find(sort_balance_names, cli->balance) != bal) {
            continue; /* 'all': the three selections, auto being one of them */
        }
        struct sim_sort_case sc = {
            .p = p,
            .per_rank = per,
            .elem = cli->elem,
            .threads = cli->threads,
            .ranks_per_node = cli->rpn ? cli->rpn : m->cores / cli->threads,
            .balance = (enum sortex_balance)bal,
            .epsilon = cli->epsilon,
            .oversample = cli->oversample,
            .matrix = spec,
            .backend = list[0],
            .levels = cli->levels,
        };
        sc.ranks_per_node = sc.ranks_per_node < 1   ? 1
                            : sc.ranks_per_node > p ? p
                                                    : sc.ranks_per_node;
        /* The back-end: the one named, or the model's fastest. */
        int all = strcmp(cli->exchange, "all") == 0;
        int autopick = all || strcmp(cli->exchange, "auto") == 0;
        sc.exchange_auto = autopick; /* with levels, every level's as the sort's auto */
        struct exchanges ex = {.n = 0};
        int err;
        for (const struct exchange_ops *const *b = list; *b != NULL && ex.n < 64; b++, ex.n++) {
            ex.each[ex.n].seconds = NAN;
            if (autopick && sc.levels == 0 &&
                (err = sim_sort_exchange(&sc, m, *b, &ex.each[ex.n])) != UTIL_OK) {
                return err;
            }
        }
        if (autopick) {
            double best = INFINITY;
            for (int i = 0; i < ex.n; i++) {
                if (!isnan(ex.each[i].seconds) && ex.each[i].seconds < best) {
                    best = ex.each[i].seconds;
                    sc.backend = list[i];
                }
            }
        } else {
            sc.backend = exchange_find(cli->exchange);
        }
        int external = 0;
        if ((err = model_external(cli, &sc, m, &external)) != UTIL_OK || external) {
            return err; /* one external prediction: the balance is not its */
        }
        struct sim_sort_result res;
        if ((err = sim_sort_model(&sc, m, &res)) != UTIL_OK) {
            return err;
        }
        if (cli->csv) {
            print_csv(&sc, &res, &ex, all);
        } else {
            print_table(&sc, &res, &ex, all, autopick);
        }
    }
    return UTIL_OK;
}

/* The rules that concern several options: the cases, the names --balance and --exchange take,
 * and the largest file. UTIL_EUSAGE after one line, else 0. */
static int check_cli(const struct cli *cli)
{
    if (cli->ranks.n == 0 || cli->sizes.n == 0) {
        return util_error("--sort needs --ranks and --n-per-rank (see sortex-sched --sort --help)");
    }
    if (cli->external == SORTEX_EXTERNAL_ALWAYS && cli->mem_limit == 0) {
        return util_error("--external always needs --mem-limit, the memory a rank may use");
    }
    if (cli->pattern && cli->dist) {
        return util_error("--pattern and --dist exclude each other (%s, %s)", cli->pattern,
                          cli->dist);
    }
    if (strcmp(cli->balance, "all") != 0 && util_name_find(sort_balance_names, cli->balance) < 0) {
        char names[128] = "";
        for (const struct util_name *b = sort_balance_names; b->name != NULL; b++) {
            size_t used = strlen(names);
            (void)snprintf(names + used, sizeof(names) - used, "%s, ", b->name);
        }
        names[strlen(names) - 2] = '\0';
        return util_error("--balance must be %s or all (%s)", names, cli->balance);
    }
    if (strcmp(cli->exchange, "auto") != 0 && strcmp(cli->exchange, "all") != 0 &&
        exchange_find(cli->exchange) == NULL) {
        char names[512];
        exchange_names(names, sizeof(names));
        return util_error("unknown back-end (%s); valid: auto, all, %s", cli->exchange, names);
    }
    /* Every case is a sort there can be: P N elements of E bytes make a file of at most
     * DATAGEN_MAX_BYTES (2^63) bytes, which also keeps every product of the model in 64 bits. */
    for (int i = 0; i < cli->ranks.n; i++) {
        for (int k = 0; k < cli->sizes.n; k++) {
            uint64_t n, bytes, p = cli->ranks.v[i], per = cli->sizes.v[k];
            if (__builtin_mul_overflow(p, per, &n) || n > DATAGEN_MAX_N ||
                __builtin_mul_overflow(n, cli->elem, &bytes) || bytes > DATAGEN_MAX_BYTES) {
                return util_error("a sort of %llu ranks x %llu elements of %llu bytes is beyond "
                                  "the largest file, 2^60 elements and 2^63 bytes (--ranks, "
                                  "--n-per-rank, --record-size)",
                                  (unsigned long long)p, (unsigned long long)per,
                                  (unsigned long long)cli->elem);
            }
        }
    }
    return UTIL_OK;
}

int sim_sort_main(int argc, char **argv)
{
    struct cli cli = {.exchange = "auto",
                      .balance = "auto",
                      .epsilon = 0.1,
                      .elem = 8,
                      .threads = 1,
                      .alpha = NAN,
                      .beta = NAN};
    struct sim_machine m;
    sim_machine_default(&m);
    int rc = util_cli_parse(&command_line, argc, argv, &cli, false);
    if (rc != UTIL_OK) {
        return rc == UTIL_CLI_DONE ? 0 : 2;
    }
    if (cli.levels_given && cli.levels == 0) {
        cli.levels = SIM_LEVELS_AUTO; /* 0 is the one-level model, --levels auto every L */
    }
    if (sim_machine_load(&m, cli.machine) != UTIL_OK) {
        return 2;
    }
    if (cli.calibrate) {
        if (sim_machine_calibrate(&m, cli.calibrate) != UTIL_OK) {
            return 3;
        }
        if (!isnan(cli.alpha)) {
            m.alpha = cli.alpha;
        }
        if (!isnan(cli.beta)) {
            m.beta = cli.beta;
        }
        sim_machine_print(stdout, &m);
        return 0;
    }
    m.alpha = isnan(cli.alpha) ? m.alpha : cli.alpha;
    m.beta = isnan(cli.beta) ? m.beta : cli.beta;
    if (check_cli(&cli) != UTIL_OK) {
        return 2;
    }
    /* The count matrix's pattern: equal blocks for uniform keys, the sort's counts else. */
    char text[128];
    if (cli.dist && strcmp(cli.dist, "uniform") != 0) {
        (void)snprintf(text, sizeof(text), "sort:%s", cli.dist);
    } else {
        (void)snprintf(text, sizeof(text), "%s", cli.pattern ? cli.pattern : "bucket");
    }
    struct sim_spec spec;
    memset(&spec, 0, sizeof(spec));
    if (sim_spec_parse(text, &spec) != UTIL_OK) {
        return 2;
    }
    if (cli.csv) {
        printf("P,n_per_rank,balance,exchange,phase,seconds,rank_bytes,net_bytes,note\n");
    } else {
        sim_machine_head(stdout, &m, (int)cli.ranks.v[cli.ranks.n - 1],
                         cli.rpn ? cli.rpn : m.cores / cli.threads);
    }
    for (int i = 0; i < cli.ranks.n; i++) {
        for (int k = 0; k < cli.sizes.n; k++) {
            int err = run_case(&cli, &m, (int)cli.ranks.v[i], cli.sizes.v[k], &spec);
            if (err != UTIL_OK) {
                return err == UTIL_EUSAGE ? 2 : 3;
            }
        }
    }
    return 0;
}

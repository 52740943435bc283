/*
 * sim/sort_cli.c: sortex-sched --sort, the command line of the whole-sort model
 * (sim/sortmodel.h): one table (or CSV rows) of predicted phases per case.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datagen/datagen.h"
#include "sim/sortmodel.h"
#include "util/alloc.h"
#include "util/format.h"
#include "util/util.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sortex-sched --sort --ranks P[,P...] --n-per-rank N[,N...] [options]\n"
            "\n"
            "Predicts every phase of a sortex run on P ranks of N elements each, from machine\n"
            "constants and the sort's own rules, without data: time on the slowest rank, the\n"
            "most memory one rank holds, and the bytes one rank sends.\n"
            "\n"
            "options (default in brackets):\n"
            "  -P, --ranks P[,P...]       ranks (1..1048576)\n"
            "  -n, --n-per-rank N[,N...]  elements each rank reads; K M G suffixes; every\n"
            "                             sort at most 2^60 elements and 2^63 bytes, the\n"
            "                             largest file\n"
            "  -p, --pattern NAME         the exchange's count matrix (sortex-xbench --patterns\n"
            "                             help) [bucket: equal blocks, as uniform keys give]\n"
            "  -d, --dist NAME            the input distribution instead: uniform is equal\n"
            "                             blocks; others are the sort's counts for them\n"
            "                             (sort:NAME, P <= 4096)\n"
            "  -x, --exchange NAME        the back-end priced in the total: a name, 'auto' (the\n"
            "                             fastest of the model) or 'all' (also a row each) [auto]\n"
            "  -b, --balance MODE         auto, eps, exact, sample, or all (a table each of the\n"
            "                             last three) [auto: as the sort resolves it]\n"
            "  -e, --epsilon E            as sortex --epsilon [0.1]\n"
            "  -s, --oversample S         as sortex --oversample, for --balance sample [default]\n"
            "  -t, --threads T            threads per rank [1]\n"
            "      --levels L             model 1..4 levels as sortex runs them, or auto (each)\n"
            "      --ranks-per-node R     ranks sharing a node's cores [cores / threads]\n"
            "      --record-size E        bytes an element takes, 1..%d [8]\n"
            "      --machine FILE         machine constants ('name value' lines, as --calibrate\n"
            "                             prints them) [a project machine's]\n"
            "      --alpha S, --beta S    the network's start-up and per-byte seconds\n"
            "      --calibrate[=DIR]      measure this machine's compute and file constants\n"
            "                             (scratch file in DIR [/tmp]) and print them\n"
            "      --csv                  CSV rows: P,n_per_rank,balance,exchange,phase,seconds,\n"
            "                             rank_bytes,net_bytes,note\n"
            "  -h, --help                 this help\n"
            "\n"
            "exit codes: 0 printed; 2 usage error; 3 out of memory or the calibration failed\n",
            (int)UTIL_RECORD_MAX);
}

enum { OPT_RPN = 256, OPT_RECORD, OPT_MACHINE, OPT_ALPHA, OPT_BETA, OPT_CALIBRATE, OPT_CSV,
       OPT_LEVELS };

/* A comma separated list of counts in [lo, hi]. */
static int parse_list(const char *text, const char *what, uint64_t lo, uint64_t hi,
                      uint64_t *out, int cap, int *n)
{
    char buf[512], *items[32];
    if (util_split_list(text, what, buf, sizeof(buf), items, cap < 32 ? cap : 32, n) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    for (int i = 0; i < *n; i++) {
        if (util_parse_count(items[i], &out[i]) != UTIL_OK || out[i] < lo || out[i] > hi) {
            return util_error("%s must be from %llu to %llu (%s)", what, (unsigned long long)lo,
                              (unsigned long long)hi, items[i]);
        }
    }
    return UTIL_OK;
}

struct cli {
    uint64_t ranks[32], sizes[32];
    int nranks, nsizes;
    const char *pattern, *dist, *exchange, *balance, *machine;
    double epsilon, alpha, beta;
    uint64_t oversample, elem;
    int threads, rpn, csv, levels;
};

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

static const char *const balance_names[SORTEX_BALANCE_COUNT] = {"auto", "eps", "exact", "sample"};

/* Models one case for every balance asked for, and prints it. */
static int run_case(const struct cli *cli, const struct sim_machine *m, int p, uint64_t per,
                    const struct sim_spec *spec)
{
    const struct exchange_ops *const *list = exchange_list();
    for (int bal = 0; bal < SORTEX_BALANCE_COUNT; bal++) {
        if (strcmp(cli->balance, "all") == 0 ? bal == SORTEX_BALANCE_AUTO
                                              : strcmp(cli->balance, balance_names[bal]) != 0) {
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
        sc.ranks_per_node = sc.ranks_per_node < 1 ? 1 : sc.ranks_per_node > p ? p : sc.ranks_per_node;
        /* The back-end: the one named, or the model's fastest. */
        int all = strcmp(cli->exchange, "all") == 0;
        int autopick = all || strcmp(cli->exchange, "auto") == 0;
        sc.exchange_auto = autopick;
        struct sim_phase each[64];
        int nb = 0, err;
        for (const struct exchange_ops *const *b = list; *b != NULL && nb < 64; b++, nb++) {
            each[nb].seconds = NAN;
            if (autopick && sc.levels == 0 &&
                (err = sim_sort_exchange(&sc, m, *b, &each[nb])) != UTIL_OK) {
                return err;
            }
        }
        if (autopick) {
            double best = INFINITY;
            for (int i = 0; i < nb; i++) {
                if (!isnan(each[i].seconds) && each[i].seconds < best) {
                    best = each[i].seconds;
                    sc.backend = list[i];
                }
            }
        } else {
            sc.backend = exchange_find(cli->exchange);
        }
        struct sim_sort_result res;
        if ((err = sim_sort_model(&sc, m, &res)) != UTIL_OK) {
            return err;
        }
        if (cli->csv) {
            for (int r = 0; r < SIM_ROW_COUNT; r++) {
                const struct sim_phase *ph = &res.phase[r];
                printf("%d,%llu,%s,%s,%s,%.9g,%llu,%llu,\"%s\"\n", p, (unsigned long long)per,
                       balance_names[res.balance], sc.backend->name, sim_row_name((enum sim_row)r),
                       ph->seconds, (unsigned long long)ph->rank_bytes,
                       (unsigned long long)ph->net_bytes, ph->note);
            }
            sim_level_print(stdout, &res, 1, p, per, balance_names[res.balance]);
            for (int i = 0; all && i < nb; i++) {
                printf("%d,%llu,%s,%s,exchange:%s,%.9g,%llu,%llu,\"%s\"\n", p,
                       (unsigned long long)per, balance_names[res.balance], list[i]->name,
                       list[i]->name,
                       each[i].seconds, (unsigned long long)res.phase[SIM_ROW_EXCHANGE].rank_bytes,
                       (unsigned long long)each[i].net_bytes, each[i].note);
            }
            continue;
        }
        printf("P = %d, %llu elements of %llu bytes a rank, %d thread(s), %d rank(s) a node; "
               "--balance %s; exchange %s%s\n",
               p, (unsigned long long)per, (unsigned long long)cli->elem, cli->threads,
               sc.ranks_per_node, balance_names[res.balance],
               sc.levels && autopick ? "auto" : sc.backend->name,
               !autopick ? "" : sc.levels ? " (each level's, as the sort prices it)"
                                          : " (the model's fastest)");
        printf("  %-11s %12s %12s %12s  %s\n", "phase", "time", "rank memory", "sent", "on");
        for (int r = 0; r < SIM_ROW_COUNT; r++) {
            const struct sim_phase *ph = &res.phase[r];
            printf("  %-11s ", sim_row_name((enum sim_row)r));
            print_secs(stdout, ph->seconds);
            printf(" ");
            print_bytes(stdout, (double)ph->rank_bytes);
            printf(" ");
            print_bytes(stdout, (double)ph->net_bytes);
            printf("  %s\n", ph->note);
        }
        sim_level_print(stdout, &res, 0, p, per, balance_names[res.balance]);
        if (all) {
            printf("  exchange by back-end:\n");
            for (int i = 0; i < nb; i++) {
                printf("    %-11s ", list[i]->name);
                print_secs(stdout, each[i].seconds);
                printf("  %s\n", each[i].note);
            }
        }
        printf("\n");
    }
    return UTIL_OK;
}

int sim_sort_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"sort", no_argument, NULL, 'S'},
        {"ranks", required_argument, NULL, 'P'},
        {"n-per-rank", required_argument, NULL, 'n'},
        {"pattern", required_argument, NULL, 'p'},
        {"dist", required_argument, NULL, 'd'},
        {"exchange", required_argument, NULL, 'x'},
        {"balance", required_argument, NULL, 'b'},
        {"epsilon", required_argument, NULL, 'e'},
        {"oversample", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'},
        {"ranks-per-node", required_argument, NULL, OPT_RPN},
        {"record-size", required_argument, NULL, OPT_RECORD},
        {"machine", required_argument, NULL, OPT_MACHINE},
        {"alpha", required_argument, NULL, OPT_ALPHA},
        {"beta", required_argument, NULL, OPT_BETA},
        {"calibrate", optional_argument, NULL, OPT_CALIBRATE},
        {"csv", no_argument, NULL, OPT_CSV},
        {"levels", required_argument, NULL, OPT_LEVELS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct cli cli = {.exchange = "auto", .balance = "auto", .epsilon = 0.1, .elem = 8,
                      .threads = 1, .alpha = NAN, .beta = NAN};
    struct sim_machine m;
    const char *calibrate = NULL;
    uint64_t v;
    long lv;
    int c;
    sim_machine_default(&m);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":SP:n:p:d:x:b:e:s:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'S':
            break;
        case 'P':
            if (parse_list(optarg, "--ranks", 1, 1u << 20, cli.ranks, 32, &cli.nranks)) {
                return 2;
            }
            break;
        case 'n':
            if (parse_list(optarg, "--n-per-rank", 1, (uint64_t)1 << 50, cli.sizes, 32,
                           &cli.nsizes)) {
                return 2;
            }
            break;
        case 'p':
            cli.pattern = optarg;
            break;
        case 'd':
            cli.dist = optarg;
            break;
        case 'x':
            cli.exchange = optarg;
            break;
        case 'b':
            cli.balance = optarg;
            break;
        case 'e':
            if (util_parse_double(optarg, 0.001, 10, &cli.epsilon) != UTIL_OK) {
                util_error("--epsilon must be a number from 0.001 to 10 (%s)", optarg);
                return 2;
            }
            break;
        case 's':
            if (util_parse_count(optarg, &cli.oversample) != UTIL_OK || cli.oversample == 0) {
                util_error("--oversample must be a positive count (%s)", optarg);
                return 2;
            }
            break;
        case 't':
            if (util_parse_int(optarg, 1, 4096, &lv) != UTIL_OK) {
                util_error("--threads must be an integer from 1 to 4096 (%s)", optarg);
                return 2;
            }
            cli.threads = (int)lv;
            break;
        case OPT_RPN:
            if (util_parse_int(optarg, 1, 1 << 20, &lv) != UTIL_OK) {
                util_error("--ranks-per-node must be a positive integer (%s)", optarg);
                return 2;
            }
            cli.rpn = (int)lv;
            break;
        case OPT_RECORD:
            if (util_parse_count(optarg, &v) != UTIL_OK || v == 0 || v > UTIL_RECORD_MAX) {
                util_error("--record-size must be from 1 to %d bytes (%s)", (int)UTIL_RECORD_MAX,
                           optarg);
                return 2;
            }
            cli.elem = v;
            break;
        case OPT_MACHINE:
            cli.machine = optarg;
            break;
        case OPT_ALPHA:
        case OPT_BETA:
            if (util_parse_double(optarg, 0, 1, c == OPT_ALPHA ? &cli.alpha : &cli.beta) !=
                UTIL_OK) {
                util_error("--%s must be seconds from 0 to 1 (%s)",
                           c == OPT_ALPHA ? "alpha" : "beta", optarg);
                return 2;
            }
            break;
        case OPT_CALIBRATE:
            calibrate = optarg ? optarg : "/tmp";
            break;
        case OPT_CSV:
            cli.csv = 1;
            break;
        case OPT_LEVELS:
            if (strcmp(optarg, "auto") == 0) {
                cli.levels = SIM_LEVELS_AUTO;
            } else if (util_parse_int(optarg, 1, SORTEX_LEVELS_MAX, &lv) == UTIL_OK) {
                cli.levels = (int)lv;
            } else {
                util_error("--levels must be auto or from 1 to %d (%s)", SORTEX_LEVELS_MAX, optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            util_error("option needs a value (%s)", argv[optind - 1]);
            return 2;
        default:
            util_error("unknown option (%s); see sortex-sched --sort --help", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        util_error("unexpected argument (%s)", argv[optind]);
        return 2;
    }
    if (cli.machine && sim_machine_read(&m, cli.machine) != UTIL_OK) {
        return 2;
    }
    if (calibrate) {
        if (sim_machine_calibrate(&m, calibrate) != UTIL_OK) {
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
    if (cli.nranks == 0 || cli.nsizes == 0) {
        util_error("--sort needs --ranks and --n-per-rank (see sortex-sched --sort --help)");
        return 2;
    }
    if (cli.pattern && cli.dist) {
        util_error("--pattern and --dist exclude each other (%s, %s)", cli.pattern, cli.dist);
        return 2;
    }
    int bal_ok = strcmp(cli.balance, "all") == 0;
    for (int b = 0; b < SORTEX_BALANCE_COUNT; b++) {
        bal_ok |= strcmp(cli.balance, balance_names[b]) == 0;
    }
    if (!bal_ok) {
        util_error("--balance must be auto, eps, exact, sample or all (%s)", cli.balance);
        return 2;
    }
    if (strcmp(cli.exchange, "auto") != 0 && strcmp(cli.exchange, "all") != 0 &&
        exchange_find(cli.exchange) == NULL) {
        char names[512];
        exchange_names(names, sizeof(names));
        util_error("unknown back-end (%s); valid: auto, all, %s", cli.exchange, names);
        return 2;
    }
    /* Every case is a sort there can be: P N elements of E bytes make a file of at most
     * DATAGEN_MAX_BYTES (2^63) bytes, which also keeps every product of the model in 64 bits. */
    for (int i = 0; i < cli.nranks; i++) {
        for (int k = 0; k < cli.nsizes; k++) {
            uint64_t n, bytes;
            if (__builtin_mul_overflow(cli.ranks[i], cli.sizes[k], &n) || n > DATAGEN_MAX_N ||
                __builtin_mul_overflow(n, cli.elem, &bytes) || bytes > DATAGEN_MAX_BYTES) {
                util_error("a sort of %llu ranks x %llu elements of %llu bytes is beyond the "
                           "largest file, 2^60 elements and 2^63 bytes (--ranks, --n-per-rank, "
                           "--record-size)",
                           (unsigned long long)cli.ranks[i], (unsigned long long)cli.sizes[k],
                           (unsigned long long)cli.elem);
                return 2;
            }
        }
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
    }
    for (int i = 0; i < cli.nranks; i++) {
        for (int k = 0; k < cli.nsizes; k++) {
            int err = run_case(&cli, &m, (int)cli.ranks[i], cli.sizes[k], &spec);
            if (err != UTIL_OK) {
                return err == UTIL_EUSAGE ? 2 : 3;
            }
        }
    }
    return 0;
}

/*
 * datagen/main.c: the sortex-gen command line. Parses options into struct datagen_params,
 * checks them and calls datagen_write(); turns library error codes into exit codes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datagen/datagen.h"
#include "util/format.h"
#include "util/temp.h"
#include "util/util.h"

/* Files at least this large show progress by themselves when stderr is a terminal. */
#define AUTO_PROGRESS_BYTES ((uint64_t)64 << 20)
#define MAX_THREADS         4096

/* Long-only options get values above the character range. */
enum {
    OPT_SEED = 256,
    OPT_RANKS,
    OPT_PROGRESS,
    OPT_LIST,
    OPT_PARAM, /* OPT_PARAM + enum datagen_param: the distribution parameters */
};

static const struct option long_options[] = {
    {"dist", required_argument, NULL, 'd'},
    {"n", required_argument, NULL, 'n'},
    {"output", required_argument, NULL, 'o'},
    {"seed", required_argument, NULL, OPT_SEED},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"threads", required_argument, NULL, 't'},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    UTIL_FORMAT_LONG_OPTIONS,
    {"groups", required_argument, NULL, OPT_PARAM + DATAGEN_P_GROUPS},
    {"blocks", required_argument, NULL, OPT_PARAM + DATAGEN_P_BLOCKS},
    {"samples", required_argument, NULL, OPT_PARAM + DATAGEN_P_SAMPLES},
    {"fraction", required_argument, NULL, OPT_PARAM + DATAGEN_P_FRACTION},
    {"unique", required_argument, NULL, OPT_PARAM + DATAGEN_P_UNIQUE},
    {"exponent", required_argument, NULL, OPT_PARAM + DATAGEN_P_EXPONENT},
    {"domain", required_argument, NULL, OPT_PARAM + DATAGEN_P_DOMAIN},
    {"prefix", required_argument, NULL, OPT_PARAM + DATAGEN_P_PREFIX},
    {"max-key", required_argument, NULL, OPT_PARAM + DATAGEN_P_MAX_KEY},
    {"start", required_argument, NULL, OPT_PARAM + DATAGEN_P_START},
    {"list", no_argument, NULL, OPT_LIST},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: %s --dist NAME --n COUNT [options] -o FILE\n"
            "       %s --list | --help | --version\n"
            "\n"
            "Writes COUNT records (no header) drawn from a distribution: raw little-endian\n"
            "64-bit keys by default, or records of a byte-key format (--format gensort, or a\n"
            "layout --record-size R --key-offset O --key-size K) whose keys follow the\n"
            "distribution and whose payloads differ between records. The file is P rank\n"
            "slices back to back: slice i holds records floor(i n/P) to floor((i+1) n/P) - 1,\n"
            "the part rank i of a P-rank sort reads. The gensort family writes gensort 1.5's\n"
            "records (the Sort Benchmark's generator by Chris Nyberg) byte for byte and\n"
            "implies --format gensort. The same options give the same bytes, whatever\n"
            "--threads.\n"
            "\n"
            "options:\n"
            "  -d, --dist NAME     distribution (required); --list shows them all\n"
            "  -n, --n COUNT       number of records, at least 1 (required); K, M, G, T are\n"
            "                      powers of ten (10M = 10^7), Ki, Mi, Gi, Ti powers of two\n"
            "                      (1Mi = 2^20), 1e8 style exponents work too\n"
            "  -o, --output FILE   output file (required); written under a temporary name\n"
            "                      and renamed at the end, never left half-written\n"
            "      --seed S        seed, a decimal 64-bit number (default 0)\n"
            "      --ranks P       rank slices the recipes are defined for (default 4)\n"
            "  -t, --threads T     OpenMP threads (default: OMP_NUM_THREADS or all cores)\n"
            "      --progress      show progress on stderr (default: only when stderr is a\n"
            "                      terminal and the file is at least 64 MiB)\n",
            util_progname(), util_progname());
    util_format_usage(out, 22);
    fprintf(out,
            "                      (numbers are generated in u64 order and mapped so that a\n"
            "                      sort as that type sees the same order; datagen/README.md\n"
            "                      defines the records of byte-key formats)\n"
            "distribution parameters (rejected by distributions that do not use them):\n"
            "      --groups G      ggroup: ranks per group, 1..P (default 2)\n"
            "      --blocks R      rd: blocks per rank and value range 0..R-1 (default 32)\n"
            "      --samples S     wr: samples per rank of the attacked regular sampling,\n"
            "                      1..n/P (default P)\n"
            "      --fraction F    nearly: fraction of keys moved by swaps, 0..1 (default 0.01)\n"
            "      --unique K      few: number of distinct values (default 16)\n"
            "      --exponent S    zipf: exponent, > 0 (default 1)\n"
            "      --domain D      zipf: number of values, up to 2^53 (default 2^20)\n"
            "      --prefix B      radix: shared top bytes, 1..7 (default 4)\n"
            "      --max-key M     npb: MAX_KEY (default: 2^11, 2^16, 2^19, 2^21, 2^23, 2^27\n"
            "                      for n = 2^16, 2^20, 2^23, 2^25, 2^27, 2^31, else 2^19)\n"
            "      --start N       the gensort family: the first record number, gensort's -b,\n"
            "                      0..2^64-1 (default 0)\n"
            "  -l, --list          list the distributions with their parameters and recipes\n"
            "  -h, --help          this help\n"
            "  -V, --version       version, commit, MPI library and allocator\n"
            "\n"
            "exit codes: 0 written; 2 usage error (bad option or value, missing or unwritable\n"
            "output directory; nothing is written); 3 runtime failure (a full disk, a write\n"
            "error, out of memory; the temporary file is removed)\n");
}

/* The default of one parameter as --list shows it. */
static void param_default(enum datagen_param param, const struct datagen_params *d, char *buf,
                          size_t cap)
{
    switch (param) {
    case DATAGEN_P_GROUPS:
        (void)snprintf(buf, cap, "2"); /* datagen_params_init()'s 0: 2, or P on one rank */
        break;
    case DATAGEN_P_BLOCKS:
        (void)snprintf(buf, cap, "%llu", (unsigned long long)d->blocks);
        break;
    case DATAGEN_P_SAMPLES:
        (void)snprintf(buf, cap, "P");
        break;
    case DATAGEN_P_FRACTION:
        (void)snprintf(buf, cap, "%g", d->fraction);
        break;
    case DATAGEN_P_UNIQUE:
        (void)snprintf(buf, cap, "%llu", (unsigned long long)d->unique);
        break;
    case DATAGEN_P_EXPONENT:
        (void)snprintf(buf, cap, "%g", d->exponent);
        break;
    case DATAGEN_P_DOMAIN:
        (void)snprintf(buf, cap, "%llu", (unsigned long long)d->domain);
        break;
    case DATAGEN_P_PREFIX:
        (void)snprintf(buf, cap, "%llu", (unsigned long long)d->prefix);
        break;
    case DATAGEN_P_MAX_KEY:
        (void)snprintf(buf, cap, "class");
        break;
    case DATAGEN_P_START:
        (void)snprintf(buf, cap, "%llu", (unsigned long long)d->start);
        break;
    default:
        (void)snprintf(buf, cap, "?");
        break;
    }
}

/* The parameters of @dist with their defaults, "groups=2,..." or "-". */
static void list_params(const struct datagen_dist *dist, char *params, size_t cap)
{
    struct datagen_params d;
    datagen_params_init(&d);
    size_t used = 0;
    (void)snprintf(params, cap, "-");
    for (int k = 0; k < DATAGEN_P_COUNT; k++) {
        if ((dist->params & DATAGEN_PARAM_BIT(k)) == 0) {
            continue;
        }
        char def[32];
        param_default((enum datagen_param)k, &d, def, sizeof(def));
        int w = snprintf(params + used, cap - used, "%s%s=%s", used ? "," : "",
                         datagen_param_name((enum datagen_param)k), def);
        used += w > 0 ? (size_t)w : 0;
        used = used < cap ? used : cap - 1;
    }
}

/*
 * --list: the key distributions, one line each (name, seeded, parameters=defaults, recipe),
 * then the notes, then the distributions that make records of their own format in a second
 * table (name, format, parameters, recipe): a script reading the first table gets the
 * distributions any format can hold.
 */
static void list(FILE *out)
{
    char params[128];
    fprintf(out, "%-10s %-5s %-26s %s\n", "NAME", "SEED", "PARAMETERS", "RECIPE");
    for (const struct datagen_dist *const *it = datagen_list(); *it != NULL; it++) {
        if ((*it)->records != NULL) {
            continue;
        }
        list_params(*it, params, sizeof(params));
        fprintf(out, "%-10s %-5s %-26s %s\n", (*it)->name, (*it)->seeded ? "yes" : "no", params,
                (*it)->summary);
    }
    fprintf(out,
            "\n"
            "P = --ranks; rank i's slice holds m = floor((i+1)n/P) - floor(i n/P) keys. Any count\n"
            "c split into q parts gives part k = [floor(k c/q), floor((k+1) c/q)); floor(P/2)\n"
            "stands for P/2. U(b) is uniform in value bucket b = [floor(b 2^64/P),\n"
            "floor((b+1) 2^64/P)). Any of these writes any --format: a byte-key format gets\n"
            "one record per key. datagen/README.md defines every recipe exactly.\n"
            "\n"
            "Records of gensort 1.5 (the Sort Benchmark's generator, by Chris Nyberg), byte for\n"
            "byte; they imply --format gensort and ignore --seed and --ranks:\n"
            "\n");
    fprintf(out, "%-18s %-8s %-10s %s\n", "NAME", "FORMAT", "PARAMETERS", "RECIPE");
    for (const struct datagen_dist *const *it = datagen_list(); *it != NULL; it++) {
        if ((*it)->records == NULL) {
            continue;
        }
        list_params(*it, params, sizeof(params));
        fprintf(out, "%-18s %-8s %-10s %s\n", (*it)->name, (*it)->format, params, (*it)->summary);
    }
}

/* A plain decimal uint64 (the seed): digits only, no sign, no overflow. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9') {
        return UTIL_EUSAGE;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || *end != '\0') {
        return UTIL_EUSAGE;
    }
    *out = (uint64_t)v;
    return UTIL_OK;
}

/* A count option: util_parse_count() syntax, at least @least. */
static int parse_count_opt(const char *name, const char *s, uint64_t least, uint64_t *out)
{
    if (util_parse_count(s, out) != UTIL_OK) {
        return util_error("--%s needs a count such as 1000, 1e6, 10M or 1Mi (%s)", name, s);
    }
    if (*out < least) {
        return util_error("--%s must be at least %llu (%s)", name, (unsigned long long)least, s);
    }
    return UTIL_OK;
}

/* One distribution parameter from the command line into @p. */
static int parse_param(enum datagen_param param, const char *s, struct datagen_params *p)
{
    const char *name = datagen_param_name(param);
    switch (param) {
    case DATAGEN_P_GROUPS:
        return parse_count_opt(name, s, 1, &p->groups);
    case DATAGEN_P_BLOCKS:
        return parse_count_opt(name, s, 1, &p->blocks);
    case DATAGEN_P_SAMPLES:
        return parse_count_opt(name, s, 1, &p->samples);
    case DATAGEN_P_UNIQUE:
        return parse_count_opt(name, s, 1, &p->unique);
    case DATAGEN_P_DOMAIN:
        return parse_count_opt(name, s, 1, &p->domain);
    case DATAGEN_P_PREFIX:
        return parse_count_opt(name, s, 1, &p->prefix);
    case DATAGEN_P_MAX_KEY:
        return parse_count_opt(name, s, 1, &p->max_key);
    case DATAGEN_P_START:
        if (util_parse_count(s, &p->start) != UTIL_OK) {
            return util_error("--start needs a record number in 0..2^64-1 (%s)", s);
        }
        return UTIL_OK;
    case DATAGEN_P_FRACTION:
        if (util_parse_double(s, 0.0, 1.0, &p->fraction) != UTIL_OK) {
            return util_error("--fraction needs a number in [0, 1] (%s)", s);
        }
        return UTIL_OK;
    case DATAGEN_P_EXPONENT:
        if (util_parse_double(s, 1e-300, 64.0, &p->exponent) != UTIL_OK) {
            return util_error("--exponent needs a number in (0, 64] (%s)", s);
        }
        return UTIL_OK;
    default:
        return util_error("unknown parameter (%d)", (int)param);
    }
}

/* What the command line asked for besides the parameters. */
struct cli {
    const char *dist;
    const char *output;
    bool have_n;
    bool progress;
    long threads;
    unsigned given; /* DATAGEN_PARAM_BIT()s of the parameters on the command line */
    struct util_format_args format; /* --format, --record-size, --key-offset, --key-size */
};

/* Parses argv into @p and @cli. Returns 0, UTIL_EUSAGE (reported), or 1 when done (--help,
 * --list, --version). */
static int parse_args(int argc, char **argv, struct datagen_params *p, struct cli *cli)
{
    int c;
    opterr = 0; /* our own one-line messages */
    char opt[8]; /* an unknown short option, for the error line */
    while ((c = getopt_long(argc, argv, ":d:n:o:t:lhV", long_options, NULL)) != -1) {
        int rc = UTIL_OK;
        switch (c) {
        case 'd':
            cli->dist = optarg;
            break;
        case 'n':
            rc = util_parse_count(optarg, &p->n);
            if (rc != UTIL_OK) {
                rc = util_error("--n needs a count such as 1000, 1e6, 10M or 1Mi (%s)", optarg);
            }
            cli->have_n = true;
            break;
        case 'o':
            cli->output = optarg;
            break;
        case OPT_SEED:
            if (parse_u64(optarg, &p->seed) != UTIL_OK) {
                rc = util_error("--seed needs a decimal number in 0..2^64-1 (%s)", optarg);
            }
            break;
        case OPT_RANKS:
            rc = parse_count_opt("ranks", optarg, 1, &p->ranks);
            break;
        case 't':
            if (util_parse_int(optarg, 1, MAX_THREADS, &cli->threads) != UTIL_OK) {
                rc = util_error("--threads needs a number in 1..%d (%s)", MAX_THREADS, optarg);
            }
            break;
        case OPT_PROGRESS:
            cli->progress = true;
            break;
        case 'l':
        case OPT_LIST:
            list(stdout);
            return 1;
        case 'h':
            usage(stdout);
            return 1;
        case 'V':
            util_print_version(stdout);
            return 1;
        case ':':
            rc = util_error("option needs a value (%s)", argv[optind - 1]);
            break;
        case '?':
            rc = util_error("unknown option (%s)", util_bad_option(argv, opt, sizeof(opt)));
            break;
        default:
            if (util_format_is_option(c)) {
                rc = util_format_option(&cli->format, c, optarg);
            } else if (c >= OPT_PARAM && c < OPT_PARAM + DATAGEN_P_COUNT) {
                rc = parse_param((enum datagen_param)(c - OPT_PARAM), optarg, p);
                cli->given |= DATAGEN_PARAM_BIT(c - OPT_PARAM);
            } else {
                rc = util_error("unhandled option (%d)", c);
            }
            break;
        }
        if (rc != UTIL_OK) {
            return rc;
        }
    }
    if (optind < argc) {
        return util_error("unexpected argument (%s)", argv[optind]);
    }
    return UTIL_OK;
}

/* The checks that need the whole command line: required options, parameters that apply. */
static int check_cli(struct datagen_params *p, struct cli *cli)
{
    if (cli->dist == NULL) {
        return util_error("no distribution given (--dist NAME; --list shows them)");
    }
    p->dist = datagen_find(cli->dist);
    if (p->dist == NULL) {
        char names[512];
        datagen_names(names, sizeof(names));
        return util_error("unknown distribution (%s); choose one of: %s", cli->dist, names);
    }
    if (!cli->have_n) {
        return util_error("no key count given (--n COUNT)");
    }
    unsigned unused = cli->given & ~p->dist->params;
    for (int k = 0; k < DATAGEN_P_COUNT; k++) {
        if (unused & DATAGEN_PARAM_BIT(k)) {
            return util_error("--%s does not apply to this distribution (%s)",
                              datagen_param_name((enum datagen_param)k), p->dist->name);
        }
    }
    if (cli->output == NULL) {
        return util_error("no output file given (-o FILE)");
    }
    /* No format option: u64, or the format the distribution implies (datagen_format()). */
    if (util_format_resolve(&cli->format, NULL, &p->format) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    if (datagen_check(p) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    return util_check_output(cli->output);
}

int main(int argc, char **argv)
{
    struct datagen_params p;
    struct cli cli = {NULL, NULL, false, false, 0, 0, {0}};
    util_set_progname("sortex-gen");
    util_check_stdout_at_exit();
    datagen_params_init(&p);

    int rc = parse_args(argc, argv, &p, &cli);
    if (rc == 1) {
        return UTIL_EXIT_OK;
    }
    if (rc == UTIL_OK) {
        rc = check_cli(&p, &cli);
    }
    if (rc != UTIL_OK) {
        return util_exit_code(rc);
    }

    util_temp_signals();
    struct datagen_write_opts opts = {
        (int)cli.threads,
        cli.progress ||
            (isatty(STDERR_FILENO) && p.n * datagen_format(&p)->record_size >= AUTO_PROGRESS_BYTES),
    };
    rc = datagen_write(&p, cli.output, &opts);
    return util_exit_code(rc);
}

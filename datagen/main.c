/*
 * datagen/main.c: the sortex-gen command line. Parses options into struct datagen_params,
 * checks them and calls datagen_write(); turns library error codes into exit codes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datagen/datagen.h"
#include "util/cli.h"
#include "util/format.h"
#include "util/temp.h"
#include "util/util.h"

/* Files at least this large show progress by themselves when stderr is a terminal. */
#define AUTO_PROGRESS_BYTES ((uint64_t)64 << 20)

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

/* What the command line asks for. */
struct cli {
    struct datagen_params p;
    const char *dist;
    const char *output;
    int have_n;
    bool progress;
    long threads;
    unsigned given;                 /* DATAGEN_PARAM_BIT()s of the parameters on the command line */
    struct util_format_args format; /* --format, --record-size, --key-offset, --key-size */
};

/* --seed S: a plain decimal uint64, digits only, no sign, no suffix, no overflow. */
static int parse_seed(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    char *end = NULL;
    (void)quiet;
    errno = 0;
    unsigned long long v = *arg >= '0' && *arg <= '9' ? strtoull(arg, &end, 10) : 0;
    if (end == NULL || errno == ERANGE || *end != '\0') {
        return util_cli_error(opt, arg, "{opt} needs a decimal number in 0..2^64-1 ({arg})");
    }
    cli->p.seed = (uint64_t)v;
    return UTIL_OK;
}

/* A count option: util_parse_count() syntax, at least the row's min; the two mistakes have
 * lines of their own. */
static int count_at_least(const struct util_cli_opt *opt, const char *arg, uint64_t *out)
{
    if (util_parse_count(arg, out) != UTIL_OK) {
        return util_cli_error(opt, arg,
                              "{opt} needs a count such as 1000, 1e6, 10M or 1Mi ({arg})");
    }
    if (*out < opt->min) {
        return util_cli_error(opt, arg, "{opt} must be at least {min} ({arg})");
    }
    return UTIL_OK;
}

/* --ranks P. */
static int parse_ranks(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    return count_at_least(opt, arg, &((struct cli *)dest)->p.ranks);
}

/* One distribution parameter (the row's name is the parameter's) into the parameters. */
static int parse_param(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    struct datagen_params *p = &cli->p;
    int k = 0;
    (void)quiet;
    while (k < DATAGEN_P_COUNT && strcmp(datagen_param_name((enum datagen_param)k), opt->name)) {
        k++;
    }
    cli->given |= DATAGEN_PARAM_BIT(k);
    switch ((enum datagen_param)k) {
    case DATAGEN_P_GROUPS:
        return count_at_least(opt, arg, &p->groups);
    case DATAGEN_P_BLOCKS:
        return count_at_least(opt, arg, &p->blocks);
    case DATAGEN_P_SAMPLES:
        return count_at_least(opt, arg, &p->samples);
    case DATAGEN_P_UNIQUE:
        return count_at_least(opt, arg, &p->unique);
    case DATAGEN_P_DOMAIN:
        return count_at_least(opt, arg, &p->domain);
    case DATAGEN_P_PREFIX:
        return count_at_least(opt, arg, &p->prefix);
    case DATAGEN_P_MAX_KEY:
        return count_at_least(opt, arg, &p->max_key);
    case DATAGEN_P_START:
        return util_cli_get_count(opt, arg, &p->start);
    case DATAGEN_P_FRACTION:
        return util_cli_get_double(opt, arg, &p->fraction);
    case DATAGEN_P_EXPONENT:
        return util_cli_get_double(opt, arg, &p->exponent);
    default:
        return util_error("unknown parameter (%s)", opt->name);
    }
}

static void usage(FILE *out);

#define DEST(field)  UTIL_CLI_DEST(struct cli, field)
#define GIVEN(field) UTIL_CLI_GIVEN(struct cli, field)

/* A distribution parameter: its row. */
#define PARAM(pname, argname, ...)                                                                 \
    {                                                                                              \
        .name = pname, .arg = argname, .parse = parse_param, __VA_ARGS__                           \
    }

/* The options, in the order --help gives them. */
/* clang-format off */
static const struct util_cli_opt options[] = {
    {.name = "dist", .key = 'd', .arg = "NAME",
     .help = "distribution (required); --list shows them all", .parse = util_cli_str,
     DEST(dist)},
    /* Any count: whether a file may hold it is datagen_check()'s. */
    {.name = "n", .key = 'n', .arg = "COUNT",
     .help = "number of records, at least 1 (required); K, M, G, T are\n"
             "powers of ten (10M = 10^7), Ki, Mi, Gi, Ti powers of two\n"
             "(1Mi = 2^20), 1e8 style exponents work too",
     .parse = util_cli_count, DEST(p.n), .max = UINT64_MAX,
     .err = "{opt} needs a count such as 1000, 1e6, 10M or 1Mi ({arg})", GIVEN(have_n)},
    {.name = "output", .key = 'o', .arg = "FILE",
     .help = "output file (required); written under a temporary name\n"
             "and renamed at the end, never left half-written",
     .parse = util_cli_str, DEST(output)},
    {.name = "seed", .arg = "S", .def = "0",
     .help = "seed, a decimal 64-bit number (default {def})", .parse = parse_seed},
    {.name = "ranks", .arg = "P", .def = "4",
     .help = "rank slices the recipes are defined for (default {def})", .parse = parse_ranks,
     .min = 1},
    UTIL_CLI_THREADS(struct cli, threads, "T", .def = "OMP_NUM_THREADS or all cores",
                     .help = "OpenMP threads (default: {def})",
                     .err = "{opt} needs a number in {min}..{max} ({arg})"),
    {.name = "progress",
     .help = "show progress on stderr (default: only when stderr is a\n"
             "terminal and the file is at least 64 MiB)",
     .parse = util_cli_flag, DEST(progress)},
    UTIL_FORMAT_ROWS(struct cli, format),
    {.flags = UTIL_CLI_NOTE,
     .help = "(numbers are generated in u64 order and mapped so that a\n"
             "sort as that type sees the same order; datagen/README.md\n"
             "defines the records of byte-key formats)"},
    UTIL_CLI_TEXT("distribution parameters (rejected by distributions that do not use them):"),
    PARAM("groups", "G", .def = "2", .help = "ggroup: ranks per group, 1..P (default {def})",
          .min = 1),
    PARAM("blocks", "R", .def = "32",
          .help = "rd: blocks per rank and value range 0..R-1 (default {def})", .min = 1),
    PARAM("samples", "S", .def = "P",
          .help = "wr: samples per rank of the attacked regular sampling,\n1..n/P (default {def})",
          .min = 1),
    PARAM("fraction", "F", .def = "0.01",
          .help = "nearly: fraction of keys moved by swaps, 0..1 (default {def})", .fmin = 0.0,
          .fmax = 1.0, .err = "{opt} needs a number in [0, 1] ({arg})"),
    PARAM("unique", "K", .def = "16", .help = "few: number of distinct values (default {def})",
          .min = 1),
    PARAM("exponent", "S", .def = "1", .help = "zipf: exponent, > 0 (default {def})",
          .fmin = 1e-300, .fmax = 64.0, .err = "{opt} needs a number in (0, 64] ({arg})"),
    PARAM("domain", "D", .def = "2^20",
          .help = "zipf: number of values, up to 2^53 (default {def})", .min = 1),
    PARAM("prefix", "B", .def = "4", .help = "radix: shared top bytes, 1..7 (default {def})",
          .min = 1),
    PARAM("max-key", "M", .def = "2^11, 2^16, 2^19, 2^21, 2^23, 2^27\n"
                                "for n = 2^16, 2^20, 2^23, 2^25, 2^27, 2^31, else 2^19",
          .help = "npb: MAX_KEY (default: {def})", .min = 1),
    PARAM("start", "N", .def = "0",
          .help = "the gensort family: the first record number, gensort's -b,\n"
                  "0..2^64-1 (default {def})",
          .max = UINT64_MAX, .err = "{opt} needs a record number in 0..2^64-1 ({arg})"),
    {.name = "list", .key = 'l',
     .help = "list the distributions with their parameters and recipes", .parse = util_cli_print,
     .print = list},
    UTIL_CLI_HELP(usage, "this help"),
    UTIL_CLI_VERSION("version, commit, MPI library and allocator"),
    {0},
};
/* clang-format on */

#undef PARAM
#undef GIVEN
#undef DEST

static const struct util_cli command_line = {
    .opts = options,
    .col = 22,
    .unknown = "unknown option ({arg})",
    .unexpected = "unexpected argument ({arg})",
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
            "options:\n",
            util_progname(), util_progname());
    util_cli_help(out, &command_line);
    fprintf(out,
            "\n"
            "exit codes: 0 written; 2 usage error (bad option or value, missing or unwritable\n"
            "output directory; nothing is written); 3 runtime failure (a full disk, a write\n"
            "error, out of memory; the temporary file is removed)\n");
}

/* The checks that need the whole command line: required options, parameters that apply. */
static int check_cli(struct cli *cli)
{
    struct datagen_params *p = &cli->p;
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
    struct cli cli = {0};
    util_set_progname("sortex-gen");
    util_check_stdout_at_exit();
    datagen_params_init(&cli.p);
    util_format_args_init(&cli.format);

    int rc = util_cli_parse(&command_line, argc, argv, &cli, false);
    if (rc == UTIL_CLI_DONE) {
        return UTIL_EXIT_OK;
    }
    if (rc == UTIL_OK) {
        rc = check_cli(&cli);
    }
    if (rc != UTIL_OK) {
        return util_exit_code(rc);
    }

    util_temp_signals();
    struct datagen_write_opts opts = {
        (int)cli.threads,
        cli.progress || (isatty(STDERR_FILENO) &&
                         cli.p.n * datagen_format(&cli.p)->record_size >= AUTO_PROGRESS_BYTES),
    };
    rc = datagen_write(&cli.p, cli.output, &opts);
    return util_exit_code(rc);
}

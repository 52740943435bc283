/* verify/main.c: the sortex-verify command line (the checks live in verify/files.c). */
#include <stdlib.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cli.h"
#include "util/format.h"
#include "util/util.h"
#include "verify/verify.h"

int main(int argc, char **argv);

/* What the options say. */
struct cli {
    const char **inputs; /* --input, at most argc of them */
    size_t n_inputs;
    int parts, json;
    long threads;
    uint64_t block;
    struct util_format_args format; /* --format, --record-size, --key-offset, --key-size */
};

/* --input FILE, repeatable. */
static int parse_input(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    (void)opt;
    (void)quiet;
    cli->inputs[cli->n_inputs++] = arg;
    return UTIL_OK;
}

/* --threads N; -t is --threads in every sortex program: say so to who meant a key type. */
static int parse_threads(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct util_cli_opt o = *opt;
    if (util_format_find(arg) != NULL) {
        o.err = "{opt} needs a whole number from {min} to {max}; the format is --format ({arg})";
    }
    return util_cli_int(&o, arg, dest, quiet);
}

/* --block-size SIZE: a count in the row's range, and a multiple of 8 bytes. */
static int parse_block(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    struct cli *cli = dest;
    (void)quiet;
    if (util_cli_get_count(opt, arg, &cli->block) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    return cli->block % 8 == 0 ? UTIL_OK : util_cli_error(opt, arg, NULL);
}

static void usage(FILE *out);

#define DEST(field) UTIL_CLI_DEST(struct cli, field)

/* The options, in the order --help gives them. */
/* clang-format off */
static const struct util_cli_opt options[] = {
    {.name = "input", .key = 'i', .arg = "FILE", .def = "no comparison",
     .help = "original data to compare the multiset with; repeat it for\n"
             "an input split over several files (default: {def})",
     .parse = parse_input},
    {.name = "parts", .key = 'p', .def = "one file",
     .help = "SORTED is several files checked as one sequence in the\n"
             "given order, boundaries included (default: {def})",
     .parse = util_cli_flag, DEST(parts)},
    UTIL_FORMAT_ROWS(struct cli, format),
    {.name = "threads", .key = 't', .arg = "N", .def = "OMP_NUM_THREADS or every core",
     .help = "OpenMP threads (default: {def})", .parse = parse_threads, DEST(threads), .min = 1,
     .max = UTIL_CLI_THREADS_MAX, .err = "{opt} needs a whole number from {min} to {max} ({arg})"},
    {.name = "block-size", .key = 'b', .arg = "SIZE", .def = "512Ki",
     .help = "bytes read per block and thread, a multiple of 8; K, M, Ki,\n"
             "Mi suffixes (default: {def})",
     .parse = parse_block, .min = 1, .max = (uint64_t)1 << 30,
     .err = "{opt} needs a multiple of 8 bytes up to 1Gi ({arg})"},
    {.name = "json", .key = 'j', .help = "print one JSON object instead of text",
     .parse = util_cli_flag, DEST(json)},
    UTIL_CLI_HELP(usage, "print this help and exit"),
    UTIL_CLI_VERSION("print the version and exit"),
    {0},
};
/* clang-format on */

#undef DEST

/* The files are operands: SORTED, or several with --parts. */
static const struct util_cli command_line = {
    .opts = options,
    .col = 24,
    .unknown = "unknown option, see --help ({arg})",
};

/* Every option with its default, the checksum, and the exit codes. */
static void usage(FILE *out)
{
    fprintf(out,
            "usage: sortex-verify SORTED [--input ORIGINAL]... [options]\n"
            "       sortex-verify --parts SORTED1 SORTED2... [--input ORIGINAL]... [options]\n"
            "\n"
            "Checks that SORTED (raw little-endian 8-byte keys, no header) is non-decreasing and,\n"
            "with --input, that it holds the same keys as ORIGINAL: same count and the same\n"
            "order-independent checksum (wrapping sums of XXH3_64bits and of XXH64 of every key).\n"
            "Records of a byte-key format (--format gensort, or --record-size R --key-offset O\n"
            "--key-size K) are checked by key in memcmp order, hashed whole (key and payload),\n"
            "and reported first as valsort does (Records, Checksum: the sum of the zlib crc32 of\n"
            "every record, Duplicate keys, SUCCESS or ERROR), to compare with valsort and\n"
            "gensort -c (gensort/valsort 1.5 by Chris Nyberg, the Sort Benchmark's tools).\n"
            "\n"
            "options:\n");
    util_cli_help(out, &command_line);
    fprintf(out, "\n"
                 "exit status:\n"
                 "  0  valid: sorted (and, with --input, the same count and checksums)\n"
                 "  1  invalid: not sorted, or not the same multiset as the input\n"
                 "  2  usage error: bad option or layout, missing or unreadable file, size not a\n"
                 "     multiple of the record size\n"
                 "  3  runtime failure: a read error, a file that changed while it was read, the\n"
                 "     report not written (a full disk), out of memory\n");
}

/* The configuration the options and operands describe, or UTIL_EUSAGE after one line. */
static int configure(int argc, char **argv, struct cli *cli, struct verify_config *cfg)
{
    if (util_format_resolve(&cli->format, NULL, &cfg->format) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    cfg->sorted = (const char *const *)&argv[optind];
    cfg->n_sorted = (size_t)(argc - optind);
    if (cfg->n_sorted == 0) {
        return util_error("no sorted file given, see --help (%d arguments)", argc - 1);
    }
    if (cfg->n_sorted > 1 && !cli->parts) {
        return util_error("several sorted files need --parts (%zu files)", cfg->n_sorted);
    }
    cfg->inputs = cli->inputs;
    cfg->n_inputs = cli->n_inputs;
    cfg->threads = (int)cli->threads;
    cfg->block_bytes = (size_t)cli->block;
    return UTIL_OK;
}

int main(int argc, char **argv)
{
    struct cli cli = {0};
    struct verify_config cfg = {0};
    struct verify_result res;
    int rc = UTIL_EXIT_USAGE;

    util_set_progname("sortex-verify");
    util_check_stdout_at_exit();
    util_format_args_init(&cli.format);
    /* At most argc inputs: one array sized once, no reallocation. */
    cli.inputs = util_calloc((size_t)argc, sizeof(*cli.inputs));
    if (cli.inputs == NULL) {
        util_fail(UTIL_ENOMEM, "out of memory (%d arguments)", argc);
        return UTIL_EXIT_RUNTIME;
    }
    int err = util_cli_parse(&command_line, argc, argv, &cli, false);
    if (err == UTIL_CLI_DONE) {
        rc = UTIL_EXIT_OK;
        goto out;
    }
    if (err != UTIL_OK || configure(argc, argv, &cli, &cfg) != UTIL_OK) {
        goto out;
    }

    /* Verify and report. */
    err = verify_files(&cfg, &res);
    if (err != UTIL_OK) {
        rc = util_exit_code(err);
        goto out;
    }
    if (cli.json) {
        verify_print_json(stdout, &cfg, &res);
    } else {
        verify_print_text(stdout, &cfg, &res);
    }
    rc = res.valid ? UTIL_EXIT_OK : UTIL_EXIT_INVALID;

out:
    util_free(cli.inputs);
    return rc;
}

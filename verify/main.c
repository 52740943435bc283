/* verify/main.c: the sortex-verify command line (the checks live in verify/files.c). */
#include <getopt.h>
#include <stdlib.h>

#include "util/alloc.h"
#include "util/format.h"
#include "util/util.h"
#include "verify/verify.h"

int main(int argc, char **argv);

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
            "options:\n"
            "  -i, --input FILE      original data to compare the multiset with; repeat it for\n"
            "                        an input split over several files (default: no comparison)\n"
            "  -p, --parts           SORTED is several files checked as one sequence in the\n"
            "                        given order, boundaries included (default: one file)\n");
    util_format_usage(out, 24);
    fprintf(out,
            "  -t, --threads N       OpenMP threads (default: OMP_NUM_THREADS or every core)\n"
            "  -b, --block-size SIZE bytes read per block and thread, a multiple of 8; K, M, Ki,\n"
            "                        Mi suffixes (default: 512Ki)\n"
            "  -j, --json            print one JSON object instead of text\n"
            "  -h, --help            print this help and exit\n"
            "  -V, --version         print the version and exit\n"
            "\n"
            "exit status:\n"
            "  0  valid: sorted (and, with --input, the same count and checksums)\n"
            "  1  invalid: not sorted, or not the same multiset as the input\n"
            "  2  usage error: bad option or layout, missing or unreadable file, size not a\n"
            "     multiple of the record size\n"
            "  3  runtime failure: a read error, a file that changed while it was read, the\n"
            "     report not written (a full disk), out of memory\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"input", required_argument, NULL, 'i'},
        {"parts", no_argument, NULL, 'p'},
        UTIL_FORMAT_LONG_OPTIONS,
        {"threads", required_argument, NULL, 't'},
        {"block-size", required_argument, NULL, 'b'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    struct verify_config cfg = {0};
    struct verify_result res;
    bool parts = false, json = false;
    int rc = UTIL_EXIT_USAGE;
    long threads = 0;
    uint64_t block = 0;
    struct util_format_args format;

    util_set_progname("sortex-verify");
    util_check_stdout_at_exit();
    util_format_args_init(&format);
    /* At most argc inputs: one array sized once, no reallocation. */
    const char **inputs = util_calloc((size_t)argc, sizeof(*inputs));
    if (inputs == NULL) {
        util_fail(UTIL_ENOMEM, "out of memory (%d arguments)", argc);
        return UTIL_EXIT_RUNTIME;
    }

    /* Options. */
    int c;
    opterr = 0; /* our own one-line messages */
    char opt[8]; /* an unknown short option, for the error line */
    while ((c = getopt_long(argc, argv, ":i:pt:b:jhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            inputs[cfg.n_inputs++] = optarg;
            break;
        case 'p':
            parts = true;
            break;
        case 't':
            if (util_parse_int(optarg, 1, 4096, &threads) != UTIL_OK) {
                /* -t is --threads in every sortex program; say so to who meant a key type. */
                util_error("--threads needs a whole number from 1 to 4096%s (%s)",
                           util_format_find(optarg) ? "; the format is --format" : "", optarg);
                goto out;
            }
            break;
        case 'b':
            if (util_parse_count(optarg, &block) != UTIL_OK || block == 0 || block % 8 != 0 ||
                block > ((uint64_t)1 << 30)) {
                util_error("--block-size needs a multiple of 8 bytes up to 1Gi (%s)", optarg);
                goto out;
            }
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            usage(stdout);
            rc = UTIL_EXIT_OK;
            goto out;
        case 'V':
            util_print_version(stdout);
            rc = UTIL_EXIT_OK;
            goto out;
        case ':':
            util_error("option needs a value (%s)", argv[optind - 1]);
            goto out;
        default:
            if (util_format_is_option(c)) {
                if (util_format_option(&format, c, optarg) != UTIL_OK) {
                    goto out;
                }
                break;
            }
            util_error("unknown option, see --help (%s)", util_bad_option(argv, opt, sizeof(opt)));
            goto out;
        }
    }
    if (util_format_resolve(&format, NULL, &cfg.format) != UTIL_OK) {
        goto out;
    }

    /* Positional arguments: one sorted file, or several with --parts. */
    cfg.sorted = (const char *const *)&argv[optind];
    cfg.n_sorted = (size_t)(argc - optind);
    if (cfg.n_sorted == 0) {
        util_error("no sorted file given, see --help (%d arguments)", argc - 1);
        goto out;
    }
    if (cfg.n_sorted > 1 && !parts) {
        util_error("several sorted files need --parts (%zu files)", cfg.n_sorted);
        goto out;
    }
    cfg.inputs = inputs;
    cfg.threads = (int)threads;
    cfg.block_bytes = (size_t)block;

    /* Verify and report. */
    int err = verify_files(&cfg, &res);
    if (err != UTIL_OK) {
        rc = util_exit_code(err);
        goto out;
    }
    if (json) {
        verify_print_json(stdout, &cfg, &res);
    } else {
        verify_print_text(stdout, &cfg, &res);
    }
    rc = res.valid ? UTIL_EXIT_OK : UTIL_EXIT_INVALID;

out:
    util_free(inputs);
    return rc;
}

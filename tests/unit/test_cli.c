/*
 * tests/unit/test_cli.c: the command-line tables (util/cli.h) and the enums' name tables
 * (sort/names.h): every name table names every value of its enum once; the parser fills each
 * kind of row, stops at the first mistake with one line in the row's wording, answers --help
 * and the like first, and keeps operands for programs that take them; --help lays out the rows
 * at the column, defaults and ranges filled in. Prints one line per failure and exits non-zero
 * on any.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sort/names.h"
#include "util/cli.h"
#include "util/util.h"

int main(void);

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

/* ---- name tables --------------------------------------------------------------------------- */

/* @names names each of the values 0..@count-1 exactly once, and nothing else. */
static void check_enum(const char *what, const struct util_name *names, int count)
{
    int n = 0;
    for (const struct util_name *e = names; e->name != NULL; e++, n++) {
        CHECK(e->value >= 0 && e->value < count, "%s: %s has value %d", what, e->name, e->value);
        CHECK(util_name_find(names, e->name) == e->value, "%s: %s found twice", what, e->name);
        CHECK(strcmp(util_name_of(names, e->value), e->name) == 0, "%s: value %d named twice", what,
              e->value);
    }
    CHECK(n == count, "%s: %d names for %d values", what, n, count);
}

static void test_names(void)
{
    check_enum("balance", sort_balance_names, SORTEX_BALANCE_COUNT);
    check_enum("finish", sort_finish_names, SORTEX_FINISH_COUNT);
    check_enum("io", sort_io_names, SORTEX_IO_COUNT);
    check_enum("external", sort_external_names, SORTEX_EXTERNAL_COUNT);
    check_enum("levels", sort_levels_names, SORTEX_LEVELS_MAX + 1);
    char buf[64];
    util_names_join(sort_balance_names, buf, sizeof(buf));
    CHECK(strcmp(buf, "auto, eps, exact or sample") == 0, "joined: '%s'", buf);
    util_names_join(sort_external_names, buf, sizeof(buf));
    CHECK(strcmp(buf, "auto, always or never") == 0, "joined: '%s'", buf);
    CHECK(util_name_find(sort_io_names, "nope") == -1, "an unknown name has a value");
    CHECK(strcmp(util_name_of(sort_io_names, SORTEX_IO_COUNT), "?") == 0, "no value has a name");
}

/* ---- a table of every kind of row --------------------------------------------------------- */

struct opts {
    const char *input, *dir;
    long threads;
    uint64_t size;
    double eps;
    int mode, verbose, size_given;
    struct util_cli_list ranks;
};

static void print_list(FILE *out)
{
    fputs("the list\n", out);
}

static const struct util_name modes[] = {{"fast", 0}, {"slow", 1}, {"none", 2}, {NULL, 0}};

#define DEST(field) UTIL_CLI_DEST(struct opts, field)

/* clang-format off */
static const struct util_cli_opt rows[] = {
    UTIL_CLI_TEXT("options:"),
    {.name = "input", .key = 'i', .arg = "FILE", .help = "the input", .parse = util_cli_str,
     DEST(input)},
    UTIL_CLI_THREADS(struct opts, threads, "T", .def = "all", .help = "threads [{def}]"),
    {.name = "size", .arg = "BYTES", .def = "1Ki", .help = "bytes, {min}..{max}\n[{def}]",
     .parse = util_cli_count, DEST(size), .min = 8, .max = 1024,
     UTIL_CLI_GIVEN(struct opts, size_given)},
    {.name = "eps", .key = 'e', .arg = "E", .help = "{fmin}..{fmax}", .parse = util_cli_double,
     DEST(eps), .fmin = 0.5, .fmax = 2, .err = "{opt} is out of range ({arg})"},
    {.name = "mode", .arg = "MODE", .help = "{names}", .parse = util_cli_enum, DEST(mode),
     .names = modes},
    {.name = "ranks", .key = 'P', .arg = "P[,P...]", .help = "a list", .parse = util_cli_counts,
     DEST(ranks), .min = 1, .max = 100, .items = 3},
    {.name = "dir", .arg = "DIR", .flags = UTIL_CLI_OPTIONAL, .def = "/tmp",
     .help = "optional [{def}]", .parse = util_cli_str, DEST(dir)},
    {.name = "verbose", .key = 'v', .parse = util_cli_flag, DEST(verbose),
     .label = "-v, --verbose (a label)", .help = "said"},
    {.name = "list", .help = "prints", .parse = util_cli_print, .print = print_list},
    {.flags = UTIL_CLI_NOTE, .help = "a note\nat the column"},
    {0},
};
/* clang-format on */

#undef DEST

static const struct util_cli table = {
    .opts = rows,
    .col = 20,
    .unknown = "unknown ({arg}) in ({last})",
    .unexpected = "stray ({arg})",
};

/* What a parse did: its result, its struct and the one line it printed on stderr. */
struct outcome {
    int rc;
    struct opts o;
    char err[256];
};

/* Parses the NULL-terminated words after the program's name, stderr caught; @quiet as
 * util_cli_parse() takes it. */
static struct outcome parse_words(const struct util_cli *cli, const char *const *words, bool quiet)
{
    struct outcome r;
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"prog";
    for (; *words != NULL && argc < 31; words++) {
        argv[argc++] = (char *)*words;
    }
    argv[argc] = NULL;
    memset(&r, 0, sizeof(r));
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    r.rc = util_cli_parse(cli, argc, argv, &r.o, quiet);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t got = fread(r.err, 1, sizeof(r.err) - 1, tmp);
    r.err[got] = '\0';
    fclose(tmp);
    return r;
}

static struct outcome parse(const struct util_cli *cli, const char *const *words)
{
    return parse_words(cli, words, false);
}

#define PARSE(...) parse(&table, (const char *const[]){__VA_ARGS__, NULL})

static void test_parse(void)
{
    /* Every kind of row, short and long, --opt=value, an abbreviation. */
    struct outcome r = PARSE("-i", "in", "-t", "3", "--size=1Ki", "--e", "1.5", "--mode", "slow",
                             "-P", "1,2,3", "--dir", "-v");
    CHECK(r.rc == UTIL_OK && r.err[0] == '\0', "rc %d, '%s'", r.rc, r.err);
    CHECK(strcmp(r.o.input, "in") == 0 && r.o.threads == 3, "input, threads");
    CHECK(r.o.size == 1024 && r.o.size_given == 1, "size %llu", (unsigned long long)r.o.size);
    CHECK(r.o.eps == 1.5 && r.o.mode == 1 && r.o.verbose == 1, "eps, mode, verbose");
    CHECK(r.o.ranks.n == 3 && r.o.ranks.v[2] == 3, "ranks");
    CHECK(r.o.dir != NULL && strcmp(r.o.dir, "/tmp") == 0, "an optional argument left out");
    r = PARSE("--dir=x");
    CHECK(r.rc == UTIL_OK && strcmp(r.o.dir, "x") == 0 && !r.o.size_given, "--dir=x");

    /* One line each, in the row's words or the parser's. */
    static const struct {
        const char *words[4];
        const char *line;
    } bad[] = {
        {{"-t", "0"}, "--threads must be an integer from 1 to 4096 (0)"},
        {{"--size", "2Ki"}, "--size must be a count from 8 to 1024 (2Ki)"},
        {{"--size", "7"}, "--size must be a count from 8 to 1024 (7)"},
        {{"-e", "3"}, "--eps is out of range (3)"},
        {{"--mode", "x"}, "--mode must be fast, slow or none (x)"},
        {{"-P", "1,,2"}, "--ranks list has an empty item (1,,2)"},
        {{"-P", "1,2,3,4"}, "--ranks list has more than 3 items (1,2,3,4)"},
        {{"-P", "1,101"}, "--ranks must be a count from 1 to 100 (101)"},
        {{"-i"}, "option needs a value (-i)"},
        {{"--nope"}, "unknown (--nope) in (--nope)"},
        {{"-v", "-Zv"}, "unknown (-Z) in (-v)"},
        {{"--verbose=1"}, "unknown (--verbose=1) in (--verbose=1)"},
        {{"stray", "-v"}, "stray (stray)"},
        {{"-t", "0", "--list"}, "--threads must be an integer from 1 to 4096 (0)"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = parse(&table, bad[i].words);
        char want[256];
        (void)snprintf(want, sizeof(want), "%s: error: %s\n", util_progname(), bad[i].line);
        CHECK(r.rc == UTIL_EUSAGE && strcmp(r.err, want) == 0, "%s: rc %d, '%s'", bad[i].words[0],
              r.rc, r.err);
    }
    /* An option that answers by itself (quiet: it prints nothing) stops the parse: later
     * mistakes are not seen. */
    r = parse_words(&table, (const char *const[]){"--list", "-t", "0", NULL}, true);
    CHECK(r.rc == UTIL_CLI_DONE && r.err[0] == '\0', "--list: rc %d, '%s'", r.rc, r.err);
    /* A program that takes operands finds them at optind. */
    struct util_cli operands = table;
    operands.unexpected = NULL;
    r = parse(&operands, (const char *const[]){"a", "-v", "b", NULL});
    CHECK(r.rc == UTIL_OK && r.o.verbose && optind == 2, "operands: rc %d, optind %d", r.rc,
          optind);
}

static void test_help(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    util_cli_help(out, &table);
    fclose(out);
    const char *want = "options:\n"
                       "  -i, --input FILE  the input\n"
                       "  -t, --threads T   threads [all]\n"
                       "      --size BYTES  bytes, 8..1024\n"
                       "                    [1Ki]\n"
                       "  -e, --eps E       0.5..2\n"
                       "      --mode MODE   fast, slow or none\n"
                       "  -P, --ranks P[,P...]  a list\n"
                       "      --dir[=DIR]   optional [/tmp]\n"
                       "      -v, --verbose (a label)  said\n"
                       "      --list        prints\n"
                       "                    a note\n"
                       "                    at the column\n";
    CHECK(strcmp(text, want) == 0, "help:\n%s", text);
    free(text);
}

int main(void)
{
    util_set_progname("test_cli");
    test_names();
    test_parse();
    test_help();
    if (failures == 0) {
        printf("test_cli: all passed\n");
    }
    return failures == 0 ? 0 : 1;
}

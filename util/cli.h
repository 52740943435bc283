/*
 * util/cli.h: command lines as tables, one parser and one --help for every program.
 *
 * A program describes its options in one static table of struct util_cli_opt, one row per
 * option: its long name, its short letter, the name of its argument, its default and its help
 * text as --help states them, the function that parses it and the field it fills (an offset into
 * the program's own struct). util_cli_parse() runs getopt_long() over the table, util_cli_help()
 * prints the options' part of --help from it (and help2man the man page from that), as bfs's
 * parse_table[] does. The checks every program shares are the parse functions below, written
 * once: integers and counts in a range, numbers in a range, names of an enum, comma separated
 * lists of counts, strings, switches and the options that print and exit (--help, --version).
 *
 * Texts of a row (help, err) may hold tokens that are replaced when they are printed: {opt} the
 * option ("--threads"), {arg} the value given, {min} and {max} the row's integer range, {fmin}
 * and {fmax} its number range (%g), {def} its default, {names} the names of util_cli_enum
 * ("auto, eps, exact or sample"). A text of several lines separates them with '\n'; --help
 * indents every line to the table's column.
 *
 * The header is C and C++ (bench/localsort.cc). Rows are best written with designated
 * initializers, in C++ in the order of the fields.
 */
#ifndef SORTEX_UTIL_CLI_H
#define SORTEX_UTIL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "util/util.h"

/** What a parse function and util_cli_parse() return, besides UTIL_OK and UTIL_EUSAGE, when an
 * option answered by itself (--help, --version, a 'help' list): the program exits 0. */
#define UTIL_CLI_DONE 1

/** The most rows (options and texts) of one table. */
#define UTIL_CLI_MAX 64

/** The most items of a struct util_cli_list. */
#define UTIL_CLI_LIST_MAX 64

/** The largest --threads of every program whose threads are one number. */
#define UTIL_CLI_THREADS_MAX 4096

struct util_cli_opt;

/**
 * What a row does with its option: @arg is the argument (NULL for an option without one, or an
 * optional one left out), @dest the program's struct that the row's offset points into. @quiet:
 * print nothing on standard output (the processes of a job but the first). Returns UTIL_OK,
 * UTIL_CLI_DONE, or UTIL_EUSAGE after one error line (util_error()).
 */
typedef int util_cli_fn(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);

/** What util_cli_print() prints: the help, the version, a list. */
typedef void util_cli_print_fn(FILE *out);

/** Flags of a row. */
enum util_cli_flag {
    UTIL_CLI_OPTIONAL = 1u, /* the argument may be left out: --name[=ARG] */
    UTIL_CLI_NOTE = 2u,     /* a text row printed at the help column, not at the margin */
};

/**
 * One row: an option, or (name and label NULL) a text --help prints between options, such as a
 * heading. A table ends with a row of zeros.
 */
struct util_cli_opt {
    const char *name;              /* the long option without "--" */
    int key;                       /* its short letter, or 0 */
    const char *arg;               /* its argument's name in --help ("FILE"); NULL: it takes none */
    unsigned flags;                /* enum util_cli_flag */
    const char *def;               /* the default as --help states it ({def}), or NULL */
    const char *help;              /* the help text; NULL: not in --help (an alias) */
    util_cli_fn *parse;            /* what the option does */
    size_t off, size;              /* the field it fills: UTIL_CLI_DEST() */
    uint64_t min, max;             /* the range of util_cli_int(), util_cli_count() and lists */
    double fmin, fmax;             /* the range of util_cli_double() */
    int items;                     /* lists: the most items, and 16 characters each [64] */
    const struct util_name *names; /* util_cli_enum(): the names and their values */
    util_cli_print_fn *print;      /* util_cli_print(): what it prints */
    const char *err;               /* the error line, or NULL for the parse function's own */
    const char *label;             /* --help's option column instead of "-k, --name ARG" */
    size_t given;                  /* UTIL_CLI_GIVEN(): an int set to 1 when the option is given */
};

/** The field @field of struct type @type as a row's destination. */
#define UTIL_CLI_DEST(type, field) .off = offsetof(type, field), .size = sizeof(((type *)0)->field)

/** The int @field of struct type @type, set to 1 when the row's option is given (the parser
 * sets it once the row's parse function succeeded), for the rules between options. */
#define UTIL_CLI_GIVEN(type, field) .given = offsetof(type, field) + 1

/** A program's command line. */
struct util_cli {
    const struct util_cli_opt *opts; /* the rows, ending with a row of zeros */
    int col;                         /* --help: the column the help texts start at */
    const char *unknown;             /* the error line of an unknown option: {arg} is the option
                                      * as util_bad_option() names it, {last} the argument it is
                                      * in (argv[optind - 1]) */
    const char *unexpected;          /* the error line of an operand ({arg}); NULL: the program
                                      * takes operands, from argv[optind] on */
};

/**
 * Parses @argv over the table of @cli into @dest, option after option, from the start
 * (getopt_long(), which it restarts, and which may permute @argv). Stops at the first option whose
 * parse function returns anything but UTIL_OK and returns that; a missing value ("option needs a
 * value"), an unknown option (@cli's unknown) or, unless the program takes them, an operand
 * (@cli's unexpected) is UTIL_EUSAGE after one error line. Returns UTIL_OK with optind at the
 * first operand otherwise. Error lines go through util_error(): a process that must not print
 * them defers them (util_report_defer()); @quiet keeps standard output quiet.
 */
int util_cli_parse(const struct util_cli *cli, int argc, char **argv, void *dest, bool quiet);

/** Prints the rows of @cli as --help lists them: options with their help texts at the column,
 * and the text rows. */
void util_cli_help(FILE *out, const struct util_cli *cli);

/**
 * Prints one error line from the template @tmpl (or the row's err when it has one) with the
 * tokens of the row and @arg, and returns UTIL_EUSAGE: for parse functions of the programs'.
 */
int util_cli_error(const struct util_cli_opt *opt, const char *arg, const char *tmpl);

/* ---- the checks: values of a row, checked against its range, or one error line ----------- */

/** @arg as util_parse_int() reads it, in [min, max]; else "{opt} must be an integer from {min}
 * to {max} ({arg})". */
int util_cli_get_int(const struct util_cli_opt *opt, const char *arg, long *out);
/** @arg as util_parse_count() reads it (suffixes K, Mi ...), in [min, max]; else "{opt} must be
 * a count from {min} to {max} ({arg})". */
int util_cli_get_count(const struct util_cli_opt *opt, const char *arg, uint64_t *out);
/** @arg as util_parse_double() reads it, in [fmin, fmax]; else "{opt} must be a number from
 * {fmin} to {fmax} ({arg})". */
int util_cli_get_double(const struct util_cli_opt *opt, const char *arg, double *out);
/** The value of @arg in the row's names; else "{opt} must be {names} ({arg})". */
int util_cli_get_enum(const struct util_cli_opt *opt, const char *arg, int *out);

/* ---- parse functions: the value into the row's field ---------------------------------- */

/** Stores 1 (a switch: --sync). */
int util_cli_flag(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);
/** Stores @arg, a const char * (an optional argument left out: the row's def, else ""). */
int util_cli_str(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);
/** Stores util_cli_get_int() into an integer field. */
int util_cli_int(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);
/** Stores util_cli_get_count() into an integer field. */
int util_cli_count(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);
/** Stores util_cli_get_double() into a double. */
int util_cli_double(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);
/** Stores util_cli_get_enum() into an int or enum field. */
int util_cli_enum(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);
/** Prints with the row's print on standard output (unless @quiet) and returns UTIL_CLI_DONE. */
int util_cli_print(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);

/** The values of a list option. */
struct util_cli_list {
    uint64_t v[UTIL_CLI_LIST_MAX];
    int n;
};

/**
 * Fills a struct util_cli_list from @arg, a comma separated list (util_split_list(): no empty
 * item, at most the row's items, of 16 characters each) of counts, each checked as
 * util_cli_get_count() checks one.
 */
int util_cli_counts(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet);

/* clang-format off */
/* ---- rows every program writes the same way ------------------------------------------------ */

/** -t, --threads ARG: OpenMP threads, 1..UTIL_CLI_THREADS_MAX, into the integer @field; the
 * rest of the row (.help, .def, .err) follows. */
#define UTIL_CLI_THREADS(type, field, argname, ...)                                                \
    {.name = "threads", .key = 't', .arg = argname, .parse = util_cli_int,                        \
     UTIL_CLI_DEST(type, field), .min = 1, .max = UTIL_CLI_THREADS_MAX, __VA_ARGS__}

/** -h, --help: prints @usage; @text is its help. */
#define UTIL_CLI_HELP(usage, text)                                                                 \
    {.name = "help", .key = 'h', .help = text, .parse = util_cli_print, .print = usage}

/** -V, --version: the version banner (util_print_version()), with @text as its help. */
#define UTIL_CLI_VERSION(text)                                                                     \
    {.name = "version", .key = 'V', .help = text, .parse = util_cli_print,                        \
     .print = util_print_version}

/** A text row: a heading at the margin (lines separated by '\n'; "\n..." leaves a blank line). */
#define UTIL_CLI_TEXT(text) {.help = text}

/* clang-format on */

#ifdef __cplusplus
}
#endif

#endif

/* util/cli.c: the command-line tables' parser, --help printer and shared checks (see cli.h). */
#include "util/cli.h"

#include <assert.h>
#include <getopt.h>
#include <string.h>

#include "util/util.h"

/* The longest text a row's template expands to: an error line, one option's help. */
#define TEXT_MAX 2048

/* getopt_long() value of the long option of row i: above every character. */
#define LONG_BASE 256

/* What the tokens of a template stand for. */
struct tokens {
    const struct util_cli_opt *opt; /* {opt} {min} {max} {fmin} {fmax} {def} {names}; or NULL */
    const char *arg;                /* {arg} */
    const char *last;               /* {last} */
};

/* The text of token @name (without braces) into @buf; false when it is no token. */
static bool token(const struct tokens *t, const char *name, size_t len, char *buf, size_t cap)
{
    const struct util_cli_opt *o = t->opt;
#define IS(s) (len == sizeof(s) - 1 && strncmp(name, s, len) == 0)
    if (IS("arg")) {
        (void)snprintf(buf, cap, "%s", t->arg != NULL ? t->arg : "");
    } else if (IS("last")) {
        (void)snprintf(buf, cap, "%s", t->last != NULL ? t->last : "");
    } else if (o == NULL) {
        return false;
    } else if (IS("opt")) {
        (void)snprintf(buf, cap, "--%s", o->name != NULL ? o->name : "");
    } else if (IS("min") || IS("max")) {
        (void)snprintf(buf, cap, "%llu", (unsigned long long)(IS("min") ? o->min : o->max));
    } else if (IS("fmin") || IS("fmax")) {
        (void)snprintf(buf, cap, "%g", IS("fmin") ? o->fmin : o->fmax);
    } else if (IS("def")) {
        (void)snprintf(buf, cap, "%s", o->def != NULL ? o->def : "");
    } else if (IS("names") && o->names != NULL) {
        util_names_join(o->names, buf, cap);
    } else {
        return false;
    }
#undef IS
    return true;
}

/* @tmpl with its tokens replaced, into @buf (always terminated; cut at @cap). */
static void expand(char *buf, size_t cap, const char *tmpl, const struct tokens *t)
{
    char value[TEXT_MAX];
    size_t used = 0;
    for (const char *p = tmpl; *p != '\0' && used + 1 < cap;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (close != NULL && token(t, p + 1, (size_t)(close - p - 1), value, sizeof(value))) {
            int k = snprintf(buf + used, cap - used, "%s", value);
            used += k > 0 ? (size_t)k : 0;
            used = used < cap ? used : cap - 1;
            p = close + 1;
        } else {
            buf[used++] = *p++;
        }
    }
    buf[used] = '\0';
}

int util_cli_error(const struct util_cli_opt *opt, const char *arg, const char *tmpl)
{
    char line[TEXT_MAX];
    struct tokens t = {opt, arg, NULL};
    if (opt != NULL && opt->err != NULL) {
        tmpl = opt->err;
    }
    expand(line, sizeof(line), tmpl != NULL ? tmpl : "{opt} cannot take this value ({arg})", &t);
    return util_error("%s", line);
}

/* ---- the parser ---------------------------------------------------------------------------- */

/* The option rows of @cli into @rows (text rows left out); their number, or -1 when there are
 * more than UTIL_CLI_MAX. */
static int option_rows(const struct util_cli *cli, const struct util_cli_opt **rows)
{
    int n = 0;
    for (const struct util_cli_opt *o = cli->opts; o->name != NULL || o->help != NULL; o++) {
        if (o->name != NULL && n == UTIL_CLI_MAX) {
            return -1;
        }
        if (o->name != NULL) {
            rows[n++] = o;
        }
    }
    return n;
}

/* getopt_long()'s tables of @rows: the long options, then the short ones (":" first, so that a
 * missing value is told from an unknown option). */
static void getopt_tables(const struct util_cli_opt *const *rows, int n, struct option *longs,
                          char *shorts)
{
    size_t k = 0;
    shorts[k++] = ':';
    for (int i = 0; i < n; i++) {
        const struct util_cli_opt *o = rows[i];
        int has = o->arg == NULL                   ? no_argument
                  : (o->flags & UTIL_CLI_OPTIONAL) ? optional_argument
                                                   : required_argument;
        longs[i] = (struct option){o->name, has, NULL, LONG_BASE + i};
        if (o->key != 0) {
            shorts[k++] = (char)o->key;
            for (int c = 0; c < has; c++) {
                shorts[k++] = ':';
            }
        }
    }
    longs[n] = (struct option){NULL, 0, NULL, 0};
    shorts[k] = '\0';
}

int util_cli_parse(const struct util_cli *cli, int argc, char **argv, void *dest, bool quiet)
{
    const struct util_cli_opt *rows[UTIL_CLI_MAX];
    struct option longs[UTIL_CLI_MAX + 1];
    char shorts[3 * UTIL_CLI_MAX + 2];
    int n = option_rows(cli, rows);
    if (n < 0) {
        return util_error("a command-line table of more than %d options", UTIL_CLI_MAX);
    }
    getopt_tables(rows, n, longs, shorts);
    optind = 0; /* getopt starts over */
    opterr = 0; /* our own one-line messages */
    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        const char *last = optind > 0 ? argv[optind - 1] : "";
        if (c == ':') {
            struct tokens t = {NULL, NULL, last};
            char line[TEXT_MAX];
            expand(line, sizeof(line), "option needs a value ({last})", &t);
            return util_error("%s", line);
        }
        const struct util_cli_opt *o = NULL;
        for (int i = 0; c != '?' && i < n && o == NULL; i++) {
            o = c == LONG_BASE + i || c == rows[i]->key ? rows[i] : NULL;
        }
        if (o == NULL) {
            char buf[8], line[TEXT_MAX];
            struct tokens t = {NULL, util_bad_option(argv, buf, sizeof(buf)), last};
            expand(line, sizeof(line), cli->unknown, &t);
            return util_error("%s", line);
        }
        int rc = o->parse(o, optarg, dest, quiet);
        if (rc != UTIL_OK) {
            return rc;
        }
        if (o->given != 0) {
            const int one = 1;
            memcpy((char *)dest + o->given - 1, &one, sizeof(one));
        }
    }
    if (optind < argc && cli->unexpected != NULL) {
        return util_cli_error(NULL, argv[optind], cli->unexpected);
    }
    return UTIL_OK;
}

/* ---- --help -------------------------------------------------------------------------------- */

/* Prints @text line by line, each after @indent spaces but the first (after @first). */
static void print_lines(FILE *out, const char *text, int first, int indent)
{
    int pad = first;
    for (const char *p = text;;) {
        const char *nl = strchr(p, '\n');
        int len = nl != NULL ? (int)(nl - p) : (int)strlen(p);
        fprintf(out, "%*s%.*s\n", len > 0 ? pad : 0, "", len, p);
        if (nl == NULL) {
            return;
        }
        p = nl + 1;
        pad = indent;
    }
}

void util_cli_help(FILE *out, const struct util_cli *cli)
{
    char text[TEXT_MAX], left[128];
    for (const struct util_cli_opt *o = cli->opts; o->name != NULL || o->help != NULL; o++) {
        if (o->help == NULL) {
            continue; /* an alias */
        }
        struct tokens t = {o, NULL, NULL};
        expand(text, sizeof(text), o->help, &t);
        if (o->name == NULL && o->label == NULL) {
            int at = (o->flags & UTIL_CLI_NOTE) ? cli->col : 0;
            print_lines(out, text, at, at);
            continue;
        }
        if (o->label != NULL) {
            (void)snprintf(left, sizeof(left), "      %s", o->label);
        } else {
            bool optional = (o->flags & UTIL_CLI_OPTIONAL) != 0;
            (void)snprintf(left, sizeof(left), "  %c%c%c --%s%s%s%s", o->key ? '-' : ' ',
                           o->key ? o->key : ' ', o->key ? ',' : ' ', o->name,
                           o->arg == NULL ? ""
                           : optional     ? "[="
                                          : " ",
                           o->arg != NULL ? o->arg : "", o->arg != NULL && optional ? "]" : "");
        }
        int w = (int)strlen(left);
        fputs(left, out);
        print_lines(out, text, w < cli->col ? cli->col - w : 2, cli->col);
    }
}

/* ---- the checks ---------------------------------------------------------------------------- */

int util_cli_get_int(const struct util_cli_opt *opt, const char *arg, long *out)
{
    if (util_parse_int(arg, (long)opt->min, (long)opt->max, out) != UTIL_OK) {
        return util_cli_error(opt, arg, "{opt} must be an integer from {min} to {max} ({arg})");
    }
    return UTIL_OK;
}

int util_cli_get_count(const struct util_cli_opt *opt, const char *arg, uint64_t *out)
{
    if (util_parse_count(arg, out) != UTIL_OK || *out < opt->min || *out > opt->max) {
        return util_cli_error(opt, arg, "{opt} must be a count from {min} to {max} ({arg})");
    }
    return UTIL_OK;
}

int util_cli_get_double(const struct util_cli_opt *opt, const char *arg, double *out)
{
    if (util_parse_double(arg, opt->fmin, opt->fmax, out) != UTIL_OK) {
        return util_cli_error(opt, arg, "{opt} must be a number from {fmin} to {fmax} ({arg})");
    }
    return UTIL_OK;
}

int util_cli_get_enum(const struct util_cli_opt *opt, const char *arg, int *out)
{
    *out = util_name_find(opt->names, arg);
    return *out >= 0 ? UTIL_OK : util_cli_error(opt, arg, "{opt} must be {names} ({arg})");
}

/* ---- parse functions ----------------------------------------------------------------------- */

/* The row's field in @dest. */
static void *field(const struct util_cli_opt *opt, void *dest)
{
    return (char *)dest + opt->off;
}

/* Stores @v into the integer field of the row, whatever its width (values fit it: the row's
 * range says so). */
static void store(const struct util_cli_opt *opt, void *dest, uint64_t v)
{
    uint8_t v8 = (uint8_t)v;
    uint16_t v16 = (uint16_t)v;
    uint32_t v32 = (uint32_t)v;
    const void *src = opt->size == 1   ? (const void *)&v8
                      : opt->size == 2 ? (const void *)&v16
                      : opt->size == 4 ? (const void *)&v32
                                       : (const void *)&v;
    assert(opt->size == 1 || opt->size == 2 || opt->size == 4 || opt->size == 8);
    memcpy(field(opt, dest), src, opt->size);
}

int util_cli_flag(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)arg;
    (void)quiet;
    store(opt, dest, 1);
    return UTIL_OK;
}

int util_cli_str(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    const char *v = arg != NULL ? arg : opt->def != NULL ? opt->def : "";
    assert(opt->size == sizeof(v));
    memcpy(field(opt, dest), &v, sizeof(v));
    return UTIL_OK;
}

int util_cli_int(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    long v;
    if (util_cli_get_int(opt, arg, &v) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    store(opt, dest, (uint64_t)v);
    return UTIL_OK;
}

int util_cli_count(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    uint64_t v;
    if (util_cli_get_count(opt, arg, &v) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    store(opt, dest, v);
    return UTIL_OK;
}

int util_cli_double(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    double v;
    if (util_cli_get_double(opt, arg, &v) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    assert(opt->size == sizeof(v));
    memcpy(field(opt, dest), &v, sizeof(v));
    return UTIL_OK;
}

int util_cli_enum(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    int v;
    if (util_cli_get_enum(opt, arg, &v) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    store(opt, dest, (uint64_t)v);
    return UTIL_OK;
}

int util_cli_print(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)arg;
    (void)dest;
    if (!quiet) {
        opt->print(stdout);
    }
    return UTIL_CLI_DONE;
}

int util_cli_counts(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    struct util_cli_list *list = field(opt, dest);
    int max = opt->items > 0 && opt->items < UTIL_CLI_LIST_MAX ? opt->items : UTIL_CLI_LIST_MAX;
    char buf[16 * UTIL_CLI_LIST_MAX], *items[UTIL_CLI_LIST_MAX], what[64];
    assert(opt->size == sizeof(*list));
    (void)snprintf(what, sizeof(what), "--%s", opt->name);
    if (util_split_list(arg, what, buf, 16 * (size_t)max, items, max, &list->n) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    for (int i = 0; i < list->n; i++) {
        if (util_cli_get_count(opt, items[i], &list->v[i]) != UTIL_OK) {
            return UTIL_EUSAGE;
        }
    }
    return UTIL_OK;
}

/*
 * exchange/machine.c: the machine of the exchange cost models, its built-in constants and its
 * file (see machine.h).
 */
#include "exchange/machine.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/knobs.h"
#include "util/util.h"

/* One constant of struct exchange_machine: its name in files, where it lives, its range and
 * what it is (the comment above it in a file). Integers are stored as int. */
struct field {
    const char *name;
    size_t offset;
    int is_int;
    double lo, hi;
    const char *what;
};

#define DBL(f, lo, hi, what)                                                                       \
    {                                                                                              \
#f, offsetof(struct exchange_machine, f), 0, lo, hi, what                                  \
    }
#define INT(f, lo, hi, what)                                                                       \
    {                                                                                              \
#f, offsetof(struct exchange_machine, f), 1, lo, hi, what                                  \
    }
static const struct field fields[] = {
    DBL(alpha, 0, 1, "seconds a message start-up (ping-pong of 8 bytes, one way)"),
    DBL(beta, 0, 1, "seconds a byte on a link, buffers beyond the cache (ping-pong of 64 MiB)"),
    DBL(beta_cache, 0, 1,
        "seconds a byte on a link, buffers within the cache (ping-pong of 1 MiB)"),
    DBL(copy, 0, 1, "seconds a byte of a local copy (memcpy of 128 MiB)"),
    DBL(copy_cache, 0, 1, "seconds a byte of a local copy within the cache (memcpy of 1 MiB)"),
    DBL(sync, 0, 1,
        "seconds a round that synchronises every rank costs beyond its messages "
        "(a barrier of as many ranks as cores)"),
    DBL(switch_s, 0, 1,
        "seconds a node with more ranks than cores takes to switch ranks: its "
        "synchronising round costs this x ranks / cores (a barrier of them all)"),
    DBL(duplex, 0, 1,
        "0: a rank sends and receives at full rate at once; 1: they share one "
        "rate (two ranks sending to each other at once, over one way)"),
    DBL(llc_bytes, 0, 1e15, "the last-level cache of a node, bytes (0: no cache term)"),
    DBL(eager_bytes, 0, 1e12,
        "the largest message sent eagerly; longer ones take a rendezvous "
        "(Open MPI's btl eager_limit)"),
    INT(cores, 1, 1e6, "cores a node has"),
    INT(shm, 0, 1, "1: the ranks share one node's memory; 0: they talk over a network"),
    INT(ranks_per_node, 1, 1e6, "network: ranks that share one node's link"),
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static double *dbl_at(struct exchange_machine *m, const struct field *f)
{
    return (double *)((char *)m + f->offset);
}

static int *int_at(struct exchange_machine *m, const struct field *f)
{
    return (int *)((char *)m + f->offset);
}

/* The built-in back-ends' factors (see exchange_machine_default()). */
static const struct {
    const char *model;
    struct exchange_machine_factor f;
} builtin_factors[] = {
    {"alltoallv-linear", {1.05, 1.21, 0.158, 1.03}},
    {"direct", {1.15, 1.1, 0.151, 1.18}},
    {"forward", {1.07, 1.07, 0.212, 1.24}},
    {"fullduplex", {1.52, 1.16, 0.14, 0.533}},
    {"grid", {1.84, 1.01, 0.855, 0.788}},
    {"hypercube", {1.79, 1.05, 0.199, 0.92}},
    {"pairwise", {0.887, 1.08, 0.18, 0.627}},
    {"shift", {0.827, 1.2, 0.149, 0.626}},
    {"sparse", {0.793, 1.22, 0.194, 0.733}},
    {"transpose", {1.79, 2.17, 0.714, 0.521}},
};

/*
 * The built-in machine: one node of the project's VM (AMD EPYC, 2 cores, L3 32 MiB, Open MPI
 * 4.1.4 over vader with CMA single copies). Its constants and the back-ends' factors are the
 * fit of bench/run --suites xmodel (bench/xfit.py) to the exchange benchmark's measurements
 * there, the calibration's constants refined (results/exchange/, P = 2..8 ranks on the node:
 * 2237 of 2780 cases predicted within 0.67..1.5 of the measured time); results/xmodel/machine.txt
 * is the same file.
 */
void exchange_machine_default(struct exchange_machine *m)
{
    memset(m, 0, sizeof(*m));
    m->alpha = 1.288e-06;
    m->beta = 1.337e-10;
    m->beta_cache = 7.764e-11;
    m->copy = 9.7e-11;
    m->copy_cache = 2.105e-10;
    m->sync = 5.102e-08;
    m->switch_s = 3.082e-06;
    m->duplex = 1;
    m->llc_bytes = 32.0 * (1 << 20);
    m->eager_bytes = 4096;
    m->cores = 2;
    m->shm = 1;
    m->ranks_per_node = 1;
    m->source = EXCHANGE_MACHINE_BUILTIN;
    for (size_t i = 0; i < sizeof(builtin_factors) / sizeof(*builtin_factors); i++) {
        (void)exchange_machine_set_factor(m, builtin_factors[i].model, &builtin_factors[i].f);
    }
    (void)snprintf(m->origin, sizeof(m->origin),
                   "a project machine: one node, AMD EPYC, 2 cores, Open MPI 4.1 shared memory");
}

struct exchange_machine_factor exchange_machine_factor(const struct exchange_machine *m,
                                                       const char *name)
{
    for (int i = 0; m != NULL && i < m->nfactors; i++) {
        if (strcmp(m->factor[i].model, name) == 0) {
            return m->factor[i].f;
        }
    }
    return (struct exchange_machine_factor){1, 1, 1, 1};
}

int exchange_machine_set_factor(struct exchange_machine *m, const char *name,
                                const struct exchange_machine_factor *f)
{
    int i = 0;
    while (i < m->nfactors && strcmp(m->factor[i].model, name) != 0) {
        i++;
    }
    if (strlen(name) >= sizeof(m->factor[0].model) || i == EXCHANGE_MACHINE_MODELS) {
        return UTIL_EUSAGE;
    }
    (void)snprintf(m->factor[i].model, sizeof(m->factor[i].model), "%s", name);
    m->factor[i].f = *f;
    m->nfactors += i == m->nfactors;
    return UTIL_OK;
}

/* A "factor MODEL STARTUP BYTE COPY SYNC" line's values. */
static int read_factor(struct exchange_machine *m, const char *value, const char *path, int no)
{
    char model[64];
    struct exchange_machine_factor f;
    if (sscanf(value, "%63s %lf %lf %lf %lf", model, &f.startup, &f.byte, &f.copy, &f.sync) != 5 ||
        !(f.startup >= 0 && f.byte >= 0 && f.copy >= 0 && f.sync >= 0) ||
        !(f.startup < 1e6 && f.byte < 1e6 && f.copy < 1e6 && f.sync < 1e6)) {
        return util_error("bad factor line in the machine file, want MODEL and four factors "
                          "from 0 to 10^6 (%s:%d)",
                          path, no);
    }
    if (exchange_machine_set_factor(m, model, &f) != UTIL_OK) {
        return util_error("too many factor lines, or a model name too long (%s:%d)", path, no);
    }
    return UTIL_OK;
}

/* One line's name and value: a field, the factors, the origin, or another's. */
static int read_line(struct exchange_machine *m, char *line, const char *path, int no,
                     exchange_machine_other_fn *other, void *ctx)
{
    line[strcspn(line, "\r\n")] = '\0';
    char *name = line + strspn(line, " \t");
    if (*name == '#' || *name == '\0') {
        return UTIL_OK;
    }
    char *value = name + strcspn(name, " \t");
    if (*value != '\0') {
        *value++ = '\0';
        value += strspn(value, " \t");
    }
    if (strcmp(name, "origin") == 0) {
        (void)snprintf(m->origin, sizeof(m->origin), "%s", value);
        return UTIL_OK;
    }
    if (strcmp(name, "factor") == 0) {
        return read_factor(m, value, path, no);
    }
    for (size_t i = 0; i < NFIELDS; i++) {
        if (strcmp(fields[i].name, name) != 0) {
            continue;
        }
        char *end;
        errno = 0;
        double v = strtod(value, &end);
        if (end == value || *(end + strspn(end, " \t")) != '\0' || errno != 0 ||
            !(v >= fields[i].lo && v <= fields[i].hi) || (fields[i].is_int && v != floor(v))) {
            return util_error("bad value of %s in the machine file, want %s from %g to %g "
                              "(%s:%d: %s)",
                              name, fields[i].is_int ? "an integer" : "a number", fields[i].lo,
                              fields[i].hi, path, no, value);
        }
        if (fields[i].is_int) {
            *int_at(m, &fields[i]) = (int)v;
        } else {
            *dbl_at(m, &fields[i]) = v;
        }
        return UTIL_OK;
    }
    return other != NULL ? other(ctx, name, value, path, no) : UTIL_OK;
}

int exchange_machine_read(struct exchange_machine *m, const char *path,
                          exchange_machine_other_fn *other, void *ctx)
{
    m->source = EXCHANGE_MACHINE_FILE_GIVEN;
    (void)snprintf(m->path, sizeof(m->path), "%s", path);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return util_error("cannot read the machine file (%s: %s)", path, strerror(errno));
    }
    char line[512];
    int no = 0, err = UTIL_OK;
    while (err == UTIL_OK && fgets(line, sizeof(line), f) != NULL) {
        no++;
        err = read_line(m, line, path, no, other, ctx);
    }
    if (err == UTIL_OK && ferror(f)) {
        err = util_error("cannot read the machine file (%s: %s)", path, strerror(errno));
    }
    fclose(f);
    return err;
}

void exchange_machine_print(FILE *f, const struct exchange_machine *m)
{
    fprintf(f, "# where these constants come from\norigin %s\n", m->origin);
    for (size_t i = 0; i < NFIELDS; i++) {
        struct exchange_machine *mm = (struct exchange_machine *)m;
        if (fields[i].is_int) {
            fprintf(f, "# %s\n%s %d\n", fields[i].what, fields[i].name, *int_at(mm, &fields[i]));
        } else {
            fprintf(f, "# %s\n%s %.4g\n", fields[i].what, fields[i].name, *dbl_at(mm, &fields[i]));
        }
    }
    if (m->nfactors > 0) {
        fprintf(f, "# a back-end's model: factors on its start-ups, bytes, copies and "
                   "synchronising rounds (1: the closed form)\n");
    }
    for (int i = 0; i < m->nfactors; i++) {
        const struct exchange_machine_factor *x = &m->factor[i].f;
        fprintf(f, "factor %s %.3g %.3g %.3g %.3g\n", m->factor[i].model, x->startup, x->byte,
                x->copy, x->sync);
    }
}

int exchange_machine_home_path(char *buf, size_t cap)
{
    const char *xdg = util_knob(UTIL_KNOB_XDG_CONFIG_HOME)->text;
    const char *home = util_knob(UTIL_KNOB_HOME)->text;
    int n;
    if (xdg != NULL && *xdg != '\0') {
        n = snprintf(buf, cap, "%s/sortex/%s", xdg, EXCHANGE_MACHINE_FILE);
    } else if (home != NULL && *home != '\0') {
        n = snprintf(buf, cap, "%s/.config/sortex/%s", home, EXCHANGE_MACHINE_FILE);
    } else {
        return UTIL_EUSAGE;
    }
    return n > 0 && (size_t)n < cap ? UTIL_OK : UTIL_EUSAGE;
}

int exchange_machine_load(struct exchange_machine *m, const char *path)
{
    return exchange_machine_load_with(m, path, NULL, NULL);
}

int exchange_machine_load_with(struct exchange_machine *m, const char *path,
                               exchange_machine_other_fn *other, void *ctx)
{
    exchange_machine_default(m);
    const struct util_knob_value *env = util_knob(UTIL_KNOB_MACHINE);
    char home[1024];
    int err;
    if (path != NULL) {
        return exchange_machine_read(m, path, other, ctx);
    }
    if (env->set) {
        err = exchange_machine_read(m, env->text, other, ctx);
        m->source = EXCHANGE_MACHINE_FILE_ENV;
        return err;
    }
    if (exchange_machine_home_path(home, sizeof(home)) == UTIL_OK && access(home, F_OK) == 0) {
        err = exchange_machine_read(m, home, other, ctx);
        m->source = EXCHANGE_MACHINE_FILE_HOME;
        return err;
    }
    return UTIL_OK;
}

int exchange_machine_load_quiet(struct exchange_machine *m, const char *path)
{
    /* Its error line held back and dropped; one held before is kept. */
    bool was = util_report_deferring(), held = util_report_pending();
    util_report_defer(true);
    int err = exchange_machine_load(m, path);
    if (!held) {
        util_report_release(false);
    }
    util_report_defer(was);
    if (err != UTIL_OK) {
        char file[sizeof(m->path)];
        enum exchange_machine_source source = m->source;
        (void)snprintf(file, sizeof(file), "%s", m->path);
        exchange_machine_default(m);
        (void)snprintf(m->path, sizeof(m->path), "%s", file);
        m->source = source;
    }
    return err;
}

void exchange_machine_describe(const struct exchange_machine *m, char *buf, size_t cap)
{
    static const char *const how[EXCHANGE_MACHINE_SOURCE_COUNT] = {
        "built-in constants", "the file given", "the file SORTEX_MACHINE names",
        "the user's machine file"};
    if (m->source == EXCHANGE_MACHINE_BUILTIN) {
        (void)snprintf(buf, cap, "%s of %s", how[m->source], m->origin);
    } else {
        (void)snprintf(buf, cap, "%s %s (%s)", how[m->source], m->path,
                       m->origin[0] ? m->origin : "no origin line");
    }
}

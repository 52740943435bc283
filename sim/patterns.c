/*
 * sim/patterns.c: the count matrices of the simulator and the exchange micro-benchmark.
 *
 * Every pattern is one row function: given P, V (keys per rank) and the source rank it fills the
 * counts that rank sends to each destination, summing to exactly V. Where weights are involved
 * the row is cut by cumulative rounding (count_j = floor(V S_j / W) - floor(V S_(j-1) / W), S the
 * running weight sum, W the total), which is exact, non-negative and monotone in the weights.
 *
 * The families follow the inputs of Helman, Bader and JaJa's sample sort benchmarks as a sample
 * sort sees them after bucketing (bucket, staggered, g-group, uniform), plus the skewed and
 * sparse matrices OSU's and Intel's equal-size alltoallv benchmarks leave out, and the
 * lower-bound instance of Sanders and Solis-Oba ("How helpers hasten h-relations", section 2.5):
 * P = 3k PEs in 3-cycles, every PE sending its whole volume to its successor in the cycle, where
 * direct delivery needs 3h/2 steps and forwarding 6h/5.
 *
 * 'sort:DIST' is the matrix itself rather than a picture of it: the counts a P-rank sortex run
 * hands its exchange for the datagen input DIST of P x V keys (sim_sort_counts(), the sort's
 * sampling and bucketing without MPI), so that back-ends can be timed on the nine inputs of the
 * sample sort literature in isolation from the rest of the sort. 'file:PATH' replays any matrix
 * saved as CSV (sortex-sched --print-matrix writes them).
 */
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "util/alloc.h"
#include "util/util.h"

uint64_t sim_mix(uint64_t x)
{
    return util_splitmix64(&x); /* one step of splitmix64 from state x */
}

/* ---- randomness: one independent stream per (seed, pattern, source rank) -------------------- */

struct rng {
    uint64_t state;
};

static struct rng rng_for(const struct sim_spec *spec, int src)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a of the pattern name keeps streams apart */
    for (const char *c = spec->pattern->name; *c; c++) {
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    }
    struct rng r = {sim_mix(spec->seed ^ sim_mix(h + (uint64_t)(uint32_t)src))};
    return r;
}

static uint64_t rng_next(struct rng *r)
{
    r->state += 0x9e3779b97f4a7c15ULL;
    return sim_mix(r->state);
}

/* Uniform in [0, 1). */
static double rng_unit(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal (Box-Muller; one of the pair is enough here). */
static double rng_normal(struct rng *r)
{
    double u = 1.0 - rng_unit(r), v = rng_unit(r);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* ---- helpers --------------------------------------------------------------------------------- */

/* Cuts total into row[0..n) proportionally to w[0..n) (w >= 0, not all 0), cumulatively. */
static void split_weights(uint64_t total, const double *w, int n, uint64_t *row)
{
    double sum = 0, run = 0;
    for (int j = 0; j < n; j++) {
        sum += w[j];
    }
    uint64_t prev = 0;
    for (int j = 0; j < n; j++) {
        run += w[j];
        uint64_t b = j + 1 == n ? total : (uint64_t)floor((double)total * (run / sum));
        b = b > total ? total : b < prev ? prev : b;
        row[j] = b - prev;
        prev = b;
    }
}

/* Equal blocks of total over the k destinations first, first+1, ... (mod P); the remainder
 * goes one key each to the first destinations, so blocks differ by at most one. */
static void split_even(uint64_t total, int first, int k, int P, uint64_t *row)
{
    uint64_t q = total / (uint64_t)k, rem = total % (uint64_t)k;
    for (int i = 0; i < k; i++) {
        row[(first + i) % P] += q + ((uint64_t)i < rem ? 1 : 0);
    }
}

/* ---- the patterns ---------------------------------------------------------------------------- */

/* [B] Every rank sends an equal block to every rank: the regular all-to-all of OSU and IMB. */
static int row_bucket(const struct sim_spec *s, int src, uint64_t *row)
{
    split_even(s->keys, src, s->ranks, s->ranks, row);
    return UTIL_OK;
}

/* [U] Uniform random keys: each key's destination is uniform, so a row is multinomial(V, 1/P):
 * exact draws for small V, the normal approximation (mean V/P, variance V(1-1/P)/P) above. */
static int row_uniform(const struct sim_spec *s, int src, uint64_t *row)
{
    int P = s->ranks;
    struct rng r = rng_for(s, src);
    if (s->keys <= (uint64_t)64 * (uint64_t)P) {
        for (uint64_t k = 0; k < s->keys; k++) {
            row[rng_next(&r) % (uint64_t)P]++;
        }
        return UTIL_OK;
    }
    double *w = util_malloc((size_t)P * sizeof(double));
    if (w == NULL) {
        return UTIL_ENOMEM;
    }
    double mean = (double)s->keys / P, sd = sqrt(mean * (1.0 - 1.0 / P));
    for (int j = 0; j < P; j++) {
        double x = mean + sd * rng_normal(&r);
        w[j] = x > 0 ? x : 0;
    }
    w[src] += 1e-9; /* never all zero */
    split_weights(s->keys, w, P, row);
    util_free(w);
    return UTIL_OK;
}

/* Random weights: each (src, dst) weight uniform in [0, 1), so rows and columns vary by ~2x. */
static int row_random(const struct sim_spec *s, int src, uint64_t *row)
{
    int P = s->ranks;
    double *w = util_malloc((size_t)P * sizeof(double));
    if (w == NULL) {
        return UTIL_ENOMEM;
    }
    struct rng r = rng_for(s, src);
    for (int j = 0; j < P; j++) {
        w[j] = rng_unit(&r);
    }
    w[src] += 1e-9;
    split_weights(s->keys, w, P, row);
    util_free(w);
    return UTIL_OK;
}

/* One-hot: x percent of every rank's volume goes to rank 0, the rest in equal blocks to all.
 * Rank 0 receives about (x/100 (P-1) + 1) V: an incast, the h of the relation grows with x. */
static int row_onehot(const struct sim_spec *s, int src, uint64_t *row)
{
    uint64_t hot = (uint64_t)floor((double)s->keys * (s->param / 100.0));
    hot = hot > s->keys ? s->keys : hot;
    split_even(s->keys - hot, src, s->ranks, s->ranks, row);
    row[0] += hot;
    return UTIL_OK;
}

/* Zipf over destinations, rotated per rank: rank i sends weight 1/(r+1)^s to rank i+1+r (mod P),
 * r = 0..P-1, so every rank's heaviest block goes to its successor and its own block is the
 * lightest. Columns stay balanced while each row gets steeper with s (s = 0: equal blocks). */
static int row_zipf(const struct sim_spec *s, int src, uint64_t *row)
{
    int P = s->ranks;
    double *w = util_malloc((size_t)P * sizeof(double));
    if (w == NULL) {
        return UTIL_ENOMEM;
    }
    for (int r = 0; r < P; r++) {
        w[(src + 1 + r) % P] = pow((double)(r + 1), -s->param);
    }
    split_weights(s->keys, w, P, row);
    util_free(w);
    return UTIL_OK;
}

/* [S] Staggered: with h = floor(P/2), rank i < h sends everything to 2i + 1, rank i >= h to
 * 2(i - h): a permutation (odd P: the last rank keeps its data), as the sample sort sees the
 * staggered input after bucketing. */
static int row_staggered(const struct sim_spec *s, int src, uint64_t *row)
{
    int h = s->ranks / 2;
    row[src < h ? 2 * src + 1 : 2 * (src - h)] = s->keys;
    return UTIL_OK;
}

/* [g-G] g-group: the group of rank i starts at i - (i mod g); with v = (that + floor(P/2)) mod P
 * the rank sends equal blocks to the g ranks v, v+1, ... (mod P). */
static int row_ggroup(const struct sim_spec *s, int src, uint64_t *row)
{
    int P = s->ranks;
    int g = (int)s->param < P ? (int)s->param : P;
    int v = (src - src % g + P / 2) % P;
    split_even(s->keys, v, g, P, row);
    return UTIL_OK;
}

/* Sparse random: every rank sends to d distinct random destinations (d clamped to P) with
 * weights uniform in [0.5, 1.5), and nothing to the others. */
static int row_sparse(const struct sim_spec *s, int src, uint64_t *row)
{
    int P = s->ranks;
    int d = (int)s->param < P ? (int)s->param : P;
    int *perm = util_malloc((size_t)P * sizeof(int));
    double *w = util_malloc((size_t)d * sizeof(double));
    uint64_t *part = util_malloc((size_t)d * sizeof(uint64_t));
    if (perm == NULL || w == NULL || part == NULL) {
        util_free(perm);
        util_free(w);
        util_free(part);
        return UTIL_ENOMEM;
    }
    struct rng r = rng_for(s, src);
    for (int j = 0; j < P; j++) {
        perm[j] = j;
    }
    /* A partial Fisher-Yates shuffle picks the d destinations. */
    for (int j = 0; j < d; j++) {
        int k = j + (int)(rng_next(&r) % (uint64_t)(P - j));
        int t = perm[j];
        perm[j] = perm[k];
        perm[k] = t;
        w[j] = 0.5 + rng_unit(&r);
    }
    split_weights(s->keys, w, d, part);
    for (int j = 0; j < d; j++) {
        row[perm[j]] = part[j];
    }
    util_free(perm);
    util_free(w);
    util_free(part);
    return UTIL_OK;
}

/* Odd cycles (the lower-bound instance): ranks 3t, 3t+1, 3t+2 form a cycle and each sends its
 * whole volume to its successor. P mod 3 = 1: the last rank keeps its data; P mod 3 = 2: the
 * last two ranks swap theirs. */
static int row_oddcycle(const struct sim_spec *s, int src, uint64_t *row)
{
    int P = s->ranks, full = P - P % 3, dst;
    if (src < full) {
        dst = src - src % 3 + (src % 3 + 1) % 3;
    } else if (P - full == 2) {
        dst = src == full ? full + 1 : full;
    } else {
        dst = src;
    }
    row[dst] = s->keys;
    return UTIL_OK;
}

/* The counts the sort's exchange sees on a datagen input of P x V keys (default parameters, the
 * pattern's seed). */
static int matrix_sort(const struct sim_spec *s, uint64_t *matrix)
{
    struct datagen_params dp;
    datagen_params_init(&dp);
    dp.dist = s->dist;
    dp.n = (uint64_t)s->ranks * s->keys;
    dp.ranks = (uint64_t)s->ranks;
    dp.seed = s->seed;
    if (dp.n == 0) {
        return UTIL_OK;
    }
    int err = datagen_check(&dp);
    if (err != UTIL_OK) {
        return err;
    }
    return sim_sort_counts(&dp, 0, 0, SORTEX_BALANCE_AUTO, omp_get_max_threads(), matrix);
}

/* A CSV file of counts: as they are, when it is P x P for the P asked for. */
static int matrix_file(const struct sim_spec *s, uint64_t *matrix)
{
    uint64_t *m = NULL;
    int p = 0, err = sim_matrix_read(s->path, &m, &p);
    if (err != UTIL_OK) {
        return err;
    }
    if (p != s->ranks) {
        util_free(m);
        return util_error("the matrix in %s is %d x %d, not %d x %d for %d ranks", s->path, p, p,
                          s->ranks, s->ranks, s->ranks);
    }
    memcpy(matrix, m, (size_t)p * (size_t)p * sizeof(*matrix));
    util_free(m);
    return UTIL_OK;
}

static const struct sim_pattern pattern_uniform = {
    .name = "uniform",
    .summary = "[U] uniform random keys: multinomial(V, 1/P) counts",
    .row = row_uniform,
};
static const struct sim_pattern pattern_random = {
    .name = "random",
    .summary = "random weights in [0,1) per (src, dst): irregular rows and columns",
    .row = row_random,
};
static const struct sim_pattern pattern_onehot = {
    .name = "onehot",
    .summary = "PARAM percent of every rank's volume to rank 0, the rest in equal blocks (incast)",
    .param = SIM_PARAM_NUMBER,
    .param_name = "percent",
    .param_default = 50,
    .param_min = 0,
    .param_max = 100,
    .row = row_onehot,
};
static const struct sim_pattern pattern_zipf = {
    .name = "zipf",
    .summary = "rank i sends weight 1/(r+1)^PARAM to rank i+1+r: skewed rows, balanced columns",
    .param = SIM_PARAM_NUMBER,
    .param_name = "exponent",
    .param_default = 1.0,
    .param_min = 0,
    .param_max = 16,
    .row = row_zipf,
};
static const struct sim_pattern pattern_staggered = {
    .name = "staggered",
    .summary = "[S] a permutation: rank i < P/2 to 2i+1, the others to 2(i - P/2)",
    .row = row_staggered,
};
static const struct sim_pattern pattern_ggroup = {
    .name = "ggroup",
    .summary = "[g-G] equal blocks to the PARAM ranks of the group half the machine away",
    .param = SIM_PARAM_INTEGER,
    .param_name = "groups",
    .param_default = 2,
    .param_min = 1,
    .param_max = 1 << 20,
    .row = row_ggroup,
};
static const struct sim_pattern pattern_bucket = {
    .name = "bucket",
    .summary = "[B] bucket-sorted input: exactly equal blocks (the regular all-to-all)",
    .row = row_bucket,
};
static const struct sim_pattern pattern_sparse = {
    .name = "sparse",
    .summary = "PARAM random destinations per rank with random weights, nothing elsewhere",
    .param = SIM_PARAM_INTEGER,
    .param_name = "destinations",
    .param_default = 2,
    .param_min = 1,
    .param_max = 1 << 20,
    .row = row_sparse,
};
static const struct sim_pattern pattern_oddcycle = {
    .name = "oddcycle",
    .summary = "3-cycles 3t -> 3t+1 -> 3t+2 -> 3t, all volume to the successor (h-relation lower "
               "bound)",
    .row = row_oddcycle,
};
static const struct sim_pattern pattern_sort = {
    .name = "sort",
    .summary = "what the sort's exchange sees on the datagen input PARAM of P x V keys (not in "
               "'all')",
    .param = SIM_PARAM_DIST,
    .param_name = "distribution",
    .matrix = matrix_sort,
};
static const struct sim_pattern pattern_file = {
    .name = "file",
    .summary = "the counts of a CSV file, P rows of P keys as --print-matrix writes them; V does "
               "not apply (not in 'all')",
    .param = SIM_PARAM_PATH,
    .param_name = "path",
    .fixed = 1,
    .matrix = matrix_file,
};

/* One line per pattern; 'all' runs the row patterns in this order. */
static const struct sim_pattern *const registry[] = {
    &pattern_uniform,
    &pattern_random,
    &pattern_onehot,
    &pattern_zipf,
    &pattern_staggered,
    &pattern_ggroup,
    &pattern_bucket,
    &pattern_sparse,
    &pattern_oddcycle,
    &pattern_sort,
    &pattern_file,
    NULL,
};

const struct sim_pattern *const *sim_pattern_list(void)
{
    return registry;
}

const struct sim_pattern *sim_pattern_find(const char *name)
{
    for (size_t i = 0; registry[i] != NULL; i++) {
        if (strcmp(registry[i]->name, name) == 0) {
            return registry[i];
        }
    }
    return NULL;
}

void sim_pattern_print_help(FILE *out)
{
    fprintf(out, "count-matrix patterns (--patterns NAME[:PARAM]; V keys per rank, P ranks):\n");
    for (size_t i = 0; registry[i] != NULL; i++) {
        const struct sim_pattern *p = registry[i];
        char name[64];
        if (p->param_name != NULL) {
            (void)snprintf(name, sizeof(name), "%s:%s", p->name, p->param_name);
        } else {
            (void)snprintf(name, sizeof(name), "%s", p->name);
        }
        fprintf(out, "%-21s %s", name, p->summary);
        if (p->param == SIM_PARAM_DIST) {
            char names[512];
            datagen_names(names, sizeof(names));
            fprintf(out, " [%s]", names);
        } else if (p->param == SIM_PARAM_NUMBER || p->param == SIM_PARAM_INTEGER) {
            fprintf(out, " [%.10g; %.10g..%.10g]", p->param_default, p->param_min, p->param_max);
        }
        fputc('\n', out);
    }
}

int sim_spec_parse(const char *text, struct sim_spec *spec)
{
    char name[64];
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len == 0 || len >= sizeof(name)) {
        return util_error("bad pattern (%s); see --patterns help", text);
    }
    memcpy(name, text, len);
    name[len] = '\0';
    const struct sim_pattern *p = sim_pattern_find(name);
    if (p == NULL) {
        char names[256] = "";
        size_t used = 0;
        for (size_t i = 0; registry[i] != NULL && used < sizeof(names); i++) {
            int n = snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
                             registry[i]->name);
            used += n > 0 ? (size_t)n : 0;
        }
        return util_error("unknown pattern (%s); valid: %s", name, names);
    }
    spec->pattern = p;
    spec->param = p->param_default;
    spec->dist = NULL;
    spec->path[0] = '\0';
    switch (p->param) {
    case SIM_PARAM_DIST:
        spec->dist = colon != NULL ? datagen_find(colon + 1) : NULL;
        if (spec->dist == NULL) {
            char names[512];
            datagen_names(names, sizeof(names));
            return util_error("%s needs a distribution, %s:NAME (%s); valid: %s", p->name, p->name,
                              text, names);
        }
        return UTIL_OK;
    case SIM_PARAM_PATH:
        if (colon == NULL || colon[1] == '\0' || strlen(colon + 1) >= sizeof(spec->path)) {
            return util_error("%s needs a file name of at most %d bytes, %s:PATH (%s)", p->name,
                              SIM_PATH_MAX - 1, p->name, text);
        }
        strcpy(spec->path, colon + 1);
        return UTIL_OK;
    case SIM_PARAM_NONE:
        return colon == NULL ? UTIL_OK
                             : util_error("pattern %s takes no parameter (%s)", p->name, text);
    default:
        break;
    }
    int integral = p->param == SIM_PARAM_INTEGER;
    if (colon != NULL &&
        (util_parse_double(colon + 1, p->param_min, p->param_max, &spec->param) != UTIL_OK ||
         (integral && spec->param != (double)(long)spec->param))) {
        return util_error("%s: the %s must be a %s from %.10g to %.10g (%s)", p->name,
                          p->param_name, integral ? "whole number" : "number", p->param_min,
                          p->param_max, colon + 1);
    }
    return UTIL_OK;
}

void sim_spec_param(const struct sim_spec *spec, char *buf, size_t cap)
{
    enum sim_param kind = spec->pattern->param;
    if (kind == SIM_PARAM_DIST) {
        (void)snprintf(buf, cap, "%s", spec->dist->name);
    } else if (kind == SIM_PARAM_PATH) {
        /* The file's base name, without commas: it goes into CSV columns. */
        const char *base = strrchr(spec->path, '/');
        (void)snprintf(buf, cap, "%s", base != NULL ? base + 1 : spec->path);
        for (char *c = buf; *c != '\0'; c++) {
            *c = *c == ',' ? '_' : *c;
        }
    } else if (kind != SIM_PARAM_NONE) {
        (void)snprintf(buf, cap, "%g", spec->param);
    } else if (cap > 0) {
        buf[0] = '\0';
    }
}

void sim_spec_label(const struct sim_spec *spec, char *buf, size_t cap)
{
    char param[64];
    sim_spec_param(spec, param, sizeof(param));
    (void)snprintf(buf, cap, "%s%s%s", spec->pattern->name, param[0] ? ":" : "", param);
}

int sim_spec_matrix(const struct sim_spec *spec, uint64_t *matrix)
{
    memset(matrix, 0, (size_t)spec->ranks * (size_t)spec->ranks * sizeof(*matrix));
    if (spec->pattern->matrix != NULL) {
        return spec->pattern->matrix(spec, matrix);
    }
    for (int i = 0; i < spec->ranks; i++) {
        if (spec->pattern->row(spec, i, matrix + (size_t)i * (size_t)spec->ranks) != UTIL_OK) {
            return util_fail(UTIL_ENOMEM, "out of memory for the weights of pattern %s",
                             spec->pattern->name);
        }
    }
    return UTIL_OK;
}

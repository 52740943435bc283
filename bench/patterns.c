/*
 * bench/patterns.c: the synthetic count matrices of the exchange micro-benchmark.
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
 * hands its exchange for the datagen input DIST of P x V keys (exchange_model_sort_counts(), the
 * sort's sampling and bucketing without MPI), so that back-ends can be timed on the nine inputs
 * of the sample sort literature in isolation from the rest of the sort.
 */
#include "bench/bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "exchange/model_sort.h"
#include "util/alloc.h"
#include "util/util.h"

uint64_t bench_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t bench_key_base(uint64_t seed, int src, int dst)
{
    return bench_mix(seed ^ bench_mix(((uint64_t)(uint32_t)src << 32) | (uint32_t)dst));
}

uint64_t bench_key_at(uint64_t base, uint64_t index)
{
    return bench_mix(base + index * 0x9e3779b97f4a7c15ULL);
}

/* ---- randomness: one independent stream per (seed, pattern, source rank) -------------------- */

struct rng {
    uint64_t state;
};

static struct rng rng_for(const struct bench_spec *spec, int src)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a of the pattern name keeps streams apart */
    for (const char *c = spec->pattern->name; *c; c++) {
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    }
    struct rng r = {bench_mix(spec->seed ^ bench_mix(h + (uint64_t)(uint32_t)src))};
    return r;
}

static uint64_t rng_next(struct rng *r)
{
    r->state += 0x9e3779b97f4a7c15ULL;
    return bench_mix(r->state);
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
static int row_bucket(const struct bench_spec *s, int src, uint64_t *row)
{
    split_even(s->keys, src, s->ranks, s->ranks, row);
    return UTIL_OK;
}

/* [U] Uniform random keys: each key's destination is uniform, so a row is multinomial(V, 1/P):
 * exact draws for small V, the normal approximation (mean V/P, variance V(1-1/P)/P) above. */
static int row_uniform(const struct bench_spec *s, int src, uint64_t *row)
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
static int row_random(const struct bench_spec *s, int src, uint64_t *row)
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
static int row_onehot(const struct bench_spec *s, int src, uint64_t *row)
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
static int row_zipf(const struct bench_spec *s, int src, uint64_t *row)
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
static int row_staggered(const struct bench_spec *s, int src, uint64_t *row)
{
    int h = s->ranks / 2;
    row[src < h ? 2 * src + 1 : 2 * (src - h)] = s->keys;
    return UTIL_OK;
}

/* [g-G] g-group: the group of rank i starts at i - (i mod g); with v = (that + floor(P/2)) mod P
 * the rank sends equal blocks to the g ranks v, v+1, ... (mod P). */
static int row_ggroup(const struct bench_spec *s, int src, uint64_t *row)
{
    int P = s->ranks;
    int g = (int)s->param < P ? (int)s->param : P;
    int v = (src - src % g + P / 2) % P;
    split_even(s->keys, v, g, P, row);
    return UTIL_OK;
}

/* Sparse random: every rank sends to d distinct random destinations (d clamped to P) with
 * weights uniform in [0.5, 1.5), and nothing to the others. */
static int row_sparse(const struct bench_spec *s, int src, uint64_t *row)
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
static int row_oddcycle(const struct bench_spec *s, int src, uint64_t *row)
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
static int matrix_sort(const struct bench_spec *s, uint64_t *matrix)
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
    return exchange_model_sort_counts(&dp, 0, 0, omp_get_max_threads(), matrix);
}

static const struct bench_pattern pattern_uniform = {
    "uniform", "[U] uniform random keys: multinomial(V, 1/P) counts", NULL, 0, 0, 0, 0, row_uniform,
    NULL};
static const struct bench_pattern pattern_random = {
    "random", "random weights in [0,1) per (src, dst): irregular rows and columns",
    NULL,     0,
    0,        0,
    0,        row_random,
    NULL};
static const struct bench_pattern pattern_onehot = {
    "onehot",  "PARAM percent of every rank's volume to rank 0, the rest in equal blocks (incast)",
    "percent", 50,
    0,         100,
    0,         row_onehot,
    NULL};
static const struct bench_pattern pattern_zipf = {
    "zipf",     "rank i sends weight 1/(r+1)^PARAM to rank i+1+r: skewed rows, balanced columns",
    "exponent", 1.0,
    0,          16,
    0,          row_zipf,
    NULL};
static const struct bench_pattern pattern_staggered = {
    "staggered", "[S] a permutation: rank i < P/2 to 2i+1, the others to 2(i - P/2)",
    NULL,        0,
    0,           0,
    0,           row_staggered,
    NULL};
static const struct bench_pattern pattern_ggroup = {
    "ggroup", "[g-G] equal blocks to the PARAM ranks of the group half the machine away",
    "groups", 2,
    1,        1 << 20,
    1,        row_ggroup,
    NULL};
static const struct bench_pattern pattern_bucket = {
    "bucket", "[B] bucket-sorted input: exactly equal blocks (the regular all-to-all)",
    NULL,     0,
    0,        0,
    0,        row_bucket,
    NULL};
static const struct bench_pattern pattern_sparse = {
    "sparse",
    "PARAM random destinations per rank with random weights, nothing elsewhere",
    "destinations",
    2,
    1,
    1 << 20,
    1,
    row_sparse,
    NULL};
static const struct bench_pattern pattern_oddcycle = {
    "oddcycle",
    "3-cycles 3t -> 3t+1 -> 3t+2 -> 3t, all volume to the successor (h-relation "
    "lower bound)",
    NULL,
    0,
    0,
    0,
    0,
    row_oddcycle,
    NULL};
static const struct bench_pattern pattern_sort = {
    "sort",
    "what the sort's exchange sees on the datagen input PARAM of P x V keys (not in 'all')",
    "distribution",
    0,
    0,
    0,
    0,
    NULL,
    matrix_sort};

/* One line per pattern; 'all' runs the row patterns in this order. */
static const struct bench_pattern *const registry[] = {
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
    NULL,
};

const struct bench_pattern *const *bench_pattern_list(void)
{
    return registry;
}

const struct bench_pattern *bench_pattern_find(const char *name)
{
    for (size_t i = 0; registry[i] != NULL; i++) {
        if (strcmp(registry[i]->name, name) == 0) {
            return registry[i];
        }
    }
    return NULL;
}

void bench_pattern_print_help(FILE *out)
{
    fprintf(out, "count-matrix patterns (--patterns NAME[:PARAM]; V keys per rank, P ranks):\n");
    for (size_t i = 0; registry[i] != NULL; i++) {
        const struct bench_pattern *p = registry[i];
        char name[64];
        if (p->param_name != NULL) {
            (void)snprintf(name, sizeof(name), "%s:%s", p->name, p->param_name);
        } else {
            (void)snprintf(name, sizeof(name), "%s", p->name);
        }
        fprintf(out, "%-21s %s", name, p->summary);
        if (p->matrix != NULL) {
            char names[512];
            datagen_names(names, sizeof(names));
            fprintf(out, " [%s]", names);
        } else if (p->param_name != NULL) {
            fprintf(out, " [%.10g; %.10g..%.10g]", p->param_default, p->param_min, p->param_max);
        }
        fputc('\n', out);
    }
}

int bench_spec_parse(const char *text, struct bench_spec *spec)
{
    char name[64];
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len == 0 || len >= sizeof(name)) {
        return util_error("bad pattern (%s); see --patterns help", text);
    }
    memcpy(name, text, len);
    name[len] = '\0';
    const struct bench_pattern *p = bench_pattern_find(name);
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
    if (p->matrix != NULL) {
        spec->dist = colon != NULL ? datagen_find(colon + 1) : NULL;
        if (spec->dist == NULL) {
            char names[512];
            datagen_names(names, sizeof(names));
            return util_error("%s needs a distribution, %s:NAME (%s); valid: %s", p->name, p->name,
                              text, names);
        }
        return UTIL_OK;
    }
    if (colon != NULL) {
        if (p->param_name == NULL) {
            return util_error("pattern %s takes no parameter (%s)", p->name, text);
        }
        if (util_parse_double(colon + 1, p->param_min, p->param_max, &spec->param) != UTIL_OK ||
            (p->param_integral && spec->param != (double)(long)spec->param)) {
            return util_error("%s: the %s must be a %s from %.10g to %.10g (%s)", p->name,
                              p->param_name, p->param_integral ? "whole number" : "number",
                              p->param_min, p->param_max, colon + 1);
        }
    }
    return UTIL_OK;
}

void bench_spec_param(const struct bench_spec *spec, char *buf, size_t cap)
{
    if (spec->dist != NULL) {
        (void)snprintf(buf, cap, "%s", spec->dist->name);
    } else if (spec->pattern->param_name != NULL) {
        (void)snprintf(buf, cap, "%g", spec->param);
    } else if (cap > 0) {
        buf[0] = '\0';
    }
}

void bench_spec_label(const struct bench_spec *spec, char *buf, size_t cap)
{
    char param[64];
    bench_spec_param(spec, param, sizeof(param));
    (void)snprintf(buf, cap, "%s%s%s", spec->pattern->name, param[0] ? ":" : "", param);
}

int bench_spec_row(const struct bench_spec *spec, int src, uint64_t *row)
{
    size_t P = (size_t)spec->ranks;
    if (spec->pattern->matrix != NULL) {
        uint64_t *m = util_calloc(P * P, sizeof(*m));
        if (m == NULL) {
            return UTIL_ENOMEM;
        }
        int err = spec->pattern->matrix(spec, m);
        memcpy(row, m + (size_t)src * P, P * sizeof(*row));
        util_free(m);
        return err;
    }
    memset(row, 0, P * sizeof(uint64_t));
    return spec->pattern->row(spec, src, row);
}

int bench_spec_matrix(const struct bench_spec *spec, uint64_t *matrix)
{
    if (spec->pattern->matrix != NULL) {
        memset(matrix, 0, (size_t)spec->ranks * (size_t)spec->ranks * sizeof(*matrix));
        return spec->pattern->matrix(spec, matrix);
    }
    for (int i = 0; i < spec->ranks; i++) {
        int err = bench_spec_row(spec, i, matrix + (size_t)i * (size_t)spec->ranks);
        if (err != UTIL_OK) {
            return err;
        }
    }
    return UTIL_OK;
}

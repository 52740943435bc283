/*
 * sim/counts.c: the count matrix a sort hands its exchange, without MPI (see sim.h).
 *
 * The sort's sample, splitter and bucket phases for P ranks in one process, with the sort's own
 * rules (sort/rules.h); only the collectives are replaced by loops over the ranks:
 *   - --balance sample: sort_sample_total() and its refusal, sort_sample_count(),
 *     sort_sample_index(), sort_splitter_index();
 *   - --balance eps and exact: the histogram rounds of sort/select.c replayed draw for draw
 *     (each rank's draws from its own local ranges with the generator of sort_split_seed(),
 *     sort_split_draw(), sort_split_choose(), sort_split_next_want()), so the splitters
 *     are the very ones a run picks; beyond SIM_REPLAY_MAX_P ranks (the replay keeps P^2 local
 *     bounds) the splitters are the exact targets, which eps reaches within its window;
 *   - the buckets by sort_bucket_boundary() and the (key, position) order of
 *     sort_tuple_order().
 * tests/35-simulator.bats compares the matrix with what a real run reports.
 */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

#include "local/local.h"
#include "sort/rules.h"
#include "util/alloc.h"
#include "util/util.h"

/* The most ranks the histogram rounds are replayed draw for draw. */
#define SIM_REPLAY_MAX_P 1024

/* The P ranks' sorted slices, all in one array: rank r's at keys[begin[r] .. begin[r + 1]). */
struct slices {
    const uint64_t *keys;
    const uint64_t *begin; /* [P + 1] */
    int p;
};

/* Elements below (key, pos) on all ranks: the global rank of that element. */
static uint64_t global_below(const struct slices *sl, uint64_t key, uint64_t pos, uint64_t *per)
{
    uint64_t sum = 0;
    for (int r = 0; r < sl->p; r++) {
        uint64_t b = sl->begin[r], m = sl->begin[r + 1] - b;
        uint64_t below = sort_bucket_boundary(sl->keys + b, m, b, key, pos);
        if (per != NULL) {
            per[r] = below;
        }
        sum += below;
    }
    return sum;
}

/* The drawn candidates of a round, as (position, key) pairs: vqsort's 128-bit order is then the
 * (key, position) order. */
struct drawn {
    uint64_t *pairs;
    uint64_t n, cap, base;
    const uint64_t *keys;
};

static int keep(void *arg, uint64_t i)
{
    struct drawn *d = arg;
    if (d->n == d->cap) {
        uint64_t cap = d->cap ? 2 * d->cap : 1024;
        uint64_t *p = util_realloc(d->pairs, 2 * cap * sizeof(*p));
        if (p == NULL) {
            return UTIL_ENOMEM;
        }
        d->pairs = p;
        d->cap = cap;
    }
    d->pairs[2 * d->n] = d->base + i;
    d->pairs[2 * d->n + 1] = d->keys[d->base + i];
    d->n++;
    return UTIL_OK;
}

/*
 * The histogram selection of sort/select.c over the P slices, into split[0..P-1): every round
 * each rank draws from its own local ranges of the open brackets with its own generator, the
 * candidates are sorted, their global ranks counted, and the brackets updated by the sort's
 * rules. @tol is the window half-width (sort_split_tolerance()).
 */
/* The state of a replay: every rank's own counts inside every bracket, and the splitters. */
struct replay {
    const struct slices *sl;
    const struct drawn *d;
    uint64_t *l_lo, *l_hi; /* [P][P - 1] rank q's elements inside bracket j: [l_lo, l_hi) */
    uint64_t *per;         /* [P] scratch: each rank's elements below a candidate */
    struct sort_tuple *split;
};

/* A bracket's event, as every rank of the sort sees it (sort/select.c, on_event()). */
static void on_event(void *arg, int j, enum sort_split_event what, uint64_t c)
{
    struct replay *rp = arg;
    const struct slices *sl = rp->sl;
    size_t nb = (size_t)sl->p - 1;
    uint64_t pos = rp->d->pairs[2 * c], key = rp->d->pairs[2 * c + 1];
    if (what == SORT_SPLIT_TAKE) {
        rp->split[j] = (struct sort_tuple){pos, key};
        return;
    }
    (void)global_below(sl, key, pos, rp->per);
    for (int q = 0; q < sl->p; q++) {
        if (what == SORT_SPLIT_LOWER) { /* the element itself counts where it lives */
            int local = pos >= sl->begin[q] && pos < sl->begin[q + 1];
            rp->l_lo[(size_t)q * nb + (size_t)j] = rp->per[q] + (local ? 1 : 0);
        } else {
            rp->l_hi[(size_t)q * nb + (size_t)j] = rp->per[q];
        }
    }
}

static int replay_histogram(const struct slices *sl, uint64_t n, uint64_t tol,
                            struct sort_tuple *split)
{
    int p = sl->p, err = UTIL_OK;
    size_t nb = (size_t)p - 1;
    struct sort_bracket *br = util_malloc(nb * sizeof(*br));
    uint64_t *ranks = NULL;
    struct drawn d = {NULL, 0, 0, 0, sl->keys};
    struct replay rp = {sl, &d, util_calloc(nb * (size_t)p, sizeof(uint64_t)),
                        util_malloc(nb * (size_t)p * sizeof(uint64_t)),
                        util_malloc((size_t)p * sizeof(uint64_t)), split};
    struct sort_split_range *r = util_malloc(nb * sizeof(*r));
    if (!br || !rp.l_lo || !rp.l_hi || !rp.per || !r) {
        err = util_fail(UTIL_ENOMEM, "out of memory for %d brackets", p);
        goto out;
    }
    uint64_t open = sort_split_start(br, p, n, tol);
    for (size_t j = 0; j < nb; j++) {
        split[j] = (struct sort_tuple){UINT64_MAX, UINT64_MAX};
        for (int q = 0; q < p; q++) {
            rp.l_hi[(size_t)q * nb + j] = sl->begin[q + 1] - sl->begin[q];
        }
    }
    for (int round = 0; open > 0; round++) {
        d.n = 0;
        for (int q = 0; q < p && err == UTIL_OK; q++) {
            sort_split_ranges(br, p, rp.l_lo + (size_t)q * nb, rp.l_hi + (size_t)q * nb, r);
            uint64_t rng = sort_split_seed(round, q);
            d.base = sl->begin[q];
            err = sort_split_draw(r, nb, &rng, keep, &d);
        }
        util_free(ranks);
        ranks = util_malloc((d.n ? d.n : 1) * sizeof(uint64_t));
        if (err != UTIL_OK || ranks == NULL) {
            err = util_fail(UTIL_ENOMEM, "out of memory for the candidates");
            goto out;
        }
        local_vqsort_u128(d.pairs, d.n);
        for (uint64_t c = 0; c < d.n; c++) {
            ranks[c] = global_below(sl, d.pairs[2 * c + 1], d.pairs[2 * c], NULL);
        }
        open = sort_split_update(br, p, n, tol, NULL, ranks, d.n, on_event, &rp);
    }
out:
    util_free(br);
    util_free(rp.l_lo);
    util_free(rp.l_hi);
    util_free(rp.per);
    util_free(r);
    util_free(d.pairs);
    util_free(ranks);
    return err;
}

/* The splitters at the exact targets: the elements of global rank sort_split_target(j),
 * picked from all n elements sorted in (key, position) order. */
static int exact_targets(const struct slices *sl, uint64_t n, struct sort_tuple *split)
{
    uint64_t *pairs = util_alloc_big(2 * (n ? n : 1) * sizeof(uint64_t));
    if (pairs == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory for %llu tuples", (unsigned long long)n);
    }
    for (uint64_t i = 0; i < n; i++) {
        pairs[2 * i] = i; /* (position, key): vqsort's order is then (key, position) */
        pairs[2 * i + 1] = sl->keys[i];
    }
    local_vqsort_u128(pairs, n);
    for (int j = 1; j < sl->p; j++) {
        uint64_t t = sort_split_target(j, n, sl->p);
        split[j - 1] = t < n ? (struct sort_tuple){pairs[2 * t], pairs[2 * t + 1]}
                             : (struct sort_tuple){UINT64_MAX, UINT64_MAX};
    }
    util_free_big(pairs);
    return UTIL_OK;
}

/* One simulated sort: all n keys, where the P ranks' slices lie in them, the sample and the
 * splitters. */
struct counts_job {
    const struct datagen_params *dp;
    uint64_t n, p;
    int threads;
    int regular;    /* --balance sample: splitters from the sample */
    uint64_t total; /* the sample's size T, with regular */
    uint64_t *keys, *scratch;
    uint64_t *begin; /* [P + 1] where each rank's slice starts in keys */
    struct sort_tuple *sample, *split;
    uint64_t t; /* samples taken */
};

/* The keys, a slice's sort scratch, the sample, the slices' bounds and the splitters. */
static int counts_alloc(struct counts_job *j)
{
    uint64_t n = j->n, p = j->p, slice_max = 0;
    for (uint64_t r = 0; r < p; r++) {
        uint64_t m = datagen_slice_begin(n, p, r + 1) - datagen_slice_begin(n, p, r);
        slice_max = m > slice_max ? m : slice_max;
    }
    j->keys = util_alloc_big(n * sizeof(uint64_t));
    j->scratch = util_malloc((slice_max ? slice_max : 1) * sizeof(uint64_t));
    j->sample = util_malloc((size_t)(j->total < n ? j->total + p : n + 1) * sizeof(*j->sample));
    j->begin = util_malloc(((size_t)p + 1) * sizeof(uint64_t));
    j->split = util_malloc((size_t)p * sizeof(*j->split));
    if (j->keys == NULL || j->scratch == NULL || j->sample == NULL || j->split == NULL ||
        j->begin == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory for %llu keys and their sample",
                         (unsigned long long)n);
    }
    return UTIL_OK;
}

/* Read and local sort of rank r: its slice, generated as the file holds it, sorted; then its
 * sample. */
static int counts_slice(struct counts_job *j, uint64_t r)
{
    uint64_t n = j->n, p = j->p, *keys = j->keys;
    uint64_t b = datagen_slice_begin(n, p, r), m = datagen_slice_begin(n, p, r + 1) - b;
    int err;
    if ((err = datagen_fill_threads(j->dp, b, m, keys + b, j->threads)) != UTIL_OK ||
        (err = local_sort(keys + b, j->scratch, (size_t)m, j->threads)) != UTIL_OK) {
        return err;
    }
    j->begin[r] = b;
    j->begin[r + 1] = b + m;
    /* Sample: this rank's share of T, at the centres of equal gaps. */
    uint64_t sr = j->regular ? sort_sample_count(j->total, m, n) : 0;
    for (uint64_t k = 0; k < sr; k++) {
        uint64_t idx = sort_sample_index(k, sr, m);
        j->sample[j->t].key = keys[b + idx];
        j->sample[j->t].pos = b + idx;
        j->t++;
    }
    return UTIL_OK;
}

/* Splitters at regular ranks of the sorted sample. */
static void counts_sample_splitters(struct counts_job *j)
{
    uint64_t p = j->p, t = j->t;
    qsort(j->sample, (size_t)t, sizeof(*j->sample), sort_tuple_cmp);
    for (uint64_t k = 1; k < p && j->regular; k++) {
        if (t == 0) {
            j->split[k - 1] = (struct sort_tuple){UINT64_MAX, UINT64_MAX};
        } else {
            j->split[k - 1] = j->sample[sort_splitter_index((int)k, t, (int)p)];
        }
    }
}

/* Buckets: every rank cuts its sorted keys at the splitters, into counts[r * P + j]. */
static void counts_buckets(const struct counts_job *j, uint64_t *counts)
{
    uint64_t n = j->n, p = j->p;
    const struct sort_tuple *split = j->split;
    for (uint64_t r = 0; r < p; r++) {
        uint64_t b = datagen_slice_begin(n, p, r), m = datagen_slice_begin(n, p, r + 1) - b;
        uint64_t prev = 0;
        for (uint64_t d = 0; d < p; d++) {
            uint64_t next =
                d + 1 < p ? sort_bucket_boundary(j->keys + b, m, b, split[d].key, split[d].pos) : m;
            next = next < prev ? prev : next;
            counts[r * p + d] = next - prev;
            prev = next;
        }
    }
}

int sim_sort_counts(const struct datagen_params *dp, double epsilon, uint64_t oversample,
                    enum sortex_balance balance, int threads, uint64_t *counts)
{
    struct counts_job j = {.dp = dp, .n = dp->n, .p = dp->ranks};
    uint64_t n = j.n, p = j.p;
    int err = UTIL_OK;
    j.threads = threads > 0 ? threads : 1;
    /* The sample size, and the sort's own refusal of too many samples. */
    uint64_t s = oversample;
    if (s == 0) {
        s = sort_default_oversample((int)p, epsilon > 0 ? epsilon : 0.1);
    }
    balance = sort_balance_resolve(balance, (int)p, epsilon > 0 ? epsilon : 0.1, oversample);
    j.regular = balance == SORTEX_BALANCE_SAMPLE;
    if (j.regular && sort_sample_total(s, (int)p, &j.total) != UTIL_OK) {
        return util_error("the sort would refuse %llu samples (--oversample %llu with P = %llu)",
                          (unsigned long long)s * p, (unsigned long long)s,
                          (unsigned long long)p);
    }
    if ((err = counts_alloc(&j)) != UTIL_OK) {
        goto fail;
    }
    for (uint64_t r = 0; r < p && err == UTIL_OK; r++) {
        err = counts_slice(&j, r);
    }
    if (err != UTIL_OK) {
        goto fail;
    }
    if (!j.regular && p > 1) {
        /* The histogram rounds, or beyond the replay's reach the targets they aim at. */
        struct slices sl = {j.keys, j.begin, (int)p};
        uint64_t tol = sort_split_tolerance(n, (int)p, epsilon > 0 ? epsilon : 0.1,
                                              balance == SORTEX_BALANCE_EXACT);
        err = p <= SIM_REPLAY_MAX_P ? replay_histogram(&sl, n, tol, j.split)
                                    : exact_targets(&sl, n, j.split);
        if (err != UTIL_OK) {
            goto fail;
        }
    }
    counts_sample_splitters(&j);
    counts_buckets(&j, counts);
fail:
    util_free_big(j.keys);
    util_free(j.scratch);
    util_free(j.sample);
    util_free(j.split);
    util_free(j.begin);
    return err;
}

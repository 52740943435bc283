/*
 * sim/counts.c: the count matrix a sort hands its exchange, without MPI (see sim.h).
 *
 * The sort's sample, splitter and bucket phases for P ranks in one process, with the sort's own
 * rules (sort/rules.h); only the collectives are replaced by loops over the ranks:
 *   - --balance sample: sortex_sample_total() and its refusal, sortex_sample_count(),
 *     sortex_sample_index(), sortex_splitter_index();
 *   - --balance eps and exact: the histogram rounds of sort/select.c replayed draw for draw
 *     (each rank's draws from its own local ranges with the generator of sortex_split_seed(),
 *     sortex_split_draw(), sortex_split_choose(), sortex_split_next_want()), so the splitters
 *     are the very ones a run picks; beyond SIM_REPLAY_MAX_P ranks (the replay keeps P^2 local
 *     bounds) the splitters are the exact targets, which eps reaches within its window;
 *   - the buckets by sortex_bucket_boundary() and the (key, position) order of
 *     sortex_tuple_order().
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

/* A sample: a key and its global position. */
struct model_tuple {
    uint64_t key, pos;
};

static int tuple_cmp(const void *x, const void *y)
{
    const struct model_tuple *a = x, *b = y;
    return sortex_tuple_order(a->key, a->pos, b->key, b->pos);
}

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
        uint64_t below = sortex_bucket_boundary(sl->keys + b, m, b, key, pos);
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
 * rules. @tol is the window half-width (sortex_split_tolerance()).
 */
static int replay_histogram(const struct slices *sl, uint64_t n, uint64_t tol,
                            struct model_tuple *split)
{
    int p = sl->p, err = UTIL_OK;
    size_t nb = (size_t)p - 1;
    uint64_t *g_lo = util_calloc(nb, sizeof(uint64_t)), *g_hi = util_malloc(nb * 8);
    uint64_t *want = util_malloc(nb * 8), *ranks = NULL;
    unsigned char *done = util_calloc(nb, 1), *narrowed = util_calloc(nb, 1);
    uint64_t *l_lo = util_calloc(nb * (size_t)p, sizeof(uint64_t));
    uint64_t *l_hi = util_malloc(nb * (size_t)p * sizeof(uint64_t));
    uint64_t *per = util_malloc((size_t)p * sizeof(uint64_t));
    struct sortex_split_range *r = util_malloc(nb * sizeof(*r));
    struct drawn d = {NULL, 0, 0, 0, sl->keys};
    if (!g_lo || !g_hi || !want || !done || !narrowed || !l_lo || !l_hi || !per || !r) {
        err = util_fail(UTIL_ENOMEM, "out of memory for %d brackets", p);
        goto out;
    }
    uint64_t open = n > 0 ? nb : 0, base = sortex_split_want(nb, n, tol, nb);
    for (size_t j = 0; j < nb; j++) {
        g_hi[j] = n;
        want[j] = base;
        done[j] = n == 0;
        split[j].key = split[j].pos = UINT64_MAX;
        for (int q = 0; q < p; q++) {
            l_hi[(size_t)q * nb + j] = sl->begin[q + 1] - sl->begin[q];
        }
    }
    for (int round = 0; open > 0; round++) {
        d.n = 0;
        for (int q = 0; q < p && err == UTIL_OK; q++) {
            for (size_t j = 0; j < nb; j++) {
                r[j] = (struct sortex_split_range){l_lo[(size_t)q * nb + j],
                                                   l_hi[(size_t)q * nb + j],
                                                   sortex_split_density(g_hi[j] - g_lo[j], want[j]),
                                                   done[j]};
            }
            uint64_t rng = sortex_split_seed(round, q);
            d.base = sl->begin[q];
            err = sortex_split_draw(r, nb, &rng, keep, &d);
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
        open = 0;
        for (size_t j = 0; j < nb; j++) {
            if (done[j]) {
                continue;
            }
            uint64_t t = sortex_split_target((int)j + 1, n, p), take, below, above;
            if (sortex_split_choose(ranks, d.n, t, tol, &take, &below, &above)) {
                split[j].key = d.pairs[2 * take + 1];
                split[j].pos = d.pairs[2 * take];
                done[j] = 1;
                continue;
            }
            uint64_t mass = g_hi[j] - g_lo[j];
            if (below < d.n && ranks[below] + 1 > g_lo[j]) {
                uint64_t pos = d.pairs[2 * below];
                g_lo[j] = ranks[below] + 1;
                (void)global_below(sl, d.pairs[2 * below + 1], pos, per);
                for (int q = 0; q < p; q++) { /* the element itself counts where it lives */
                    int local = pos >= sl->begin[q] && pos < sl->begin[q + 1];
                    l_lo[(size_t)q * nb + j] = per[q] + (local ? 1 : 0);
                }
            }
            if (above < d.n && ranks[above] < g_hi[j]) {
                g_hi[j] = ranks[above];
                (void)global_below(sl, d.pairs[2 * above + 1], d.pairs[2 * above], per);
                for (int q = 0; q < p; q++) {
                    l_hi[(size_t)q * nb + j] = per[q];
                }
            }
            narrowed[j] = g_hi[j] - g_lo[j] < mass;
            open++;
        }
        for (size_t j = 0; j < nb; j++) {
            if (!done[j]) {
                base = sortex_split_want(open, g_hi[j] - g_lo[j], tol, 1);
                want[j] = sortex_split_next_want(narrowed[j], g_hi[j] - g_lo[j], want[j], base);
            }
        }
    }
out:
    util_free(g_lo);
    util_free(g_hi);
    util_free(want);
    util_free(done);
    util_free(narrowed);
    util_free(l_lo);
    util_free(l_hi);
    util_free(per);
    util_free(r);
    util_free(d.pairs);
    util_free(ranks);
    return err;
}

/* The splitters at the exact targets: the elements of global rank sortex_split_target(j),
 * picked from all n elements sorted in (key, position) order. */
static int exact_targets(const struct slices *sl, uint64_t n, struct model_tuple *split)
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
        uint64_t t = sortex_split_target(j, n, sl->p);
        split[j - 1].key = t < n ? pairs[2 * t + 1] : UINT64_MAX;
        split[j - 1].pos = t < n ? pairs[2 * t] : UINT64_MAX;
    }
    util_free_big(pairs);
    return UTIL_OK;
}

int sim_sort_counts(const struct datagen_params *dp, double epsilon, uint64_t oversample,
                    enum sortex_balance balance, int threads, uint64_t *counts)
{
    uint64_t n = dp->n, p = dp->ranks;
    uint64_t *keys = NULL, *scratch = NULL;
    struct model_tuple *sample = NULL, *split = NULL;
    int err = UTIL_OK;
    threads = threads > 0 ? threads : 1;
    uint64_t slice_max = 0;
    for (uint64_t r = 0; r < p; r++) {
        uint64_t m = datagen_slice_begin(n, p, r + 1) - datagen_slice_begin(n, p, r);
        slice_max = m > slice_max ? m : slice_max;
    }
    /* The sample size, and the sort's own refusal of too many samples. */
    uint64_t s = oversample;
    if (s == 0) {
        s = sortex_default_oversample((int)p, epsilon > 0 ? epsilon : 0.1);
    }
    uint64_t total = 0;
    balance = sortex_balance_resolve(balance, (int)p, epsilon > 0 ? epsilon : 0.1, oversample);
    int regular = balance == SORTEX_BALANCE_SAMPLE;
    if (regular && sortex_sample_total(s, (int)p, &total) != UTIL_OK) {
        return util_error("the sort would refuse %llu samples (--oversample %llu with P = %llu)",
                          (unsigned long long)s * p, (unsigned long long)s,
                          (unsigned long long)p);
    }
    keys = util_alloc_big(n * sizeof(uint64_t));
    scratch = util_malloc((slice_max ? slice_max : 1) * sizeof(uint64_t));
    sample = util_malloc((size_t)(total < n ? total + p : n + 1) * sizeof(*sample));
    uint64_t *begin = util_malloc(((size_t)p + 1) * sizeof(uint64_t));
    split = util_malloc((size_t)p * sizeof(*split));
    if (keys == NULL || scratch == NULL || sample == NULL || split == NULL || begin == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for %llu keys and their sample",
                        (unsigned long long)n);
        goto fail;
    }
    /* Read and local sort: every rank's slice, generated as the file holds it, sorted. */
    uint64_t t = 0;
    for (uint64_t r = 0; r < p && err == UTIL_OK; r++) {
        uint64_t b = datagen_slice_begin(n, p, r), m = datagen_slice_begin(n, p, r + 1) - b;
        if ((err = datagen_fill_threads(dp, b, m, keys + b, threads)) != UTIL_OK ||
            (err = local_sort(keys + b, scratch, (size_t)m, threads)) != UTIL_OK) {
            break;
        }
        begin[r] = b;
        begin[r + 1] = b + m;
        /* Sample: this rank's share of T, at the centres of equal gaps. */
        uint64_t sr = regular ? sortex_sample_count(total, m, n) : 0;
        for (uint64_t k = 0; k < sr; k++) {
            uint64_t idx = sortex_sample_index(k, sr, m);
            sample[t].key = keys[b + idx];
            sample[t].pos = b + idx;
            t++;
        }
    }
    if (err != UTIL_OK) {
        goto fail;
    }
    if (!regular && p > 1) {
        /* The histogram rounds, or beyond the replay's reach the targets they aim at. */
        struct slices sl = {keys, begin, (int)p};
        uint64_t tol = sortex_split_tolerance(n, (int)p, epsilon > 0 ? epsilon : 0.1,
                                              balance == SORTEX_BALANCE_EXACT);
        err = p <= SIM_REPLAY_MAX_P ? replay_histogram(&sl, n, tol, split)
                                    : exact_targets(&sl, n, split);
        if (err != UTIL_OK) {
            goto fail;
        }
    }
    /* Splitters at regular ranks of the sorted sample. */
    qsort(sample, (size_t)t, sizeof(*sample), tuple_cmp);
    for (uint64_t j = 1; j < p && regular; j++) {
        if (t == 0) {
            split[j - 1].key = split[j - 1].pos = UINT64_MAX;
        } else {
            split[j - 1] = sample[sortex_splitter_index((int)j, t, (int)p)];
        }
    }
    /* Buckets: every rank cuts its sorted keys at the splitters. */
    for (uint64_t r = 0; r < p; r++) {
        uint64_t b = datagen_slice_begin(n, p, r), m = datagen_slice_begin(n, p, r + 1) - b;
        uint64_t prev = 0;
        for (uint64_t j = 0; j < p; j++) {
            uint64_t next =
                j + 1 < p ? sortex_bucket_boundary(keys + b, m, b, split[j].key, split[j].pos) : m;
            next = next < prev ? prev : next;
            counts[r * p + j] = next - prev;
            prev = next;
        }
    }
fail:
    util_free_big(keys);
    util_free(scratch);
    util_free(sample);
    util_free(split);
    util_free(begin);
    return err;
}

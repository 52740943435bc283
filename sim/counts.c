/*
 * sim/counts.c: the count matrix a sort hands its exchange, without MPI (see sim.h).
 *
 * The sort's sample, splitter and bucket phases for P ranks in one process, with the sort's own
 * rules (sort/rules.h: sortex_sample_total() and its refusal, sortex_sample_count(),
 * sortex_sample_index(), sortex_splitter_index(), sortex_bucket_boundary(), the (key, position)
 * order of sortex_tuple_order()); only the collectives are replaced by loops over the ranks.
 * tests/35-simulator.bats compares the matrix with what a real run reports.
 */
#include "sim/sim.h"

#include <stdlib.h>

#include "sort/local_sort.h"
#include "sort/rules.h"
#include "util/alloc.h"
#include "util/util.h"

/* A sample: a key and its global position. */
struct model_tuple {
    uint64_t key, pos;
};

static int tuple_cmp(const void *x, const void *y)
{
    const struct model_tuple *a = x, *b = y;
    return sortex_tuple_order(a->key, a->pos, b->key, b->pos);
}

int sim_sort_counts(const struct datagen_params *dp, double epsilon, uint64_t oversample,
                    int threads, uint64_t *counts)
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
    if (sortex_sample_total(s, (int)p, &total) != UTIL_OK) {
        return util_error("the sort would refuse %llu samples (--oversample %llu with P = %llu)",
                          (unsigned long long)s * p, (unsigned long long)s,
                          (unsigned long long)p);
    }
    keys = util_alloc_big(n * sizeof(uint64_t));
    scratch = util_malloc((slice_max ? slice_max : 1) * sizeof(uint64_t));
    sample = util_malloc((size_t)(total < n ? total + p : n + 1) * sizeof(*sample));
    split = util_malloc((size_t)p * sizeof(*split));
    if (keys == NULL || scratch == NULL || sample == NULL || split == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for %llu keys and their sample",
                        (unsigned long long)n);
        goto fail;
    }
    /* Read and local sort: every rank's slice, generated as the file holds it, sorted. */
    uint64_t t = 0;
    for (uint64_t r = 0; r < p && err == UTIL_OK; r++) {
        uint64_t b = datagen_slice_begin(n, p, r), m = datagen_slice_begin(n, p, r + 1) - b;
        if ((err = datagen_fill_threads(dp, b, m, keys + b, threads)) != UTIL_OK ||
            (err = sortex_local_sort(keys + b, scratch, (size_t)m, threads)) != UTIL_OK) {
            break;
        }
        /* Sample: this rank's share of T, at the centres of equal gaps. */
        uint64_t sr = sortex_sample_count(total, m, n);
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
    /* Splitters at regular ranks of the sorted sample. */
    qsort(sample, (size_t)t, sizeof(*sample), tuple_cmp);
    for (uint64_t j = 1; j < p; j++) {
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
    return err;
}

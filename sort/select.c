/*
 * sort/select.c: phases 3 and 4 with --balance eps or exact: the P-1 splitters by histogram
 * refinement, in O(P) words per rank and round instead of the P (P+1)/eps samples that the
 * regular sample all-gathers (sort/sample.c, --balance sample).
 *
 * Scheme (histogram sort with sampling: Harsh, Kale and Solomonik, "Histogram Sort with
 * Sampling", SPAA 2019, sections 3 and 4). Every rank holds its elements sorted, and an
 * element's global rank is the number of elements below it in (key, position) order on all
 * ranks. Splitter j should have a global rank within tol of its target t_j = floor(j n / P)
 * (rules.h: sort_split_target(), sort_split_tolerance()). With levels (sort/levels.c) the ranks
 * are those of the level's group, the splitters the k - 1 between its k groups, and each aims
 * at the final target of the rank where its group begins (sort_level_target()), with the same
 * tol: the selection is the same, on fewer splitters. Every unresolved splitter keeps
 * a bracket: the global and local counts of elements at or below its lower end and below its
 * upper end, known to enclose its window; at first the whole input. A round:
 *   1. every rank draws candidates among its elements inside the brackets, each with the
 *      probability want / mass summed over the brackets that hold it (want: k = 8 expected
 *      candidates per bracket, more while the U unresolved brackets share fewer than 1024 in
 *      all; a bracket of at most 4k elements is drawn whole);
 *   2. the candidates are all-gathered and sorted, the same on every rank;
 *   3. every rank counts its elements below each candidate, in one sweep of its sorted
 *      elements, each search starting where the last ended (keys through the count's index
 *      of every 256th key once a round has enough candidates to pay for it: rules.h,
 *      sort_count_below()), and an all-reduce sums the counts: every candidate's global rank;
 *   4. a splitter with a candidate inside its window takes it; the others narrow their bracket
 *      to the nearest candidates either side of the window.
 * All ranks compute the same brackets from the same histogram, so a round costs one all-gather
 * of about k U candidates and one all-reduce of their counts (U unresolved splitters). The
 * nearest of k uniform draws either side of a point are about mass / k away, so a bracket
 * shrinks by about want / 2 a round: the windows of --balance eps (eps n / P wide) are found
 * in one or two rounds, exact targets in about log_{k/2}(n / (k P)) more (fewer at small P,
 * where want is larger).
 *
 * Every round leaves each rank the count of its elements below every candidate: the brackets'
 * local ends and, for each splitter taken, the bucket phase's boundary (job->cut) come from it,
 * without a binary search.
 *
 * Determinism: the draws come from a generator seeded by the round and the rank, so the same
 * input on the same P gives the same splitters. The balance does not rest on chance: every
 * candidate's rank is counted exactly and the loop ends only when every splitter is inside its
 * window. A bracket a round failed to narrow draws twice as many candidates the next time, and
 * one of at most 4k elements is drawn whole, so the loop ends.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sort/internal.h"
#include "util/alloc.h"
#include "util/util.h"

struct sort_select {
    int k;                   /* buckets: P, or the groups of the level that runs */
    struct sort_bracket *br; /* [k - 1] the splitters' brackets, the same on every rank */
    uint64_t *target;        /* [k - 1] the global rank each splitter aims at */
    uint64_t *l_lo, *l_hi;   /* [k - 1] this rank's elements inside bracket j: [l_lo, l_hi) */
    uint64_t tol;       /* window half-width */
    size_t cw;          /* words per candidate */
    uint64_t *cand;     /* the round's candidates, sorted: C x cw words */
    uint64_t ncand;
    uint64_t *rank;     /* [C] this rank's elements below each candidate, then the global
                           ranks (32 bytes a candidate with the tuple and local: 16 MiB at
                           P = 65536) */
    uint64_t *local;    /* [C] this rank's elements below each candidate, kept */
    uint64_t *index;    /* numbers: the count's index of this rank's keys (rules.h), made by
                           the first round when its candidates are enough to pay for it */
    int round;
};

/* ---- elements and candidates ---------------------------------------------------------------
 * A candidate is an element with its global position, in the tie-break's encoding (rules.h):
 * numbers as a struct sort_tuple (two words, which Highway's 128-bit sort orders by key, then
 * position), records as a blob (key bytes zero padded, then the position). */

static uint64_t cand_pos(const struct sort_job *job, const uint64_t *c)
{
    return job->fmt != NULL ? c[job->blob_words - 1] : ((const struct sort_tuple *)c)->pos;
}

static void make_cand(const struct sort_job *job, uint64_t idx, uint64_t *c)
{
    if (job->fmt != NULL) {
        const unsigned char *rec = (const unsigned char *)sort_elem(job, job->a, idx);
        sort_blob_make(c, rec + job->fmt->key_offset, job->fmt->key_size, job->offset + idx);
    } else {
        *(struct sort_tuple *)c = (struct sort_tuple){job->offset + idx, job->a[idx]};
    }
}

/* Whether this rank's element @idx is below candidate @c in (key, position) order. */
static int elem_below(const struct sort_job *job, uint64_t idx, const uint64_t *c)
{
    uint64_t pos = job->offset + idx;
    if (job->fmt != NULL) {
        const unsigned char *rec = (const unsigned char *)sort_elem(job, job->a, idx);
        return sort_key_blob_order(rec + job->fmt->key_offset, job->fmt->key_size, pos, c) < 0;
    }
    struct sort_tuple e = {pos, job->a[idx]};
    return sort_tuple_order(&e, (const struct sort_tuple *)c) < 0;
}

/* This rank's elements below @c, searched from @from on (galloping: the candidates come in
 * ascending order, so each search starts where the last ended); numbers through the count's
 * index when the selection made one (rules.h, sort_count_below()). */
static uint64_t count_below(const struct sort_job *job, const struct sort_select *sel,
                            const uint64_t *c, uint64_t from)
{
    if (job->fmt == NULL) {
        return sort_count_below(job->a, job->n_local, job->offset, sel->index,
                                (const struct sort_tuple *)c, from, NULL);
    }
    uint64_t m = job->n_local, lo = from, step = 1, hi;
    if (lo >= m || !elem_below(job, lo, c)) {
        return lo;
    }
    for (;;) { /* elem_below(lo) holds */
        hi = lo + step;
        if (hi >= m) {
            hi = m;
            break;
        }
        if (!elem_below(job, hi, c)) {
            break;
        }
        lo = hi;
        step *= 2;
    }
    for (lo++; lo < hi;) { /* the answer is in [lo, hi] */
        uint64_t mid = lo + (hi - lo) / 2;
        if (elem_below(job, mid, c)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* A growing array of local indices. */
struct picks {
    uint64_t *idx;
    uint64_t n, cap;
};

static int pick(void *arg, uint64_t i)
{
    struct picks *pk = arg;
    if (pk->n == pk->cap) {
        uint64_t cap = pk->cap ? 2 * pk->cap : 1024;
        uint64_t *p = util_realloc(pk->idx, cap * sizeof(*p));
        if (p == NULL) {
            return UTIL_ENOMEM;
        }
        pk->idx = p;
        pk->cap = cap;
    }
    pk->idx[pk->n++] = i;
    return UTIL_OK;
}

/* This rank's draws for the round, from the unresolved brackets' local ranges. */
static int draw(const struct sort_job *job, struct sort_select *sel, struct picks *pk)
{
    int k = sel->k;
    struct sort_split_range *r = util_malloc((size_t)(k > 1 ? k - 1 : 1) * sizeof(*r));
    if (r == NULL) {
        return UTIL_ENOMEM;
    }
    sort_split_ranges(sel->br, k, sel->l_lo, sel->l_hi, r);
    uint64_t rng = sort_split_seed(sel->round, job->rank);
    int rc = sort_split_draw(r, (size_t)(k - 1), &rng, pick, pk);
    util_free(r);
    return rc;
}

/* Draws, all-gathers and sorts the round's candidates into sel->cand. A rank that cannot
 * allocate takes part in the agreement, so that no rank waits in a collective for it. */
static int gather(struct sort_job *job, struct sort_select *sel)
{
    int p = job->size, err = UTIL_OK;
    struct picks pk = {NULL, 0, 0};
    uint64_t *mine = NULL;
    int *counts = util_malloc(2 * (size_t)p * sizeof(int));
    if (counts == NULL || draw(job, sel, &pk) != UTIL_OK ||
        (mine = util_malloc((pk.n ? pk.n : 1) * sel->cw * sizeof(uint64_t))) == NULL) {
        err = util_fail(UTIL_ENOMEM, "rank %d: splitters: out of memory", job->rank);
    }
    for (uint64_t i = 0; err == UTIL_OK && i < pk.n; i++) {
        make_cand(job, pk.idx[i], mine + i * sel->cw);
    }
    /* Agree on the total (in words, as MPI counts them) and on whether every rank is ready. */
    uint64_t words = err == UTIL_OK ? pk.n * sel->cw : 0;
    uint64_t agg[2] = {words, err != UTIL_OK};
    MPI_Allreduce(MPI_IN_PLACE, agg, 2, MPI_UINT64_T, MPI_SUM, job->comm);
    uint64_t total = agg[0];
    if (agg[1] == 0 && total > INT_MAX) {
        err = job->rank == 0 ? util_fail(UTIL_EUSAGE, "splitters: %llu candidate words are too "
                                                      "many for one all-gather",
                                         (unsigned long long)total)
                             : UTIL_EUSAGE;
        goto done;
    }
    if (agg[1] == 0) {
        util_free(sel->cand);
        sel->cand = util_malloc((total ? total : 1) * sizeof(uint64_t));
        if (sel->cand == NULL) {
            err = util_fail(UTIL_ENOMEM, "rank %d: splitters: out of memory", job->rank);
        }
        agg[1] = sel->cand == NULL;
        MPI_Allreduce(MPI_IN_PLACE, &agg[1], 1, MPI_UINT64_T, MPI_SUM, job->comm);
    }
    if (agg[1] != 0) {
        err = err != UTIL_OK ? err : UTIL_ENOMEM; /* another rank's failure, reported there */
        goto done;
    }
    int mycount = (int)words, *displs = counts + p;
    MPI_Allgather(&mycount, 1, MPI_INT, counts, 1, MPI_INT, job->comm);
    int sum = 0;
    for (int r = 0; r < p; r++) {
        displs[r] = sum;
        sum += counts[r];
    }
    MPI_Allgatherv(mine, mycount, MPI_UINT64_T, sel->cand, counts, displs, MPI_UINT64_T,
                   job->comm);
    sel->ncand = total / sel->cw;
    job->nsample += sel->ncand;
    /* Every rank's part is sorted; the whole is sorted once, the same everywhere. */
    if (job->fmt != NULL) {
        qsort_r(sel->cand, sel->ncand, sel->cw * sizeof(uint64_t), sort_blob_cmp,
                (void *)&job->fmt->key_size);
    } else {
        local_vqsort_u128(sel->cand, sel->ncand);
    }
done:
    util_free(pk.idx);
    util_free(mine);
    util_free(counts);
    return err;
}

/* ---- the rounds ------------------------------------------------------------------------- */

/* Sets splitter j (1-based) to candidate @c, or to the top of the order when @c is NULL. */
static void set_splitter(struct sort_job *job, int j, const uint64_t *c)
{
    if (job->fmt != NULL) {
        uint64_t *sp = job->rsplitters + (size_t)(j - 1) * job->blob_words;
        if (c == NULL) {
            memset(sp, 0xff, job->blob_words * sizeof(uint64_t));
        } else {
            memcpy(sp, c, job->blob_words * sizeof(uint64_t));
        }
        return;
    }
    job->splitters[j - 1] = c != NULL ? *(const struct sort_tuple *)c
                                      : (struct sort_tuple){UINT64_MAX, UINT64_MAX};
}

/* What a bracket's update means on this rank: a taken candidate becomes the splitter; an end
 * that moved to a candidate has this rank's count below it searched again (the candidate itself
 * counts on the rank that holds it, for the lower end). */
struct refined {
    struct sort_job *job;
    struct sort_select *sel;
};

static void on_event(void *arg, int j, enum sort_split_event what, uint64_t i)
{
    struct refined *ctx = arg;
    struct sort_job *job = ctx->job;
    struct sort_select *sel = ctx->sel;
    const uint64_t *cand = sel->cand + i * sel->cw;
    /* The round counted this rank's elements below every candidate: no search again. */
    if (what == SORT_SPLIT_TAKE) {
        set_splitter(job, j + 1, cand);
        job->cut[j] = sel->local[i]; /* the bucket phase's boundary, found */
    } else if (what == SORT_SPLIT_LOWER) {
        uint64_t pos = cand_pos(job, cand);
        int local = pos >= job->offset && pos - job->offset < job->n_local;
        sel->l_lo[j] = sel->local[i] + (local ? 1 : 0);
    } else {
        sel->l_hi[j] = sel->local[i];
    }
}

/* Steps 3 and 4: the histogram of the round's candidates, then every bracket's update. */
static int refine(struct sort_job *job, struct sort_select *sel)
{
    uint64_t c = sel->ncand;
    util_free(sel->rank);
    util_free(sel->local);
    sel->rank = util_malloc((c ? c : 1) * sizeof(uint64_t));
    sel->local = util_malloc((c ? c : 1) * sizeof(uint64_t));
    int ok = sel->rank != NULL && sel->local != NULL;
    int err = ok ? UTIL_OK : util_fail(UTIL_ENOMEM, "rank %d: splitters: out of memory", job->rank);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        return err != UTIL_OK ? err : UTIL_ENOMEM;
    }
    /* The index costs a load a stride of keys; it pays when the first round's searches, over
     * all the keys, would miss more often than that (later rounds search narrow brackets,
     * near each other). Without memory for it the count gallops alone. */
    uint64_t m = job->n_local;
    if (job->fmt == NULL && sel->round == 0 && sort_count_index_pays(c, m)) {
        sel->index = util_malloc(sort_count_index_len(m) * sizeof(uint64_t) + 1);
        if (sel->index != NULL) {
            sort_count_index(job->a, m, sel->index);
        }
    }
    uint64_t at = 0;
    for (uint64_t i = 0; i < c; i++) {
        at = count_below(job, sel, sel->cand + i * sel->cw, at);
        sel->rank[i] = at;
        sel->local[i] = at;
    }
    if (c > 0 && MPI_Allreduce(MPI_IN_PLACE, sel->rank, (int)c, MPI_UINT64_T, MPI_SUM,
                               job->comm) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: splitters: MPI_Allreduce failed", job->rank);
    }
    struct refined ctx = {job, sel};
    sort_split_update(sel->br, sel->k, job->n_total, sel->tol, sel->target, sel->rank, c,
                      on_event, &ctx);
    return UTIL_OK;
}

static int any_open(const struct sort_select *sel)
{
    for (int j = 0; j < sel->k - 1; j++) {
        if (!sel->br[j].done) {
            return 1;
        }
    }
    return 0;
}

void sort_select_free(struct sort_job *job)
{
    struct sort_select *sel = job->select;
    if (sel != NULL) {
        util_free(sel->br);
        util_free(sel->target);
        util_free(sel->l_lo);
        util_free(sel->l_hi);
        util_free(sel->cand);
        util_free(sel->rank);
        util_free(sel->local);
        util_free(sel->index);
        util_free(sel);
        job->select = NULL;
    }
}

int sort_select_sample(struct sort_job *job)
{
    int p = job->size;
    struct sort_select *sel = util_calloc(1, sizeof(*sel));
    size_t bytes = (job->fmt != NULL ? job->blob_words : 2) * sizeof(uint64_t);
    int ok = sel != NULL;
    int k = sort_buckets(job);
    if (ok) {
        job->select = sel;
        sel->k = k;
        size_t nb = (size_t)(k > 1 ? k - 1 : 1);
        sel->br = util_calloc(nb, sizeof(*sel->br));
        sel->target = util_calloc(nb, sizeof(uint64_t));
        sel->l_lo = util_calloc(nb, sizeof(uint64_t));
        sel->l_hi = util_calloc(nb, sizeof(uint64_t));
        if (job->fmt != NULL) { /* the numbers' tuples come with the job */
            util_free(job->rsplitters); /* an earlier level's */
            job->rsplitters = util_malloc((size_t)p * bytes);
        }
        ok = sel->br != NULL && sel->target != NULL && sel->l_lo != NULL && sel->l_hi != NULL &&
             (job->fmt == NULL || job->rsplitters != NULL);
    }
    int err = ok ? UTIL_OK : util_fail(UTIL_ENOMEM, "rank %d: sample: out of memory", job->rank);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        return err != UTIL_OK ? err : UTIL_ENOMEM;
    }
    sel->cw = job->fmt != NULL ? job->blob_words : 2;
    sel->tol = sort_tolerance(job);
    (void)sort_split_start(sel->br, k, job->n_total, sel->tol);
    for (int j = 1; j < k; j++) {
        sel->l_hi[j - 1] = job->n_local;
        sel->target[j - 1] = sort_target(job, j);
        if (job->n_total == 0 || sel->target[j - 1] >= job->n_total) {
            /* Nothing to split, or (a level's group that ends before this target) every
             * element below it: the splitter is the top of the order. */
            sel->br[j - 1].done = 1;
            set_splitter(job, j, NULL);
            job->cut[j - 1] = job->n_local;
        }
    }
    return any_open(sel) ? gather(job, sel) : UTIL_OK;
}

int sort_select_splitters(struct sort_job *job)
{
    struct sort_select *sel = job->select;
    int err = UTIL_OK;
    while (err == UTIL_OK && any_open(sel)) {
        if (sel->round > 0) {
            err = gather(job, sel);
        }
        if (err == UTIL_OK) {
            err = refine(job, sel);
        }
        sel->round++;
    }
    job->stats->splitter_rounds += (uint64_t)sel->round; /* every level's, at levels */
    sort_select_free(job);
    return err;
}

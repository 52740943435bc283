/*
 * sort/select.c: phases 3 and 4 with --balance eps or exact: the P-1 splitters by histogram
 * refinement, in O(P) words per rank and round instead of the P (P+1)/eps samples that the
 * regular sample all-gathers (sort/sample.c, --balance sample).
 *
 * Scheme (histogram sort with sampling: Harsh, Kale and Solomonik, "Histogram Sort with
 * Sampling", SPAA 2019, sections 3 and 4). Every rank holds its elements sorted, and an
 * element's global rank is the number of elements below it in (key, position) order on all
 * ranks. Splitter j should have a global rank within tol of its target t_j = floor(j n / P)
 * (rules.h: sortex_split_target(), sortex_split_tolerance()). Every unresolved splitter keeps
 * a bracket: the global and local counts of elements at or below its lower end and below its
 * upper end, known to enclose its window; at first the whole input. A round:
 *   1. every rank draws candidates among its elements inside the brackets, each with the
 *      probability want / mass summed over the brackets that hold it (want: k = 8 expected
 *      candidates per bracket, more while the U unresolved brackets share fewer than 1024 in
 *      all; a bracket of at most 4k elements is drawn whole);
 *   2. the candidates are all-gathered and sorted, the same on every rank;
 *   3. every rank counts its elements below each candidate, in one galloping sweep of its
 *      sorted elements, and an all-reduce sums the counts: every candidate's global rank;
 *   4. a splitter with a candidate inside its window takes it; the others narrow their bracket
 *      to the nearest candidates either side of the window.
 * All ranks compute the same brackets from the same histogram, so a round costs one all-gather
 * of about k U candidates and one all-reduce of their counts (U unresolved splitters). The
 * nearest of k uniform draws either side of a point are about mass / k away, so a bracket
 * shrinks by about want / 2 a round: the windows of --balance eps (eps n / P wide) are found
 * in one or two rounds, exact targets in about log_{k/2}(n / (k P)) more (fewer at small P,
 * where want is larger).
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

/* The search state of one splitter; identical on every rank but for l_lo and l_hi. */
struct bracket {
    uint64_t g_lo, g_hi; /* global: elements at or below the lower end, below the upper end */
    uint64_t l_lo, l_hi; /* this rank: its elements inside are [l_lo, l_hi) */
    uint32_t want;       /* candidates to draw in it this round */
    uint8_t done;        /* resolved: the splitter is set */
    uint8_t narrowed;    /* the last round narrowed it */
};

struct sort_select {
    struct bracket *br; /* [P - 1] */
    uint64_t tol;       /* window half-width */
    size_t cw;          /* words per candidate */
    uint64_t *cand;     /* the round's candidates, sorted: C x cw words */
    uint64_t ncand;
    uint64_t *rank;     /* [C] this rank's elements below each candidate, then the global
                           ranks (24 bytes a candidate with the tuple: 12 MiB at P = 65536) */
    int round;
};

/* ---- elements and candidates ---------------------------------------------------------------
 * A candidate is an element with its global position: numbers as two words (position, key),
 * which Highway's 128-bit sort orders by (key, position); records as the sample blob (key bytes
 * zero padded, then the position). */

static uint64_t cand_pos(const struct sort_job *job, const uint64_t *c)
{
    return job->fmt != NULL ? c[job->blob_words - 1] : c[0];
}

static void make_cand(const struct sort_job *job, uint64_t idx, uint64_t *c)
{
    if (job->fmt != NULL) {
        const unsigned char *rec = (const unsigned char *)sort_elem(job, job->a, idx);
        memset(c, 0, job->blob_words * sizeof(uint64_t));
        memcpy(c, rec + job->fmt->key_offset, job->fmt->key_size);
        c[job->blob_words - 1] = job->offset + idx;
    } else {
        c[0] = job->offset + idx;
        c[1] = job->a[idx];
    }
}

/* Whether this rank's element @idx is below candidate @c in (key, position) order. */
static int elem_below(const struct sort_job *job, uint64_t idx, const uint64_t *c)
{
    uint64_t pos = job->offset + idx;
    if (job->fmt != NULL) {
        const unsigned char *rec = (const unsigned char *)sort_elem(job, job->a, idx);
        int r = memcmp(rec + job->fmt->key_offset, c, job->fmt->key_size);
        return r < 0 || (r == 0 && pos < c[job->blob_words - 1]);
    }
    uint64_t k = job->a[idx];
    return k < c[1] || (k == c[1] && pos < c[0]);
}

static int blob_order(const void *x, const void *y, void *arg)
{
    const struct sort_job *job = arg;
    int r = memcmp(x, y, job->fmt->key_size);
    if (r != 0) {
        return r;
    }
    uint64_t a = ((const uint64_t *)x)[job->blob_words - 1];
    uint64_t b = ((const uint64_t *)y)[job->blob_words - 1];
    return (a > b) - (a < b);
}

/* This rank's elements below @c, searched from @from on (galloping: the candidates come in
 * ascending order, so each search starts where the last ended). */
static uint64_t count_below(const struct sort_job *job, const uint64_t *c, uint64_t from)
{
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

/* ---- the rules -------------------------------------------------------------------------- */

uint64_t sortex_split_target(int j, uint64_t n, int p)
{
    return (uint64_t)(((unsigned __int128)n * (unsigned)j) / (unsigned)p);
}

uint64_t sortex_split_tolerance(uint64_t n, int p, double eps, int exact)
{
    if (exact || p < 1) {
        return 0;
    }
    return (uint64_t)floor(eps * (double)n / (2.0 * (double)p));
}

uint64_t sortex_split_want(uint64_t open, uint64_t mass, uint64_t tol, uint64_t sharing)
{
    uint64_t share = open > 0 ? SORTEX_SPLIT_BUDGET / open : SORTEX_SPLIT_BUDGET;
    uint64_t most = share > SORTEX_SPLIT_SAMPLES ? share : SORTEX_SPLIT_SAMPLES;
    long double hits = (long double)SORTEX_SPLIT_HITS * mass /
                       ((2.0L * tol + 1.0L) * (long double)(sharing ? sharing : 1));
    uint64_t want = hits >= (long double)most ? most : (uint64_t)ceill(hits);
    return want > SORTEX_SPLIT_SAMPLES ? want : SORTEX_SPLIT_SAMPLES;
}

double sortex_split_density(uint64_t mass, uint64_t want)
{
    if (mass <= SORTEX_SPLIT_WHOLE || want >= mass) {
        return 1.0;
    }
    return (double)want / (double)mass;
}

int sortex_split_choose(const uint64_t *rank, uint64_t c, uint64_t t, uint64_t tol,
                        uint64_t *take, uint64_t *below, uint64_t *above)
{
    uint64_t wlo = t > tol ? t - tol : 0, whi = t + tol;
    /* The first candidate at or above the window's low end. */
    uint64_t lo = 0, hi = c;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (rank[mid] < wlo) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < c && rank[lo] <= whi) {
        /* Inside the window: the candidate nearest the target (on either side of it). */
        uint64_t best = lo;
        for (uint64_t i = lo + 1; i < c && rank[i] <= whi; i++) {
            uint64_t d_best = rank[best] > t ? rank[best] - t : t - rank[best];
            uint64_t d = rank[i] > t ? rank[i] - t : t - rank[i];
            if (d >= d_best) {
                break; /* ranks ascend: the distance only grows from here */
            }
            best = i;
        }
        *take = best;
        return 1;
    }
    *below = lo > 0 ? lo - 1 : c;
    *above = lo;
    return 0;
}

uint64_t sortex_split_next_want(int narrowed, uint64_t mass, uint64_t want, uint64_t base)
{
    if (narrowed) {
        return base;
    }
    uint64_t twice = want < mass ? 2 * want : mass;
    twice = twice < SORTEX_SPLIT_WANT_MAX ? twice : SORTEX_SPLIT_WANT_MAX;
    return twice > base ? twice : base;
}

/* ---- drawing ------------------------------------------------------------------------------ */

/* splitmix64: the generator of the draws (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014). */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t sortex_split_seed(int round, int rank)
{
    return 0x5eed5eed5eedULL ^ ((uint64_t)(unsigned)round << 32) ^ (uint64_t)(unsigned)rank;
}

/* Draws every index of [x, y) with probability d (all of them for d >= 1): geometric skips. */
static int draw_piece(uint64_t x, uint64_t y, double d, uint64_t *rng,
                      sortex_split_emit_fn *emit, void *arg)
{
    int rc = 0;
    if (d >= 1.0) {
        for (uint64_t i = x; i < y && rc == 0; i++) {
            rc = emit(arg, i);
        }
        return rc;
    }
    if (d <= 0.0) {
        return 0;
    }
    double l = log1p(-d);
    for (uint64_t i = x; rc == 0; i++) {
        double u = (double)((next_random(rng) >> 11) + 1) * 0x1.0p-53; /* (0, 1] */
        double skip = floor(log(u) / l);
        if (skip >= (double)(y - i)) {
            break;
        }
        i += (uint64_t)skip;
        rc = emit(arg, i);
    }
    return rc;
}

int sortex_split_draw(const struct sortex_split_range *r, size_t n, uint64_t *rng,
                      sortex_split_emit_fn *emit, void *arg)
{
    size_t s = 0, e = 0; /* next range to open and to close */
    double density = 0;
    uint64_t at = 0;
    for (;;) {
        while (s < n && r[s].skip) {
            s++;
        }
        while (e < n && r[e].skip) {
            e++;
        }
        if (e >= n) {
            return 0;
        }
        /* The next event: an opening at or before the next closing goes first. */
        int open = s < n && r[s].lo <= r[e].hi;
        uint64_t next = open ? r[s].lo : r[e].hi;
        if (next > at && density > 0) {
            int rc = draw_piece(at, next, density, rng, emit, arg);
            if (rc != 0) {
                return rc;
            }
        }
        at = next > at ? next : at;
        const struct sortex_split_range *b = open ? &r[s++] : &r[e++];
        density = open ? density + b->density : density - b->density;
        density = density < 1e-12 ? 0 : density;
    }
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
    int p = job->size;
    struct sortex_split_range *r = util_malloc((size_t)(p > 1 ? p - 1 : 1) * sizeof(*r));
    if (r == NULL) {
        return UTIL_ENOMEM;
    }
    for (int j = 0; j < p - 1; j++) {
        const struct bracket *b = &sel->br[j];
        r[j] = (struct sortex_split_range){b->l_lo, b->l_hi,
                                           sortex_split_density(b->g_hi - b->g_lo, b->want),
                                           b->done};
    }
    uint64_t rng = sortex_split_seed(sel->round, job->rank);
    int rc = sortex_split_draw(r, (size_t)(p - 1), &rng, pick, pk);
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
        qsort_r(sel->cand, sel->ncand, sel->cw * sizeof(uint64_t), blob_order, job);
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
    job->splitters[j - 1].key = c != NULL ? c[1] : UINT64_MAX;
    job->splitters[j - 1].pos = c != NULL ? c[0] : UINT64_MAX;
}

/* Steps 3 and 4: the histogram of the round's candidates, then every bracket's update. */
static int refine(struct sort_job *job, struct sort_select *sel)
{
    uint64_t c = sel->ncand;
    util_free(sel->rank);
    sel->rank = util_malloc((c ? c : 1) * sizeof(uint64_t));
    int ok = sel->rank != NULL;
    int err = ok ? UTIL_OK : util_fail(UTIL_ENOMEM, "rank %d: splitters: out of memory", job->rank);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        return err != UTIL_OK ? err : UTIL_ENOMEM;
    }
    uint64_t at = 0;
    for (uint64_t i = 0; i < c; i++) {
        at = count_below(job, sel->cand + i * sel->cw, at);
        sel->rank[i] = at;
    }
    if (c > 0 && MPI_Allreduce(MPI_IN_PLACE, sel->rank, (int)c, MPI_UINT64_T, MPI_SUM,
                               job->comm) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: splitters: MPI_Allreduce failed", job->rank);
    }
    uint64_t open = 0;
    for (int j = 1; j < job->size; j++) {
        struct bracket *b = &sel->br[j - 1];
        if (b->done) {
            continue;
        }
        uint64_t t = sortex_split_target(j, job->n_total, job->size);
        uint64_t take = c, below = c, above = c;
        if (sortex_split_choose(sel->rank, c, t, sel->tol, &take, &below, &above)) {
            set_splitter(job, j, sel->cand + take * sel->cw);
            b->done = 1;
            continue;
        }
        /* The nearest candidates either side become the bracket's ends, where they narrow it;
         * this rank's counts below them are searched again (two per bracket). */
        uint64_t mass = b->g_hi - b->g_lo;
        if (below < c && sel->rank[below] + 1 > b->g_lo) {
            const uint64_t *cb = sel->cand + below * sel->cw;
            uint64_t pos = cand_pos(job, cb);
            int local = pos >= job->offset && pos - job->offset < job->n_local;
            b->g_lo = sel->rank[below] + 1;
            b->l_lo = count_below(job, cb, 0) + (local ? 1 : 0);
        }
        if (above < c && sel->rank[above] < b->g_hi) {
            b->g_hi = sel->rank[above];
            b->l_hi = count_below(job, sel->cand + above * sel->cw, 0);
        }
        b->narrowed = b->g_hi - b->g_lo < mass;
        open++;
    }
    /* The others ask for what their narrowed brackets need; one that did not narrow, more. */
    for (int j = 0; j < job->size - 1; j++) {
        struct bracket *b = &sel->br[j];
        if (!b->done) {
            uint64_t mass = b->g_hi - b->g_lo;
            uint64_t base = sortex_split_want(open, mass, sel->tol, 1);
            b->want = (uint32_t)sortex_split_next_want(b->narrowed, mass, b->want, base);
        }
    }
    return UTIL_OK;
}

static int any_open(const struct sort_select *sel, int p)
{
    for (int j = 0; j < p - 1; j++) {
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
        util_free(sel->cand);
        util_free(sel->rank);
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
    if (ok) {
        job->select = sel;
        sel->br = util_calloc((size_t)(p > 1 ? p - 1 : 1), sizeof(*sel->br));
        if (job->fmt != NULL) { /* the numbers' tuples come with the job */
            job->rsplitters = util_malloc((size_t)p * bytes);
        }
        ok = sel->br != NULL && (job->fmt == NULL || job->rsplitters != NULL);
    }
    int err = ok ? UTIL_OK : util_fail(UTIL_ENOMEM, "rank %d: sample: out of memory", job->rank);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        return err != UTIL_OK ? err : UTIL_ENOMEM;
    }
    sel->cw = job->fmt != NULL ? job->blob_words : 2;
    sel->tol = sortex_split_tolerance(job->n_total, p, job->epsilon,
                                      job->balance == SORTEX_BALANCE_EXACT);
    job->nsample = 0;
    for (int j = 1; j < p; j++) {
        struct bracket *b = &sel->br[j - 1];
        uint32_t want = (uint32_t)sortex_split_want((uint64_t)(p - 1), job->n_total, sel->tol,
                                                    (uint64_t)(p - 1));
        *b = (struct bracket){0, job->n_total, 0, job->n_local, want, 0, 0};
        if (job->n_total == 0) { /* nothing to split: every bucket empty but the last */
            set_splitter(job, j, NULL);
            b->done = 1;
        }
    }
    return any_open(sel, p) ? gather(job, sel) : UTIL_OK;
}

int sort_select_splitters(struct sort_job *job)
{
    struct sort_select *sel = job->select;
    int err = UTIL_OK;
    while (err == UTIL_OK && any_open(sel, job->size)) {
        if (sel->round > 0) {
            err = gather(job, sel);
        }
        if (err == UTIL_OK) {
            err = refine(job, sel);
        }
        sel->round++;
    }
    job->stats->splitter_rounds = (uint64_t)sel->round;
    sort_select_free(job);
    return err;
}

/*
 * sort/rules.c: the sort's count rules as pure functions (see sort/rules.h): how many samples
 * and where, which become splitters, where a splitter cuts a rank's sorted elements, the
 * (key, position) order that breaks ties, and the histogram selection's targets, draws,
 * choices and bracket updates. No MPI: the phases (sort/sample.c, splitters.c, select.c,
 * bucket.c) call them on a rank's data, and the simulator (sim/) calls them to replay a sort
 * without data, so both follow one body of each rule.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/machine.h"
#include "local/local.h"
#include "sort/rules.h"
#include "util/util.h"

uint64_t sort_default_oversample(int p, double epsilon)
{
    /* At least 256: the sample phase costs well under a millisecond at that size for small P,
     * and the tighter bound, (P+1)/256, keeps small jobs within 1-2%. */
    uint64_t s = (uint64_t)ceil((double)(p + 1) / epsilon);
    return s < 256 ? 256 : s;
}

enum sortex_balance sort_balance_resolve(enum sortex_balance balance, int p, double epsilon,
                                           uint64_t oversample)
{
    if (balance != SORTEX_BALANCE_AUTO) {
        return balance;
    }
    uint64_t s = oversample ? oversample : sort_default_oversample(p, epsilon);
    unsigned __int128 bytes = (unsigned __int128)s * (unsigned)p * 2 * sizeof(uint64_t);
    return bytes <= SORT_AUTO_SAMPLE_BYTES ? SORTEX_BALANCE_SAMPLE : SORTEX_BALANCE_EPS;
}

int sort_sample_total(uint64_t oversample, int p, uint64_t *total)
{
    unsigned __int128 t = (unsigned __int128)oversample * (unsigned)p;
    if ((t + (unsigned)p) * 2 > INT_MAX) {
        return UTIL_EUSAGE;
    }
    *total = (uint64_t)t;
    return UTIL_OK;
}

uint64_t sort_sample_count(uint64_t total, uint64_t m, uint64_t n)
{
    if (n == 0) {
        return 0;
    }
    uint64_t s = (uint64_t)(((unsigned __int128)total * m + n - 1) / n);
    return s < m ? s : m;
}

uint64_t sort_sample_index(uint64_t k, uint64_t s, uint64_t m)
{
    return (uint64_t)(((unsigned __int128)(2 * k + 1) * m) / (2 * s));
}

int sort_tuple_order(const struct sort_tuple *a, const struct sort_tuple *b)
{
    if (a->key != b->key) {
        return a->key < b->key ? -1 : 1;
    }
    return (a->pos > b->pos) - (a->pos < b->pos);
}

int sort_tuple_cmp(const void *x, const void *y)
{
    return sort_tuple_order(x, y);
}

int sort_blob_order(const uint64_t *a, const uint64_t *b, size_t key_size)
{
    int c = memcmp(a, b, key_size);
    if (c != 0) {
        return c;
    }
    size_t w = sort_blob_words(key_size) - 1;
    return (a[w] > b[w]) - (a[w] < b[w]);
}

int sort_blob_cmp(const void *x, const void *y, void *arg)
{
    return sort_blob_order(x, y, *(const size_t *)arg);
}

void sort_blob_make(uint64_t *blob, const void *key, size_t key_size, uint64_t pos)
{
    size_t w = sort_blob_words(key_size) - 1;
    memset(blob, 0, w * sizeof(uint64_t));
    memcpy(blob, key, key_size);
    blob[w] = pos;
}

int sort_key_blob_order(const void *key, size_t key_size, uint64_t pos, const uint64_t *blob)
{
    int c = memcmp(key, blob, key_size);
    if (c != 0) {
        return c;
    }
    uint64_t bpos = blob[sort_blob_words(key_size) - 1];
    return (pos > bpos) - (pos < bpos);
}

uint64_t sort_splitter_index(int j, uint64_t t, int p)
{
    return (uint64_t)(((unsigned __int128)(unsigned)j * t) / (unsigned)p);
}

/* First index in a[0..n) whose key is >= k (above == 0) or > k (above == 1). */
static uint64_t search(const uint64_t *a, uint64_t n, uint64_t k, int above)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < k || (above && a[mid] == k)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

uint64_t sort_bucket_boundary(const uint64_t *keys, uint64_t m, uint64_t offset, uint64_t key,
                                uint64_t pos)
{
    uint64_t lo = search(keys, m, key, 0);
    uint64_t hi = search(keys, m, key, 1);
    /* Equal keys sit at global positions offset+lo .. offset+hi-1; those below pos count. */
    uint64_t first = offset + lo;
    if (pos <= first) {
        return lo;
    }
    uint64_t equal_below = pos - first;
    return equal_below < hi - lo ? lo + equal_below : hi;
}

/* ---- the histogram selection's count ---- */

uint64_t sort_count_index_len(uint64_t m)
{
    return m / SORT_COUNT_STRIDE + (m % SORT_COUNT_STRIDE != 0);
}

int sort_count_index_pays(uint64_t c, uint64_t m)
{
    return m >= 2 * SORT_COUNT_STRIDE && 16 * c >= sort_count_index_len(m);
}

double sort_count_cost(double gap, int indexed, double miss, double hit)
{
    double stride = SORT_COUNT_STRIDE;
    if (indexed && gap >= stride) {
        double keys = 1 + log2(stride), lines = log2(stride / 8) + 1;
        double entries = 2 + 2 * (gap / stride + 1 > 1 ? log2(gap / stride + 1) : 0);
        return miss * lines + hit * (keys - lines + entries);
    }
    double probes = 2 * (gap > 0 ? log2(gap + 1) : 0) + 1 + (indexed ? 1 : 0);
    double lines = gap > 8 ? fmin(probes, 2 * log2(gap / 8)) : 0;
    return miss * lines + hit * (probes - lines);
}

void sort_count_index(const uint64_t *keys, uint64_t m, uint64_t *index)
{
    for (uint64_t j = 0, n = sort_count_index_len(m); j < n; j++) {
        index[j] = keys[j * SORT_COUNT_STRIDE];
    }
}

/* Key @i (global position @offset + @i) below @c, a probe counted. */
static inline int key_below(uint64_t key, uint64_t pos, const struct sort_tuple *c,
                            uint64_t *probes)
{
    ++*probes;
    return key != c->key ? key < c->key : pos < c->pos;
}

/* The first of keys [lo, hi) not below @c, keys lo - 1 below and hi not (or hi = m): bisection. */
static uint64_t count_bisect(const uint64_t *keys, uint64_t offset, const struct sort_tuple *c,
                             uint64_t lo, uint64_t hi, uint64_t *probes)
{
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (key_below(keys[mid], offset + mid, c, probes)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The first index entry after @j not below @c, entry j below: a gallop, then bisection. */
static uint64_t count_index_gallop(const uint64_t *index, uint64_t n, uint64_t offset,
                                   const struct sort_tuple *c, uint64_t j, uint64_t *probes)
{
    uint64_t step = 1, hi;
    for (;;) {
        hi = j + step;
        if (hi >= n) {
            hi = n;
            break;
        }
        if (!key_below(index[hi], offset + hi * SORT_COUNT_STRIDE, c, probes)) {
            break;
        }
        j = hi;
        step *= 2;
    }
    for (j++; j < hi;) {
        uint64_t mid = j + (hi - j) / 2;
        if (key_below(index[mid], offset + mid * SORT_COUNT_STRIDE, c, probes)) {
            j = mid + 1;
        } else {
            hi = mid;
        }
    }
    return j;
}

uint64_t sort_count_below(const uint64_t *keys, uint64_t m, uint64_t offset, const uint64_t *index,
                          const struct sort_tuple *c, uint64_t from, uint64_t *probes)
{
    uint64_t unused = 0;
    probes = probes != NULL ? probes : &unused;
    if (from >= m || !key_below(keys[from], offset + from, c, probes)) {
        return from;
    }
    /* Key from is below; the answer is in (from, bound], key bound not below or bound = m. */
    uint64_t bound = m;
    if (index != NULL) {
        uint64_t n = sort_count_index_len(m), j = from / SORT_COUNT_STRIDE + 1;
        if (j < n && key_below(index[j], offset + j * SORT_COUNT_STRIDE, c, probes)) {
            /* Beyond the stride it started in: the index, then one stride of keys. */
            j = count_index_gallop(index, n, offset, c, j, probes);
            bound = j < n ? j * SORT_COUNT_STRIDE : m;
            return count_bisect(keys, offset, c, (j - 1) * SORT_COUNT_STRIDE + 1, bound, probes);
        }
        bound = j < n ? j * SORT_COUNT_STRIDE : m;
    }
    uint64_t lo = from, step = 1, hi;
    for (;;) { /* key lo is below */
        hi = lo + step;
        if (hi >= bound) {
            hi = bound;
            break;
        }
        if (!key_below(keys[hi], offset + hi, c, probes)) {
            break;
        }
        lo = hi;
        step *= 2;
    }
    return count_bisect(keys, offset, c, lo + 1, hi, probes);
}

/* Records: first index in the @m sorted records whose key is >= the blob's (above == 0) or
 * > it (above == 1). */
static uint64_t search_records(const unsigned char *recs, uint64_t m, size_t rsize,
                               size_t key_offset, size_t key_size, const uint64_t *blob,
                               int above)
{
    uint64_t lo = 0, hi = m;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int c = memcmp(recs + mid * rsize + key_offset, blob, key_size);
        if (c < 0 || (above && c == 0)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

uint64_t sort_bucket_boundary_records(const void *recs, uint64_t m, size_t rsize,
                                      size_t key_offset, size_t key_size, uint64_t offset,
                                      const uint64_t *blob)
{
    uint64_t lo = search_records(recs, m, rsize, key_offset, key_size, blob, 0);
    uint64_t hi = search_records(recs, m, rsize, key_offset, key_size, blob, 1);
    /* Equal keys sit at global positions offset+lo .. offset+hi-1; those below pos count. */
    uint64_t first = offset + lo, pos = blob[sort_blob_words(key_size) - 1];
    if (pos <= first) {
        return lo;
    }
    uint64_t equal_below = pos - first;
    return equal_below < hi - lo ? lo + equal_below : hi;
}

/* ---- the rules -------------------------------------------------------------------------- */

uint64_t sort_split_target(int j, uint64_t n, int p)
{
    return (uint64_t)(((unsigned __int128)n * (unsigned)j) / (unsigned)p);
}

uint64_t sort_split_tolerance(uint64_t n, int p, double eps, int exact)
{
    if (exact || p < 1) {
        return 0;
    }
    return (uint64_t)floor(eps * (double)n / (2.0 * (double)p));
}

uint64_t sort_split_want(uint64_t open, uint64_t mass, uint64_t tol, uint64_t sharing)
{
    uint64_t share = open > 0 ? SORT_SPLIT_BUDGET / open : SORT_SPLIT_BUDGET;
    uint64_t most = share > SORT_SPLIT_SAMPLES ? share : SORT_SPLIT_SAMPLES;
    long double hits = (long double)SORT_SPLIT_HITS * mass /
                       ((2.0L * tol + 1.0L) * (long double)(sharing ? sharing : 1));
    uint64_t want = hits >= (long double)most ? most : (uint64_t)ceill(hits);
    return want > SORT_SPLIT_SAMPLES ? want : SORT_SPLIT_SAMPLES;
}

double sort_split_density(uint64_t mass, uint64_t want)
{
    if (mass <= SORT_SPLIT_WHOLE || want >= mass) {
        return 1.0;
    }
    return (double)want / (double)mass;
}

int sort_split_choose(const uint64_t *rank, uint64_t c, uint64_t t, uint64_t tol,
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

uint64_t sort_split_next_want(int narrowed, uint64_t mass, uint64_t want, uint64_t base)
{
    if (narrowed) {
        return base;
    }
    uint64_t twice = want < mass ? 2 * want : mass;
    twice = twice < SORT_SPLIT_WANT_MAX ? twice : SORT_SPLIT_WANT_MAX;
    return twice > base ? twice : base;
}

/* ---- drawing ------------------------------------------------------------------------------ */

uint64_t sort_split_seed(int round, int rank)
{
    return 0x5eed5eed5eedULL ^ ((uint64_t)(unsigned)round << 32) ^ (uint64_t)(unsigned)rank;
}

/* Draws every index of [x, y) with probability d (all of them for d >= 1): geometric skips. */
static int draw_piece(uint64_t x, uint64_t y, double d, uint64_t *rng,
                      sort_split_emit_fn *emit, void *arg)
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
        double u = (double)((util_splitmix64(rng) >> 11) + 1) * 0x1.0p-53; /* (0, 1] */
        double skip = floor(log(u) / l);
        if (skip >= (double)(y - i)) {
            break;
        }
        i += (uint64_t)skip;
        rc = emit(arg, i);
    }
    return rc;
}

int sort_split_draw(const struct sort_split_range *r, size_t n, uint64_t *rng,
                      sort_split_emit_fn *emit, void *arg)
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
        const struct sort_split_range *b = open ? &r[s++] : &r[e++];
        density = open ? density + b->density : density - b->density;
        density = density < 1e-12 ? 0 : density;
    }
}

uint64_t sort_split_start(struct sort_bracket *br, int p, uint64_t n, uint64_t tol)
{
    uint64_t nb = p > 1 ? (uint64_t)(p - 1) : 0;
    uint64_t want = sort_split_want(nb, n, tol, nb);
    for (uint64_t j = 0; j < nb; j++) {
        br[j] = (struct sort_bracket){0, n, want, n == 0, 0};
    }
    return n > 0 ? nb : 0;
}

void sort_split_ranges(const struct sort_bracket *br, int p, const uint64_t *lo,
                       const uint64_t *hi, struct sort_split_range *r)
{
    for (int j = 0; j + 1 < p; j++) {
        const struct sort_bracket *b = &br[j];
        r[j] = (struct sort_split_range){lo != NULL ? lo[j] : b->g_lo, hi != NULL ? hi[j] : b->g_hi,
                                         sort_split_density(b->g_hi - b->g_lo, b->want), b->done};
    }
}

uint64_t sort_split_update(struct sort_bracket *br, int p, uint64_t n, uint64_t tol,
                           const uint64_t *target, const uint64_t *rank, uint64_t c,
                           sort_split_event_fn *ev, void *arg)
{
    uint64_t open = 0;
    for (int j = 0; j + 1 < p; j++) {
        struct sort_bracket *b = &br[j];
        if (b->done) {
            continue;
        }
        uint64_t t = target != NULL ? target[j] : sort_split_target(j + 1, n, p);
        uint64_t take = c, below = c, above = c;
        if (sort_split_choose(rank, c, t, tol, &take, &below, &above)) {
            b->done = 1;
            if (ev != NULL) {
                ev(arg, j, SORT_SPLIT_TAKE, take);
            }
            continue;
        }
        uint64_t mass = b->g_hi - b->g_lo;
        if (below < c && rank[below] + 1 > b->g_lo) {
            b->g_lo = rank[below] + 1;
            if (ev != NULL) {
                ev(arg, j, SORT_SPLIT_LOWER, below);
            }
        }
        if (above < c && rank[above] < b->g_hi) {
            b->g_hi = rank[above];
            if (ev != NULL) {
                ev(arg, j, SORT_SPLIT_UPPER, above);
            }
        }
        b->narrowed = b->g_hi - b->g_lo < mass;
        open++;
    }
    /* The open ones ask for what their narrowed brackets need; one that did not narrow, more. */
    for (int j = 0; j + 1 < p; j++) {
        struct sort_bracket *b = &br[j];
        if (!b->done) {
            uint64_t mass = b->g_hi - b->g_lo;
            uint64_t base = sort_split_want(open, mass, tol, 1);
            b->want = sort_split_next_want(b->narrowed, mass, b->want, base);
        }
    }
    return open;
}

/* ---- levels ------------------------------------------------------------------------------- */

int sort_level_groups(int ranks, int left)
{
    if (ranks <= 1 || left <= 1) {
        return ranks < 1 ? 1 : ranks;
    }
    int k = (int)lround(pow((double)ranks, 1.0 / left));
    return k < 1 ? 1 : k > ranks ? ranks : k;
}

int sort_level_first(int j, int ranks, int k)
{
    return (int)(((int64_t)j * ranks) / k);
}

int sort_level_group_of(int r, int ranks, int k)
{
    /* The largest j with floor(j ranks / k) <= r, that is j ranks < (r + 1) k. */
    return (int)((((int64_t)r + 1) * k - 1) / ranks);
}

uint64_t sort_level_target(uint64_t n_world, int p_world, int first_rank, uint64_t group_offset,
                           uint64_t n_group)
{
    uint64_t t = sort_split_target(first_rank, n_world, p_world);
    t = t > group_offset ? t - group_offset : 0;
    return t < n_group ? t : n_group;
}

uint64_t sort_level_begin(uint64_t total, int s, int i)
{
    return (uint64_t)(((unsigned __int128)total * (unsigned)i) / (unsigned)s);
}

int sort_level_deal(uint64_t x, uint64_t c, uint64_t total, int s, uint64_t *counts)
{
    for (int i = 0; i < s; i++) {
        counts[i] = 0;
    }
    if (c == 0 || total == 0) {
        return 0;
    }
    /* The rank whose range holds position x: the largest i with begin(i) <= x. */
    int i = (int)((((unsigned __int128)x + 1) * (unsigned)s - 1) / total);
    int sent = 0;
    uint64_t at = x, end = x + c;
    for (; i < s && at < end; i++) {
        uint64_t hi = sort_level_begin(total, s, i + 1);
        uint64_t take = (hi < end ? hi : end) - at;
        if (take > 0) {
            counts[i] = take;
            sent++;
            at += take;
        }
    }
    return sent;
}

void sort_level_machine_default(struct sort_level_machine *m)
{
    /* sim_machine_default()'s figures (sim/sortmodel.c), in seconds; alpha and beta the
     * built-in machine's (exchange/machine.c), as sim_machine_default() takes them. */
    struct exchange_machine ex;
    exchange_machine_default(&ex);
    *m = (struct sort_level_machine){
        .alpha = ex.alpha,
        .beta = ex.beta,
        .probe = 4.0e-9,
        .probe_hit = 4.0e-9,
        .merge = 1.2e-9,
        .merge_log = 0.6e-9,
        .tuple = 0.35e-9,
        .copy = 1.0 / 11e9,
        .sort = 5.2e-9,
    };
}

static double lg2(double x)
{
    return x > 1 ? log2(x) : 0;
}

/* The histogram selection of @k - 1 splitters in a group of @gs ranks holding @ng elements,
 * windows of 2 @tol + 1, @per elements a rank: its rounds as sort_split_want() sizes them (each
 * narrows a bracket by about half its draws), every round an all-gather of the candidates and
 * the counts, the counting (sort_count_cost(), through the count's index for @keys when the
 * first round pays for it) and an all-reduce. Seconds. */
static double price_select(int gs, int k, double ng, double tol, double per, int keys,
                           const struct sort_level_machine *m)
{
    if (k < 2 || ng < 1) {
        return 0;
    }
    double open = k - 1.0, window = 2 * tol + 1;
    double want = fmax(SORT_SPLIT_SAMPLES, fmin(SORT_SPLIT_BUDGET / open, 4 * ng / window / open));
    double mass = ng, t = 0, steps = 2 * lg2(gs);
    int indexed = 0;
    for (int round = 0; round < 64 && mass > window; round++) {
        double c = fmax(1, want * open);
        if (round == 0 && keys && sort_count_index_pays((uint64_t)c, (uint64_t)per)) {
            indexed = 1;
            t += m->probe * (double)sort_count_index_len((uint64_t)per);
        }
        t += m->alpha * 2 * steps + m->beta * (4.0 * gs + 16 * c) + m->tuple * c * lg2(c) +
             c * sort_count_cost(round == 0 ? per / c : per * mass / ng / want, indexed, m->probe,
                                 m->probe_hit) +
             m->beta * 16 * c;
        mass = round == 0 ? ng / open : mass;
        mass = mass / fmax(2, want / 2);
        want = fmax(SORT_SPLIT_SAMPLES, fmin(SORT_SPLIT_BUDGET / open, 4 * mass / window));
    }
    return t;
}

double sort_levels_price(int p, uint64_t n, uint64_t elem, int levels, double eps,
                         const struct sort_level_machine *m)
{
    double per = (double)n / p, bytes = per * (double)elem, t = 0;
    double tol = (double)sort_split_tolerance(n, p, eps, 0);
    int gs = p;
    for (int left = levels; left >= 1 && gs > 1; left--) {
        int k = sort_level_groups(gs, left);
        if (k < 2) {
            continue;
        }
        int last = k == gs;
        double ng = per * gs, steps = lg2(gs);
        /* The phases' agreements, the selection (whose counts are the boundaries). */
        t += 5 * m->alpha * 2 * steps + price_select(gs, k, ng, tol, per, elem == 8, m);
        /* The counts: the all-to-all of the last level; the sums, prefix sums and a message to
         * each receiver of the others. */
        double msgs = last ? gs - 1 : k + 1;
        t += last ? m->alpha * steps + m->beta * 8.0 * gs * steps / 2
                  : 2 * (m->alpha * 2 * steps + m->beta * 16.0 * k) + m->alpha * msgs;
        /* The exchange (a start-up a non-empty piece) and the own piece's copy. */
        t += m->alpha * msgs + m->beta * bytes + bytes / k * m->copy;
        /* The merge of the runs received, or the re-sort beyond what the merge pays for. */
        double runs = last ? gs : k + 1;
        t += runs <= LOCAL_MERGE_RUNS_PER_THREAD
                 ? per * (m->merge + m->merge_log * (lg2(runs) - 1)) * fmax(1, elem / 8.0)
                 : per * m->sort * fmax(1, elem / 8.0);
        if (!last) {
            /* The next level's communicator (MPI_Comm_create_group: a few all-reduces). */
            int s = gs / k;
            t += 3 * m->alpha * 2 * lg2(s);
            gs = s;
        }
    }
    if (levels > 1) {
        /* The shift to exact shares: a scan, counts and pieces to the neighbours, a copy. */
        t += m->alpha * (2 * lg2(p) + 4) + m->beta * tol * elem + bytes * m->copy;
    }
    return t;
}

int sort_levels_choose(int p, uint64_t n, uint64_t elem, double eps,
                       const struct sort_level_machine *m, double price[SORT_LEVELS_MAX])
{
    for (int l = 0; price != NULL && l < SORT_LEVELS_MAX; l++) {
        price[l] = 0;
    }
    if (p <= SORT_LEVELS_ONE_P) {
        return 1;
    }
    int best = 1;
    double least = INFINITY;
    for (int l = 1; l <= SORT_LEVELS_MAX; l++) {
        double t = sort_levels_price(p, n, elem, l, eps, m);
        if (price != NULL) {
            price[l - 1] = t;
        }
        if (t < least) {
            least = t;
            best = l;
        }
    }
    return best;
}

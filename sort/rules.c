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
                           const uint64_t *rank, uint64_t c, sort_split_event_fn *ev, void *arg)
{
    uint64_t open = 0;
    for (int j = 0; j + 1 < p; j++) {
        struct sort_bracket *b = &br[j];
        if (b->done) {
            continue;
        }
        uint64_t t = sort_split_target(j + 1, n, p), take = c, below = c, above = c;
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

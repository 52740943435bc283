/*
 * local/records.c: the node-local sort of fixed-size records with byte-string keys (see
 * local/local.h, local_record_sort()).
 *
 * Scheme, for n records of R bytes with a K-byte key:
 *  1. Tuples. One pass writes a 16-byte tuple per record: the first 10 key bytes as an 80-bit
 *     big-endian number and the record's index (48 bits), so that tuple order is (key, index)
 *     order whenever K <= 10 (the Sort Benchmark's keys): a stable sort by key.
 *  2. Sort the tuples as 128-bit numbers: Highway's vqsort (its uint128 path) on one thread;
 *     with T threads, T chunks sorted at once, then rounds of pairwise merges, each split
 *     exactly between the threads (co-ranking).
 *  3. Keys longer than 10 bytes: runs of tuples with equal first 10 bytes are sorted by the
 *     rest of the key, stably, so their index order survives for equal keys.
 *  4. Permute once: record i of the output is the record the i-th tuple names (a gather,
 *     threaded, the next records prefetched), into the scratch array.
 * Records move once, 16 bytes a record move in the sort; the alternative, moving whole records
 * in every pass of a radix or sample sort, moves R bytes a pass (results/ holds the
 * measurement behind the choice).
 */
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "local/internal.h"
#include "util/alloc.h"
#include "util/format.h"
#include "util/util.h"

#define IDX_BITS LOCAL_TUPLE_INDEX_BITS
#define IDX_MASK (((uint64_t)1 << IDX_BITS) - 1)
#define REC_PAR_MIN LOCAL_REC_PAR_MIN
#define TUPLE_KEY_BYTES LOCAL_TUPLE_KEY_BYTES

typedef struct local_rec_tuple tuple;

static inline bool tuple_lt(tuple a, tuple b)
{
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

/* Step 1: the tuple of every record. */
static void make_tuples(const unsigned char *rec, size_t n, const struct util_format *f,
                        tuple *t, int threads)
{
    const size_t R = f->record_size, K = f->key_size;
    const unsigned char *key0 = rec + f->key_offset;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && n >= REC_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        uint64_t hi, ext;
        local_rec_key10(key0 + i * R, K, &hi, &ext);
        t[i].hi = hi;
        t[i].lo = ext << IDX_BITS | (uint64_t)i;
    }
}

/* The number of elements of a[0..na) that go before the element b[j] and its successors in
 * a merge of a and b (a first on ties) whose output position is @s: the co-rank i, j = s - i. */
static size_t co_rank(const tuple *a, size_t na, const tuple *b, size_t nb, size_t s)
{
    size_t lo = s > nb ? s - nb : 0, hi = s < na ? s : na;
    while (lo < hi) {
        size_t i = lo + (hi - lo) / 2, j = s - i;
        /* Too few from a when a[i] goes before b[j - 1] (a wins ties). */
        if (j > 0 && i < na && !tuple_lt(b[j - 1], a[i])) {
            lo = i + 1;
        } else {
            hi = i;
        }
    }
    return lo;
}

/* Merges a[0..na) and b[0..nb) into out with @threads threads, each an equal share of out. */
static void merge_pair(const tuple *a, size_t na, const tuple *b, size_t nb, tuple *out,
                       int threads)
{
    size_t n = na + nb;
#pragma omp parallel for num_threads(threads) schedule(static, 1) if (threads > 1)
    for (int p = 0; p < threads; p++) {
        size_t s0 = local_part_begin(n, (size_t)p, (size_t)threads);
        size_t s1 = local_part_begin(n, (size_t)p + 1, (size_t)threads);
        size_t i = co_rank(a, na, b, nb, s0), j = s0 - i;
        size_t ie = co_rank(a, na, b, nb, s1), je = s1 - ie;
        tuple *o = out + s0;
        while (i < ie && j < je) {
            bool take_b = tuple_lt(b[j], a[i]);
            *o++ = take_b ? b[j] : a[i];
            j += take_b;
            i += !take_b;
        }
        while (i < ie) {
            *o++ = a[i++];
        }
        while (j < je) {
            *o++ = b[j++];
        }
    }
}

/* Step 2: sorts t[0..n) (tmp holds n more); returns the array that holds the result. */
static tuple *sort_tuples(tuple *t, tuple *tmp, size_t n, int threads)
{
    if (threads <= 1 || n < REC_PAR_MIN) {
        local_vqsort_u128(&t->lo, n);
        return t;
    }
    size_t *bound = util_malloc(((size_t)threads + 1) * sizeof(*bound));
    if (bound == NULL) {
        local_vqsort_u128(&t->lo, n); /* no room for the run list: one thread */
        return t;
    }
    int runs = threads;
    for (int c = 0; c <= runs; c++) {
        bound[c] = local_part_begin(n, (size_t)c, (size_t)runs);
    }
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int c = 0; c < runs; c++) {
        local_vqsort_u128(&t[bound[c]].lo, bound[c + 1] - bound[c]);
    }
    /* Pairwise rounds: runs 2k and 2k+1 merge into one; an odd last run is copied over. */
    tuple *src = t, *dst = tmp;
    while (runs > 1) {
        int next = 0;
        for (int r = 0; r < runs; r += 2) {
            size_t b0 = bound[r], b1 = bound[r + 1];
            if (r + 1 < runs) {
                size_t b2 = bound[r + 2];
                merge_pair(src + b0, b1 - b0, src + b1, b2 - b1, dst + b0, threads);
            } else {
                memcpy(dst + b0, src + b0, (b1 - b0) * sizeof(*src));
            }
            bound[next++] = b0;
        }
        bound[next] = n;
        runs = next;
        tuple *x = src;
        src = dst;
        dst = x;
    }
    util_free(bound);
    return src;
}

/* Key bytes from 10 on of the record a tuple names, for step 3. */
struct tail_ctx {
    const unsigned char *rec;
    size_t R, off, len;
};

static int tail_cmp(const struct tail_ctx *c, tuple a, tuple b)
{
    return memcmp(c->rec + (a.lo & IDX_MASK) * c->R + c->off,
                  c->rec + (b.lo & IDX_MASK) * c->R + c->off, c->len);
}

/* Stable merge sort of t[0..m) by the rest of the key, through tmp (m more). */
static void tail_sort(tuple *t, tuple *tmp, size_t m, const struct tail_ctx *c)
{
    if (m <= 16) {
        for (size_t i = 1; i < m; i++) {
            tuple x = t[i];
            size_t j = i;
            while (j > 0 && tail_cmp(c, t[j - 1], x) > 0) {
                t[j] = t[j - 1];
                j--;
            }
            t[j] = x;
        }
        return;
    }
    size_t h = m / 2;
    tail_sort(t, tmp, h, c);
    tail_sort(t + h, tmp + h, m - h, c);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < m) {
        tmp[k++] = tail_cmp(c, t[j], t[i]) < 0 ? t[j++] : t[i++];
    }
    while (i < h) {
        tmp[k++] = t[i++];
    }
    while (j < m) {
        tmp[k++] = t[j++];
    }
    memcpy(t, tmp, m * sizeof(*t));
}

/* Step 3 (K > 10): every run of tuples equal in their 10 key bytes, sorted by the rest. */
static int fix_long_keys(tuple *t, tuple *tmp, size_t n, const unsigned char *rec,
                         const struct util_format *f, int threads)
{
    struct tail_ctx c = {rec, f->record_size, f->key_offset + TUPLE_KEY_BYTES,
                         f->key_size - TUPLE_KEY_BYTES};
    /* The runs, found by one scan; their sorts are independent. */
    size_t nruns = 0, cap = 0;
    size_t *run = NULL;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && t[j].hi == t[i].hi && (t[j].lo >> IDX_BITS) == (t[i].lo >> IDX_BITS)) {
            j++;
        }
        if (j - i > 1) {
            if (nruns == cap) {
                cap = cap ? 2 * cap : 256;
                size_t *bigger = util_realloc(run, 2 * cap * sizeof(*run));
                if (bigger == NULL) {
                    util_free(run);
                    return UTIL_ENOMEM;
                }
                run = bigger;
            }
            run[2 * nruns] = i;
            run[2 * nruns + 1] = j - i;
            nruns++;
        }
        i = j;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (nruns > 1)
    for (size_t r = 0; r < nruns; r++) {
        tail_sort(t + run[2 * r], tmp + run[2 * r], run[2 * r + 1], &c);
    }
    util_free(run);
    return UTIL_OK;
}

/* Step 4: out[i] = the record tuple i names. */
static void gather(const unsigned char *rec, unsigned char *out, const tuple *t, size_t n,
                   size_t R, int threads)
{
    enum { AHEAD = 16 };
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && n >= REC_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            const unsigned char *p = rec + (t[i + AHEAD].lo & IDX_MASK) * R;
            __builtin_prefetch(p);
            if (R > 64) {
                __builtin_prefetch(p + R - 1);
            }
        }
        memcpy(out + i * R, rec + (t[i].lo & IDX_MASK) * R, R);
    }
}

size_t local_record_tuples(size_t n, const struct util_format *f)
{
    return f != NULL && f->record_size >= sizeof(tuple) ? n : 2 * n;
}

int local_record_sort(void *records, void *scratch, struct local_rec_tuple *tuples, size_t n,
                       const struct util_format *f, int threads, void **sorted)
{
    *sorted = records;
    if (threads < 1 || f == NULL || !f->byte_key) {
        return UTIL_EUSAGE;
    }
    if (n < 2) {
        return UTIL_OK;
    }
    if (records == NULL || scratch == NULL || tuples == NULL || n > IDX_MASK) {
        return UTIL_EUSAGE;
    }
    if (n < REC_PAR_MIN) {
        threads = 1;
    }
    make_tuples(records, n, f, tuples, threads);
    /* The merges' second array: the scratch records' room, until the gather needs it (a
     * tuple's 16 bytes fit in every record of 16 bytes or more), else the tuples' second half. */
    tuple *tmp = local_record_tuples(n, f) == n ? (tuple *)scratch : tuples + n;
    tuple *t = sort_tuples(tuples, tmp, n, threads);
    if (t != tuples) {
        memcpy(tuples, t, n * sizeof(*t));
        t = tuples;
    }
    if (f->key_size > TUPLE_KEY_BYTES) {
        int rc = fix_long_keys(t, tmp, n, records, f, threads);
        if (rc != UTIL_OK) {
            return rc;
        }
    }
    gather(records, scratch, t, n, f->record_size, threads);
    *sorted = scratch;
    return UTIL_OK;
}


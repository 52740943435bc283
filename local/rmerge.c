/*
 * local/rmerge.c: the threaded multi-way merge of sorted runs of records (see local/local.h),
 * the same two steps as the keys' (local/merge.c) for fixed-size records with byte-string keys.
 *  1. Split. The order is (key, run, position), a total order in which the runs' concatenation
 *     merged stably is sorted. Part boundary g is found exactly by multi-sequence selection in
 *     rank space: the widest remaining window of any run offers its middle record as a pivot,
 *     one binary search per run counts the records before the pivot, and every window shrinks
 *     to the side the pivot's rank says (Varman et al., cited above, in its rank-space form).
 *     Each pivot halves the widest window, so a boundary costs O(k log n) pivots of k binary
 *     searches: a few thousand key comparisons for P = 8.
 *  2. Merge. A loser tree (Knuth, as above) whose nodes carry a record's first 10 key bytes
 *     (80 bits) and its source in one 128-bit number, so that a match is one branch-free
 *     128-bit comparison that reads no record, and ties between equal keys go to the lower
 *     source, the earlier run: the merge is stable. Keys over 10 bytes compare their remaining
 *     bytes only when the first 10 agree. Each record is copied once, from its run to its place.
 */

/* The source of a node: the low bits of its second word. Exhausted sources show REC_SENTINEL,
 * which loses to every record (a record's source bits are never all ones). */
#include <omp.h>
#include <stdbool.h>
#include <string.h>

#include "local/internal.h"
#include "util/alloc.h"
#include "util/format.h"
#include "util/util.h"

#define REC_SRC_BITS    LOCAL_TUPLE_INDEX_BITS
#define REC_SRC_MASK    (((uint64_t)1 << REC_SRC_BITS) - 1)
#define REC_TUPLE_BYTES LOCAL_TUPLE_KEY_BYTES
/* How far ahead of a run's read position the tree prefetches, in records. */
#define REC_PREFETCH LOCAL_REC_PREFETCH

struct rnode {
    uint64_t hi, lo; /* key bytes 0-7; key bytes 8-9, then the source */
};

static const struct rnode REC_SENTINEL = {UINT64_MAX, UINT64_MAX};

/* One run's slice in a part: the record in the tree (next) and the end of the slice. */
struct rsource {
    const unsigned char *next, *end;
};

/* What every comparison needs: the layout and the sources' current records. */
struct rmerge {
    size_t R, koff, K;
    const struct rsource *src;
};

static inline struct rnode rnode_of(const struct rmerge *m, const unsigned char *rec, size_t s)
{
    uint64_t hi, ext;
    local_rec_key10(rec + m->koff, m->K, &hi, &ext);
    return (struct rnode){hi, ext << REC_SRC_BITS | s};
}

/* a before b. @tail (K > 10): equal first 10 bytes compare the rest of the keys. */
static inline bool rnode_less(const struct rmerge *m, struct rnode a, struct rnode b, bool tail)
{
    if (tail && a.hi == b.hi && a.lo >> REC_SRC_BITS == b.lo >> REC_SRC_BITS) {
        uint64_t sa = a.lo & REC_SRC_MASK, sb = b.lo & REC_SRC_MASK;
        if (sa != REC_SRC_MASK && sb != REC_SRC_MASK) {
            size_t off = m->koff + REC_TUPLE_BYTES;
            int c = memcmp(m->src[sa].next + off, m->src[sb].next + off, m->K - REC_TUPLE_BYTES);
            if (c != 0) {
                return c < 0;
            }
        }
    }
    unsigned __int128 x = (unsigned __int128)a.hi << 64 | a.lo;
    unsigned __int128 y = (unsigned __int128)b.hi << 64 | b.lo;
    return x < y;
}

/* Plays the matches under node @i, leaving the losers in the nodes; returns the winner. */
static struct rnode rtree_build(size_t i, size_t leaves, struct rnode *node, const struct rmerge *m,
                                bool tail)
{
    if (i >= leaves) {
        return node[i];
    }
    struct rnode l = rtree_build(2 * i, leaves, node, m, tail);
    struct rnode r = rtree_build(2 * i + 1, leaves, node, m, tail);
    bool right = rnode_less(m, r, l, tail);
    node[i] = right ? l : r;
    return right ? r : l;
}

/* Merges the k sources of @m into out (@total records) through a tree of @leaves leaves. */
static inline __attribute__((always_inline)) void
rmerge_tree(struct rsource *src, const struct rmerge *m, int k, size_t total, unsigned char *out,
            size_t leaves, struct rnode *node, bool tail)
{
    const size_t R = m->R;
    for (size_t i = 0; i < leaves; i++) {
        bool live = i < (size_t)k && src[i].next < src[i].end;
        node[leaves + i] = live ? rnode_of(m, src[i].next, i) : REC_SENTINEL;
    }
    struct rnode w = rtree_build(1, leaves, node, m, tail);
    for (size_t o = 0; o < total; o++) {
        size_t s = (size_t)(w.lo & REC_SRC_MASK);
        struct rsource *cs = &src[s];
        memcpy(out, cs->next, R);
        out += R;
        cs->next += R;
        w = cs->next < cs->end ? rnode_of(m, cs->next, s) : REC_SENTINEL;
        __builtin_prefetch(cs->next + REC_PREFETCH * R);
        /* Replay s's path: at each node the earlier of the two goes on up (masks, no branch). */
        for (size_t i = (leaves + s) >> 1; i >= 1; i >>= 1) {
            struct rnode nd = node[i];
            uint64_t mask = (uint64_t)0 - (uint64_t)rnode_less(m, nd, w, tail);
            uint64_t dh = (nd.hi ^ w.hi) & mask, dl = (nd.lo ^ w.lo) & mask;
            node[i].hi = nd.hi ^ dh;
            node[i].lo = nd.lo ^ dl;
            w.hi ^= dh;
            w.lo ^= dl;
        }
    }
}

/* The two instances: keys of at most 10 bytes never read a record to compare. */
static void rmerge_short(struct rsource *src, const struct rmerge *m, int k, size_t total,
                         unsigned char *out, size_t leaves, struct rnode *node)
{
    rmerge_tree(src, m, k, total, out, leaves, node, false);
}

static void rmerge_long(struct rsource *src, const struct rmerge *m, int k, size_t total,
                        unsigned char *out, size_t leaves, struct rnode *node)
{
    rmerge_tree(src, m, k, total, out, leaves, node, true);
}

/* The runs as step 1 sees them. */
struct rruns {
    const unsigned char *in;
    const size_t *begin; /* first record of each run */
    const uint64_t *count;
    int k;
    size_t R, koff, K;
};

/* Records of run t in [lo, hi) that come before record @m of run @s (key @p) in the order
 * (key, run, position): the window holds the answer (see rec_select()). */
static size_t rec_cut(const struct rruns *c, int t, size_t lo, size_t hi, const unsigned char *p,
                      int s, size_t m)
{
    if (t == s) {
        return m;
    }
    const unsigned char *base = c->in + c->begin[t] * c->R + c->koff;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = memcmp(base + mid * c->R, p, c->K);
        if (cmp < 0 || (cmp == 0 && t < s)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Step 1: pos[t] in every run such that the records before them are the @rank first in the
 * order (key, run, position). @w has room for 2k words. Every window [lo, hi) holds its run's
 * answer and only shrinks: a pivot among the first @rank records moves every lo up to the
 * pivot's cut (and past the pivot in its own run), any other pivot moves every hi down to it.
 * A pivot drawn from inside the windows has its cuts inside them too, since it lies between
 * every earlier pivot on its left and every one on its right. */
static void rec_select(const struct rruns *c, size_t rank, size_t *pos, size_t *w)
{
    const int k = c->k;
    size_t *hi = w, *cut = w + k;
    for (int t = 0; t < k; t++) {
        pos[t] = 0; /* the lower ends */
        hi[t] = c->count[t];
    }
    for (;;) {
        int s = -1;
        size_t widest = 0;
        for (int t = 0; t < k; t++) {
            if (hi[t] - pos[t] > widest) {
                widest = hi[t] - pos[t];
                s = t;
            }
        }
        if (s < 0) {
            return;
        }
        size_t m = pos[s] + widest / 2;
        const unsigned char *p = c->in + (c->begin[s] + m) * c->R + c->koff;
        size_t below = 0;
        for (int t = 0; t < k; t++) {
            cut[t] = rec_cut(c, t, pos[t], hi[t], p, s, m);
            below += cut[t];
        }
        if (below < rank) {
            for (int t = 0; t < k; t++) {
                pos[t] = cut[t];
            }
            pos[s] = m + 1;
        } else {
            for (int t = 0; t < k; t++) {
                hi[t] = cut[t];
            }
        }
    }
}

/* Step 2 for one part: merges the slices [from[r], to[r]) of every run into out. */
static void rmerge_part(const struct rruns *c, const size_t *from, const size_t *to,
                        unsigned char *out, struct rsource *src, size_t leaves, struct rnode *node)
{
    int k = 0;
    size_t total = 0;
    for (int r = 0; r < c->k; r++) {
        if (to[r] > from[r]) {
            src[k].next = c->in + (c->begin[r] + from[r]) * c->R;
            src[k].end = c->in + (c->begin[r] + to[r]) * c->R;
            total += to[r] - from[r];
            k++;
        }
    }
    if (k == 1) {
        util_copy(out, src[0].next, total * c->R);
        return;
    }
    if (k == 0) {
        return;
    }
    while (leaves / 2 >= (size_t)k) {
        leaves /= 2;
    }
    struct rmerge m = {c->R, c->koff, c->K, src};
    if (c->K > REC_TUPLE_BYTES) {
        rmerge_long(src, &m, k, total, out, leaves, node);
    } else {
        rmerge_short(src, &m, k, total, out, leaves, node);
    }
}

int local_merge_record_runs(const void *in, const uint64_t *run_counts, int runs, void *out,
                             const struct util_format *f, int threads)
{
    size_t total;
    int rc = local_runs_total(in, run_counts, runs, out, threads, &total);
    if (rc != UTIL_OK || f == NULL || !f->byte_key || total == 0) {
        return rc != UTIL_OK || f == NULL || !f->byte_key ? UTIL_EUSAGE : UTIL_OK;
    }
    const size_t R = f->record_size;
    if (total < LOCAL_MERGE_PAR_MIN / 8) {
        threads = 1; /* records are bigger: splitting pays earlier than for keys */
    }
    if (runs == 1) {
        local_merge_copy(out, in, total, R, threads);
        return UTIL_OK;
    }

    /* All bookkeeping is allocated here, so a failure leaves before any work. */
    size_t parts = (size_t)threads, nr = (size_t)runs;
    size_t leaves = local_tree_leaves(nr);
    size_t *begin = util_malloc(nr * sizeof(*begin));
    size_t *split = util_malloc((parts + 1) * nr * sizeof(*split));
    size_t *window = util_malloc(parts * 2 * nr * sizeof(*window));
    struct rsource *src = util_malloc(parts * nr * sizeof(*src));
    struct rnode *node = util_malloc(parts * 2 * leaves * sizeof(*node));
    if (begin == NULL || split == NULL || window == NULL || src == NULL || node == NULL) {
        rc = UTIL_ENOMEM;
        goto done;
    }
    local_runs_layout(run_counts, runs, parts, begin, split);
    const struct rruns c = {in, begin, run_counts, runs, R, f->key_offset, f->key_size};

#pragma omp parallel num_threads(threads)
    {
        size_t g = (size_t)omp_get_thread_num(), ng = (size_t)omp_get_num_threads();
        for (size_t p = g; p < parts; p += ng) {
            if (p > 0) {
                rec_select(&c, local_part_begin(total, p, parts), split + p * nr, window + 2 * p * nr);
            }
        }
#pragma omp barrier
        for (size_t p = g; p < parts; p += ng) {
            rmerge_part(&c, split + p * nr, split + (p + 1) * nr,
                        (unsigned char *)out + local_part_begin(total, p, parts) * R, src + p * nr,
                        leaves, node + p * 2 * leaves);
        }
    }

done:
    util_free(node);
    util_free(src);
    util_free(window);
    util_free(split);
    util_free(begin);
    return rc;
}

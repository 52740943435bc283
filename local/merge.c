/*
 * local/merge.c: threaded multi-way merge of sorted keys (see local/local.h); the record
 * merge, local/rmerge.c, shares its steps.
 *
 * Scheme, for N keys in k runs and T threads:
 *  1. Split. The output is cut into T equal parts. Part boundary g (the g*N/T-th smallest key
 *     in the order "by key, then by run, then by position") is located exactly in every run by
 *     multi-sequence selection: a binary search over the key space finds the key value v of
 *     that rank, counting with one binary search per run; the keys equal to v that still belong
 *     to the left part are then taken from the runs in run order. Consecutive boundaries are
 *     monotone in every run, so the parts are independent slices, balanced to one key however
 *     many duplicates there are. One boundary costs at most 64 rounds of k binary searches, each
 *     in a window that only shrinks (Varman et al., "Merging multiple lists on hierarchical-
 *     memory multiprocessors", J. Parallel Distrib. Comput. 12(2), 1991, give the classic
 *     selection; this is its value-space variant).
 *  2. Merge. Each thread merges its slice into its part of the output: a copy for one
 *     non-empty run, a branch-free two-way merge from both ends for two, a loser tree otherwise
 *     (Knuth, TAOCP vol. 3, 5.4.1, "tree of losers": ceil(log2 k) comparisons per key, each on
 *     a path whose nodes carry the loser's key so that no run is dereferenced on the way up).
 *     Exhausted runs present the key UINT64_MAX: the loop stops after the part's exact count,
 *     and a sentinel can only win when every remaining key equals UINT64_MAX, so the output
 *     stays right.
 *
 * Not done: a cascade of two-way merges. The one-ended two-way merge measured ~2 ns a key per
 * level here (10^7 keys in 0.02 s of CPU), so log2(k) levels cost about what the loser tree
 * costs up to 16 runs and more beyond, and the cascade would need an n-key buffer this
 * interface does not take. (Merging from both ends, 2^25 keys in two runs on one thread went
 * from 0.087-0.092 s to 0.050-0.058 s; the finish phase of P = 2 is exactly this merge.)
 */
#include "local/internal.h"

#include <omp.h>
#include <stdbool.h>
#include <string.h>

#include "util/alloc.h"
#include "util/format.h"
#include "util/util.h"

#define PREFETCH_KEYS LOCAL_PREFETCH_KEYS
#define MERGE_BOTH_ENDS_MAX LOCAL_MERGE_BOTH_ENDS_MAX
#define MERGE_PAR_MIN LOCAL_MERGE_PAR_MIN

/* Copies @total elements of @esize bytes from in to out, @threads threads each a part. */
void local_merge_copy(void *out, const void *in, size_t total, size_t esize, int threads)
{
#pragma omp parallel num_threads(threads)
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t lo = local_part_begin(total, t, nt), hi = local_part_begin(total, t + 1, nt);
        util_copy((char *)out + lo * esize, (const char *)in + lo * esize, (hi - lo) * esize);
    }
}

/* The checks both merges make: 0 with the element count in *@total, or UTIL_EUSAGE. */
int local_runs_total(const void *in, const uint64_t *run_counts, int runs, const void *out,
                      int threads, size_t *total)
{
    *total = 0;
    if (runs < 0 || threads < 1 || (runs > 0 && run_counts == NULL)) {
        return UTIL_EUSAGE;
    }
    for (int r = 0; r < runs; r++) {
        *total += run_counts[r];
    }
    return *total > 0 && (in == NULL || out == NULL) ? UTIL_EUSAGE : UTIL_OK;
}

/* Where each run starts (@begin) and the first and last rows of the split table (@split,
 * parts + 1 rows of @runs: where part g starts in run r; row parts is the end of every run). */
void local_runs_layout(const uint64_t *run_counts, int runs, size_t parts, size_t *begin,
                        size_t *split)
{
    size_t off = 0;
    for (int r = 0; r < runs; r++) {
        begin[r] = off;
        off += run_counts[r];
        split[r] = 0;
        split[parts * (size_t)runs + (size_t)r] = run_counts[r];
    }
}

/* The leaves of a tree for @runs sources: the smallest power of two >= runs. */
size_t local_tree_leaves(size_t runs)
{
    size_t leaves = 1;
    while (leaves < runs) {
        leaves *= 2;
    }
    return leaves;
}

/* First index in a[lo..hi) whose key is > v (upper bound). */
static size_t upper_bound(const uint64_t *a, size_t lo, size_t hi, uint64_t v)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* First index in a[lo..hi) whose key is >= v (lower bound). */
static size_t lower_bound(const uint64_t *a, size_t lo, size_t hi, uint64_t v)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/*
 * Step 1: positions pos[r] in every run such that the keys before them are exactly the @rank
 * smallest (rank < total), ties between runs going to the lower run. @lo and @hi are k words
 * of scratch each.
 */
static void select_split(const uint64_t *in, const size_t *begin, const uint64_t *count, int k,
                         size_t rank, size_t *pos, size_t *lo, size_t *hi)
{
    /* Find v, the smallest key value with more than @rank keys <= v. */
    uint64_t vlo = 0, vhi = UINT64_MAX;
    for (int r = 0; r < k; r++) {
        lo[r] = 0;
        hi[r] = count[r];
    }
    while (vlo < vhi) {
        uint64_t mid = vlo + (vhi - vlo) / 2;
        size_t le = 0;
        for (int r = 0; r < k; r++) {
            pos[r] = upper_bound(in + begin[r], lo[r], hi[r], mid);
            le += pos[r];
        }
        /* Narrow every run's window to where the upper bound of v can still be. */
        if (le > rank) {
            vhi = mid;
            for (int r = 0; r < k; r++) {
                hi[r] = pos[r];
            }
        } else {
            vlo = mid + 1;
            for (int r = 0; r < k; r++) {
                lo[r] = pos[r];
            }
        }
    }

    /* Keys < v all go left; the keys == v fill the rest of @rank in run order. */
    size_t less = 0;
    for (int r = 0; r < k; r++) {
        pos[r] = lower_bound(in + begin[r], 0, count[r], vlo);
        less += pos[r];
    }
    size_t need = rank - less;
    for (int r = 0; r < k && need > 0; r++) {
        size_t eq = upper_bound(in + begin[r], pos[r], count[r], vlo) - pos[r];
        size_t take = eq < need ? eq : need;
        pos[r] += take;
        need -= take;
    }
}

/* Emits the @n smallest keys of a[..ae) and b[..be) into out, branch-free, ties to a. */
static void merge_front(const uint64_t *a, const uint64_t *ae, const uint64_t *b,
                        const uint64_t *be, uint64_t *out, size_t n)
{
    uint64_t *oe = out + n;
    while (out < oe && a < ae && b < be) {
        uint64_t x = *a, y = *b;
        bool take_b = y < x;
        *out++ = take_b ? y : x;
        a += !take_b;
        b += take_b;
    }
    /* One input ran out (or nothing is left to emit): the rest comes from the other. */
    util_copy(out, a < ae ? a : b, (size_t)(oe - out) * sizeof(*out));
}

/* Emits the @n largest keys of a[..ae) and b[..be) into out[-n..0), largest last, ties to b. */
static void merge_back(const uint64_t *a, const uint64_t *ae, const uint64_t *b, const uint64_t *be,
                       uint64_t *out, size_t n)
{
    uint64_t *oe = out - n;
    while (out > oe && ae > a && be > b) {
        uint64_t x = ae[-1], y = be[-1];
        bool take_a = x > y;
        *--out = take_a ? x : y;
        ae -= take_a;
        be -= !take_a;
    }
    size_t rest = (size_t)(out - oe);
    util_copy(oe, ae > a ? ae - rest : be - rest, rest * sizeof(*out));
}

/*
 * Branch-free merge of a[0..na) and b[0..nb) into out, from both ends at once: the front emits
 * the (na + nb) / 2 smallest keys, the back the others, largest first. Every step of a merge
 * loads the keys its last comparison chose, so one end is a chain of dependent loads (~2.6 ns
 * a key here); two independent chains overlap (the bidirectional merge of merge-path sorts).
 * Each end is a complete merge of both whole inputs stopped after its count (the unchecked
 * loop only runs as long as no input can run out), so the two halves are right as values.
 * Ties go to a at the front and to b at the back, so the ends also meet exactly in each run.
 */
static void merge_two(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out)
{
    const uint64_t *af = a, *bf = b, *ab = a + na, *bb = b + nb;
    uint64_t *of = out, *ob = out + na + nb, *mid = out + (na + nb) / 2;
    /* In this many steps neither end can run out of either input: no bounds checks. */
    size_t steps = (size_t)(mid - out);
    steps = na < steps ? na : steps;
    steps = nb < steps ? nb : steps;
    for (size_t i = 0; i < steps; i++) {
        uint64_t x = *af, y = *bf;
        bool front_b = y < x;
        *of++ = front_b ? y : x;
        af += !front_b;
        bf += front_b;
        uint64_t u = ab[-1], v = bb[-1];
        bool back_a = u > v;
        *--ob = back_a ? u : v;
        ab -= back_a;
        bb -= !back_a;
    }
    merge_front(af, a + na, bf, b + nb, of, (size_t)(mid - of));
    merge_back(a, ab, b, bb, ob, (size_t)(ob - mid));
}

/* One source of the loser tree: its next key and the rest of its slice. */
struct source {
    const uint64_t *next;
    const uint64_t *end;
};

/*
 * Plays the matches of the subtree under node @i: stores each match's loser in its node and
 * returns the subtree's winner (source in the return value, key in *@key). The winner is the
 * smaller key, or the larger one in a @back tree.
 */
static unsigned tree_build(size_t i, size_t leaves, uint64_t *node_key, unsigned *node_src,
                           bool back, uint64_t *key)
{
    if (i >= leaves) {
        *key = node_key[i];
        return node_src[i];
    }
    uint64_t lk, rk;
    unsigned ls = tree_build(2 * i, leaves, node_key, node_src, back, &lk);
    unsigned rs = tree_build(2 * i + 1, leaves, node_key, node_src, back, &rk);
    if (back ? rk > lk : rk < lk) {
        node_key[i] = lk;
        node_src[i] = ls;
        *key = rk;
        return rs;
    }
    node_key[i] = rk;
    node_src[i] = rs;
    *key = lk;
    return ls;
}

/*
 * Replays the path of the last winner's source to the root with its next key (*@key, *@src):
 * at every node the better of the two (the smaller, or the larger in a @back tree) goes on up
 * and the other stays. Written with masks: compilers turn the ternary form into a branch that
 * mispredicts half the time on random keys.
 */
static inline void tree_replay(uint64_t *node_key, unsigned *node_src, size_t leaves, bool back,
                               uint64_t *key, unsigned *src)
{
    uint64_t wkey = *key;
    unsigned wsrc = *src;
    for (size_t i = (leaves + wsrc) >> 1; i >= 1; i >>= 1) {
        uint64_t nk = node_key[i];
        unsigned ns = node_src[i];
        uint64_t mask = (uint64_t)0 - (uint64_t)(back ? nk > wkey : nk < wkey);
        uint64_t dk = (nk ^ wkey) & mask;
        unsigned ds = (ns ^ wsrc) & (unsigned)mask;
        node_key[i] = nk ^ dk;
        node_src[i] = ns ^ ds;
        wkey ^= dk;
        wsrc ^= ds;
    }
    *key = wkey;
    *src = wsrc;
}

/*
 * Loser-tree merge of the @k (>= 3) slices src[0..k) into out[0..total). Up to
 * MERGE_BOTH_ENDS_MAX slices it works from both ends at once, as merge_two() does: a tree of
 * minima emits the total / 2 smallest keys from the front, a tree of maxima the others from
 * the back, each over all of every slice with cursors of its own (src[k..2k) for the back),
 * each a complete merge stopped after its count, so the two halves are right as values
 * whatever either reads ahead. Beyond that, the front tree emits everything. @src has room
 * for 2k sources, @node_key and @node_src for 4 * leaves entries (two trees), @leaves being k
 * rounded up to a power of two.
 */
static void merge_tree(struct source *src, int k, size_t total, uint64_t *out, size_t leaves,
                       uint64_t *node_key, unsigned *node_src)
{
    uint64_t *fkey = node_key, *bkey = node_key + 2 * leaves;
    unsigned *fsrc = node_src, *bsrc = node_src + 2 * leaves;
    struct source *back = src + k;
    /* Leaves: each source's first key at the front, its last at the back; exhausted or
     * padding sources show UINT64_MAX at the front and 0 at the back. */
    for (size_t i = 0; i < leaves; i++) {
        bool live = i < (size_t)k && src[i].next < src[i].end;
        if (i < (size_t)k) {
            back[i] = src[i];
        }
        fkey[leaves + i] = live ? *src[i].next++ : UINT64_MAX;
        bkey[leaves + i] = live ? *--back[i].end : 0;
        fsrc[leaves + i] = bsrc[leaves + i] = (unsigned)i;
    }
    bool both = k <= MERGE_BOTH_ENDS_MAX;
    uint64_t fw, bw = 0;
    unsigned fws = tree_build(1, leaves, fkey, fsrc, false, &fw), bws = 0;
    if (both) {
        bws = tree_build(1, leaves, bkey, bsrc, true, &bw);
    }

    /* Emit each winner, refill from its source, replay its path to the root. A sentinel can
     * only win when every key left equals it, so the output stays right. */
    size_t front = both ? total / 2 : total;
    uint64_t *ob = out + total;
    for (size_t o = 0; o < front; o++) {
        out[o] = fw;
        struct source *s = &src[fws];
        fw = s->next < s->end ? *s->next++ : UINT64_MAX;
        /* Many runs are more streams than the hardware prefetchers follow: fetch ahead. */
        __builtin_prefetch(s->next + PREFETCH_KEYS);
        tree_replay(fkey, fsrc, leaves, false, &fw, &fws);
        if (both) {
            *--ob = bw;
            struct source *t = &back[bws];
            bw = t->end > t->next ? *--t->end : 0;
            __builtin_prefetch(t->end - PREFETCH_KEYS);
            tree_replay(bkey, bsrc, leaves, true, &bw, &bws);
        }
    }
    if (ob > out + front) {
        *--ob = bw; /* an odd total: the back has one more */
    }
}

/*
 * Step 2 for one part: merges the slices [from[r], to[r]) of every run into out. @src has room
 * for 2 * @runs sources, @node_key and @node_src for 4 * @leaves nodes (leaves >= runs, a
 * power of two).
 */
static void merge_part(const uint64_t *in, const size_t *begin, int runs, const size_t *from,
                       const size_t *to, uint64_t *out, struct source *src, size_t leaves,
                       uint64_t *node_key, unsigned *node_src)
{
    /* Only the non-empty slices take part. */
    int k = 0;
    size_t total = 0;
    for (int r = 0; r < runs; r++) {
        if (to[r] > from[r]) {
            src[k].next = in + begin[r] + from[r];
            src[k].end = in + begin[r] + to[r];
            total += to[r] - from[r];
            k++;
        }
    }

    if (k == 1) {
        util_copy(out, src[0].next, total * sizeof(*out));
    } else if (k == 2) {
        merge_two(src[0].next, (size_t)(src[0].end - src[0].next), src[1].next,
                  (size_t)(src[1].end - src[1].next), out);
    } else if (k > 2) {
        /* A tree just big enough for the live slices. */
        while (leaves / 2 >= (size_t)k) {
            leaves /= 2;
        }
        merge_tree(src, k, total, out, leaves, node_key, node_src);
    }
}

int local_merge_runs(const uint64_t *in, const uint64_t *run_counts, int runs, uint64_t *out,
                      int threads)
{
    size_t total;
    int rc = local_runs_total(in, run_counts, runs, out, threads, &total);
    if (rc != UTIL_OK || total == 0) {
        return rc;
    }
    if (total < MERGE_PAR_MIN) {
        threads = 1;
    }
    if (runs == 1) {
        local_merge_copy(out, in, total, sizeof(*in), threads); /* nothing to merge */
        return UTIL_OK;
    }

    /* All bookkeeping is allocated here, so a failure leaves before any work. */
    size_t parts = (size_t)threads, nr = (size_t)runs;
    size_t leaves = local_tree_leaves(nr);
    size_t *begin = util_malloc(nr * sizeof(*begin));
    size_t *split = util_malloc((parts + 1) * nr * sizeof(*split));
    size_t *window = util_malloc(2 * parts * nr * sizeof(*window));
    /* Per part: 2 cursors per run (front and back) and two trees of 2 * leaves nodes. */
    struct source *src = util_malloc(parts * 2 * nr * sizeof(*src));
    uint64_t *node_key = util_malloc(parts * 4 * leaves * sizeof(*node_key));
    unsigned *node_src = util_malloc(parts * 4 * leaves * sizeof(*node_src));
    if (begin == NULL || split == NULL || window == NULL || src == NULL || node_key == NULL ||
        node_src == NULL) {
        rc = UTIL_ENOMEM;
        goto done;
    }
    local_runs_layout(run_counts, runs, parts, begin, split);

#pragma omp parallel num_threads(threads)
    {
        size_t g = (size_t)omp_get_thread_num(), ng = (size_t)omp_get_num_threads();
        /* Each part finds its own start (step 1), then merges its slice (step 2). */
        for (size_t p = g; p < parts; p += ng) {
            if (p > 0) {
                size_t *lo = window + 2 * p * nr;
                select_split(in, begin, run_counts, runs, local_part_begin(total, p, parts),
                             split + p * nr, lo, lo + nr);
            }
        }
#pragma omp barrier
        for (size_t p = g; p < parts; p += ng) {
            merge_part(in, begin, runs, split + p * nr, split + (p + 1) * nr,
                       out + local_part_begin(total, p, parts), src + p * 2 * nr, leaves,
                       node_key + p * 4 * leaves, node_src + p * 4 * leaves);
        }
    }

done:
    util_free(node_src);
    util_free(node_key);
    util_free(src);
    util_free(window);
    util_free(split);
    util_free(begin);
    return rc;
}

/*
 * tests/unit/test_levels.c: the pure rules of the multi-level sort (sort/rules.h, "Levels"),
 * against brute force, without MPI.
 *
 * 1. Groups: sort_level_groups() gives 1 <= k <= ranks (all ranks at the last level), and the
 *    levels of any P end in groups of one rank; sort_level_first() and sort_level_group_of()
 *    agree with a scan, groups of consecutive ranks whose sizes differ by at most one.
 * 2. The prefix-sum assignment: sort_level_deal() equals dealing the group's sequence element
 *    by element; every receiver gets exactly its range; a sender's receivers form one run (all
 *    of each range between its first and last receiver); a sender
 *    of c elements reaches at most ceil(c / floor(total / s)) + 1 receivers.
 * 3. Targets: sort_level_target() is sort_split_target() for the whole sort, clamped to the
 *    group, monotone along the ranks.
 * 4. The whole multi-level sort replayed in one process with these rules (exact splitters at
 *    the level targets, sort_bucket_boundary() with the group's positions, the deal, a stable
 *    merge by sender): for P = 1..30, L = 1..4, empty ranks, n < P and heavy duplicates, the
 *    result is the stable sort of the input (keys and input positions), each rank holding
 *    floor or ceil of n/P: the tie-break by a rank's offset in its group is valid at every level.
 * On the harness of tests/unit/test.h: the tests groups, deal, targets and replay; with -v each
 * says how many cases it checked.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sort/rules.h"
#include "tests/unit/test.h"

int main(int argc, char **argv);

/* ---- 1. groups ------------------------------------------------------------------------------ */

/* The depth at which every group of @ranks is one rank, following the levels' rule. */
static int ends_in_ones(int ranks, int left)
{
    if (ranks == 1) {
        return 1;
    }
    if (left == 0) {
        return 0;
    }
    int k = sort_level_groups(ranks, left);
    for (int j = 0; j < k; j++) {
        int s = sort_level_first(j + 1, ranks, k) - sort_level_first(j, ranks, k);
        if (!ends_in_ones(s, left - 1)) {
            return 0;
        }
    }
    return 1;
}

static void test_groups(void)
{
    int cases = 0;
    for (int ranks = 1; ranks <= 300; ranks++) {
        for (int left = 1; left <= SORT_LEVELS_MAX; left++) {
            int k = sort_level_groups(ranks, left);
            expect_true(k >= 1 && k <= ranks, "ranks %d left %d: k %d", ranks, left, k);
            expect_true(left > 1 || k == ranks, "the last level: k %d of %d", k, ranks);
            expect_true(ends_in_ones(ranks, left),
                        "ranks %d, %d levels do not end in one rank a group", ranks, left);
            cases++;
        }
        for (int k = 1; k <= ranks; k++) {
            expect_true(sort_level_first(0, ranks, k) == 0 &&
                            sort_level_first(k, ranks, k) == ranks,
                        "ranks %d k %d: ends", ranks, k);
            int lo = ranks, hi = 0;
            for (int j = 0; j < k; j++) {
                int s = sort_level_first(j + 1, ranks, k) - sort_level_first(j, ranks, k);
                lo = s < lo ? s : lo;
                hi = s > hi ? s : hi;
            }
            expect_true(lo >= 1 && hi - lo <= 1, "ranks %d k %d: sizes %d..%d", ranks, k, lo, hi);
            for (int r = 0, j = 0; r < ranks; r++) {
                while (sort_level_first(j + 1, ranks, k) <= r) {
                    j++;
                }
                expect_true(sort_level_group_of(r, ranks, k) == j,
                            "ranks %d k %d rank %d: group %d, "
                            "scan %d",
                            ranks, k, r, sort_level_group_of(r, ranks, k), j);
            }
            cases++;
        }
    }
    expect_true(sort_level_groups(65536, 2) == 256 && sort_level_groups(65536, 4) == 16 &&
                    sort_level_groups(27, 3) == 3 && sort_level_groups(16, 2) == 4,
                "the usual shapes: %d %d %d %d", sort_level_groups(65536, 2),
                sort_level_groups(65536, 4), sort_level_groups(27, 3), sort_level_groups(16, 2));
    if (test_verbose) {
        printf("groups: %d cases\n", cases);
    }
}

/* ---- 2. the deal ---------------------------------------------------------------------------- */

static void test_deal(void)
{
    int cases = 0;
    for (int iter = 0; iter < 3000; iter++) {
        int senders = 1 + (int)(test_rand() % 40), s = 1 + (int)(test_rand() % 20);
        uint64_t *piece = test_calloc((size_t)senders, sizeof(uint64_t));
        uint64_t total = 0, scale = iter % 3 == 0 ? 3 : iter % 3 == 1 ? 50 : 100000;
        for (int r = 0; r < senders; r++) {
            piece[r] = test_rand() % 4 == 0 ? 0 : test_rand() % scale; /* empty pieces among them */
            total += piece[r];
        }
        uint64_t *got = test_calloc((size_t)s, sizeof(uint64_t));
        uint64_t *counts = test_calloc((size_t)s, sizeof(uint64_t));
        uint64_t x = 0;
        for (int r = 0; r < senders; r++) {
            int n = sort_level_deal(x, piece[r], total, s, counts);
            /* Element by element: position t goes to the i with begin(i) <= t < begin(i+1). */
            uint64_t *brute = test_calloc((size_t)s, sizeof(uint64_t));
            if (piece[r] <= 2000) {
                for (uint64_t t = x; t < x + piece[r]; t++) {
                    int i = 0;
                    while (sort_level_begin(total, s, i + 1) <= t) {
                        i++;
                    }
                    brute[i]++;
                }
                expect_true(memcmp(brute, counts, (size_t)s * sizeof(uint64_t)) == 0,
                            "sender %d of %d, s %d: the deal differs from dealing one by one", r,
                            senders, s);
            }
            int nonzero = 0, first = -1, last = -1;
            uint64_t sum = 0;
            for (int i = 0; i < s; i++) {
                if (counts[i] > 0) {
                    nonzero++;
                    first = first < 0 ? i : first;
                    last = i;
                }
                sum += counts[i];
                got[i] += counts[i];
            }
            expect_true(n == nonzero && sum == piece[r],
                        "returned %d for %d, dealt %" PRIu64 " of %" PRIu64, n, nonzero, sum,
                        piece[r]);
            /* One run: every receiver between the first and the last with a range at all. */
            for (int i = first + 1; nonzero > 0 && i < last; i++) {
                expect_true(counts[i] ==
                                sort_level_begin(total, s, i + 1) - sort_level_begin(total, s, i),
                            "the receivers are no run (receiver %d of %d..%d)", i, first, last);
            }
            uint64_t range = total / (uint64_t)s;
            expect_true(range == 0 || (uint64_t)nonzero <= (piece[r] + range - 1) / range + 1,
                        "%d receivers for %" PRIu64 " elements, ranges of %" PRIu64, nonzero,
                        piece[r], range);
            x += piece[r];
            free(brute);
            cases++;
        }
        for (int i = 0; i < s; i++) {
            expect_true(got[i] == sort_level_begin(total, s, i + 1) - sort_level_begin(total, s, i),
                        "receiver %d of %d got %" PRIu64, i, s, got[i]);
        }
        free(piece);
        free(got);
        free(counts);
    }
    if (test_verbose) {
        printf("deal: %d senders dealt\n", cases);
    }
}

/* ---- 3. targets ----------------------------------------------------------------------------- */

static void test_targets(void)
{
    int cases = 0;
    for (int p = 1; p <= 40; p++) {
        for (uint64_t n = 0; n < 200; n += 1 + n / 3) {
            for (int r = 0; r <= p; r++) {
                expect_true(sort_level_target(n, p, r, 0, n) == sort_split_target(r, n, p),
                            "whole sort: n %" PRIu64 " p %d r %d", n, p, r);
                cases++;
            }
            /* A group that starts off its target and holds fewer: clamped, monotone. */
            uint64_t off = n / 3, ng = n / 2, prev = 0;
            for (int r = 0; r <= p; r++) {
                uint64_t t = sort_level_target(n, p, r, off, ng);
                expect_true(t <= ng && t >= prev, "group: n %" PRIu64 " p %d r %d: %" PRIu64, n, p,
                            r, t);
                prev = t;
                cases++;
            }
        }
    }
    if (test_verbose) {
        printf("targets: %d cases\n", cases);
    }
}

/* ---- 4. the whole sort, replayed ------------------------------------------------------------ */

/* An element: its key and its position in the whole input (the stable order's tie-break). */
struct elem {
    uint64_t key, input;
};

/* One rank's elements, sorted by (key, position in its group). */
struct rank_data {
    struct elem *e;
    uint64_t n;
};

static int by_key(const void *x, const void *y)
{
    const struct elem *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Stable sort by key (insertion into a merge sort: qsort is not stable). */
static void stable_sort(struct elem *e, uint64_t n, struct elem *tmp)
{
    if (n < 2) {
        return;
    }
    uint64_t h = n / 2;
    stable_sort(e, h, tmp);
    stable_sort(e + h, n - h, tmp);
    uint64_t i = 0, j = h, o = 0;
    while (i < h && j < n) {
        tmp[o++] = by_key(&e[j], &e[i]) < 0 ? e[j++] : e[i++];
    }
    while (i < h) {
        tmp[o++] = e[i++];
    }
    while (j < n) {
        tmp[o++] = e[j++];
    }
    memcpy(e, tmp, n * sizeof(*e));
}

/*
 * One level on the group of @gs ranks starting at rank @g0 of @p, whose elements start at global
 * rank @off of @nw, with @left levels to go: as sort/levels.c runs it, with exact splitters
 * (every candidate rank is known here). Recurses into the groups.
 */
static void replay(struct rank_data *rk, int g0, int gs, int p, uint64_t nw, uint64_t off, int left)
{
    if (gs == 1 || left == 0) {
        return;
    }
    int k = sort_level_groups(gs, left);
    if (k < 2) {
        replay(rk, g0, gs, p, nw, off, left - 1);
        return;
    }
    uint64_t ng = 0, *offset = test_calloc((size_t)gs, sizeof(uint64_t));
    for (int r = 0; r < gs; r++) {
        offset[r] = ng;
        ng += rk[g0 + r].n;
    }
    /* The group's elements with their group positions, in (key, position) order: splitter j is
     * the element at its target (the top of the order when the target is the group's end). */
    struct elem *all = test_calloc(ng, sizeof(*all)), *tmp = test_calloc(ng, sizeof(*all));
    uint64_t *pos = test_calloc(ng, sizeof(uint64_t));
    for (int r = 0, at = 0; r < gs; r++) {
        for (uint64_t i = 0; i < rk[g0 + r].n; i++, at++) {
            all[at] = (struct elem){rk[g0 + r].e[i].key, offset[r] + i}; /* input := group pos */
        }
    }
    stable_sort(all, ng, tmp); /* by key, ties by group position: (key, position) order */
    uint64_t *sk = test_calloc((size_t)k, sizeof(uint64_t)), *sp = test_calloc((size_t)k, sizeof(uint64_t));
    for (int j = 1; j < k; j++) {
        uint64_t t = sort_level_target(nw, p, g0 + sort_level_first(j, gs, k), off, ng);
        sk[j] = t < ng ? all[t].key : UINT64_MAX;
        sp[j] = t < ng ? all[t].input : UINT64_MAX;
    }
    /* Pieces: the binary searches of the bucket phase, on keys with the group positions. */
    uint64_t *piece = test_calloc((size_t)gs * k, sizeof(uint64_t));
    uint64_t *total = test_calloc((size_t)k, sizeof(uint64_t));
    uint64_t *keys = test_calloc(ng + 1, sizeof(uint64_t));
    for (int r = 0; r < gs; r++) {
        struct rank_data *d = &rk[g0 + r];
        for (uint64_t i = 0; i < d->n; i++) {
            keys[i] = d->e[i].key;
        }
        uint64_t prev = 0;
        for (int j = 0; j < k; j++) {
            uint64_t next = j + 1 < k
                                ? sort_bucket_boundary(keys, d->n, offset[r], sk[j + 1], sp[j + 1])
                                : d->n;
            piece[(size_t)r * k + j] = next - prev;
            total[j] += next - prev;
            prev = next;
        }
    }
    /* Deal every piece to its group's ranks; each receiver takes its runs in sender order. */
    struct rank_data *next = test_calloc((size_t)gs, sizeof(*next));
    for (int r = 0; r < gs; r++) {
        next[r].e = test_calloc(ng, sizeof(struct elem));
    }
    uint64_t *x = test_calloc((size_t)k, sizeof(uint64_t)),
             *counts = test_calloc((size_t)gs, sizeof(uint64_t));
    for (int r = 0; r < gs; r++) {
        uint64_t at = 0;
        for (int j = 0; j < k; j++) {
            int f = sort_level_first(j, gs, k), s = sort_level_first(j + 1, gs, k) - f;
            uint64_t c = piece[(size_t)r * k + j];
            sort_level_deal(x[j], c, total[j], s, counts);
            for (int i = 0; i < s; i++) {
                struct rank_data *d = &next[f + i];
                memcpy(d->e + d->n, rk[g0 + r].e + at, counts[i] * sizeof(struct elem));
                d->n += counts[i];
                at += counts[i];
            }
            x[j] += c;
        }
        expect_true(at == rk[g0 + r].n, "rank %d dealt %" PRIu64 " of %" PRIu64, g0 + r, at,
                    rk[g0 + r].n);
    }
    /* The merge with ties to the lower sender: a stable sort of the runs in sender order. */
    for (int r = 0; r < gs; r++) {
        stable_sort(next[r].e, next[r].n, tmp);
        free(rk[g0 + r].e);
        rk[g0 + r] = next[r];
    }
    uint64_t before = 0;
    for (int j = 0; j < k; j++) {
        int f = sort_level_first(j, gs, k), s = sort_level_first(j + 1, gs, k) - f;
        replay(rk, g0 + f, s, p, nw, off + before, left - 1);
        before += total[j];
    }
    free(offset);
    free(all);
    free(tmp);
    free(pos);
    free(sk);
    free(sp);
    free(piece);
    free(total);
    free(keys);
    free(next);
    free(x);
    free(counts);
}

static void test_replay(void)
{
    int cases = 0;
    for (int p = 1; p <= 30; p++) {
        for (int levels = 1; levels <= SORT_LEVELS_MAX; levels++) {
            for (int shape = 0; shape < 4; shape++) {
                /* 0: even slices; 1: empty ranks; 2: fewer elements than ranks; 3: one holds all */
                struct rank_data *rk = test_calloc((size_t)p, sizeof(*rk));
                uint64_t n = 0, distinct = shape == 1 ? 3 : 1 + test_rand() % 40;
                for (int r = 0; r < p; r++) {
                    uint64_t m = shape == 0   ? 20 + test_rand() % 5
                                 : shape == 1 ? (test_rand() % 3 == 0 ? 0 : test_rand() % 30)
                                 : shape == 2 ? (r % 3 == 0)
                                              : (r == p / 2 ? 200 : 0);
                    rk[r].e = test_calloc(m, sizeof(struct elem));
                    rk[r].n = m;
                    n += m;
                }
                struct elem *in = test_calloc(n, sizeof(*in)), *tmp = test_calloc(n, sizeof(*in));
                for (int r = 0, at = 0; r < p; r++) {
                    for (uint64_t i = 0; i < rk[r].n; i++, at++) {
                        in[at] = (struct elem){test_rand() % distinct, (uint64_t)at};
                        rk[r].e[i] = in[at];
                    }
                    stable_sort(rk[r].e, rk[r].n, tmp); /* the local sort, stable */
                }
                stable_sort(in, n, tmp);
                replay(rk, 0, p, p, n, 0, levels);
                uint64_t at = 0;
                int ok = 1;
                for (int r = 0; r < p; r++) {
                    uint64_t want = sort_split_target(r + 1, n, p) - sort_split_target(r, n, p);
                    expect_true(rk[r].n == want,
                                "P %d L %d shape %d: rank %d holds %" PRIu64 ", not %" PRIu64, p,
                                levels, shape, r, rk[r].n, want);
                    for (uint64_t i = 0; i < rk[r].n && at < n; i++, at++) {
                        ok &= rk[r].e[i].key == in[at].key && rk[r].e[i].input == in[at].input;
                    }
                    free(rk[r].e);
                }
                expect_true(ok && at == n, "P %d L %d shape %d: not the stable sort of the input",
                            p, levels, shape);
                free(rk);
                free(in);
                free(tmp);
                cases++;
            }
        }
    }
    if (test_verbose) {
        printf("replay: %d sorts stable and exact\n", cases);
    }
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {TEST(groups), TEST(deal), TEST(targets), TEST(replay),
                                        TEST_END};
    return test_main(argc, argv, tests);
}

/*
 * sim/levelmodel.c: the multi-level sort (sort/levels.c, --levels) modelled level by level.
 *
 * A level splits each group of gs ranks into k = sort_level_groups(gs, left) groups and costs,
 * on its slowest group (P ranks of N elements of E bytes, the machine of sortmodel.h):
 *   sample, splitters  the histogram selection of the k - 1 splitters at the level's targets
 *                      (sort_level_target()), replayed in global-rank space with the sort's own
 *                      rules, each round's all-gather, count and all-reduce over gs ranks, as
 *                      sim_sort_model() prices a round;
 *   bucket             no search (the selection's last round counted the boundaries); at the
 *                      last level the all-to-all of the counts, else an all-reduce and an
 *                      exclusive scan of k counts and one count message to each receiver;
 *   exchange           the level's count matrix from the prefix-sum deal (sort_level_deal()):
 *                      up to SIM_LEVEL_MATRIX_P ranks a group the back-ends' own models on it
 *                      (--exchange auto: the cheapest, as the sort prices it up to 1024 ranks),
 *                      beyond closed forms: sparse's a start-up a non-empty piece, the others'
 *                      equal-blocks forms over the group (a start-up a rank of the group, or
 *                      their rounds), auto there being what the sort runs unpriced (sparse at a
 *                      level that is not the last, else alltoallv);
 *   finish             the merge of the runs received (a re-sort beyond what it pays for), and
 *                      MPI_Comm_create_group of the next level (a few all-reduces over the
 *                      new group), which the sort times in the finish phase; after the last
 *                      level, with exact shares (--balance auto or exact), the shift: a scan,
 *                      four messages, tol elements and a copy of the slice.
 * The counts travel with the sort: a pattern's matrix up to SIM_LEVEL_MATRIX_P ranks gives every
 * group's holdings exactly (rank r of a group holds h[r][c] elements bound for its rank c; a
 * receiver's range of its group's sequence takes from each block its overlap); beyond, and for
 * equal blocks always, one group a level stands for all, every rank holding N elements spread
 * evenly over its group's ranks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "local/local.h"
#include "sim/sortmodel.h"
#include "sort/rules.h"
#include "util/alloc.h"
#include "util/util.h"

/* The sort's --exchange auto prices up to this many ranks (sort/exchange.c, AUTO_MAX_P). */
#define AUTO_MAX_P 1024

static double log2u(double x)
{
    return x > 1 ? log2(x) : 0;
}

static double steps(int p)
{
    return ceil(log2u((double)p));
}

/* The whole case and what every level shares. */
struct ctx {
    const struct sim_sort_case *sc;
    const struct sim_machine *m;
    int levels;
    double share; /* compute slows down by this: ranks x threads over cores */
    uint64_t n;   /* elements of the sort */
    uint64_t tol; /* every splitter's window half-width */
    int exact;
    const struct exchange_ops *sparse; /* the back-end of non-empty pieces */
};

/* One group at one level: its ranks, where it sits, and what its ranks hold. */
struct group {
    int g0, gs;   /* first rank among all, ranks */
    uint64_t off; /* elements of the sort before its first */
    uint64_t ng;  /* its elements */
    uint64_t *h;  /* [gs * gs] rank r holds h[r][c] elements bound for its rank c; NULL: every
                     rank holds ng / gs, evenly over the ranks (equal blocks) */
};

/* ---- the selection --------------------------------------------------------------------------- */

/* The selection of group @g's k - 1 splitters at the level's targets, replayed as the sort runs
 * it (sort/select.c), priced into @lv (sample: round 1's gather; splitters: the rest), @per the
 * most elements a rank holds. */
static int select_cost(const struct ctx *cx, const struct group *g, int k, double per,
                       struct sim_level *lv)
{
    const struct sim_machine *m = cx->m;
    size_t nb = (size_t)(k > 1 ? k - 1 : 1);
    struct sort_bracket *br = util_calloc(nb, sizeof(*br));
    struct sort_split_range *r = util_malloc(nb * sizeof(*r));
    uint64_t *target = util_malloc(nb * sizeof(uint64_t));
    struct sim_drawn d = {NULL, 0, 0};
    int err = UTIL_OK;
    if (br == NULL || r == NULL || target == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for %d brackets", k);
        goto out;
    }
    uint64_t open = sort_split_start(br, k, g->ng, cx->tol);
    for (int j = 1; j < k; j++) {
        target[j - 1] = sort_level_target(cx->n, cx->sc->p, g->g0 + sort_level_first(j, g->gs, k),
                                          g->off, g->ng);
        if (g->ng > 0 && target[j - 1] >= g->ng && !br[j - 1].done) {
            br[j - 1].done = 1; /* the top of the order, set without a round */
            open--;
        }
    }
    double gs = g->gs, sel = 0, cand_max = 0;
    int indexed = 0; /* the count's index (keys, not records): the first round's, if it pays */
    for (int round = 0; open > 0 && round < 64; round++) {
        sort_split_ranges(br, k, NULL, NULL, r);
        d.n = 0;
        uint64_t rng = sort_split_seed(round, 0);
        if (sort_split_draw(r, nb, &rng, sim_drawn_keep, &d) != UTIL_OK) {
            err = util_fail(UTIL_ENOMEM, "out of memory for the candidates");
            goto out;
        }
        double c = (double)d.n;
        double gather = m->alpha * 2 * steps(g->gs) +
                        m->beta * (4.0 * gs + 16 * c * (gs - 1) / gs) +
                        1e-9 * m->tuple_ns * c * log2u(c) * cx->share;
        /* The count searches from each candidate to the next (sort/select.c): on a rank holding
         * its share, over the local gap between consecutive candidates' global ranks, through
         * the count's index once a round has made it; the candidates of a narrow bracket lie
         * close together. */
        double count = 0, scale = per / fmax(1, (double)g->ng);
        if (round == 0 && cx->sc->elem == 8 && sort_count_index_pays(d.n, (uint64_t)per)) {
            indexed = 1;
            count += sim_count_index_seconds(m, per);
        }
        for (uint64_t i = 0; i < d.n; i++) {
            double gap = (double)(d.r[i] - (i ? d.r[i - 1] : 0)) * scale;
            count += sim_count_seconds(m, gap, indexed);
        }
        count *= cx->share;
        double reduce = m->alpha * 2 * steps(g->gs) + m->beta * 2 * 8 * c * (gs - 1) / gs;
        if (round == 0) {
            lv->seconds[0] = fmax(lv->seconds[0], gather);
        } else {
            sel += gather;
        }
        sel += count + reduce;
        cand_max = fmax(cand_max, c);
        lv->rounds = (uint64_t)round + 1 > lv->rounds ? (uint64_t)round + 1 : lv->rounds;
        open = sort_split_update(br, k, g->ng, cx->tol, target, d.r, d.n, NULL, NULL);
    }
    lv->seconds[1] = fmax(lv->seconds[1], sel);
    /* The candidates and their counts, the brackets and targets, a count a rank of the group. */
    double mem = 24 * cand_max + 48.0 * k + 8.0 * gs;
    lv->select_bytes = (uint64_t)fmax((double)lv->select_bytes, mem);
out:
    util_free(br);
    util_free(r);
    util_free(target);
    util_free(d.r);
    return err;
}

/* ---- the exchange ---------------------------------------------------------------------------- */

/* The machine a group of @gs consecutive ranks exchanges on, as sim_exchange_machine() has it
 * for a sort of gs ranks: one node's constants stand for the network when the group spans
 * nodes (*@extrapolated). */
static struct exchange_machine group_machine(const struct ctx *cx, int gs, int *extrapolated)
{
    struct sim_sort_case g = *cx->sc;
    g.p = gs;
    g.ranks_per_node = g.ranks_per_node > gs ? gs : g.ranks_per_node;
    return sim_exchange_machine(&g, cx->m, extrapolated);
}

/* Prices back-end @b on the byte matrix of @gs ranks into *@secs (NAN when its model cannot),
 * on the group's machine, the counts known (the level's count messages gave them), as
 * sim_sort_exchange() prices one level's. */
static void price_matrix(const struct ctx *cx, int gs, const uint64_t *bytes,
                         const struct exchange_ops *b, double *secs, char *note, size_t cap)
{
    struct exchange_model_case c;
    struct exchange_model_result r;
    int extrapolated;
    struct exchange_machine ex = group_machine(cx, gs, &extrapolated);
    memset(&c, 0, sizeof(c));
    *secs = NAN;
    if (exchange_model_case_init(&c, gs, bytes, cx->sc->elem, 0) == UTIL_OK) {
        c.alpha = cx->m->alpha;
        c.beta = cx->m->beta;
        c.machine = &ex;
        c.counts_known = 1;
        if (exchange_model_run(b->models[0], &c, &r) == UTIL_OK) {
            *secs = r.predicted;
            (void)snprintf(note, cap, "%s model, %llu rounds%s", b->models[0]->name,
                           (unsigned long long)r.rounds,
                           extrapolated ? "; one node's constants for the network" : "");
        }
    }
    exchange_model_case_free(&c);
}

/* Prices back-end @b without a matrix: a rank sends @msgs non-empty pieces of @vol bytes in all
 * in a group of @gs ranks (equal pieces at the last level: a block to every rank). */
static void price_closed(const struct ctx *cx, int gs, uint64_t msgs, double vol, int last,
                         const struct exchange_ops *b, double *secs, char *note, size_t cap)
{
    struct exchange_model_result r;
    int extrapolated;
    struct exchange_machine ex = group_machine(cx, gs, &extrapolated);
    struct exchange_model_equal eq = {.p = gs,
                                      .block = (uint64_t)(vol / fmax(1, gs - 1)),
                                      .elem_bytes = cx->sc->elem,
                                      .alpha = cx->m->alpha,
                                      .beta = cx->m->beta,
                                      .machine = &ex,
                                      .counts_known = 1};
    const char *form = "equal blocks over the group";
    if (b == cx->sparse && !last) {
        /* The non-empty pieces alone: as equal blocks among msgs + 1 ranks. */
        eq.p = (int)msgs + 1;
        eq.block = (uint64_t)(vol / fmax(1, (double)msgs));
        form = "a start-up a non-empty piece";
    }
    *secs = NAN;
    if (exchange_model_run_equal(b->models[0], &eq, &r) == UTIL_OK) {
        *secs = r.predicted;
        (void)snprintf(note, cap, "%s model, %s", b->models[0]->name, form);
    } else {
        (void)snprintf(note, cap, "%s: no equal-blocks form beyond %d ranks", b->name,
                       SIM_LEVEL_MATRIX_P);
    }
}

/* The level's exchange in group @g: its matrix @bytes (NULL: the closed forms, with @msgs and
 * @vol), the back-end the sort would run, priced into @lv. The machine's price holds the own
 * block's copy and the ranks sharing a node's cores. */
static void exchange_cost(const struct ctx *cx, const struct group *g, const uint64_t *bytes,
                          uint64_t msgs, double vol, int last, struct sim_level *lv)
{
    const struct exchange_ops *const *list = exchange_list();
    const struct exchange_ops *ran = cx->sc->backend;
    double secs = NAN;
    char note[96] = "", best_note[96] = "";
    if (cx->sc->exchange_auto && bytes != NULL && g->gs <= AUTO_MAX_P) {
        /* --exchange auto: every back-end priced on the level's matrix, the cheapest runs. */
        for (int i = 0; list[i] != NULL; i++) {
            double t;
            price_matrix(cx, g->gs, bytes, list[i], &t, note, sizeof(note));
            if (!isnan(t) && (isnan(secs) || t < secs)) {
                secs = t;
                ran = list[i];
                (void)snprintf(best_note, sizeof(best_note), "%s", note);
            }
        }
    } else {
        if (cx->sc->exchange_auto) {
            ran = last ? list[0] : cx->sparse; /* the sort's unpriced choice */
        }
        if (bytes != NULL) {
            price_matrix(cx, g->gs, bytes, ran, &secs, best_note, sizeof(best_note));
        } else {
            price_closed(cx, g->gs, msgs, vol, last, ran, &secs, best_note, sizeof(best_note));
        }
    }
    /* The level's figure is its slowest group's (a group not modelled makes it unknown). */
    if (lv->exchange == NULL || isnan(secs) || (!isnan(lv->seconds[3]) && secs > lv->seconds[3])) {
        lv->seconds[3] = secs;
        lv->exchange = ran->name;
        (void)snprintf(lv->note, sizeof(lv->note), "%s", best_note);
    }
}

/* ---- one group at one level ------------------------------------------------------------------ */

/* The merge of @runs runs of @n elements, or the re-sort where the finish phase re-sorts. */
static double finish_cost(const struct ctx *cx, double n, double runs)
{
    const struct sim_machine *m = cx->m;
    const struct sim_sort_case *sc = cx->sc;
    if (runs <= LOCAL_MERGE_RUNS_PER_THREAD * sc->threads) {
        double ns = m->merge_ns + m->merge_ns_log * (log2u(runs) - 1);
        double speed = 1.0 + (sc->threads - 1) * (m->sort_speedup - 1.0);
        return 1e-9 * n * fmax(ns, m->merge_ns) / speed * cx->share * fmax(1, sc->elem / 8.0);
    }
    return sim_local_sort_seconds(m, n, sc->threads) * cx->share;
}

/* What one group's deal at a level comes to: the most messages a rank sends, the most runs a rank
 * receives, the most elements a rank sends to others and receives, and the bytes each rank
 * sends each (NULL beyond the matrices). */
struct deal {
    uint64_t msgs, runs;
    double sent_max, recv_max;
    uint64_t *bytes;
};

/* The most elements a rank of @g holds. */
static double max_holding(const struct group *g)
{
    double per = (double)g->ng / g->gs;
    if (g->h != NULL) {
        per = 0;
        for (int r = 0; r < g->gs; r++) {
            double s = 0;
            for (int c = 0; c < g->gs; c++) {
                s += (double)g->h[(size_t)r * g->gs + c];
            }
            per = fmax(per, s);
        }
    }
    return per;
}

/* Equal blocks of @g as a matrix (each rank's ng / gs spread over the ranks as the sort's
 * ranges cut them), or NULL out of memory. */
static uint64_t *equal_matrix(const struct group *g)
{
    int gs = g->gs;
    uint64_t *h = util_malloc((size_t)gs * gs * sizeof(uint64_t));
    if (h == NULL) {
        return NULL;
    }
    uint64_t each = g->ng / (uint64_t)gs;
    for (int r = 0; r < gs; r++) {
        for (int c = 0; c < gs; c++) {
            h[(size_t)r * gs + c] = sort_level_begin(each, gs, c + 1) - sort_level_begin(each, gs, c);
        }
    }
    return h;
}

/* The deal of matrix @h (@g's holdings) to @k groups: rank r's piece for group j goes to j's
 * ranks by the prefix sums (one rank a group at the @last level: the block itself). Sets
 * @total[j] (group j's elements) and @d. */
static int deal_matrix(const struct ctx *cx, const struct group *g, const uint64_t *h, int k,
                       int last, uint64_t *total, struct deal *d)
{
    int gs = g->gs;
    uint64_t *send = util_calloc((size_t)gs * gs, sizeof(uint64_t));
    uint64_t *x = util_calloc((size_t)k, sizeof(uint64_t));
    d->bytes = util_malloc((size_t)gs * gs * sizeof(uint64_t));
    if (send == NULL || x == NULL || d->bytes == NULL) {
        util_free(send);
        util_free(x);
        return util_fail(UTIL_ENOMEM, "out of memory for a %d x %d matrix", gs, gs);
    }
    for (int j = 0; j < k; j++) {
        int f = sort_level_first(j, gs, k), s = sort_level_first(j + 1, gs, k) - f;
        for (int r = 0; r < gs; r++) {
            for (int c = f; c < f + s; c++) {
                total[j] += h[(size_t)r * gs + c];
            }
        }
    }
    for (int r = 0; r < gs; r++) {
        for (int j = 0; j < k; j++) {
            int f = sort_level_first(j, gs, k), s = sort_level_first(j + 1, gs, k) - f;
            uint64_t c = 0;
            for (int e = f; e < f + s; e++) {
                c += h[(size_t)r * gs + e];
            }
            if (last) {
                send[(size_t)r * gs + f] = c;
            } else {
                (void)sort_level_deal(x[j], c, total[j], s, send + (size_t)r * gs + f);
            }
            x[j] += c;
        }
    }
    /* Messages, runs, volumes. */
    for (int r = 0; r < gs; r++) {
        uint64_t nm = 0, nr = 0;
        double sv = 0, rv = 0;
        for (int e = 0; e < gs; e++) {
            uint64_t out_c = send[(size_t)r * gs + e], in_c = send[(size_t)e * gs + r];
            nm += e != r && out_c > 0;
            nr += in_c > 0;
            sv += e != r ? (double)out_c : 0;
            rv += (double)in_c;
            d->bytes[(size_t)r * gs + e] = out_c * cx->sc->elem;
        }
        d->msgs = nm > d->msgs ? nm : d->msgs;
        d->runs = nr > d->runs ? nr : d->runs;
        d->sent_max = fmax(d->sent_max, sv);
        d->recv_max = fmax(d->recv_max, rv);
    }
    util_free(send);
    util_free(x);
    return UTIL_OK;
}

/* The next level's holdings of @g's groups after the deal of @h: receiver i of group j takes its
 * range of the group's sequence, blocks h[r][c] (c in j) in sender order, each sorted by
 * destination. Appends them to @next (with equal blocks, the one that stands for all). */
static int next_holdings(const struct group *g, const uint64_t *h, int k, const uint64_t *total,
                         struct group *next, int *nnext)
{
    int gs = g->gs;
    int want = g->h != NULL ? k : 1; /* equal blocks: one group stands for all */
    for (int j = 0; j < want; j++) {
        int f = sort_level_first(j, gs, k), s = sort_level_first(j + 1, gs, k) - f;
        uint64_t *nh = util_calloc((size_t)s * s, sizeof(uint64_t));
        if (nh == NULL) {
            return util_fail(UTIL_ENOMEM, "out of memory");
        }
        uint64_t at = 0;
        int i = 0; /* the receiver whose range holds position at */
        for (int r = 0; r < gs; r++) {
            for (int c = f; c < f + s; c++) {
                uint64_t b = h[(size_t)r * gs + c], end = at + b;
                /* The receivers whose ranges overlap [at, end), from the one holding at. */
                while (i + 1 < s && sort_level_begin(total[j], s, i + 1) <= at) {
                    i++;
                }
                for (int q = i; b > 0 && q < s; q++) {
                    uint64_t lo = sort_level_begin(total[j], s, q);
                    uint64_t hi = sort_level_begin(total[j], s, q + 1);
                    if (lo >= end) {
                        break;
                    }
                    uint64_t a = lo > at ? lo : at, z = hi < end ? hi : end;
                    if (z > a) {
                        nh[(size_t)q * s + (c - f)] += z - a;
                    }
                }
                at = end;
            }
        }
        uint64_t before = 0;
        for (int q = 0; q < j; q++) {
            before += total[q];
        }
        next[(*nnext)++] =
            (struct group){g->g0 + f, s, g->off + before, total[j], g->h != NULL ? nh : NULL};
        if (g->h == NULL) {
            util_free(nh); /* equal blocks again: the next level makes its own */
        }
    }
    return UTIL_OK;
}

/* Equal blocks in a group beyond the matrices: pieces of @per / k; the deal of a few senders
 * gives the messages (the receivers' runs are as many, and one more). Sets @total and @d, and
 * appends the group that stands for the next level's to @next. */
static int deal_equal(const struct group *g, double per, int k, int last, uint64_t *total,
                      struct deal *d, struct group *next, int *nnext)
{
    int gs = g->gs;
    double piece = per / k;
    uint64_t *counts = util_malloc((size_t)gs * sizeof(uint64_t));
    if (counts == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory");
    }
    for (int j = 0; j < k; j++) {
        int s = sort_level_first(j + 1, gs, k) - sort_level_first(j, gs, k);
        total[j] = (uint64_t)(per * s);
    }
    int who[4] = {0, 1, gs / 2, gs - 1};
    for (int w = 0; w < 4; w++) {
        uint64_t nm = 0;
        for (int j = 0; j < k && !last; j++) {
            int f = sort_level_first(j, gs, k), s = sort_level_first(j + 1, gs, k) - f;
            uint64_t c = (uint64_t)piece, x = (uint64_t)who[w] * c;
            nm += (uint64_t)sort_level_deal(x, c, total[j], s, counts);
            nm -= who[w] >= f && who[w] < f + s && counts[who[w] - f] > 0;
        }
        d->msgs = nm > d->msgs ? nm : d->msgs;
    }
    d->msgs = last ? (uint64_t)gs - 1 : d->msgs;
    d->runs = last ? (uint64_t)gs : d->msgs + 1;
    d->sent_max = per * (gs - 1.0) / gs;
    d->recv_max = per;
    util_free(counts);
    if (!last) {
        int s = sort_level_first(1, gs, k) - sort_level_first(0, gs, k);
        next[(*nnext)++] = (struct group){g->g0, s, g->off, total[0], NULL};
    }
    return UTIL_OK;
}

/* The bucket, exchange and finish phases of @g's deal @d into @lv (the maximum over the
 * level's groups). */
static void deal_cost(const struct ctx *cx, const struct group *g, int k, int last,
                      const struct deal *d, struct sim_level *lv)
{
    const struct sim_machine *m = cx->m;
    int gs = g->gs;
    double E = (double)cx->sc->elem;
    /* Bucket: the counts (the boundaries are the selection's last counts). */
    double bucket =
        last ? m->alpha * steps(gs) + m->beta * 8.0 * gs * steps(gs) / 2
             : 2 * (m->alpha * 2 * steps(gs) + m->beta * 16.0 * k) + m->alpha * (double)d->msgs;
    lv->seconds[2] = fmax(lv->seconds[2], bucket);
    exchange_cost(cx, g, d->bytes, d->msgs, d->sent_max * E, last, lv);
    /* Finish: the merge, and the next communicator (all-reduces over the new group). */
    double fin = finish_cost(cx, d->recv_max, (double)d->runs);
    if (!last) {
        int s = sort_level_first(1, gs, k) - sort_level_first(0, gs, k);
        fin += 3 * m->alpha * 2 * steps(s);
    }
    lv->seconds[4] = fmax(lv->seconds[4], fin);
    uint64_t all_msgs = d->msgs * (last ? 1 : 2); /* the counts go to the same receivers */
    lv->messages = all_msgs > lv->messages ? all_msgs : lv->messages;
    lv->net_bytes = (uint64_t)fmax((double)lv->net_bytes, d->sent_max * E);
}

/*
 * Group @g at a level of @k groups (@last: k = gs): its phases into @lv (the maximum over the
 * level's groups), and its k groups of the next level into @next (their holdings allocated
 * here; with equal blocks, @next gets the one that stands for all).
 */
static int group_level(const struct ctx *cx, const struct group *g, int k, int last,
                       struct sim_level *lv, struct group *next, int *nnext)
{
    int gs = g->gs, err;
    double per = max_holding(g);
    if ((err = select_cost(cx, g, k, per, lv)) != UTIL_OK) {
        return err;
    }
    /* A matrix where the group is small enough: equal blocks are made one. */
    uint64_t *h = g->h;
    if (h == NULL && gs <= SIM_LEVEL_MATRIX_P && (h = equal_matrix(g)) == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory for a %d x %d matrix", gs, gs);
    }
    struct deal d = {0};
    uint64_t *total = util_calloc((size_t)k, sizeof(uint64_t));
    if (total == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory");
    } else if (h != NULL) {
        if ((err = deal_matrix(cx, g, h, k, last, total, &d)) == UTIL_OK && !last) {
            err = next_holdings(g, h, k, total, next, nnext);
        }
    } else {
        err = deal_equal(g, per, k, last, total, &d, next, nnext);
    }
    if (err == UTIL_OK) {
        deal_cost(cx, g, k, last, &d, lv);
    }
    if (h != g->h) {
        util_free(h);
    }
    util_free(d.bytes);
    util_free(total);
    return err;
}

/* ---- the levels ------------------------------------------------------------------------------ */

static void free_groups(struct group *g, int n)
{
    for (int i = 0; i < n; i++) {
        util_free(g[i].h);
        g[i].h = NULL;
    }
}

/* The sort in cx->levels levels into @out (its rows sample..finish, levels, startups). */
static int model_levels(const struct ctx *cx, struct sim_sort_result *out)
{
    const struct sim_sort_case *sc = cx->sc;
    int p = sc->p, err = UTIL_OK, ncur = 1, nnext = 0;
    struct group *cur = util_calloc((size_t)p, sizeof(*cur));
    struct group *next = util_calloc((size_t)p, sizeof(*next));
    if (cur == NULL || next == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for %d groups", p);
        goto out;
    }
    cur[0] = (struct group){0, p, 0, cx->n, NULL};
    /* A pattern within the matrices: its counts are every group's holdings. */
    if (p <= SIM_LEVEL_MATRIX_P && p > 1 && sc->matrix->pattern != sim_pattern_find("bucket")) {
        struct sim_spec spec = *sc->matrix;
        spec.ranks = p;
        spec.keys = sc->per_rank;
        cur[0].h = util_malloc((size_t)p * p * sizeof(uint64_t));
        if (cur[0].h == NULL) {
            err = util_fail(UTIL_ENOMEM, "out of memory for the %d x %d count matrix", p, p);
            goto out;
        }
        if ((err = sim_spec_matrix(&spec, cur[0].h)) != UTIL_OK) {
            goto out;
        }
        uint64_t n = 0;
        for (size_t i = 0; i < (size_t)p * p; i++) {
            n += cur[0].h[i];
        }
        cur[0].ng = n;
    }
    out->levels = cx->levels;
    for (int l = 0; l < cx->levels && ncur > 0; l++) {
        struct sim_level *lv = &out->level[l];
        int left = cx->levels - l, most = 0;
        for (int i = 0; i < ncur; i++) {
            most = cur[i].gs > most ? cur[i].gs : most;
        }
        if (most < 2) {
            break;
        }
        lv->k = sort_level_groups(most, left);
        lv->ranks = most;
        nnext = 0;
        for (int i = 0; i < ncur && err == UTIL_OK; i++) {
            struct group *g = &cur[i];
            if (g->gs < 2) {
                continue;
            }
            int kg = sort_level_groups(g->gs, left);
            if (kg < 2) {
                next[nnext++] = *g; /* one group: the level passes it on */
                g->h = NULL;
                continue;
            }
            err = group_level(cx, g, kg, kg == g->gs, lv, next, &nnext);
        }
        free_groups(cur, ncur);
        struct group *t = cur;
        cur = next;
        next = t;
        ncur = nnext;
        if (err != UTIL_OK) {
            break;
        }
        for (int ph = 0; ph < 5; ph++) {
            out->phase[SIM_ROW_SAMPLE + ph].seconds += lv->seconds[ph];
        }
        out->phase[SIM_ROW_EXCHANGE].net_bytes += lv->net_bytes;
        out->startups += lv->messages;
        out->rounds += lv->rounds;
        out->select_bytes =
            lv->select_bytes > out->select_bytes ? lv->select_bytes : out->select_bytes;
    }
out:
    if (cur != NULL) {
        free_groups(cur, ncur);
    }
    util_free(cur);
    util_free(next);
    return err;
}

/* One L: the rows every L shares, the levels, the total. */
static int model_one(const struct sim_sort_case *sc, const struct sim_machine *m, int levels,
                     struct sim_sort_result *out)
{
    memset(out, 0, sizeof(*out));
    struct ctx cx = {.sc = sc, .m = m, .levels = levels};
    cx.share = fmax(1.0, (double)sc->ranks_per_node * sc->threads / m->cores);
    cx.n = sc->per_rank * (uint64_t)sc->p;
    cx.sparse = exchange_find("sparse");
    /* The selection the levels run: the histogram's within eps, and with --balance auto or
     * exact at more than one level the final shift to exact shares (sort/levels.c). */
    enum sortex_balance bal = sort_balance_resolve(sc->balance, sc->p, sc->epsilon, sc->oversample);
    if (levels > 1) {
        bal = sc->balance == SORTEX_BALANCE_EPS ? SORTEX_BALANCE_EPS : SORTEX_BALANCE_EXACT;
    }
    out->balance = bal;
    cx.exact = bal == SORTEX_BALANCE_EXACT;
    cx.tol = sort_split_tolerance(cx.n, sc->p, sc->epsilon, cx.exact && levels == 1);
    if (bal == SORTEX_BALANCE_SAMPLE || cx.sparse == NULL) {
        /* One level with the regular sample: the one-level model. */
        struct sim_sort_case one = *sc;
        one.levels = 0; /* the one-level model itself */
        int err = sim_sort_model(&one, m, out);
        out->levels = 1;
        out->level[0] =
            (struct sim_level){.k = sc->p, .ranks = sc->p, .exchange = sc->backend->name};
        for (int ph = 0; ph < 5; ph++) {
            out->level[0].seconds[ph] = out->phase[SIM_ROW_SAMPLE + ph].seconds;
        }
        out->level[0].messages = (uint64_t)(sc->p - 1);
        out->startups = (uint64_t)(sc->p - 1);
        /* The regular sample's memory beyond the buffers: what the selection holds. */
        uint64_t base = out->phase[SIM_ROW_LOCAL_SORT].rank_bytes;
        uint64_t sel =
            out->phase[SIM_ROW_SAMPLE].rank_bytes > out->phase[SIM_ROW_SPLITTERS].rank_bytes
                ? out->phase[SIM_ROW_SAMPLE].rank_bytes
                : out->phase[SIM_ROW_SPLITTERS].rank_bytes;
        out->select_bytes = sel > base ? sel - base : 0;
        out->level[0].select_bytes = out->select_bytes;
        (void)snprintf(out->phase[SIM_ROW_TOTAL].note, sizeof(out->phase[SIM_ROW_TOTAL].note),
                       "levels=1;startups=%llu;select_bytes=%llu;exchange %s",
                       (unsigned long long)out->startups, (unsigned long long)out->select_bytes,
                       sc->backend->name);
        return err;
    }
    double buffers = 2.0 * (ceil((double)sc->per_rank) + 2.0 * (double)cx.tol) * (double)sc->elem;
    sim_sort_fixed_rows(sc, m, buffers, out);
    int err = model_levels(&cx, out);
    if (err != UTIL_OK) {
        return err;
    }
    if (levels > 1 && cx.exact && sc->p > 1) {
        /* The shift to exact shares: a scan, counts and pieces to the next ranks (at most
         * tol elements), and the copy of the slice into the other buffer. */
        double E = (double)sc->elem, shift = m->alpha * (2 * steps(sc->p) + 4) +
                                             m->beta * (double)cx.tol * E +
                                             (double)sc->per_rank * E / m->copy_bps;
        out->phase[SIM_ROW_FINISH].seconds += shift;
        out->level[levels - 1].seconds[4] += shift;
        out->level[levels - 1].messages += 4;
        out->startups += 4;
    }
    static const char *const notes[5] = {"round 1 of every level's selection", "the other rounds",
                                         "the counts", "every level's exchange",
                                         "merges, communicators, the shift"};
    for (int ph = 0; ph < 5; ph++) {
        struct sim_phase *x = &out->phase[SIM_ROW_SAMPLE + ph];
        x->rank_bytes = (uint64_t)buffers + (ph < 2 ? out->select_bytes : 0);
        (void)snprintf(x->note, sizeof(x->note), "%d levels: %s", levels, notes[ph]);
    }
    struct sim_phase *tot = &out->phase[SIM_ROW_TOTAL];
    for (int r = 0; r < SIM_ROW_TOTAL; r++) {
        tot->seconds += out->phase[r].seconds;
        tot->rank_bytes =
            out->phase[r].rank_bytes > tot->rank_bytes ? out->phase[r].rank_bytes : tot->rank_bytes;
        tot->net_bytes += out->phase[r].net_bytes;
    }
    (void)snprintf(tot->note, sizeof(tot->note), "levels=%d;startups=%llu;select_bytes=%llu",
                   levels, (unsigned long long)out->startups,
                   (unsigned long long)out->select_bytes);
    return UTIL_OK;
}

int sim_level_model(const struct sim_sort_case *sc, const struct sim_machine *m,
                    struct sim_sort_result *out)
{
    if (sc->levels != SIM_LEVELS_AUTO) {
        int l = sc->levels < 1 ? 1 : sc->levels;
        return model_one(sc, m, l, out);
    }
    /* Every L, the cheapest kept (ties: fewer levels); and what the sort's rule would run. */
    struct sim_sort_result *each = util_calloc(SORTEX_LEVELS_MAX, sizeof(*each));
    if (each == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory");
    }
    int best = 0, err = UTIL_OK;
    for (int l = 1; l <= SORTEX_LEVELS_MAX && err == UTIL_OK; l++) {
        err = model_one(sc, m, l, &each[l - 1]);
        double t = each[l - 1].phase[SIM_ROW_TOTAL].seconds;
        if (err == UTIL_OK && !isnan(t) &&
            (isnan(each[best].phase[SIM_ROW_TOTAL].seconds) ||
             t < each[best].phase[SIM_ROW_TOTAL].seconds)) {
            best = l - 1;
        }
    }
    if (err == UTIL_OK) {
        *out = each[best];
        for (int l = 0; l < SORTEX_LEVELS_MAX; l++) {
            out->level_total[l] = each[l].phase[SIM_ROW_TOTAL].seconds;
        }
        struct sort_level_machine lm;
        sort_level_machine_default(&lm);
        lm.alpha = m->alpha;
        lm.beta = m->beta;
        enum sortex_balance bal =
            sort_balance_resolve(sc->balance, sc->p, sc->epsilon, sc->oversample);
        out->levels_rule = bal == SORTEX_BALANCE_SAMPLE && sc->balance != SORTEX_BALANCE_AUTO
                               ? 1
                               : sort_levels_choose(sc->p, sc->per_rank * (uint64_t)sc->p, sc->elem,
                                                    sc->epsilon, &lm, NULL);
    }
    util_free(each);
    return err;
}

void sim_level_print(FILE *f, const struct sim_sort_result *res, int csv, int p, uint64_t per,
                     const char *balance)
{
    static const char *const ph[5] = {"sample", "splitters", "bucket", "exchange", "finish"};
    for (int l = 0; res->levels > 0 && l < res->levels; l++) {
        const struct sim_level *lv = &res->level[l];
        double t = 0;
        for (int i = 0; i < 5; i++) {
            t += lv->seconds[i];
        }
        if (csv) {
            fprintf(f,
                    "%d,%llu,%s,%s,level%d,%.9g,%llu,%llu,\"k=%d;ranks=%d;messages=%llu;"
                    "rounds=%llu\"\n",
                    p, (unsigned long long)per, balance, lv->exchange ? lv->exchange : "none",
                    l + 1, t, (unsigned long long)lv->select_bytes,
                    (unsigned long long)lv->net_bytes, lv->k, lv->ranks,
                    (unsigned long long)lv->messages, (unsigned long long)lv->rounds);
            continue;
        }
        fprintf(f,
                "  level %d: %d groups of %d ranks, %llu messages a rank, %llu rounds, "
                "exchange %s (%s)\n   ",
                l + 1, lv->k, lv->ranks, (unsigned long long)lv->messages,
                (unsigned long long)lv->rounds, lv->exchange ? lv->exchange : "none", lv->note);
        for (int i = 0; i < 5; i++) {
            fprintf(f, " %s %.3g ms%s", ph[i], 1e3 * lv->seconds[i], i < 4 ? "," : "\n");
        }
    }
    if (res->level_total[0] > 0 || res->level_total[1] > 0) {
        if (csv) {
            for (int l = 0; l < SORTEX_LEVELS_MAX; l++) {
                fprintf(f, "%d,%llu,%s,-,total:L%d,%.9g,0,0,\"%s\"\n", p, (unsigned long long)per,
                        balance, l + 1, res->level_total[l],
                        l + 1 == res->levels ? "the cheapest" : "");
            }
            return;
        }
        fprintf(f, "  every L:");
        for (int l = 0; l < SORTEX_LEVELS_MAX; l++) {
            fprintf(f, " L=%d %.3g ms%s", l + 1, 1e3 * res->level_total[l],
                    l + 1 == res->levels ? " (the cheapest)" : "");
        }
        fprintf(f, "; the sort's --levels auto runs L=%d\n", res->levels_rule);
    }
}

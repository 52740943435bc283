/*
 * exchange/bvn.c: bipartite multigraphs, their padding to regularity, perfect matchings and the
 * Birkhoff-von Neumann decomposition, and the balanced orientation of odd edges (see bvn.h).
 */
#include "exchange/bvn.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/util.h"

#define NO_ENTRY UINT64_MAX

/* ---- orienting odd edges ------------------------------------------------------------------ */

/* The odd-multiplicity graph of a P x P matrix while it is oriented: edge e joins u and v when
 * m[u][v] + m[v][u] is odd; the adjacency of u is adj_v/adj_e[ab[u] .. ab[u + 1]), fill[u]
 * first where the next neighbour goes, then where u's scan for an unused edge is; rem[u] counts
 * u's edges not yet oriented, used[e] marks an oriented edge, tail[e] where it leaves. */
struct odd_graph {
    uint32_t p;
    uint64_t *ab, *fill, *rem, *adj_e;
    uint32_t *adj_v, *tail;
    uint8_t *used;
};

/* Degrees in the odd-multiplicity graph, as offsets in ab; sets fill to them and rem to the
 * degrees. Returns the number of edges. */
static uint64_t odd_degrees(struct odd_graph *g, const uint64_t *m)
{
    uint64_t p = g->p, *ab = g->ab, ne = 0;
    for (uint64_t u = 0; u < p; u++) {
        for (uint64_t v = u + 1; v < p; v++) {
            if ((m[u * p + v] + m[v * p + u]) % 2 == 1) {
                ab[u + 1]++;
                ab[v + 1]++;
                ne++;
            }
        }
    }
    for (uint32_t u = 0; u < g->p; u++) {
        ab[u + 1] += ab[u];
        g->fill[u] = ab[u];
        g->rem[u] = ab[u + 1] - ab[u];
    }
    return ne;
}

/* Then its adjacency in neighbour order, the edges numbered as they are met. */
static void odd_adjacency(struct odd_graph *g, const uint64_t *m)
{
    uint64_t p = g->p, *fill = g->fill, ne = 0;
    for (uint64_t u = 0; u < p; u++) {
        for (uint64_t v = u + 1; v < p; v++) {
            if ((m[u * p + v] + m[v * p + u]) % 2 == 1) {
                g->adj_v[fill[u]] = (uint32_t)v;
                g->adj_e[fill[u]++] = ne;
                g->adj_v[fill[v]] = (uint32_t)u;
                g->adj_e[fill[v]++] = ne++;
            }
        }
    }
}

/* One walk from s: follows unused edges, orienting each away from where the walk stands, until
 * it reaches a PE with none left. */
static void odd_walk(struct odd_graph *g, uint32_t s)
{
    uint64_t *fill = g->fill;
    uint32_t x = s;
    for (;;) {
        while (fill[x] < g->ab[x + 1] && g->used[g->adj_e[fill[x]]]) {
            fill[x]++;
        }
        if (fill[x] == g->ab[x + 1]) {
            break;
        }
        uint64_t e = g->adj_e[fill[x]];
        uint32_t y = g->adj_v[fill[x]];
        g->used[e] = 1;
        g->tail[e] = x;
        g->rem[x]--;
        g->rem[y]--;
        x = y;
    }
}

/* Walks: first from odd PEs (open walks), then from any PE (closed walks). */
static void odd_walks(struct odd_graph *g)
{
    for (uint32_t u = 0; u < g->p; u++) {
        g->fill[u] = g->ab[u]; /* now: scan position */
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t s = 0; s < g->p; s++) {
            while (pass == 0 ? g->rem[s] % 2 == 1 : g->rem[s] > 0) {
                odd_walk(g, s);
                if (pass == 0) {
                    break; /* s is even now */
                }
            }
        }
    }
}

/*
 * The orientation (sched.h §2.1 of the h-relation paper joins odd-degree vertices by dummy
 * edges and follows Euler tours): equivalently, walks are started first at vertices of odd
 * remaining degree (such a walk can only end at another odd vertex, and both become even), then
 * at any vertex (closed walks). A vertex ends at most one open walk, so it gains at most one
 * more out- than in-edge or vice versa.
 */
int exchange_bvn_orient_odd(uint32_t p, const uint64_t *m, uint64_t **ab_out, uint32_t **adj_v_out,
                            uint64_t **adj_e_out, uint32_t **tail_out)
{
    struct odd_graph g = {.p = p};
    g.ab = util_calloc((size_t)p + 1, sizeof(*g.ab));
    g.fill = util_calloc((size_t)p + 1, sizeof(*g.fill));
    g.rem = util_calloc((size_t)p + 1, sizeof(*g.rem));
    int rc = UTIL_ENOMEM;
    if (g.ab == NULL || g.fill == NULL || g.rem == NULL) {
        goto fail;
    }
    /* Degrees in the odd-multiplicity graph, then its adjacency in neighbour order. */
    uint64_t ne = odd_degrees(&g, m);
    g.adj_v = util_malloc((size_t)(2 * ne + 1) * sizeof(*g.adj_v));
    g.adj_e = util_malloc((size_t)(2 * ne + 1) * sizeof(*g.adj_e));
    g.tail = util_malloc((size_t)(ne + 1) * sizeof(*g.tail));
    g.used = util_calloc((size_t)ne + 1, 1);
    if (g.adj_v == NULL || g.adj_e == NULL || g.tail == NULL || g.used == NULL) {
        goto fail;
    }
    odd_adjacency(&g, m);
    odd_walks(&g);
    *ab_out = g.ab;
    *adj_v_out = g.adj_v;
    *adj_e_out = g.adj_e;
    *tail_out = g.tail;
    g.ab = NULL;
    g.adj_v = NULL;
    g.adj_e = NULL;
    g.tail = NULL;
    rc = UTIL_OK;
fail:
    util_free(g.ab);
    util_free(g.fill);
    util_free(g.rem);
    util_free(g.adj_v);
    util_free(g.adj_e);
    util_free(g.tail);
    util_free(g.used);
    return rc;
}

/* ---- the graph ---------------------------------------------------------------------------- */

void exchange_bvn_free(struct exchange_bvn *g)
{
    util_free(g->rb);
    util_free(g->re);
    util_free(g->col);
    util_free(g->real);
    util_free(g->pad);
    util_free(g->ml);
    util_free(g->mr);
    util_free(g->vis);
    util_free(g->su);
    util_free(g->spos);
    util_free(g->sent);
    util_free(g->la);
    memset(g, 0, sizeof(*g));
}

/* A padded entry: (u, v) gets x units of virtual weight. */
struct padding {
    uint64_t u, v, x;
};

static int padding_cmp(const void *a, const void *b)
{
    const struct padding *x = a, *y = b;
    return x->u != y->u ? (x->u < y->u ? -1 : 1) : x->v < y->v ? -1 : x->v > y->v;
}

/* Pass 1: row and column sums, the number of real entries and c. Reads the nreal real rows
 * into w; returns the number of real entries. */
static uint64_t build_sums(struct exchange_bvn *g, uint32_t nreal, exchange_bvn_row_fn *row,
                           void *arg, uint64_t *w, uint64_t *rows, uint64_t *cols)
{
    uint64_t nnz = 0;
    for (uint32_t u = 0; u < nreal; u++) {
        row(arg, u, w);
        for (uint32_t v = 0; v < nreal; v++) {
            rows[u] += w[v];
            cols[v] += w[v];
            nnz += w[v] != 0;
        }
    }
    for (uint32_t u = 0; u < g->n; u++) {
        g->c = rows[u] > g->c ? rows[u] : g->c;
        g->c = cols[u] > g->c ? cols[u] : g->c;
    }
    return nnz;
}

/* Padding: staircase over the deficits (equal totals); the virtual rows go first. Fills pads
 * (sorted by row, then column) and returns how many. */
static size_t build_padding(struct exchange_bvn *g, uint32_t nreal, uint64_t *rows, uint64_t *cols,
                            struct padding *pads)
{
    uint32_t n = g->n;
    size_t np = 0;
    for (uint32_t i = 0, v = 0; i < n && v < n;) {
        uint32_t u = i < n - nreal ? nreal + i : i - (n - nreal);
        uint64_t du = g->c - rows[u], dv = g->c - cols[v];
        if (du == 0) {
            i++;
            continue;
        }
        if (dv == 0) {
            v++;
            continue;
        }
        uint64_t x = du < dv ? du : dv;
        pads[np++] = (struct padding){u, v, x};
        rows[u] += x;
        cols[v] += x;
    }
    qsort(pads, np, sizeof(*pads), padding_cmp);
    return np;
}

/* The graph's arrays, for cap entries; returns false when one is missing. */
static bool build_alloc(struct exchange_bvn *g, size_t cap)
{
    uint32_t n = g->n;
    g->rb = util_malloc(((size_t)n + 1) * sizeof(*g->rb));
    g->re = util_malloc(((size_t)n + 1) * sizeof(*g->re));
    g->col = util_malloc(cap * sizeof(*g->col));
    g->real = util_malloc(cap * sizeof(*g->real));
    g->pad = util_malloc(cap * sizeof(*g->pad));
    g->ml = util_malloc((size_t)n * sizeof(*g->ml));
    g->mr = util_malloc((size_t)n * sizeof(*g->mr));
    g->vis = util_calloc(n, sizeof(*g->vis));
    g->su = util_malloc(((size_t)n + 1) * sizeof(*g->su));
    g->spos = util_malloc(((size_t)n + 1) * sizeof(*g->spos));
    g->sent = util_malloc(((size_t)n + 1) * sizeof(*g->sent));
    g->la = util_malloc(((size_t)n + 1) * sizeof(*g->la));
    return !(g->rb == NULL || g->re == NULL || g->col == NULL || g->real == NULL ||
             g->pad == NULL || g->ml == NULL || g->mr == NULL || g->vis == NULL || g->su == NULL ||
             g->spos == NULL || g->sent == NULL || g->la == NULL);
}

/* Pass 2: the rows, real and padded entries merged in column order; every vertex unmatched. */
static void build_rows(struct exchange_bvn *g, uint32_t nreal, exchange_bvn_row_fn *row, void *arg,
                       uint64_t *w, const struct padding *pads, size_t np)
{
    uint32_t n = g->n;
    uint64_t ne = 0;
    size_t k = 0;
    for (uint32_t u = 0; u < n; u++) {
        if (u < nreal) {
            row(arg, u, w);
        }
        g->rb[u] = ne;
        for (uint32_t v = 0; v < n; v++) {
            uint64_t r = u < nreal && v < nreal ? w[v] : 0;
            uint64_t x = k < np && pads[k].u == u && pads[k].v == v ? pads[k++].x : 0;
            if (r != 0 || x != 0) {
                g->col[ne] = v;
                g->real[ne] = r;
                g->pad[ne++] = x;
            }
        }
        g->re[u] = ne;
        g->ml[u] = NO_ENTRY;
        g->mr[u] = EXCHANGE_BVN_NONE;
    }
    g->rb[n] = ne;
}

int exchange_bvn_build(struct exchange_bvn *g, uint32_t nreal, uint32_t n,
                       exchange_bvn_row_fn *row, void *arg)
{
    uint64_t *rows = NULL, *cols = NULL, *w = NULL;
    struct padding *pads = NULL;
    int rc = UTIL_ENOMEM;
    memset(g, 0, sizeof(*g));
    g->n = n;
    rows = util_calloc(n, sizeof(*rows));
    cols = util_calloc(n, sizeof(*cols));
    w = util_calloc((size_t)nreal + 1, sizeof(*w));
    pads = util_malloc((2 * (size_t)n + 1) * sizeof(*pads));
    if (rows == NULL || cols == NULL || w == NULL || pads == NULL) {
        goto fail;
    }
    uint64_t nnz = build_sums(g, nreal, row, arg, w, rows, cols);
    size_t np = build_padding(g, nreal, rows, cols, pads);
    if (!build_alloc(g, (size_t)(nnz + np + 1))) {
        goto fail;
    }
    build_rows(g, nreal, row, arg, w, pads, np);
    rc = UTIL_OK;
fail:
    util_free(rows);
    util_free(cols);
    util_free(w);
    util_free(pads);
    return rc;
}

/* ---- perfect matchings ---------------------------------------------------------------------- */

/*
 * Augmenting path from the free L vertex u0 (Kuhn's algorithm, iterative, with a look-ahead
 * for a free neighbour at every level). R vertices visited in this pass are skipped: a failed
 * search leaves nothing useful behind them. Returns true if the matching grew.
 */
static bool augment(struct exchange_bvn *g, uint32_t u0)
{
    uint32_t depth = 0;
    g->su[0] = u0;
    g->spos[0] = g->rb[u0];
    for (;;) {
        uint32_t x = g->su[depth];
        /* Look-ahead: a free neighbour ends the path. R vertices only get matched during a
         * call of bip_perfect(), so each row's look-ahead pointer only moves forward. */
        if (g->spos[depth] == g->rb[x]) {
            uint64_t best = NO_ENTRY;
            while (g->la[x] < g->re[x] && g->mr[g->col[g->la[x]]] != EXCHANGE_BVN_NONE) {
                g->la[x]++;
            }
            best = g->la[x] < g->re[x] ? g->la[x] : NO_ENTRY;
            if (best != NO_ENTRY) {
                /* Flip the path: every level takes the entry that led to the next. */
                g->sent[depth] = best;
                for (uint32_t d = 0; d <= depth; d++) {
                    uint32_t y = g->su[d];
                    g->ml[y] = g->sent[d];
                    g->mr[g->col[g->sent[d]]] = y;
                }
                return true;
            }
        }
        /* Descend through the next unvisited matched neighbour, or back up. */
        uint64_t e = g->spos[depth];
        while (e < g->re[x] && g->vis[g->col[e]] == g->stamp) {
            e++;
        }
        if (e == g->re[x]) {
            if (depth == 0) {
                return false;
            }
            depth--;
            continue;
        }
        g->spos[depth] = e + 1;
        g->vis[g->col[e]] = g->stamp;
        g->sent[depth] = e;
        depth++;
        g->su[depth] = g->mr[g->col[e]];
        g->spos[depth] = g->rb[g->su[depth]];
    }
}

/*
 * Completes the matching to a perfect one. The graph is regular, so a perfect matching exists
 * and every free L vertex has an augmenting path (the symmetric difference with a perfect
 * matching contains one); passes share visit marks, so each pass is O(entries) and grows the
 * matching at least once.
 */
static int perfect(struct exchange_bvn *g)
{
    for (uint32_t u = 0; u < g->n; u++) {
        g->la[u] = g->rb[u];
    }
    for (;;) {
        bool free_left = false, grew = false;
        g->stamp++;
        if (g->stamp == 0) {
            memset(g->vis, 0, (size_t)g->n * sizeof(*g->vis));
            g->stamp = 1;
        }
        for (uint32_t u = 0; u < g->n; u++) {
            if (g->ml[u] == NO_ENTRY) {
                bool ok = augment(g, u);
                grew = grew || ok;
                free_left = free_left || !ok;
            }
        }
        if (!free_left) {
            return UTIL_OK;
        }
        if (!grew) {
            return UTIL_EUSAGE; /* cannot happen for a regular graph */
        }
    }
}

/* ---- the decomposition ---------------------------------------------------------------------- */

int exchange_bvn_decompose(struct exchange_bvn *g, exchange_bvn_round_fn *fn, void *arg)
{
    size_t n = g->n;
    uint32_t *match = util_malloc((n ? n : 1) * sizeof(*match));
    uint64_t *real = util_malloc((n ? n : 1) * sizeof(*real));
    int rc = match != NULL && real != NULL ? UTIL_OK : UTIL_ENOMEM;
    while (g->c > 0 && rc == UTIL_OK) {
        if ((rc = perfect(g)) != UTIL_OK) {
            break;
        }
        /* The multiplicity of this matching: its lightest entry; its real part per vertex. */
        uint64_t a = UINT64_MAX;
        for (uint32_t u = 0; u < g->n; u++) {
            uint64_t e = g->ml[u];
            a = g->real[e] + g->pad[e] < a ? g->real[e] + g->pad[e] : a;
        }
        for (uint32_t u = 0; u < g->n; u++) {
            uint64_t e = g->ml[u];
            match[u] = g->col[e];
            real[u] = a < g->real[e] ? a : g->real[e];
        }
        rc = fn(arg, match, real, a);
        /* Subtract a from every matched entry (real weight first, then padding); drop the
         * exhausted ones, whose L and R ends become free. The rest is (c - a)-regular. */
        for (uint32_t u = 0; u < g->n; u++) {
            uint64_t e = g->ml[u];
            g->real[e] -= real[u];
            g->pad[e] -= a - real[u];
            if (g->real[e] + g->pad[e] == 0) {
                g->mr[g->col[e]] = EXCHANGE_BVN_NONE;
                g->ml[u] = NO_ENTRY;
                uint64_t last = --g->re[u];
                g->col[e] = g->col[last];
                g->real[e] = g->real[last];
                g->pad[e] = g->pad[last];
            }
        }
        g->c -= a;
    }
    util_free(match);
    util_free(real);
    return rc;
}

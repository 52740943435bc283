/*
 * exchange/bvn.h: bipartite multigraphs and their Birkhoff-von Neumann decomposition, the graph
 * machinery under the h-relation scheduler (internal to exchange/; sched_build.c uses it).
 *
 * A c-regular bipartite multigraph on n + n vertices (every vertex has degree c, edges counted
 * with multiplicity) decomposes into perfect matchings with multiplicities a_1 + a_2 + ... = c
 * (Birkhoff-von Neumann): take a perfect matching of the support (Koenig: one exists in a
 * regular bipartite graph), a = its lightest edge, subtract a from every matched edge, repeat
 * on the (c - a)-regular rest. Each (matching, a) is a copies of one colour class of a c-edge
 * colouring, so a schedule built from the rounds grows with the number of distinct matchings,
 * not with c. A graph that is not regular is padded: every edge carries real weight and padding,
 * and the padding makes it regular.
 *
 * Also here: orienting the edges of a multigraph so that every vertex has in- and out-degree
 * within one of each other, by Euler walks.
 */
#ifndef SORTEX_EXCHANGE_BVN_H
#define SORTEX_EXCHANGE_BVN_H

#include <stdint.h>

/** No vertex. */
#define EXCHANGE_BVN_NONE UINT32_MAX

/**
 * The c-regular bipartite multigraph L x R on n vertices each. Row u lists its entries
 * (u, col[e]) in [rb[u], re[u]); entries whose weight reaches zero are swapped out of the live
 * range. Each entry has real weight and padding; ml[u] is the entry matched to L vertex u.
 */
struct exchange_bvn {
    uint32_t n;
    uint64_t c;
    uint64_t *rb, *re;
    uint32_t *col;
    uint64_t *real, *pad;
    uint64_t *ml;   /* matched entry of L vertex u, or UINT64_MAX */
    uint32_t *mr;   /* matched L vertex of R vertex v, or EXCHANGE_BVN_NONE */
    uint32_t *vis, stamp;
    uint32_t *su;   /* search stack: L vertices ... */
    uint64_t *spos; /* ... their scan positions ... */
    uint64_t *sent; /* ... and the entry that led to the next level */
    uint64_t *la;   /* per L vertex: look-ahead position for a free neighbour */
};

/** Fills w[0..nreal) with the real weights of the edges (u, v) of row u < nreal. */
typedef void exchange_bvn_row_fn(void *arg, uint32_t u, uint64_t *w);

/**
 * Builds @g on @n >= @nreal vertices per side from the real weights that @row gives for the
 * first @nreal rows (vertices nreal..n-1 are virtual: no real weight), then pads it to the
 * largest row or column sum c. Row and column deficits are filled by one staircase walk, which
 * adds at most 2n padded entries; it takes virtual rows first and virtual columns last, so a
 * virtual vertex's padding goes to real vertices as far as their deficits allow, and only the
 * rest to itself. Returns 0 or UTIL_ENOMEM (no message); free with exchange_bvn_free() either way.
 */
int exchange_bvn_build(struct exchange_bvn *g, uint32_t nreal, uint32_t n,
                       exchange_bvn_row_fn *row, void *arg);

/** Frees what exchange_bvn_build() allocated; a zeroed graph is fine. */
void exchange_bvn_free(struct exchange_bvn *g);

/**
 * One round of the decomposition: the perfect matching (L vertex u matched to R vertex
 * match[u]) taken @a times, and real[u] <= a the real weight of u's entry (the rest of its a is
 * padding). Returns 0 or a negative error, which stops the decomposition.
 */
typedef int exchange_bvn_round_fn(void *arg, const uint32_t *match, const uint64_t *real,
                                  uint64_t a);

/**
 * Decomposes @g into perfect matchings with multiplicities, handing each to @fn (at most
 * min(c, entries) rounds), and leaves @g empty. Returns 0, what @fn returned, UTIL_ENOMEM, or
 * UTIL_EUSAGE when no perfect matching is found (the graph was not regular: an internal error).
 */
int exchange_bvn_decompose(struct exchange_bvn *g, exchange_bvn_round_fn *fn, void *arg);

/**
 * Orients the edges {u, v} of odd multiplicity m[u][v] + m[v][u] of the @p x @p matrix @m (a
 * simple graph) so that every vertex has |out - in| <= 1. Stores in *@ab, *@adj_v, *@adj_e the
 * adjacency of every vertex u, adj[ab[u] .. ab[u+1]), sorted by neighbour (adj_v) with the
 * edges' ids (adj_e), and in *@tail[edge] the tail the orientation chose. O(p^2) to find the
 * edges, O(edges) to walk. The arrays are new (util_free); returns 0 or UTIL_ENOMEM.
 */
int exchange_bvn_orient_odd(uint32_t p, const uint64_t *m, uint64_t **ab, uint32_t **adj_v,
                            uint64_t **adj_e, uint32_t **tail);

#endif

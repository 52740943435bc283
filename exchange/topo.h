/*
 * exchange/topo.h: the schedules of the pairwise, shift, grid and hypercube back-ends as pure
 * functions: who talks to whom in which round, and which (source, destination) pieces one
 * message carries. No MPI and no state here, so tests/unit/test_backends.c checks every rule
 * exhaustively for every P up to 64.
 *
 * Internal to exchange/: included by pairwise.c, grid.c, hypercube.c and the unit test.
 */
#ifndef SORTEX_EXCHANGE_TOPO_H
#define SORTEX_EXCHANGE_TOPO_H

#include <stdint.h>

/* ---- The 1-factorization of the complete graph (Sanders and Solis-Oba, section 4.1) -------------
 *
 * For odd p there are p rounds; in round i PE j exchanges with (i - j) mod p and idles when that
 * is j itself (once per PE: the j with 2j = i mod p). For even p the PEs 0..p-2 run the odd
 * schedule on p-1 PEs and the one that would idle pairs with PE p-1 instead, so there are p-1
 * rounds and nobody idles. Every pair meets exactly once and nobody is busy twice in a round.
 */

/** Rounds of the 1-factor schedule on p >= 1 PEs: p for odd p, p - 1 for even p. */
static inline int topo_factor_rounds(int p)
{
    return p % 2 ? p : p - 1;
}

/** The partner of PE j in round i (0 <= i < topo_factor_rounds(p)); j itself when j idles. */
static inline int topo_factor_partner(int i, int j, int p)
{
    int64_t m = p % 2 ? p : p - 1; /* the odd clique the rounds are computed on */
    if (j == m) {
        /* PE p-1 of an even p takes the PE that would idle: the x with 2x = i (mod m), i.e.
         * x = i (m+1)/2 mod m, since (m+1)/2 is the inverse of 2 modulo the odd m. */
        return (int)((int64_t)i * ((m + 1) / 2) % m);
    }
    int q = (int)((((int64_t)i - j) % m + m) % m);
    if (q == j) {
        return p % 2 ? j : p - 1;
    }
    return q;
}

/* ---- Open MPI's shift schedule (Birkeland and Sørevik, section 3.1) -----------------------------
 *
 * p - 1 rounds; in round i (1-based) every rank sends to (rank + i) mod p and receives from
 * (rank - i) mod p: a different partner on each side, and no idle PE.
 */

/** The rank this rank sends to in round i (1 <= i < p) of the shift schedule. */
static inline int topo_shift_to(int i, int rank, int p)
{
    return (int)(((int64_t)rank + i) % p);
}

/** The rank this rank receives from in round i (1 <= i < p) of the shift schedule. */
static inline int topo_shift_from(int i, int rank, int p)
{
    return (int)(((int64_t)rank - i % p + p) % p);
}

/* ---- The two-level grid (Birkeland and Sørevik) -------------------------------------------------
 *
 * Ranks fill a rows x cols grid row by row: rank q sits at row q / cols, column q % cols, with
 * rows = ceil(p / cols) and cols = ceil(p / floor(sqrt(p))), so rows <= cols and only the last
 * row may be incomplete (it holds `last` ranks, columns 0..last-1).
 *
 * Routing of a piece from s to d: phase 1 within s's row to via = (row(s), col(d)); phase 2
 * within column col(d) from via to d. When s sits in an incomplete last row and col(d) has no
 * rank there, via is the rank of column col(d) in the row above, (row(s) - 1, col(d)), which
 * always exists (that row is full). So every (s, d) pair has exactly one intermediate, in d's
 * column, and:
 *   - every rank sends to exactly cols - 1 intermediates in phase 1 (a last-row rank: its
 *     last - 1 row peers plus the cols - last ranks above the missing columns);
 *   - the sources routed through one intermediate m are the contiguous ranks of m's row, or
 *     of m's row and the last row together when m stands above a missing column; so phase 2
 *     delivers each destination one contiguous range of sources per column peer.
 */

/** The shape of the grid for p ranks. */
struct topo_grid {
    int p;    /* ranks */
    int rows; /* rows, the last one possibly incomplete */
    int cols; /* columns */
    int last; /* ranks in the last row, 1..cols */
};

/** The grid shape for p >= 1 ranks (see above). */
static inline struct topo_grid topo_grid_shape(int p)
{
    struct topo_grid g;
    int r = 1;
    while ((int64_t)(r + 1) * (r + 1) <= p) {
        r++;
    }
    g.p = p;
    g.cols = (p + r - 1) / r;
    g.rows = (p + g.cols - 1) / g.cols;
    g.last = p - (g.rows - 1) * g.cols;
    return g;
}

/** Ranks in column j of the grid (rows, or rows - 1 for a column missing from the last row). */
static inline int topo_grid_col_size(const struct topo_grid *g, int j)
{
    return j < g->last ? g->rows : g->rows - 1;
}

/** The intermediate of the piece from s to d: phase 1 goes s -> via, phase 2 via -> d. */
static inline int topo_grid_via(const struct topo_grid *g, int s, int d)
{
    int m = (s / g->cols) * g->cols + d % g->cols;
    return m < g->p ? m : m - g->cols;
}

/** The sources routed through m, [*lo, *hi): m's row, plus the last row when m stands above a
 * column missing from it. */
static inline void topo_grid_sources(const struct topo_grid *g, int m, int *lo, int *hi)
{
    int row = m / g->cols;
    *lo = row * g->cols;
    *hi = *lo + g->cols < g->p ? *lo + g->cols : g->p;
    if (row == g->rows - 2 && m % g->cols >= g->last) {
        *hi = g->p;
    }
}

/* ---- The hypercube with folding (one-to-all scatter's combining, for all-to-all) ----------------
 *
 * Q = the largest power of two <= p, dim = log2 Q. Ranks 0..Q-1 are the cube nodes; each rank
 * e >= Q (an "extra", p - Q of them) is folded into node e - Q: before the cube rounds it hands
 * that node its whole send buffer, after them it receives its own pieces from that node. The
 * members of node x are x and x + Q (when < p); topo_cube_node() maps a rank to its node.
 *
 * Before cube round k node x holds the pieces (s, d) with node(s) agreeing with x on the bits
 * >= k and node(d) agreeing with x on the bits < k. In round k it exchanges with x ^ 2^k the
 * pieces whose node(d) differs from x in bit k. After the last round node(d) == x for every
 * held piece: x holds exactly the pieces destined to its members.
 */

/** log2 of the largest power of two <= p (p >= 1): the number of cube rounds. */
static inline int topo_cube_dim(int p)
{
    int dim = 0;
    while ((int64_t)2 << dim <= p) {
        dim++;
    }
    return dim;
}

/** The cube node of rank r when q = 2^dim. */
static inline int topo_cube_node(int r, int q)
{
    return r < q ? r : r - q;
}

/** Whether rank s is among the sources node x holds before round k (bits >= k of the node
 * agree). */
static inline int topo_cube_holds_src(int s, int x, int k, int q)
{
    return (topo_cube_node(s, q) >> k) == (x >> k);
}

/** Whether rank d is among the destinations node x holds before round k (bits < k agree). */
static inline int topo_cube_holds_dst(int d, int x, int k, int q)
{
    int mask = (1 << k) - 1;
    return (topo_cube_node(d, q) & mask) == (x & mask);
}

#endif

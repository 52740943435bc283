/*
 * exchange/sched_build.c: the h-relation scheduling algorithms of sched.h, after Sanders and
 * Solis-Oba, "How helpers hasten h-relations" ([SS01] in the README).
 *
 * All three algorithms share one pipeline; the graph work of steps 1 to 3 is exchange/bvn.h's:
 *   1. a bipartite multigraph, senders L x receivers R, given as weights (packet counts);
 *      for the half-duplex algorithms the transfer graph's edges are first oriented so that
 *      every PE has in = out <= ceil(h/2) (§2.1), for full-duplex the weights are m itself;
 *   2. padded to a c-regular multigraph (c = its maximum degree) with virtual weight; the
 *      half-duplex algorithms add virtual PEs that take the padding (VIRTUAL_PES);
 *   3. decomposed into perfect matchings with multiplicities (Birkhoff-von Neumann): take a
 *      perfect matching of the support, n = its lightest weight, subtract, repeat. Each
 *      (matching, n) is n identical colour classes of a c-edge-colouring, so they are
 *      scheduled once with "super-packets" of n packets (§3 does the same for the strongly
 *      polynomial variant, with a different choice of matchings); within a round the packets
 *      of each pair are dealt out, and the round cut where an edge's payload changes kind
 *      (schedule_round());
 *   4. each colour class scheduled by the algorithm: one step (full-duplex), 2 or 3 steps
 *      (direct), or 12 rounds of 1/5 with helpers (forward).
 */
#include "exchange/sched.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/bvn.h"
#include "util/alloc.h"
#include "util/util.h"

#define NONE UINT32_MAX
#define UNITS EXCHANGE_SCHED_UNITS

/* What a matching edge u -> nxt[u] carries in a colour class. */
enum kind {
    K_VIRT = 0, /* padding: no packet */
    K_FWD = 1,  /* a packet of message u -> nxt[u] */
    K_BWD = 2,  /* a packet of message nxt[u] -> u (the orientation is against the packet) */
    K_COUNT
};

/* Components of the real edges of a colour class. */
enum ctype {
    C_PATH = 0, /* a path, possibly a single vertex: can help forward */
    C_EVEN = 1, /* an even cycle: two matchings, needs no help, gives none */
    C_ODD = 2,  /* an odd cycle of >= 3 vertices: three matchings, or help */
    C_COUNT
};

/* ---- the schedule under construction --------------------------------------------------- */

/* A transfer waiting in a window of rounds until the window is emitted as steps. */
struct wxfer {
    uint64_t off, len;
    uint32_t round, src, dst, msrc, mdst;
    uint8_t hop;
};

/* A removed packet waiting in the matching M (odd p, §2.4). */
struct mentry {
    uint32_t msrc, mdst;
    uint64_t off; /* units */
};

/* A send of M deferred to the end of the schedule: set = which send of M it belongs to. */
struct deferred {
    uint64_t off, len; /* units still to send */
    uint32_t msrc, mdst, set;
};

/* Everything one scheduling run needs: the schedule, scratch sized p, and M. */
struct ctx {
    struct exchange_sched *s;
    uint32_t p;     /* PEs of the colour classes, the virtual one included */
    uint32_t preal; /* PEs of the matrix */
    uint64_t cap_steps, cap_xfers;
    /* window of rounds */
    struct wxfer *w;
    size_t nw, capw;
    /* component analysis of the current colour class */
    uint32_t *prv, *ord, *cstart, *clen;
    uint8_t *ctype, *seen;
    uint32_t ncomp;
    /* a needy cycle's vertices renamed x_0..x_{L-1} and its edges e_0..e_{L-1} (by position) */
    uint32_t *nx, *ne;
    /* per edge (named by its tail u): next packet of its super-packet, pieces handed out */
    uint64_t *cur;
    uint8_t *pcnt;
    /* M: pending removed packets and the PEs they touch; candidates and a greedy matching */
    struct mentry *mset;
    uint32_t nm;
    uint8_t *inm, *mark;
    uint32_t *cand, *seq;
    /* the sends of M, deferred until every other step is known (see place_deferred()) */
    struct deferred *dfr;
    uint64_t ndfr, capdfr;
    uint32_t nsets;
};

/* Grows *ptr to hold need elements of size bytes (doubling). */
static int grow(void **ptr, uint64_t *cap, uint64_t need, size_t size)
{
    if (need <= *cap) {
        return UTIL_OK;
    }
    uint64_t ncap = *cap ? *cap : 64;
    while (ncap < need) {
        ncap *= 2;
    }
    void *q = util_realloc(*ptr, (size_t)ncap * size);
    if (q == NULL) {
        return UTIL_ENOMEM;
    }
    *ptr = q;
    *cap = ncap;
    return UTIL_OK;
}

/* Opens a new step of @units units (step_begin keeps one slot more than step_units). */
static int b_step(struct ctx *c, uint64_t units)
{
    struct exchange_sched *s = c->s;
    if (s->nsteps + 1 > c->cap_steps) {
        uint64_t ncap = c->cap_steps ? 2 * c->cap_steps : 64;
        uint64_t *su = util_realloc(s->step_units, (size_t)ncap * sizeof(*su));
        if (su == NULL) {
            return UTIL_ENOMEM;
        }
        s->step_units = su;
        uint64_t *sb = util_realloc(s->step_begin, (size_t)(ncap + 1) * sizeof(*sb));
        if (sb == NULL) {
            return UTIL_ENOMEM;
        }
        s->step_begin = sb;
        c->cap_steps = ncap;
    }
    s->step_units[s->nsteps] = units;
    s->step_begin[s->nsteps] = s->nxfers;
    s->nsteps++;
    s->step_begin[s->nsteps] = s->nxfers;
    s->length += units;
    return UTIL_OK;
}

/* Appends a transfer to the current step. */
static int b_xfer(struct ctx *c, const struct wxfer *x)
{
    struct exchange_sched *s = c->s;
    if (grow((void **)&s->xfers, &c->cap_xfers, s->nxfers + 1, sizeof(*s->xfers)) != UTIL_OK) {
        return UTIL_ENOMEM;
    }
    struct exchange_sched_xfer *y = &s->xfers[s->nxfers++];
    y->step = s->nsteps - 1;
    y->off = x->off;
    y->len = x->len;
    y->src = x->src;
    y->dst = x->dst;
    y->msg_src = x->msrc;
    y->msg_dst = x->mdst;
    y->hop = x->hop;
    s->step_begin[s->nsteps] = s->nxfers;
    return UTIL_OK;
}

/* Queues a transfer for round @round of the current window. */
static int w_add(struct ctx *c, uint32_t round, uint32_t src, uint32_t dst, uint32_t msrc,
                 uint32_t mdst, uint64_t off, uint64_t len, uint8_t hop)
{
    uint64_t cap = c->capw;
    if (grow((void **)&c->w, &cap, c->nw + 1, sizeof(*c->w)) != UTIL_OK) {
        return UTIL_ENOMEM;
    }
    c->capw = (size_t)cap;
    c->w[c->nw++] = (struct wxfer){off, len, round, src, dst, msrc, mdst, hop};
    return UTIL_OK;
}

/* Emits the window's rounds 0..nrounds-1 as steps of @units units each, skipping empty ones. */
static int w_flush(struct ctx *c, uint32_t nrounds, uint64_t units)
{
    for (uint32_t r = 0; r < nrounds; r++) {
        bool opened = false;
        for (size_t k = 0; k < c->nw; k++) {
            if (c->w[k].round != r) {
                continue;
            }
            if (!opened && b_step(c, units) != UTIL_OK) {
                return UTIL_ENOMEM;
            }
            opened = true;
            if (b_xfer(c, &c->w[k]) != UTIL_OK) {
                return UTIL_ENOMEM;
            }
        }
    }
    c->nw = 0;
    return UTIL_OK;
}

/* ---- colour classes: components and pieces ----------------------------------------------- */

/* The message carried by edge u -> nxt[u]. */
static void msg_of(const uint32_t *nxt, const uint8_t *kind, uint32_t u, uint32_t *ms,
                   uint32_t *md)
{
    *ms = kind[u] == K_FWD ? u : nxt[u];
    *md = kind[u] == K_FWD ? nxt[u] : u;
}

/*
 * Splits a colour class (nxt a permutation: every PE has one out- and one in-edge, kind[u]
 * tells whether edge u -> nxt[u] is real) into the components of its real edges: paths
 * (including single PEs whose edges are all virtual) and cycles. Fills ord/cstart/clen/ctype:
 * component i is ord[cstart[i] .. + clen[i]) in walking order, and its k-th edge joins ord[s+k]
 * and ord[s+k+1] (cyclically for cycles) and is named by its tail ord[s+k].
 */
static void analyse(struct ctx *c, const uint32_t *nxt, const uint8_t *kind)
{
    uint32_t p = c->p, nord = 0;
    c->ncomp = 0;
    memset(c->seen, 0, p);
    for (uint32_t u = 0; u < p; u++) {
        c->prv[nxt[u]] = u;
    }
    /* Paths start where the entering edge is virtual and run until a virtual edge leaves. */
    for (uint32_t y = 0; y < p; y++) {
        if (kind[c->prv[y]] != K_VIRT) {
            continue;
        }
        uint32_t i = c->ncomp++;
        c->cstart[i] = nord;
        c->ctype[i] = C_PATH;
        uint32_t z = y;
        for (;;) {
            c->seen[z] = 1;
            c->ord[nord++] = z;
            if (kind[z] == K_VIRT) {
                break;
            }
            z = nxt[z];
        }
        c->clen[i] = nord - c->cstart[i];
    }
    /* What is left lies on cycles of real edges only. */
    for (uint32_t y = 0; y < p; y++) {
        if (c->seen[y]) {
            continue;
        }
        uint32_t i = c->ncomp++;
        c->cstart[i] = nord;
        for (uint32_t z = y; !c->seen[z]; z = nxt[z]) {
            c->seen[z] = 1;
            c->ord[nord++] = z;
        }
        c->clen[i] = nord - c->cstart[i];
        c->ctype[i] = c->clen[i] % 2 == 0 ? C_EVEN : C_ODD;
    }
}

/* True if component i is a path of real PEs (virtual PEs have no packets: always alone). */
static bool real_path(const struct ctx *c, uint32_t i)
{
    return c->ctype[i] == C_PATH && c->ord[c->cstart[i]] < c->preal;
}

/* Number of real edges of component i. */
static uint32_t comp_edges(const struct ctx *c, uint32_t i)
{
    return c->ctype[i] == C_PATH ? c->clen[i] - 1 : c->clen[i];
}

/* Queues edge e's whole super-packet of n packets, sent directly in round r. */
static int put_whole(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint32_t e,
                     uint32_t r, uint64_t n)
{
    uint32_t ms, md;
    msg_of(nxt, kind, e, &ms, &md);
    return w_add(c, r, ms, md, ms, md, c->cur[e] * UNITS, n * UNITS, EXCHANGE_SCHED_DIRECT);
}

/* Queues the next fifth (n units) of edge e's super-packet, sent directly in round r. */
static int put_piece(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint32_t e,
                     uint32_t r, uint64_t n)
{
    uint32_t ms, md;
    msg_of(nxt, kind, e, &ms, &md);
    uint64_t off = c->cur[e] * UNITS + c->pcnt[e]++ * n;
    return w_add(c, r, ms, md, ms, md, off, n, EXCHANGE_SCHED_DIRECT);
}

/* Queues the next fifth of edge e's super-packet forwarded by f: round r to f, r + 1 onwards. */
static int put_fwd(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint32_t e,
                   uint32_t f, uint32_t r, uint64_t n)
{
    uint32_t ms, md;
    msg_of(nxt, kind, e, &ms, &md);
    uint64_t off = c->cur[e] * UNITS + c->pcnt[e]++ * n;
    if (w_add(c, r, ms, f, ms, md, off, n, EXCHANGE_SCHED_HOP1) != UTIL_OK) {
        return UTIL_ENOMEM;
    }
    return w_add(c, r + 1, f, md, ms, md, off, n, EXCHANGE_SCHED_HOP2);
}

/* Every real edge of the class has used its n packets: move the cursors on. */
static void advance(struct ctx *c, const uint8_t *kind, uint64_t n)
{
    for (uint32_t u = 0; u < c->p; u++) {
        if (kind[u] != K_VIRT) {
            c->cur[u] += n;
            c->pcnt[u] = 0;
        }
    }
}

/*
 * Paths and even cycles: alternate edges form two matchings, so the class goes in 2 steps
 * (rounds 0 and 1, whole super-packets); an odd cycle needs a third matching for its last edge
 * (round 2). Used by direct for every class and by forward for classes without odd cycles.
 */
static int two_or_three_steps(struct ctx *c, const uint32_t *nxt, const uint8_t *kind,
                              uint64_t n)
{
    for (uint32_t i = 0; i < c->ncomp; i++) {
        uint32_t s = c->cstart[i], ne = comp_edges(c, i);
        for (uint32_t k = 0; k < ne; k++) {
            uint32_t r = c->ctype[i] == C_ODD && k == ne - 1 ? 2 : k % 2;
            if (put_whole(c, nxt, kind, c->ord[s + k], r, n) != UTIL_OK) {
                return UTIL_ENOMEM;
            }
        }
    }
    if (w_flush(c, 3, n * UNITS) != UTIL_OK) {
        return UTIL_ENOMEM;
    }
    advance(c, kind, n);
    return UTIL_OK;
}

/* ---- direct (§2.1) -------------------------------------------------------------------------- */

/*
 * direct, paper §2.1. Orient the transfer graph's edges along Euler walks so that every PE has
 * in = out <= ceil(h/2); the bipartite graph (out-copy, in-copy) then has maximum degree
 * ceil(h/2) and an edge colouring with ceil(h/2) colours (here: the Birkhoff-von Neumann
 * decomposition, see decompose()). A colour class gives every PE at most one out- and one
 * in-edge, so its packets (whatever their direction) form disjoint paths and cycles: 2 steps,
 * or 3 when it has an odd cycle. Cost: <= 3 ceil(h/2) steps, optimal without forwarding on
 * the 3-cycle instance of footnote 1. Packets are never split.
 */
static int direct_class(struct ctx *c, const uint32_t *nxt, uint8_t *kind, const uint64_t *base,
                        uint64_t n)
{
    for (uint32_t u = 0; u < c->p; u++) {
        c->cur[u] = base[u];
    }
    analyse(c, nxt, kind);
    return two_or_three_steps(c, nxt, kind, n);
}

/* ---- forward (§2.2-2.4) --------------------------------------------------------------------- */

/*
 * Names the odd cycle i so that the packet on the edge between x_{L-1} and x_0 travels from
 * x_{L-1} to x_0 (§2.3: "a_{|A|-1} sends a packet to a_0 (and not vice versa)"), by walking
 * the cycle backwards when that edge's packet goes the other way. nx[s+k] = x_k, ne[s+k] = the
 * edge between x_k and x_{k+1}.
 */
static void name_cycle(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint32_t i)
{
    uint32_t s = c->cstart[i], L = c->clen[i];
    uint32_t last = c->ord[s + L - 1]; /* edge ord[L-1] -> ord[0] */
    bool backwards = kind[last] == K_BWD;
    (void)nxt;
    for (uint32_t k = 0; k < L; k++) {
        if (!backwards) {
            c->nx[s + k] = c->ord[s + k];
            c->ne[s + k] = c->ord[s + k];
        } else {
            /* x_k = ord[L-1-k]; the edge x_k - x_{k+1} is named by its tail x_{k+1}. */
            c->nx[s + k] = c->ord[s + L - 1 - k];
            c->ne[s + k] = c->ord[s + (2 * L - 2 - k) % L];
        }
    }
}

/*
 * Rounds h..h+5 of a needy odd cycle that is being helped (figure 2, cycle A): in rounds h+2i
 * and h+2i+1 helper f[i] forwards one fifth of the packet x_{L-1} -> x_0, while one fifth of
 * every edge x_{2k} - x_{2k+1} goes in round h+2i and of every x_{2k+1} - x_{2k+2} in h+2i+1.
 * x_{L-1} is free in the even rounds and x_0 in the odd ones, so both can talk to the helper.
 * Result: three fifths of every edge.
 */
static int needy_helped(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint32_t i,
                        uint32_t h, const uint32_t f[3], uint64_t n)
{
    uint32_t s = c->cstart[i], L = c->clen[i];
    const uint32_t *e = c->ne + s;
    int rc = UTIL_OK;
    for (uint32_t j = 0; j < 3 && rc == UTIL_OK; j++) {
        for (uint32_t k = 0; k + 3 <= L && rc == UTIL_OK; k += 2) {
            rc = put_piece(c, nxt, kind, e[k], h + 2 * j, n);
        }
        for (uint32_t k = 1; k + 2 <= L && rc == UTIL_OK; k += 2) {
            rc = put_piece(c, nxt, kind, e[k], h + 2 * j + 1, n);
        }
        if (rc == UTIL_OK) {
            rc = put_fwd(c, nxt, kind, e[L - 1], f[j], h + 2 * j, n);
        }
    }
    return rc;
}

/*
 * Rounds h..h+5 of a needy odd cycle while it helps (figure 2, cycle B): two fifths of every
 * edge x_{2j+1} - x_{2j+2} in rounds h, h+1 (x_0 free), of every x_{2j} - x_{2j+1 mod L},
 * j > 0, in rounds h+2, h+3 (x_1 free), and of x_0 - x_1 in rounds h+4, h+5 (x_2 free).
 * The free PEs x_0, x_1, x_2 are the helpers of the other cycle.
 */
static int needy_helping(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint32_t i,
                         uint32_t h, uint64_t n)
{
    uint32_t s = c->cstart[i], L = c->clen[i];
    const uint32_t *e = c->ne + s;
    int rc = UTIL_OK;
    for (uint32_t t = 0; t < 2 && rc == UTIL_OK; t++) {
        for (uint32_t k = 1; k < L && rc == UTIL_OK; k += 2) {
            rc = put_piece(c, nxt, kind, e[k], h + t, n);
        }
        for (uint32_t k = 2; k < L && rc == UTIL_OK; k += 2) {
            rc = put_piece(c, nxt, kind, e[k], h + 2 + t, n);
        }
        if (rc == UTIL_OK) {
            rc = put_piece(c, nxt, kind, e[0], h + 4 + t, n);
        }
    }
    return rc;
}

/*
 * A path helping a lone needy cycle in rounds 0..5 and finishing its own edges by round 11.
 * Not spelt out in the paper (§2.3 only says a single idle PE "can easily help", §2.4 that "a
 * simple modification" pairs an odd cycle with a path); this is our construction:
 *   >= 3 PEs: y_0, y_1, y_2 forward in rounds (0,1), (2,3), (4,5) while two fifths of the odd
 *             edges go in rounds 0, 1, of the even edges but the first in 2, 3, and of the
 *             first edge in 4, 5 (exactly the pattern of a helping cycle); the remaining three
 *             fifths of the even edges go in rounds 6, 8, 10, of the odd ones in 7, 9, 11;
 *   2 PEs:    y_0, y_1, y_0 forward; the single edge goes in rounds 6..10;
 *   1 PE:     it forwards all three pieces.
 * The helpers are stored in f[0..2].
 */
static int path_helping(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint32_t i,
                        uint32_t f[3], uint64_t n)
{
    uint32_t s = c->cstart[i], len = c->clen[i];
    const uint32_t *y = c->ord + s;
    int rc = UTIL_OK;
    f[0] = y[0];
    f[1] = len > 1 ? y[1] : y[0];
    f[2] = len > 2 ? y[2] : y[0];
    if (len == 2) {
        for (uint32_t t = 0; t < 5 && rc == UTIL_OK; t++) {
            rc = put_piece(c, nxt, kind, y[0], 6 + t, n);
        }
        return rc;
    }
    for (uint32_t k = 0; k + 1 < len && rc == UTIL_OK; k++) {
        /* Two fifths in the first half, around the helpers. */
        uint32_t r = k % 2 == 1 ? 0 : k >= 2 ? 2 : 4;
        for (uint32_t t = 0; t < 2 && rc == UTIL_OK; t++) {
            rc = put_piece(c, nxt, kind, y[k], r + t, n);
        }
        /* Three fifths in the second half, alternating matchings. */
        for (uint32_t t = 0; t < 3 && rc == UTIL_OK; t++) {
            rc = put_piece(c, nxt, kind, y[k], 6 + k % 2 + 2 * t, n);
        }
    }
    return rc;
}

/* A path or even cycle on its own: fifths of alternate edges in rounds 0..4 and 5..9. */
static int alone(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint32_t i, uint64_t n)
{
    uint32_t s = c->cstart[i], ne = comp_edges(c, i);
    int rc = UTIL_OK;
    for (uint32_t k = 0; k < ne && rc == UTIL_OK; k++) {
        for (uint32_t t = 0; t < 5 && rc == UTIL_OK; t++) {
            rc = put_piece(c, nxt, kind, c->ord[s + k], 5 * (k % 2) + t, n);
        }
    }
    return rc;
}

/*
 * One colour class (n copies) in 12 rounds of n units, paper §2.3 and figure 2. Odd cycles
 * are paired; in rounds 0..5 the first cycle A is helped by PEs b_0, b_1, b_2 of the second, B,
 * in rounds 6..11 the roles swap: five fifths of every packet in 12/5 steps. A leftover odd
 * cycle is helped by a path or an idle PE (one exists for even p: p and the number of PEs on
 * even cycles are even, so paths with an odd number of PEs exist when the number of odd
 * cycles is odd). Classes without odd cycles take 2 steps. Requires: the number of odd cycles
 * is even, or the class has a path.
 */
static int forward_window(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint64_t n)
{
    uint32_t q = 0, odd[2] = {NONE, NONE}, helper = NONE;
    int rc = UTIL_OK;
    for (uint32_t i = 0; i < c->ncomp; i++) {
        q += c->ctype[i] == C_ODD;
        helper = helper == NONE && real_path(c, i) ? i : helper;
    }
    if (q == 0) {
        return two_or_three_steps(c, nxt, kind, n);
    }
    if (q % 2 == 1 && helper == NONE) {
        return UTIL_EUSAGE; /* the callers rule this out: an internal error */
    }
    helper = q % 2 == 1 ? helper : NONE;
    /* Pair odd cycles in order of appearance: each pair is one figure-2 schedule. */
    for (uint32_t i = 0; i < c->ncomp && rc == UTIL_OK; i++) {
        if (c->ctype[i] != C_ODD) {
            if (i != helper) {
                rc = alone(c, nxt, kind, i, n);
            }
            continue;
        }
        name_cycle(c, nxt, kind, i);
        if (odd[0] == NONE) {
            odd[0] = i;
            continue;
        }
        odd[1] = i;
        uint32_t sa = c->cstart[odd[0]], sb = c->cstart[odd[1]];
        uint32_t fa[3] = {c->nx[sa], c->nx[sa + 1], c->nx[sa + 2]};
        uint32_t fb[3] = {c->nx[sb], c->nx[sb + 1], c->nx[sb + 2]};
        rc = needy_helped(c, nxt, kind, odd[0], 0, fb, n);
        if (rc == UTIL_OK) {
            rc = needy_helping(c, nxt, kind, odd[1], 0, n);
        }
        if (rc == UTIL_OK) {
            rc = needy_helped(c, nxt, kind, odd[1], 6, fa, n);
        }
        if (rc == UTIL_OK) {
            rc = needy_helping(c, nxt, kind, odd[0], 6, n);
        }
        odd[0] = odd[1] = NONE;
    }
    /* The leftover odd cycle with the helper path. */
    if (rc == UTIL_OK && odd[0] != NONE) {
        uint32_t f[3];
        rc = path_helping(c, nxt, kind, helper, f, n);
        if (rc == UTIL_OK) {
            rc = needy_helped(c, nxt, kind, odd[0], 0, f, n);
        }
        if (rc == UTIL_OK) {
            rc = needy_helping(c, nxt, kind, odd[0], 6, n);
        }
    }
    if (rc == UTIL_OK) {
        rc = w_flush(c, 12, n);
    }
    if (rc == UTIL_OK) {
        advance(c, kind, n);
    }
    return rc;
}

/* Queues @len units of message ms -> md, from unit @off, as part of the current send of M. */
static int defer(struct ctx *c, uint32_t ms, uint32_t md, uint64_t off, uint64_t len)
{
    if (grow((void **)&c->dfr, &c->capdfr, c->ndfr + 1, sizeof(*c->dfr)) != UTIL_OK) {
        return UTIL_ENOMEM;
    }
    c->dfr[c->ndfr++] = (struct deferred){off, len, ms, md, c->nsets};
    return UTIL_OK;
}

/* Sends all of M in one step (deferred to the end, see place_deferred()) and empties it. */
static int flush_m(struct ctx *c)
{
    if (c->nm == 0) {
        return UTIL_OK;
    }
    for (uint32_t k = 0; k < c->nm; k++) {
        const struct mentry *x = &c->mset[k];
        if (defer(c, x->msrc, x->mdst, x->off, UNITS) != UTIL_OK) {
            return UTIL_ENOMEM;
        }
        c->inm[x->msrc] = c->inm[x->mdst] = 0;
    }
    c->nm = 0;
    c->nsets++;
    return UTIL_OK;
}

/* Takes one packet of edge e out of its class into M. */
static void m_add(struct ctx *c, const uint32_t *nxt, const uint8_t *kind, uint32_t e)
{
    struct mentry *x = &c->mset[c->nm++];
    msg_of(nxt, kind, e, &x->msrc, &x->mdst);
    x->off = c->cur[e]++ * UNITS;
    c->inm[x->msrc] = c->inm[x->mdst] = 1;
}

/* k copies of the class without edge e: the cycle through e becomes a path. */
static int without_edge(struct ctx *c, const uint32_t *nxt, uint8_t *kind, uint32_t e, uint64_t k)
{
    uint8_t saved = kind[e];
    kind[e] = K_VIRT;
    analyse(c, nxt, kind);
    int rc = forward_window(c, nxt, kind, k);
    kind[e] = saved;
    return rc;
}

/*
 * Odd p, §2.4 and Lemma 1: a class whose PEs all lie on cycles of real edges, with an odd
 * number of odd cycles, cannot be paired. From each copy remove one packet into a set M that
 * stays a matching of the transfer graph; the copy then schedules in 12 rounds (removing from
 * an odd cycle leaves an even number of them, removing from an even cycle leaves a path that
 * helps the lone odd cycle: the paper's "simple modification"). When no edge of the class fits
 * M, M is sent in one step (deferred to the end, where place_deferred() first slots its packets
 * into idle time). All p PEs have two edges in the class, so an edge of M blocks at most four
 * of its p edges and M has >= ceil(p/4) packets whenever it must be sent (Lemma 1).
 *
 * Deviation (cost accounting of §2.4): with R <= ceil(h/2) removals this sends M at most
 * ceil(R / ceil(p/4)) times. §2.4 counts ceil(h/2) / ceil(p/4), not rounded up, to reach
 * (6/5 + 2/p)(h + 1); for even h the rounding is absorbed (12/5 ceil(h/2) = 6/5 h leaves 6/5 of
 * slack), for odd h the final, partly filled M can cost up to one step more than that formula.
 * The guaranteed bound is 12/5 ceil(h/2) + ceil(ceil(h/2) / ceil(p/4)) steps.
 *
 * Edges of odd cycles are tried first: when the class has a single odd cycle this leaves it
 * without odd cycles (2 steps instead of 12/5). Copies are processed in bulk: from an empty M
 * the greedy choice repeats with period K (the size of the greedy matching), so a run of
 * copies becomes K sub-classes of full = left / K copies each plus full - 1 sends of the
 * matching, the last one left pending in M as the copy-by-copy process would.
 */
static int forward_removal(struct ctx *c, const uint32_t *nxt, uint8_t *kind, uint64_t n)
{
    uint32_t nc = 0;
    int rc = UTIL_OK;
    /* Candidates: every edge of the class (all on cycles), odd cycles first. */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < c->ncomp; i++) {
            if (c->ctype[i] == (pass == 0 ? C_ODD : C_EVEN)) {
                for (uint32_t k = 0; k < c->clen[i]; k++) {
                    c->cand[nc++] = c->ord[c->cstart[i] + k];
                }
            }
        }
    }
    uint64_t left = n;
    while (left > 0 && rc == UTIL_OK) {
        if (c->nm == 0) {
            /* From an empty M the choices repeat with period K: do whole periods at once. */
            uint32_t K = 0;
            for (uint32_t k = 0; k < nc; k++) {
                uint32_t e = c->cand[k];
                if (!c->mark[e] && !c->mark[nxt[e]]) {
                    c->mark[e] = c->mark[nxt[e]] = 1;
                    c->seq[K++] = e;
                }
            }
            for (uint32_t k = 0; k < K; k++) {
                c->mark[c->seq[k]] = c->mark[nxt[c->seq[k]]] = 0;
            }
            uint64_t full = left / K;
            if (full > 0) {
                for (uint32_t k = 0; k < K && rc == UTIL_OK; k++) {
                    rc = without_edge(c, nxt, kind, c->seq[k], full);
                }
                /* The removed packets: full - 1 sends of the matching now, one pending. */
                for (uint32_t k = 0; k < K && rc == UTIL_OK && full > 1; k++) {
                    uint32_t ms, md, e = c->seq[k];
                    msg_of(nxt, kind, e, &ms, &md);
                    rc = defer(c, ms, md, c->cur[e] * UNITS, (full - 1) * UNITS);
                    c->cur[e] += full - 1;
                }
                c->nsets += full > 1;
                for (uint32_t k = 0; k < K && rc == UTIL_OK; k++) {
                    m_add(c, nxt, kind, c->seq[k]);
                }
                left -= full * K;
                continue;
            }
        }
        /* One copy: the first candidate that keeps M a matching, else send M first. */
        uint32_t e = NONE;
        for (uint32_t k = 0; k < nc && e == NONE; k++) {
            e = !c->inm[c->cand[k]] && !c->inm[nxt[c->cand[k]]] ? c->cand[k] : NONE;
        }
        if (e == NONE) {
            rc = flush_m(c);
            continue;
        }
        m_add(c, nxt, kind, e);
        rc = without_edge(c, nxt, kind, e, 1);
        left--;
    }
    return rc;
}

/*
 * forward, paper §2.2-2.4. The colour classes of direct are scheduled with packets split into
 * five pieces: odd cycles pair up and each cycle's idle PEs forward three fifths of one packet
 * of the other (12 rounds of 1/5, figure 2), so every class takes 12/5 steps instead of 3.
 * Even p: <= 12/5 ceil(h/2) <= 6/5 (h + 1) steps (Theorem 1). Odd p: classes with an idle PE or
 * a path use it as the helper of the leftover odd cycle (§2.4); the others go through
 * forward_removal() (§2.4, Lemma 1).
 *
 * Our addition: the bipartite graph gets virtual PEs without packets (VIRTUAL_PES), whose
 * padding is placed on real PEs with spare degree first (exchange_bvn_build()). A colour class
 * in which a virtual PE is matched to a real one has a real path, hence a helper, so only
 * classes where the virtual PEs are matched among themselves can need removals: none unless
 * nearly every PE has the maximum degree (p c - E < 2 c, E = packets after orientation), as on
 * the lower-bound instance. This keeps M small and the schedule compact (a removal class splits
 * into up to ~p/2 variants; with huge counts at p = 63 this took 35M transfers down to 1M).
 */
static int forward_class(struct ctx *c, const uint32_t *nxt, uint8_t *kind, const uint64_t *base,
                         uint64_t n)
{
    uint32_t q = 0;
    bool path = false;
    for (uint32_t u = 0; u < c->p; u++) {
        c->cur[u] = base[u];
    }
    analyse(c, nxt, kind);
    for (uint32_t i = 0; i < c->ncomp; i++) {
        q += c->ctype[i] == C_ODD;
        path = path || real_path(c, i);
    }
    if (q % 2 == 1 && !path) {
        return forward_removal(c, nxt, kind, n);
    }
    return forward_window(c, nxt, kind, n);
}

/* ---- fullduplex ------------------------------------------------------------------------------ */

/*
 * fullduplex: in the full-duplex model a PE sends one and receives one packet per step, so the
 * bipartite graph sender -> receiver with weights m (no orientation) needs exactly
 * Delta = max(max send, max receive) colours (König), each colour class one step. The
 * decomposition yields every colour class with its multiplicity n: one step of n packets.
 * Cost: Delta steps, optimal (a PE sending Delta packets needs Delta steps); see the
 * introduction of the paper ("bipartite edge coloring [15]").
 */
static int fullduplex_class(struct ctx *c, const uint32_t *nxt, uint8_t *kind,
                            const uint64_t *base, uint64_t n)
{
    for (uint32_t u = 0; u < c->p; u++) {
        if (kind[u] == K_FWD) {
            if (w_add(c, 0, u, nxt[u], u, nxt[u], base[u] * UNITS, n * UNITS,
                      EXCHANGE_SCHED_DIRECT) != UTIL_OK) {
                return UTIL_ENOMEM;
            }
        }
    }
    return w_flush(c, 1, n * UNITS);
}

/* ---- the bipartite multigraph and its decomposition (exchange/bvn.h) ------------------------ */

/*
 * The weights of the bipartite graph. Oriented (half-duplex): half of the m_uv + m_vu packets on
 * {u, v} each way, and the odd one the way exchange_bvn_orient_odd() chose. Directed
 * (full-duplex): m_uv. The diagonal carries no packets.
 */
struct weights {
    uint32_t p;
    const uint64_t *m;
    bool oriented;
    uint64_t *ab, *adj_e; /* the orientation of the odd edges (oriented only) */
    uint32_t *adj_v, *tail;
};

/* Row u of the weights (exchange_bvn_row_fn): walks u's sorted odd adjacency in step with v. */
static void weights_row(void *arg, uint32_t u, uint64_t *w)
{
    const struct weights *x = arg;
    uint64_t pos = x->oriented ? x->ab[u] : 0;
    for (uint32_t v = 0; v < x->p; v++) {
        uint64_t uv = x->m[(uint64_t)u * x->p + v], vu = x->m[(uint64_t)v * x->p + u];
        if (u == v) {
            w[v] = 0;
            continue;
        }
        if (!x->oriented) {
            w[v] = uv;
            continue;
        }
        w[v] = (uv + vu) / 2;
        if ((uv + vu) % 2 == 1) {
            /* The odd edge {u, v} is the next entry of u's sorted adjacency. */
            while (pos < x->ab[u + 1] && x->adj_v[pos] < v) {
                pos++;
            }
            w[v] += x->tail[x->adj_e[pos]] == u;
        }
    }
}

static void weights_free(struct weights *x)
{
    util_free(x->ab);
    util_free(x->adj_e);
    util_free(x->adj_v);
    util_free(x->tail);
}

typedef int class_fn(struct ctx *c, const uint32_t *nxt, uint8_t *kind, const uint64_t *base,
                     uint64_t n);

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* What the decomposition's rounds need: the scheduling context, the class function, the
 * matrix and its packets not yet assigned, and scratch per vertex. */
struct rounds {
    struct ctx *c;
    class_fn *fn;
    const uint64_t *m;
    uint64_t *rem; /* p x p packets not yet assigned (initially m) */
    uint8_t *kind;
    uint64_t *base, *s1, *s2, *of, *ob, *cuts;
};

/*
 * One round of the Birkhoff-von Neumann decomposition (exchange_bvn_round_fn), @a copies of the
 * matching @nxt whose entry of u carries @real[u] packets. The real part of an entry (u, v)
 * draws packets from the pair's pool, m_uv first, then m_vu, and the rest is padding; where an
 * entry's mix changes the round is cut, so that every colour class handed to the class
 * function gives each edge one kind of payload. Cost O(p log p) per round.
 */
static int schedule_round(void *arg, const uint32_t *nxt, const uint64_t *real, uint64_t a)
{
    struct rounds *x = arg;
    uint32_t p = x->c->p;
    uint64_t pr = x->c->preal; /* the stride of m and rem */
    /* Per entry: [0, s1) packets u -> v, [s1, s2) packets v -> u, [s2, a) virtual. */
    size_t ncut = 0;
    for (uint32_t u = 0; u < p; u++) {
        uint64_t v = nxt[u], r = real[u], f = 0;
        if (r > 0) {
            /* Real packets (so u, v < pr): message u -> v first, then v -> u. */
            uint64_t *fw = &x->rem[u * pr + v], *bw = &x->rem[v * pr + u];
            f = r < *fw ? r : *fw;
            x->of[u] = x->m[u * pr + v] - *fw;
            x->ob[u] = x->m[v * pr + u] - *bw;
            *fw -= f;
            *bw -= r - f;
        }
        x->s1[u] = f;
        x->s2[u] = r;
        if (f > 0 && f < a) {
            x->cuts[ncut++] = f;
        }
        if (r > f && r < a) {
            x->cuts[ncut++] = r;
        }
    }
    x->cuts[ncut++] = a;
    qsort(x->cuts, ncut, sizeof(*x->cuts), u64_cmp);
    /* One colour class per stretch between cuts. */
    uint64_t at = 0;
    int rc = UTIL_OK;
    for (size_t k = 0; k < ncut && rc == UTIL_OK; k++) {
        if (x->cuts[k] == at) {
            continue;
        }
        for (uint32_t u = 0; u < p; u++) {
            x->kind[u] = at < x->s1[u] ? K_FWD : at < x->s2[u] ? K_BWD : K_VIRT;
            x->base[u] = x->kind[u] == K_FWD   ? x->of[u] + at
                         : x->kind[u] == K_BWD ? x->ob[u] + at - x->s1[u]
                                               : 0;
        }
        x->c->s->matchings++;
        rc = x->fn(x->c, nxt, x->kind, x->base, x->cuts[k] - at);
        at = x->cuts[k];
    }
    return rc;
}

/*
 * Builds the bipartite multigraph of @m on @pv >= p vertices (the virtual PEs take padding;
 * see VIRTUAL_PES), decomposes it and schedules every colour class with @fn. Returns 0,
 * UTIL_ENOMEM, or UTIL_EUSAGE (an internal error).
 */
static int decompose(struct ctx *c, const uint64_t *m, bool oriented, class_fn *fn)
{
    uint32_t p = c->preal, pv = c->p;
    size_t n = pv;
    struct exchange_bvn g;
    struct weights w = {p, m, oriented, NULL, NULL, NULL, NULL};
    struct rounds x = {c, fn, m, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    memset(&g, 0, sizeof(g));
    x.rem = util_malloc((size_t)p * p * sizeof(*x.rem));
    x.kind = util_malloc(n);
    x.base = util_malloc(6 * n * sizeof(uint64_t) + sizeof(uint64_t));
    int rc = UTIL_ENOMEM;
    if (x.rem == NULL || x.kind == NULL || x.base == NULL ||
        (oriented && exchange_bvn_orient_odd(p, m, &w.ab, &w.adj_v, &w.adj_e, &w.tail) !=
                         UTIL_OK)) {
        goto fail;
    }
    memcpy(x.rem, m, (size_t)p * p * sizeof(*x.rem));
    x.s1 = x.base + n;
    x.s2 = x.s1 + n;
    x.of = x.s2 + n;
    x.ob = x.of + n;
    x.cuts = x.ob + n; /* 2n + 1 */
    if ((rc = exchange_bvn_build(&g, p, pv, weights_row, &w)) == UTIL_OK) {
        rc = exchange_bvn_decompose(&g, schedule_round, &x);
    }
fail:
    exchange_bvn_free(&g);
    weights_free(&w);
    util_free(x.rem);
    util_free(x.kind);
    util_free(x.base);
    return rc;
}

/* ---- the deferred sends of M ------------------------------------------------------------- */

/*
 * Our addition to §2.4: each send of M is a matching, and a step of it is mostly idle. Before
 * spending those steps, the removed packets are slotted into existing steps where both their
 * PEs are idle (in pieces of at most the step's duration, as direct transfers); whatever is
 * left of each send of M then goes in one step as long as its longest remainder. This never
 * lengthens the schedule and, on tight odd-p instances, saves most of the M steps (e.g. it
 * makes forward no slower than direct on the 3-cycle instance with p = 9, h = 2). The scan
 * is capped at a fixed budget of checks so that huge schedules stay cheap to build.
 */
static int place_deferred(struct ctx *c)
{
    struct exchange_sched *s = c->s;
    uint64_t *busy = util_calloc(c->p, sizeof(*busy));
    uint64_t *active = util_malloc((size_t)(c->ndfr + 1) * sizeof(*active));
    struct exchange_sched_xfer *ins = NULL, *merged = NULL;
    uint64_t nins = 0, capins = 0, nact = 0, budget = (uint64_t)1 << 26;
    int rc = UTIL_ENOMEM;
    if (busy == NULL || active == NULL) {
        goto fail;
    }
    for (uint64_t k = 0; k < c->ndfr; k++) {
        active[nact++] = k;
    }
    /* Step by step: mark the busy PEs, then give idle pairs a piece of their packet. */
    for (uint64_t t = 0; t < s->nsteps && nact > 0 && budget > nact; t++) {
        for (uint64_t k = s->step_begin[t]; k < s->step_begin[t + 1]; k++) {
            busy[s->xfers[k].src] = busy[s->xfers[k].dst] = t + 1;
        }
        uint64_t keep = 0;
        budget -= nact;
        for (uint64_t a = 0; a < nact; a++) {
            struct deferred *d = &c->dfr[active[a]];
            if (busy[d->msrc] != t + 1 && busy[d->mdst] != t + 1) {
                uint64_t x = d->len < s->step_units[t] ? d->len : s->step_units[t];
                if (grow((void **)&ins, &capins, nins + 1, sizeof(*ins)) != UTIL_OK) {
                    goto fail;
                }
                ins[nins++] = (struct exchange_sched_xfer){t, d->off, x, d->msrc, d->mdst,
                                                           d->msrc, d->mdst,
                                                           EXCHANGE_SCHED_DIRECT};
                d->off += x;
                d->len -= x;
                busy[d->msrc] = busy[d->mdst] = t + 1;
            }
            if (d->len > 0) {
                active[keep++] = active[a];
            }
        }
        nact = keep;
    }
    /* Merge the new pieces into their steps (both lists are in step order). */
    if (nins > 0) {
        merged = util_malloc((size_t)(s->nxfers + nins) * sizeof(*merged));
        if (merged == NULL) {
            goto fail;
        }
        uint64_t o = 0, j = 0;
        for (uint64_t t = 0; t < s->nsteps; t++) {
            uint64_t b = s->step_begin[t], e = s->step_begin[t + 1];
            s->step_begin[t] = o;
            memcpy(merged + o, s->xfers + b, (size_t)(e - b) * sizeof(*merged));
            o += e - b;
            for (; j < nins && ins[j].step == t; j++) {
                merged[o++] = ins[j];
            }
        }
        s->step_begin[s->nsteps] = o;
        util_free(s->xfers);
        s->xfers = merged;
        s->nxfers = o;
        c->cap_xfers = o;
        merged = NULL;
    }
    /* What is left: one step per send of M, as long as its longest remainder. */
    for (uint64_t k = 0; k < c->ndfr;) {
        uint64_t end = k, dur = 0;
        for (; end < c->ndfr && c->dfr[end].set == c->dfr[k].set; end++) {
            dur = c->dfr[end].len > dur ? c->dfr[end].len : dur;
        }
        if (dur > 0 && b_step(c, dur) != UTIL_OK) {
            goto fail;
        }
        for (; k < end; k++) {
            const struct deferred *d = &c->dfr[k];
            struct wxfer x = {d->off, d->len, 0, d->msrc, d->mdst, d->msrc, d->mdst,
                              EXCHANGE_SCHED_DIRECT};
            if (d->len > 0 && b_xfer(c, &x) != UTIL_OK) {
                goto fail;
            }
        }
    }
    rc = UTIL_OK;
fail:
    util_free(busy);
    util_free(active);
    util_free(ins);
    util_free(merged);
    return rc;
}

/* ---- the driver ---------------------------------------------------------------------------- */

static void ctx_free(struct ctx *c)
{
    util_free(c->w);
    util_free(c->prv);
    util_free(c->ord);
    util_free(c->cstart);
    util_free(c->clen);
    util_free(c->ctype);
    util_free(c->seen);
    util_free(c->nx);
    util_free(c->ne);
    util_free(c->cur);
    util_free(c->pcnt);
    util_free(c->mset);
    util_free(c->inm);
    util_free(c->mark);
    util_free(c->cand);
    util_free(c->seq);
    util_free(c->dfr);
}

static int ctx_init(struct ctx *c, uint32_t p, uint32_t pv)
{
    size_t n = pv;
    memset(c, 0, sizeof(*c));
    c->p = pv;
    c->preal = p;
    c->prv = util_malloc(n * sizeof(uint32_t));
    c->ord = util_malloc(n * sizeof(uint32_t));
    c->cstart = util_malloc(n * sizeof(uint32_t));
    c->clen = util_malloc(n * sizeof(uint32_t));
    c->ctype = util_malloc(n);
    c->seen = util_malloc(n);
    c->nx = util_malloc(n * sizeof(uint32_t));
    c->ne = util_malloc(n * sizeof(uint32_t));
    c->cur = util_calloc(n, sizeof(uint64_t));
    c->pcnt = util_calloc(n, 1);
    c->mset = util_malloc(n * sizeof(struct mentry));
    c->inm = util_calloc(n, 1);
    c->mark = util_calloc(n, 1);
    c->cand = util_malloc(n * sizeof(uint32_t));
    c->seq = util_malloc(n * sizeof(uint32_t));
    if (c->prv == NULL || c->ord == NULL || c->cstart == NULL || c->clen == NULL ||
        c->ctype == NULL || c->seen == NULL || c->nx == NULL || c->ne == NULL ||
        c->cur == NULL || c->pcnt == NULL || c->mset == NULL || c->inm == NULL ||
        c->mark == NULL || c->cand == NULL || c->seq == NULL) {
        return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

/* The per-rank index and the forwarding buffer size, once all steps are in. */
static int finish(struct exchange_sched *s)
{
    uint64_t p = (uint64_t)s->p;
    s->rank_begin = util_calloc((size_t)p + 1, sizeof(*s->rank_begin));
    s->rank_xfers = util_malloc((size_t)(2 * s->nxfers + 1) * sizeof(*s->rank_xfers));
    if (s->step_begin == NULL) {
        s->step_begin = util_calloc(1, sizeof(*s->step_begin));
    }
    if (s->rank_begin == NULL || s->rank_xfers == NULL || s->step_begin == NULL) {
        return UTIL_ENOMEM;
    }
    /* Counting sort by rank; transfers are already in step order. */
    for (uint64_t k = 0; k < s->nxfers; k++) {
        s->rank_begin[s->xfers[k].src + 1]++;
        s->rank_begin[s->xfers[k].dst + 1]++;
        if (s->xfers[k].hop == EXCHANGE_SCHED_HOP1 && s->xfers[k].len > s->fwd_units_max) {
            s->fwd_units_max = s->xfers[k].len;
        }
    }
    for (uint64_t r = 0; r < p; r++) {
        s->rank_begin[r + 1] += s->rank_begin[r];
    }
    for (uint64_t k = 0; k < s->nxfers; k++) {
        s->rank_xfers[s->rank_begin[s->xfers[k].src]++] = k;
        s->rank_xfers[s->rank_begin[s->xfers[k].dst]++] = k;
    }
    for (uint64_t r = p; r > 0; r--) {
        s->rank_begin[r] = s->rank_begin[r - 1];
    }
    s->rank_begin[0] = 0;
    return UTIL_OK;
}

/* Shared driver: check the input, build the bipartite graph, decompose, schedule classes. */
static int build(const char *algo, int p, const uint64_t *m, bool oriented, uint32_t nvirt,
                 class_fn *fn, enum exchange_sched_model model, struct exchange_sched **out)
{
    struct exchange_sched *s = NULL;
    struct ctx c;
    uint64_t h, smax, rmax;
    int rc;
    memset(&c, 0, sizeof(c));
    *out = NULL;
    if (p < 1 || m == NULL) {
        return util_error("%s schedule: need at least one PE and a matrix (p = %d)", algo, p);
    }
    /* Units are fifths of packets: keep 5 * (h + slack) within 64 bits. */
    rc = exchange_sched_degrees(p, m, &h, &smax, &rmax);
    if (rc == UTIL_ENOMEM) {
        return util_fail(rc, "%s schedule: out of memory (p = %d)", algo, p);
    }
    if (rc != UTIL_OK || h > UINT64_MAX / 16) {
        return util_error("%s schedule: message sizes too large to schedule (p = %d)", algo, p);
    }
    rc = UTIL_ENOMEM;
    s = util_calloc(1, sizeof(*s));
    uint32_t pv = (uint32_t)p + nvirt;
    if (s == NULL || ctx_init(&c, (uint32_t)p, pv) != UTIL_OK) {
        goto fail;
    }
    s->algo = algo;
    s->model = model;
    s->p = p;
    s->h = h;
    s->send_max = smax;
    s->recv_max = rmax;
    c.s = s;
    rc = decompose(&c, m, oriented, fn);
    if (rc == UTIL_OK) {
        rc = flush_m(&c); /* forward, odd p: the last removed packets */
    }
    if (rc == UTIL_OK && c.ndfr > 0) {
        rc = place_deferred(&c);
    }
    if (rc == UTIL_OK) {
        rc = finish(s);
    }
    if (rc == UTIL_EUSAGE) {
        rc = util_fail(UTIL_EUSAGE, "%s schedule: internal error (p = %d)", algo, p);
        goto fail;
    }
    if (rc != UTIL_OK) {
        rc = util_fail(rc, "%s schedule: out of memory (p = %d, h = %llu)", algo, p,
                       (unsigned long long)h);
        goto fail;
    }
    *out = s;
    s = NULL;
fail:
    exchange_sched_free(s);
    ctx_free(&c);
    return rc;
}

/*
 * Virtual PEs of the half-duplex algorithms (see exchange_bvn_build() and forward_class()): they
 * take the padding, so classes have real paths (2 steps instead of 3 in direct, no removals in
 * forward), which shortens both schedules; two are enough for the padding of random count
 * matrices, and more only add PEs to colour (sortex-sched --algos direct,forward shows the steps
 * per h). Both algorithms use the same number, so they see the same colour classes.
 */
#define VIRTUAL_PES 2

int exchange_sched_direct(int p, const uint64_t *m, struct exchange_sched **out)
{
    return build("direct", p, m, true, VIRTUAL_PES, direct_class, EXCHANGE_SCHED_HALF_DUPLEX,
                 out);
}

int exchange_sched_forward(int p, const uint64_t *m, struct exchange_sched **out)
{
    /* Even p: direct's colour classes, each no longer than there (12/5 or 2 steps, not 3). */
    if (p % 2 == 0) {
        return build("forward", p, m, true, VIRTUAL_PES, forward_class,
                     EXCHANGE_SCHED_HALF_DUPLEX, out);
    }
    /*
     * Odd p: the steps that send M can make a class dearer than direct's 3 steps on small or
     * sparse inputs. A direct schedule is a valid forwarding schedule too, so keep the shorter.
     */
    struct exchange_sched *f = NULL, *d = NULL;
    int rc = build("forward", p, m, true, VIRTUAL_PES, forward_class, EXCHANGE_SCHED_HALF_DUPLEX,
                   &f);
    if (rc == UTIL_OK) {
        rc = exchange_sched_direct(p, m, &d);
    }
    if (rc == UTIL_OK && d->length < f->length) {
        d->algo = "forward";
        *out = d;
        d = NULL;
    } else if (rc == UTIL_OK) {
        *out = f;
        f = NULL;
    }
    exchange_sched_free(f);
    exchange_sched_free(d);
    return rc;
}

int exchange_sched_fullduplex(int p, const uint64_t *m, struct exchange_sched **out)
{
    /* Exact already: no virtual PEs. */
    return build("fullduplex", p, m, false, 0, fullduplex_class, EXCHANGE_SCHED_FULL_DUPLEX,
                 out);
}

/*
 * exchange/hypercube.c: all-to-all in log2 P combining rounds across the dimensions of a
 * hypercube.
 *
 * Scheme (the combining model of one-to-all scatter [OAS]: packets travelling the same way are
 * bundled and sent with one start-up, the bundle shrinking as packets are delivered; applied here
 * to the personalized all-to-all): Q = the largest power of two <= P, dim = log2 Q. Before round k,
 * cube node x holds the pieces (s, d) whose source node agrees with x on the bits >= k and whose
 * destination node agrees with x on the bits < k; in round k it swaps with x ^ 2^k every piece
 * whose destination lies across dimension k, as one bundle (exchange/bundle.h: the per-(source,
 * destination) counts plus the pieces, packed into one message when small, scattered straight from
 * where each piece is when large). After dim rounds every node holds exactly the pieces for itself,
 * from every source, and lays them out by source; large pieces for it were left waiting inside MPI
 * on arrival and are received straight into the result.
 *
 * Non-power-of-two P: the P - Q ranks e >= Q are folded into node e - Q (exchange/topo.h).
 * Such a rank sends its whole send buffer to its node in an extra first round and receives its
 * own pieces back from it in an extra last round; the node carries both ranks' pieces through
 * the cube. So P = 2^dim takes dim rounds and any other P takes dim + 2 (= ceil(log2 P) + 1),
 * and the folded-into nodes carry up to twice the data. Ranks outside the fold idle then.
 *
 * Cost per cube rank: dim start-ups instead of P - 1, but about half of everything held moves
 * in every round, so each element travels about (log2 P) / 2 times: volume ~ (n/2) log2 P in all
 * against n for a direct exchange, plus count headers of about P 8-byte words per bundle and local
 * copies to pack small bundles. The back-end for small pieces; it loses bandwidth at large
 * ones. Scratch per round: the forwarded pieces received (they stay there until sent on) and
 * the staged headers and packed bundles.
 */
#include "exchange/exchange.h"

#include <string.h>

#include "exchange/arena.h"
#include "exchange/bundle.h"
#include "exchange/tags.h"
#include "exchange/topo.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

/* This back-end, defined at the end: its address names its kept scratch (exchange/arena.h). */
extern const struct exchange_ops exchange_hypercube;

/* Step t's tags: 0 is the fold, 1..dim the cube rounds, dim + 1 the unfold. */
#define TAG_STEP(t) (EXCHANGE_TAG_HYPERCUBE + BUNDLE_TAGS_PER_STEP * (t))

/* The state of one hypercube exchange on this rank. */
struct cube {
    const struct exchange_args *a;
    int rank, size, q, dim;
    int node;  /* this rank's cube node */
    int extra; /* the rank folded into this node, or -1 */
    struct bundle_piece *out;  /* [P]: this rank's own pieces, by destination */
    struct bundle_piece *mine; /* [P]: the pieces for this rank, by source */
    /* The pieces held: sources src[0..nsrc) x destinations dst[0..ndst), source-major. */
    int *src, *dst, nsrc, ndst;
    struct bundle_piece *held, *next_held;
    int *next_src, *next_dst;
    int *pos_src, *pos_dst; /* [P]: index of a rank in src / dst, -1 when absent */
    size_t held_cap;
    struct bundle_piece **list; /* the pieces of one bundle */
    unsigned char *final;       /* which of them end at the receiver */
    struct bundle_io io;
    struct bundle_scratch *stage, *land, *hop; /* one each per step */
    uint64_t forwarded;                        /* elements sent that came from other ranks */
    void *drain;        /* the throw-away result of a refused (too small) receive buffer */
    int refused;        /* UTIL_EUSAGE when the receive buffer was too small */
};

/* Sends list[0..n) to peer as step t's bundle. */
static int send_step(struct cube *cu, int peer, int t, size_t n)
{
    uint64_t bytes = exchange_bundle_stage_bytes(&cu->io, cu->list, n);
    int err = exchange_bundle_reserve(&cu->stage[t], bytes, &cu->io);
    if (err == UTIL_OK) {
        err = exchange_bundle_send(&cu->io, peer, TAG_STEP(t), cu->list, cu->final, n,
                                   cu->stage[t].buf);
    }
    return err;
}

/* Receives step t's bundle of n pieces from peer into list[0..n) (final[] as for the sender),
 * the forwarded ones into the step's hop buffer, and waits for them. */
static int recv_step(struct cube *cu, int peer, int t, size_t n)
{
    uint64_t bytes;
    int err = exchange_bundle_probe(&cu->io, peer, TAG_STEP(t), &bytes);
    if (err == UTIL_OK) {
        err = exchange_bundle_reserve(&cu->land[t], bytes, &cu->io);
    }
    if (err == UTIL_OK) {
        err = exchange_bundle_recv(&cu->io, cu->land[t].buf);
    }
    if (err != UTIL_OK) {
        return err;
    }
    const char *b = cu->land[t].buf;
    uint64_t hop = exchange_bundle_hop_bytes(&cu->io, b, bytes, n, cu->final);
    if ((err = exchange_bundle_reserve(&cu->hop[t], hop, &cu->io)) != UTIL_OK) {
        return err;
    }
    char *next = cu->hop[t].buf;
    err = exchange_bundle_open(&cu->io, b, bytes, peer, TAG_STEP(t), cu->list, cu->final, n, &next);
    return err == UTIL_OK ? exchange_bundle_wait_recvs(&cu->io) : err;
}

/* Lays out mine[] as the result (counts first, so a too small buffer is refused early; refused,
 * the pieces still arrive, into cu->drain, thrown away, so that no sender waits). */
static int place(struct cube *cu)
{
    const struct exchange_args *a = cu->a;
    uint64_t total = 0;
    for (int s = 0; s < cu->size; s++) {
        a->recv_counts[s] = cu->mine[s].n;
        total += cu->mine[s].n;
    }
    char *dst = exchange_recv_target(a, total, cu->rank, &cu->drain, &cu->refused);
    if (dst == NULL) {
        return cu->refused;
    }
    return exchange_bundle_place(&cu->io, cu->mine, cu->size, dst);
}

/* A folded rank: everything to its node first, its own pieces back from it last. */
static int run_extra(struct cube *cu)
{
    size_t p = (size_t)cu->size;
    for (size_t d = 0; d < p; d++) {
        cu->list[d] = &cu->out[d];
        cu->final[d] = (int)d == cu->node;
    }
    int err = send_step(cu, cu->node, 0, p);
    for (size_t s = 0; s < p; s++) {
        cu->list[s] = &cu->mine[s];
        cu->final[s] = 1;
    }
    if (err == UTIL_OK) {
        err = recv_step(cu, cu->node, cu->dim + 1, p);
    }
    if (err == UTIL_OK) {
        err = place(cu);
    }
    cu->io.stats->rounds = 2;
    return err;
}

/* Fills a rank set by a membership test; returns its size. */
static int fill_set(int *set, int *pos, int size, int node, int k, int q, int sources)
{
    int n = 0;
    for (int r = 0; r < size; r++) {
        int in = sources ? topo_cube_holds_src(r, node, k, q) : topo_cube_holds_dst(r, node, k, q);
        if (pos != NULL) {
            pos[r] = in ? n : -1;
        }
        if (in) {
            set[n++] = r;
        }
    }
    return n;
}

/* Cube round k: swap with node ^ 2^k the pieces whose destination lies across dimension k. */
static int cube_round(struct cube *cu, int k)
{
    int peer = cu->node ^ (1 << k), err;
    size_t n = 0;

    /* Send: every held source, every destination the partner's half holds after the round. */
    for (int i = 0; i < cu->nsrc; i++) {
        for (int j = 0; j < cu->ndst; j++) {
            int d = cu->dst[j];
            if (!topo_cube_holds_dst(d, cu->node, k + 1, cu->q)) {
                cu->list[n] = &cu->held[(size_t)i * cu->ndst + j];
                cu->final[n++] = d == peer;
                cu->forwarded += cu->src[i] != cu->rank ? cu->list[n - 1]->n : 0;
            }
        }
    }
    if ((err = send_step(cu, peer, k + 1, n)) != UTIL_OK) {
        return err;
    }

    /* The sets after the round; the partner's sources are the new ones this node lacked, in
     * ascending order, so its bundle fills their rows in order. */
    int nsrc = fill_set(cu->next_src, NULL, cu->size, cu->node, k + 1, cu->q, 1);
    int ndst = fill_set(cu->next_dst, NULL, cu->size, cu->node, k + 1, cu->q, 0);
    if ((size_t)nsrc * (size_t)ndst > cu->held_cap) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: hypercube piece table overflow", cu->rank);
    }
    n = 0;
    for (int i = 0; i < nsrc; i++) {
        int s = cu->next_src[i];
        for (int j = 0; j < ndst; j++) {
            struct bundle_piece *pc = &cu->next_held[(size_t)i * ndst + j];
            if (cu->pos_src[s] >= 0) {
                *pc = cu->held[(size_t)cu->pos_src[s] * cu->ndst + cu->pos_dst[cu->next_dst[j]]];
            } else {
                cu->list[n] = pc;
                cu->final[n++] = cu->next_dst[j] == cu->rank;
            }
        }
    }
    if ((err = recv_step(cu, peer, k + 1, n)) != UTIL_OK) {
        return err;
    }

    struct bundle_piece *t = cu->held;
    cu->held = cu->next_held;
    cu->next_held = t;
    int *ts = cu->src, *td = cu->dst;
    cu->src = cu->next_src;
    cu->dst = cu->next_dst;
    cu->next_src = ts;
    cu->next_dst = td;
    cu->nsrc = nsrc;
    cu->ndst = ndst;
    fill_set(cu->src, cu->pos_src, cu->size, cu->node, k + 1, cu->q, 1);
    fill_set(cu->dst, cu->pos_dst, cu->size, cu->node, k + 1, cu->q, 0);
    return UTIL_OK;
}

/* A cube node: fold in, dim rounds, fold out, then place its own pieces by source. */
static int run_node(struct cube *cu)
{
    int err;

    /* Start: this node's members as sources, every rank as destination. */
    cu->nsrc = fill_set(cu->src, cu->pos_src, cu->size, cu->node, 0, cu->q, 1);
    cu->ndst = fill_set(cu->dst, cu->pos_dst, cu->size, cu->node, 0, cu->q, 0);
    memcpy(cu->held, cu->out, (size_t)cu->size * sizeof(*cu->held)); /* row 0: this rank */
    if (cu->extra >= 0) {
        /* Row 1: the folded rank's whole send buffer. */
        for (int d = 0; d < cu->size; d++) {
            cu->list[d] = &cu->held[(size_t)cu->size + (size_t)d];
            cu->final[d] = d == cu->rank;
        }
        if ((err = recv_step(cu, cu->extra, 0, (size_t)cu->size)) != UTIL_OK) {
            return err;
        }
    }

    for (int k = 0; k < cu->dim; k++) {
        if ((err = cube_round(cu, k)) != UTIL_OK) {
            return err;
        }
    }

    /* Now the sources are every rank and the destinations this node's members. */
    int me = cu->pos_dst[cu->rank];
    if (cu->extra >= 0) {
        int e = cu->pos_dst[cu->extra];
        for (int i = 0; i < cu->nsrc; i++) {
            cu->list[i] = &cu->held[(size_t)i * cu->ndst + e];
            cu->final[i] = 1;
            cu->forwarded += cu->src[i] != cu->rank ? cu->list[i]->n : 0;
        }
        if ((err = send_step(cu, cu->extra, cu->dim + 1, (size_t)cu->nsrc)) != UTIL_OK) {
            return err;
        }
    }
    for (int i = 0; i < cu->nsrc; i++) {
        cu->mine[cu->src[i]] = cu->held[(size_t)i * cu->ndst + me];
    }
    cu->io.stats->rounds = (uint64_t)cu->dim + (cu->extra >= 0 ? 2 : 0);
    return place(cu);
}

static int hypercube_run(const struct exchange_args *a)
{
    struct cube cu;
    double t0 = util_now();
    int err;
    memset(&cu, 0, sizeof(cu));
    memset(a->stats, 0, sizeof(*a->stats));
    cu.a = a;
    MPI_Comm_rank(a->comm, &cu.rank);
    MPI_Comm_size(a->comm, &cu.size);
    if ((err = exchange_check_args(a, cu.rank)) != UTIL_OK) {
        return err;
    }
    cu.dim = topo_cube_dim(cu.size);
    cu.q = 1 << cu.dim;
    cu.node = topo_cube_node(cu.rank, cu.q);
    cu.extra = cu.rank < cu.q && cu.rank + cu.q < cu.size ? cu.rank + cu.q : -1;
    exchange_bundle_init(&cu.io, a->comm, a->threads, a->elem_size, a->stats);

    /* Held pieces never exceed (2 * 2^k sources) x (2 * Q / 2^k destinations) = 4Q <= 4P. */
    size_t p = (size_t)cu.size, steps = (size_t)cu.dim + 2;
    cu.held_cap = 4 * p;
    int *sets = util_malloc(6 * p * sizeof(int));
    struct bundle_piece *pieces = util_calloc(2 * p + 2 * cu.held_cap, sizeof(*pieces));
    cu.list = util_malloc(cu.held_cap * sizeof(*cu.list));
    cu.final = util_malloc(cu.held_cap);
    struct bundle_scratch *scratch = util_calloc(3 * steps, sizeof(*scratch));
    if (sets == NULL || pieces == NULL || cu.list == NULL || cu.final == NULL || scratch == NULL) {
        exchange_abort_midway(a->comm, cu.rank, "out of memory for bookkeeping");
    }
    cu.src = sets;
    cu.dst = sets + p;
    cu.next_src = sets + 2 * p;
    cu.next_dst = sets + 3 * p;
    cu.pos_src = sets + 4 * p;
    cu.pos_dst = sets + 5 * p;
    cu.out = pieces;
    cu.mine = pieces + p;
    cu.held = pieces + 2 * p;
    cu.next_held = cu.held + cu.held_cap;
    cu.stage = scratch;
    cu.land = scratch + steps;
    cu.hop = scratch + 2 * steps;
    for (size_t i = 0; i < 3 * steps; i++) {
        scratch[i].owner = &exchange_hypercube;
    }
    for (uint64_t d = 0, off = 0; d < p; off += a->send_counts[d] * a->elem_size, d++) {
        cu.out[d].data = (const char *)a->send + off;
        cu.out[d].n = a->send_counts[d];
    }

    err = cu.rank >= cu.q ? run_extra(&cu) : run_node(&cu);
    if (err == UTIL_OK) {
        err = exchange_bundle_wait(&cu.io);
    }
    err = err == UTIL_OK ? cu.refused : err;
    if (err == UTIL_OK) {
        exchange_stats_extra(a->stats, "cube_dim", cu.dim);
        exchange_stats_extra(a->stats, "folded_ranks", cu.size - cu.q);
        exchange_stats_extra(a->stats, "header_bytes", (double)cu.io.header_bytes);
        exchange_stats_extra(a->stats, "forwarded_bytes", (double)(cu.forwarded * a->elem_size));
        exchange_stats_extra(a->stats, "scattered_bundles", (double)cu.io.scattered);
    }
    a->stats->seconds = util_now() - t0;
    exchange_bundle_free(&cu.io);
    for (size_t i = 0; scratch != NULL && i < 3 * steps; i++) {
        exchange_bundle_release(&scratch[i]); /* kept for the next exchange */
    }
    exchange_arena_end(&exchange_hypercube);
    util_free(scratch);
    util_free(sets);
    util_free(pieces);
    util_free(cu.list);
    util_free(cu.final);
    util_free(cu.drain);
    return err;
}

/* ---- the model ------------------------------------------------------------------------------ */

/*
 * Hypercube (exchange/topo.h): Q = the largest power of two <= P; rank e >= Q is folded into
 * node e - Q: it hands that node its whole send buffer first (its own piece included) and gets
 * its pieces back last. Before cube round k, node x holds the pieces (s, d) whose source node
 * agrees with x on the bits >= k and whose destination node agrees with x on the bits < k; it
 * sends x ^ 2^k, as one bundle, those whose destination node differs from x in bit k. So a
 * piece is held by x = (node(s) & ~mask) | (node(d) & mask) and moves in round k iff node(s)
 * and node(d) differ in bit k: one pass over the P^2 pieces per round.
 */
static int model_hypercube(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    int p = c->p, dim = topo_cube_dim(p), q = 1 << dim;
    size_t n = (size_t)p;
    struct exchange_model_rounds w;
    int err = exchange_model_rounds_init(&w, c, r);
    struct exchange_bundle_cost *acc = util_calloc((size_t)q, sizeof(*acc));
    if (err != UTIL_OK || acc == NULL) {
        err = err != UTIL_OK ? err : util_fail(UTIL_ENOMEM, "out of memory (hypercube model)");
        goto fail;
    }
    /* Fold: every extra rank hands its node its whole row. */
    if (p > q) {
        for (int e = q; e < p; e++) {
            for (size_t d = 0; d < n; d++) {
                exchange_bundle_cost_add(&acc[0], c->bytes[(size_t)e * n + d], w.eager);
            }
            exchange_bundle_cost_send(&w, e, e - q, &acc[0]);
        }
        exchange_model_rounds_close(&w);
    }
    /* The cube rounds. */
    for (int k = 0; k < dim; k++) {
        int bit = 1 << k, mask = bit - 1;
        for (size_t s = 0; s < n; s++) {
            int a = topo_cube_node((int)s, q);
            for (size_t d = 0; d < n; d++) {
                int b = topo_cube_node((int)d, q);
                if (((a ^ b) & bit) != 0) {
                    exchange_bundle_cost_add(&acc[(a & ~mask) | (b & mask)], c->bytes[s * n + d],
                                             w.eager);
                }
            }
        }
        for (int x = 0; x < q; x++) {
            /* Every node sends, an empty bundle too. */
            exchange_bundle_cost_send(&w, x, x ^ bit, &acc[x]);
        }
        exchange_model_rounds_close(&w);
    }
    /* Unfold: every node hands its extra rank the pieces for it, from every source. */
    if (p > q) {
        for (int e = q; e < p; e++) {
            for (size_t s = 0; s < n; s++) {
                exchange_bundle_cost_add(&acc[0], c->bytes[s * n + (size_t)e], w.eager);
            }
            exchange_bundle_cost_send(&w, e - q, e, &acc[0]);
        }
        exchange_model_rounds_close(&w);
    }
    exchange_model_detail(r, "cube_dim=%d", dim);
    exchange_model_detail(r, "folded=%d", p - q);
    exchange_model_detail_volume(r, c);
fail:
    exchange_model_rounds_end(&w, err);
    util_free(acc);
    return err;
}

/* Equal blocks on a power of two: in each of the log2 P rounds every node sends its partner
 * one bundle of the P/2 pieces bound across that dimension. Folded cubes are left to the walk. */
static int equal_hypercube(const struct exchange_model_equal *e, struct exchange_model_result *r)
{
    int dim = topo_cube_dim(e->p);
    if ((1 << dim) != e->p) {
        return UTIL_EUSAGE;
    }
    uint64_t msgs, bytes, largest, rndv;
    exchange_bundle_cost_equal((uint64_t)e->p / 2, e->block, e->elem_bytes,
                               exchange_model_equal_eager(e), &msgs, &bytes, &largest, &rndv);
    if (dim > 0) {
        exchange_model_equal_rounds_rndv(e, (uint64_t)dim, msgs, rndv, bytes, largest, r);
    }
    /* Packed bundles are copied in by their sender and out by their receiver. */
    uint64_t payload = (uint64_t)e->p / 2 * e->block;
    int packs = exchange_bundle_packs(payload, util_knob_u64(UTIL_KNOB_SCATTER_MIN));
    exchange_model_equal_extras(e, 0, 0, 0, packs ? 2 * (uint64_t)dim * payload : 0, r);
    exchange_model_detail(r, "cube_dim=%d", dim);
    return UTIL_OK;
}

static const struct exchange_model model_hypercube_rounds = {
    .name = "hypercube",
    .summary = "log2 P combining rounds (non-powers of two folded): volume ~ (n/2) log2 P",
    .duplex = "full",
    .run = model_hypercube,
    .equal = equal_hypercube,
};

static const struct exchange_model *const hypercube_models[] = {&model_hypercube_rounds, NULL};

const struct exchange_ops exchange_hypercube = {
    .name = "hypercube",
    .summary = "log2 P rounds across cube dimensions, bundles with count headers (+2 folding "
               "rounds for P not a power of two)",
    .run = hypercube_run,
    .models = hypercube_models,
};

/*
 * exchange/hypercube.c: all-to-all in log2 P combining rounds across the dimensions of a
 * hypercube.
 *
 * Scheme (seed 001's combining model: packets travelling the same way are bundled and sent
 * with one start-up, the bundle shrinking as packets are delivered; applied here to the
 * personalized all-to-all): Q = the largest power of two <= P, dim = log2 Q. Before round k,
 * cube node x holds the pieces (s, d) whose source node agrees with x on the bits >= k and whose
 * destination node agrees with x on the bits < k; in round k it swaps with x ^ 2^k every piece
 * whose destination lies across dimension k, as one bundle (exchange/bundle.h: the per-(source,
 * destination) counts, then the pieces in that order). After dim rounds every node holds
 * exactly the pieces for itself, from every source, and lays them out by source.
 *
 * Non-power-of-two P: the P - Q ranks e >= Q are folded into node e - Q (exchange/topo.h).
 * Such a rank sends its whole send buffer to its node in an extra first round and receives its
 * own pieces back from it in an extra last round; the node carries both ranks' pieces through
 * the cube. So P = 2^dim takes dim rounds and any other P takes dim + 2 (= ceil(log2 P) + 1),
 * and the folded-into nodes carry up to twice the data. Ranks outside the fold idle then.
 *
 * Cost per cube rank: dim start-ups instead of P - 1, but about half of everything held moves
 * in every round, so each key travels about (log2 P) / 2 times: volume ~ (n/2) log2 P in all
 * against n for a direct exchange, plus count headers of about P words per bundle and local
 * copies to pack bundles and place the result. The back-end for small pieces; it loses
 * bandwidth at large ones. Scratch: one pack buffer reused every round and one receive buffer
 * per round (pieces stay where they arrived until forwarded or placed).
 */
#include "exchange/exchange.h"

#include <string.h>

#include "exchange/bundle.h"
#include "exchange/tags.h"
#include "exchange/topo.h"
#include "util/alloc.h"
#include "util/util.h"

/* Tags: the fold, then one per cube round, then the unfold (all within this back-end's block). */
#define TAG_FOLD (EXCHANGE_TAG_HYPERCUBE)
#define TAG_ROUND(k) (EXCHANGE_TAG_HYPERCUBE + 1 + (k))

/* One piece held by this rank: where its keys are and how many. */
struct piece {
    const uint64_t *keys;
    uint64_t n;
};

/* The state of one hypercube exchange on this rank. */
struct cube {
    const struct exchange_args *a;
    int rank, size, q, dim;
    int node;  /* this rank's cube node */
    int extra; /* the rank folded into this node, or -1 */
    uint64_t *sdispl;
    /* The pieces held: sources src[0..nsrc) x destinations dst[0..ndst), source-major. */
    int *src, *dst, nsrc, ndst;
    struct piece *held, *tables; /* tables: the block holding held and next_held */
    int *next_src, *next_dst, *in_src; /* the sets of the next round, and the partner's */
    struct piece *next_held;
    int *pos_src, *pos_dst; /* [P]: index of a rank in src / dst, -1 when absent */
    size_t held_cap;
    struct bundle_io io;
    struct bundle_scratch pack;
    struct bundle_scratch *in; /* one receive buffer per round, fold and unfold included */
    uint64_t header_bytes, forwarded_bytes;
};

/* Checks a received bundle against its header: h counts plus the keys they count. */
static int check_bundle(const struct cube *cu, const uint64_t *b, uint64_t h, uint64_t words,
                        int from)
{
    uint64_t sum = h;
    for (uint64_t i = 0; i < h && sum <= words; i++) {
        sum += b[i];
    }
    if (words < h || sum != words) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: malformed hypercube bundle from %d",
                         cu->rank, from);
    }
    return UTIL_OK;
}

/* Receives the next bundle from peer into the round buffer `slot`; stores its size. */
static int receive(struct cube *cu, int peer, int tag, int slot, uint64_t *words)
{
    int err = exchange_bundle_probe(&cu->io, peer, tag, words);
    if (err == UTIL_OK) {
        err = exchange_bundle_reserve(&cu->in[slot], *words, cu->rank);
    }
    if (err == UTIL_OK) {
        err = exchange_bundle_recv(&cu->io, cu->in[slot].keys);
    }
    return err;
}

/* Packs the pieces from src[] to the destinations selected by `want` into one bundle: the
 * counts, source-major, then the keys in the same order. Returns its size in words. */
static uint64_t pack(struct cube *cu, uint64_t *w, const unsigned char *want)
{
    uint64_t *start = w;
    for (int i = 0; i < cu->nsrc; i++) {
        for (int j = 0; j < cu->ndst; j++) {
            if (want[j]) {
                *w++ = cu->held[(size_t)i * cu->ndst + j].n;
            }
        }
    }
    cu->header_bytes += (uint64_t)(w - start) * sizeof(uint64_t);
    for (int i = 0; i < cu->nsrc; i++) {
        for (int j = 0; j < cu->ndst; j++) {
            const struct piece *pc = &cu->held[(size_t)i * cu->ndst + j];
            if (want[j]) {
                exchange_bundle_copy(w, pc->keys, pc->n, cu->a->threads);
                w += pc->n;
                cu->forwarded_bytes += cu->src[i] != cu->rank ? pc->n * sizeof(uint64_t) : 0;
            }
        }
    }
    return (uint64_t)(w - start);
}

/* The words a bundle of the pieces selected by `want` takes. */
static uint64_t bundle_words(const struct cube *cu, const unsigned char *want)
{
    uint64_t words = 0;
    for (int i = 0; i < cu->nsrc; i++) {
        for (int j = 0; j < cu->ndst; j++) {
            words += want[j] ? 1 + cu->held[(size_t)i * cu->ndst + j].n : 0;
        }
    }
    return words;
}

/* A folded rank: everything to its node first, its own pieces back from it last. */
static int run_extra(struct cube *cu)
{
    const struct exchange_args *a = cu->a;
    uint64_t sent = cu->sdispl[cu->size - 1] + a->send_counts[cu->size - 1], words;
    int err = exchange_bundle_reserve(&cu->pack, (uint64_t)cu->size + sent, cu->rank);
    if (err != UTIL_OK) {
        return err;
    }
    memcpy(cu->pack.keys, a->send_counts, (size_t)cu->size * sizeof(uint64_t));
    exchange_bundle_copy(cu->pack.keys + cu->size, a->send, sent, a->threads);
    cu->header_bytes += (uint64_t)cu->size * sizeof(uint64_t);
    if ((err = exchange_bundle_isend(&cu->io, cu->pack.keys, (uint64_t)cu->size + sent, cu->node,
                                     TAG_FOLD)) != UTIL_OK ||
        (err = receive(cu, cu->node, TAG_ROUND(cu->dim), 0, &words)) != UTIL_OK) {
        return err;
    }
    const uint64_t *b = cu->in[0].keys;
    if ((err = check_bundle(cu, b, (uint64_t)cu->size, words, cu->node)) != UTIL_OK) {
        return err;
    }
    uint64_t total = words - (uint64_t)cu->size;
    if (total > a->recv_cap) {
        return util_fail(UTIL_EUSAGE, "rank %d: exchange: receive buffer too small (%llu > %llu)",
                         cu->rank, (unsigned long long)total, (unsigned long long)a->recv_cap);
    }
    memcpy(a->recv_counts, b, (size_t)cu->size * sizeof(uint64_t));
    exchange_bundle_copy(a->recv, b + cu->size, total, a->threads);
    cu->io.stats->rounds = 2;
    return exchange_bundle_wait(&cu->io);
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
static int cube_round(struct cube *cu, int k, unsigned char *want)
{
    int peer = cu->node ^ (1 << k), err;
    uint64_t words;
    for (int j = 0; j < cu->ndst; j++) {
        want[j] = !topo_cube_holds_dst(cu->dst[j], cu->node, k + 1, cu->q);
    }
    if ((err = exchange_bundle_reserve(&cu->pack, bundle_words(cu, want), cu->rank)) != UTIL_OK) {
        return err;
    }
    words = pack(cu, cu->pack.keys, want);
    if ((err = exchange_bundle_isend(&cu->io, cu->pack.keys, words, peer, TAG_ROUND(k))) !=
            UTIL_OK ||
        (err = receive(cu, peer, TAG_ROUND(k), k + 1, &words)) != UTIL_OK) {
        return err;
    }

    /* The sets after the round, and the partner's sources (the received bundle's rows). */
    int nin = fill_set(cu->in_src, NULL, cu->size, peer, k, cu->q, 1);
    int nsrc = fill_set(cu->next_src, NULL, cu->size, cu->node, k + 1, cu->q, 1);
    int ndst = fill_set(cu->next_dst, NULL, cu->size, cu->node, k + 1, cu->q, 0);
    if ((size_t)nsrc * (size_t)ndst > cu->held_cap) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: hypercube piece table overflow", cu->rank);
    }
    const uint64_t *b = cu->in[k + 1].keys;
    uint64_t h = (uint64_t)nin * (uint64_t)ndst;
    if ((err = check_bundle(cu, b, h, words, peer)) != UTIL_OK) {
        return err;
    }

    /* Kept pieces stay where they are; received ones point into the round buffer. The
     * partner's sources are exactly the new sources this node did not hold, in ascending
     * order, so the r-th of them is the r-th row of the bundle and its keys come in order. */
    const uint64_t *keys = b + h;
    for (int i = 0, r = 0; i < nsrc; i++) {
        int s = cu->next_src[i];
        for (int j = 0; j < ndst; j++) {
            struct piece *pc = &cu->next_held[(size_t)i * ndst + j];
            if (cu->pos_src[s] >= 0) {
                *pc = cu->held[(size_t)cu->pos_src[s] * cu->ndst + cu->pos_dst[cu->next_dst[j]]];
            } else {
                pc->n = b[(size_t)r * ndst + j];
                pc->keys = keys;
                keys += pc->n;
            }
        }
        r += cu->pos_src[s] < 0;
    }

    struct piece *t = cu->held;
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
    return exchange_bundle_wait(&cu->io);
}

/* A cube node: fold in, dim rounds, fold out, then place its own pieces by source. */
static int run_node(struct cube *cu)
{
    const struct exchange_args *a = cu->a;
    int err;
    unsigned char *want = util_malloc((size_t)cu->size);
    if (want == NULL) {
        return util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory", cu->rank);
    }

    /* Start: this node's members as sources, every rank as destination. */
    cu->nsrc = fill_set(cu->src, cu->pos_src, cu->size, cu->node, 0, cu->q, 1);
    cu->ndst = fill_set(cu->dst, cu->pos_dst, cu->size, cu->node, 0, cu->q, 0);
    for (int i = 0; i < cu->nsrc; i++) {
        struct piece *row = cu->held + (size_t)i * cu->ndst;
        if (cu->src[i] == cu->rank) {
            for (int d = 0; d < cu->size; d++) {
                row[d].keys = a->send + cu->sdispl[d];
                row[d].n = a->send_counts[d];
            }
            continue;
        }
        /* The folded rank's whole send buffer: P counts, then its keys by destination. */
        uint64_t words;
        if ((err = receive(cu, cu->extra, TAG_FOLD, 0, &words)) != UTIL_OK) {
            goto done;
        }
        const uint64_t *b = cu->in[0].keys, *keys = b + cu->size;
        if ((err = check_bundle(cu, b, (uint64_t)cu->size, words, cu->extra)) != UTIL_OK) {
            goto done;
        }
        for (int d = 0; d < cu->size; d++) {
            row[d].keys = keys;
            row[d].n = b[d];
            keys += b[d];
        }
    }

    for (int k = 0; k < cu->dim; k++) {
        if ((err = cube_round(cu, k, want)) != UTIL_OK) {
            goto done;
        }
    }

    /* Now sources are every rank and destinations this node's members. */
    int me = cu->pos_dst[cu->rank];
    if (cu->extra >= 0) {
        for (int j = 0; j < cu->ndst; j++) {
            want[j] = cu->dst[j] == cu->extra;
        }
        if ((err = exchange_bundle_reserve(&cu->pack, bundle_words(cu, want), cu->rank)) !=
            UTIL_OK) {
            goto done;
        }
        uint64_t words = pack(cu, cu->pack.keys, want);
        err = exchange_bundle_isend(&cu->io, cu->pack.keys, words, cu->extra, TAG_ROUND(cu->dim));
        if (err != UTIL_OK) {
            goto done;
        }
    }
    uint64_t total = 0;
    for (int i = 0; i < cu->nsrc; i++) {
        a->recv_counts[cu->src[i]] = cu->held[(size_t)i * cu->ndst + me].n;
        total += a->recv_counts[cu->src[i]];
    }
    if (total > a->recv_cap) {
        err = util_fail(UTIL_EUSAGE, "rank %d: exchange: receive buffer too small (%llu > %llu)",
                        cu->rank, (unsigned long long)total, (unsigned long long)a->recv_cap);
        exchange_bundle_wait(&cu->io); /* the folded rank still gets its keys */
        goto done;
    }
    uint64_t *out = a->recv;
    for (int i = 0; i < cu->nsrc; i++) {
        const struct piece *pc = &cu->held[(size_t)i * cu->ndst + me];
        exchange_bundle_copy(out, pc->keys, pc->n, a->threads);
        out += pc->n;
    }
    cu->io.stats->rounds = (uint64_t)cu->dim + (cu->extra >= 0 ? 2 : 0);
    err = exchange_bundle_wait(&cu->io);
done:
    util_free(want);
    return err;
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
    cu.dim = topo_cube_dim(cu.size);
    cu.q = 1 << cu.dim;
    cu.node = topo_cube_node(cu.rank, cu.q);
    cu.extra = cu.rank < cu.q && cu.rank + cu.q < cu.size ? cu.rank + cu.q : -1;
    exchange_bundle_init(&cu.io, a->comm, a->stats);

    /* Held pieces never exceed (2 * 2^k sources) x (2 * Q / 2^k destinations) = 4Q <= 4P. */
    size_t p = (size_t)cu.size;
    cu.held_cap = 4 * p;
    cu.sdispl = util_malloc(p * sizeof(uint64_t));
    int *sets = util_malloc(7 * p * sizeof(int));
    cu.tables = util_malloc(2 * cu.held_cap * sizeof(struct piece));
    cu.in = util_calloc((size_t)cu.dim + 2, sizeof(struct bundle_scratch));
    if (cu.sdispl == NULL || sets == NULL || cu.tables == NULL || cu.in == NULL) {
        err = util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory", cu.rank);
        goto fail;
    }
    cu.src = sets;
    cu.dst = sets + p;
    cu.next_src = sets + 2 * p;
    cu.next_dst = sets + 3 * p;
    cu.in_src = sets + 4 * p;
    cu.pos_src = sets + 5 * p;
    cu.pos_dst = sets + 6 * p;
    cu.held = cu.tables;
    cu.next_held = cu.tables + cu.held_cap;
    exchange_displs(a->send_counts, cu.size, cu.sdispl);

    err = cu.rank >= cu.q ? run_extra(&cu) : run_node(&cu);
    if (err == UTIL_OK) {
        exchange_stats_extra(a->stats, "cube_dim", cu.dim);
        exchange_stats_extra(a->stats, "folded_ranks", cu.size - cu.q);
        exchange_stats_extra(a->stats, "header_bytes", (double)cu.header_bytes);
        exchange_stats_extra(a->stats, "forwarded_bytes", (double)cu.forwarded_bytes);
    }
fail:
    a->stats->seconds = util_now() - t0;
    exchange_bundle_free(&cu.io);
    exchange_bundle_release(&cu.pack);
    for (int i = 0; cu.in != NULL && i < cu.dim + 2; i++) {
        exchange_bundle_release(&cu.in[i]);
    }
    util_free(cu.in);
    util_free(cu.sdispl);
    util_free(sets);
    util_free(cu.tables);
    return err;
}

const struct exchange_ops exchange_hypercube = {
    .name = "hypercube",
    .summary = "log2 P rounds across cube dimensions, bundles with count headers (+2 folding "
               "rounds for P not a power of two)",
    .run = hypercube_run,
};

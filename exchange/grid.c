/*
 * exchange/grid.c: the two-level exchange over a rows x cols process grid (Birkeland and Sørevik).
 *
 * Scheme (Birkeland and Sørevik [BS07], sections 3.1 and 5: an all-to-all done as one all-to-all
 * per grid dimension, each within small groups): ranks fill a grid of about sqrt(P) x sqrt(P) row
 * by row (exchange/topo.h: cols = ceil(P / floor(sqrt P)), the last row possibly incomplete).
 *   Phase 1, within rows: every rank sends to each other rank of its row one bundle holding
 *     its pieces for all destinations in that rank's column.
 *   Phase 2, within columns: every rank forwards to each other rank of its column one bundle
 *     holding the pieces for it from all the sources it collected (its own row).
 * A bundle (exchange/bundle.h) is a header of per-(source, destination) counts plus the pieces
 * they count, sized by MPI_Mprobe: no per-key envelope and no separate count exchange. Small
 * bundles travel packed (one message per peer and phase); large ones scattered, each piece
 * straight from where it is to where it goes next, and pieces for their destination straight
 * into the result, so large exchanges copy almost nothing.
 *
 * Incomplete last row: a rank there reaches a column missing from its row through the rank of
 * that column in the row above (topo_grid_via), so every (source, destination) pair has
 * exactly one intermediate, every rank still sends cols - 1 phase-1 bundles, and the sources
 * arriving through one column peer form one contiguous range of ranks.
 *
 * Cost per rank: (cols - 1) + (rows - 1) ~ 2 (sqrt P - 1) start-ups instead of P - 1 (packed),
 * at the price of moving each element up to twice: volume about (2 - 1/cols - 1/rows) n/P against
 * (1 - 1/P) n/P for a direct exchange, plus a header of one 8-byte count per piece. Wins when
 * start-ups dominate (small pieces, many ranks); loses bandwidth at large pieces. Scratch: the
 * forwarded pieces of phase 1 and the staged headers and packed bundles.
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
extern const struct exchange_ops exchange_grid;

/* The two phases' tags (each phase takes BUNDLE_TAGS_PER_STEP). */
#define TAG_ROWS (EXCHANGE_TAG_GRID)
#define TAG_COLS (EXCHANGE_TAG_GRID + BUNDLE_TAGS_PER_STEP)

/* The state of one grid exchange on this rank. */
struct grid {
    const struct exchange_args *a;
    struct topo_grid g;
    int rank, row, col;
    int ncol;   /* ranks in this rank's column */
    int lo, hi; /* the sources routed through this rank */
    struct bundle_piece *out;  /* [P]: this rank's own pieces, by destination */
    struct bundle_piece *held; /* [(s - lo) * ncol + k]: from source s for the k-th column rank */
    struct bundle_piece *mine; /* [P]: the pieces for this rank, by source */
    struct bundle_piece **list; /* [P]: the pieces of one bundle */
    unsigned char *final;       /* [P]: which of them end at the receiver */
    struct bundle_io io;
    struct bundle_scratch stage1, stage2, land1, land2, hop;
    uint64_t forwarded; /* elements sent on in phase 2 that came from other ranks */
    void *drain;        /* the throw-away result of a refused (too small) receive buffer */
    int refused;        /* UTIL_EUSAGE when the receive buffer was too small */
};

/* Receives the first messages of the bundles from peers[0..n) (tag), one after the other, into
 * land; sizes[i] receives each one's size. */
static int land(struct grid *gr, const int *peers, int n, int tag, struct bundle_scratch *dst,
                uint64_t *sizes)
{
    uint64_t total = 0;
    int err;
    for (int i = 0; i < n; i++) {
        if ((err = exchange_bundle_probe(&gr->io, peers[i], tag, &sizes[i])) != UTIL_OK) {
            return err;
        }
        total += sizes[i];
    }
    if ((err = exchange_bundle_reserve(dst, total, &gr->io)) != UTIL_OK) {
        return err;
    }
    return exchange_bundle_recv(&gr->io, dst->buf);
}

/* Phase 1: to each row peer, the pieces for its column; from each, the pieces for ours. */
static int phase_rows(struct grid *gr, int *peers, uint64_t *sizes)
{
    const struct topo_grid *g = &gr->g;
    int c = g->cols, err;

    /* Stage and send one bundle per other column: one piece per rank of that column. */
    uint64_t need = 0;
    for (int pass = 0; pass < 2; pass++) {
        char *stage = gr->stage1.buf;
        for (int j = 0; j < c; j++) {
            int to = topo_grid_via(g, gr->rank, j), n = 0;
            if (j == gr->col) {
                continue;
            }
            for (int d = j; d < g->p; d += c, n++) {
                gr->list[n] = &gr->out[d];
                gr->final[n] = d == to;
            }
            if (pass == 0) {
                need += exchange_bundle_stage_bytes(&gr->io, gr->list, (size_t)n);
                continue;
            }
            err = exchange_bundle_send(&gr->io, to, TAG_ROWS, gr->list, gr->final, (size_t)n,
                                       stage);
            if (err != UTIL_OK) {
                return err;
            }
            stage += exchange_bundle_stage_bytes(&gr->io, gr->list, (size_t)n);
        }
        if (pass == 0 && (err = exchange_bundle_reserve(&gr->stage1, need, &gr->io)) != UTIL_OK) {
            return err;
        }
    }

    /* Receive from every other source routed through this rank, in source order. */
    int n = 0;
    for (int s = gr->lo; s < gr->hi; s++) {
        if (s != gr->rank) {
            peers[n++] = s;
        }
    }
    if ((err = land(gr, peers, n, TAG_ROWS, &gr->land1, sizes)) != UTIL_OK) {
        return err;
    }
    /* Open them: the piece for this rank itself is final, the others are forwarded. */
    for (int k = 0; k < gr->ncol; k++) {
        gr->final[k] = k == gr->row;
    }
    uint64_t hop = 0, off = 0;
    for (int i = 0; i < n; i++) {
        hop += exchange_bundle_hop_bytes(&gr->io, gr->land1.buf + off, sizes[i], (size_t)gr->ncol,
                                         gr->final);
        off += sizes[i];
    }
    if ((err = exchange_bundle_reserve(&gr->hop, hop, &gr->io)) != UTIL_OK) {
        return err;
    }
    char *next = gr->hop.buf;
    off = 0;
    for (int i = 0; i < n; i++) {
        struct bundle_piece *row = gr->held + (size_t)(peers[i] - gr->lo) * (size_t)gr->ncol;
        for (int k = 0; k < gr->ncol; k++) {
            gr->list[k] = &row[k];
        }
        err = exchange_bundle_open(&gr->io, gr->land1.buf + off, sizes[i], peers[i], TAG_ROWS,
                                   gr->list, gr->final, (size_t)gr->ncol, &next);
        if (err != UTIL_OK) {
            return err;
        }
        off += sizes[i];
    }
    /* This rank's own pieces for its column. */
    struct bundle_piece *own = gr->held + (size_t)(gr->rank - gr->lo) * (size_t)gr->ncol;
    for (int k = 0; k < gr->ncol; k++) {
        own[k] = gr->out[gr->col + k * c];
    }
    /* Forwarded pieces must be in before phase 2 sends them on. */
    return exchange_bundle_wait_recvs(&gr->io);
}

/* Phase 2: to each column peer, the pieces for it from our sources; then from each, ours. */
static int phase_cols(struct grid *gr, int *peers, uint64_t *sizes)
{
    int c = gr->g.cols, nsrc = gr->hi - gr->lo, err;

    for (int s = 0; s < nsrc; s++) {
        gr->final[s] = 1; /* phase 2 delivers */
    }
    uint64_t need = 0;
    for (int pass = 0; pass < 2; pass++) {
        char *stage = gr->stage2.buf;
        for (int k = 0; k < gr->ncol; k++) {
            if (k == gr->row) {
                continue;
            }
            for (int s = 0; s < nsrc; s++) {
                gr->list[s] = &gr->held[(size_t)s * gr->ncol + k];
                gr->forwarded += pass && gr->lo + s != gr->rank ? gr->list[s]->n : 0;
            }
            if (pass == 0) {
                need += exchange_bundle_stage_bytes(&gr->io, gr->list, (size_t)nsrc);
                continue;
            }
            err = exchange_bundle_send(&gr->io, gr->col + k * c, TAG_COLS, gr->list, gr->final,
                                       (size_t)nsrc, stage);
            if (err != UTIL_OK) {
                return err;
            }
            stage += exchange_bundle_stage_bytes(&gr->io, gr->list, (size_t)nsrc);
        }
        if (pass == 0 && (err = exchange_bundle_reserve(&gr->stage2, need, &gr->io)) != UTIL_OK) {
            return err;
        }
    }

    /* From every column peer in row order: the pieces of its range of sources, all final. */
    int n = 0;
    for (int k = 0; k < gr->ncol; k++) {
        if (k != gr->row) {
            peers[n++] = gr->col + k * c;
        }
    }
    if ((err = land(gr, peers, n, TAG_COLS, &gr->land2, sizes)) != UTIL_OK) {
        return err;
    }
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        int lo, hi;
        topo_grid_sources(&gr->g, peers[i], &lo, &hi);
        for (int s = lo; s < hi; s++) {
            gr->list[s - lo] = &gr->mine[s];
            gr->final[s - lo] = 1;
        }
        err = exchange_bundle_open(&gr->io, gr->land2.buf + off, sizes[i], peers[i], TAG_COLS,
                                   gr->list, gr->final, (size_t)(hi - lo), NULL);
        if (err != UTIL_OK) {
            return err;
        }
        off += sizes[i];
    }
    /* The sources routed through this rank delivered to it in phase 1. */
    for (int s = gr->lo; s < gr->hi; s++) {
        gr->mine[s] = gr->held[(size_t)(s - gr->lo) * gr->ncol + gr->row];
    }
    return UTIL_OK;
}

/* The result, by source: counts first, so that a too small buffer is refused before copying;
 * refused, the pieces still arrive (into gr->drain, thrown away) so that no sender waits. */
static int place(struct grid *gr, int size)
{
    const struct exchange_args *a = gr->a;
    uint64_t total = 0;
    for (int s = 0; s < size; s++) {
        a->recv_counts[s] = gr->mine[s].n;
        total += gr->mine[s].n;
    }
    char *dst = exchange_recv_target(a, total, gr->rank, &gr->drain, &gr->refused);
    if (dst == NULL) {
        return gr->refused;
    }
    return exchange_bundle_place(&gr->io, gr->mine, size, dst);
}

static int grid_run(const struct exchange_args *a)
{
    struct grid gr;
    double t0 = util_now();
    int size, err;
    memset(&gr, 0, sizeof(gr));
    memset(a->stats, 0, sizeof(*a->stats));
    gr.a = a;
    MPI_Comm_rank(a->comm, &gr.rank);
    MPI_Comm_size(a->comm, &size);
    if ((err = exchange_check_args(a, gr.rank)) != UTIL_OK) {
        return err;
    }
    gr.g = topo_grid_shape(size);
    gr.row = gr.rank / gr.g.cols;
    gr.col = gr.rank % gr.g.cols;
    gr.ncol = topo_grid_col_size(&gr.g, gr.col);
    topo_grid_sources(&gr.g, gr.rank, &gr.lo, &gr.hi);
    exchange_bundle_init(&gr.io, a->comm, a->threads, a->elem_size, a->stats);
    struct bundle_scratch *kept[] = {&gr.stage1, &gr.stage2, &gr.land1, &gr.land2, &gr.hop};
    for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++) {
        kept[i]->owner = &exchange_grid;
    }

    size_t p = (size_t)size;
    int *peers = util_malloc(p * sizeof(int));
    uint64_t *sizes = util_malloc(p * sizeof(uint64_t));
    gr.out = util_calloc(2 * p + (size_t)(gr.hi - gr.lo) * (size_t)gr.ncol,
                         sizeof(struct bundle_piece));
    gr.list = util_malloc(p * sizeof(struct bundle_piece *));
    gr.final = util_malloc(p);
    if (peers == NULL || sizes == NULL || gr.out == NULL || gr.list == NULL || gr.final == NULL) {
        exchange_abort_midway(a->comm, gr.rank, "out of memory for bookkeeping");
    }
    gr.mine = gr.out + p;
    gr.held = gr.mine + p;
    for (uint64_t d = 0, off = 0; d < p; off += a->send_counts[d] * a->elem_size, d++) {
        gr.out[d].data = (const char *)a->send + off;
        gr.out[d].n = a->send_counts[d];
    }

    if ((err = phase_rows(&gr, peers, sizes)) != UTIL_OK ||
        (err = phase_cols(&gr, peers, sizes)) != UTIL_OK || (err = place(&gr, size)) != UTIL_OK) {
        goto fail;
    }
    err = exchange_bundle_wait(&gr.io);
    err = err == UTIL_OK ? gr.refused : err;
    a->stats->rounds = (uint64_t)((gr.g.cols > 1) + (gr.g.rows > 1));
    exchange_stats_extra(a->stats, "grid_rows", gr.g.rows);
    exchange_stats_extra(a->stats, "grid_cols", gr.g.cols);
    exchange_stats_extra(a->stats, "header_bytes", (double)gr.io.header_bytes);
    exchange_stats_extra(a->stats, "forwarded_bytes", (double)(gr.forwarded * a->elem_size));
    exchange_stats_extra(a->stats, "scattered_bundles", (double)gr.io.scattered);
fail:
    a->stats->seconds = util_now() - t0;
    exchange_bundle_free(&gr.io);
    for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++) {
        exchange_bundle_release(kept[i]); /* kept for the next exchange */
    }
    exchange_arena_end(&exchange_grid);
    util_free(peers);
    util_free(sizes);
    util_free(gr.out);
    util_free(gr.list);
    util_free(gr.final);
    util_free(gr.drain);
    return err;
}

/* ---- the model ------------------------------------------------------------------------------ */

/*
 * One phase of the grid (exchange/topo.h: ranks fill a rows x cols grid row by row; the piece
 * s -> d goes first within s's row to via = the rank in d's column, or the one in the row above
 * when the last row lacks that column, then within that column to d). Every (a, b), a != b,
 * with pieces routed a -> b in this phase forms one bundle. The pieces are enumerated by an
 * outer rank o and an inner rank i (phase 1: o is the source and bundles go o -> via; phase 2:
 * o is the destination and bundles go via -> o), collected per peer in @acc with @touched.
 */
static void grid_phase(struct exchange_model_rounds *w, const struct topo_grid *g, int phase,
                       struct exchange_bundle_cost *acc, int *touched)
{
    int p = g->p;
    for (int o = 0; o < p; o++) {
        int nt = 0;
        for (int i = 0; i < p; i++) {
            int s = phase == 1 ? o : i, d = phase == 1 ? i : o;
            if (s == d) {
                continue; /* the own piece never leaves */
            }
            int peer = topo_grid_via(g, s, d); /* the intermediate: the bundle's other end */
            if ((phase == 1 && peer == s) || (phase == 2 && peer == d)) {
                continue; /* this phase keeps the piece where it is */
            }
            if (acc[peer].pieces == 0) {
                touched[nt++] = peer;
            }
            exchange_bundle_cost_add(&acc[peer], w->c->bytes[(size_t)s * p + d], w->eager);
        }
        for (int k = 0; k < nt; k++) {
            int peer = touched[k];
            exchange_bundle_cost_send(w, phase == 1 ? o : peer, phase == 1 ? peer : o, &acc[peer]);
        }
    }
}

/* Grid: phase 1 within rows, phase 2 within columns; each phase one bundle per peer, all
 * posted at once. */
static int model_grid(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    int p = c->p;
    struct topo_grid g = topo_grid_shape(p);
    struct exchange_model_rounds w;
    int err = exchange_model_rounds_init(&w, c, r);
    struct exchange_bundle_cost *acc = util_calloc((size_t)p, sizeof(*acc));
    int *touched = util_malloc((size_t)p * sizeof(int));
    if (err != UTIL_OK || acc == NULL || touched == NULL) {
        err = err != UTIL_OK ? err : util_fail(UTIL_ENOMEM, "out of memory (grid model)");
        goto fail;
    }
    for (int phase = 1; phase <= 2 && p > 1; phase++) {
        grid_phase(&w, &g, phase, acc, touched);
        exchange_model_rounds_close(&w);
    }
    exchange_model_detail(r, "grid=%dx%d", g.rows, g.cols);
    exchange_model_detail_volume(r, c);
fail:
    exchange_model_rounds_end(&w, err);
    util_free(acc);
    util_free(touched);
    return err;
}

/* Equal blocks on a full grid (rows x cols = P): in phase 1 every rank sends cols-1 bundles
 * of rows pieces along its row, in phase 2 rows-1 bundles of cols pieces along its column. A
 * grid with a short last row is left to the walk. */
static int equal_grid(const struct exchange_model_equal *e, struct exchange_model_result *r)
{
    struct topo_grid g = topo_grid_shape(e->p);
    if (g.last != g.cols) {
        return UTIL_EUSAGE;
    }
    uint64_t copy = 0;
    for (int phase = 1; phase <= 2 && e->p > 1; phase++) {
        uint64_t peers = (uint64_t)(phase == 1 ? g.cols : g.rows) - 1;
        uint64_t pieces = (uint64_t)(phase == 1 ? g.rows : g.cols), msgs, bytes, largest, rndv;
        exchange_bundle_cost_equal(pieces, e->block, e->elem_bytes, exchange_model_equal_eager(e),
                                   &msgs, &bytes, &largest, &rndv);
        if (peers > 0) {
            exchange_model_equal_rounds_rndv(e, 1, peers * msgs, peers * rndv, peers * bytes,
                                             largest, r);
        }
        /* Packed bundles are copied in by their sender and out by their receiver. */
        if (exchange_bundle_packs(pieces * e->block, util_knob_u64(UTIL_KNOB_SCATTER_MIN))) {
            copy += 2 * peers * pieces * e->block;
        }
    }
    exchange_model_equal_extras(e, 0, 0, 0, copy, r);
    exchange_model_detail(r, "grid=%dx%d", g.rows, g.cols);
    return UTIL_OK;
}

static const struct exchange_model model_grid_phases = {
    .name = "grid",
    .summary = "rows then columns of a sqrt(P) grid: ~2 (sqrt(P)-1) start-ups, data moved twice",
    .duplex = "full",
    .run = model_grid,
    .equal = equal_grid,
};

static const struct exchange_model *const grid_models[] = {&model_grid_phases, NULL};

const struct exchange_ops exchange_grid = {
    .name = "grid",
    .summary = "two phases over a sqrt(P) x sqrt(P) grid: rows, then columns (2 (sqrt P - 1) "
               "start-ups)",
    .run = grid_run,
    .models = grid_models,
};

/*
 * exchange/grid.c: the two-level exchange over a rows x cols process grid (seed 003).
 *
 * Scheme (seed 003, sections 3.1 and 5: an all-to-all done as one all-to-all per grid
 * dimension, each within small groups): ranks fill a grid of about sqrt(P) x sqrt(P) row by
 * row (exchange/topo.h: cols = ceil(P / floor(sqrt P)), the last row possibly incomplete).
 *   Phase 1, within rows: every rank sends to each other rank of its row one bundle holding
 *     its pieces for all destinations in that rank's column.
 *   Phase 2, within columns: every rank forwards to each other rank of its column one bundle
 *     holding the pieces for it from all the sources it collected (its own row).
 * A bundle is a header of per-(source, destination) counts followed by the pieces in header
 * order (exchange/bundle.h): one message per peer and phase, sized by MPI_Mprobe, with no
 * per-key envelope. Incomplete last row: a rank there reaches a column missing from its row
 * through the rank of that column in the row above (topo_grid_via), so every (source,
 * destination) pair has exactly one intermediate, every rank still sends cols - 1 phase-1
 * bundles, and the sources arriving through one column peer form one contiguous range of
 * ranks, which makes the final layout by source a sequence of block copies.
 *
 * Cost per rank: (cols - 1) + (rows - 1) ~ 2 (sqrt P - 1) start-ups instead of P - 1, at the
 * price of moving each key up to twice: volume about (1 - 1/cols + 1 - 1/rows) n/P, plus the
 * count headers (cols + rows words per bundle) and local copies to pack the bundles and place
 * the result. Wins when start-ups dominate (small pieces, many ranks); loses bandwidth at
 * large pieces. Scratch: one pack buffer reused by both phases and one receive buffer each.
 */
#include "exchange/exchange.h"

#include <string.h>

#include "exchange/bundle.h"
#include "exchange/tags.h"
#include "exchange/topo.h"
#include "util/alloc.h"
#include "util/util.h"

/* One piece held by this rank between the phases: where its keys are and how many. */
struct piece {
    const uint64_t *keys;
    uint64_t n;
};

/* The state of one grid exchange on this rank. */
struct grid {
    const struct exchange_args *a;
    struct topo_grid g;
    int rank, row, col;
    int ncol;       /* ranks in this rank's column */
    int lo, hi;     /* the sources routed through this rank */
    uint64_t *sdispl;
    struct piece *held; /* [(s - lo) * ncol + k]: from source s for the k-th rank of the column */
    struct bundle_io io;
    struct bundle_scratch pack, in1, in2;
    uint64_t *in2_start; /* [ncol + 1]: where the phase-2 bundle from each column peer begins */
    uint64_t header_bytes, forwarded_bytes;
};

/* Checks a received bundle: its header counts plus the header add up to its size. */
static int check_bundle(const struct grid *gr, const uint64_t *b, uint64_t h, uint64_t words,
                        int from)
{
    uint64_t sum = h;
    for (uint64_t i = 0; i < h && sum <= words; i++) {
        sum += b[i];
    }
    if (words < h || sum != words) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: malformed grid bundle from %d", gr->rank,
                         from);
    }
    return UTIL_OK;
}

/* Phase 1: to each row peer, the pieces for its column; from each, the pieces for ours. */
static int phase_rows(struct grid *gr)
{
    const struct exchange_args *a = gr->a;
    const struct topo_grid *g = &gr->g;
    int c = g->cols, err;

    /* Pack one bundle per other column: header (one count per rank of the column), keys. */
    uint64_t need = 0;
    for (int j = 0; j < c; j++) {
        for (int d = j; d < g->p && j != gr->col; d += c) {
            need += 1 + a->send_counts[d];
        }
    }
    if ((err = exchange_bundle_reserve(&gr->pack, need, gr->rank)) != UTIL_OK) {
        return err;
    }
    uint64_t *w = gr->pack.keys;
    for (int j = 0; j < c; j++) {
        if (j == gr->col) {
            continue;
        }
        uint64_t *start = w;
        for (int d = j; d < g->p; d += c) {
            *w++ = a->send_counts[d];
        }
        gr->header_bytes += (uint64_t)(w - start) * sizeof(uint64_t);
        for (int d = j; d < g->p; d += c) {
            exchange_bundle_copy(w, a->send + gr->sdispl[d], a->send_counts[d], a->threads);
            w += a->send_counts[d];
        }
        err = exchange_bundle_isend(&gr->io, start, (uint64_t)(w - start),
                                    topo_grid_via(g, gr->rank, j), EXCHANGE_TAG_GRID);
        if (err != UTIL_OK) {
            return err;
        }
    }

    /* Receive from every other source routed through this rank, in source order. */
    uint64_t total = 0, words;
    for (int s = gr->lo; s < gr->hi; s++) {
        if (s != gr->rank) {
            if ((err = exchange_bundle_probe(&gr->io, s, EXCHANGE_TAG_GRID, &words)) != UTIL_OK) {
                return err;
            }
            total += words;
        }
    }
    if ((err = exchange_bundle_reserve(&gr->in1, total, gr->rank)) != UTIL_OK ||
        (err = exchange_bundle_recv(&gr->io, gr->in1.keys)) != UTIL_OK) {
        return err;
    }

    /* Index the pieces now held: own ones in the send buffer, the others in the bundles. */
    const uint64_t *b = gr->in1.keys;
    for (int s = gr->lo; s < gr->hi; s++) {
        struct piece *row = gr->held + (size_t)(s - gr->lo) * (size_t)gr->ncol;
        if (s == gr->rank) {
            for (int k = 0; k < gr->ncol; k++) {
                int d = gr->col + k * c;
                row[k].keys = a->send + gr->sdispl[d];
                row[k].n = a->send_counts[d];
            }
            continue;
        }
        const uint64_t *keys = b + gr->ncol;
        for (int k = 0; k < gr->ncol; k++) {
            row[k].keys = keys;
            row[k].n = b[k];
            keys += b[k];
        }
        if ((err = check_bundle(gr, b, (uint64_t)gr->ncol, (uint64_t)(keys - b), s)) != UTIL_OK) {
            return err;
        }
        b = keys;
    }
    if (b != gr->in1.keys + total) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: grid phase 1 received %llu keys, not %llu",
                         gr->rank, (unsigned long long)(b - gr->in1.keys),
                         (unsigned long long)total);
    }
    return exchange_bundle_wait(&gr->io);
}

/* Phase 2: to each column peer, the pieces for it from our sources; then from each, ours. */
static int phase_cols(struct grid *gr)
{
    const struct exchange_args *a = gr->a;
    int c = gr->g.cols, nsrc = gr->hi - gr->lo, err;

    uint64_t need = 0;
    for (int k = 0; k < gr->ncol; k++) {
        for (int s = 0; s < nsrc && k != gr->row; s++) {
            need += 1 + gr->held[(size_t)s * gr->ncol + k].n;
        }
    }
    if ((err = exchange_bundle_reserve(&gr->pack, need, gr->rank)) != UTIL_OK) {
        return err;
    }
    uint64_t *w = gr->pack.keys;
    for (int k = 0; k < gr->ncol; k++) {
        if (k == gr->row) {
            continue;
        }
        uint64_t *start = w;
        for (int s = 0; s < nsrc; s++) {
            *w++ = gr->held[(size_t)s * gr->ncol + k].n;
        }
        gr->header_bytes += (uint64_t)nsrc * sizeof(uint64_t);
        for (int s = 0; s < nsrc; s++) {
            const struct piece *pc = &gr->held[(size_t)s * gr->ncol + k];
            exchange_bundle_copy(w, pc->keys, pc->n, a->threads);
            w += pc->n;
            gr->forwarded_bytes += gr->lo + s != gr->rank ? pc->n * sizeof(uint64_t) : 0;
        }
        err = exchange_bundle_isend(&gr->io, start, (uint64_t)(w - start), gr->col + k * c,
                                    EXCHANGE_TAG_GRID + 1);
        if (err != UTIL_OK) {
            return err;
        }
    }

    /* Receive from every column peer, in row order (which is source order). */
    uint64_t total = 0, words;
    for (int k = 0; k < gr->ncol; k++) {
        gr->in2_start[k] = total;
        if (k != gr->row) {
            err = exchange_bundle_probe(&gr->io, gr->col + k * c, EXCHANGE_TAG_GRID + 1, &words);
            if (err != UTIL_OK) {
                return err;
            }
            total += words;
        }
    }
    gr->in2_start[gr->ncol] = total;
    if ((err = exchange_bundle_reserve(&gr->in2, total, gr->rank)) != UTIL_OK ||
        (err = exchange_bundle_recv(&gr->io, gr->in2.keys)) != UTIL_OK) {
        return err;
    }
    return UTIL_OK;
}

/* The result: for each column peer in row order, its contiguous range of sources. */
static int place(struct grid *gr)
{
    const struct exchange_args *a = gr->a;
    int c = gr->g.cols, err;
    uint64_t total = 0;

    /* Counts first (from the headers), so that a too small buffer is refused before copying. */
    for (int k = 0; k < gr->ncol; k++) {
        int m = gr->col + k * c, lo, hi;
        topo_grid_sources(&gr->g, m, &lo, &hi);
        const uint64_t *b = gr->in2.keys + gr->in2_start[k];
        uint64_t sum = 0;
        for (int s = lo; s < hi; s++) {
            uint64_t n = k == gr->row ? gr->held[(size_t)(s - lo) * gr->ncol + k].n : b[s - lo];
            a->recv_counts[s] = n;
            sum += n;
        }
        if (k != gr->row) {
            uint64_t end = gr->in2_start[k + 1]; /* in2_start has ncol + 1 entries */
            err = check_bundle(gr, b, (uint64_t)(hi - lo), end - gr->in2_start[k], m);
            if (err != UTIL_OK) {
                return err;
            }
        }
        total += sum;
    }
    if (total > a->recv_cap) {
        return util_fail(UTIL_EUSAGE, "rank %d: exchange: receive buffer too small (%llu > %llu)",
                         gr->rank, (unsigned long long)total, (unsigned long long)a->recv_cap);
    }

    uint64_t *out = a->recv;
    for (int k = 0; k < gr->ncol; k++) {
        int m = gr->col + k * c, lo, hi;
        topo_grid_sources(&gr->g, m, &lo, &hi);
        if (k == gr->row) {
            for (int s = lo; s < hi; s++) {
                const struct piece *pc = &gr->held[(size_t)(s - lo) * gr->ncol + k];
                exchange_bundle_copy(out, pc->keys, pc->n, a->threads);
                out += pc->n;
            }
            continue;
        }
        /* A phase-2 bundle: header, then its sources' keys already in order. */
        const uint64_t *b = gr->in2.keys + gr->in2_start[k];
        uint64_t h = (uint64_t)(hi - lo), n = 0;
        for (int s = lo; s < hi; s++) {
            n += a->recv_counts[s];
        }
        exchange_bundle_copy(out, b + h, n, a->threads);
        out += n;
    }
    return UTIL_OK;
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
    gr.g = topo_grid_shape(size);
    gr.row = gr.rank / gr.g.cols;
    gr.col = gr.rank % gr.g.cols;
    gr.ncol = topo_grid_col_size(&gr.g, gr.col);
    topo_grid_sources(&gr.g, gr.rank, &gr.lo, &gr.hi);
    exchange_bundle_init(&gr.io, a->comm, a->stats);

    gr.sdispl = util_malloc((size_t)size * sizeof(uint64_t));
    gr.held = util_calloc((size_t)(gr.hi - gr.lo) * (size_t)gr.ncol, sizeof(struct piece));
    gr.in2_start = util_calloc((size_t)gr.ncol + 1, sizeof(uint64_t));
    if (gr.sdispl == NULL || gr.held == NULL || gr.in2_start == NULL) {
        err = util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory", gr.rank);
        goto fail;
    }
    exchange_displs(a->send_counts, size, gr.sdispl);

    if ((err = phase_rows(&gr)) != UTIL_OK || (err = phase_cols(&gr)) != UTIL_OK ||
        (err = place(&gr)) != UTIL_OK) {
        goto fail;
    }
    err = exchange_bundle_wait(&gr.io);
    a->stats->rounds = (uint64_t)((gr.g.cols > 1) + (gr.g.rows > 1));
    exchange_stats_extra(a->stats, "grid_rows", gr.g.rows);
    exchange_stats_extra(a->stats, "grid_cols", gr.g.cols);
    exchange_stats_extra(a->stats, "header_bytes", (double)gr.header_bytes);
    exchange_stats_extra(a->stats, "forwarded_bytes", (double)gr.forwarded_bytes);
fail:
    a->stats->seconds = util_now() - t0;
    exchange_bundle_free(&gr.io);
    exchange_bundle_release(&gr.pack);
    exchange_bundle_release(&gr.in1);
    exchange_bundle_release(&gr.in2);
    util_free(gr.sdispl);
    util_free(gr.held);
    util_free(gr.in2_start);
    return err;
}

const struct exchange_ops exchange_grid = {
    .name = "grid",
    .summary = "two phases over a sqrt(P) x sqrt(P) grid: rows, then columns (2 (sqrt P - 1) "
               "start-ups)",
    .run = grid_run,
};

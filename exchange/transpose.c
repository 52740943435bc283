/*
 * exchange/transpose.c: the two-round transpose with bounded bins.
 *
 * Scheme (Bader, Helman and JaJa, "Practical parallel algorithms for personalized communication
 * and integer sorting", ACM JEA 1996, Section 3, the h-relation; the general case of uneven
 * inputs is their Section 3.3): instead of one irregular all-to-all, two regular ones.
 *   0. Every rank all-gathers the send counts: each rank then knows the whole P x P count
 *      matrix, hence n_max (the most keys any rank sends), h (the most any rank receives), both
 *      block sizes, and the size of every piece it will send or receive.
 *   1. Deal: rank s deals its run of c keys for destination j into the P bins, starting at
 *      bin (s + j) mod P and going round: bin (s + j + t) mod P gets c/P keys, one more for
 *      t < c mod P (see "Dealing" below for which keys).
 *   2. Round 1: MPI_Alltoall with one fixed block, bin b to rank b.
 *   3. Regroup: rank b sorts what it got into P bins by final destination.
 *   4. Round 2: MPI_Alltoall with one fixed block, bin j to rank j.
 *   5. Unpack: rank j puts the keys into the contract's layout, grouped by source, each
 *      source's run in its original order.
 * Cost per rank: (n_max/P + P/2) P keys sent in round 1 plus (h/P + P/2) P in round 2, two
 * MPI_Alltoall start-ups, three linear local copies, and an all-gather of P^2 counts. The
 * count matrix replaces per-block count headers: each rank receives P^2 counts either way, and
 * with the whole matrix the round-2 headers, the all-reductions of n_max and h, and the round-1
 * padding of empty inputs all disappear. Volume: about twice the data, plus padding.
 *
 * Steps. On one node every byte of every copy goes through memory, and the plain scheme moves
 * each key five times (deal, round 1, regroup, round 2, unpack) against once for alltoallv.
 * So the exchange runs as a pipeline of steps: step k takes the k-th of `steps` consecutive
 * pieces of every run (s, j) and runs the five phases on them alone, with scratch of about
 * SORTEX_TRANSPOSE_STEP keys per rank that stays in cache; only the deal's reads and the unpack's
 * writes touch memory. Each step is an instance of the algorithm above for its own count
 * matrix, so its bins obey the bounds for its own n_max and h (at most 1/steps of the whole
 * ones plus P), and its unpack puts its pieces where they belong in the runs. Round 2 of step
 * k and round 1 of step k+1 travel in the same MPI_Alltoall (each block holds the two bins
 * side by side), so a step costs one synchronisation, still a regular fixed-block transpose.
 * The price per step: one MPI_Alltoall start-up and up to P(P-1) keys of padding per rank.
 * SORTEX_TRANSPOSE_STEP=KEYS sets the step size (a huge value gives the unpipelined scheme) in
 * 8-byte keys' worth of bytes: elements of R bytes take steps of KEYS x 8 / R of them (at least
 * one), so that a step's scratch is the same size, and stays in the cache, whatever the element.
 * The pipeline hands cache-resident blocks from rank to rank, so it is only as fast as moving a
 * cache line between the ranks' cores; on virtual machines that changes with where the host
 * puts the virtual CPUs, which shows as two modes of transpose's time in the benchmarks. Steps
 * of 64 Ki keys were measured fastest (16 Ki to 1 Mi tried).
 *
 * The bound (the paper's argument, made exact for integers; it uses only how many keys of
 * each run a bin gets). Rank s deals c_j keys for each destination j into P bins: every bin
 * gets q_j = floor(c_j / P) of them, and the r_j = c_j mod P bins starting at (s + j) mod P get
 * one extra. Take bin l with Q = sum q_j evenly placed keys and a extra ones. The runs of
 * extras start at distinct bins (s + j differs for every j), so the distances
 * d_j = (l - s - j) mod P of bin l from the starts of the runs that cover it are distinct, and
 * each such run has r_j >= d_j + 1. Hence the extras number R >= 1 + 2 + ... + a
 * = a(a+1)/2, and n = PQ + R gives: bin = Q + a <= (n - a(a+1)/2)/P + a. Over integers a the
 * right side peaks at a = P-1 (and a <= P-1, as r_j < P), so bin <= n/P + (P-1)/2, below the
 * paper's n/P + P/2. It is reached: n = PQ + P(P-1)/2 with runs of 1, 2, ..., P-1 extras ending
 * at bin l fills bin l to exactly n/P + (P-1)/2 (the unit test builds that case).
 * Round 2 is the same argument with the roles turned (the paper's "superbins"): bin j on rank b
 * holds sum over sources s of the keys s dealt to bin b for j; the sources start their runs for
 * j at distinct bins (s + j), and they deal at most h keys in total for j. So round-2 bins are
 * at most h/P + (P-1)/2. Both blocks are also capped by n_max and h themselves (a bin cannot
 * hold more than was dealt), which keeps tiny and empty inputs free of padding.
 *
 * Dealing. The paper deals key by key: key k of the run to bin (s + j + k) mod P. Here the
 * run is cut instead into P consecutive pieces, piece t (keys [t q + min(t, r), ...), q = c/P,
 * r = c mod P) to bin (s + j + t) mod P: every bin gets exactly as many keys of every run as
 * key-by-key dealing gives it (the unit test checks this), so the bounds, the block sizes, the
 * padding and the messages are the same; only the three local copies change, from stride-P
 * gathers and scatters to memcpy of whole pieces (measured 1.3-2x faster overall).
 *
 * Order (why unpacking restores every source's run). Piece t of source s's run for j stays
 * whole and in order all the way: round 1 moves it to rank b = (s + j + t) mod P, the regroup
 * copies it into b's bin j after the pieces of sources 0..s-1, round 2 moves it to rank j. The
 * unpack finds it in round-2 block b behind those same pieces and copies it to offset
 * t q + min(t, r) of s's run. As t runs over 0..P-1, b runs over every rank once, and the
 * pieces tile the run [0, c) exactly, each at its original place: the run arrives in send
 * order, so every source's block is what alltoallv delivers. In steps, step k's pieces of a
 * run are consecutive and follow step k-1's, and the unpack puts them at their offset.
 *
 * Elements of any size. Everything above counts elements (a "key" is one element of elem_size
 * bytes: an 8-byte key, a 100-byte record); the dealing cuts runs only between elements, the
 * three copies move whole elements (elem_size bytes each, memcpy at any alignment), and the
 * rounds move blocks of block * elem_size bytes (MPI_BYTE). No element is ever split.
 *
 * Messages beyond INT_MAX bytes: the steps are also what keeps every MPI count within
 * exchange_int_limit() bytes: they are made small enough that P blocks of a step, padding
 * included, fit the limit (for any limit of at least P(P+1)/2 + 1 elements, which INT_MAX bytes
 * is for 8-byte keys and any P below 23,000; below that, steps of one element exceed it).
 */
#include "exchange/transpose.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/arena.h"
#include "exchange/exchange.h"
#include "exchange/model.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

/* This back-end, defined at the end: its address names its kept scratch (exchange/arena.h). */
extern const struct exchange_ops exchange_transpose;

/* Below this many bytes a copy stays on one thread (64 Ki 8-byte keys). */
#define TRANSPOSE_PAR_BYTES ((uint64_t)8 << 16)
/* Elements per rank per step (see step_elems()): SORTEX_TRANSPOSE_STEP 8-byte keys' worth, 64 Ki
 * keys (512 KiB) by default, so that the three scratch buffers of every rank on a node stay in
 * the last-level cache. Measured on 2 cores with P = 2..8: 64 Ki keys beat 32 Ki (more
 * synchronisations) and 128 Ki to 256 Ki (more cache misses). */

/* ---- the pure part: bounds, steps, plan, copies ------------------------------------------- */

uint64_t exchange_transpose_bound(uint64_t n, int p)
{
    uint64_t pp = (uint64_t)p;
    /* floor(n/P + (P-1)/2) = floor((2n + P(P-1)) / 2P), computed without overflow. */
    uint64_t b = n / pp + (2 * (n % pp) + pp * (pp - 1)) / (2 * pp);
    return b < n ? b : n;
}

uint64_t exchange_transpose_steps(uint64_t n_max, uint64_t h, uint64_t step_keys)
{
    uint64_t m = n_max > h ? n_max : h;
    step_keys = step_keys > 0 ? step_keys : 1;
    return m / step_keys + (m % step_keys != 0);
}

void exchange_transpose_step(const uint64_t *matrix, int p, uint64_t k, uint64_t steps,
                             uint64_t *part, uint64_t *first)
{
    for (size_t i = 0; i < (size_t)p * (size_t)p; i++) {
        unsigned __int128 c = matrix[i];
        uint64_t lo = (uint64_t)(c * k / steps), hi = (uint64_t)(c * (k + 1) / steps);
        part[i] = hi - lo;
        if (first != NULL) {
            first[i] = lo;
        }
    }
}

void exchange_transpose_plan_free(struct exchange_transpose_plan *plan)
{
    util_free(plan->cur);
    util_free(plan->off);
    plan->cur = NULL;
    plan->off = NULL;
}

int exchange_transpose_plan_init(struct exchange_transpose_plan *plan, int p, int rank, size_t elem)
{
    memset(plan, 0, sizeof(*plan));
    plan->p = p;
    plan->rank = rank;
    plan->elem = elem > 0 ? elem : 1;
    plan->cur = util_malloc((size_t)p * sizeof(*plan->cur));
    plan->off = util_malloc(3 * (size_t)p * (size_t)p * sizeof(*plan->off));
    if (plan->cur == NULL || plan->off == NULL) {
        exchange_transpose_plan_free(plan);
        return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

void exchange_transpose_plan_set(struct exchange_transpose_plan *plan, const uint64_t *matrix)
{
    const uint64_t *c = matrix;
    int p = plan->p, rank = plan->rank;
    plan->matrix = matrix;
    plan->n = plan->n_max = plan->h = plan->max_bin1 = plan->max_bin2 = 0;

    /* n_max, h and n from the row and column sums. */
    for (int s = 0; s < p; s++) {
        uint64_t row = 0, col = 0;
        for (int j = 0; j < p; j++) {
            row += c[(size_t)s * p + j];
            col += c[(size_t)j * p + s];
        }
        plan->n += row;
        plan->n_max = row > plan->n_max ? row : plan->n_max;
        plan->h = col > plan->h ? col : plan->h;
    }
    plan->block1 = exchange_transpose_bound(plan->n_max, p);
    plan->block2 = exchange_transpose_bound(plan->h, p);

    /* This rank's bins: round 1 (rank deals into bin b), round 2 (rank holds bin j). */
    for (int x = 0; x < p; x++) {
        uint64_t bin1 = 0, bin2 = 0;
        for (int y = 0; y < p; y++) {
            bin1 += exchange_transpose_share(c[(size_t)rank * p + y], rank, y, x, p);
            bin2 += exchange_transpose_share(c[(size_t)y * p + x], y, x, rank, p);
        }
        plan->max_bin1 = bin1 > plan->max_bin1 ? bin1 : plan->max_bin1;
        plan->max_bin2 = bin2 > plan->max_bin2 ? bin2 : plan->max_bin2;
    }
    /* The theorem above; a failure here is a bug in the dealing, never an input problem. */
    assert(plan->max_bin1 <= plan->block1);
    assert(plan->max_bin2 <= plan->block2);

    /* Keys that cross between ranks: all of them, twice, less what each rank keeps for itself
     * (its own bin in round 1, its own bin in round 2). */
    uint64_t own = 0;
    for (int x = 0; x < p; x++) {
        for (int y = 0; y < p; y++) {
            own += exchange_transpose_share(c[(size_t)x * p + y], x, y, x, p);
            own += exchange_transpose_share(c[(size_t)y * p + x], y, x, x, p);
        }
    }
    plan->cross_keys = 2 * plan->n - own;
}

/* Where piece t of a run of c keys starts in the run: t full shares, plus one extra key for
 * each earlier piece that got one. */
static uint64_t piece_start(uint64_t c, int t, int p)
{
    uint64_t q = c / (uint64_t)p, r = c % (uint64_t)p, tt = (uint64_t)t;
    return tt * q + (tt < r ? tt : r);
}

/* Copies the p * p pieces of a deal or an unpack: dst + dst_off[i] <- src + src_off[i], len[i]
 * elements of @e bytes each (offsets in elements), threaded when there are enough bytes to
 * share. */
static void copy_pieces(char *dst, const uint64_t *dst_off, const char *src,
                        const uint64_t *src_off, const uint64_t *len, int p, uint64_t total,
                        size_t e, int threads)
{
    long pieces = (long)p * p;
#pragma omp parallel for num_threads(threads) if (threads > 1 && total * e >= TRANSPOSE_PAR_BYTES) \
    schedule(dynamic, 1)
    for (long i = 0; i < pieces; i++) {
        if (len[i] > 0) {
            util_copy(dst + dst_off[i] * e, src + src_off[i] * e, len[i] * e);
        }
    }
}

void exchange_transpose_deal(const struct exchange_transpose_plan *plan, const void *send,
                             const uint64_t *run, void *bins, uint64_t stride, int threads)
{
    int p = plan->p, s = plan->rank;
    const uint64_t *row = plan->matrix + (size_t)s * p;
    size_t pp = (size_t)p * (size_t)p;
    uint64_t *fill = plan->cur, *to = plan->off, *from = plan->off + pp, *len = from + pp;
    memset(fill, 0, (size_t)p * sizeof(*fill));
    /* Piece t of the run for j goes to bin (s + j + t) mod P, after what the bin already holds
     * for destinations 0..j-1. */
    uint64_t at = 0, total = 0;
    for (int j = 0; j < p; j++) {
        uint64_t c = row[j];
        uint64_t src = run != NULL ? run[j] : at;
        at += c;
        for (int t = 0; t < p; t++) {
            size_t i = (size_t)j * p + t;
            int b = (s + j + t) % p;
            len[i] = exchange_transpose_share(c, s, j, b, p);
            to[i] = (uint64_t)b * stride + fill[b];
            from[i] = src + piece_start(c, t, p);
            fill[b] += len[i];
            total += len[i];
        }
    }
    copy_pieces(bins, to, send, from, len, p, total, plan->elem, threads);
}

void exchange_transpose_regroup(const struct exchange_transpose_plan *plan, const void *in,
                                uint64_t in_stride, void *out, uint64_t out_stride, int threads)
{
    int p = plan->p, b = plan->rank;
    const uint64_t *c = plan->matrix;
    const size_t e = plan->elem;
    const char *src = in;
    /* off[s * p + j]: where source s's piece for destination j starts in round-1 block s. */
    for (int s = 0; s < p; s++) {
        uint64_t o = 0;
        for (int j = 0; j < p; j++) {
            plan->off[(size_t)s * p + j] = o;
            o += exchange_transpose_share(c[(size_t)s * p + j], s, j, b, p);
        }
    }
    /* Bin j gets the pieces for j of sources 0, 1, ..., P-1, back to back. */
#pragma omp parallel for num_threads(                                                              \
    threads) if (threads > 1 && plan->n * e >= TRANSPOSE_PAR_BYTES) schedule(dynamic, 1)
    for (int j = 0; j < p; j++) {
        char *dst = (char *)out + (uint64_t)j * out_stride * e;
        for (int s = 0; s < p; s++) {
            uint64_t len = exchange_transpose_share(c[(size_t)s * p + j], s, j, b, p);
            if (len > 0) {
                util_copy(dst, src + ((uint64_t)s * in_stride + plan->off[(size_t)s * p + j]) * e,
                          len * e);
            }
            dst += len * e;
        }
    }
}

void exchange_transpose_unpack(const struct exchange_transpose_plan *plan, const void *in,
                               uint64_t in_stride, void *recv, const uint64_t *run, int threads)
{
    int p = plan->p, j = plan->rank;
    const uint64_t *c = plan->matrix;
    size_t pp = (size_t)p * (size_t)p;
    uint64_t *used = plan->cur, *to = plan->off, *from = plan->off + pp, *len = from + pp;
    memset(used, 0, (size_t)p * sizeof(*used));
    /* Piece t of source s's run came through rank (s + j + t) mod P, whose block holds the
     * pieces of sources 0, 1, ... back to back; it goes back to its place in the run. */
    uint64_t at = 0, total = 0;
    for (int s = 0; s < p; s++) {
        uint64_t n = c[(size_t)s * p + j];
        uint64_t dst = run != NULL ? run[s] : at;
        at += n;
        for (int t = 0; t < p; t++) {
            size_t i = (size_t)s * p + t;
            int b = (s + j + t) % p;
            len[i] = exchange_transpose_share(n, s, j, b, p);
            from[i] = (uint64_t)b * in_stride + used[b];
            to[i] = dst + piece_start(n, t, p);
            used[b] += len[i];
            total += len[i];
        }
    }
    copy_pieces(recv, to, in, from, len, p, total, plan->elem, threads);
}

/* ---- the MPI part ---------------------------------------------------------------------------- */

/* Elements per rank per step: the agreed wish (@wanted 8-byte keys' worth of bytes, at least
 * one element of @e bytes), cut so that P blocks of a step, which hold at most step + P
 * elements dealt plus P(P-1)/2 of padding, fit the int limit of @limit bytes. */
static uint64_t step_elems(uint64_t wanted, uint64_t limit, size_t e, int p)
{
    uint64_t want =
        wanted <= UINT64_MAX / sizeof(uint64_t) ? wanted * sizeof(uint64_t) / e : UINT64_MAX / e;
    uint64_t pad = (uint64_t)p * ((uint64_t)p + 1) / 2, fit = limit / e;
    uint64_t room = fit > pad ? fit - pad : 1;
    want = want > 0 ? want : 1;
    return want < room ? want : room;
}

/* One round: block b of sbuf (block elements of e bytes each) goes to rank b, block s of rbuf
 * comes from s. */
static int transpose_round(const char *sbuf, char *rbuf, uint64_t block, size_t e, int rank,
                           MPI_Comm comm)
{
    int bytes = (int)(block * e);
    if (block > 0 &&
        MPI_Alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, comm) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Alltoall failed", rank);
    }
    return UTIL_OK;
}

/* What the steps add up to, for the stats. */
struct transpose_tally {
    uint64_t blocks;  /* sum over MPI_Alltoall calls of the block size */
    uint64_t calls;   /* MPI_Alltoall calls with a non-empty block */
    uint64_t biggest; /* largest block of a call */
    uint64_t cross;   /* keys that crossed between ranks, all ranks */
    uint64_t block1, block2, bin1, bin2, n_max, h; /* maxima over steps */
};

static void tally_step(struct transpose_tally *t, const struct exchange_transpose_plan *pl)
{
    t->cross += pl->cross_keys;
#define TALLY_MAX(field, value) t->field = (value) > t->field ? (value) : t->field
    TALLY_MAX(block1, pl->block1);
    TALLY_MAX(block2, pl->block2);
    TALLY_MAX(bin1, pl->max_bin1);
    TALLY_MAX(bin2, pl->max_bin2);
    TALLY_MAX(n_max, pl->n_max);
    TALLY_MAX(h, pl->h);
#undef TALLY_MAX
}

static void tally_call(struct transpose_tally *t, uint64_t block)
{
    t->blocks += block;
    t->calls += block > 0;
    t->biggest = block > t->biggest ? block : t->biggest;
}

/* Fills the stats: what crossed between ranks, padding included; elements of e bytes. */
static void transpose_stats(const struct transpose_tally *t, int p, uint64_t steps, size_t e,
                            struct exchange_stats *st)
{
    uint64_t peers = (uint64_t)p - 1;
    st->bytes_sent = peers * t->blocks * e;
    st->bytes_recv = st->bytes_sent;
    st->messages = peers * t->calls;
    st->rounds = t->calls;
    st->max_message = peers > 0 ? t->biggest * e : 0;
    /* The same figures on every rank except the two max bins (the stats take the max). */
    exchange_stats_extra(st, "round1_bound", (double)t->block1);
    exchange_stats_extra(st, "round1_max_bin", (double)t->bin1);
    exchange_stats_extra(st, "round2_bound", (double)t->block2);
    exchange_stats_extra(st, "round2_max_bin", (double)t->bin2);
    exchange_stats_extra(st, "padding_bytes",
                         (double)(((uint64_t)p * peers * t->blocks - t->cross) * e));
    exchange_stats_extra(st, "step_n_max", (double)t->n_max);
    exchange_stats_extra(st, "step_h", (double)t->h);
    exchange_stats_extra(st, "steps", (double)steps);
}

/* dst[0..n) = src[0..n), in bytes, with the given threads (the one-rank exchange). */
static void copy_bytes(char *dst, const char *src, uint64_t n, int threads)
{
    const uint64_t chunk = (uint64_t)8 << 18;
    uint64_t chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) if (threads > 1 && chunks > 1) schedule(static)
    for (uint64_t i = 0; i < chunks; i++) {
        uint64_t len = n - i * chunk < chunk ? n - i * chunk : chunk;
        util_copy(dst + i * chunk, src + i * chunk, len);
    }
}

/* Agrees on {ok, int limit, step size} over all ranks (the minimum of each), so that every rank
 * runs the same steps even if their environments differ. Returns 0 or UTIL_EMPI. */
static int agree(MPI_Comm comm, int rank, uint64_t v[3])
{
    if (MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UINT64_T, MPI_MIN, comm) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Allreduce failed", rank);
    }
    return UTIL_OK;
}

/* Gathers the count matrix and checks every rank's receive capacity against it, so that all
 * ranks stop together when one is too small. row: [p + 1] space for this rank's row; all:
 * [p * (p + 1)] for every rank's. */
static int gather_counts(const struct exchange_args *a, int p, int rank, uint64_t *row,
                         uint64_t *all, uint64_t *matrix)
{
    size_t row_len = (size_t)p + 1;
    memcpy(row, a->send_counts, (size_t)p * sizeof(uint64_t));
    row[p] = a->recv_cap;
    if (MPI_Allgather(row, (int)row_len, MPI_UINT64_T, all, (int)row_len, MPI_UINT64_T,
                      a->comm) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: exchange: MPI_Allgather of counts failed", rank);
    }
    for (int s = 0; s < p; s++) {
        memcpy(matrix + (size_t)s * p, all + (size_t)s * row_len, (size_t)p * sizeof(uint64_t));
    }
    int err = UTIL_OK;
    for (int j = 0; j < p; j++) {
        uint64_t total = 0;
        for (int s = 0; s < p; s++) {
            total += matrix[(size_t)s * p + j];
        }
        if (total > all[(size_t)j * row_len + (size_t)p]) {
            err = UTIL_EUSAGE;
            if (j == rank) {
                util_fail(UTIL_EUSAGE, "rank %d: exchange: receive buffer too small (%llu > %llu)",
                          rank, (unsigned long long)total, (unsigned long long)a->recv_cap);
            }
        }
    }
    return err;
}

/* The per-step state of transpose_run: a step's count matrix, where its pieces start in their
 * runs, and its plan. */
struct transpose_step {
    uint64_t *part, *first;
    struct exchange_transpose_plan plan;
};

/* Prepares step k of `steps` from the count matrix. */
static void step_set(struct transpose_step *st, const uint64_t *matrix, uint64_t k, uint64_t steps)
{
    exchange_transpose_step(matrix, st->plan.p, k, steps, st->part, st->first);
    exchange_transpose_plan_set(&st->plan, st->part);
}

/* The state of one transpose_run: its arguments, the two steps the pipeline alternates, the
 * small buffers, the scratch, and what the steps add up to. */
struct transpose_job {
    const struct exchange_args *a;
    int rank, p, threads;
    size_t e;
    struct transpose_step step[2];
    struct transpose_tally tally;
    uint64_t *all; /* every rank's row, then the other small buffers (transpose_open()) */
    uint64_t *matrix, *sdispl, *rdispl, *srun, *rrun, *row;
    uint64_t agreed[3]; /* {ok, int limit, step size}, agreed by the ranks */
    uint64_t steps;     /* steps of the pipeline, 0 for one rank */
    uint64_t buf;       /* elements of each of the three scratch buffers */
    char *scratch, *sbuf, *rbuf[2];
    size_t scratch_bytes;
    int fresh;          /* the scratch is new: its pages are not faulted in yet */
    uint64_t in_stride; /* stride of the blocks holding the current step's round 1 */
};

/* Set-up: allocates the small buffers and the two steps' plans, agrees with the other ranks on
 * success, the int limit and the step size, and lays the small buffers out. */
static int transpose_open(struct transpose_job *j)
{
    int p = j->p, rank = j->rank, err;
    /* Small buffers in one block: every rank's row (its counts, then its receive capacity); the
     * count matrix; two steps' matrices and the first key of each of their pieces; the send
     * and receive displacements; a step's run offsets on both sides; this rank's row. The ranks
     * agree on success and on the int limit and step size before the first collective that
     * needs them. */
    size_t pp = (size_t)p * (size_t)p;
    j->all =
        util_malloc(((size_t)p * ((size_t)p + 1) + 5 * pp + 5 * (size_t)p + 1) * sizeof(uint64_t));
    int ok = exchange_transpose_plan_init(&j->step[0].plan, p, rank, j->e) == UTIL_OK;
    ok = exchange_transpose_plan_init(&j->step[1].plan, p, rank, j->e) == UTIL_OK && ok &&
         j->all != NULL;
    j->agreed[0] = (uint64_t)ok;
    j->agreed[1] = exchange_int_limit();
    j->agreed[2] = util_knob_u64(UTIL_KNOB_TRANSPOSE_STEP);
    if ((err = agree(j->a->comm, rank, j->agreed)) != UTIL_OK) {
        return err;
    }
    if (!j->agreed[0]) {
        return ok ? UTIL_ENOMEM : util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory", rank);
    }
    j->matrix = j->all + (size_t)p * ((size_t)p + 1);
    j->step[0].part = j->matrix + pp;
    j->step[0].first = j->step[0].part + pp;
    j->step[1].part = j->step[0].first + pp;
    j->step[1].first = j->step[1].part + pp;
    j->sdispl = j->step[1].first + pp;
    j->rdispl = j->sdispl + p;
    j->srun = j->rdispl + p;
    j->rrun = j->srun + p;
    j->row = j->rrun + p;
    return UTIL_OK;
}

/* 0. The count matrix, and what every rank receives. */
static int transpose_counts(struct transpose_job *j)
{
    const struct exchange_args *a = j->a;
    int p = j->p, err;
    if ((err = gather_counts(a, p, j->rank, j->row, j->all, j->matrix)) != UTIL_OK) {
        return err;
    }
    for (int s = 0; s < p; s++) {
        a->recv_counts[s] = j->matrix[(size_t)s * p + j->rank];
    }
    exchange_displs(a->send_counts, p, j->sdispl);
    exchange_displs(a->recv_counts, p, j->rdispl);
    return UTIL_OK;
}

/* The steps, and scratch for them: three buffers (one to send, two to receive) of P blocks
 * of two bins each, in elements. A step's runs are at most a key longer than 1/steps of the
 * whole ones, so its rows and columns are at most P longer than 1/steps of n_max and h, and its
 * bins at most the bound of that. The ranks agree that every one got its scratch. */
static int transpose_scratch(struct transpose_job *j)
{
    int p = j->p, rank = j->rank, err;
    size_t e = j->e;
    struct exchange_transpose_plan *whole = &j->step[0].plan;
    exchange_transpose_plan_set(whole, j->matrix);
    uint64_t most = whole->n_max > whole->h ? whole->n_max : whole->h;
    j->steps = p > 1 ? exchange_transpose_steps(whole->n_max, whole->h,
                                                step_elems(j->agreed[2], j->agreed[1], e, p))
                     : 0;
    uint64_t step_most =
        j->steps > 0 && most / j->steps + (uint64_t)p < most ? most / j->steps + (uint64_t)p : most;
    j->buf = 2 * (uint64_t)p * exchange_transpose_bound(step_most, p);
    int ok = 1; /* the set-up's, which every rank agreed on */
    if (j->steps > 0) {
        j->scratch =
            exchange_arena_take(&exchange_transpose, 3 * j->buf * e, &j->scratch_bytes, &j->fresh);
        ok = j->scratch != NULL;
    }
    j->agreed[0] = (uint64_t)ok;
    if (p > 1 && (err = agree(j->a->comm, rank, j->agreed)) != UTIL_OK) {
        return err;
    }
    if (!j->agreed[0]) {
        return ok ? UTIL_ENOMEM
                  : util_fail(UTIL_ENOMEM,
                              "rank %d: exchange: out of memory for %llu scratch bytes", rank,
                              (unsigned long long)(3 * j->buf * e));
    }
    return UTIL_OK;
}

/* Faults new scratch and the receive buffer in, and places the send and receive buffers in the
 * scratch. */
static void transpose_pretouch(struct transpose_job *j)
{
    int p = j->p;
    size_t e = j->e;
    /* Fault new scratch and the receive buffer in here, all at once: single-copy transfers into
     * untouched pages fault them inside the kernel's copy (measured several times slower), and
     * faults taken during the unpacks hold up every step's synchronisation. Kept scratch
     * (exchange/arena.h) is faulted in already. */
    uint64_t received = j->rdispl[p - 1] + j->a->recv_counts[p - 1];
    util_pretouch(j->scratch, j->steps > 0 && j->fresh ? 3 * j->buf * e : 0, j->threads);
    util_pretouch(j->a->recv, j->steps > 0 ? received * e : 0, j->threads);
    j->sbuf = j->scratch;
    j->rbuf[0] = j->scratch + j->buf * e;
    j->rbuf[1] = j->scratch + 2 * j->buf * e;
}

/* Deals this rank's pieces of step @st into the send buffer, blocks of @stride elements: its
 * runs start at the step's first element of each of this rank's runs. */
static void pipeline_deal(struct transpose_job *j, const struct transpose_step *st, uint64_t stride)
{
    int p = j->p;
    for (int d = 0; d < p; d++) {
        j->srun[d] = j->sdispl[d] + st->first[(size_t)j->rank * p + d];
    }
    exchange_transpose_deal(&st->plan, j->a->send, j->srun, j->sbuf, stride, j->threads);
}

/* First round 1 of step 0 alone. */
static int pipeline_first(struct transpose_job *j)
{
    int err;
    step_set(&j->step[0], j->matrix, 0, j->steps);
    j->in_stride = j->step[0].plan.block1;
    pipeline_deal(j, &j->step[0], j->in_stride);
    if ((err = transpose_round(j->sbuf, j->rbuf[0], j->in_stride, j->e, j->rank, j->a->comm)) !=
        UTIL_OK) {
        return err;
    }
    tally_call(&j->tally, j->in_stride);
    return UTIL_OK;
}

/* Step k of the pipeline: regroups step k's round 1 behind the deal of step k+1, sends both in
 * one MPI_Alltoall, and unpacks step k's round 2 into the receive buffer. */
static int pipeline_step(struct transpose_job *j, uint64_t k)
{
    int p = j->p, rank = j->rank, err;
    size_t e = j->e;
    struct transpose_step *cur = &j->step[k % 2], *next = &j->step[(k + 1) % 2];
    char *in = j->rbuf[k % 2], *out = j->rbuf[(k + 1) % 2];
    /* The next step's deal goes first in every block, this step's regroup after it. */
    uint64_t b1 = 0;
    if (k + 1 < j->steps) {
        step_set(next, j->matrix, k + 1, j->steps);
        b1 = next->plan.block1;
    }
    uint64_t block = b1 + cur->plan.block2;
    assert(block * (uint64_t)p <= j->buf);
    exchange_transpose_regroup(&cur->plan, in, j->in_stride, j->sbuf + b1 * e, block, j->threads);
    if (k + 1 < j->steps) {
        pipeline_deal(j, next, block);
    }
    if ((err = transpose_round(j->sbuf, out, block, e, rank, j->a->comm)) != UTIL_OK) {
        return err;
    }
    tally_call(&j->tally, block);
    for (int s = 0; s < p; s++) {
        j->rrun[s] = j->rdispl[s] + cur->first[(size_t)s * p + rank];
    }
    exchange_transpose_unpack(&cur->plan, out + b1 * e, block, j->a->recv, j->rrun, j->threads);
    tally_step(&j->tally, &cur->plan);
    j->in_stride = block;
    return UTIL_OK;
}

/* Tear-down: keeps the scratch for the next exchange, frees the plans and the small buffers. */
static void transpose_close(struct transpose_job *j)
{
    exchange_arena_give(j->scratch, j->scratch_bytes); /* kept for the next exchange */
    exchange_arena_end(&exchange_transpose);
    exchange_transpose_plan_free(&j->step[0].plan);
    exchange_transpose_plan_free(&j->step[1].plan);
    util_free(j->all);
}

static int transpose_run(const struct exchange_args *a)
{
    double t0 = util_now();
    struct transpose_job j = {.a = a};
    MPI_Comm_rank(a->comm, &j.rank);
    MPI_Comm_size(a->comm, &j.p);
    struct exchange_stats *st = a->stats;
    memset(st, 0, sizeof(*st));
    int err = exchange_check_args(a, j.rank);
    if (err != UTIL_OK) {
        return err;
    }
    j.threads = a->threads > 0 ? a->threads : 1;
    j.e = a->elem_size;
    if ((err = transpose_open(&j)) != UTIL_OK || (err = transpose_counts(&j)) != UTIL_OK ||
        (err = transpose_scratch(&j)) != UTIL_OK) {
        goto fail;
    }
    if (j.p == 1) {
        /* One rank: the exchange is a copy. */
        copy_bytes(a->recv, a->send, a->send_counts[0] * j.e, j.threads);
    }
    transpose_pretouch(&j);

    /* The pipeline: one MPI_Alltoall per step carries round 2 of step k and round 1 of step
     * k+1 side by side (block r to rank r: bin r of step k+1's deal, then bin r of step k's
     * regroup), so the steps cost one synchronisation each. */
    if (j.steps > 0 && (err = pipeline_first(&j)) != UTIL_OK) {
        goto fail;
    }
    for (uint64_t k = 0; k < j.steps; k++) {
        if ((err = pipeline_step(&j, k)) != UTIL_OK) {
            goto fail;
        }
    }
    transpose_stats(&j.tally, j.p, j.steps, j.e, st);
fail:
    st->seconds = util_now() - t0;
    transpose_close(&j);
    return err;
}

/* ---- the model ------------------------------------------------------------------------------ */

/* Elements of a message of @b bytes (a byte matrix of whole elements divides exactly). */
static uint64_t elems(uint64_t b, uint64_t elem)
{
    return b / elem + (b % elem != 0);
}

/*
 * The largest bin of one dealing: the largest over bins b of the sum over k of
 * exchange_transpose_share() of run k (elements of @c[k * stride] bytes, k = 0..P-1), whose
 * dealing starts at bin (@s0 + k) mod P. Round 1 on rank s: the runs (s, k), s0 = s; round 2
 * for destination j: the runs (k, j), s0 = j. Every bin gets e / P of a run of e and the e mod P
 * bins from its start on one more; the extra ones are added with a difference array over the
 * bins, O(P) per dealing instead of the O(P^2) of summing the shares bin by bin.
 */
static uint64_t largest_bin(const uint64_t *c, size_t stride, int p, int s0, uint64_t elem,
                            int64_t *diff)
{
    uint64_t base = 0;
    memset(diff, 0, ((size_t)p + 1) * sizeof(*diff));
    for (int k = 0; k < p; k++) {
        uint64_t e = elems(c[(size_t)k * stride], elem);
        uint64_t extra = e % (uint64_t)p;
        int start = (s0 + k) % p, end = start + (int)extra;
        base += e / (uint64_t)p;
        if (extra == 0) {
            continue;
        }
        diff[start]++;
        if (end <= p) {
            diff[end]--;
        } else {
            diff[p]--; /* the run wraps round: [start, P) and [0, end - P) */
            diff[0]++;
            diff[end - p]--;
        }
    }
    int64_t run = 0, best = 0;
    for (int b = 0; b < p; b++) {
        run += diff[b];
        best = run > best ? run : best;
    }
    return base + (uint64_t)best;
}

/*
 * Transpose: round 1 sends bin b of every rank to rank b, round 2 bin j to rank j, both as
 * MPI_Alltoall with one block size (exchange_transpose_bound() of n_max and of h, the largest
 * row and column sums in elements, own block included). The largest bins actually dealt are
 * reported beside the blocks; they never exceed them. The closed form prices the two rounds
 * whole; the critical path follows the run: the all-gather of the counts and the two
 * agreements first, then the pipeline of steps (one MPI_Alltoall each, steps + 1 in all, the
 * same bytes as the two rounds but P - 1 start-ups and a synchronisation a step), and the three
 * local copies of every element: the deal reads the send buffer, the regroup moves round 1's
 * blocks, the unpack writes the receive buffer.
 */
static int model_transpose(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    int p = c->p;
    size_t n = (size_t)p;
    uint64_t e = c->elem_bytes, pp = (uint64_t)p;
    int64_t *diff = util_malloc((n + 1) * sizeof(*diff));
    uint64_t *rows = util_malloc(2 * n * sizeof(*rows));
    struct exchange_model_rounds w;
    int err = diff != NULL && rows != NULL ? exchange_model_rounds_init(&w, c, r) : UTIL_ENOMEM;
    if (err != UTIL_OK) {
        util_free(diff);
        util_free(rows);
        return err == UTIL_ENOMEM && (diff == NULL || rows == NULL)
                   ? util_fail(UTIL_ENOMEM, "out of memory (transpose model, P = %d)", p)
                   : err;
    }
    uint64_t *cols = rows + n;
    /* n_max, h and all elements, own blocks included (the back-end deals them too). */
    uint64_t n_max = 0, h = 0, all = 0, own = 0, bin1 = 0, bin2 = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t row = 0, col = 0;
        for (size_t j = 0; j < n; j++) {
            row += elems(c->bytes[i * n + j], e);
            col += elems(c->bytes[j * n + i], e);
            /* What stays home: run (i, j)'s share of bin i in round 1, and run (j, i)'s share
             * of bin i, which rank i keeps, in round 2. */
            own += exchange_transpose_share(elems(c->bytes[i * n + j], e), (int)i, (int)j, (int)i,
                                            p);
            own += exchange_transpose_share(elems(c->bytes[j * n + i], e), (int)j, (int)i, (int)i,
                                            p);
        }
        rows[i] = row;
        cols[i] = col;
        all += row;
        n_max = exchange_model_max(n_max, row);
        h = exchange_model_max(h, col);
        bin1 = exchange_model_max(bin1, largest_bin(c->bytes + i * n, 1, p, (int)i, e, diff));
        bin2 = exchange_model_max(bin2, largest_bin(c->bytes + i, n, p, (int)i, e, diff));
    }
    util_free(diff);
    uint64_t block1 = exchange_transpose_bound(n_max, p), block2 = exchange_transpose_bound(h, p);
    if (p > 1) {
        /* The all-gather of every rank's counts and capacity, and the two agreements. */
        exchange_model_rounds_collective(&w, (pp + 1) * sizeof(uint64_t));
        r->sync_rounds += 2;
        /* Two MPI_Alltoall rounds, P-1 blocks out and in per rank, padding included. */
        for (int k = 0; k < 2; k++) {
            uint64_t blk = (k == 0 ? block1 : block2) * e;
            for (int i = 0; i < p; i++) {
                for (int j = 0; j < p; j++) {
                    if (i != j) {
                        exchange_model_rounds_msg(&w, i, j, blk);
                    }
                }
            }
            exchange_model_rounds_close(&w);
        }
        /* The pipeline's further steps: P - 1 start-ups and a synchronisation each. */
        uint64_t steps = exchange_transpose_steps(
            n_max, h, step_elems(util_knob_u64(UTIL_KNOB_TRANSPOSE_STEP), exchange_int_limit(),
                                 (size_t)e, p));
        double per_step = w.shm ? fmax((double)(pp - 1), (double)(pp * (pp - 1)) / w.share)
                                : (double)(pp - 1);
        r->path_startups += steps > 1 ? (double)(steps - 1) * per_step : 0;
        r->sync_rounds += steps > 1 ? (double)(steps - 1) : 0;
        /* The three copies: the deal of the row, the regroup of round 1's blocks, the unpack
         * of the column (they replace the own block's copy). */
        for (size_t i = 0; i < n; i++) {
            w.copy[i] = (rows[i] + pp * block1 + cols[i]) * e;
        }
    }
    exchange_model_rounds_free(&w);
    util_free(rows);
    r->startups = p > 1 ? 2 * (pp - 1) : 0;
    uint64_t cross = 2 * all - own;
    exchange_model_detail(r, "bin1=%llu", (unsigned long long)bin1);
    exchange_model_detail(r, "block1=%llu", (unsigned long long)block1);
    exchange_model_detail(r, "bin2=%llu", (unsigned long long)bin2);
    exchange_model_detail(r, "block2=%llu", (unsigned long long)block2);
    exchange_model_detail(
        r, "padding_bytes=%llu",
        (unsigned long long)(r->bytes_moved > cross * e ? r->bytes_moved - cross * e : 0));
    return UTIL_OK;
}

/* Equal blocks: every row and column holds P blocks, so both rounds deal blocks of the bound
 * for n_max = h = P block / e elements. */
static int equal_transpose(const struct exchange_model_equal *e, struct exchange_model_result *r)
{
    uint64_t p = (uint64_t)e->p, el = e->elem_bytes ? e->elem_bytes : 1;
    if (p > 1) {
        uint64_t n = p * (e->block / el), blk = exchange_transpose_bound(n, e->p) * el;
        exchange_model_equal_rounds(e, 2, p - 1, (p - 1) * blk, blk, r);
        /* As the walk: the counts' all-gather, two agreements, the pipeline's further steps
         * (start-ups and synchronisations alone), the three copies (the own block's counted by
         * the extras once). */
        uint64_t steps = exchange_transpose_steps(
            n, n, step_elems(util_knob_u64(UTIL_KNOB_TRANSPOSE_STEP), exchange_int_limit(),
                             (size_t)el, e->p));
        struct exchange_model_result x = {0};
        if (steps > 1) {
            exchange_model_equal_rounds(e, steps - 1, p - 1, 0, 0, &x);
        }
        r->path_startups += x.path_startups;
        r->sync_rounds += x.sync_rounds;
        exchange_model_equal_extras(e, 1, (p + 1) * sizeof(uint64_t), 2,
                                    2 * n * el + p * blk - e->block, r);
    }
    return UTIL_OK;
}

static const struct exchange_model model_transpose_rounds = {
    .name = "transpose",
    .summary = "two MPI_Alltoall rounds of blocks padded to n_max/P + P/2 and h/P + P/2",
    .duplex = "full",
    .run = model_transpose,
    .equal = equal_transpose,
};

static const struct exchange_model *const transpose_models[] = {&model_transpose_rounds, NULL};

const struct exchange_ops exchange_transpose = {
    .name = "transpose",
    .summary = "two regular MPI_Alltoall rounds with bins bounded by n/P + P/2 (Bader, Helman, "
               "JaJa)",
    .run = transpose_run,
    .models = transpose_models,
};

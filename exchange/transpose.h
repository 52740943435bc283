/*
 * exchange/transpose.h: the pure part of the transpose back-end (internal header).
 *
 * Everything here is local arithmetic and local copies, no MPI: the dealing rule, the bin
 * bounds, the split of an exchange into steps, and the three copies the back-end makes (deal,
 * regroup, unpack). exchange/transpose.c wraps them around two MPI_Alltoall rounds per step;
 * tests/unit/test_transpose.c runs them for all P ranks in one process, with memcpy standing in
 * for the rounds, to check the bounds and that every rank ends with exactly what alltoallv
 * would deliver.
 *
 * Notation: P ranks; C[s][j] (a "count matrix", row-major, C[s * P + j]) is the number of
 * elements rank s sends to rank j. Round 1 moves bin b of every rank to rank b (block size
 * block1); round 2 moves bin j of every rank to rank j (block size block2). Elements are the
 * plan's elem bytes each (an 8-byte key, a record); "key" below means one element. Counts,
 * offsets, strides and block sizes count elements; the copies move elem bytes per element and
 * never split one.
 */
#ifndef SORTEX_EXCHANGE_TRANSPOSE_H
#define SORTEX_EXCHANGE_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

/**
 * The dealing rule. Rank s deals its c keys for destination j over P bins starting at bin
 * (s + j) mod P: as the paper's key-by-key rule (key k into bin (s + j + k) mod P) would, but
 * in P consecutive pieces, piece t into bin (s + j + t) mod P. Returns how many of them land
 * in bin b: c / P, plus one when bin b is among the c mod P bins that get an extra key, which
 * are the bins (s + j), (s + j + 1), ... (mod P). Needs 0 <= s, j, b < p.
 */
static inline uint64_t exchange_transpose_share(uint64_t c, int s, int j, int b, int p)
{
    /* b - s - j lies in (-2P, P); t is b's position in the dealing order of this run. */
    int t = ((b - s - j) % p + p) % p;
    return c / (uint64_t)p + ((uint64_t)t < c % (uint64_t)p ? 1 : 0);
}

/**
 * The largest bin any dealing can produce when a rank deals n keys (over any split into
 * destinations) into p bins: floor(n/P + (P-1)/2), and never more than n. This is the paper's
 * n/P + P/2 bound made exact for integers (see the proof in transpose.c); it is reached.
 */
uint64_t exchange_transpose_bound(uint64_t n, int p);

/**
 * The number of steps an exchange is cut into so that no rank deals or receives more than
 * about @step_keys keys per step: ceil(max(n_max, h) / step_keys), 0 when there are no keys.
 * Every step then has at most step_keys + P keys on any rank (see exchange_transpose_step).
 */
uint64_t exchange_transpose_steps(uint64_t n_max, uint64_t h, uint64_t step_keys);

/**
 * Step @k of @steps: every run (s, j) of C is cut into @steps consecutive pieces as evenly as
 * possible; piece k holds keys [C[s][j] k / steps, C[s][j] (k+1) / steps) of the run. Writes
 * the piece lengths (a count matrix) to @part[p * p] and, when @first is not NULL, the index of
 * each piece's first key within its run to @first[p * p].
 */
void exchange_transpose_step(const uint64_t *matrix, int p, uint64_t k, uint64_t steps,
                             uint64_t *part, uint64_t *first);

/**
 * Everything one rank needs to run its three copies for one count matrix, computed from the
 * matrix alone (so every rank computes the same block sizes without communicating). Allocate
 * the workspace once with exchange_transpose_plan_init(), fill it for a matrix with
 * exchange_transpose_plan_set() (as often as needed), free it with
 * exchange_transpose_plan_free().
 */
struct exchange_transpose_plan {
    int p, rank;
    size_t elem;            /* bytes per element */
    const uint64_t *matrix; /* [p * p] count matrix, borrowed (not freed by the plan) */
    uint64_t n;             /* keys on all ranks */
    uint64_t n_max;         /* the most keys any rank sends (largest row sum) */
    uint64_t h;             /* the most keys any rank receives (largest column sum) */
    uint64_t block1;        /* round-1 block: exchange_transpose_bound(n_max, p) */
    uint64_t block2;        /* round-2 block: exchange_transpose_bound(h, p) */
    uint64_t max_bin1;      /* this rank's largest round-1 bin (<= block1) */
    uint64_t max_bin2;      /* this rank's largest round-2 bin (<= block2) */
    uint64_t cross_keys;    /* keys moved between different ranks, both rounds, all ranks */
    uint64_t *cur;          /* [p] workspace: one cursor per bin */
    uint64_t *off;          /* [3 * p * p] workspace: piece offsets and lengths */
};

/** Allocates the workspace of rank @rank's plan for elements of @elem bytes (>= 1). Returns 0
 * or UTIL_ENOMEM (no message). */
int exchange_transpose_plan_init(struct exchange_transpose_plan *plan, int p, int rank,
                                 size_t elem);
/** Computes the plan's figures for @matrix (borrowed: it must outlive the use of the plan). */
void exchange_transpose_plan_set(struct exchange_transpose_plan *plan, const uint64_t *matrix);
/** Frees the plan's workspace; a zeroed plan is fine. */
void exchange_transpose_plan_free(struct exchange_transpose_plan *plan);

/**
 * Copy 1, on rank s: deals the keys for every destination j (C[s][j] keys at send + @run[j],
 * or back to back from @send when @run is NULL) into p bins, bin b at bins + b * @stride
 * (stride >= block1). Bin b holds one consecutive piece of each destination's run, grouped by
 * destination.
 */
void exchange_transpose_deal(const struct exchange_transpose_plan *plan, const void *send,
                             const uint64_t *run, void *bins, uint64_t stride, int threads);

/**
 * Copy 2, on rank b: regroups what round 1 delivered (from rank s at in + s * @in_stride,
 * grouped by destination) into round-2 bins (bin j at out + j * @out_stride, stride >=
 * block2), grouped by source.
 */
void exchange_transpose_regroup(const struct exchange_transpose_plan *plan, const void *in,
                                uint64_t in_stride, void *out, uint64_t out_stride, int threads);

/**
 * Copy 3, on rank j: unpacks what round 2 delivered (from rank b at in + b * @in_stride,
 * grouped by source) into @recv: source s's C[s][j] keys at recv + @run[s] (back to back,
 * source 0 first, when @run is NULL), each in the order that source sent them: the layout
 * alltoallv delivers.
 */
void exchange_transpose_unpack(const struct exchange_transpose_plan *plan, const void *in,
                               uint64_t in_stride, void *recv, const uint64_t *run, int threads);

#endif

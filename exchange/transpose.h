/*
 * exchange/transpose.h: the pure part of the transpose back-end (internal header).
 *
 * Everything here is local arithmetic and local copies, no MPI: the dealing rule, the bin
 * bounds, and the three copies the back-end makes (deal, regroup, unpack). exchange/transpose.c
 * wraps them around two MPI_Alltoall rounds; tests/unit/test_transpose.c runs them for all P
 * ranks in one process, with memcpy standing in for the rounds, to check the bounds and that
 * every rank ends with exactly what alltoallv would deliver.
 *
 * Notation: P ranks; C[s][j] (the "count matrix", row-major, C[s * P + j]) is the number of keys
 * rank s sends to rank j. Round 1 moves bin b of every rank to rank b (block size block1);
 * round 2 moves bin j of every rank to rank j (block size block2).
 */
#ifndef SORTEX_EXCHANGE_TRANSPOSE_H
#define SORTEX_EXCHANGE_TRANSPOSE_H

#include <stdint.h>

/**
 * The dealing rule. Rank s deals its c keys for destination j round-robin over P bins, key k
 * (k = 0, 1, ..., c-1 in send order) into bin (s + j + k) mod P. Returns how many of them land
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
 * Everything one rank needs to run its three copies, computed from the count matrix alone (so
 * every rank computes the same block sizes without communicating). Build it with
 * exchange_transpose_plan_init(); free it with exchange_transpose_plan_free().
 */
struct exchange_transpose_plan {
    int p, rank;
    const uint64_t *matrix; /* [p * p] count matrix, borrowed (not freed by the plan) */
    uint64_t n;             /* keys on all ranks */
    uint64_t n_max;         /* the most keys any rank sends (largest row sum) */
    uint64_t h;             /* the most keys any rank receives (largest column sum) */
    uint64_t block1;        /* round-1 block: exchange_transpose_bound(n_max, p) */
    uint64_t block2;        /* round-2 block: exchange_transpose_bound(h, p) */
    uint64_t max_bin1;      /* this rank's largest round-1 bin (<= block1) */
    uint64_t max_bin2;      /* this rank's largest round-2 bin (<= block2) */
    uint64_t cross_keys;    /* keys moved between different ranks, both rounds, all ranks */
    uint64_t **ptr;         /* [p] workspace: one cursor per bin */
    uint64_t *off;          /* [p * p] workspace: segment offsets for the regroup */
};

/**
 * Builds the plan of rank @rank from the count matrix (borrowed: it must outlive the plan).
 * Returns 0 or UTIL_ENOMEM (without a message; the caller reports).
 */
int exchange_transpose_plan_init(struct exchange_transpose_plan *plan, const uint64_t *matrix,
                                 int p, int rank);
/** Frees the plan's workspace; a zeroed plan is fine. */
void exchange_transpose_plan_free(struct exchange_transpose_plan *plan);

/**
 * Copy 1, on rank s: deals @send (keys grouped by destination, C[s][j] for destination j) into
 * p bins, bin b at bins + b * block1. Inside bin b the keys are grouped by destination, and each
 * destination's keys keep their send order.
 */
void exchange_transpose_deal(const struct exchange_transpose_plan *plan, const uint64_t *send,
                             uint64_t *bins, int threads);

/**
 * Copy 2, on rank b: regroups what round 1 delivered (block s at in + s * block1, from rank s,
 * grouped by destination) into round-2 bins (bin j at out + j * block2), grouped by source.
 */
void exchange_transpose_regroup(const struct exchange_transpose_plan *plan, const uint64_t *in,
                                uint64_t *out, int threads);

/**
 * Copy 3, on rank j: unpacks what round 2 delivered (block b at in + b * block2, from rank b,
 * grouped by source) into @recv grouped by source, source 0 first, each source's keys in the
 * order that source sent them: the layout alltoallv delivers.
 */
void exchange_transpose_unpack(const struct exchange_transpose_plan *plan, const uint64_t *in,
                               uint64_t *recv, int threads);

#endif

/*
 * exchange/model.h: the pricing machinery the back-ends' cost models share (internal to
 * exchange/; the model contract itself is in exchange.h).
 *
 * Two ways to price a walk of messages:
 *   - rounds: the messages of a round are posted together; the round costs alpha times the
 *     busiest rank's start-ups plus beta times the largest volume one rank sends or receives in
 *     it, and every round waits for the previous one (result field seconds);
 *   - async: the same transfers without rounds; a transfer starts when both its ends are free,
 *     as point-to-point back-ends run (result field async_seconds).
 * Every round of a walk also adds to the critical path the case's machine prices (result fields
 * path_startups, path_rndv, path_bytes, copy_bytes, sync_rounds; predicted): the busiest rank's
 * start-ups and bytes (sends and receives combined by the duplex share), or, on one node, all
 * ranks' over the cores they share, or on a network a node's link; the local copies; the rounds
 * that synchronise the ranks (rounds a back-end posts at once count once). The equal-blocks
 * forms add the same figures from P alone. Pure C, no MPI.
 */
#ifndef SORTEX_EXCHANGE_MODEL_H
#define SORTEX_EXCHANGE_MODEL_H

#include <stdint.h>

#include "exchange/exchange.h"

/** Appends "key=value" to r->detail, ';' separated (dropped when the field is full). */
void exchange_model_detail(struct exchange_model_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The asynchronous refinement: each rank's finishing time so far (ready) and in the current
 * round (next). */
struct exchange_model_async {
    double *ready, *next; /* [p] each */
};

/** Round bookkeeping: per rank the bytes sent and received and the messages sent in the current
 * round, and the messages sent in all; and the same transfers priced asynchronously. */
struct exchange_model_rounds {
    const struct exchange_model_case *c;
    struct exchange_model_result *r;
    uint64_t *sent, *recv, *msgs, *total_msgs; /* [p] each */
    uint64_t *copy;                           /* [p]: bytes each rank copies locally, in all */
    uint64_t *rndv;                           /* [p]: the round's messages beyond eager_bytes */
    uint64_t eager;                           /* the machine's eager limit (0: none) */
    uint64_t *node_out, *node_in;             /* [nodes]: the round's bytes leaving, entering a
                                               * node (a network of several ranks a node) */
    struct exchange_model_async async;        /* the transfers priced asynchronously ... */
    int priced_async;                         /* ... when the model sets this to 1 */
    int units_only;   /* 1: the round counts on the critical path only, not in the closed form
                       * (the exchange of counts, the back-end's own agreements) */
    int posted;       /* 1: the back-end posts every round at once (exchange_post_all()), so its
                       * rounds synchronise the ranks once, not each */
    int posted_any;   /* a posted round had messages */
    /* The machine's sharing, from c->machine: */
    int shm;          /* one node: a round costs at least the node's work over its cores */
    int share;        /* cores the ranks of that node share: min(P, cores) */
    int per_node;     /* network: ranks a node (1: each rank its own link) */
    double duplex;    /* share of a rank's smaller direction added to its larger */
};

/** Starts a walk of @c into @r (r->steps counts packet steps from 0). Returns 0 or UTIL_ENOMEM
 * after one error line (then @w holds nothing to free). */
int exchange_model_rounds_init(struct exchange_model_rounds *w, const struct exchange_model_case *c,
                               struct exchange_model_result *r);
/**
 * Whether a back-end that may post all its rounds at once does (exchange_post_all()) for case
 * @c whose largest piece is @largest bytes: below EXCHANGE_POST_ALL_BELOW, or on a node of the
 * case's machine that has more ranks than cores.
 */
int exchange_model_posted(const struct exchange_model_case *c, uint64_t largest);

/** exchange_model_posted() for equal blocks of @e whose largest piece is @largest bytes. */
int exchange_model_equal_posted(const struct exchange_model_equal *e, uint64_t largest);

/** One message of @b bytes from @src to @dst in the current round. */
void exchange_model_rounds_msg(struct exchange_model_rounds *w, int src, int dst, uint64_t b);
/** @b bytes rank @rank copies locally (packing, unpacking, staging), outside the rounds. */
void exchange_model_rounds_copy(struct exchange_model_rounds *w, int rank, uint64_t b);
/**
 * A round every rank takes part in that the closed form leaves out (units only): each rank sends
 * every other @b bytes, as the MPI_Alltoall or MPI_Allgather of counts does; @b 0 is a
 * synchronisation alone (an all-reduce of a few words). Closes the round.
 */
void exchange_model_rounds_collective(struct exchange_model_rounds *w, uint64_t b);
/** Closes the current round: prices it (a round nobody sends in is skipped), resets it. */
void exchange_model_rounds_close(struct exchange_model_rounds *w);
/** Ends the walk: r->startups (the most messages any rank sent), r->async_seconds (when the
 * model priced its transfers in w->async: w->priced_async), r->copy_bytes (every rank's own
 * block and what exchange_model_rounds_copy() added, the busiest rank's or the node's over its
 * cores), and frees it. */
void exchange_model_rounds_free(struct exchange_model_rounds *w);
/** Frees the walk without a result (after a failure). */
void exchange_model_rounds_discard(struct exchange_model_rounds *w);
/** exchange_model_rounds_free() when @err is 0, else exchange_model_rounds_discard(). */
void exchange_model_rounds_end(struct exchange_model_rounds *w, int err);

/**
 * Equal blocks: @rounds rounds in each of which every rank sends @msgs messages of @bytes in all
 * (and receives as many), the largest @largest bytes: what exchange_model_rounds_close() charges
 * for them, added to @r, on the critical path too.
 */
void exchange_model_equal_rounds(const struct exchange_model_equal *e, uint64_t rounds,
                                 uint64_t msgs, uint64_t bytes, uint64_t largest,
                                 struct exchange_model_result *r);

/** exchange_model_equal_rounds() where @rndv of a rank's @msgs messages a round exceed the
 * machine's eager limit (there: all of them when @largest does, else none). */
void exchange_model_equal_rounds_rndv(const struct exchange_model_equal *e, uint64_t rounds,
                                      uint64_t msgs, uint64_t rndv, uint64_t bytes,
                                      uint64_t largest, struct exchange_model_result *r);

/** The machine's eager limit for @e (0: no machine). */
uint64_t exchange_model_equal_eager(const struct exchange_model_equal *e);

/** The critical path of @rounds equal rounds in which @active ranks each send @msgs messages
 * of @bytes in all (as many received), @rndv of them beyond the eager limit: added to @r's path_*,
 * sync_rounds, as exchange_model_rounds_close() counts them (a network node's link as if its
 * ranks' bytes spread evenly over the others). */
void exchange_model_equal_units(const struct exchange_model_equal *e, double rounds, double msgs,
                                double rndv, double bytes, double active,
                                struct exchange_model_result *r);

/** What the closed form of an equal-blocks exchange leaves out, on the critical path: the own
 * block's copy and @copy more bytes copied by every rank, @collectives rounds of counts
 * (@count_bytes from every rank to every other) and @syncs agreements, added to @r. */
void exchange_model_equal_extras(const struct exchange_model_equal *e, uint64_t collectives,
                                 uint64_t count_bytes, uint64_t syncs, uint64_t copy,
                                 struct exchange_model_result *r);

/** Adds "volume_factor=X" to r->detail: the bytes on links over what a direct exchange moves. */
void exchange_model_detail_volume(struct exchange_model_result *r,
                                  const struct exchange_model_case *c);

/** Returns 0 or UTIL_ENOMEM (no message). */
int exchange_model_async_init(struct exchange_model_async *a, int p);
/** A transfer between @x and @y taking @cost seconds in the current round. */
void exchange_model_async_xfer(struct exchange_model_async *a, int x, int y, double cost);
/** Ends a round for @x and @y (call for every transfer of the round, after them all). */
void exchange_model_async_commit(struct exchange_model_async *a, int x, int y);
/** The last rank's finishing time; frees the arrays. */
double exchange_model_async_done(struct exchange_model_async *a, int p);
/** Frees the arrays without a result (a zeroed struct is fine). */
void exchange_model_async_free(struct exchange_model_async *a);

/**
 * The shift rounds of Open MPI's pairwise alltoallv (@skip_empty 0: every message, empty ones
 * too) and of the shift back-end (@skip_empty 1: non-empty pieces only): in round k = 1..P-1
 * rank i sends to i + k and receives from i - k (exchange/topo.h). Defined in pairwise.c.
 */
int exchange_model_shift_rounds(const struct exchange_model_case *c,
                                struct exchange_model_result *r, int skip_empty);

/**
 * Every message posted at once, one round, after the counts' MPI_Alltoall unless the caller
 * knew them: MPI's linear alltoallv (@skip_empty 0: the empty messages posted too) and the
 * sparse back-end (@skip_empty 1: the non-empty pieces only, each transfer also priced when
 * both its ends are free). Defined in alltoallv.c.
 */
int exchange_model_at_once(const struct exchange_model_case *c, struct exchange_model_result *r,
                           int skip_empty);

/** exchange_model_shift_rounds() on equal blocks: P-1 rounds of one block (none when blocks are
 * empty and @skip_empty). Defined in pairwise.c. */
int exchange_model_shift_equal(const struct exchange_model_equal *e,
                               struct exchange_model_result *r, int skip_empty);

/** The larger of @a and @b. */
static inline uint64_t exchange_model_max(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

#endif

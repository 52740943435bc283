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
 * Pure C, no MPI.
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
    struct exchange_model_async async;        /* the transfers priced asynchronously ... */
    int priced_async;                         /* ... when the model sets this to 1 */
};

/** Starts a walk of @c into @r (r->steps counts packet steps from 0). Returns 0 or UTIL_ENOMEM
 * after one error line (then @w holds nothing to free). */
int exchange_model_rounds_init(struct exchange_model_rounds *w, const struct exchange_model_case *c,
                               struct exchange_model_result *r);
/** One message of @b bytes from @src to @dst in the current round. */
void exchange_model_rounds_msg(struct exchange_model_rounds *w, int src, int dst, uint64_t b);
/** Closes the current round: prices it (a round nobody sends in is skipped), resets it. */
void exchange_model_rounds_close(struct exchange_model_rounds *w);
/** Ends the walk: r->startups (the most messages any rank sent), r->async_seconds (when the
 * model priced its transfers in w->async: w->priced_async), and frees it. */
void exchange_model_rounds_free(struct exchange_model_rounds *w);
/** Frees the walk without a result (after a failure). */
void exchange_model_rounds_discard(struct exchange_model_rounds *w);
/** exchange_model_rounds_free() when @err is 0, else exchange_model_rounds_discard(). */
void exchange_model_rounds_end(struct exchange_model_rounds *w, int err);

/**
 * Equal blocks: @rounds rounds in each of which every rank sends @msgs messages of @bytes in all
 * (and receives as many), the largest @largest bytes: what exchange_model_rounds_close() charges
 * for them, added to @r.
 */
void exchange_model_equal_rounds(const struct exchange_model_equal *e, uint64_t rounds,
                                 uint64_t msgs, uint64_t bytes, uint64_t largest,
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

/*
 * sort/rules.h: the sort's count rules as pure functions (internal header of sort/).
 *
 * How many samples the sort draws and where, which sample becomes a splitter, where a splitter
 * cuts a rank's sorted keys, and the (key, position) order that breaks ties. The sample,
 * splitters and bucket phases are written with them, and the schedule simulator (sim/) calls
 * the same functions to model a sort's count matrix without MPI. They carry the module's prefix
 * but are not part of the installed interface (sort/sortex.h).
 */
#ifndef SORTEX_SORT_RULES_H
#define SORTEX_SORT_RULES_H

#include <stdint.h>

#include "sort/sortex.h"

/**
 * The default oversampling factor for P ranks and imbalance bound epsilon (> 0): the smallest
 * that guarantees it, ceil((P+1)/epsilon), and at least 256.
 */
uint64_t sortex_default_oversample(int p, double epsilon);

/** --balance auto takes the regular sample while it all-gathers at most this many bytes a
 * rank: below, one all-gather beats the histogram's rounds (measured 0.13 against 0.2 ms at
 * P = 2, 0.8 against 2.0 ms at P = 8 on 2^22 keys a rank); beyond, its P^2 growth loses. */
#define SORTEX_AUTO_SAMPLE_BYTES ((uint64_t)1 << 20)

/**
 * The selection a sort of @p ranks runs for the asked @balance: @balance itself, or for
 * SORTEX_BALANCE_AUTO the regular sample when its P S (key, position) pairs (S = @oversample,
 * or sortex_default_oversample(p, @epsilon) when 0) take at most SORTEX_AUTO_SAMPLE_BYTES, else
 * SORTEX_BALANCE_EPS.
 */
enum sortex_balance sortex_balance_resolve(enum sortex_balance balance, int p, double epsilon,
                                           uint64_t oversample);

/**
 * The total number of samples T = S P the sort draws with oversampling @oversample on @p ranks,
 * stored in *@total. Returns 0, or UTIL_EUSAGE (no message) when the sort refuses that many:
 * every rank rounds its share up, so the gathered sample holds up to T + P (key, position)
 * pairs, 2 (T + P) words, and MPI counts them in an int.
 */
int sortex_sample_total(uint64_t oversample, int p, uint64_t *total);

/**
 * Samples a rank holding @m of the @n keys draws from a total of @total: its proportional share
 * ceil(T m / n), at most m (0 when n = 0).
 */
uint64_t sortex_sample_count(uint64_t total, uint64_t m, uint64_t n);

/** Index in the rank's @m sorted keys of its sample @k of @s: floor((2k + 1) m / (2 s)), the
 * centre of the k-th of s equal gaps. Needs k < s <= m. */
uint64_t sortex_sample_index(uint64_t k, uint64_t s, uint64_t m);

/** Order of (key, position) pairs a and b: negative, 0 or positive, as for qsort(). */
int sortex_tuple_order(uint64_t akey, uint64_t apos, uint64_t bkey, uint64_t bpos);

/** Index in the sorted sample of @t > 0 pairs of splitter @j of @p (1 <= j < p): floor(j t / P). */
uint64_t sortex_splitter_index(int j, uint64_t t, int p);

/**
 * Keys of a rank below the splitter (@key, @pos) in (key, position) order: the rank holds @m
 * sorted keys at @keys whose first has global position @offset. Bucket j of the rank is the range
 * between the boundaries of splitters j - 1 and j. O(log m).
 */
uint64_t sortex_bucket_boundary(const uint64_t *keys, uint64_t m, uint64_t offset, uint64_t key,
                                uint64_t pos);

/*
 * Splitters by histogram (--balance eps and exact, sort/select.c): splitter j of P should have
 * a global rank (elements below it in (key, position) order) within a tolerance of its target.
 */

/** Candidates the histogram selection draws per unresolved splitter and round. */
#define SORTEX_SPLIT_SAMPLES 8

/** Candidates a round may draw in all before it stops short of SORTEX_SPLIT_SAMPLES each:
 * rounds cost latency, not volume, below this (a 16 KiB all-gather of tuples). */
#define SORTEX_SPLIT_BUDGET 1024

/** Candidates expected in a splitter's window when its bracket draws: the chance of none is
 * about e^-4 = 2%, so a round settles nearly every window it can reach. */
#define SORTEX_SPLIT_HITS 4

/**
 * Candidates a bracket of @mass elements asks for when @open splitters are unresolved and
 * @sharing brackets span its range (every open one in the first round, where each is the whole
 * input and all share the draws; 1 after): SORTEX_SPLIT_HITS in its splitter's window of
 * 2 @tol + 1, its share of them when it shares; at least SORTEX_SPLIT_SAMPLES, at most that or
 * SORTEX_SPLIT_BUDGET / @open, whichever is more (exact targets, tol 0, take the budget).
 */
uint64_t sortex_split_want(uint64_t open, uint64_t mass, uint64_t tol, uint64_t sharing);

/** A bracket of at most this many elements is sampled whole: its target is found exactly. */
#define SORTEX_SPLIT_WHOLE (4 * SORTEX_SPLIT_SAMPLES)

/** The global rank splitter @j of @p (1 <= j < p) aims at among @n elements: floor(j n / p),
 * so that rank r receives floor((r+1) n/p) - floor(r n/p) elements, floor or ceil of n/p. */
uint64_t sortex_split_target(int j, uint64_t n, int p);

/**
 * How far from its target a splitter's global rank may be: 0 for exact balance, else
 * floor(eps n / (2 p)), so that every rank receives at most n/p + 1 + eps n/p elements.
 */
uint64_t sortex_split_tolerance(uint64_t n, int p, double eps, int exact);

/**
 * The probability with which each element of a bracket of @mass elements is drawn, for
 * @want candidates in it: want / mass, and 1 (every element) for a bracket of at most
 * SORTEX_SPLIT_WHOLE elements or when want >= mass.
 */
double sortex_split_density(uint64_t mass, uint64_t want);

/**
 * Round step 4 for one splitter: among @c candidates whose global ranks @rank ascend, with
 * target @t and window half-width @tol. Returns 1 and the candidate to take in *@take when the
 * window [t - tol, t + tol] holds one (the nearest to t, the lower on a tie); else 0, with the
 * nearest candidate below the window in *@below and above it in *@above (@c for none).
 */
int sortex_split_choose(const uint64_t *rank, uint64_t c, uint64_t t, uint64_t tol,
                        uint64_t *take, uint64_t *below, uint64_t *above);

/** The most candidates one bracket asks for in a round. */
#define SORTEX_SPLIT_WANT_MAX ((uint64_t)1 << 31)

/**
 * Candidates an unresolved bracket of @mass elements asks for in the next round: @base
 * (sortex_split_want() of the splitters still open) when the last round @narrowed it, else
 * twice its last @want (at most the mass and SORTEX_SPLIT_WANT_MAX, at least @base).
 */
uint64_t sortex_split_next_want(int narrowed, uint64_t mass, uint64_t want, uint64_t base);

/** One bracket's range in a round's draw: [lo, hi) with the probability @density per element
 * (local indices in the sort, global ranks in the model); @skip leaves it out. */
struct sortex_split_range {
    uint64_t lo, hi;
    double density;
    int skip;
};

/** What receives the draws: called with each drawn index in ascending order; non-zero stops. */
typedef int sortex_split_emit_fn(void *arg, uint64_t index);

/**
 * Round step 1: draws from the union of the @n ranges (both ends ascending with the index, as
 * the brackets of ascending splitters are), every index with the summed density of the ranges
 * over it (every index where that reaches 1), by geometric skips from the splitmix64 generator
 * *@rng. Returns 0, or the first non-zero value @emit returned.
 */
int sortex_split_draw(const struct sortex_split_range *r, size_t n, uint64_t *rng,
                      sortex_split_emit_fn *emit, void *arg);

/** The generator state of round @round on rank @rank: the same on every run. */
uint64_t sortex_split_seed(int round, int rank);

#endif

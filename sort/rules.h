/*
 * sort/rules.h: the sort's count rules as pure functions (internal header of sort/; their
 * bodies are all in sort/rules.c, which makes no MPI call).
 *
 * How many samples the sort draws and where, which sample becomes a splitter, where a splitter
 * cuts a rank's sorted elements, the (key, position) order that breaks ties, and the histogram
 * selection's targets, draws, choices and bracket updates. The phases are written with them,
 * and the schedule simulator (sim/) calls the same functions to model a sort without MPI or
 * data. Internal: not part of the installed interface (sort/sortex.h).
 */
#ifndef SORTEX_SORT_RULES_H
#define SORTEX_SORT_RULES_H

#include <stdint.h>

#include "sort/sortex.h"

/**
 * The default oversampling factor for P ranks and imbalance bound epsilon (> 0): the smallest
 * that guarantees it, ceil((P+1)/epsilon), and at least 256.
 */
uint64_t sort_default_oversample(int p, double epsilon);

/** --balance auto takes the regular sample while it all-gathers at most this many bytes a
 * rank: below, one all-gather beats the histogram's rounds (measured 0.13 against 0.2 ms at
 * P = 2, 0.8 against 2.0 ms at P = 8 on 2^22 keys a rank); beyond, its P^2 growth loses. */
#define SORT_AUTO_SAMPLE_BYTES ((uint64_t)1 << 20)

/**
 * The selection a sort of @p ranks runs for the asked @balance: @balance itself, or for
 * SORTEX_BALANCE_AUTO the regular sample when its P S (key, position) pairs (S = @oversample,
 * or sort_default_oversample(p, @epsilon) when 0) take at most SORT_AUTO_SAMPLE_BYTES, else
 * SORTEX_BALANCE_EPS.
 */
enum sortex_balance sort_balance_resolve(enum sortex_balance balance, int p, double epsilon,
                                           uint64_t oversample);

/**
 * The total number of samples T = S P the sort draws with oversampling @oversample on @p ranks,
 * stored in *@total. Returns 0, or UTIL_EUSAGE (no message) when the sort refuses that many:
 * every rank rounds its share up, so the gathered sample holds up to T + P (key, position)
 * pairs, 2 (T + P) words, and MPI counts them in an int.
 */
int sort_sample_total(uint64_t oversample, int p, uint64_t *total);

/**
 * Samples a rank holding @m of the @n keys draws from a total of @total: its proportional share
 * ceil(T m / n), at most m (0 when n = 0).
 */
uint64_t sort_sample_count(uint64_t total, uint64_t m, uint64_t n);

/** Index in the rank's @m sorted keys of its sample @k of @s: floor((2k + 1) m / (2 s)), the
 * centre of the k-th of s equal gaps. Needs k < s <= m. */
uint64_t sort_sample_index(uint64_t k, uint64_t s, uint64_t m);

/*
 * The tie-break: every element is made distinct by its global position (rank r's slice of the
 * input order starts at position offset_r), and the sort orders elements by (key, position),
 * so equal keys split evenly between ranks and leave in input order. One encoding for each
 * kind of element, and one comparator set:
 *   numbers: struct sort_tuple, the ordered key and the position, laid out as Highway's 128-bit
 *            number (low word first) so that local_vqsort_u128() sorts an array of them;
 *   records: a blob of sort_blob_words(K) words: the K key bytes zero padded to whole words,
 *            then the position (a whole key compares with memcmp, then the position).
 */
struct sort_tuple {
    uint64_t pos;
    uint64_t key;
};

/** Order of tuples a and b: negative, 0 or positive, as for qsort(). */
int sort_tuple_order(const struct sort_tuple *a, const struct sort_tuple *b);

/** qsort() comparator over struct sort_tuple. */
int sort_tuple_cmp(const void *x, const void *y);

/** Words of a record's blob with a @key_size-byte key: ceil(K / 8) + 1. */
static inline size_t sort_blob_words(size_t key_size)
{
    return (key_size + 7) / 8 + 1;
}

/** Order of two blobs of keys of @key_size bytes: negative, 0 or positive. */
int sort_blob_order(const uint64_t *a, const uint64_t *b, size_t key_size);

/** qsort_r() comparator over blobs; @arg points to the key size (a size_t). */
int sort_blob_cmp(const void *x, const void *y, void *arg);

/** Fills @blob from the key at @key (@key_size bytes) and position @pos. */
void sort_blob_make(uint64_t *blob, const void *key, size_t key_size, uint64_t pos);

/** Order of a record's key at @key (@key_size bytes) with position @pos against @blob. */
int sort_key_blob_order(const void *key, size_t key_size, uint64_t pos, const uint64_t *blob);

/** Index in the sorted sample of @t > 0 pairs of splitter @j of @p (1 <= j < p): floor(j t / P). */
uint64_t sort_splitter_index(int j, uint64_t t, int p);

/**
 * Keys of a rank below the splitter (@key, @pos) in (key, position) order: the rank holds @m
 * sorted keys at @keys whose first has global position @offset. Bucket j of the rank is the range
 * between the boundaries of splitters j - 1 and j. O(log m).
 */
uint64_t sort_bucket_boundary(const uint64_t *keys, uint64_t m, uint64_t offset, uint64_t key,
                              uint64_t pos);

/**
 * The same for records: @m sorted records of @rsize bytes at @recs, keys of @key_size bytes at
 * @key_offset, against the splitter @blob. O(log m) key comparisons.
 */
uint64_t sort_bucket_boundary_records(const void *recs, uint64_t m, size_t rsize,
                                      size_t key_offset, size_t key_size, uint64_t offset,
                                      const uint64_t *blob);

/*
 * The histogram selection's count (sort/select.c): a rank's keys below each of a round's
 * candidates, the candidates in ascending order, each search starting where the last ended.
 * Galloping from there costs about 2 log2 d probes for a gap of d keys, and when the gaps are
 * wide (the first round's candidates, the first candidate of each bracket later) nearly every
 * probe lands on another cache line: a miss. The count's index holds every
 * SORT_COUNT_STRIDE-th key, a 256th of the keys' bytes, which stays in a core's cache: a far
 * candidate is searched in the index, then by bisection in one stride of keys (log2 of the
 * stride probes, the last few on one line); a near one (inside the stride it starts in)
 * gallops as before.
 */
#define SORT_COUNT_STRIDE 256

/** Entries of the count's index of @m keys: ceil(m / SORT_COUNT_STRIDE). */
uint64_t sort_count_index_len(uint64_t m);

/** Whether the first round of a selection, @c candidates over @m keys, makes the index (sort/
 * select.c, and the model prices it so): when there is a candidate for every 16 of its entries
 * at least. An entry costs a load, about a miss; a far candidate saves about ten misses through
 * it (2^20 keys, 2^11 sorted candidates on the project's machine: 460 ns a candidate galloping,
 * 210 ns through the index, made in 30 us), so the index pays with a margin. */
int sort_count_index_pays(uint64_t c, uint64_t m);

/**
 * What the count of one candidate @gap keys after where the last ended costs, in the units of
 * @miss (a probe of a key not in cache: a cache line not touched yet) and @hit (a probe of one
 * in a core's cache), @indexed through the count's index: the model of sim/ and the sort's own
 * pricing of levels price the count with it. A gallop over g keys touches about 2 log2(g / 8)
 * lines it has not touched (8 keys a line), the rest of its 2 log2(g + 1) + 1 probes hit;
 * through the index, the index's probes hit and the bisection of a stride touches about
 * log2(stride / 8) + 1 lines. Measured on the project's machine (2^20 keys, candidates sorted):
 * 33 ns a candidate at gaps of 3 keys, 460 ns at 500 galloping, 210 ns at 500 through the index.
 */
double sort_count_cost(double gap, int indexed, double miss, double hit);

/** Fills the count's index of the @m sorted keys at @keys: index[j] = keys[j stride]. */
void sort_count_index(const uint64_t *keys, uint64_t m, uint64_t *index);

/**
 * Keys among the @m sorted keys at @keys (global positions from @offset) below the candidate
 * @c in (key, position) order, given that the first @from are: the count of sort/select.c.
 * @index is the count's index of the keys (sort_count_index()), or NULL to gallop alone. The
 * answer is the same either way; *@probes (may be NULL) grows by the keys and index entries
 * compared.
 */
uint64_t sort_count_below(const uint64_t *keys, uint64_t m, uint64_t offset, const uint64_t *index,
                          const struct sort_tuple *c, uint64_t from, uint64_t *probes);

/*
 * Splitters by histogram (--balance eps and exact, sort/select.c): splitter j of P should have
 * a global rank (elements below it in (key, position) order) within a tolerance of its target.
 */

/** Candidates the histogram selection draws per unresolved splitter and round. */
#define SORT_SPLIT_SAMPLES 8

/** Candidates a round may draw in all before it stops short of SORT_SPLIT_SAMPLES each:
 * rounds cost latency, not volume, below this (a 16 KiB all-gather of tuples). */
#define SORT_SPLIT_BUDGET 1024

/** Candidates expected in a splitter's window when its bracket draws: the chance of none is
 * about e^-4 = 2%, so a round settles nearly every window it can reach. */
#define SORT_SPLIT_HITS 4

/**
 * Candidates a bracket of @mass elements asks for when @open splitters are unresolved and
 * @sharing brackets span its range (every open one in the first round, where each is the whole
 * input and all share the draws; 1 after): SORT_SPLIT_HITS in its splitter's window of
 * 2 @tol + 1, its share of them when it shares; at least SORT_SPLIT_SAMPLES, at most that or
 * SORT_SPLIT_BUDGET / @open, whichever is more (exact targets, tol 0, take the budget).
 */
uint64_t sort_split_want(uint64_t open, uint64_t mass, uint64_t tol, uint64_t sharing);

/** A bracket of at most this many elements is sampled whole: its target is found exactly. */
#define SORT_SPLIT_WHOLE (4 * SORT_SPLIT_SAMPLES)

/** The global rank splitter @j of @p (1 <= j < p) aims at among @n elements: floor(j n / p),
 * so that rank r receives floor((r+1) n/p) - floor(r n/p) elements, floor or ceil of n/p. */
uint64_t sort_split_target(int j, uint64_t n, int p);

/**
 * How far from its target a splitter's global rank may be: 0 for exact balance, else
 * floor(eps n / (2 p)), so that every rank receives at most n/p + 1 + eps n/p elements.
 */
uint64_t sort_split_tolerance(uint64_t n, int p, double eps, int exact);

/**
 * The probability with which each element of a bracket of @mass elements is drawn, for
 * @want candidates in it: want / mass, and 1 (every element) for a bracket of at most
 * SORT_SPLIT_WHOLE elements or when want >= mass.
 */
double sort_split_density(uint64_t mass, uint64_t want);

/**
 * Round step 4 for one splitter: among @c candidates whose global ranks @rank ascend, with
 * target @t and window half-width @tol. Returns 1 and the candidate to take in *@take when the
 * window [t - tol, t + tol] holds one (the nearest to t, the lower on a tie); else 0, with the
 * nearest candidate below the window in *@below and above it in *@above (@c for none).
 */
int sort_split_choose(const uint64_t *rank, uint64_t c, uint64_t t, uint64_t tol,
                        uint64_t *take, uint64_t *below, uint64_t *above);

/** The most candidates one bracket asks for in a round. */
#define SORT_SPLIT_WANT_MAX ((uint64_t)1 << 31)

/**
 * Candidates an unresolved bracket of @mass elements asks for in the next round: @base
 * (sort_split_want() of the splitters still open) when the last round @narrowed it, else
 * twice its last @want (at most the mass and SORT_SPLIT_WANT_MAX, at least @base).
 */
uint64_t sort_split_next_want(int narrowed, uint64_t mass, uint64_t want, uint64_t base);

/** One bracket's range in a round's draw: [lo, hi) with the probability @density per element
 * (local indices in the sort, global ranks in the model); @skip leaves it out. */
struct sort_split_range {
    uint64_t lo, hi;
    double density;
    int skip;
};

/** What receives the draws: called with each drawn index in ascending order; non-zero stops. */
typedef int sort_split_emit_fn(void *arg, uint64_t index);

/**
 * Round step 1: draws from the union of the @n ranges (both ends ascending with the index, as
 * the brackets of ascending splitters are), every index with the summed density of the ranges
 * over it (every index where that reaches 1), by geometric skips from the splitmix64 generator
 * *@rng. Returns 0, or the first non-zero value @emit returned.
 */
int sort_split_draw(const struct sort_split_range *r, size_t n, uint64_t *rng,
                      sort_split_emit_fn *emit, void *arg);

/** The generator state of round @round on rank @rank: the same on every run. */
uint64_t sort_split_seed(int round, int rank);

/** The search state of one splitter, identical on every rank (a rank's own counts of its
 * elements inside the bracket are the caller's). */
struct sort_bracket {
    uint64_t g_lo, g_hi; /* global: elements at or below the lower end, below the upper end */
    uint64_t want;       /* candidates to draw in it this round */
    uint8_t done;        /* resolved: the splitter is set */
    uint8_t narrowed;    /* the last round narrowed it */
};

/**
 * Before the first round, the brackets of the @p - 1 splitters of @n elements with window
 * half-width @tol: every bracket the whole input, all sharing the first draw; all done when
 * n = 0. Returns the splitters left open.
 */
uint64_t sort_split_start(struct sort_bracket *br, int p, uint64_t n, uint64_t tol);

/**
 * A round's draw ranges, into @r[0..p-1): bracket j over [@lo[j], @hi[j]) (a rank's own
 * counts; NULL: the global ends, as the model draws) with the density of its want and mass.
 */
void sort_split_ranges(const struct sort_bracket *br, int p, const uint64_t *lo,
                       const uint64_t *hi, struct sort_split_range *r);

/** What a bracket did in round step 4, for the caller's own state (sort_split_update()). */
enum sort_split_event {
    SORT_SPLIT_TAKE,  /* splitter j takes candidate c */
    SORT_SPLIT_LOWER, /* bracket j's lower end moved to candidate c */
    SORT_SPLIT_UPPER, /* bracket j's upper end moved to candidate c */
    SORT_SPLIT_EVENT_COUNT
};

/** Receives each event of sort_split_update(): splitter @j (0-based), candidate @c. */
typedef void sort_split_event_fn(void *arg, int j, enum sort_split_event what, uint64_t c);

/**
 * Round step 4 for every open splitter of @p, the one rule the sort and both replays of it
 * follow (Harsh, Kale and Solomonik, section 4): splitter j + 1 aims at @target[j] (NULL:
 * sort_split_target(j + 1, @n, @p)); among the round's @c candidates whose global
 * ranks @rank ascend, a splitter with one in its window (sort_split_choose()) takes it;
 * otherwise its bracket narrows to the nearest candidates either side of the window, where
 * they narrow it. Then every open bracket sets its want for the next round
 * (sort_split_want(), sort_split_next_want()). @ev (may be NULL) hears every take and every
 * end that moved, in splitter order, the lower end before the upper. Returns the splitters
 * left open.
 */
uint64_t sort_split_update(struct sort_bracket *br, int p, uint64_t n, uint64_t tol,
                           const uint64_t *target, const uint64_t *rank, uint64_t c,
                           sort_split_event_fn *ev, void *arg);

/*
 * Levels (AMS-sort's multi-level scheme: Axtmann, Bingmann, Sanders and Schulz, "Practical
 * Massively Parallel Sorting", SPAA 2015, section 4; sort/levels.c runs it). A sort of L levels
 * splits its group of ranks (at first all P) into k groups of consecutive ranks, moves every
 * element into the group that will hold it, and sorts inside each group the same way, L - 1
 * more times; the last level is the one-level sort on its group. Each rank then sends about
 * L k messages instead of P - 1, and every element moves L times.
 */

/** The most levels a sort takes (--levels 1..SORT_LEVELS_MAX). */
#define SORT_LEVELS_MAX 4

/**
 * The groups a level splits a group of @ranks ranks into when @left levels remain, this one
 * included: all of them (k = ranks, one rank a group: the one-level sort) when @left is 1, else
 * P^(1/left) rounded, at least 1 (a level of one group does nothing) and at most @ranks.
 */
int sort_level_groups(int ranks, int left);

/** The first rank of group @j of @k over @ranks ranks: floor(j ranks / k) (j = k: ranks). */
int sort_level_first(int j, int ranks, int k);

/** The group of @k over @ranks ranks that holds rank @r: the j with first(j) <= r < first(j+1). */
int sort_level_group_of(int r, int ranks, int k);

/**
 * The global rank the boundary in front of rank @first_rank (of the whole sort's @p_world ranks)
 * aims at, seen from a group whose elements begin at global rank @group_offset and number
 * @n_group: floor(first_rank n_world / p_world) - group_offset, clamped to [0, n_group]. Every
 * level aims at the final targets, so a boundary is placed once, at the level that first
 * separates its two ranks, within the tolerance of the one-level sort: the bound of
 * --balance eps holds at the end whatever L, and --balance exact stays exact.
 */
uint64_t sort_level_target(uint64_t n_world, int p_world, int first_rank, uint64_t group_offset,
                           uint64_t n_group);

/**
 * The prefix-sum assignment of a level's pieces to the ranks of one destination group (AMS-sort
 * section 4.3): the group's @total elements form the sequence "sender 0's piece, sender 1's
 * piece, ..." and its @s ranks take consecutive ranges of it, rank i the positions
 * [floor(total i / s), floor(total (i+1) / s)). The sender whose piece starts at @x and holds
 * @c elements sends counts[i] of them to rank i (counts[0..s) set; the nonzero ones form one
 * run of ranks). Returns the ranks it sends to. Since each rank's range is a run of the sequence
 * and it merges its pieces with ties to the lower sender, the group's ranks in rank order hold
 * the sequence in (key, input position) order: a rank's offset in the group plus its index is
 * the tie-break of the next level.
 */
int sort_level_deal(uint64_t x, uint64_t c, uint64_t total, int s, uint64_t *counts);

/** The first position rank @i of a destination group of @s ranks and @total elements takes:
 * floor(total i / s); rank i takes [begin(i), begin(i + 1)). */
uint64_t sort_level_begin(uint64_t total, int s, int i);

/** What the levels' automatic choice knows about the machine (seconds, seconds a byte). */
struct sort_level_machine {
    double alpha;        /* a message start-up */
    double beta;         /* a byte on a link */
    double probe;        /* one probe of a binary search, a cache miss */
    double probe_hit;    /* ... of keys in a core's cache */
    double merge;        /* merging, an element, at two runs */
    double merge_log;    /* ... plus this an element and doubling of the runs */
    double tuple;        /* sorting a candidate, a doubling */
    double copy;         /* memcpy, a byte */
    double sort;         /* the local sort, an element (the finish's re-sort) */
};

/** The machine the sort prices levels with unless told otherwise: the whole-sort model's
 * defaults (sim/sortmodel.c), alpha and beta the built-in machine's (exchange/machine.h). */
void sort_level_machine_default(struct sort_level_machine *m);

/**
 * What L levels cost a sort of @p ranks holding @n elements of @elem bytes in all, in the
 * closed form of the whole-sort model (sim/levelmodel.c, which replays the selection and prices
 * every back-end where this sums the default's), one thread a rank: per level, the histogram
 * selection's rounds (whose counts are the bucket boundaries), the counts' messages, the
 * exchange (a start-up a non-empty piece and the bytes), the merge of the runs received (a re-sort beyond
 * LOCAL_MERGE_RUNS_PER_THREAD runs), the group communicators, and with more than one level
 * the final shift to exact shares. The phases every L shares (read, local sort, write) are left
 * out. Seconds.
 */
double sort_levels_price(int p, uint64_t n, uint64_t elem, int levels, double eps,
                         const struct sort_level_machine *m);

/** Below this many ranks the sort keeps one level without pricing: a second level moves every
 * element again and a second merge, which start-ups saved do not repay. */
#define SORT_LEVELS_ONE_P 64

/**
 * --levels auto: 1 up to SORT_LEVELS_ONE_P ranks, else the L of 1..SORT_LEVELS_MAX whose
 * sort_levels_price() is least (ties keep fewer levels). @price (may be NULL) gets each L's
 * price in [L - 1] (0 where none was computed).
 */
int sort_levels_choose(int p, uint64_t n, uint64_t elem, double eps,
                       const struct sort_level_machine *m, double price[SORT_LEVELS_MAX]);

#endif

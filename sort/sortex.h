/*
 * sort/sortex.h: the public interface of the sortex sample sort.
 *
 * Two entry points, one algorithm:
 *   sortex_sort()      in memory: every rank passes its keys and a communicator and gets back
 *                      its slice of the globally sorted sequence (rank 0 the smallest keys);
 *   sortex_sort_file() a binary file of keys into one globally sorted file (what bin/sortex runs).
 *
 * The phases (sort/sortex.c orchestrates them, one file each): read, local_sort, sample,
 * splitters, bucket, exchange (through an exchange/ back-end), finish, write.
 *
 * Ties between equal keys are broken by (rank, position), so even all-equal input splits
 * evenly: every rank ends with at most (1 + epsilon) * n / P + P keys.
 */
#ifndef SORTEX_SORTEX_H
#define SORTEX_SORTEX_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "exchange/exchange.h"
#include "sort/local_sort.h" /* the node-local kernels: sortex_local_sort(), sortex_merge_runs() */
#include "util/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The phases of the sort, in order; names as in the --stats JSON. */
enum sortex_phase {
    SORTEX_PHASE_READ,
    SORTEX_PHASE_LOCAL_SORT,
    SORTEX_PHASE_SAMPLE,
    SORTEX_PHASE_SPLITTERS,
    SORTEX_PHASE_BUCKET,
    SORTEX_PHASE_EXCHANGE,
    SORTEX_PHASE_FINISH,
    SORTEX_PHASE_WRITE,
    SORTEX_PHASE_CHECK, /* --check: the self-check of input and output (0 when off) */
    SORTEX_PHASE_COUNT
};

/** How the finish phase turns the received sorted runs into the rank's slice. */
enum sortex_finish {
    SORTEX_FINISH_AUTO,  /* merge or re-sort, whichever was measured faster for the run count */
    SORTEX_FINISH_MERGE, /* threaded P-way merge of the sorted runs */
    SORTEX_FINISH_SORT,  /* re-sort everything with the local sort */
    SORTEX_FINISH_COUNT
};

/** How sortex_sort_file() reads the input and writes the output. */
enum sortex_io {
    SORTEX_IO_MPIIO, /* every rank reads and writes its own slice with collective MPI-IO */
    SORTEX_IO_ROOT,  /* rank 0 alone reads and writes; binomial-tree scatter and gather */
    SORTEX_IO_ROOTV, /* rank 0 alone reads and writes; MPI_Scatterv and MPI_Gatherv */
    SORTEX_IO_COUNT
};

/** Options of one sort; zero-initialise and set what you need (sortex_config_default()). */
struct sortex_config {
    const struct exchange_ops *exchange; /* back-end; NULL = the registry's default */
    const struct util_format *format;   /* record format (util/format.h); NULL = u64 */
    int threads;         /* OpenMP threads per rank; 0 = cores of the node / ranks on it */
    double epsilon;      /* imbalance bound: max rank output <= (1+eps) n/P + P; 0 = 0.1 */
    uint64_t oversample; /* samples per bucket; 0 = max(256, ceil((P+1)/eps)) */
    enum sortex_finish finish;
    uint64_t mem_limit;  /* bytes of key buffers one rank may allocate; 0 = no limit */
    int progress;        /* rank 0 reports each phase on stderr */
    int sync;            /* files: fsync the output before the final rename */
    enum sortex_io io;   /* files: MPI-IO (default) or root I/O; root I/O takes "-" for
                            standard input and standard output */
    int check;           /* prove the result in the same job: the output is in order and holds
                            the multiset of keys that was read (the verifier's checksum), else
                            fail with UTIL_ECHECK and write nothing */
};

/** What one sort did. Per-rank fields describe the calling rank; global ones agree on all. */
struct sortex_stats {
    double phase_seconds[SORTEX_PHASE_COUNT]; /* this rank's time in each phase */
    double total_seconds;                     /* this rank, first phase to last */
    uint64_t n_total;                         /* global: keys sorted */
    uint64_t n_in;                            /* this rank: keys it started with */
    uint64_t n_out;                           /* this rank: keys of its sorted slice */
    double imbalance;       /* global: max n_out / (n_total / P); 1.0 is perfect */
    double epsilon_bound;   /* global: the bound the sample size guarantees */
    uint64_t samples;       /* global: samples gathered */
    uint64_t oversample;    /* global: samples per bucket used */
    int threads;            /* threads per rank used */
    const char *finish;     /* what finish did: "merge", "sort", or "none" (one rank) */
    const char *check;      /* "passed" after cfg->check, "off" without it */
    long peak_rss_kib;      /* this rank's peak resident set (getrusage) */
    uint64_t buffer_bytes;  /* this rank's key buffers */
    struct exchange_stats exchange; /* this rank's exchange */
};

/** Fills cfg with the defaults (the same as an all-zero struct). */
void sortex_config_default(struct sortex_config *cfg);

/** Names a phase as in --stats ("local_sort"); NULL for an invalid value. */
const char *sortex_phase_name(enum sortex_phase phase);

/**
 * Allocates room for n keys suitable for sortex_sort() (huge-page advised, untouched).
 * Returns NULL when out of memory. Free with sortex_free_keys().
 */
uint64_t *sortex_alloc_keys(uint64_t n);
/** Frees a buffer from sortex_alloc_keys() or returned by sortex_sort(); NULL is fine. */
void sortex_free_keys(uint64_t *keys);

/**
 * The default oversampling factor for P ranks and imbalance bound epsilon (> 0): the smallest
 * that guarantees it, ceil((P+1)/epsilon), and at least 256. Pure; the schedule simulator uses
 * it to model the sort's counts.
 */
uint64_t sortex_default_oversample(int p, double epsilon);

/*
 * The sort's count rules as pure functions: how many samples the sort draws and where, which
 * sample becomes a splitter, where a splitter cuts a rank's sorted keys, and the (key, position)
 * order that breaks ties. The sample, splitters and bucket phases are written with them, and the
 * schedule simulator (sim/) calls the same functions to model a sort's count matrix without MPI.
 */

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

/**
 * Sorts the keys distributed over comm. Collective: every rank of comm calls it.
 *
 * *keys must come from sortex_alloc_keys() and hold *n keys; ownership passes to the sort. On
 * success *keys and *n describe this rank's slice of the global order (rank 0 holds the
 * smallest keys, every rank at most (1+eps) n/P + P); free it with sortex_free_keys(). The
 * buffer may differ from the one passed in. On failure *keys is freed and set to NULL.
 * stats may be NULL. Returns 0, or a negative util error code agreed by all ranks (each
 * failure is reported by one line on stderr, by the lowest rank where it happened, naming the
 * phase).
 */
int sortex_sort(MPI_Comm comm, uint64_t **keys, uint64_t *n, const struct sortex_config *cfg,
                struct sortex_stats *stats);

/**
 * Sorts the keys of the file in_path into out_path with every rank of comm (collective).
 * Each rank reads its contiguous slice with MPI-IO (or, with cfg->io root modes, rank 0 reads
 * everything, "-" meaning standard input and output, and scatters and gathers the slices); the output is written into a temporary file
 * beside out_path (".NAME.sortex-tmp.TAG") that is renamed to out_path only after every rank
 * has succeeded. The input is never modified; out_path naming the input is refused.
 * Returns 0 or a negative util error code agreed by all ranks (UTIL_EUSAGE for bad input or
 * output: missing, a directory, size not a multiple of the key size, unwritable directory).
 */
int sortex_sort_file(MPI_Comm comm, const char *in_path, const char *out_path,
                     const struct sortex_config *cfg, struct sortex_stats *stats);

/**
 * Writes the stats of every rank as one JSON object to path (rank 0 writes; "-" is stdout):
 * the command line (@command, may be NULL) and a UTC timestamp, parameters, n, P, threads,
 * per-phase min/avg/max over ranks, imbalance, exchange figures, peak RSS per rank, MPI
 * library, host names; the README's "The --stats file" section is its schema. Collective.
 * Returns 0 or a negative error code.
 */
int sortex_stats_write_json(MPI_Comm comm, const struct sortex_config *cfg,
                            const struct sortex_stats *stats, const char *input,
                            const char *output, const char *command, const char *path);

/**
 * Prints a short human summary (phase times, imbalance, exchange volume) on stderr from rank 0.
 * Collective.
 */
void sortex_stats_print(MPI_Comm comm, const struct sortex_stats *stats);


#ifdef __cplusplus
}
#endif

#endif

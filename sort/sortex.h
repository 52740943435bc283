/*
 * sort/sortex.h: the public interface of the sortex sample sort, installed as <sortex/sortex.h>.
 *
 * Three entry points, one algorithm:
 *   sortex_sort()         in memory: every rank passes its 8-byte keys and a communicator and
 *                         gets back its slice of the globally sorted sequence (rank 0 the
 *                         smallest keys);
 *   sortex_sort_records() the same for fixed-size records with a byte-string key (gensort's,
 *                         or any layout from sortex_format_layout()), payload and all;
 *   sortex_sort_file()    a binary file of keys or records into one globally sorted file (what
 *                         bin/sortex runs).
 *
 * The phases (sort/sortex.c orchestrates them, one file each): read, local_sort, sample,
 * splitters, bucket, exchange (through an exchange/ back-end), finish, write.
 *
 * Ties between equal keys are broken by (rank, position), so even all-equal input splits
 * evenly: every rank ends with at most (1 + epsilon) * n / P + P keys. The same rule makes
 * every sort stable: records (and keys) with equal keys leave in input order, the input order
 * being rank 0's elements in the order given, then rank 1's, and so on (a file's order for
 * sortex_sort_file()). This is a guarantee, tested, not an accident of the implementation.
 *
 * The caller initialises MPI; the sort makes MPI calls from the calling thread only
 * (MPI_THREAD_FUNNELED is enough), on a duplicate of the communicator it is given, and runs
 * OpenMP threads of its own, leaving the caller's omp_set_num_threads() as it found it.
 *
 * Bad arguments. No function trusts its caller: a NULL pointer where one is needed, a value out
 * of range or, for the collective functions, an argument that must be the same on every rank
 * but differs (see struct sortex_config) returns SORTEX_EUSAGE (or, from a function without an
 * error code, what its contract says), never a crash. (A pointer that is not NULL is taken to
 * point where the contract says: a freed buffer or a stray address cannot be told.) A collective
 * function (sortex_sort(), sortex_sort_records(), sortex_sort_file(),
 * sortex_stats_write_json(), sortex_stats_print()) checks its arguments on every rank first and
 * then makes the ranks agree, in one small all-reduce, so that a mistake on one rank returns
 * the same code on every rank, reported by one line on stderr for the whole job (`sortex:
 * error: FUNCTION: WHAT (VALUE)`), before the sort has done anything. The one argument they
 * cannot agree over is the communicator itself: it must be a valid intracommunicator on every
 * rank that calls. Given MPI_COMM_NULL or an intercommunicator, or called before MPI_Init or
 * after MPI_Finalize, a function returns SORTEX_EUSAGE on that process, with a line of its own,
 * without an MPI call on it; passed on every rank, every rank returns it, but a rank given a
 * valid communicator waits in the collective for the ones that were not.
 *
 * This header is self-contained: it includes only MPI's and the C library's headers, so a
 * program builds against an installed copy with `pkg-config --cflags --libs sortex` alone, and
 * any module of the tree may include it. Everything else of sort/ is internal (sort/internal.h,
 * sort/rules.h, local/local.h); the shared library exports exactly the functions declared
 * here, those marked SORTEX_API.
 */
#ifndef SORTEX_SORTEX_H
#define SORTEX_SORTEX_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; sortex_version() is the library's. The Makefile reads the
 * numbers from here for the shared library's name and sortex.pc. */
#define SORTEX_VERSION_MAJOR 0
#define SORTEX_VERSION_MINOR 2
#define SORTEX_VERSION_PATCH 0
/** The version as one number for #if: major * 10000 + minor * 100 + patch. */
#define SORTEX_VERSION_NUMBER                                                                      \
    (SORTEX_VERSION_MAJOR * 10000 + SORTEX_VERSION_MINOR * 100 + SORTEX_VERSION_PATCH)
#define SORTEX_STRINGIFY_(x) #x
#define SORTEX_STRINGIFY(x) SORTEX_STRINGIFY_(x)
/** The version as a string, "MAJOR.MINOR.PATCH". */
#define SORTEX_VERSION                                                                             \
    SORTEX_STRINGIFY(SORTEX_VERSION_MAJOR)                                                         \
    "." SORTEX_STRINGIFY(SORTEX_VERSION_MINOR) "." SORTEX_STRINGIFY(SORTEX_VERSION_PATCH)

/* What the shared library exports: it is built with -fvisibility=hidden, and this marks the
 * public functions. */
#if defined(__GNUC__)
#define SORTEX_API __attribute__((visibility("default")))
#else
#define SORTEX_API
#endif

/** What the functions return: 0, or one of these negative codes. */
enum sortex_error {
    SORTEX_OK = 0,
    SORTEX_EUSAGE = -1,  /* the caller's arguments or input are wrong (the CLI's exit 2) */
    SORTEX_EIO = -2,     /* reading or writing failed (exit 3, as are the following) */
    SORTEX_ENOMEM = -3,  /* an allocation failed or cfg->mem_limit refused it */
    SORTEX_EMPI = -4,    /* an MPI call failed */
    SORTEX_EINJECT = -5, /* a failure injected for testing (SORTEX_FAIL) */
    SORTEX_ECHECK = -6   /* cfg->check found the result wrong; nothing was written */
};

/* Back-ends and record formats, opaque here: sortex_exchange_find() and sortex_format_find()
 * hand them out by name, sortex_format_layout() makes a format of any record layout. */
struct exchange_ops;
struct util_format;

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
    SORTEX_PHASE_DISTRIBUTE,   /* external sort, pass 1: read, classify, exchange, spill */
    SORTEX_PHASE_SORT_BUCKETS, /* external sort, pass 2: load, sort and write each bucket */
    SORTEX_PHASE_COUNT
};

/** How the finish phase turns the received sorted runs into the rank's slice. */
enum sortex_finish {
    SORTEX_FINISH_AUTO,  /* merge or re-sort, whichever was measured faster for the run count */
    SORTEX_FINISH_MERGE, /* threaded P-way merge of the sorted runs */
    SORTEX_FINISH_SORT,  /* re-sort everything with the local sort */
    SORTEX_FINISH_COUNT
};

/** How the splitters are chosen, and so how evenly the ranks end up. */
enum sortex_balance {
    SORTEX_BALANCE_AUTO,   /* the regular sample while it all-gathers at most 1 MiB a rank (up to
                              about 80 ranks at epsilon 0.1), where it is the cheaper; else eps */
    SORTEX_BALANCE_EPS,    /* by histogram refinement: every rank ends with at most
                              (1 + epsilon) n/P + 1 elements; O(P) words per rank and round */
    SORTEX_BALANCE_EXACT,  /* by histogram refinement to the exact targets: every rank ends with
                              floor(n/P) or ceil(n/P) elements; a few more rounds */
    SORTEX_BALANCE_SAMPLE, /* one all-gathered regular sample of P S elements (S = oversample):
                              at most (1 + (P+1)/S) n/P + P; P S words on every rank */
    SORTEX_BALANCE_COUNT
};

/** How sortex_sort_file() reads the input and writes the output. */
enum sortex_io {
    SORTEX_IO_MPIIO, /* every rank reads and writes its own slice with collective MPI-IO */
    SORTEX_IO_ROOT,  /* rank 0 alone reads and writes; binomial-tree scatter and gather */
    SORTEX_IO_ROOTV, /* rank 0 alone reads and writes; MPI_Scatterv and MPI_Gatherv */
    SORTEX_IO_COUNT
};

/* The ranges of struct sortex_config's numbers, the same as the CLI's (sortex --help). */
#define SORTEX_THREADS_MAX    4096  /* threads: 0 (the default) or 1 .. this */
#define SORTEX_EPSILON_MIN    0.001 /* epsilon: 0 (the default) or this .. SORTEX_EPSILON_MAX */
#define SORTEX_EPSILON_MAX    10.0
#define SORTEX_OVERSAMPLE_MAX 1000000 /* oversample: 0 (the default) or 1 .. this */
#define SORTEX_LEVELS_MAX     4       /* levels: 0 (auto) or 1 .. this */

/** Whether sortex_sort_file() sorts in memory or through temporary files. */
enum sortex_external {
    SORTEX_EXTERNAL_AUTO,   /* in memory when every rank's share fits its memory (mem_limit, or
                               the default share of its node's memory), externally otherwise */
    SORTEX_EXTERNAL_NEVER,  /* in memory, or refused (SORTEX_ENOMEM) when it does not fit */
    SORTEX_EXTERNAL_ALWAYS, /* through temporary files whatever the size */
    SORTEX_EXTERNAL_COUNT
};

/**
 * Options of one sort; zero-initialise and set what you need (sortex_config_default()).
 *
 * Every rank passes the same configuration, except threads, mem_limit and finish, which are
 * each rank's own (its cores, its memory; merging and re-sorting give the same slice): every
 * other field decides which collectives the sort makes or the order it produces. The sort
 * checks both before it starts: a field out of its range (below) on any rank, or one of the
 * others differing between ranks, returns SORTEX_EUSAGE on every rank, the line naming the
 * field and its value on rank 0. "The same" is what a field means: a NULL format and u64, a
 * NULL exchange and the default back-end, epsilon 0 and 0.1, gensort and the layout of its
 * bytes, any two nonzero flags; exchange does not count with exchange_auto. The statistics
 * functions take the configuration of the sort they describe, under the same rules.
 */
struct sortex_config {
    const struct exchange_ops *exchange; /* back-end (sortex_exchange_find()); NULL = the
                                            default, alltoallv; any other pointer is refused */
    int exchange_auto;   /* 1: each sort takes the back-end whose cost model predicts the
                            shortest exchange for its own count matrix (exchange is ignored) */
    const struct util_format *format;    /* record format (sortex_format_find(),
                                            sortex_format_layout()); NULL = u64 */
    int threads;         /* OpenMP threads per rank, 1..SORTEX_THREADS_MAX; 0 = cores of the
                            node / ranks on it; may differ between ranks */
    double epsilon;      /* imbalance bound: max rank output <= (1+eps) n/P + 1 (+ P with
                            SORTEX_BALANCE_SAMPLE), SORTEX_EPSILON_MIN..SORTEX_EPSILON_MAX;
                            0 = 0.1 */
    uint64_t oversample; /* SORTEX_BALANCE_SAMPLE (or AUTO): samples per bucket,
                            1..SORTEX_OVERSAMPLE_MAX; 0 = max(256, ceil((P+1)/eps)); refused
                            with SORTEX_BALANCE_EPS and EXACT */
    enum sortex_balance balance; /* how the splitters are chosen; 0 = SORTEX_BALANCE_AUTO */
    enum sortex_finish finish;   /* 0 = SORTEX_FINISH_AUTO; may differ between ranks */
    uint64_t mem_limit;  /* bytes of buffers one rank may allocate; 0 = no limit in memory,
                            and for sortex_sort_file()'s choice of the external sort a share
                            of the node's memory (README, "Memory"); may differ between
                            ranks */
    int progress;        /* rank 0 reports each phase on stderr */
    int sync;            /* files: fsync the output before the final rename */
    enum sortex_io io;   /* files: MPI-IO (default) or root I/O; root I/O takes "-" for
                            standard input and standard output */
    int check;           /* prove the result in the same job: the output is in order and holds
                            the multiset of keys that was read (the verifier's checksum), else
                            fail with SORTEX_ECHECK and write nothing */
    int levels;          /* levels of the sample sort, 1..SORTEX_LEVELS_MAX: each splits the
                            ranks into about P^(1/levels) groups, so a rank sends about
                            levels P^(1/levels) messages instead of P - 1, and every element
                            moves levels times; 0 = auto (one level up to 64 ranks, beyond that
                            the fewest the cost model prices cheapest); more than one takes
                            the histogram selection (SORTEX_BALANCE_SAMPLE is refused), and
                            with SORTEX_BALANCE_AUTO or EXACT ends with a shift that gives every
                            rank floor or ceil of n/P; in memory (the external sort
                            distributes in one pass) */
    enum sortex_external external; /* files: in memory or through temporary files; 0 = AUTO */
    const char *const *temp_dirs;  /* files, external: the temporary files' directories, a
                                      NULL-terminated list (each rank spreads its files over
                                      them); NULL = $TMPDIR, else the output's directory; may
                                      differ between ranks */
};

/** Room for back-end specific figures in sortex_exchange_stats. */
#define SORTEX_EXCHANGE_MAX_EXTRA 8

/** What the exchange phase did, as seen by this rank: the back-end's report. */
struct sortex_exchange_stats {
    uint64_t bytes_sent;  /* bytes this rank handed to MPI for other ranks (forwarding included) */
    uint64_t bytes_recv;  /* bytes this rank received from other ranks */
    uint64_t messages;    /* messages this rank sent to other ranks (collective: non-empty pairs) */
    uint64_t rounds;      /* communication rounds (1 for a single collective) */
    uint64_t max_message; /* largest message this rank sent, in bytes */
    double seconds;       /* wall time of the whole exchange on this rank, counts included */
    int nextra;           /* number of valid entries in extra[] */
    struct {
        const char *name; /* static string, e.g. "padding_bytes" */
        double value;
    } extra[SORTEX_EXCHANGE_MAX_EXTRA]; /* transpose's bounds, a schedule's steps... */
};

/** What one level of the sort did, as seen by this rank (sortex_stats.level). */
struct sortex_level_stats {
    int groups;           /* global: the groups this rank's group split into (k; its ranks
                             at the last level) */
    int ranks;            /* this rank: the ranks of its group at this level */
    const char *exchange; /* the back-end that ran in this rank's group (static string) */
    uint64_t messages;    /* this rank: messages it sent, the exchange's and the counts' */
    uint64_t bytes_sent;  /* this rank: bytes the exchange sent to other ranks */
    double seconds;       /* this rank: wall time of the level, selection to merge */
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
    uint64_t samples;       /* global: samples (candidates) gathered, every round */
    uint64_t splitter_rounds; /* global: histogram rounds (0 with SORTEX_BALANCE_SAMPLE) */
    enum sortex_balance balance; /* global: the selection that ran (AUTO resolved) */
    uint64_t oversample;    /* global: samples per bucket used */
    int threads;            /* threads per rank used */
    const char *finish;     /* what finish did: "merge", "sort", or "none" (one rank) */
    const char *check;      /* "passed" after cfg->check, "off" without it */
    long peak_rss_kib;      /* this rank's peak resident set (getrusage) */
    uint64_t buffer_bytes;  /* this rank's key buffers */
    struct sortex_exchange_stats exchange; /* this rank's exchange */
    const char *exchange_name; /* global: the back-end that ran (static string) */
    double exchange_predicted; /* global: with exchange_auto, its model's seconds; else 0 */
    /* The external sort (sortex_sort_file() through temporary files); 0 in memory. */
    int external;              /* global: 1 when it ran externally */
    uint64_t mem_budget;       /* this rank: the memory it may use, bytes (mem_limit, or its
                                  share of the node's) */
    uint64_t mem_need;         /* this rank: the memory its in-memory sort would need, bytes */
    const char *mem_source;    /* where mem_budget came from: "--mem-limit", "physical memory",
                                  "cgroup limit", "Slurm allocation" (static) */
    uint64_t buckets;          /* global: buckets of pass 1 (all ranks) */
    uint64_t split_buckets;    /* global: buckets too big for memory, split by an extra pass */
    uint64_t temp_bytes;       /* this rank: bytes written to temporary files */
    uint64_t pass_bytes[2][2]; /* this rank: [pass 1, 2][read, written] bytes, counted by the
                                  sort's own reads and writes */
    uint64_t shifted;          /* this rank: elements the final shift of a multi-level sort
                                  with exact shares sent to other ranks (0 otherwise) */
    int levels;                /* global: the levels the sort ran (1 = one level) */
    int levels_auto;           /* global: 1 when cfg.levels = 0 chose them */
    double levels_price[SORTEX_LEVELS_MAX]; /* global: with levels_auto beyond 64 ranks, what
                                  the cost model priced each L at, seconds (else 0) */
    struct sortex_level_stats level[SORTEX_LEVELS_MAX]; /* this rank, level by level */
};

/** The library's version, "MAJOR.MINOR.PATCH" (SORTEX_VERSION of the build); static. */
SORTEX_API const char *sortex_version(void);

/** Fills cfg with the defaults (the same as an all-zero struct); NULL is ignored. */
SORTEX_API void sortex_config_default(struct sortex_config *cfg);

/**
 * The exchange back-end called @name ("alltoallv", "direct", "forward", ...; `sortex --exchange
 * help` describes them), for sortex_config.exchange; NULL if there is none by that name.
 */
SORTEX_API const struct exchange_ops *sortex_exchange_find(const char *name);

/** The name of back-end @i of the registry (0 is the default); NULL from the count on. */
SORTEX_API const char *sortex_exchange_name(int i);

/**
 * The format called @name, for sortex_config.format: "u64" (the default), "i64" (signed) or
 * "f64" (IEEE doubles, negative zero before positive zero, NaNs ordered by sign and bits),
 * whose keys stay 64-bit words in memory and in files (the sort maps them onto unsigned order
 * and back), sorted by sortex_sort(); or "gensort", the Sort Benchmark's 100-byte records with
 * a 10-byte key compared as unsigned bytes, sorted with their payload by
 * sortex_sort_records(). sortex_sort_file() takes them all. NULL for any other name. The
 * named formats are static: never free them (sortex_format_free() ignores them).
 */
SORTEX_API const struct util_format *sortex_format_find(const char *name);

/**
 * Makes the format of records of @record_size bytes whose key is the @key_size bytes at
 * @key_offset, compared as unsigned big-endian byte strings (memcmp order; the rest of the
 * record is payload that moves with the key), for sortex_config.format: the generic layout of
 * the CLI's --record-size, --key-offset and --key-size. On success *@out is the new format,
 * the caller's to free with sortex_format_free() once no sort uses it. Returns 0;
 * SORTEX_EUSAGE (*@out NULL) when @record_size is 0 or above 65536, @key_size is 0, or the key
 * reaches past the record, and when @out is NULL; SORTEX_ENOMEM. Prints nothing; not
 * collective.
 */
SORTEX_API int sortex_format_layout(size_t record_size, size_t key_offset, size_t key_size,
                                    const struct util_format **out);

/** Frees a format from sortex_format_layout(); NULL and the named formats are ignored. */
SORTEX_API void sortex_format_free(const struct util_format *format);

/**
 * Bytes per record of @format as files and sortex_sort_records() hold them: 8 for the numbers
 * (and NULL, u64), 100 for gensort, the record size of a layout.
 */
SORTEX_API size_t sortex_record_size(const struct util_format *format);

/** Names a phase as in --stats ("local_sort"); NULL for an invalid value. */
SORTEX_API const char *sortex_phase_name(enum sortex_phase phase);

/**
 * Allocates room for n keys suitable for sortex_sort() (huge-page advised, untouched).
 * Returns NULL when out of memory. Free with sortex_free_keys().
 */
SORTEX_API uint64_t *sortex_alloc_keys(uint64_t n);
/** Frees a buffer from sortex_alloc_keys() or returned by sortex_sort(); NULL is fine. */
SORTEX_API void sortex_free_keys(uint64_t *keys);

/**
 * Allocates room for @n records of @format suitable for sortex_sort_records(): at least
 * @n * sortex_record_size(@format) bytes (in fact @n times the record size rounded up to a
 * multiple of 8), huge-page advised, untouched. NULL when out of memory. Free it with
 * sortex_free_records().
 */
SORTEX_API void *sortex_alloc_records(const struct util_format *format, uint64_t n);
/** Frees a buffer from sortex_alloc_records() or returned by sortex_sort_records(); NULL is
 * fine. */
SORTEX_API void sortex_free_records(void *records);

/**
 * Sorts the keys distributed over comm. Collective: every rank of comm calls it.
 *
 * *keys must come from sortex_alloc_keys() and hold *n keys (it may be NULL when *n is 0);
 * ownership passes to the sort. On success *keys and *n describe this rank's slice of the
 * global order (rank 0 holds the smallest keys, every rank at most (1+eps) n/P + P); free it
 * with sortex_free_keys(). The buffer may differ from the one passed in. On failure *keys is
 * freed and set to NULL and *n to 0 (where keys and n are not NULL). cfg may be NULL (the
 * defaults); its format, if any, must be a numeric one. stats may be NULL. Returns 0, or a
 * negative error code (enum sortex_error) agreed by all ranks (each failure is reported by one
 * line on stderr, by the lowest rank where it happened, naming the phase); SORTEX_EUSAGE on
 * every rank, before anything is sorted, when on any rank keys or n is NULL, *keys is NULL
 * with *n above 0, cfg->format is a record format, or cfg is out of range or differs between
 * the ranks (struct sortex_config); for comm, see "Bad arguments" above.
 */
SORTEX_API int sortex_sort(MPI_Comm comm, uint64_t **keys, uint64_t *n,
                           const struct sortex_config *cfg, struct sortex_stats *stats);

/**
 * Sorts the records distributed over comm by key, stably, payload and all. Collective: every
 * rank of comm calls it, with the same cfg->format.
 *
 * The format is cfg->format: gensort (sortex_format_find()) or a layout
 * (sortex_format_layout()); with a numeric format or none (NULL cfg or format) the records are
 * 8-byte keys and this is sortex_sort(). *records must come from sortex_alloc_records() with
 * room for at least *n records, and hold *n records of R = sortex_record_size(cfg->format)
 * bytes back to back, exactly as a file holds them (no padding); ownership passes to the sort.
 *
 * On success *records and *n describe this rank's slice of the global order, packed the same
 * way: rank 0 holds the smallest keys, every rank at most (1+eps) n/P + P records, and records
 * with equal keys are in input order (rank 0's first, each rank's in the order given): the
 * sort is stable. Free the slice with sortex_free_records(); the buffer may differ from the
 * one passed in. On failure *records is freed and set to NULL and *n to 0 (where records and n
 * are not NULL). stats may be NULL.
 *
 * Memory per rank, for m = (1+eps) n/P + P records of S = R rounded up to a multiple of 8
 * bytes: two buffers of m records of S bytes, and during the local sort 32 bytes of tuples a
 * record (the finish's re-sort, when it runs, the same). When R is not a multiple of 8 the
 * records are spread to S bytes on the way in and packed on the way out, a pass each.
 *
 * Returns 0, or a negative error code (enum sortex_error) agreed by all ranks, each failure
 * reported by one line on stderr from the lowest rank where it happened, naming the phase;
 * SORTEX_EUSAGE on every rank, before anything is sorted, when on any rank records or n is
 * NULL, *records is NULL with *n above 0, or cfg is out of range or differs between the ranks
 * (struct sortex_config; a NULL cfg means u64 keys, so it differs from a record format); for
 * comm, see "Bad arguments" above.
 */
SORTEX_API int sortex_sort_records(MPI_Comm comm, void **records, uint64_t *n,
                                   const struct sortex_config *cfg, struct sortex_stats *stats);

/**
 * Sorts the keys of the file in_path into out_path with every rank of comm (collective).
 * Each rank reads its contiguous slice with MPI-IO (or, with cfg->io root modes, rank 0 reads
 * everything, "-" meaning standard input and output, and scatters and gathers the slices); the
 * output is written into a temporary file beside out_path (".NAME.sortex-tmp.TAG") that is
 * renamed to out_path only after every rank has succeeded. The input is never modified;
 * out_path naming the input is refused. With a record format (gensort, a layout) the records
 * move whole and the order is stable, with every cfg->io. Every rank passes the same in_path
 * and out_path strings, and cfg as for sortex_sort() (NULL: the defaults). Returns 0 or a
 * negative error code agreed by all ranks (SORTEX_EUSAGE for bad input or output: missing, a
 * directory, size not a multiple of the record size, standard input included, unwritable
 * directory; and, before anything is read, when on any rank in_path or out_path is NULL, or
 * the paths or cfg differ between the ranks, or cfg is out of range; for comm, see "Bad
 * arguments" above).
 */
SORTEX_API int sortex_sort_file(MPI_Comm comm, const char *in_path, const char *out_path,
                                const struct sortex_config *cfg, struct sortex_stats *stats);

/**
 * Writes the stats of every rank as one JSON object to path (rank 0 writes; "-" is stdout):
 * the command line (@command, may be NULL) and a UTC timestamp, parameters, n, P, threads,
 * per-phase min/avg/max over ranks, imbalance, exchange figures, peak RSS per rank, MPI
 * library, host names; the README's "The --stats file" section is its schema. Collective:
 * every rank passes its own stats, and the same cfg (that of the sort; NULL: the defaults) and
 * path; @input, @output and @command (each may be NULL) are rank 0's. Returns 0 or a negative
 * error code agreed by all ranks: SORTEX_EIO when the file cannot be written, SORTEX_EUSAGE on
 * every rank, with nothing written, when on any rank stats or path is NULL, cfg is out of
 * range, or cfg or path differ between the ranks; for comm, see "Bad arguments" above.
 */
SORTEX_API int sortex_stats_write_json(MPI_Comm comm, const struct sortex_config *cfg,
                                       const struct sortex_stats *stats, const char *input,
                                       const char *output, const char *command,
                                       const char *path);

/**
 * Prints a short human summary (phase times, imbalance, exchange volume) on stderr from rank 0.
 * Collective. When stats is NULL on any rank, no rank prints the summary: one error line says
 * why instead; for comm, see "Bad arguments" above.
 */
SORTEX_API void sortex_stats_print(MPI_Comm comm, const struct sortex_stats *stats);

#ifdef __cplusplus
}
#endif

#endif

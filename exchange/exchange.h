/*
 * exchange/exchange.h: the one contract every all-to-all exchange back-end implements.
 *
 * The sample sort hands a back-end this rank's keys grouped by destination rank together with
 * 64-bit counts per destination; the back-end delivers them so that every rank ends with the keys
 * sent to it grouped by source rank (source 0 first) and 64-bit counts per source. Every back-end
 * takes exactly these arguments and produces exactly this layout, so back-ends are
 * interchangeable and the tests and benchmarks pick up each one from the registry by itself.
 *
 * Adding a back-end: one file exchange/NAME.c defining `const struct exchange_ops
 * exchange_NAME`, and one line in the registry in exchange/registry.c.
 */
#ifndef SORTEX_EXCHANGE_H
#define SORTEX_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Room for back-end specific figures in exchange_stats (transpose bounds, schedule steps...). */
#define EXCHANGE_MAX_EXTRA 8

/** What one exchange did, as seen by this rank. */
struct exchange_stats {
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
    } extra[EXCHANGE_MAX_EXTRA];
};

/** The arguments of every back-end (Open MPI's ALLTOALLV_ARGS idea: one signature for all). */
struct exchange_args {
    MPI_Comm comm;                /* the communicator (the sort passes a private duplicate) */
    int threads;                  /* OpenMP threads a back-end may use for local copies */
    const uint64_t *send;         /* keys grouped by destination: destination 0's first */
    const uint64_t *send_counts;  /* [P] keys for each destination, own rank included */
    uint64_t *recv;               /* out: keys grouped by source; room for recv_cap keys */
    uint64_t recv_cap;            /* capacity of recv in keys (>= the total this rank receives) */
    uint64_t *recv_counts;        /* out: [P] keys received from each source */
    struct exchange_stats *stats; /* out: filled by the back-end */
};

/**
 * Runs one exchange. Collective over args->comm: every rank calls it with the same back-end.
 * Returns 0, or a negative util error code (UTIL_EUSAGE when recv_cap is too small, UTIL_EMPI,
 * UTIL_ENOMEM) after reporting once, with the rank, on stderr. Handles P = 1, empty buckets,
 * the rank's own bucket, and counts beyond INT_MAX. A rank whose recv_cap is too small still
 * takes part to the end (it receives into a buffer it throws away, see exchange_recv_target()),
 * so no peer waits for it; the others may return 0, and callers agree on the outcome afterwards,
 * as the sort does after every phase.
 */
typedef int exchange_run_fn(const struct exchange_args *args);

/** One back-end: a name for --exchange, a one-line summary for --exchange help, its run. */
struct exchange_ops {
    const char *name;
    const char *summary;
    exchange_run_fn *run;
};

/** Looks a back-end up by name; NULL when there is none. */
const struct exchange_ops *exchange_find(const char *name);
/** The registry: a NULL-terminated table of every back-end, default first. */
const struct exchange_ops *const *exchange_list(void);
/** Writes the back-end names, comma separated, into buf (for error messages). */
void exchange_names(char *buf, size_t cap);
/** Prints "NAME  summary" lines of every back-end to out, with a header line. */
void exchange_print_help(FILE *out);

/**
 * The largest count or displacement (in keys) handed to one MPI call. INT_MAX normally; the
 * environment variable SORTEX_INT_LIMIT lowers it so tests exercise the large-count paths
 * without 16 GiB messages.
 */
uint64_t exchange_int_limit(void);

/**
 * Where a rank receives @need keys: args->recv when they fit recv_cap. Otherwise it reports the
 * refusal (once, with @rank), sets *@err to UTIL_EUSAGE, and returns a new buffer of @need keys
 * (in *@drain, for the caller to free) to receive into and throw away, so that the rank still
 * takes part and no peer blocks. Never NULL: without memory for that buffer it aborts the job
 * (exchange_abort_midway()).
 */
uint64_t *exchange_recv_target(const struct exchange_args *args, uint64_t need, int rank,
                               uint64_t **drain, int *err);

/**
 * For a failure that a back-end cannot return from without leaving peers blocked: memory for a
 * buffer it needs once its peers may already be sending to it or waiting for its messages
 * (grid's and hypercube's landing and forwarding buffers, request arrays, the drain of a refused
 * receive buffer, a schedule), or for the O(P) bookkeeping a back-end allocates before its first
 * collective (agreeing on that allocation would cost every exchange one more collective).
 * Prints "rank R: exchange: WHAT" as one error line and aborts the job (MPI_Abort with exit
 * code 3). This is the one place the library does not return an error:
 * a hung job holds a whole allocation of nodes, an aborted one gives them back at once.
 */
void exchange_abort_midway(MPI_Comm comm, int rank, const char *what) __attribute__((noreturn));

/** Largest piece, in bytes, below which exchange_post_all() says yes on any node. */
#define EXCHANGE_POST_ALL_BELOW (64u << 10)

/**
 * Whether a back-end that moves its pieces in rounds (pairwise, shift) or scheduled steps
 * (direct, forward, fullduplex) should post all of them at once, in their order, instead of
 * waiting between rounds. Yes when @largest, the largest piece in bytes this rank sends or
 * receives, is below EXCHANGE_POST_ALL_BELOW (such pieces travel eagerly anyway, and a wait per
 * round costs a wake-up each: measured 1.2-2x alltoallv at 1-16 KiB per pair on 8 ranks sharing
 * 2 cores), or when this node runs more ranks than it has cores (a blocking round waits for its
 * partner to be scheduled: measured 8-12x alltoallv at 2 MiB per pair). Open MPI's
 * OMPI_COMM_WORLD_LOCAL_SIZE gives the ranks on the node; without it a core per rank is assumed.
 * Ranks decide alone: the order of posting is the schedule's on every rank either way.
 */
int exchange_post_all(uint64_t largest);

/** Adds a back-end specific figure to stats->extra (ignored when full). */
void exchange_stats_extra(struct exchange_stats *stats, const char *name, double value);

/** Exclusive prefix sums of counts[0..n) into displs[0..n); returns the total. */
uint64_t exchange_displs(const uint64_t *counts, int n, uint64_t *displs);

#ifdef __cplusplus
}
#endif

#endif

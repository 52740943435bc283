/*
 * exchange/exchange.h: the one contract every all-to-all exchange back-end implements.
 *
 * The sample sort hands a back-end this rank's elements grouped by destination rank together
 * with 64-bit counts per destination; the back-end delivers them so that every rank ends with
 * the elements sent to it grouped by source rank (source 0 first) and 64-bit counts per source.
 * An element is elem_size bytes of any content (an 8-byte key, a 100-byte gensort record, a
 * 13-byte record of an odd layout): the back-ends move bytes, never look inside an element and
 * never assume a size or an alignment; counts and capacities count elements, statistics bytes.
 * Every back-end takes exactly these arguments and produces exactly this layout, byte for byte,
 * so back-ends are interchangeable and the tests and benchmarks pick up each one from the
 * registry by itself.
 *
 * A back-end is described completely by its struct exchange_ops: its name and summary, its run,
 * and its cost models, which replay on a P x P count matrix what the run would put on the links
 * (no MPI), so that the schedule simulator (sim/) models every registered back-end.
 *
 * Adding a back-end: one file exchange/NAME.c defining `const struct exchange_ops
 * exchange_NAME` with its run and at least one model, one line in the registry in
 * exchange/registry.c, and, if it sends point-to-point messages, its tag in exchange/tags.h.
 * The test matrix, the benchmarks, the simulator and --exchange help pick it up from the
 * registry; the README's table of back-ends is written by hand.
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
    size_t elem_size;             /* bytes per element, >= 1, the same on every rank */
    const void *send;             /* elements grouped by destination: destination 0's first */
    const uint64_t *send_counts;  /* [P] elements for each destination, own rank included */
    void *recv;                   /* out: elements grouped by source; room for recv_cap of them */
    uint64_t recv_cap;            /* capacity of recv in elements (>= what this rank receives) */
    uint64_t *recv_counts;        /* out: [P] elements received from each source; or in, below */
    struct exchange_stats *stats; /* out: filled by the back-end */
    int recv_counts_known;        /* 1: recv_counts holds, on entry, what every source sends this
                                   * rank (the caller knows, as MPI_Alltoallv's caller does), and
                                   * a back-end that would exchange counts only for that skips it;
                                   * the same on every rank. 0: the back-end finds out. */
};

/**
 * Runs one exchange. Collective over args->comm: every rank calls it with the same back-end
 * and the same elem_size. Returns 0, or a negative util error code (UTIL_EUSAGE when recv_cap is
 * too small or elem_size is 0, UTIL_EMPI, UTIL_ENOMEM) after reporting once, with the rank, on
 * stderr. Handles P = 1, empty buckets, the rank's own bucket, and messages beyond INT_MAX bytes
 * (exchange_chunk_bytes()). A rank whose recv_cap is too small still
 * takes part to the end (it receives into a buffer it throws away, see exchange_recv_target()),
 * so no peer waits for it; the others may return 0, and callers agree on the outcome afterwards,
 * as the sort does after every phase.
 */
typedef int exchange_run_fn(const struct exchange_args *args);

/*
 * ---- cost models --------------------------------------------------------------------------
 *
 * The input of every model is a P x P matrix of bytes (row i, column j: bytes rank i sends to
 * rank j; the diagonal is a local copy and never crosses a link). A model replays what its
 * back-end would put on the links, round by round, and prices every round with the alpha-beta
 * model: a round costs alpha per start-up on the busiest rank plus beta per byte of the largest
 * volume one rank sends or receives in it (one port, full duplex, no contention beyond that
 * rank). The scheduled back-ends (direct, forward, fullduplex) are replayed from the very
 * schedule exchange/sched.h builds for them, at the packet size their run would choose.
 *
 * That closed form (the result's seconds) leaves out the exchange of counts before the data
 * moves, local copies (packing, regrouping, forwarding buffers), ranks sharing a node's cores
 * and links, and contention inside the network. The prediction (the result's predicted) adds
 * them from the machine the case names (exchange/machine.h): every walk also counts the
 * start-ups, bytes and copies on its critical path as the machine shares its cores and links
 * (path_startups, path_bytes, copy_bytes, sync_rounds), and the machine prices those with its
 * constants and the model's fitted factors.
 */

struct exchange_machine;

/** Largest P the models accept (the matrix has P^2 entries; 4096 is 128 MiB of counts). */
#define EXCHANGE_MODEL_MAX_P 4096

/**
 * One instance to model: the byte matrix and the machine parameters, plus the figures every
 * model shares. Fill with exchange_model_case_init(), free with exchange_model_case_free().
 */
struct exchange_model_case {
    int p;                 /* ranks */
    const uint64_t *bytes; /* [p * p] bytes i -> j, row-major; borrowed, not freed */
    uint64_t elem_bytes;   /* bytes per element the run moves (its elem_size: 8 for keys, 100
                            * for gensort records; 1 prices a matrix of bare bytes): transpose
                            * deals and the schedules cut packets in whole elements of it */
    double alpha;          /* seconds per message start-up */
    double beta;           /* seconds per byte */
    int validate;          /* 1: check every schedule built with exchange_sched_validate() */
    const struct exchange_machine *machine; /* what predicted prices with; NULL: the closed
                            * form alone (full duplex, one rank a node, no copies) */
    int counts_known;      /* 1: the receive counts are handed to the back-end (the sort);
                            * 0: it learns them itself (sortex-xbench's default), a round more */

    /* Derived by exchange_model_case_init(). */
    int packet_fixed;      /* 1: packet_bytes was asked for, and every scheduled model uses it;
                            * 0: each uses its back-end's rule (forward's cuts h finer) */
    uint64_t packet_bytes; /* packet size S: the one asked for, or direct's and fullduplex's */
    uint64_t *packets;     /* [p * p] ceil(bytes / S), diagonal 0; owned */
    uint64_t h;            /* packets: max over ranks of sent + received (diagonal excluded) */
    uint64_t send_max;     /* packets: largest row sum */
    uint64_t recv_max;     /* packets: largest column sum */
    uint64_t h_bytes;      /* bytes: max over ranks of sent + received */
    uint64_t total_bytes;  /* bytes off the diagonal: what a direct exchange moves */
};

/**
 * Sets up @c for the @p x @p byte matrix @bytes (borrowed: it must outlive @c) whose back-ends
 * move elements of @elem_bytes bytes (0 is taken as 1). @packet_bytes > 0 fixes the packet size
 * of the scheduled back-ends; 0 picks it as each of them does (exchange_model_packet_bytes()
 * with its model's target_h; the case holds the one of EXCHANGE_SCHED_TARGET_H). alpha, beta and
 * validate are left at 0 for the caller. Returns 0; UTIL_EUSAGE (one error line) when a row or
 * column sum overflows 64 bits or p is out of 1..EXCHANGE_MODEL_MAX_P; UTIL_ENOMEM.
 */
int exchange_model_case_init(struct exchange_model_case *c, int p, const uint64_t *bytes,
                             uint64_t elem_bytes, uint64_t packet_bytes);

/** Frees what exchange_model_case_init() allocated; a zeroed case is fine. */
void exchange_model_case_free(struct exchange_model_case *c);

/**
 * The packet size for the byte matrix @bytes of elements of @elem_bytes by the rule of the
 * scheduled back-ends: the same function their runs call, exchange_sched_packet_bytes() (the
 * heaviest rank's bytes sent plus received over @target_h packets, at least 64 KiB, a multiple
 * of exchange_sched_quantum(@elem_bytes): 40 bytes for 8-byte keys). @target_h 0 is
 * EXCHANGE_SCHED_TARGET_H.
 */
uint64_t exchange_model_packet_bytes(int p, const uint64_t *bytes, uint64_t elem_bytes,
                                     uint64_t target_h);

/** What one model says about one instance. Fields that do not apply are NAN (doubles). */
struct exchange_model_result {
    const char *algo;      /* the model's name */
    const char *duplex;    /* "half" or "full": the port model its steps count in */
    uint64_t rounds;       /* communication rounds (steps of the schedule for direct & co.) */
    uint64_t startups;     /* the most messages one rank sends, over the whole exchange */
    uint64_t packet_bytes; /* the packet size its steps count in: the case's, or for a model
                            * with a target_h of its own (forward) without a fixed size, its own */
    uint64_t h;            /* h in packets of packet_bytes */
    double steps;          /* length in packet steps of packet_bytes; NAN when meaningless */
    double bound;          /* the guaranteed bound on steps; NAN when there is none */
    uint64_t bytes_moved;  /* bytes on links, all ranks: forwarding, padding, headers included */
    uint64_t max_message;  /* largest single message, bytes */
    double seconds;        /* the alpha-beta model time, every round waiting for its slowest */
    double async_seconds;  /* the same transfers without rounds: each starts when both ends are
                            * free (point-to-point back-ends); NAN for the others */
    double sched_seconds;  /* measured time to compute the schedule; NAN when none is computed */
    /* The critical path as the case's machine shares cores and links (exchange/machine.h): */
    double path_startups;  /* start-ups: per round the busiest rank's, or the node's over its
                            * cores when that is more; the exchange of counts included */
    double path_bytes;     /* bytes: per round the busiest rank's (sent and received combined by
                            * the duplex share), or its node's, when more */
    double copy_bytes;     /* bytes copied locally by the busiest rank, or its node over its
                            * cores (the own block, packing and unpacking) */
    double path_rndv;      /* messages beyond the machine's eager limit, counted as path_startups
                            * are: each takes a rendezvous, a second start-up */
    double sync_rounds;    /* rounds that synchronise ranks (collectives, rounds of messages) */
    double cache_share;    /* the share of the node's buffers its last-level cache holds */
    double predicted;      /* seconds: those priced by the machine; NAN without a machine */
    char detail[192];      /* model-specific figures, "key=value" separated by ';' (may be "") */
};

/** Runs one model on @c and fills @r (initialised by exchange_model_run()). Returns 0,
 * UTIL_ENOMEM, or UTIL_EIO (an invalid schedule: an internal error, reported once). */
typedef int exchange_model_fn(const struct exchange_model_case *c, struct exchange_model_result *r);

/**
 * Equal blocks, the matrix of a sort of uniform keys: every rank sends @block bytes to every
 * other rank. Beyond EXCHANGE_MODEL_MAX_P no matrix can be held; a model with an equal-blocks
 * form prices this case from P alone, as its walk would on the full matrix (tests/35 checks
 * the two agree where both run).
 */
struct exchange_model_equal {
    int p;
    uint64_t block;      /* bytes from every rank to every other */
    uint64_t elem_bytes; /* bytes per element the back-ends deal in */
    double alpha, beta;
    const struct exchange_machine *machine; /* as in struct exchange_model_case */
    int counts_known;
};

/** Prices @e into @r (initialised by exchange_model_run_equal()). Returns 0, or UTIL_EUSAGE
 * when this back-end's equal-blocks form does not cover @e->p (then @r says nothing). */
typedef int exchange_model_equal_fn(const struct exchange_model_equal *e,
                                    struct exchange_model_result *r);

/** One cost model of a back-end. */
struct exchange_model {
    const char *name;    /* for --algos: the back-end's name, or NAME-VARIANT (alltoallv-linear) */
    const char *summary; /* one line: what the model prices, for --algos help */
    const char *duplex;  /* "half" or "full": the port model its steps count in */
    uint64_t target_h;   /* packets its back-end cuts h into when the data picks the packet size;
                          * 0 for back-ends without packets */
    exchange_model_fn *run;
    exchange_model_equal_fn *equal; /* the equal-blocks form, or NULL when there is none */
};

/**
 * Runs @m's equal-blocks form on @e into @r (its name and duplex set, NAN where a figure does not
 * apply). Returns 0; UTIL_EUSAGE when @m has no such form or it does not cover @e->p.
 */
int exchange_model_run_equal(const struct exchange_model *m, const struct exchange_model_equal *e,
                             struct exchange_model_result *r);

/**
 * Runs @m on @c: sets up @r (its name and duplex, the case's packet size and h, NAN where a
 * figure does not apply) and calls m->run. Returns what m->run returns.
 */
int exchange_model_run(const struct exchange_model *m, const struct exchange_model_case *c,
                       struct exchange_model_result *r);

/**
 * One back-end: a name for --exchange, a one-line summary for --exchange help, its run, and its
 * cost models (NULL-terminated, at least one; alltoallv has one per algorithm Open MPI may pick).
 */
struct exchange_ops {
    const char *name;
    const char *summary;
    exchange_run_fn *run;
    const struct exchange_model *const *models;
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
 * The most bytes one MPI call moves, and the largest byte count or displacement handed to one.
 * INT_MAX normally; the environment variable SORTEX_INT_LIMIT lowers it so tests exercise the
 * large-message paths without 2 GiB messages. Every MPI call of the back-ends counts bytes
 * (MPI_BYTE), so elements of 100 bytes reach the limit at INT_MAX / 100 of them.
 */
uint64_t exchange_int_limit(void);

/**
 * The chunk a long run of elements of @elem_size bytes is cut into, one MPI call each: the int
 * limit in bytes, rounded down to whole elements when an element fits in it (2147483640 bytes
 * for 8-byte keys). An element larger than the limit (a test's lowered one) is cut across
 * chunks; the chunks of a run land back to back, so it is reassembled exactly.
 */
uint64_t exchange_chunk_bytes(size_t elem_size);

/**
 * Checks what every back-end needs of @args before its first collective: elem_size >= 1.
 * Returns 0, or UTIL_EUSAGE after one error line naming @rank (every rank passes the same size,
 * so every rank returns the same).
 */
int exchange_check_args(const struct exchange_args *args, int rank);

/**
 * Where a rank receives @need elements: args->recv when they fit recv_cap. Otherwise it reports
 * the refusal (once, with @rank), sets *@err to UTIL_EUSAGE, and returns a new buffer of @need
 * elements (in *@drain, for the caller to free) to receive into and throw away, so that the rank
 * still takes part and no peer blocks. Never NULL: without memory for that buffer it aborts the
 * job (exchange_abort_midway()).
 */
void *exchange_recv_target(const struct exchange_args *args, uint64_t need, int rank, void **drain,
                           int *err);

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

/**
 * Frees the scratch memory the back-ends keep from one exchange to the next (their staging,
 * landing and forwarding buffers, kept so that a repeated exchange does not fault their pages in
 * again). A program that exchanges once and goes on working, as the sort does, calls it after
 * its exchange; otherwise the memory lasts until the process ends. Not during an exchange.
 */
void exchange_release_scratch(void);

/** Adds a back-end specific figure to stats->extra (ignored when full). */
void exchange_stats_extra(struct exchange_stats *stats, const char *name, double value);

/** Exclusive prefix sums of counts[0..n) into displs[0..n); returns the total. */
uint64_t exchange_displs(const uint64_t *counts, int n, uint64_t *displs);

#ifdef __cplusplus
}
#endif

#endif

/*
 * exchange/model.h: alpha-beta cost models of the exchange back-ends, and the count matrix a
 * sample sort would hand them, for the schedule simulator bin/sortex-sched. Pure C: no MPI
 * call is made here (the library is linked with MPI, but nothing here needs MPI_Init).
 *
 * The input of every model is a P x P matrix of bytes (row i, column j: bytes rank i sends to
 * rank j; the diagonal is a local copy and never crosses a link). Each model replays what its
 * back-end would put on the links, round by round, and prices every round with the classic
 * alpha-beta model: a round costs alpha per start-up on the busiest rank plus beta per byte of
 * the largest volume one rank sends or receives in it (one port, full duplex, no contention
 * beyond that rank). The scheduled back-ends (direct, forward, fullduplex) are replayed from
 * the very schedule exchange/sched.h builds for them, at the packet size their MPI executor
 * would choose (exchange_model_packet_bytes()).
 *
 * What every model leaves out, alike: the exchange of counts before the data moves (an
 * all-to-all or all-gather of P or P^2 counts), local copies (packing, regrouping,
 * forwarding buffers), and contention inside the network.
 */
#ifndef SORTEX_EXCHANGE_MODEL_H
#define SORTEX_EXCHANGE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "datagen/datagen.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One instance to model: the byte matrix and the machine parameters, plus the figures every
 * model shares. Fill with exchange_model_case_init(), free with exchange_model_case_free().
 */
struct exchange_model_case {
    int p;                 /* ranks */
    const uint64_t *bytes; /* [p * p] bytes i -> j, row-major; borrowed, not freed */
    uint64_t elem_bytes;   /* bytes per element the back-ends deal in: 8 (keys) or 1 (bytes) */
    double alpha;          /* seconds per message start-up */
    double beta;           /* seconds per byte */
    int validate;          /* 1: check every schedule built with exchange_sched_validate() */

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
 * deal in elements of @elem_bytes bytes. @packet_bytes > 0 fixes the packet size of the
 * scheduled back-ends; 0 picks it as each of them does (exchange_model_packet_bytes(), with the
 * target_h of its algorithm in exchange/sched.h; the case holds direct's). alpha, beta and
 * validate are left at 0 for the caller. Returns 0; UTIL_EUSAGE (one error line) when a row or
 * column sum overflows 64 bits or p is out of 1..EXCHANGE_MODEL_MAX_P; UTIL_ENOMEM.
 */
int exchange_model_case_init(struct exchange_model_case *c, int p, const uint64_t *bytes,
                             uint64_t elem_bytes, uint64_t packet_bytes);

/** Frees what exchange_model_case_init() allocated; a zeroed case is fine. */
void exchange_model_case_free(struct exchange_model_case *c);

/** Largest P the models accept (the matrix has P^2 entries; 4096 is 128 MiB of counts). */
#define EXCHANGE_MODEL_MAX_P 4096

/**
 * The packet size for the byte matrix @bytes by the rule of the MPI back-ends direct, forward and
 * fullduplex: the same function they call, exchange_sched_packet_bytes() (the heaviest rank's
 * bytes sent plus received over @target_h packets, at least 64 KiB, a multiple of 40 bytes).
 * @target_h 0 is EXCHANGE_SCHED_TARGET_H, what direct and fullduplex use.
 */
uint64_t exchange_model_packet_bytes(int p, const uint64_t *bytes, uint64_t target_h);

/** What one model says about one instance. Fields that do not apply are NAN (doubles). */
struct exchange_model_result {
    const char *algo;     /* the model's name */
    const char *duplex;   /* "half" or "full": the port model its steps count in */
    uint64_t rounds;      /* communication rounds (steps of the schedule for direct & co.) */
    uint64_t startups;    /* the most messages one rank sends, over the whole exchange */
    uint64_t packet_bytes; /* the packet size its steps count in: the case's, or for forward
                            * without a fixed size, its back-end's own */
    uint64_t h;            /* h in packets of packet_bytes */
    double steps;         /* length in packet steps of packet_bytes; NAN when meaningless */
    double bound;         /* the guaranteed bound on steps; NAN when there is none */
    uint64_t bytes_moved; /* bytes on links, all ranks: forwarding, padding, headers included */
    uint64_t max_message; /* largest single message, bytes */
    double seconds;       /* the alpha-beta model time, every round waiting for its slowest */
    double async_seconds; /* the same transfers without rounds: each starts when both ends are
                           * free (point-to-point back-ends); NAN for the others */
    double sched_seconds; /* measured time to compute the schedule; NAN when none is computed */
    char detail[192];     /* model-specific figures, "key=value" separated by ';' (may be "") */
};

/** Runs one model on @c and fills @r. Returns 0, UTIL_ENOMEM, or UTIL_EIO (an invalid
 * schedule: an internal error, reported once). */
typedef int exchange_model_fn(const struct exchange_model_case *c, struct exchange_model_result *r);

/** One model: a name for --algos, the back-end it models, a one-line summary. */
struct exchange_model {
    const char *name;    /* "alltoallv-linear" */
    const char *backend; /* the registered MPI back-end it models ("alltoallv"), or a future one */
    const char *summary; /* one line for --help */
    exchange_model_fn *run;
};

/** The models, ending with NULL, in the order the simulator reports them. */
extern const struct exchange_model *const exchange_models[];

/** The model called @name, or NULL. */
const struct exchange_model *exchange_model_find(const char *name);

/** Writes the model names, comma separated, into @buf (always terminated). */
void exchange_model_names(char *buf, size_t cap);

/**
 * The P x P count matrix (keys) a P-rank sortex run would hand its exchange for the datagen
 * input @dp (P = dp->ranks, checked with datagen_check()): every rank slice generated and
 * sorted, then proportional regular sampling with (key, position) ties, splitters at regular
 * ranks of the sorted sample and buckets cut at them, as sort/sample.c, sort/splitters.c and
 * sort/bucket.c do (re-implemented here without MPI; see model.c). @epsilon and @oversample as
 * in struct sortex_config (0: their defaults). Writes counts[src * P + dst]; the caller owns
 * it (room for P * P). Holds all n keys in memory. Returns 0; UTIL_EUSAGE (one line) when the
 * sort would refuse the sample size; UTIL_ENOMEM (one line).
 */
int exchange_model_sort_counts(const struct datagen_params *dp, double epsilon, uint64_t oversample,
                               int threads, uint64_t *counts);

#ifdef __cplusplus
}
#endif

#endif

/*
 * sim/sortmodel.h: the whole sort, modelled phase by phase without data (sortex-sched --sort).
 *
 * For P ranks of n/P elements each, every phase of a sortex run is priced from machine
 * constants measured here (struct sim_machine: the local sort's and the merge's rates, the
 * network's alpha and beta, the file I/O rate, ...) and from the sort's own rules
 * (sort/rules.h): the regular sample's size and its refusal, and for the histogram selection a
 * replay of its rounds in global-rank space, which needs no keys, since which candidates a round
 * draws and where they fall depends on the elements' global ranks alone. The exchange is priced
 * by the back-ends' own models (exchange/exchange.h) on the count matrix of the chosen pattern
 * or distribution. Each phase gets its time on the slowest rank, the most memory one rank holds
 * in it, and the bytes one rank sends.
 */
#ifndef SORTEX_SIM_SORTMODEL_H
#define SORTEX_SIM_SORTMODEL_H

#include <stdint.h>
#include <stdio.h>

#include "exchange/exchange.h"
#include "exchange/machine.h"
#include "sim/sim.h"
#include "sort/sortex.h"

/** What the model knows about the machine; sim_machine_default() holds figures measured on a
 * project machine, sim_machine_calibrate() measures them where it runs. One file holds them
 * and the exchange models' machine (exchange/machine.h), which ex keeps. */
struct sim_machine {
    double alpha;          /* seconds per message start-up (the collectives; ex.alpha as read) */
    double beta;           /* seconds per byte on a link (ex.beta as read) */
    double sort_ns_small;  /* local sort, one thread, uniform keys: ns a key at 2^20 keys */
    double sort_ns_large;  /* ... and at 2^24 keys (log-linear between and beyond) */
    double sort_speedup;   /* the local sort with two threads, over one */
    double sort_fixed;     /* seconds the first local sort of a process costs beyond its keys
                              (the kernels' calibration) */
    double merge_ns;       /* merging sorted runs, one thread: ns a key ... */
    double merge_ns_log;   /* ... plus this per key and doubling of the run count */
    double tuple_ns;       /* sorting 128-bit tuples (the candidates): ns a tuple a doubling */
    double qsort_ns;       /* qsort of (key, position) tuples (the regular sample): the same */
    double probe_ns;       /* one probe of a binary search in a rank's keys */
    double probe_cached_ns; /* one probe of a binary search in keys a core's cache holds (the
                               selection's count index) */
    double index_ns;        /* making the count's index: ns an entry (a load a stride of keys) */
    double copy_bps;       /* memcpy, bytes a second (read + write counted once) */
    double read_bps;       /* reading the input file, bytes a second per rank */
    double write_bps;      /* writing the output file, bytes a second per rank */
    int cores;             /* cores a node has: more ranks x threads share them */
    struct exchange_machine ex; /* the exchange models' machine, from the same file */
};

/** The constants measured on a project machine (2 cores; see results/sched/sort-model.md). */
void sim_machine_default(struct sim_machine *m);

/**
 * Measures the compute and I/O constants here (about 10 s, single process, scratch files in
 * @dir); alpha and beta stay as they are (sortex-sched --ping-pong measures them under mpirun).
 * Returns 0, UTIL_ENOMEM or UTIL_EIO (one line).
 */
int sim_machine_calibrate(struct sim_machine *m, const char *dir);

/** Reads "name value" lines (as sim_machine_print() writes them) into @m, the exchange
 * constants into m->ex; unknown names are an error. Returns 0 or UTIL_EUSAGE (one line naming
 * the file and line). */
int sim_machine_read(struct sim_machine *m, const char *path);

/** A machine file's line that is not an exchange constant (exchange_machine_other_fn): one of
 * the compute constants, stored into the struct sim_machine @ctx (NULL: only checked), else an
 * error naming the file and line. Returns 0 or UTIL_EUSAGE. */
int sim_machine_line(void *ctx, const char *name, const char *value, const char *path, int no);

/**
 * The machine sortex-sched --sort prices with: the built-in constants, over which the file @path
 * (when given), else SORTEX_MACHINE's, else the user's (exchange_machine_load()) is read, the
 * exchange constants into m->ex, the compute constants into @m. Returns 0 or UTIL_EUSAGE (one
 * line).
 */
int sim_machine_load(struct sim_machine *m, const char *path);

/**
 * What the predictions for up to @max_p ranks, @rpn a node, stand on, printed above the tables:
 * whose machine the constants are, which of them a cluster would change (the network's, and the
 * file rates of one process on the page cache), and how to measure one's own.
 */
void sim_machine_head(FILE *f, const struct sim_machine *m, int max_p, int rpn);

/** Writes @m as "name value" lines, with a comment line per constant: the exchange machine
 * (m->ex with m's alpha and beta), then the compute constants. */
void sim_machine_print(FILE *f, const struct sim_machine *m);

/** One sort to model. */
struct sim_sort_case {
    int p;                       /* ranks */
    uint64_t per_rank;           /* elements each rank reads */
    uint64_t elem;               /* bytes an element takes (8: keys; 100: gensort) */
    int threads;                 /* threads per rank */
    int ranks_per_node;          /* ranks sharing a node's cores */
    enum sortex_balance balance; /* the splitter selection */
    double epsilon;
    uint64_t oversample;         /* --balance sample: 0 = the sort's default */
    const struct sim_spec *matrix; /* the exchange's count pattern (keys = per_rank) */
    const struct exchange_ops *backend; /* the exchange priced in the total */
    int levels;                  /* 0: one level, by the one-level model; 1..SORTEX_LEVELS_MAX:
                                    that many as sort/levels.c runs them (sim/levelmodel.c);
                                    SIM_LEVELS_AUTO: the cheapest of 1..4 */
    int exchange_auto;           /* levels: every level's exchange as --exchange auto picks it
                                    (backend is then ignored there) */
};

/** sim_sort_case.levels: model L = 1..SORTEX_LEVELS_MAX and keep the cheapest. */
#define SIM_LEVELS_AUTO (-1)

/** The phases as the model reports them; SIM_ROW_TOTAL sums them. */
enum sim_row {
    SIM_ROW_READ,
    SIM_ROW_LOCAL_SORT,
    SIM_ROW_SAMPLE,
    SIM_ROW_SPLITTERS,
    SIM_ROW_BUCKET,
    SIM_ROW_EXCHANGE,
    SIM_ROW_FINISH,
    SIM_ROW_WRITE,
    SIM_ROW_TOTAL,
    SIM_ROW_COUNT
};

/** One phase's prediction. */
struct sim_phase {
    double seconds;      /* on the slowest rank; INFINITY when the sort would refuse */
    uint64_t rank_bytes; /* the most memory one rank holds in the phase */
    uint64_t net_bytes;  /* what one rank sends in it */
    char note[96];       /* what the figure rests on */
};

/** One level of a multi-level sort's prediction: its phases on the slowest group. */
struct sim_level {
    int k;               /* groups the level splits its group into (its ranks at the last) */
    int ranks;           /* the largest group's ranks at this level */
    double seconds[5];   /* sample, splitters, bucket, exchange, finish (the finish holds the
                            next level's communicator) */
    uint64_t messages;   /* the most messages one rank sends: the exchange's and the counts' */
    uint64_t net_bytes;  /* the most bytes one rank sends */
    uint64_t select_bytes; /* the most selection memory one rank holds: candidates, their
                              counts, the brackets, a count per rank of the group */
    uint64_t rounds;     /* histogram rounds */
    const char *exchange; /* the back-end priced (the slowest group's) */
    char note[96];       /* what the exchange figure rests on */
};

/** The whole prediction. */
struct sim_sort_result {
    struct sim_phase phase[SIM_ROW_COUNT];
    enum sortex_balance balance; /* the selection modelled (AUTO resolved) */
    uint64_t rounds;     /* histogram rounds (0 for the regular sample) */
    uint64_t candidates; /* samples or candidates gathered, all rounds */
    int refused;         /* the sort would refuse to run (the regular sample's size) */
    /* Levels (sim/levelmodel.c; levels 0 when one level was modelled the one-level way). */
    int levels;          /* the levels modelled (with SIM_LEVELS_AUTO, the cheapest) */
    int levels_rule;     /* with SIM_LEVELS_AUTO: what the sort's --levels auto would run */
    double level_total[SORTEX_LEVELS_MAX]; /* with SIM_LEVELS_AUTO: each L's total, seconds */
    struct sim_level level[SORTEX_LEVELS_MAX];
    uint64_t startups;   /* the most messages one rank sends over all levels */
    uint64_t select_bytes; /* the most selection memory one rank holds at any level */
};

/** The name of row @r as the CSV prints it ("local_sort", "total"). */
const char *sim_row_name(enum sim_row r);

/**
 * Models @sc on machine @m into @out. The exchange is priced with @sc->backend's first model on
 * the count matrix of @sc->matrix (P <= EXCHANGE_MODEL_MAX_P), or, beyond that or for a
 * pattern that needs the data, on equal blocks. Returns 0, UTIL_ENOMEM or UTIL_EUSAGE (one line).
 */
int sim_sort_model(const struct sim_sort_case *sc, const struct sim_machine *m,
                   struct sim_sort_result *out);

/**
 * Models @sc in @sc->levels levels (SIM_LEVELS_AUTO: each of 1..SORTEX_LEVELS_MAX, keeping the
 * cheapest) into @out, as sort/levels.c runs them: per level the selection replayed with the
 * sort's rules and the level's targets, the pieces' searches and counts, the exchange of the
 * level's count matrix (the back-ends' own models on it up to SIM_LEVEL_MATRIX_P ranks a group,
 * closed forms beyond), the merge and the next communicator; the phases every L shares as
 * sim_sort_model(). Patterns beyond SIM_LEVEL_MATRIX_P ranks are taken as equal blocks of their
 * mean. sim_sort_model() calls it for levels other than 0. Returns 0, UTIL_ENOMEM or UTIL_EUSAGE
 * (one line).
 */
int sim_level_model(const struct sim_sort_case *sc, const struct sim_machine *m,
                    struct sim_sort_result *out);

/** Groups up to this many ranks are modelled on their count matrix (every group of a pattern's
 * sort up to this P); beyond, equal blocks and closed forms. The sort's --exchange auto prices
 * up to 1024 ranks as well. */
#define SIM_LEVEL_MATRIX_P 1024

/**
 * Prints the levels of @res (nothing for one level modelled the one-level way): with @csv the
 * rows "P,n_per_rank,balance,exchange,levelL,seconds,select_bytes,net_bytes,note" with the
 * note "k=..;ranks=..;messages=..;rounds=..", else an indented line a level; and for
 * SIM_LEVELS_AUTO each L's total.
 */
void sim_level_print(FILE *f, const struct sim_sort_result *res, int csv, int p, uint64_t per,
                     const char *balance);

/** The read, local sort and write rows of @sc (every L shares them) into @out, a rank holding
 * @buffers bytes of element buffers. */
void sim_sort_fixed_rows(const struct sim_sort_case *sc, const struct sim_machine *m,
                         double buffers, struct sim_sort_result *out);

/** The global ranks a replayed histogram round draws, grown as sort_split_draw() hands them
 * over (sim_drawn_keep(), its callback; the caller frees r). */
struct sim_drawn {
    uint64_t *r;
    uint64_t n, cap;
};
int sim_drawn_keep(void *arg, uint64_t i);

/**
 * The machine the exchange of @sc is priced on: m->ex with m's alpha, beta and cores. A machine
 * of one node stands for the network when the P ranks do not fit one node of ranks_per_node:
 * its constants then price P / ranks_per_node nodes, which *@extrapolated says.
 */
struct exchange_machine sim_exchange_machine(const struct sim_sort_case *sc,
                                             const struct sim_machine *m, int *extrapolated);

/**
 * The exchange phase alone for back-end @b (its first model), as sim_sort_model() prices it:
 * for --exchange auto and the per-back-end rows. Returns 0, UTIL_ENOMEM or UTIL_EUSAGE.
 */
int sim_sort_exchange(const struct sim_sort_case *sc, const struct sim_machine *m,
                      const struct exchange_ops *b, struct sim_phase *out);

/** The local sort of @n keys with @threads threads on machine @m, seconds (no core sharing):
 * log-linear between the calibrated rates at 2^20 and 2^24 keys. */
double sim_local_sort_seconds(const struct sim_machine *m, double n, int threads);

/** The histogram selection's count of one candidate @gap keys after where the last ended, in
 * seconds, one thread (sort_count_cost() with the machine's probes, a miss and a hit). */
double sim_count_seconds(const struct sim_machine *m, double gap, int indexed);

/** Seconds to make the count's index of @n keys (sort_count_index()). */
double sim_count_index_seconds(const struct sim_machine *m, double n);

/*
 * The external sort (sort/ext.c), for a file larger than the ranks' memory: its plan and each
 * pass's time, the bytes it reads and writes, and the temporary space, from the machine's file
 * rates (sim_machine read_bps and write_bps, per rank) and compute rates.
 */
enum sim_ext_row {
    SIM_EXT_SAMPLE,     /* the random sample and the splitters */
    SIM_EXT_DISTRIBUTE, /* pass 1: read, classify, exchange, append to the buckets */
    SIM_EXT_SORT,       /* pass 2: load, sort and write each bucket */
    SIM_EXT_TOTAL,
    SIM_EXT_ROW_COUNT
};

struct sim_ext_result {
    struct sim_phase phase[SIM_EXT_ROW_COUNT];
    int external;           /* 1: the sort would run externally (else in memory) */
    uint64_t need;          /* bytes a rank's in-memory sort would need */
    uint64_t buckets;       /* P q */
    uint64_t rounds;        /* pass 1's rounds */
    uint64_t bucket_elems;  /* the most a bucket may hold in pass 2 */
    uint64_t temp_bytes;    /* temporary space, all ranks */
    uint64_t io_bytes[2][2]; /* [pass][read, written], all ranks */
};

/** The name of row @r ("sample", "distribute", "sort_buckets", "total"). */
const char *sim_ext_row_name(enum sim_ext_row r);

/**
 * Models the file sort of @sc with @mem bytes a rank (the sort's --mem-limit, or its default):
 * whether it runs externally (@force: always), and if so each pass as sort/ext.c plans it.
 * Returns 0, or UTIL_ENOMEM when @mem cannot hold the external sort's buffers (one line).
 */
int sim_ext_model(const struct sim_sort_case *sc, const struct sim_machine *m, uint64_t mem,
                  int force, struct sim_ext_result *out);

/** sortex-sched --sort: the command line after "--sort". Returns the exit code. */
int sim_sort_main(int argc, char **argv);

#endif

/*
 * sim/sim.h: the schedule simulator's module: the P x P count matrices exchanges are modelled
 * and benchmarked on, and the reports of bin/sortex-sched.
 *
 * A count matrix c[src][dst] (row-major, c[src * P + dst]) is what rank src sends rank dst, in
 * keys; the diagonal is the own block. It comes from
 *   - a pattern: a rule giving, for P ranks that each send V keys, the whole matrix (row sums
 *     exactly V, the own block included); rows are pure functions of (pattern, parameter, P, V,
 *     seed, src), so every rank of a benchmark computes the same matrix without communication;
 *   - sort:DIST: the counts a P-rank sort hands its exchange for the datagen input DIST of
 *     P x V keys, computed with the sort's own rules for P ranks in one process
 *     (sim_sort_counts());
 *   - file:PATH: a CSV file of P rows of P counts, as --print-matrix writes them.
 * The models of every registered back-end (exchange/exchange.h) then price the matrix
 * (sim/main.c). The module depends on exchange/, sort/, datagen/ and util/; nothing below it
 * depends on it; bench/ builds on its patterns.
 *
 * Adding a pattern: one static row function and one table line in sim/patterns.c.
 */
#ifndef SORTEX_SIM_H
#define SORTEX_SIM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "datagen/datagen.h"
#include "exchange/exchange.h"
#include "sort/sortex.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- count matrices --------------------------------------------------------------------- */

/** Longest path a file:PATH pattern may name. */
#define SIM_PATH_MAX 1024

struct sim_spec;

/**
 * Fills row[0..P) (zeroed by the caller) with the counts rank @src sends to each rank; the row
 * sums to spec->keys. Returns 0 or UTIL_ENOMEM (scratch for weights could not be allocated).
 */
typedef int sim_row_fn(const struct sim_spec *spec, int src, uint64_t *row);

/**
 * Fills matrix[src * P + dst] (zeroed by the caller) with the whole matrix, for patterns whose
 * rows cannot be computed one at a time. Returns 0, UTIL_ENOMEM or UTIL_EUSAGE (one line).
 */
typedef int sim_matrix_fn(const struct sim_spec *spec, uint64_t *matrix);

/** What a pattern's parameter is. */
enum sim_param {
    SIM_PARAM_NONE = 0,  /* it takes none */
    SIM_PARAM_NUMBER,    /* a number in [param_min, param_max] */
    SIM_PARAM_INTEGER,   /* a whole number in [param_min, param_max] */
    SIM_PARAM_DIST,      /* a datagen distribution (sort:DIST) */
    SIM_PARAM_PATH,      /* a file (file:PATH) */
    SIM_PARAM_COUNT
};

/** One count-matrix pattern. */
struct sim_pattern {
    const char *name;       /* "onehot" */
    const char *summary;    /* one line for --patterns help */
    enum sim_param param;   /* what NAME:X gives */
    const char *param_name; /* what X is called ("percent"), or NULL when it takes none */
    double param_default, param_min, param_max;
    int fixed;              /* 1: its counts are given, V does not apply (file:PATH) */
    sim_row_fn *row;        /* one row at a time; or NULL and: */
    sim_matrix_fn *matrix;  /* the whole matrix at once, costly ('all' leaves these out) */
};

/** A pattern instance: the pattern, its parameter and the matrix size. */
struct sim_spec {
    const struct sim_pattern *pattern;
    double param;  /* the pattern's parameter (its default when none was given) */
    int ranks;     /* P */
    uint64_t keys; /* V: keys each rank sends, its own block included (fixed patterns: none) */
    uint64_t seed;
    const struct datagen_dist *dist; /* sort:DIST's distribution */
    char path[SIM_PATH_MAX];         /* file:PATH's file */
};

/** The registry: a NULL-terminated table of every pattern, in the order 'all' runs them. */
const struct sim_pattern *const *sim_pattern_list(void);
/** Looks a pattern up by name; NULL when there is none. */
const struct sim_pattern *sim_pattern_find(const char *name);
/** Prints "NAME[:PARAM]  summary" lines of every pattern to out, with a header line. */
void sim_pattern_print_help(FILE *out);

/**
 * Parses "NAME" or "NAME:PARAM" into spec->pattern and its parameter (spec->param, spec->dist
 * or spec->path; other fields untouched). Returns 0, or UTIL_EUSAGE after printing one error
 * line (unknown name with the valid ones, a parameter out of range, a parameter given to a
 * pattern that takes none, one missing where it is needed).
 */
int sim_spec_parse(const char *text, struct sim_spec *spec);

/** Writes "NAME" or "NAME:PARAM" (the parameter as %g, the distribution or the file's base
 * name) into buf. */
void sim_spec_label(const struct sim_spec *spec, char *buf, size_t cap);
/** Writes the PARAM part alone ("" for a pattern without one) into buf. */
void sim_spec_param(const struct sim_spec *spec, char *buf, size_t cap);

/**
 * Fills matrix[src * P + dst] with the whole P x P count matrix. The caller owns matrix (room
 * for P * P counts). Returns 0, or a negative error after one error line: UTIL_ENOMEM,
 * UTIL_EUSAGE (a file that is not a P x P matrix, a sort the sort would refuse).
 */
int sim_spec_matrix(const struct sim_spec *spec, uint64_t *matrix);

/** The splitmix64 finaliser: the patterns' counter-based randomness. */
uint64_t sim_mix(uint64_t x);

/**
 * Reads a square CSV matrix: P lines of P non-negative integers, comma separated; lines
 * starting with '#' and blank lines are skipped; P <= EXCHANGE_MODEL_MAX_P. Stores a new array
 * of P x P counts in *@m (util_free) and P in *@p. Returns 0, UTIL_EUSAGE (one line naming the
 * file, line and field: unreadable, ragged, not square, not a count) or UTIL_ENOMEM.
 */
int sim_matrix_read(const char *path, uint64_t **m, int *p);

/** Prints the @p x @p matrix @m as sim_matrix_read() reads it, after a comment line "# @label,
 * @unit from row to column, P = @p". */
void sim_matrix_print(FILE *f, const char *label, const uint64_t *m, int p, const char *unit);

/* ---- the sort's counts ----------------------------------------------------------------- */

/**
 * The P x P count matrix (keys) a P-rank sortex run would hand its exchange for the datagen
 * input @dp (P = dp->ranks, checked with datagen_check()): every rank's slice generated and
 * sorted, then the sample, splitter and bucket phases with the sort's own rules
 * (sort/sortex.h), the collectives replaced by loops over the ranks. @epsilon, @oversample and
 * @balance as in struct sortex_config (0: their defaults). Writes counts[src * P + dst]; the caller owns it
 * (room for P * P). Holds all n keys in memory. Returns 0; UTIL_EUSAGE (one line) when the sort
 * would refuse the sample size; UTIL_ENOMEM (one line).
 */
int sim_sort_counts(const struct datagen_params *dp, double epsilon, uint64_t oversample,
                    enum sortex_balance balance, int threads, uint64_t *counts);

/* ---- reports of sortex-sched ------------------------------------------------------------ */

struct exchange_machine;

/** The CSV header line of sim_report_csv_row() (no trailing newline). */
extern const char sim_report_columns[];

/** One CSV row: the input @label, the case @c, the back-end @backend its model @r is of. */
void sim_report_csv_row(FILE *f, const char *label, const struct exchange_model_case *c,
                        const struct exchange_ops *backend, const struct exchange_model_result *r);

/** The table's head: the input, P, volume, h and packets, the machine model, the column names.
 * @models[0..n) are the models that follow (a note names those whose packets are their own). */
void sim_report_table_head(FILE *f, const char *label, const struct exchange_model_case *c,
                           const struct exchange_model *const *models, int n);

/** The machine lines of the table's head: which constants @m holds, whose machine they are, how
 * its ranks share cores or links at @p ranks, and how to measure one's own; @alpha and @beta
 * as the case prices them. */
void sim_report_machine(FILE *f, const struct exchange_machine *m, int p, double alpha,
                        double beta);

/** One table row for result @r. */
void sim_report_table_row(FILE *f, const struct exchange_model_result *r);

/** The model-specific figures under the table, one line per result with any. */
void sim_report_details(FILE *f, const struct exchange_model_result *r, int n);

/**
 * The median time of @bytes between ranks 0 and 1 of @comm (two ranks): @trials trials of @reps
 * round trips, one way each (@both 0), or of @reps exchanges both ways at once (@both 1).
 */
double sim_ping_pong_time(MPI_Comm comm, char *buf, int bytes, int trials, int reps, int both);

/**
 * Under mpirun -np 2: measures alpha (the median one-way time of an 8-byte message) and beta
 * (the median one-way time of a @size_text byte message, default 64 MiB, less alpha, per
 * byte) between the two ranks and prints them. Initialises and finalises MPI itself. Returns
 * 0, UTIL_EUSAGE (one line: a bad size, not 2 ranks), UTIL_ENOMEM or UTIL_EMPI.
 */
int sim_ping_pong(const char *size_text, int *argc, char ***argv);

/* ---- the machine ------------------------------------------------------------------------ */


/**
 * Loads the machine sortex-sched prices with into @m (exchange_machine_load(): @path, else
 * SORTEX_MACHINE, else the user's file, else the built-in constants) and points @c at it, with
 * @c's alpha and beta the machine's unless @alpha or @beta (NAN: not given) say otherwise.
 * Returns 0 or UTIL_EUSAGE (one line: the file cannot be read or is malformed).
 */
int sim_machine_setup(struct exchange_machine *m, const char *path, double alpha, double beta,
                      struct exchange_model_case *c);

/**
 * sortex-sched --calibrate, under mpirun: measures the machine the ranks run on (start-up and
 * byte costs between ranks 0 and 1, the duplex share, the synchronisation of all ranks, the
 * copies, the caches and cores; the whole-sort model's compute constants on rank 0, scratch
 * files in @dir, "" for /tmp) and prints it as a machine file on rank 0's standard output.
 * Initialises and finalises MPI itself. Returns 0, UTIL_ENOMEM, UTIL_EIO or UTIL_EMPI.
 */
int sim_calibrate(const char *dir, int *argc, char ***argv);

#ifdef __cplusplus
}
#endif

#endif

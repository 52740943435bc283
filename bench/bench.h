/*
 * bench/bench.h: the benchmark module: synthetic count matrices for the exchange micro-benchmark,
 * the key function that lets every receiver check what arrived, the machine description written
 * at the top of every results file, and the exchange measurement kernel.
 *
 * A pattern is a rule giving, for P ranks that each send V keys, the P x P matrix of counts
 * c[src][dst] (row sums are exactly V; the own block c[i][i] is part of the row). Rows are pure
 * functions of (pattern, parameter, P, V, seed, src), so every rank computes the same matrix
 * without communication, and other tools (the schedule simulator) can reuse them.
 *
 * Adding a pattern: one static row function and one table line in bench/patterns.c.
 */
#ifndef SORTEX_BENCH_H
#define SORTEX_BENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "datagen/datagen.h"
#include "exchange/exchange.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bench_spec;

/**
 * Fills row[0..P) (zeroed by the caller) with the counts rank @src sends to each rank; the row
 * sums to spec->keys. Returns 0 or UTIL_ENOMEM (scratch for weights could not be allocated).
 */
typedef int bench_row_fn(const struct bench_spec *spec, int src, uint64_t *row);

/**
 * Fills matrix[src * P + dst] (zeroed by the caller) with the whole matrix, for patterns whose
 * rows cannot be computed one at a time. Returns 0, UTIL_ENOMEM or UTIL_EUSAGE (one line).
 */
typedef int bench_matrix_fn(const struct bench_spec *spec, uint64_t *matrix);

/** One count-matrix pattern. */
struct bench_pattern {
    const char *name;       /* "onehot" */
    const char *summary;    /* one line for --patterns help */
    const char *param_name; /* what NAME:X sets ("percent"), or NULL when it takes none */
    double param_default, param_min, param_max;
    int param_integral;      /* 1: the parameter must be a whole number */
    bench_row_fn *row;       /* one row at a time; or NULL and: */
    bench_matrix_fn *matrix; /* the whole matrix at once, costly ('all' leaves these out) */
};

/** A pattern instance: the pattern, its parameter and the matrix size. */
struct bench_spec {
    const struct bench_pattern *pattern;
    double param;  /* the pattern's parameter (its default when none was given) */
    int ranks;     /* P */
    uint64_t keys; /* V: keys each rank sends, its own block included */
    uint64_t seed;
    const struct datagen_dist *dist; /* the 'sort' pattern's input distribution */
};

/** The registry: a NULL-terminated table of every pattern, in the order 'all' runs them. */
const struct bench_pattern *const *bench_pattern_list(void);
/** Looks a pattern up by name; NULL when there is none. */
const struct bench_pattern *bench_pattern_find(const char *name);
/** Prints "NAME[:PARAM]  summary" lines of every pattern to out, with a header line. */
void bench_pattern_print_help(FILE *out);

/**
 * Parses "NAME" or "NAME:PARAM" into spec->pattern and spec->param, or for 'sort' the
 * distribution "sort:DIST" into spec->dist (other fields untouched).
 * Returns 0, or UTIL_EUSAGE after printing one error line (unknown name with the valid ones,
 * a parameter out of range, a parameter given to a pattern that takes none).
 */
int bench_spec_parse(const char *text, struct bench_spec *spec);

/** Writes "NAME" or "NAME:PARAM" (the parameter as %g, or the distribution) into buf. */
void bench_spec_label(const struct bench_spec *spec, char *buf, size_t cap);
/** Writes the PARAM part alone ("" for a pattern without one) into buf. */
void bench_spec_param(const struct bench_spec *spec, char *buf, size_t cap);

/**
 * Fills row[0..spec->ranks) with the counts of rank src (0 <= src < P); sums to spec->keys.
 * Returns 0 or UTIL_ENOMEM (no message), or a whole-matrix pattern's error.
 */
int bench_spec_row(const struct bench_spec *spec, int src, uint64_t *row);

/**
 * Fills matrix[src * P + dst] with the whole P x P count matrix. The caller owns matrix (room
 * for P * P counts). Returns 0 or UTIL_ENOMEM (no message), or a whole-matrix pattern's error
 * (one line printed).
 */
int bench_spec_matrix(const struct bench_spec *spec, uint64_t *matrix);

/**
 * The key rank src sends to rank dst at position index of that block: a 64-bit hash of
 * (seed, src, dst, index). Receivers recompute it to check every key exactly.
 * bench_key_base() is the per-block part, so that bench_key_at(base, index) costs one mix.
 */
uint64_t bench_key_base(uint64_t seed, int src, int dst);
uint64_t bench_key_at(uint64_t base, uint64_t index);

/** The splitmix64 finaliser (a counter-based generator: key and pattern randomness). */
uint64_t bench_mix(uint64_t x);

/**
 * Prints the machine description as "# key: value" lines, one per line: suite, program, date,
 * commit, host, nodes, cpu, cores, memory_gib, mpi, compiler, build, allocator, P, threads,
 * ranks_per_node, oversubscribed, thp, loadavg (the 1-minute load average at the start), then
 * one line per note ("KEY=VALUE" becomes "# KEY: VALUE") and "# command: ..." from argv.
 * Collective over comm; rank 0 prints.
 */
void bench_env_print(FILE *out, MPI_Comm comm, const char *suite, int threads, int argc,
                     char **argv, const char *const *notes, int nnotes);

/** The median of v[0..n) (sorts v in place); 0 for n = 0. */
double bench_median(double *v, int n);

/** What the exchange micro-benchmark runs: every back-end on every spec at every volume. */
struct bench_xbench_config {
    const struct exchange_ops *const *backends; /* interleaved in this order in each repetition */
    int nbackends;
    const struct bench_spec *specs; /* patterns with parameters (ranks, keys, seed are set here) */
    int nspecs;
    const uint64_t *bytes; /* volumes per rank, in bytes (rounded down to whole keys) */
    int nbytes;
    int reps;    /* timed repetitions */
    int warmup;  /* untimed repetitions before them */
    int threads; /* OpenMP threads per rank */
    uint64_t seed;
    int verbose; /* rank 0 reports each pattern and volume on stderr */
};

/** The CSV header line written by bench_xbench_run() (no trailing newline). */
extern const char bench_xbench_columns[];

/**
 * Runs the exchange micro-benchmark over comm (collective) and prints one CSV row per
 * (pattern, volume, back-end) on out from rank 0 (the header line included, the "# " machine
 * description not). Buffers are allocated once for the largest case, on huge pages, and
 * pre-touched; every repetition of every back-end is checked key by key outside the timed
 * region. *invalid receives the number of rows whose check failed. Returns 0, UTIL_EUSAGE when
 * the buffers would not fit in the node's memory, or another negative util error code (a
 * back-end failure, out of memory), agreed by all ranks.
 */
int bench_xbench_run(MPI_Comm comm, const struct bench_xbench_config *cfg, FILE *out, int *invalid);

#ifdef __cplusplus
}
#endif

#endif

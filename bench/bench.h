/*
 * bench/bench.h: the benchmark module: the key and element functions that let every receiver
 * check what arrived, the machine description written at the top of every results file, and the
 * exchange measurement kernel. The count matrices it measures on are the simulator's patterns
 * (sim/sim.h).
 */
#ifndef SORTEX_BENCH_H
#define SORTEX_BENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "exchange/exchange.h"
#include "sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The key rank src sends to rank dst at position index of that block: a 64-bit hash of
 * (seed, src, dst, index). Receivers recompute it to check every key exactly.
 * bench_key_base() is the per-block part, so that bench_key_at(base, index) costs one mix.
 */
uint64_t bench_key_base(uint64_t seed, int src, int dst);
uint64_t bench_key_at(uint64_t base, uint64_t index);

/**
 * The element of @size bytes rank src sends to rank dst at position @index of that block
 * (@base = bench_key_base(seed, src, dst)), written to @out: bench_key_at(base, index) in its
 * first 8 bytes (little-endian, cut short when @size < 8), then further 64-bit hashes of
 * (key, word) for the bytes beyond. An 8-byte element is the key itself.
 */
void bench_elem_at(uint64_t base, uint64_t index, size_t size, unsigned char *out);

/**
 * Prints the machine description as "# key: value" lines, one per line: suite, program, date,
 * commit, host, nodes, cpu (the model name), cpu_family, cpu_model, cpu_stepping, caches (every
 * level from /sys), cores, memory_gib, mpi, mca (the OMPI_MCA_* settings the rank started with),
 * compiler, build, allocator, P, threads, ranks_per_node, oversubscribed, thp, loadavg (the
 * 1-minute load average at the start), then one line per note ("KEY=VALUE" becomes
 * "# KEY: VALUE") and "# command: ..." from argv.
 * Collective over comm; rank 0 prints.
 */
void bench_env_print(FILE *out, MPI_Comm comm, const char *suite, int threads, int argc,
                     char **argv, const char *const *notes, int nnotes);

/** The median of v[0..n) (sorts v in place); 0 for n = 0. */
double bench_median(double *v, int n);

/** The most bytes one rank sends, or receives, in one case: --bytes' limit, and a saved matrix's.
 * Far beyond memory, and every sum and buffer size of a case stays well within 64 bits. */
#define BENCH_MAX_BYTES ((uint64_t)1 << 40)

/** What the exchange micro-benchmark runs: every back-end on every spec at every volume. */
struct bench_xbench_config {
    const struct exchange_ops *const *backends; /* interleaved in this order in each repetition */
    int nbackends;
    const struct sim_spec *specs; /* patterns with parameters (ranks, keys, seed are set here) */
    int nspecs;
    const uint64_t *bytes; /* volumes per rank, in bytes (rounded down to whole elements) */
    int nbytes;
    size_t record_size; /* bytes per element the back-ends move: 8 for keys, any R >= 1; the
                         * patterns' counts are elements of this size */
    int reps;    /* timed repetitions */
    int warmup;  /* untimed repetitions before them */
    int threads; /* OpenMP threads per rank */
    uint64_t seed;
    int verbose; /* rank 0 reports each pattern and volume on stderr */
    int counts_given; /* 1: back-ends get the receive counts (exchange_args.recv_counts_known) */
};

/** The CSV header line written by bench_xbench_run() (no trailing newline). */
extern const char bench_xbench_columns[];

/**
 * Runs the exchange micro-benchmark over comm (collective) and prints one CSV row per
 * (pattern, volume, back-end) on out from rank 0 (the header line included, the "# " machine
 * description not). Buffers are allocated once for the largest case, on huge pages, and
 * pre-touched; every repetition of every back-end is checked element by element, every byte,
 * outside the timed region. *invalid receives the number of rows whose check failed. Returns 0,
 * UTIL_ENOMEM when the buffers would not fit in the node's memory (refused before any is
 * allocated, as sortex --mem-limit refuses), or another negative util error code (a back-end
 * failure, out of memory), agreed by all ranks.
 */
int bench_xbench_run(MPI_Comm comm, const struct bench_xbench_config *cfg, FILE *out, int *invalid);

#ifdef __cplusplus
}
#endif

#endif

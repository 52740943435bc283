/*
 * local/config.h: every tuning constant of the node-local kernels, in one table (as ips4o keeps
 * its Config): the sizes that are not read from the machine at run time, each with what it
 * controls and why it has its value. The cache sizes themselves are read at run time
 * (util/cpu.h) and the tuning built from them (local/tuning.c); tests and benchmarks pass a
 * struct local_tuning of their own to drive every path on any machine.
 */
#ifndef SORTEX_LOCAL_CONFIG_H
#define SORTEX_LOCAL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* ---- the radix sort (local/radix.c, local/kernel.c) ------------------------------------- */

/* Digit of the in-cache LSD passes: 9 bits (6 passes for 54 bits) measured faster than 8 (7
 * passes) and 11 (5 passes, but 2048-way scatters). */
#define LOCAL_LSD_BITS 9
/* The radix kernel's counts are 32-bit: it never takes a bucket this large. */
#define LOCAL_LSD_MAX_KEYS ((size_t)1 << 31)
/* Keys per software write-combining line: one 64-byte cache line. */
#define LOCAL_LINE_KEYS 8
/* Evenly spaced keys the first pass looks at before it chooses what to count. */
#define LOCAL_SAMPLE_KEYS 256
/* The widest digit one spread pass takes (2^16 buckets). */
#define LOCAL_MAX_SPREAD_BITS 16
/* Scratch words a bucket of a spread pass takes (counts and line buffers, see radix.c). */
#define LOCAL_SCRATCH_PER_BUCKET 5
/* A pass that measures plain against streaming stores times each on a 1/LOCAL_PROBE_PARTS of
 * its keys. */
#define LOCAL_PROBE_PARTS 16

/* ---- the tuning built from the caches (local/tuning.c) ----------------------------------- */

/* A spread pass writes one 64-byte line of buffer a bucket: its digit is log2(L2 / 512) bits,
 * an eighth of the L2 in line buffers, clamped to this range. */
#define LOCAL_SPREAD_BITS_MIN 8
#define LOCAL_SPREAD_BITS_MAX 12
/* Radix kernel: buckets of L2 / 32 keys (bucket and scratch fill half the L2). */
#define LOCAL_RADIX_BUCKET_DIV 32
/* Fewer keys than this are sorted by one thread. */
#define LOCAL_PAR_MIN_KEYS ((size_t)1 << 17)
/* The radix kernel sorts buckets of at most this many keys by insertion. */
#define LOCAL_SMALL_KEYS 32
/* Spread passes over more than this many L2s of bytes may use streaming stores. */
#define LOCAL_STREAM_L2S 4
/* vqsort: one thread spreads only inputs beyond this many L3s (below, its partitioning levels
 * run from the L3 and cost less than a pass) ... */
#define LOCAL_VQ_SPREAD_L3S 4
/* ... and threads take sorted chunks and a merge below this many buckets. */
#define LOCAL_VQ_MERGE_BUCKETS 8
/* vqsort with at most this many threads (and at most LOCAL_MERGE_THREADS_MAX) takes sorted
 * chunks and a merge instead of a spread. */
#define LOCAL_VQ_MERGE_THREADS 4
/** The most threads the chunks-and-merge path of the vqsort kernel takes. */
#define LOCAL_MERGE_THREADS_MAX 16

/* ---- the merges (local/merge.c, local/rmerge.c) ------------------------------------------- */

/** Buckets at least this large in the merge, or merges of fewer keys, run on one thread. */
#define LOCAL_MERGE_PAR_MIN ((size_t)1 << 16)
/* How far ahead of a run's read position the loser tree prefetches (in keys). */
#define LOCAL_PREFETCH_KEYS 64
/* Up to this many runs the loser tree merges from both ends (see merge_tree()). 2^25 keys on
 * one thread: 1.2-1.6x faster for 3 to 24 runs, 1.1-1.15x for 32 and 48, 0.8x for 64, where
 * the two ends' 128 read streams outrun the prefetchers. */
#define LOCAL_MERGE_BOTH_ENDS_MAX 32
/* How far ahead of a run's read position the record tree prefetches, in records. */
#define LOCAL_REC_PREFETCH 8
/**
 * Finishing P sorted runs: local_merge_runs() with T threads is faster than local_sort() of the
 * concatenation up to about this many runs per thread, slower beyond. With the vqsort kernel on
 * an AVX-512 CPU (10^7 uniform keys) the merge / re-sort ratio fell below 1 between 4 and 16
 * runs at one thread and between 16 and 64 at two; the figures are in results/localsort (the
 * crossover table, sortex-localsort --runs). The merge is memory-bound per run and the re-sort
 * is not, so the crossover moves with the threads.
 */
#define LOCAL_MERGE_RUNS_PER_THREAD 12
/**
 * Finishing P sorted runs of records: local_merge_record_runs() is faster than
 * local_record_sort() of the concatenation up to this many runs, slower beyond, at one thread
 * and at two alike: every thread's part of the merge meets all P runs, so unlike the keys'
 * rule this one does not scale with the threads. `sortex-localsort --format gensort --n 1e7
 * --runs P --threads 2 --algo sortex,merge` (records at the sort's stride): the merge 1.9x to
 * 4.4x faster at P = 2 to 8, 1.4x at 24, slower from 32 on (0.70 s against 0.54 s).
 */
#define LOCAL_RECORD_MERGE_RUNS 24

/* ---- the records' tuples (local/records.c, local/rmerge.c) -------------------------------- */

/** Key bytes a tuple carries: 8 in its high word, 2 at the top of its low word. */
#define LOCAL_TUPLE_KEY_BYTES 10
/** Bits of the low word below those key bytes: a record's index (records.c) or a run's
 * number (rmerge.c); a sort takes fewer than 2^48 records. */
#define LOCAL_TUPLE_INDEX_BITS 48
/* Below this many records one thread does everything. */
#define LOCAL_REC_PAR_MIN ((size_t)1 << 15)

#endif

/*
 * local/local.h: the node-local kernels, the contract of the local module (no MPI; below sort/,
 * beside exchange/, datagen/ and verify/, on util/ alone).
 *
 * For 8-byte keys:
 *   - local_sort(): an OpenMP-parallel MSD radix sort whose buckets end in an in-cache kernel
 *     (local/radix.c, local/kernel.c), tuned from the caches read at run time and a short
 *     calibration (local/tuning.c);
 *   - local_merge_runs(): a threaded multi-way merge of sorted runs (local/merge.c).
 * For fixed-size records with a byte-string key, stably:
 *   - local_record_sort(): tuples of key prefix and index, sorted, then one permutation
 *     (local/records.c);
 *   - local_merge_record_runs(): the multi-way merge of sorted runs of records (local/rmerge.c).
 * Every tuning constant is in local/config.h.
 *
 * None allocates big buffers: the caller allocates the arrays once (util_alloc_big) and reuses
 * them; the kernels only take small bookkeeping arrays from util_malloc(). All are callable
 * from C++ (the benchmark baselines link against them).
 */
#ifndef SORTEX_LOCAL_H
#define SORTEX_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "local/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The in-cache kernel that sorts a bucket once the spread passes made it small enough. */
enum local_kernel {
    LOCAL_KERNEL_AUTO,   /* whichever a short calibration measured faster on this CPU */
    LOCAL_KERNEL_RADIX,  /* LSD radix sort over the bucket's varying bits, with scratch */
    LOCAL_KERNEL_VQSORT, /* Highway's vectorised quicksort, in place (local/vqsort.cc) */
    LOCAL_KERNEL_COUNT
};

/**
 * How a spread pass over at least stream_keys keys writes its buckets. Whether streaming stores
 * pay depends on the CPU and on the pass (local_sort.c, scatter_chunk()), so AUTO measures it:
 * every thread of such a pass scatters a sixteenth of its keys each way, times both, and
 * scatters the rest the faster way.
 */
enum local_scatter {
    LOCAL_SCATTER_AUTO,   /* measured by every pass, on its first keys */
    LOCAL_SCATTER_PLAIN,  /* one store per key, through the caches */
    LOCAL_SCATTER_STREAM, /* software write-combining lines and streaming stores */
    LOCAL_SCATTER_COUNT
};

/**
 * What the local sort is tuned by. Nothing here is a constant for one CPU: the process default
 * (local_tuning_default()) is computed once from the cache sizes read at run time
 * (util/cpu.h) and a calibration of the kernels; tests and benchmarks pass their own to
 * local_sort_tuned() to drive every path on any machine.
 */
struct local_tuning {
    enum local_kernel kernel; /* AUTO is resolved by the calibration */
    size_t bucket_keys;        /* buckets of at most this many keys go to the kernel */
    unsigned spread_bits;      /* widest digit of one spread pass: 2^bits buckets, 1..16 */
    size_t spread_min_keys;    /* fewer keys than this go to the kernel whole, never spread */
    unsigned spread_levels;    /* a key takes at most this many spread passes before its
                                  bucket goes to the kernel, whatever its size; 0 = no limit */
    size_t par_min_keys;       /* fewer keys than this are sorted by one thread */
    size_t small_keys;         /* radix kernel: buckets of at most this many keys, insertion */
    size_t stream_keys;        /* spread passes over at least this many keys may write whole
                                  cache lines around the caches (streaming stores); 0 = never */
    enum local_scatter scatter; /* how such passes scatter (AUTO: measured, see below) */
    int merge_threads;         /* vqsort with at most this many threads (and at most
                                  LOCAL_MERGE_THREADS_MAX) and fewer than merge_max_keys keys:
                                  sorted chunks and a merge instead of a spread; 0 = never */
    size_t merge_max_keys;
    double kernel_ns_per_key;  /* the calibration's time of the kernel, a key in cache; 0 =
                                  not measured (a caller's own tuning) */
    uint64_t *progress;        /* when not NULL, keys whose place is final are added here
                                  (atomically) as the sort goes: --progress reads it */
};


/**
 * The process default, filled into @t: the kernel is whichever sorted a bucket filling half the
 * L2 faster in a calibration of a few milliseconds, run once per process (SORTEX_KERNEL=radix or
 * vqsort forces it). For an L2 of S bytes per core, the radix kernel takes buckets of S/32 keys
 * (bucket and scratch fill half the L2), spread digits of up to log2(S/512) bits (one 64-byte
 * line of buffer per bucket fills an eighth of the L2); vqsort takes buckets of any size, so
 * spreads only make buckets for the threads (local_sort.c says why).
 */
void local_tuning_default(struct local_tuning *t);

/**
 * Seconds local_sort() is expected to take for @n uniform keys on @threads threads here,
 * from the calibration's rate (0 when it did not run): what --progress says while the sort is
 * one call it cannot count inside. A model, not a measurement: vqsort's time per key grows by
 * ~6% a doubling beyond the calibrated bucket (measured on an AVX-512 CPU, 2^14 to 2^24 keys).
 */
double local_sort_estimate(size_t n, int threads);

/** The kernel's name ("radix", "vqsort"; "auto" for LOCAL_KERNEL_AUTO). */
const char *local_kernel_name(enum local_kernel kernel);


/**
 * Sorts @keys[0..n) ascending in place with @threads OpenMP threads and the process's tuning.
 *
 * @scratch must hold @n keys, must not overlap @keys, and is clobbered; the sorted result is
 * always in @keys. Both arrays belong to the caller, who should pre-touch them (util_pretouch):
 * page faults inside the sort are counted in its time. Already sorted, reverse-sorted and
 * all-equal input are detected in one read-only pass (reverse input is then reversed).
 *
 * Returns 0, or UTIL_EUSAGE when @threads < 1 or a pointer is NULL while @n > 1. It does not
 * fail for lack of memory: when its small bookkeeping arrays cannot be allocated it finishes
 * the sort on one thread with the radix kernel's fixed buffers. Never exits, prints nothing.
 */
int local_sort(uint64_t *keys, uint64_t *scratch, size_t n, int threads);

/** local_sort() with the tuning @t (NULL: the process default). */
int local_sort_tuned(uint64_t *keys, uint64_t *scratch, size_t n, int threads,
                            const struct local_tuning *t);

/**
 * local_sort_tuned() that leaves the sorted keys in whichever of @keys and @scratch
 * the algorithm ended in, and says which in *@sorted: callers that own both arrays (the sort's
 * phases) save the copy back. The other array is clobbered.
 */
int local_sort_either(uint64_t *keys, uint64_t *scratch, size_t n, int threads,
                             const struct local_tuning *t, uint64_t **sorted);

/** Highway's vqsort of @keys[0..n) ascending (local/vqsort.cc). Thread-safe. */
void local_vqsort_u64(uint64_t *keys, size_t n);
/** Highway's vqsort of @n 128-bit numbers, each two uint64 (low, then high; 16-byte aligned),
 * ascending by (high, low). Thread-safe. */
void local_vqsort_u128(uint64_t *pairs, size_t n);

struct util_format;

/** The place of one record in a sort of records (local/records.c): the first 10 key bytes as an
 * 80-bit big-endian number (hi, then the top 16 bits of lo) and the record's index (the low 48
 * bits of lo), ordered as one 128-bit number. Laid out as Highway's uint128_t. */
struct local_rec_tuple {
    uint64_t lo, hi;
};

/**
 * Sorts @n records of the byte-key format @f (util/format.h) stably by key: records with equal
 * keys keep their input order. @records holds them back to back; @scratch has room for @n
 * records and @tuples for local_record_tuples(@n, @f) tuples (16-byte aligned; @scratch too);
 * both are clobbered (@scratch lends its room to the tuples' merges before it takes the
 * records). On success
 * *@sorted names the array that holds the sorted records (@scratch; @records when n < 2).
 * Tuples of (first 10 key bytes, index) are sorted with vqsort (T threads: chunks and merges),
 * longer keys finished by their remaining bytes, then the records permuted once.
 * Returns 0, UTIL_EUSAGE (threads < 1, a NULL array, a format that is not a byte key, n at or
 * beyond 2^48), or UTIL_ENOMEM (keys over 10 bytes with no room for the list of ties).
 */
/** Tuples local_record_sort() needs room for: @n, or 2 @n when a record is smaller than a
 * tuple and @scratch cannot lend the room for the second half. */
size_t local_record_tuples(size_t n, const struct util_format *f);

int local_record_sort(void *records, void *scratch, struct local_rec_tuple *tuples, size_t n,
                       const struct util_format *f, int threads, void **sorted);

/**
 * The first 10 bytes of a @key_size-byte key at @k as an 80-bit big-endian number: *@hi the
 * first 8 (zero padded when K < 8), *@ext the next 2 (zero padded). Order of (hi, ext) is the
 * memcmp() order of the first 10 bytes; keys of at most 10 bytes compare completely.
 */
static inline void local_rec_key10(const unsigned char *k, size_t key_size, uint64_t *hi,
                                    uint64_t *ext)
{
    uint64_t h = 0, e = 0;
    if (key_size >= 8) {
        __builtin_memcpy(&h, k, 8);
        h = __builtin_bswap64(h);
        e = key_size >= LOCAL_TUPLE_KEY_BYTES ? ((uint64_t)k[8] << 8 | k[9]) : key_size == 9 ? (uint64_t)k[8] << 8 : 0;
    } else {
        for (size_t j = 0; j < key_size; j++) {
            h |= (uint64_t)k[j] << (56 - 8 * j);
        }
    }
    *hi = h;
    *ext = e;
}


/**
 * Merges @runs runs of records of the byte-key format @f into @out, stably, with @threads
 * OpenMP threads: records with equal keys leave in run order, and in their order within a run.
 *
 * @in holds the runs back to back (run r has @run_counts[r] records of f->record_size bytes),
 * each sorted stably by key (not checked); @out receives all of them and must not overlap @in.
 * The output is cut into @threads equal parts by exact multi-sequence selection in the order
 * (key, run, position), and each part merged by a loser tree whose nodes carry the first 10
 * key bytes and the run, so that a comparison reads no record unless two keys agree in their
 * first 10 bytes and are longer.
 *
 * Returns 0, UTIL_EUSAGE (runs < 0, threads < 1, a format that is not a byte key, a NULL array
 * with records to merge), or UTIL_ENOMEM when its small bookkeeping arrays cannot be allocated
 * (before any record is written). Never exits and prints nothing.
 */
int local_merge_record_runs(const void *in, const uint64_t *run_counts, int runs, void *out,
                             const struct util_format *f, int threads);


/**
 * Merges @runs sorted runs into @out with @threads OpenMP threads.
 *
 * @in holds the runs back to back: run r has @run_counts[r] keys (zero is fine) and starts
 * where run r-1 ends; each run must be sorted ascending (not checked). @out receives all
 * sum(run_counts) keys in ascending order; it must not overlap @in. The output is split into
 * @threads equal parts by exact multi-sequence selection, so the parts are independent and
 * balanced whatever the duplicates; each part is merged with a loser tree (a branch-free
 * two-way merge when only two runs are left in it), from both ends at once up to 32 runs.
 *
 * Returns 0, UTIL_EUSAGE when @runs < 0, @threads < 1 or a needed pointer is NULL, or
 * UTIL_ENOMEM when its small bookkeeping arrays cannot be allocated (checked before any key is
 * written: @out is then untouched). Never exits and prints nothing.
 */
int local_merge_runs(const uint64_t *in, const uint64_t *run_counts, int runs, uint64_t *out,
                      int threads);

#ifdef __cplusplus
}
#endif

#endif

/*
 * sort/internal.h: the state one sort carries from phase to phase, and the phase functions.
 * Each phase lives in its own file; sort/sortex.c runs them in order.
 */
#ifndef SORTEX_SORT_INTERNAL_H
#define SORTEX_SORT_INTERNAL_H

#include <mpi.h>
#include <stdint.h>

#include "exchange/exchange.h"
#include "sort/local_sort.h"
#include "sort/rules.h"
#include "sort/sortex.h"
#include "util/format.h"
#include "util/util.h"

/* A key made unique by its global position in the locally sorted concatenation of all ranks'
 * inputs (rank r's sorted keys occupy positions offset_r .. offset_r + n_r - 1). Ordering by
 * (key, pos) breaks ties by (rank, position), which keeps duplicate-heavy inputs balanced. */
struct sort_tuple {
    uint64_t key;
    uint64_t pos;
};

struct sort_progress;
struct sort_select;

struct sort_job {
    MPI_Comm comm; /* private duplicate of the caller's communicator */
    int rank, size;
    const struct sortex_config *cfg;
    const struct exchange_ops *exchange;
    int threads;
    int host_threads; /* the caller's omp_get_max_threads(), restored when the sort ends */
    double epsilon;
    enum sortex_balance balance; /* the selection this sort runs: cfg's, AUTO resolved */

    /* The elements the sort moves: 8-byte numbers (fmt NULL, rsize 8), or records of a
     * byte-key format (fmt), rsize bytes each, back to back in memory as in the files: the
     * exchange back-ends move elements of any size whole. Counts and capacities are in
     * elements; the buffers below are uint64_t for the numbers and bytes for records. */
    const struct util_format *fmt; /* byte-key format, or NULL for numbers */
    size_t rsize;                  /* bytes per element, in files and in memory */
    MPI_Datatype mem_type;         /* one element, for MPI-IO and root I/O */

    /* Element buffers: `a` holds the input, then the output; `b` is sort scratch and receive
     * buffer. Both are allocated once, with room for `cap` elements. */
    uint64_t *a, *b;
    uint64_t cap_a, cap_b;
    uint64_t touched_a, touched_b; /* elements from the start already faulted in (resident) */
    uint64_t n_local;   /* keys this rank holds in a (sorted after local_sort) */
    uint64_t n_total;   /* keys on all ranks */
    uint64_t offset;    /* this rank's first position in the global input order */

    /* Sample and splitters. Records: each sample or splitter is a blob of `blob_words`
     * words, the key bytes (zero padded to whole words) then the position (rsample,
     * rsplitters); the numbers use the tuples. */
    size_t blob_words;
    uint64_t *rsample, *rsplitters;
    struct sort_tuple *sample; /* every rank's samples, sorted */
    uint64_t nsample;
    uint64_t oversample;
    struct sort_tuple *splitters; /* P-1 tuples, identical on every rank */
    struct sort_select *select;   /* --balance eps, exact: the search between the two phases */

    /* Bucket and exchange. */
    uint64_t *send_counts; /* [P] */
    uint64_t *recv_counts; /* [P] */
    uint64_t n_recv;

    /* Result: the rank's sorted slice. */
    uint64_t *out; /* a or b */
    uint64_t n_out;

    /* --check: the checksum of the input as read (file encoding), summed over all ranks. */
    uint64_t check_in[3];

    /* Files (sortex_sort_file only). */
    const char *in_path, *out_path;
    struct util_file_id in_id; /* rank 0: the input as it was checked, before any read */
    char *tmp_path; /* identical on every rank, or NULL on every rank */
    int tmp_created; /* rank 0: it created tmp_path (so it may remove it) */
    uint64_t *stage; /* root I/O: rank 0's whole input, inner tree nodes' bundles */
    uint64_t stage_cap;

    struct sort_progress *progress; /* rank 0 with --progress: the reporter (progress.c) */

    struct sortex_stats *stats;
    struct sortex_config cfg_default;  /* used when the caller passes no config */
    struct sortex_stats stats_local;   /* used when the caller wants no stats */
};

/* Phases. Each returns 0 or a negative util error code after reporting it (with the rank). */
int sort_read(struct sort_job *job);
int sort_local(struct sort_job *job);
int sort_sample(struct sort_job *job);
int sort_splitters(struct sort_job *job);
/* Phases 3 and 4 with --balance eps or exact (sort/select.c): the first round's candidates,
 * then the histogram rounds; sort_select_free() drops the search state after a failure. */
int sort_select_sample(struct sort_job *job);
int sort_select_splitters(struct sort_job *job);
void sort_select_free(struct sort_job *job);
int sort_bucket(struct sort_job *job);
int sort_exchange(struct sort_job *job);
int sort_finish(struct sort_job *job);
int sort_write(struct sort_job *job);

/* Root I/O (sort/io_root.c). sort_root_load: rank 0 reads the whole input (a file or standard
 * input) into job->stage and every rank learns n_total. sort_root_scatter: the slices reach
 * their ranks (binomial tree or MPI_Scatterv). sort_root_gather: the sorted slices return to
 * rank 0, which writes them to fd (valid on rank 0 only). */
int sort_root_load(struct sort_job *job);
int sort_root_scatter(struct sort_job *job);
int sort_root_gather(struct sort_job *job, int fd);

/* The self-check of --check (sort/check.c): the multiset checksum of the input as read, then
 * the order and the checksum of the output, compared over all ranks. */
int sort_check_input(struct sort_job *job);
int sort_check_output(struct sort_job *job);

/* Agrees on an outcome: every rank passes its own code and gets the most severe (lowest) of all;
 * of the error lines held back meanwhile (util_report_defer()), the lowest rank's is printed
 * and the others dropped, so one failure gives one line. Collective. */
int sort_agree(const struct sort_job *job, int err);

/* Rank r's first key in the global input order when n keys are split over p ranks. */
static inline uint64_t sort_slice_begin(uint64_t n, int p, int r)
{
    return (uint64_t)(((unsigned __int128)n * (unsigned)r) / (unsigned)p);
}

/* After the write phase (or a failure anywhere): with err == 0 rank 0 renames the temporary
 * file to the output name; otherwise it removes the temporary file. Collective; returns the
 * agreed outcome. */
int sort_write_commit(struct sort_job *job, int err);

/* Makes sure job->b (or a) holds n elements faulted in: within its room it faults in what is
 * not yet, beyond it reallocates (within cfg->mem_limit; the old contents are not kept). */
int sort_reserve(struct sort_job *job, uint64_t **buf, uint64_t *cap, uint64_t n);

/* Gives job->b (or a) room for @room elements of which the first @touch are faulted in now,
 * the rest when sort_reserve() asks for them. */
int sort_reserve_room(struct sort_job *job, uint64_t **buf, uint64_t *cap, uint64_t room,
                      uint64_t touch);

/* Exchanges job->a and job->b with their room and resident counts. */
void sort_swap_buffers(struct sort_job *job);

/* Returns UTIL_EINJECT (after reporting it) when SORTEX_FAIL names this phase and rank: the
 * failure-injection hook of the reliability tests. SORTEX_FAIL=PHASE or PHASE:RANK. */
int sort_injected(const struct sort_job *job, enum sortex_phase phase);

/* --progress (sort/progress.c). open/close: rank 0 starts and stops the reporter thread
 * (nothing on other ranks or without --progress). begin/end: run_phase() marks the running
 * phase. measure: the phase says how much work it has (@total @unit, "bytes" or "keys"), or
 * when it cannot count, how long it expects to take (@estimate seconds, 0 = unknown). add:
 * units done; counter: the counter itself, for kernels that add to it (NULL without
 * --progress). All are no-ops without a reporter. */
int sort_progress_open(struct sort_job *job);
void sort_progress_close(struct sort_job *job);
void sort_progress_begin(struct sort_job *job, enum sortex_phase phase);
void sort_progress_measure(struct sort_job *job, uint64_t total, const char *unit,
                           double estimate);
uint64_t *sort_progress_counter(struct sort_job *job);
void sort_progress_add(struct sort_job *job, uint64_t units);
void sort_progress_end(struct sort_job *job);

/* The stall hook of the reliability tests: SORTEX_STALL=POINT:RANK:SECONDS makes that rank
 * announce itself on stderr and sleep when it reaches POINT (a phase's name, at the phase's
 * start; "read-chunk", after each chunk the MPI-IO read took; "exchange-run", when the
 * exchange has its --progress estimate and its back-end is about to run; or "commit", just before rank 0
 * renames the finished output into place), so that a test can kill or signal the job while
 * it waits there, or watch --progress report a slow phase. */
void sort_stall_at(const struct sort_job *job, const char *point);

/* MPI_File_open of @path on job->comm (collective), paths of any length (see mpiio.c); @phase
 * names the phase in the error line. Returns 0 or UTIL_EIO after reporting it. */
int sort_file_open(struct sort_job *job, const char *path, int amode, MPI_File *fh,
                   const char *phase);

/* Rank 0 of root I/O writing to "-": where the output goes (see io_root.c). */
int sort_root_stdout(void);

/* Reads the output of the sample phase: compares tuples. */
int sort_tuple_cmp(const void *x, const void *y);

/* Records: the memcmp() order of the keys of two elements in memory. */
static inline int sort_rec_cmp(const struct sort_job *job, const void *x, const void *y)
{
    return util_format_cmp(job->fmt, x, y);
}

/* Elements per collective read or write: 128 MiB, small enough for --progress to see the
 * read and the write advance, and far below MPI's int counts. */
static inline uint64_t sort_io_chunk(const struct sort_job *job)
{
    return ((uint64_t)1 << 27) / job->rsize;
}

/* Element i of a buffer. */
static inline void *sort_elem(const struct sort_job *job, uint64_t *buf, uint64_t i)
{
    return (unsigned char *)buf + i * job->rsize;
}

/* The sort of records (sort/records.c, sortex_record_sort()) over job buffers: sorts n
 * elements of src stably by key into dst; tuples are allocated here. */
int sort_records(struct sort_job *job, uint64_t *src, uint64_t *dst, uint64_t n);

/* sortex_stats_print() for a caller that has the sort's configuration (bin/sortex -v): it
 * counts records for a byte-key format (keys otherwise), and shows the check only when @cfg
 * asked for it. With @cfg NULL: keys, and the check as st->check says. (sort/stats.c) */
void sort_stats_summary(MPI_Comm comm, const struct sortex_config *cfg,
                        const struct sortex_stats *st);

#endif

/*
 * sort/internal.h: the state one sort carries from phase to phase, the phase functions, and the
 * helpers they share (internal header of sort/). Each phase lives in its own file; the job's
 * helpers in sort/job.c; sort/sortex.c runs the phases in order and nothing calls back into
 * it. The file front end carries the io_ prefix (io_paths, io_read, io_write, io_mpiio,
 * io_root); the external sort the ext_ prefix (sort/ext.h).
 */
#ifndef SORTEX_SORT_INTERNAL_H
#define SORTEX_SORT_INTERNAL_H

#include <mpi.h>
#include <stdint.h>

#include "exchange/exchange.h"
#include "exchange/tags.h"
#include "local/local.h"
#include "sort/rules.h"
#include "sort/sortex.h"
#include "util/format.h"
#include "util/util.h"
#include "verify/verify.h"

struct ext;
struct sort_progress;
struct sort_select;

/*
 * The level that runs (sort/levels.c), while the sort has more than one: the job's comm, rank,
 * size, n_total, offset and n_local then describe this rank's group of the level (its elements,
 * its first position in the group's order), and this says how the group splits and where it
 * sits in the whole sort. With one level the job has none (level NULL): the group is the sort.
 */
struct sort_level {
    int index;             /* 0 for the first level */
    int k;                 /* groups the group splits into; its size at the last level */
    int first_rank;        /* the group's first rank among all of the sort's */
    uint64_t group_offset; /* elements of the whole sort before the group's first */
    uint64_t n_world;      /* elements of the whole sort */
    int p_world;           /* ranks of the whole sort */
    int last;              /* 1: every group is one rank (k = size): the one-level sort */
    uint64_t *total;       /* [k] elements each group receives (bucket phase, not the last) */
    uint64_t count_msgs;   /* messages this rank sent with the counts (not the last level) */
};

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
    uint64_t *cut;                /* [P] the histogram selection's: this rank's elements below
                                     each splitter, the bucket boundaries (bucket.c) */
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

    /* The external sort (sort/ext.c): the memory a rank plans for, bytes, and whether it
     * runs. */
    uint64_t mem_budget;
    struct ext *ext; /* its state while it runs */

    /* Levels (sort/levels.c): how many the sort runs, and the one that runs (NULL with one). */
    int levels;
    int world_rank; /* the rank in the whole sort, whichever level runs */
    struct sort_level *level;

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

/* Levels (sort/levels.c). choose: the levels this sort runs (job->levels, stats), once n_total
 * is known: cfg's, or for 0 sort_levels_choose()'s. run: the phases from sample to finish, level
 * by level, each level in its groups; with one level those phases as they always ran. */
void sort_levels_choose_job(struct sort_job *job);
int sort_levels_run(struct sort_job *job);

/* The buckets the selection splits the job's elements into (the groups of the level that runs,
 * else the ranks), and the global rank splitter @j (1 <= j < buckets) aims at among the
 * job's n_total (sort_split_target(), or the level's sort_level_target()); the window
 * half-width of every splitter (sort_split_tolerance() of the whole sort). (sort/job.c) */
int sort_buckets(const struct sort_job *job);
uint64_t sort_target(const struct sort_job *job, int j);
uint64_t sort_tolerance(const struct sort_job *job);

/* The sort's own MPI tags, numbered from the first the back-ends leave free. */
enum sort_tag {
    SORT_TAG_IO_TREE = EXCHANGE_TAG_FIRST_FREE, /* root I/O: binomial scatter and gather */
    SORT_TAG_LEVEL_COUNTS,                      /* levels: what a sender deals a receiver */
    SORT_TAG_LEVEL_GROUP,                       /* levels: MPI_Comm_create_group's tag */
    SORT_TAG_COUNT
};

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

/* The parts of the output check, for a rank that sees its output piece by piece (the external
 * sort): pairs out of order in @n elements of @buf (threaded); their checksum in the file
 * encoding (@ordered: numbers are in the sort's ordered form and are mapped back first); the
 * verdict from the out-of-order count @bad of the rank's whole output of @n elements, its first
 * and last elements (ordered form; NULL when n = 0) and its checksum, against job->check_in
 * (collective); and the test hook SORTEX_CORRUPT applied to @n elements of @buf. */
uint64_t sort_check_descents(const struct sort_job *job, const void *buf, uint64_t n);
struct verify_checksum sort_check_sum(const struct sort_job *job, const void *buf, uint64_t n,
                                      int ordered);
int sort_check_verdict(struct sort_job *job, uint64_t bad, uint64_t n, const void *first,
                       const void *last, struct verify_checksum sum);
void sort_check_corrupt(const struct sort_job *job, void *buf, uint64_t n);

/*
 * The job's life (sort/job.c). open: before any MPI call, the job empty, the caller's config (or
 * the defaults) and stats (or a local one, cleared); checks @comm (its line printed at once: no
 * communicator, no agreement), then holds error lines back and checks cfg. init: the private
 * communicator, the ranks' agreement on the arguments (@err: this rank's verdict so far), the
 * threads, epsilon, the back-end, the counts' arrays, --progress; all ranks agree on the
 * outcome (with an unusable comm, @err without an MPI call). free: all of it, the caller's
 * OpenMP threads setting restored.
 */
struct sort_args;
int sort_job_open(struct sort_job *job, MPI_Comm comm, const struct sortex_config *cfg,
                  struct sortex_stats *stats, const char *fn);
int sort_job_init(struct sort_job *job, MPI_Comm comm, struct sort_args *args, int err);
void sort_job_free(struct sort_job *job);

/* The sizes the sort plans with (sort/job.c): the largest slice a rank can end with (the
 * selection's bound, at most n); the part of a buffer faulted in up front; the memory one
 * rank's in-memory sort of a file needs; the oversampling factor of the regular sample (the
 * user's, or the smallest that guarantees epsilon), with the bound the stats state. */
uint64_t sort_output_bound(const struct sort_job *job);
uint64_t sort_first_touch(const struct sort_job *job);
uint64_t sort_memory_need(const struct sort_job *job);
void sort_choose_oversample(struct sort_job *job);

/* The global figures every rank agrees on at the end: imbalance, peak memory, totals. */
void sort_finish_stats(struct sort_job *job);

/* Runs one phase @fn: times it, checks the failure-injection hook, agrees on the outcome,
 * reports --progress. Returns the agreed code. */
int sort_run_phase(struct sort_job *job, enum sortex_phase phase, int (*fn)(struct sort_job *));

/* The step label of @phase in --progress lines: "[3/8]" in memory, "[pass 1]" in the external
 * sort (@external), "[check]". */
void sort_phase_step(enum sortex_phase phase, int external, char *buf, size_t cap);

/* Agrees on an outcome: every rank passes its own code and gets the most severe (lowest) of all;
 * of the error lines held back meanwhile (util_report_defer()), the lowest rank's is printed
 * and the others dropped, so one failure gives one line. Collective. */
int sort_agree(const struct sort_job *job, int err);

/* The public functions' argument checks (sort/args.c). */

/* Which collective a rank is in: the first thing the ranks agree on. sortex_sort() and
 * sortex_sort_records() are one (with a numeric format they are the same sort). */
enum sort_call { SORT_CALL_MEMORY = 1, SORT_CALL_FILE, SORT_CALL_JSON, SORT_CALL_PRINT };

/* What the ranks of one call agree on. */
struct sort_args {
    const char *fn; /* the public function, for the error lines */
    enum sort_call call;
    const struct sortex_config *cfg; /* checked by sort_config_check(); NULL: none to agree on */
    const char *path_name[2];        /* paths that must be the same strings ("in_path"), or NULL */
    const char *path[2];
    bool any_default_threads; /* out: some rank leaves cfg->threads at 0 */
};

/* True when @comm can be used: MPI is running and @comm is an intracommunicator, not
 * MPI_COMM_NULL. Not collective; prints nothing. */
bool sort_comm_usable(MPI_Comm comm);

/* sort_comm_usable(), with one error line ("FN: why (comm)") and UTIL_EUSAGE when not. */
int sort_comm_check(const char *fn, MPI_Comm comm);

/* Checks every field of @cfg against the ranges of sort/sortex.h (the CLI's): a format and a
 * back-end the library made, threads, epsilon, oversample and the enums. Returns 0, or
 * UTIL_EUSAGE after one error line naming the field and its value. Not collective. */
int sort_config_check(const char *fn, const struct sortex_config *cfg);

/* The agreement of one call, the first collective of every public function: every rank passes
 * the verdict @err of its own checks (its error line held back by util_report_defer()), and
 * gets the most severe of all ranks', of which the lowest rank's line is printed; when every
 * rank's checks passed, a field of @a that differs between the ranks gives UTIL_EUSAGE, with
 * one line from rank 0 naming the field and its value there. One MPI_Allreduce over @comm. */
int sort_args_agree(MPI_Comm comm, struct sort_args *a, int err);

/* Rank r's first key in the global input order when n keys are split over p ranks. */
static inline uint64_t sort_slice_begin(uint64_t n, int p, int r)
{
    return (uint64_t)(((unsigned __int128)n * (unsigned)r) / (unsigned)p);
}

/* The output's temporary file, before anything is written: rank 0 chooses its name and every
 * rank gets it in job->tmp_path (sort_write_name()); rank 0 creates it and reserves @bytes
 * (sort_write_create()). Collective; each returns the agreed outcome. */
int sort_write_name(struct sort_job *job);
int sort_write_create(struct sort_job *job, uint64_t bytes);

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

/* Collective reads (@write 0) or writes of @count elements of @buf at element @first_elem of the
 * open file @fh, in chunks of sort_io_chunk() elements, every rank taking part in the same
 * number of calls (the most any rank needs). Progress counts the bytes; a read stalls at
 * "read-chunk" after each chunk for the tests (SORTEX_STALL). Returns MPI_SUCCESS with
 * *@done = @count, or the first failure: an MPI error, or MPI_SUCCESS with *@done short of
 * @count (what the first short call moved). */
int sort_io_chunks(struct sort_job *job, MPI_File fh, int write, uint64_t first_elem, void *buf,
                   uint64_t count, uint64_t *done);

/* Rank 0 checks the file sort's input and output paths and notes the input's identity (the
 * reads check it again); all ranks learn the verdict and the input's size in *@bytes
 * (sort/io_paths.c). Collective. */
int sort_check_paths(struct sort_job *job, uint64_t *bytes);

/* Rank 0 of root I/O writing to "-": where the output goes (see io_root.c). */
int sort_root_stdout(void);

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

/* The sort of records (sort/records.c, local_record_sort()) over job buffers: sorts n
 * elements of src stably by key into dst; tuples are allocated here. */
int sort_records(struct sort_job *job, uint64_t *src, uint64_t *dst, uint64_t n);

/* sortex_stats_print() for a caller that has the sort's configuration (bin/sortex -v): it
 * counts records for a byte-key format (keys otherwise), and shows the check only when @cfg
 * asked for it. With @cfg NULL: keys, and the check as st->check says. (sort/stats.c) */
void sort_stats_summary(MPI_Comm comm, const struct sortex_config *cfg,
                        const struct sortex_stats *st);

#endif

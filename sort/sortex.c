/*
 * sort/sortex.c: the sample sort's orchestrator, the three entry points of sort/sortex.h as
 * lists of phases (each phase in a file of its own, their shared state and helpers in
 * sort/job.c):
 *
 *   file:      read -> local_sort -> sample -> splitters -> bucket -> exchange -> finish ->
 *              write; or, when some rank's share does not fit its memory, the external sort
 *              (sort/ext.c): sample -> distribute -> sort_buckets;
 *   in memory: local_sort -> sample -> splitters -> bucket -> exchange -> finish.
 *
 * Scheme (a sample sort; Bader, Helman and JaJa, "Practical parallel algorithms for
 * personalized communication and integer sorting", ACM JEA 1996, [BHJ96] in the README, whose
 * input family the benchmarks use): each rank sorts its elements locally; P-1 splitters in
 * (key, position) order divide them, every rank cuts its sorted elements at the splitters
 * (binary search), an exchange back-end (exchange/) takes bucket j to rank j, and each rank
 * merges (or re-sorts) the P sorted runs it receives. The splitters come from one of two
 * selections (--balance, sort_balance_resolve() in sort/rules.c): the regular sample of Shi
 * and Schaeffer's PSRS (sort/sample.c, sort/splitters.c), all-gathered once, while it takes at
 * most 1 MiB a rank (up to about 80 ranks at epsilon 0.1), and beyond that the histogram
 * selection of Harsh, Kale and Solomonik (sort/select.c), whose rounds gather O(P) words a rank.
 * Cost per rank: O((n/P) log(n/P)) local work, the selection, one irregular all-to-all moving
 * each element once. With --levels L > 1 (sort/levels.c, AMS-sort's scheme) the phases from
 * sample to finish run L times, each level in groups of ranks of its own: P^(1/L) splitters and
 * about 2 P^(1/L) messages a level, each element moved L times.
 *
 * Every phase is timed (sort_run_phase()). Before the first, the ranks agree on the arguments
 * (sort/args.c); after every phase they agree on success (one small all-reduce), so a failure
 * on one rank stops all of them cleanly instead of leaving the others in a collective that
 * will never complete.
 */
#include <string.h>

#include "sort/ext.h"
#include "sort/internal.h"
#include "util/alloc.h"
#include "util/util.h"

/* The phases from local sort to finish: the in-memory sort both entry points share. */
static int sort_in_memory(struct sort_job *job)
{
    int err;
    if (job->cfg->check && (err = sort_run_phase(job, SORTEX_PHASE_CHECK, sort_check_input)) != UTIL_OK) {
        return err;
    }
    int regular = job->balance == SORTEX_BALANCE_SAMPLE;
    sort_levels_choose_job(job);
    if ((err = sort_run_phase(job, SORTEX_PHASE_LOCAL_SORT, sort_local)) != UTIL_OK) {
        return err;
    }
    if (job->levels > 1 && job->size > 1) {
        /* sample -> splitters -> bucket -> exchange -> finish, level by level, in groups */
        err = sort_levels_run(job);
    } else if ((err = sort_run_phase(job, SORTEX_PHASE_SAMPLE,
                         regular ? sort_sample : sort_select_sample)) != UTIL_OK ||
        (err = sort_run_phase(job, SORTEX_PHASE_SPLITTERS,
                         regular ? sort_splitters : sort_select_splitters)) != UTIL_OK ||
        (err = sort_run_phase(job, SORTEX_PHASE_BUCKET, sort_bucket)) != UTIL_OK ||
        (err = sort_run_phase(job, SORTEX_PHASE_EXCHANGE, sort_exchange)) != UTIL_OK ||
        (err = sort_run_phase(job, SORTEX_PHASE_FINISH, sort_finish)) != UTIL_OK) {
        return err;
    }
    if (err != UTIL_OK) {
        return err;
    }
    if (job->cfg->check) {
        return sort_run_phase(job, SORTEX_PHASE_CHECK, sort_check_output);
    }
    return UTIL_OK;
}

/* The in-memory entry points up to the sorted slice: job->a holds the rank's n elements at
 * the memory stride. Learns the global count and offset, makes the second buffer and sorts. */
static int sort_given(struct sort_job *job, uint64_t n)
{
    job->n_local = n;
    job->stats->n_in = n;
    MPI_Allreduce(&job->n_local, &job->n_total, 1, MPI_UINT64_T, MPI_SUM, job->comm);
    MPI_Exscan(&job->n_local, &job->offset, 1, MPI_UINT64_T, MPI_SUM, job->comm);
    if (job->rank == 0) {
        job->offset = 0;
    }
    sort_choose_oversample(job);
    uint64_t room = sort_output_bound(job);
    room = room > n ? room : n;
    int err = sort_agree(job, sort_reserve_room(job, &job->b, &job->cap_b, room ? room : 1,
                                                sort_first_touch(job)));
    if (err == UTIL_OK) {
        err = sort_in_memory(job);
    }
    if (err == UTIL_OK) {
        sort_finish_stats(job);
    }
    return err;
}

/*
 * Both in-memory entry points: the caller's elements lie back to back, R bytes each, as in a
 * file and as the sort holds them, so the caller's buffer is the sort's first buffer as it is,
 * and the sorted slice is handed back in whichever buffer holds it. @fn names the entry point
 * and @what its buffer argument; @records: record formats are welcome (sortex_sort_records()).
 */
static int sort_in_place(MPI_Comm comm, void **data, uint64_t *n, const struct sortex_config *cfg,
                         struct sortex_stats *stats, const char *fn, const char *what,
                         int records)
{
    struct sort_job job;
    int err = sort_job_open(&job, comm, cfg, stats, fn);
    if (err == UTIL_OK && (data == NULL || n == NULL)) {
        err = util_error("%s: a NULL argument (%s)", fn, data == NULL ? what : "n");
    } else if (err == UTIL_OK && *data == NULL && *n > 0) {
        err = util_error("%s: *%s is NULL, with *n = %llu", fn, what, (unsigned long long)*n);
    } else if (err == UTIL_OK && !records && job.cfg->format && job.cfg->format->byte_key) {
        err = util_error("%s: cfg.format is a record format, sorted by sortex_sort_records (%s)",
                         fn, job.cfg->format->name);
    }
    struct sort_args args = {.fn = fn, .call = SORT_CALL_MEMORY};
    err = sort_job_init(&job, comm, &args, err);
    if (data != NULL) {
        job.a = *data; /* ours from here on, freed on failure as promised */
    }
    if (n != NULL) {
        job.cap_a = *n;
        job.touched_a = *n; /* the caller's elements: resident */
    }
    if (err == UTIL_OK) {
        err = sort_given(&job, *n);
    }
    if (err == UTIL_OK) {
        if (job.fmt == NULL && job.cfg->format && job.cfg->format->from_ordered) {
            job.cfg->format->from_ordered(job.out, job.n_out);
        }
        /* Hand the result over; free the other buffer. */
        *data = job.out;
        *n = job.n_out;
        sortex_free_records(job.out == job.a ? job.b : job.a);
        job.a = job.b = NULL;
    } else {
        sortex_free_records(job.a);
        sortex_free_records(job.b);
        if (data != NULL) {
            *data = NULL;
        }
        if (n != NULL) {
            *n = 0;
        }
    }
    sort_select_free(&job);
    sort_job_free(&job);
    return err;
}

int sortex_sort(MPI_Comm comm, uint64_t **keys, uint64_t *n, const struct sortex_config *cfg,
                struct sortex_stats *stats)
{
    return sort_in_place(comm, (void **)keys, n, cfg, stats, "sortex_sort", "keys", 0);
}

/* With a numeric format (or none) the records are 8-byte keys, and this is sortex_sort(). */
int sortex_sort_records(MPI_Comm comm, void **records, uint64_t *n, const struct sortex_config *cfg,
                        struct sortex_stats *stats)
{
    return sort_in_place(comm, records, n, cfg, stats, "sortex_sort_records", "records", 1);
}

/* Rank r takes elements [r n / P, (r+1) n / P) of n: the same split datagen's slices use. */
static void take_slice(struct sort_job *job)
{
    job->offset = sort_slice_begin(job->n_total, job->size, job->rank);
    job->n_local = sort_slice_begin(job->n_total, job->size, job->rank + 1) - job->offset;
    job->stats->n_in = job->n_local;
    sort_choose_oversample(job);
}

/*
 * The file sort in memory: read -> local_sort -> sample -> splitters -> bucket -> exchange ->
 * finish -> write. Root I/O loads the whole input on rank 0 first (standard input's size is
 * known only then). Both element buffers have room for the input slice and the largest output,
 * of which the share and a little is resident from the start.
 */
static int sort_file_in_memory(struct sort_job *job)
{
    int err;
    if (job->cfg->io != SORTEX_IO_MPIIO) {
        if ((err = sort_run_phase(job, SORTEX_PHASE_READ, sort_root_load)) != UTIL_OK) {
            return err;
        }
        take_slice(job);
    }
    uint64_t room = sort_output_bound(job);
    room = room > job->n_local ? room : job->n_local;
    room = room ? room : 1;
    err = sort_reserve_room(job, &job->a, &job->cap_a, room, sort_first_touch(job));
    if (err == UTIL_OK) {
        err = sort_reserve_room(job, &job->b, &job->cap_b, room, sort_first_touch(job));
    }
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        return err;
    }
    if ((err = sort_run_phase(job, SORTEX_PHASE_READ, sort_read)) == UTIL_OK &&
        (err = sort_in_memory(job)) == UTIL_OK) {
        err = sort_run_phase(job, SORTEX_PHASE_WRITE, sort_write);
    }
    return err;
}

int sortex_sort_file(MPI_Comm comm, const char *in_path, const char *out_path,
                     const struct sortex_config *cfg, struct sortex_stats *stats)
{
    struct sort_job job;
    uint64_t bytes = 0;
    const char *fn = "sortex_sort_file";
    int err = sort_job_open(&job, comm, cfg, stats, fn);
    if (err == UTIL_OK && (in_path == NULL || out_path == NULL)) {
        err = util_error("%s: a NULL argument (%s)", fn, in_path == NULL ? "in_path" : "out_path");
    }
    struct sort_args args = {.fn = fn,
                             .call = SORT_CALL_FILE,
                             .path_name = {"in_path", "out_path"},
                             .path = {in_path, out_path}};
    if ((err = sort_job_init(&job, comm, &args, err)) != UTIL_OK) {
        goto done;
    }
    job.in_path = in_path;
    job.out_path = out_path;
    if ((err = sort_check_paths(&job, &bytes)) != UTIL_OK) {
        goto done;
    }
    job.n_total = bytes / job.rsize;
    take_slice(&job);
    /* A file is sorted in memory when every rank's share fits its memory, else externally
     * (sort/ext.c); standard input always in memory. */
    int ext = strcmp(in_path, "-") != 0 ? ext_decide(&job, sort_memory_need(&job)) : 0;
    if (ext < 0) {
        err = ext;
        goto done;
    }
    err = sort_write_commit(&job, ext ? ext_sort_file(&job) : sort_file_in_memory(&job));
    if (err == UTIL_OK) {
        sort_finish_stats(&job);
    }
done:
    sortex_free_keys(job.a);
    sortex_free_keys(job.b);
    util_free_big(job.stage);
    sort_select_free(&job);
    sort_job_free(&job);
    return err;
}

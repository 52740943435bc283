/*
 * sort/finish.c: phase 7, the P sorted runs received (grouped by source in b) become the
 * rank's sorted slice: a threaded P-way merge into a, or a re-sort of b with a as scratch.
 * The merge was measured faster up to SORTEX_MERGE_RUNS_PER_THREAD runs per thread
 * (sort/local_sort.h). One rank has nothing to finish: its locally sorted keys in a are the
 * result.
 */
#include "sort/internal.h"
#include "util/util.h"

int sort_finish(struct sort_job *job)
{
    if (job->size == 1) {
        job->out = job->a;
        job->n_out = job->n_local;
        job->stats->finish = "none";
        return UTIL_OK;
    }
    int err = sort_reserve(job, &job->a, &job->cap_a, job->n_recv);
    if (err != UTIL_OK) {
        return err;
    }
    if (job->fmt != NULL) {
        /* Records: the runs arrive by source rank, each in order, so a stable sort of b by key
         * leaves equal keys in (rank, position) order: the input order. */
        job->n_out = job->n_recv;
        job->out = job->a;
        job->stats->finish = "sort";
        err = sort_records(job, job->b, job->a, job->n_recv);
        return err == UTIL_OK ? UTIL_OK
                              : util_fail(err, "rank %d: finish: sort of %llu records failed",
                                          job->rank, (unsigned long long)job->n_recv);
    }
    enum sortex_finish mode = job->cfg->finish;
    if (mode == SORTEX_FINISH_AUTO) {
        int merge = job->size <= SORTEX_MERGE_RUNS_PER_THREAD * job->threads;
        mode = merge ? SORTEX_FINISH_MERGE : SORTEX_FINISH_SORT;
    }
    job->n_out = job->n_recv;
    job->stats->finish = mode == SORTEX_FINISH_MERGE ? "merge" : "sort";
    if (mode == SORTEX_FINISH_MERGE) {
        job->out = job->a;
        err = sortex_merge_runs(job->b, job->recv_counts, job->size, job->a, job->threads);
    } else {
        err = sortex_local_sort_either(job->b, job->a, job->n_recv, job->threads, NULL, &job->out);
    }
    if (err != UTIL_OK) {
        return util_fail(err, "rank %d: finish: %s of %llu keys failed", job->rank,
                         mode == SORTEX_FINISH_MERGE ? "merge" : "sort",
                         (unsigned long long)job->n_recv);
    }
    return UTIL_OK;
}

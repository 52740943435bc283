/*
 * sort/finish.c: phase 7, the P sorted runs received (grouped by source in b) become the
 * rank's sorted slice: a threaded P-way merge into a, or a re-sort of b with a as scratch.
 */
#include "sort/internal.h"
#include "util/util.h"

/* Runs up to which merging beat re-sorting when measured (see the README's findings). */
#define FINISH_MERGE_MAX_RUNS 64

int sort_finish(struct sort_job *job)
{
    int err = sort_reserve(job, &job->a, &job->cap_a, job->n_recv);
    if (err != UTIL_OK) {
        return err;
    }
    enum sortex_finish mode = job->cfg->finish;
    if (mode == SORTEX_FINISH_AUTO) {
        mode = job->size <= FINISH_MERGE_MAX_RUNS ? SORTEX_FINISH_MERGE : SORTEX_FINISH_SORT;
    }
    job->n_out = job->n_recv;
    if (mode == SORTEX_FINISH_MERGE) {
        job->stats->finish_merged = 1;
        job->out = job->a;
        return sortex_merge_runs(job->b, job->recv_counts, job->size, job->a, job->threads);
    }
    job->stats->finish_merged = 0;
    job->out = job->b;
    return sortex_local_sort(job->b, job->a, job->n_recv, job->threads);
}

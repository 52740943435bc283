/*
 * sort/finish.c: phase 7, the P sorted runs received (grouped by source in b) become the
 * rank's sorted slice: a threaded merge of the runs that hold elements into a, or a re-sort of
 * b with a as scratch.
 * One rank has nothing to finish: its locally sorted elements in a are the result.
 *
 * Which one: the merge up to LOCAL_MERGE_RUNS_PER_THREAD runs a thread for keys, up to
 * LOCAL_RECORD_MERGE_RUNS runs for records whatever the threads (every thread's part of a
 * record merge meets all P runs, so that rule does not scale with the threads), the re-sort
 * beyond: the crossovers of `sortex-localsort --runs P` (--format gensort for records) in
 * results/localsort, which local/config.h states with the figures.
 *
 * Records: the runs arrive by source rank, each in input order (the local sort is stable and
 * every back-end keeps the order within a bucket), so both ways keep equal keys in (rank,
 * position) order, the input order: the merge gives ties to the lower run, the re-sort is
 * stable. The merge copies each record once from its run to its place; the re-sort makes a
 * tuple per record, sorts the tuples and permutes the records, so it reads every key twice
 * and every record once in random order.
 */
#include "sort/internal.h"
#include "util/alloc.h"
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
    /* The runs that hold elements: at a level of a multi-level sort most senders send this
     * rank nothing, and an empty run costs the merge a tree leaf for nothing. The runs lie
     * back to back in b whichever are empty, so their counts alone are compacted. */
    int nonempty = 0;
    for (int r = 0; r < job->size; r++) {
        nonempty += job->recv_counts[r] > 0;
    }
    const uint64_t *counts = job->recv_counts;
    uint64_t *compact = NULL;
    if (nonempty < job->size) {
        compact = util_malloc((size_t)(nonempty ? nonempty : 1) * sizeof(uint64_t));
        if (compact == NULL) {
            return util_fail(UTIL_ENOMEM, "rank %d: finish: out of memory", job->rank);
        }
        for (int r = 0, i = 0; r < job->size; r++) {
            if (job->recv_counts[r] > 0) {
                compact[i++] = job->recv_counts[r];
            }
        }
        counts = compact;
    }
    enum sortex_finish mode = job->cfg->finish;
    if (mode == SORTEX_FINISH_AUTO) {
        int runs = job->fmt != NULL ? LOCAL_RECORD_MERGE_RUNS
                                    : LOCAL_MERGE_RUNS_PER_THREAD * job->threads;
        mode = nonempty <= runs ? SORTEX_FINISH_MERGE : SORTEX_FINISH_SORT;
    }
    const int merge = mode == SORTEX_FINISH_MERGE;
    job->n_out = job->n_recv;
    job->stats->finish = merge ? "merge" : "sort";
    if (job->fmt != NULL) {
        job->out = job->a;
        err = merge ? local_merge_record_runs(job->b, counts, nonempty, job->a, job->fmt,
                                              job->threads)
                    : sort_records(job, job->b, job->a, job->n_recv);
    } else if (merge) {
        job->out = job->a;
        err = local_merge_runs(job->b, counts, nonempty, job->a, job->threads);
    } else {
        err = local_sort_either(job->b, job->a, job->n_recv, job->threads, NULL, &job->out);
    }
    util_free(compact);
    if (err != UTIL_OK) {
        return util_fail(err, "rank %d: finish: %s of %llu %s failed", job->rank,
                         merge ? "merge" : "sort", (unsigned long long)job->n_recv,
                         job->fmt != NULL ? "records" : "keys");
    }
    return UTIL_OK;
}

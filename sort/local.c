/* sort/local.c: phase 2, the rank sorts its own keys with the node-local radix sort. */
#include "sort/internal.h"
#include "util/util.h"

int sort_local(struct sort_job *job)
{
    int err = sortex_local_sort(job->a, job->b, job->n_local, job->threads);
    if (err != UTIL_OK) {
        return util_fail(err, "rank %d: local_sort: failed (%llu keys, %d threads)", job->rank,
                         (unsigned long long)job->n_local, job->threads);
    }
    return UTIL_OK;
}

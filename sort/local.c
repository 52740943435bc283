/* sort/local.c: phase 2, the rank maps its keys onto unsigned ones (signed and floating-point
 * key types) and sorts them with the node-local radix sort. */
#include "sort/internal.h"
#include "util/util.h"

int sort_local(struct sort_job *job)
{
    /* Signed and floating-point keys sort as unsigned ones through an order-preserving map. */
    if (job->cfg->keytype && job->cfg->keytype->to_ordered) {
        job->cfg->keytype->to_ordered(job->a, job->n_local);
    }
    int err = sortex_local_sort(job->a, job->b, job->n_local, job->threads);
    if (err != UTIL_OK) {
        return util_fail(err, "rank %d: local_sort: failed (%llu keys, %d threads)", job->rank,
                         (unsigned long long)job->n_local, job->threads);
    }
    return UTIL_OK;
}

/* sort/local.c: phase 2, the rank sorts its own keys with the node-local radix sort. */
#include "sort/internal.h"

int sort_local(struct sort_job *job)
{
    return sortex_local_sort(job->a, job->b, job->n_local, job->threads);
}

/* sort/local.c: phase 2, the rank maps its keys onto unsigned ones (signed and floating-point
 * key types) and sorts them with the node-local sort. */
#include "sort/internal.h"
#include "util/alloc.h"
#include "util/util.h"

int sort_records(struct sort_job *job, uint64_t *src, uint64_t *dst, uint64_t n)
{
    const size_t esize = job->rsize;
    if (n < 2) {
        util_copy(dst, src, n * esize);
        return UTIL_OK;
    }
    /* n tuples (16 bytes a record) where the scratch records lend the room for the merges. */
    struct local_rec_tuple *tuples =
        util_alloc_big(local_record_tuples(n, job->fmt) * sizeof(*tuples));
    if (tuples == NULL) {
        return UTIL_ENOMEM;
    }
    void *sorted = NULL;
    int err = local_record_sort(src, dst, tuples, n, job->fmt, job->threads, &sorted);
    util_free_big(tuples);
    return err;
}

/* Records: sorted from a into b, then the buffers trade places (see below). */
static int local_records(struct sort_job *job)
{
    sort_progress_measure(job, job->n_local, "records", 0);
    int err = sort_records(job, job->a, job->b, job->n_local);
    if (err != UTIL_OK) {
        return util_fail(err, "rank %d: local_sort: failed (%llu records, %d threads)",
                         job->rank, (unsigned long long)job->n_local, job->threads);
    }
    sort_progress_add(job, job->n_local);
    sort_swap_buffers(job);
    return UTIL_OK;
}

int sort_local(struct sort_job *job)
{
    if (job->fmt != NULL) {
        return local_records(job);
    }
    /* Signed and floating-point keys sort as unsigned ones through an order-preserving map. */
    if (job->cfg->format && job->cfg->format->to_ordered) {
        job->cfg->format->to_ordered(job->a, job->n_local);
    }
    struct local_tuning t;
    local_tuning_default(&t);
    t.progress = sort_progress_counter(job);
    sort_progress_measure(job, job->n_local, "keys",
                          local_sort_estimate(job->n_local, job->threads));
    uint64_t *sorted = job->a;
    int err = local_sort_either(job->a, job->b, job->n_local, job->threads, &t, &sorted);
    if (err != UTIL_OK) {
        return util_fail(err, "rank %d: local_sort: failed (%llu keys, %d threads)", job->rank,
                         (unsigned long long)job->n_local, job->threads);
    }
    if (sorted == job->b) {
        /* The sort ended in the other buffer. Take it as the key buffer when the buffer given
         * up can still receive what the exchange brings; otherwise copy back. */
        if (job->cap_a >= job->cap_b) {
            sort_swap_buffers(job);
        } else {
            util_copy(job->a, job->b, job->n_local * sizeof(uint64_t));
        }
    }
    return UTIL_OK;
}

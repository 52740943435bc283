/*
 * sort/bucket.c: phase 5, split the sorted keys at the splitters.
 *
 * The keys are sorted, so bucket j is one contiguous range and the send buffer is the key array
 * itself, grouped by destination with no copy. The boundary of splitter (k, g) is the number of
 * keys below it in (key, position) order: the keys < k (a binary search), plus those equal to k
 * whose global position is below g (a clamp, since equal keys are contiguous). P-1 binary
 * searches: O(P log(n/P)).
 *
 * An all-to-all of the counts then tells each rank how many keys it will receive from each
 * rank, so its receive buffer is known to be large enough before any key moves, and the
 * exchange back-end is handed the counts instead of exchanging them a second time.
 */
#include <string.h>

#include "sort/internal.h"
#include "util/util.h"

int sort_bucket(struct sort_job *job)
{
    uint64_t prev = 0;
    int found = job->balance != SORTEX_BALANCE_SAMPLE; /* the selection's cuts (select.c) */
    for (int j = 0; j < job->size; j++) {
        const struct sort_tuple *sp = &job->splitters[j];
        uint64_t next = job->n_local;
        if (j + 1 < job->size && found) {
            next = job->cut[j];
        } else if (j + 1 < job->size) {
            next = job->fmt != NULL
                       ? sort_bucket_boundary_records(job->a, job->n_local, job->rsize,
                                                      job->fmt->key_offset, job->fmt->key_size,
                                                      job->offset,
                                                      job->rsplitters + (size_t)j * job->blob_words)
                       : sort_bucket_boundary(job->a, job->n_local, job->offset, sp->key,
                                              sp->pos);
        }
        next = next < prev ? prev : next; /* splitters are sorted; guard anyway */
        job->send_counts[j] = next - prev;
        prev = next;
    }
    if (MPI_Alltoall(job->send_counts, 1, MPI_UINT64_T, job->recv_counts, 1, MPI_UINT64_T,
                     job->comm) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: bucket: MPI_Alltoall of counts failed", job->rank);
    }
    uint64_t n_recv = 0;
    for (int j = 0; j < job->size; j++) {
        n_recv += job->recv_counts[j];
    }
    job->n_recv = n_recv;
    return sort_reserve(job, &job->b, &job->cap_b, n_recv);
}

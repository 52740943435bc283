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

/* First index in a[0..n) whose key is >= k (above == 0) or > k (above == 1). */
static uint64_t search(const uint64_t *a, uint64_t n, uint64_t k, int above)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < k || (above && a[mid] == k)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

uint64_t sortex_bucket_boundary(const uint64_t *keys, uint64_t m, uint64_t offset, uint64_t key,
                                uint64_t pos)
{
    uint64_t lo = search(keys, m, key, 0);
    uint64_t hi = search(keys, m, key, 1);
    /* Equal keys sit at global positions offset+lo .. offset+hi-1; those below pos count. */
    uint64_t first = offset + lo;
    if (pos <= first) {
        return lo;
    }
    uint64_t equal_below = pos - first;
    return equal_below < hi - lo ? lo + equal_below : hi;
}

/* Records: first index in the sorted elements whose key is >= the blob's (above == 0) or
 * > it (above == 1). */
static uint64_t search_records(const struct sort_job *job, const uint64_t *blob, int above)
{
    const size_t off = job->fmt->key_offset, k = job->fmt->key_size;
    uint64_t lo = 0, hi = job->n_local;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int c = memcmp((const unsigned char *)sort_elem(job, job->a, mid) + off, blob, k);
        if (c < 0 || (above && c == 0)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Records: sortex_bucket_boundary()'s rule for the splitter blob (key bytes, position). */
static uint64_t boundary_records(const struct sort_job *job, const uint64_t *blob)
{
    uint64_t lo = search_records(job, blob, 0);
    uint64_t hi = search_records(job, blob, 1);
    uint64_t first = job->offset + lo, pos = blob[job->blob_words - 1];
    if (pos <= first) {
        return lo;
    }
    uint64_t equal_below = pos - first;
    return equal_below < hi - lo ? lo + equal_below : hi;
}

int sort_bucket(struct sort_job *job)
{
    uint64_t prev = 0;
    for (int j = 0; j < job->size; j++) {
        const struct sort_tuple *sp = &job->splitters[j];
        uint64_t next = job->n_local;
        if (j + 1 < job->size) {
            next = job->fmt != NULL
                       ? boundary_records(job, job->rsplitters + (size_t)j * job->blob_words)
                       : sortex_bucket_boundary(job->a, job->n_local, job->offset, sp->key,
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

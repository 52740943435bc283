/*
 * sort/splitters.c: phase 4, the P-1 splitters are the samples at regular ranks of the sorted
 * gathered sample: splitter j = sample[floor(j T / P)], j = 1..P-1. Every rank computes the
 * same splitters from the same sorted sample, so no further communication is needed.
 * With no samples (n = 0) every splitter is the largest tuple and all buckets are empty.
 */
#include <string.h>

#include "sort/internal.h"
#include "util/alloc.h"
#include "util/util.h"

int sort_splitters(struct sort_job *job)
{
    uint64_t t = job->nsample;
    if (job->fmt != NULL) {
        /* Records: the same picks, as blobs; no sample (no records) puts every splitter at the
         * top, as the tuples' UINT64_MAX does. */
        size_t bw = job->blob_words, bytes = bw * sizeof(uint64_t);
        job->rsplitters = util_malloc((size_t)job->size * bytes);
        if (job->rsplitters == NULL) {
            return util_fail(UTIL_ENOMEM, "rank %d: splitters: out of memory", job->rank);
        }
        for (int j = 1; j < job->size; j++) {
            uint64_t *sp = job->rsplitters + (size_t)(j - 1) * bw;
            if (t == 0) {
                memset(sp, 0xff, bytes);
            } else {
                memcpy(sp, job->rsample + sort_splitter_index(j, t, job->size) * bw, bytes);
            }
        }
        return 0;
    }
    for (int j = 1; j < job->size; j++) {
        if (t == 0) {
            job->splitters[j - 1].key = UINT64_MAX;
            job->splitters[j - 1].pos = UINT64_MAX;
            continue;
        }
        job->splitters[j - 1] = job->sample[sort_splitter_index(j, t, job->size)];
    }
    return 0;
}

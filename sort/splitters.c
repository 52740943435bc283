/*
 * sort/splitters.c: phase 4, the P-1 splitters are the samples at regular ranks of the sorted
 * gathered sample: splitter j = sample[floor(j T / P)], j = 1..P-1. Every rank computes the
 * same splitters from the same sorted sample, so no further communication is needed.
 * With no samples (n = 0) every splitter is the largest tuple and all buckets are empty.
 */
#include "sort/internal.h"

int sort_splitters(struct sort_job *job)
{
    uint64_t t = job->nsample;
    for (int j = 1; j < job->size; j++) {
        if (t == 0) {
            job->splitters[j - 1].key = UINT64_MAX;
            job->splitters[j - 1].pos = UINT64_MAX;
            continue;
        }
        uint64_t idx = (uint64_t)(((unsigned __int128)j * t) / (unsigned)job->size);
        job->splitters[j - 1] = job->sample[idx];
    }
    return 0;
}

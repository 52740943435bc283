/*
 * sort/splitters.c: phase 4, the P-1 splitters are the samples at regular ranks of the sorted
 * gathered sample: splitter j = sample[floor(j T / P)], j = 1..P-1. Every rank computes the
 * same splitters from the same sorted sample, so no further communication is needed.
 * With no samples (n = 0) every splitter is the largest tuple and all buckets are empty.
 */
#include "sort/internal.h"

uint64_t sortex_splitter_index(int j, uint64_t t, int p)
{
    return (uint64_t)(((unsigned __int128)(unsigned)j * t) / (unsigned)p);
}

int sort_splitters(struct sort_job *job)
{
    uint64_t t = job->nsample;
    for (int j = 1; j < job->size; j++) {
        if (t == 0) {
            job->splitters[j - 1].key = UINT64_MAX;
            job->splitters[j - 1].pos = UINT64_MAX;
            continue;
        }
        job->splitters[j - 1] = job->sample[sortex_splitter_index(j, t, job->size)];
    }
    return 0;
}

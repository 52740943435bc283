/*
 * sort/sample.c: phase 3, regular sampling in proportion to each rank's share.
 *
 * The oversampling factor S asks for T = S*P samples in all. Rank r, holding m_r of the n keys,
 * draws s_r = ceil(T m_r / n) samples (at most m_r) from its sorted keys, at the centres of
 * s_r equal gaps: positions floor((2k+1) m_r / (2 s_r)), k = 0..s_r-1. Each sample carries its
 * global position, so samples are unique even when keys repeat.
 *
 * Why this bounds every bucket (the argument of regular sampling, Shi and Schaeffer's PSRS,
 * with the gap g_r = m_r / s_r <= n/T): a splitter with c_r rank-r samples at or below it has
 * between c_r g_r - g_r/2 - 1 and c_r g_r + g_r/2 rank-r keys below it. Two consecutive
 * splitters are T/P samples apart (+1 for rounding), so the keys between them number at most
 * (T/P + 1) n/T + sum_r (g_r + 1) <= n/P + (P+1) n/T + P. With T = S P this is
 * (1 + (P+1)/S) n/P + P: the default S = ceil((P+1)/epsilon) gives the (1+epsilon) bound,
 * whatever the input, all-equal keys and one rank holding everything included.
 *
 * All ranks then all-gather the samples; the gathered array is sorted (each rank's part is
 * sorted already; a merge of P sorted lists by qsort is cheap at these sizes).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sort/internal.h"
#include "util/alloc.h"
#include "util/util.h"

/* Records: the sample blob of element idx of job->a. */
static void make_blob(const struct sort_job *job, uint64_t idx, uint64_t *blob)
{
    const unsigned char *rec = (const unsigned char *)sort_elem(job, job->a, idx);
    sort_blob_make(blob, rec + job->fmt->key_offset, job->fmt->key_size, job->offset + idx);
}

int sort_sample(struct sort_job *job)
{
    int err = UTIL_OK;
    int p = job->size;
    struct sort_tuple *mine = NULL;

    /* This rank's share of the T samples, drawn at the centres of equal gaps. The refusal is
     * the same on every rank, so all return here together and rank 0 alone says why. */
    uint64_t total = 0;
    if (sort_sample_total(job->oversample, p, &total) != UTIL_OK) {
        return job->rank == 0 ? util_fail(UTIL_EUSAGE,
                                          "sample: %llu samples are too many (--oversample)",
                                          (unsigned long long)job->oversample * (unsigned)p)
                              : UTIL_EUSAGE;
    }
    uint64_t s = sort_sample_count(total, job->n_local, job->n_total);
    /* Words one sample takes: a tuple's two, or a record's blob. */
    const size_t sw = job->fmt != NULL ? job->blob_words : 2;
    int *counts = util_malloc(2 * (size_t)p * sizeof(int));
    mine = util_malloc((s ? s : 1) * sw * sizeof(uint64_t));
    /* A rank without room for its sample or the counts cannot take part in the all-gathers:
     * all agree first, so that none waits in one for a rank that is not coming. */
    int ok = counts != NULL && mine != NULL;
    if (!ok) {
        err = util_fail(UTIL_ENOMEM, "rank %d: sample: out of memory", job->rank);
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        util_free(mine);
        util_free(counts);
        return err != UTIL_OK ? err : UTIL_ENOMEM; /* another rank's failure, reported there */
    }
    int *displs = counts + p;
    for (uint64_t k = 0; k < s; k++) {
        uint64_t idx = sort_sample_index(k, s, job->n_local);
        if (job->fmt != NULL) {
            make_blob(job, idx, (uint64_t *)mine + k * sw);
        } else {
            mine[k].key = job->a[idx];
            mine[k].pos = job->offset + idx;
        }
    }

    /* All-gather: counts first, then the samples (as words). The total fits an int: the
     * refusal above bounds it for tuples, and a blob's words count for records. */
    if ((unsigned __int128)total * sw > INT_MAX / 2) {
        util_free(mine);
        util_free(counts);
        return job->rank == 0 ? util_fail(UTIL_EUSAGE, "sample: %llu samples of %zu words are "
                                                       "too many (--oversample)",
                                          (unsigned long long)total, sw)
                              : UTIL_EUSAGE;
    }
    int mycount = (int)(sw * s);
    MPI_Allgather(&mycount, 1, MPI_INT, counts, 1, MPI_INT, job->comm);
    uint64_t sum = 0;
    for (int r = 0; r < p; r++) {
        displs[r] = (int)sum;
        sum += (uint64_t)counts[r];
    }
    job->nsample = sum / sw;
    uint64_t *all = util_malloc((job->nsample ? job->nsample : 1) * sw * sizeof(uint64_t));
    if (all == NULL) {
        err = util_fail(UTIL_ENOMEM, "rank %d: sample: out of memory", job->rank);
    }
    if (job->fmt != NULL) {
        job->rsample = all;
    } else {
        job->sample = (struct sort_tuple *)all;
    }
    /* A rank without room cannot take part in the all-gather: all agree first, so that none
     * waits in it for a rank that is not coming. */
    ok = all != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (ok) {
        MPI_Allgatherv(mine, mycount, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T,
                       job->comm);
        if (job->fmt != NULL) {
            qsort_r(all, job->nsample, sw * sizeof(uint64_t), sort_blob_cmp,
                    (void *)&job->fmt->key_size);
        } else {
            qsort(all, job->nsample, sizeof(struct sort_tuple), sort_tuple_cmp);
        }
    } else if (err == UTIL_OK) {
        err = UTIL_ENOMEM; /* another rank's failure, reported there */
    }
    util_free(mine);
    util_free(counts);
    return err;
}

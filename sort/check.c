/*
 * sort/check.c: --check, the sort's proof of its own result while the data is in memory.
 *
 * Two steps of the "check" phase:
 *   input:  right after the read, every rank sums the verifier's order-independent checksum
 *           (count, sum of XXH3, sum of XXH64 of every key as stored in the file; see
 *           verify/verify.h) over the keys it read; one all-reduce adds the ranks' sums.
 *   output: after the finish phase, every rank checks that its slice is non-decreasing, the
 *           ranks compare their first and last keys (one all-gather of three words each), and
 *           the checksum of the output, taken in the file encoding the write will use, must
 *           equal the input's.
 * Together: the output is globally in order and is a permutation of what was read (up to the
 * checksum's ~2^-64 chance per sum of a collision; verify/README.md says what it can and cannot
 * detect). Cost: one hashing pass over the input and one over the output, one order pass, all
 * threaded and from memory, plus two small collectives. What is not covered is the write
 * itself, whose size the write phase checks; `sortex-verify` checks the file.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sort/internal.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"
#include "verify/verify.h"

/* Keys mapped back to the file encoding per block, on the stack of each thread. */
#define CHECK_BLOCK 2048

/* The checksum of a[0..n) in the file encoding: @from maps the ordered keys back (NULL: the
 * keys are in the file encoding already). Threaded; the sums are order-independent. */
static struct verify_checksum checksum(const uint64_t *a, uint64_t n,
                                       void (*from)(uint64_t *, size_t), int threads)
{
    uint64_t count = 0, s3 = 0, s64 = 0;
    int64_t blocks = (int64_t)((n + CHECK_BLOCK - 1) / CHECK_BLOCK);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : count, s3, s64)
    for (int64_t b = 0; b < blocks; b++) {
        uint64_t lo = (uint64_t)b * CHECK_BLOCK;
        uint64_t len = n - lo < CHECK_BLOCK ? n - lo : CHECK_BLOCK;
        struct verify_checksum c;
        if (from != NULL) {
            uint64_t buf[CHECK_BLOCK];
            memcpy(buf, a + lo, len * sizeof(uint64_t));
            from(buf, len);
            c = verify_checksum_keys(buf, len);
        } else {
            c = verify_checksum_keys(a + lo, len);
        }
        count += c.count;
        s3 += c.xxh3;
        s64 += c.xxh64;
    }
    return (struct verify_checksum){.count = count, .xxh3 = s3, .xxh64 = s64};
}

/* Descents in a[0..n) (a[i-1] > a[i]), threaded: each part also compares its first key with the
 * key before it. */
static uint64_t descents(const uint64_t *a, uint64_t n, int threads)
{
    uint64_t total = 0;
    if (n < 2) {
        return 0;
    }
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
        uint64_t t = (uint64_t)omp_get_thread_num(), nt = (uint64_t)omp_get_num_threads();
        uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        uint64_t from = lo > 0 ? lo - 1 : 0; /* overlap one key with the part before */
        total += verify_count_descents(a + from, hi - from);
    }
    return total;
}

/* Sums a checksum over all ranks (wrapping, as the verifier's). */
static int sum_ranks(const struct sort_job *job, struct verify_checksum c, uint64_t out[3])
{
    out[0] = c.count;
    out[1] = c.xxh3;
    out[2] = c.xxh64;
    if (MPI_Allreduce(MPI_IN_PLACE, out, 3, MPI_UINT64_T, MPI_SUM, job->comm) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "rank %d: check: MPI_Allreduce failed", job->rank);
    }
    return UTIL_OK;
}

/* Records: the checksum of n elements of a buffer, each over its rsize bytes. Threaded. */
static struct verify_checksum checksum_records(const struct sort_job *job, uint64_t *buf,
                                               uint64_t n)
{
    uint64_t count = 0, s3 = 0, s64 = 0;
#pragma omp parallel for num_threads(job->threads) schedule(static) reduction(+ : count, s3, s64)
    for (uint64_t i = 0; i < n; i++) {
        struct verify_checksum c = verify_checksum_records(sort_elem(job, buf, i), 1, job->rsize);
        count += c.count;
        s3 += c.xxh3;
        s64 += c.xxh64;
    }
    return (struct verify_checksum){.count = count, .xxh3 = s3, .xxh64 = s64};
}

/* Records: pairs out of key order in n elements, threaded as descents() is. */
static uint64_t descents_records(const struct sort_job *job, uint64_t *buf, uint64_t n)
{
    uint64_t total = 0;
    if (n < 2) {
        return 0;
    }
#pragma omp parallel num_threads(job->threads) reduction(+ : total)
    {
        uint64_t t = (uint64_t)omp_get_thread_num(), nt = (uint64_t)omp_get_num_threads();
        uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        uint64_t from = lo > 0 ? lo - 1 : 0;
        total += verify_order_records(job->fmt, sort_elem(job, buf, from), hi - from).descents;
    }
    return total;
}

int sort_check_input(struct sort_job *job)
{
    struct verify_checksum c = job->fmt != NULL
                                   ? checksum_records(job, job->a, job->n_local)
                                   : checksum(job->a, job->n_local, NULL, job->threads);
    return sum_ranks(job, c, job->check_in);
}

/* The test hook that proves the check can fail: SORTEX_CORRUPT=order:RANK swaps that rank's
 * first and last output keys, SORTEX_CORRUPT=keys:RANK changes its first key to its second
 * (order kept, one key duplicated, one lost). Only under --check, right before it looks. */
void sort_check_corrupt(const struct sort_job *job, void *buf, uint64_t n)
{
    const struct util_knob_value *v = util_knob(UTIL_KNOB_CORRUPT);
    if (!v->valid || v->nargs != 1 || v->arg[0] != job->rank || n < 2) {
        return;
    }
    if (job->fmt != NULL) {
        /* Records: the same, element by element (the first and last keys must differ). */
        size_t es = job->rsize;
        unsigned char *first = (unsigned char *)buf;
        unsigned char *last = (unsigned char *)(unsigned char *)buf + (n - 1) * es;
        if (strcmp(v->word, "order") == 0 && sort_rec_cmp(job, first, last) != 0) {
            for (size_t i = 0; i < es; i++) {
                unsigned char t = first[i];
                first[i] = last[i];
                last[i] = t;
            }
        } else if (strcmp(v->word, "keys") == 0) {
            memcpy(first, first + es, es);
        }
        return;
    }
    uint64_t *k = buf;
    if (strcmp(v->word, "order") == 0 && k[0] != k[n - 1]) {
        uint64_t t = k[0];
        k[0] = k[n - 1];
        k[n - 1] = t;
    } else if (strcmp(v->word, "keys") == 0) {
        k[0] = k[1];
    }
}

uint64_t sort_check_descents(const struct sort_job *job, const void *buf, uint64_t n)
{
    uint64_t *b = (uint64_t *)(uintptr_t)buf;
    return job->fmt != NULL ? descents_records(job, b, n) : descents(b, n, job->threads);
}

struct verify_checksum sort_check_sum(const struct sort_job *job, const void *buf, uint64_t n,
                                      int ordered)
{
    const struct util_format *kt = job->cfg->format;
    uint64_t *b = (uint64_t *)(uintptr_t)buf;
    return job->fmt != NULL ? checksum_records(job, b, n)
                            : checksum(b, n, ordered && kt ? kt->from_ordered : NULL,
                                       job->threads);
}

int sort_check_output(struct sort_job *job)
{
    sort_check_corrupt(job, job->out, job->n_out);
    uint64_t bad = sort_check_descents(job, job->out, job->n_out);
    const void *last = job->n_out > 0 ? sort_elem(job, job->out, job->n_out - 1) : NULL;
    return sort_check_verdict(job, bad, job->n_out, job->n_out > 0 ? job->out : NULL, last,
                              sort_check_sum(job, job->out, job->n_out, 1));
}

int sort_check_verdict(struct sort_job *job, uint64_t bad, uint64_t n, const void *first_elem,
                       const void *last_elem, struct verify_checksum sum)
{
    int p = job->size, err = UTIL_OK;
    /* This rank's slice, then the seams between ranks (empty ranks have none). */
    if (bad != 0) {
        err = util_fail(UTIL_ECHECK, "rank %d: check: the output is out of order at %llu places",
                        job->rank, (unsigned long long)bad);
    }
    /* Each rank's count, first key and last key, a key taking kw words (records: the key
     * bytes, zero padded). */
    const size_t kw = job->fmt != NULL ? (job->fmt->key_size + 7) / 8 : 1, mw = 1 + 2 * kw;
    uint64_t *all = util_malloc(((size_t)p + 1) * mw * sizeof(uint64_t));
    uint64_t *mine = all != NULL ? all + (size_t)p * mw : NULL;
    if (mine != NULL) {
        memset(mine, 0, mw * sizeof(uint64_t));
        mine[0] = n;
        if (n > 0 && job->fmt != NULL) {
            const size_t off = job->fmt->key_offset, k = job->fmt->key_size;
            memcpy(mine + 1, (const unsigned char *)first_elem + off, k);
            memcpy(mine + 1 + kw, (const unsigned char *)last_elem + off, k);
        } else if (n > 0) {
            memcpy(mine + 1, first_elem, sizeof(uint64_t));
            memcpy(mine + 2, last_elem, sizeof(uint64_t));
        }
    }
    int ok = all != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        util_free(all);
        return all == NULL ? util_fail(UTIL_ENOMEM, "rank %d: check: out of memory", job->rank)
                           : UTIL_ENOMEM;
    }
    MPI_Allgather(mine, (int)mw, MPI_UINT64_T, all, (int)mw, MPI_UINT64_T, job->comm);
    const uint64_t *last = NULL;
    for (int r = 0; r < p; r++) {
        const uint64_t *e = all + (size_t)r * mw;
        if (e[0] == 0) {
            continue;
        }
        int descends = 0;
        if (last != NULL) {
            descends = job->fmt != NULL ? memcmp(last, e + 1, job->fmt->key_size) > 0
                                        : *last > e[1];
        }
        if (descends && err == UTIL_OK && job->rank == r) {
            err = util_fail(UTIL_ECHECK, "rank %d: check: the output is out of order between "
                                         "this rank and the one before", r);
        }
        last = e + 1 + kw;
    }
    util_free(all);

    /* The multiset, in the file encoding. */
    uint64_t out[3];
    int rc = sum_ranks(job, sum, out);
    if (rc != UTIL_OK) {
        return rc;
    }
    if (memcmp(out, job->check_in, sizeof(out)) != 0 && err == UTIL_OK && job->rank == 0) {
        err = util_fail(UTIL_ECHECK, "check: the output is not a permutation of the input "
                                     "(%llu %s read, %llu in the output%s)",
                        (unsigned long long)job->check_in[0], job->fmt ? "records" : "keys",
                        (unsigned long long)out[0],
                        out[0] == job->check_in[0] ? ", checksums differ" : "");
    }
    return err;
}

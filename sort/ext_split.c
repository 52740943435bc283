/*
 * sort/ext_split.c: the external sort's splitters and the classification of elements against
 * them (see sort/ext.h).
 *
 * Splitters come from a random sample, as in the sample sort of Frazer and McKellar and in the
 * distribution passes of TritonSort (Rasmussen et al., "TritonSort: A Balanced Large-Scale
 * Sorting System", NSDI 2011, section 3.1) and Themis: S samples a bucket, sorted, and every
 * S-th becomes a splitter. Each sample is a (key, position) pair, so that every element is
 * distinct in (key, position) order and a bucket's size does not depend on duplicates: the
 * expected size of each of the nb buckets is n / nb, and with S samples a bucket its relative
 * deviation is about 1/sqrt(S) (12% at S = 64). A bucket that still ends too big for memory is
 * split by the extra pass of sort/ext.c, never sorted short of room.
 *
 * Classification is a binary search over the splitters' first key words (the ordered key of a
 * number, the first 8 bytes of a record's key), branch-free, with the rare elements that tie a
 * splitter's first word settled by the whole key and the position. Cost: log2(nb) comparisons
 * an element over an array that stays in L1 for up to ~4000 buckets.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "sort/ext.h"
#include "sort/rules.h"
#include "util/aio.h"
#include "util/alloc.h"
#include "util/util.h"

void ext_splitters_free(struct ext_splitters *s)
{
    util_free(s->lut);
    util_free(s->prefix);
    util_free(s->pos);
    util_free(s->key);
    memset(s, 0, sizeof(*s));
}

/* Words of a sample in the tie-break's encoding (sort/rules.h): a struct sort_tuple for
 * numbers, a blob for records. */
static size_t sample_words(size_t ksize)
{
    return ksize > 0 ? sort_blob_words(ksize) : 2;
}

/* The first 8 bytes of a key of @ksize bytes, big-endian, zero padded. */
static uint64_t key_prefix(const unsigned char *k, size_t ksize)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8 && i < ksize; i++) {
        v |= (uint64_t)k[i] << (56 - 8 * i);
    }
    return v;
}

/* The first 8 bytes of a record's key, big-endian, zero padded. */
static uint64_t rec_prefix(const struct util_format *f, const unsigned char *rec)
{
    return util_format_prefix(f, rec);
}

/* Fills sample @b from element @e at position @pos. */
static void make_blob(const struct util_format *fmt, const void *e, uint64_t pos, uint64_t *b)
{
    if (fmt == NULL) {
        struct sort_tuple t = {pos, 0};
        memcpy(&t.key, e, sizeof(uint64_t));
        memcpy(b, &t, sizeof(t));
        return;
    }
    sort_blob_make(b, (const unsigned char *)e + fmt->key_offset, fmt->key_size, pos);
}

/*
 * The classification's table: for the top b bits of a first word, where the splitters whose
 * first words share them begin (lut[i] = splitters whose first word is below i << (64 - b)),
 * so that the search covers lut[i] .. lut[i + 1], a splitter or two on most inputs, instead of
 * log2(nb) steps. b is log2(nb) + 3, 8 to 16 bits: at most 256 KiB of table, which an L2 holds.
 */
static int build_lut(struct ext_splitters *s)
{
    uint64_t m = s->nb - 1;
    unsigned bits = 3;
    while (bits < 16 && ((uint64_t)1 << (bits - 3)) < m) {
        bits++;
    }
    bits = bits < 8 ? 8 : bits;
    s->lut_shift = 64 - bits;
    size_t n = ((size_t)1 << bits) + 1;
    s->lut = util_malloc(n * sizeof(uint32_t));
    if (s->lut == NULL) {
        ext_splitters_free(s);
        return UTIL_ENOMEM;
    }
    uint64_t j = 0;
    for (size_t i = 0; i < n; i++) {
        /* The first splitter whose first word is at or above i << shift (all, past the end). */
        while (j < m && i < n - 1 && (s->prefix[j] >> s->lut_shift) < i) {
            j++;
        }
        s->lut[i] = (uint32_t)(i == n - 1 ? m : j);
    }
    return UTIL_OK;
}

/* Sorts @t samples and takes the nb - 1 splitters at ranks floor(j t / nb). */
static int pick(uint64_t *blobs, uint64_t t, size_t ksize, uint64_t nb, struct ext_splitters *s)
{
    size_t words = sample_words(ksize);
    memset(s, 0, sizeof(*s));
    s->nb = nb;
    s->ksize = ksize;
    uint64_t m = nb - 1;
    s->prefix = util_malloc((m ? m : 1) * sizeof(uint64_t));
    s->pos = util_malloc((m ? m : 1) * sizeof(uint64_t));
    s->key = ksize > 0 ? util_malloc((m ? m : 1) * ksize) : NULL;
    if (s->prefix == NULL || s->pos == NULL || (ksize > 0 && s->key == NULL)) {
        ext_splitters_free(s);
        return UTIL_ENOMEM;
    }
    if (ksize > 0) {
        qsort_r(blobs, t, words * 8, sort_blob_cmp, &ksize);
    } else {
        qsort(blobs, t, words * 8, sort_tuple_cmp);
    }
    for (uint64_t j = 1; j < nb; j++) {
        /* With no sample at all, every splitter is the greatest pair: one bucket takes all. */
        const uint64_t *b = t > 0 ? blobs + (size_t)((unsigned __int128)j * t / nb) * words : NULL;
        if (b == NULL) {
            s->prefix[j - 1] = UINT64_MAX;
            s->pos[j - 1] = UINT64_MAX;
            if (ksize > 0) {
                memset(s->key + (j - 1) * ksize, 0xff, ksize);
            }
        } else if (ksize == 0) {
            const struct sort_tuple *tp = (const struct sort_tuple *)(const void *)b;
            s->prefix[j - 1] = tp->key;
            s->pos[j - 1] = tp->pos;
        } else {
            memcpy(s->key + (j - 1) * ksize, b, ksize);
            s->prefix[j - 1] = key_prefix((const unsigned char *)b, ksize);
            s->pos[j - 1] = b[words - 1];
        }
    }
    return build_lut(s);
}

/* @k distinct-enough random indices in [0, n), ascending (drawn with replacement, sorted). */
static void draw(uint64_t *idx, uint64_t k, uint64_t n, uint64_t seed)
{
    for (uint64_t i = 0; i < k; i++) {
        uint64_t r = util_splitmix64(&seed);
        idx[i] = (uint64_t)(((unsigned __int128)r * n) >> 64);
    }
    for (uint64_t i = 1; i < k; i++) { /* insertion sort would be k^2: use qsort */
        if (idx[i] < idx[i - 1]) {
            qsort(idx, k, sizeof(uint64_t), util_cmp_u64);
            break;
        }
    }
}

/* Reads the samples at @idx[0..k) through @read and makes their blobs. Numbers are mapped to
 * ordered keys (@to_ordered) when @map is set. */
static int read_samples(const struct sort_job *job, ext_read_fn *read, void *arg,
                        const uint64_t *idx, uint64_t k, uint64_t base, int map, uint64_t *blobs)
{
    const struct util_format *fmt = job->fmt;
    size_t words = sample_words(fmt ? fmt->key_size : 0);
    unsigned char e[UTIL_RECORD_MAX];
    for (uint64_t i = 0; i < k; i++) {
        int err = read(arg, idx[i], 1, e);
        if (err != UTIL_OK) {
            return err;
        }
        if (fmt == NULL && map && job->cfg->format && job->cfg->format->to_ordered) {
            job->cfg->format->to_ordered((uint64_t *)(void *)e, 1);
        }
        make_blob(fmt, e, base + idx[i], blobs + i * words);
    }
    return UTIL_OK;
}

/* The file reader of the global sample: element i of the rank's slice of the input. */
struct file_reader {
    int fd;
    uint64_t offset; /* elements: the slice's first */
    size_t rsize;
};

static int read_file(void *arg, uint64_t index, uint64_t count, void *dst)
{
    struct file_reader *r = arg;
    int e = util_pio(UTIL_AIO_READ, r->fd, dst, count * r->rsize,
                     (r->offset + index) * r->rsize);
    return e == 0 ? UTIL_OK : UTIL_EIO;
}

int ext_splitters_global(struct sort_job *job, int fd, uint64_t nb, uint64_t per_bucket,
                         struct ext_splitters *s)
{
    const size_t ksize = job->fmt ? job->fmt->key_size : 0;
    const size_t words = sample_words(ksize);
    const int p = job->size;
    uint64_t total = nb * (per_bucket ? per_bucket : 1);
    /* This rank's share of the sample, in proportion to its slice. */
    uint64_t k = job->n_total ? (uint64_t)(((unsigned __int128)total * job->n_local +
                                            job->n_total - 1) / job->n_total)
                              : 0;
    k = k < job->n_local ? k : job->n_local;
    uint64_t *idx = util_malloc((k ? k : 1) * sizeof(uint64_t));
    uint64_t *mine = util_malloc((k ? k : 1) * words * 8);
    int *counts = util_malloc(2 * (size_t)p * sizeof(int));
    uint64_t *all = NULL;
    int err = idx && mine && counts ? UTIL_OK : UTIL_ENOMEM;
    if (err == UTIL_OK) {
        struct file_reader r = {fd, job->offset, job->rsize};
        draw(idx, k, job->n_local, util_mix64(0x5eed0001u ^ (uint64_t)job->rank << 20));
        err = read_samples(job, read_file, &r, idx, k, job->offset, 1, mine);
        job->stats->pass_bytes[0][0] += k * job->rsize;
        if (err == UTIL_EIO) {
            util_fail(UTIL_EIO, "rank %d: sample: cannot read the input (%s)", job->rank,
                      job->in_path);
        }
    } else {
        util_fail(UTIL_ENOMEM, "rank %d: sample: out of memory for %llu samples", job->rank,
                  (unsigned long long)k);
    }
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        goto done;
    }
    /* Every rank gathers every sample (T blobs) and picks the same splitters. */
    int mine_words = (int)(k * words);
    MPI_Allgather(&mine_words, 1, MPI_INT, counts, 1, MPI_INT, job->comm);
    uint64_t t = 0;
    for (int r = 0; r < p; r++) {
        counts[p + r] = (int)(t * words);
        t += (uint64_t)counts[r] / words;
    }
    all = util_malloc((t ? t : 1) * words * 8);
    err = all != NULL ? UTIL_OK : util_fail(UTIL_ENOMEM, "rank %d: sample: out of memory for "
                                                         "%llu samples", job->rank,
                                            (unsigned long long)t);
    if ((err = sort_agree(job, err)) != UTIL_OK) {
        goto done;
    }
    MPI_Allgatherv(mine, mine_words, MPI_UINT64_T, all, counts, counts + p, MPI_UINT64_T,
                   job->comm);
    err = pick(all, t, ksize, nb, s);
    if (err != UTIL_OK) {
        util_fail(err, "rank %d: splitters: out of memory for %llu splitters", job->rank,
                  (unsigned long long)nb);
    }
    err = sort_agree(job, err);
    job->stats->samples = t;
done:
    util_free(idx);
    util_free(mine);
    util_free(counts);
    util_free(all);
    return err;
}

int ext_splitters_local(const struct sort_job *job, ext_read_fn *read, void *arg, uint64_t n,
                        uint64_t base, uint64_t nb, uint64_t per_bucket, struct ext_splitters *s)
{
    const size_t ksize = job->fmt ? job->fmt->key_size : 0;
    const size_t words = sample_words(ksize);
    uint64_t k = nb * (per_bucket ? per_bucket : 1);
    k = k < n ? k : n;
    uint64_t *idx = util_malloc((k ? k : 1) * sizeof(uint64_t));
    uint64_t *blobs = util_malloc((k ? k : 1) * words * 8);
    int err = idx && blobs ? UTIL_OK : UTIL_ENOMEM;
    if (err == UTIL_OK) {
        draw(idx, k, n, util_mix64(0x5eed0002u ^ base ^ (uint64_t)job->rank << 40));
        /* The bucket holds ordered keys already: no map. */
        err = read_samples(job, read, arg, idx, k, base, 0, blobs);
    }
    if (err == UTIL_OK) {
        err = pick(blobs, k, ksize, nb, s);
    }
    util_free(idx);
    util_free(blobs);
    return err;
}

/* Splitters below the element (@pfx, the rest of its key at @key, @pos): its bucket. */
static inline uint64_t bucket_of(const struct ext_splitters *s, uint64_t pfx,
                                 const unsigned char *key, uint64_t pos)
{
    const uint64_t *a = s->prefix;
    /* hi = splitters whose first word is <= pfx: a branch-free upper bound, within the range
     * the table gives for pfx's top bits (usually a splitter or two, or none). */
    uint64_t top = pfx >> s->lut_shift;
    const uint64_t *b = a + s->lut[top];
    uint64_t len = s->lut[top + 1] - s->lut[top];
    while (len > 1) {
        uint64_t half = len / 2;
        b = b[half] <= pfx ? b + half : b;
        len -= half;
    }
    uint64_t hi = (uint64_t)(b - a) + (len > 0 && *b <= pfx);
    if (hi == 0 || a[hi - 1] != pfx) {
        return hi; /* no splitter shares the first word: all those below are smaller */
    }
    /* Ties on the first word: [first, hi) share it; compare the rest of the key and the
     * position (ascending in that range, the splitters being sorted). */
    uint64_t first = hi - 1;
    while (first > 0 && a[first - 1] == pfx) {
        first--;
    }
    uint64_t l = first, h = hi; /* the first splitter in [first, hi) that is >= the element */
    while (l < h) {
        uint64_t mid = l + (h - l) / 2;
        int c = 0;
        if (s->ksize > 8 && key != NULL) {
            c = memcmp(s->key + mid * s->ksize + 8, key + 8, s->ksize - 8);
        }
        if (c == 0) {
            c = s->pos[mid] < pos ? -1 : s->pos[mid] > pos;
        }
        if (c < 0) {
            l = mid + 1;
        } else {
            h = mid;
        }
    }
    return l;
}

void ext_classify(const struct ext_splitters *s, const struct util_format *fmt, size_t rsize,
                  const void *elems, uint64_t n, uint64_t pos0, uint32_t *ids, uint64_t *counts,
                  int threads)
{
    const uint64_t nb = s->nb;
    const unsigned char *e = elems;
    if (nb == 1) {
        memset(ids, 0, n * sizeof(uint32_t));
        counts[0] += n;
        return;
    }
    int nt = threads > 1 && n >= 65536 ? threads : 1;
    uint64_t *local = nt > 1 ? util_calloc((size_t)nt * nb, sizeof(uint64_t)) : NULL;
    if (local == NULL) {
        nt = 1;
    }
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        uint64_t *c = nt > 1 ? local + (size_t)t * nb : counts;
        uint64_t lo = n * (uint64_t)t / (uint64_t)nt, hi = n * (uint64_t)(t + 1) / (uint64_t)nt;
        for (uint64_t i = lo; i < hi; i++) {
            const unsigned char *x = e + i * rsize;
            uint64_t b;
            if (fmt == NULL) {
                uint64_t k;
                memcpy(&k, x, sizeof(k));
                b = bucket_of(s, k, NULL, pos0 + i);
            } else {
                b = bucket_of(s, rec_prefix(fmt, x), x + fmt->key_offset, pos0 + i);
            }
            ids[i] = (uint32_t)b;
            c[b]++;
        }
    }
    if (nt > 1) {
        for (int t = 0; t < nt; t++) {
            for (uint64_t b = 0; b < nb; b++) {
                counts[b] += local[(size_t)t * nb + b];
            }
        }
        util_free(local);
    }
}

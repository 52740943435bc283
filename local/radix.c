/*
 * local/radix.c: the OpenMP-parallel MSD radix sort of uint64 keys (see local/local.h).
 *
 * Scheme, for n keys and T threads:
 *  1. First pass. One parallel read of the keys computes their AND and OR (the bits where
 *     they differ), whether they are ascending or descending, and, in the same loop, the
 *     histogram of the digit the spread will use: its position comes from the varying bits of
 *     256 evenly spaced keys, and is checked against the exact ones afterwards (a key varying
 *     above what the sample saw costs one more counting pass). Sorted, reverse and all-equal
 *     input stop here; input whose sample is already monotone is scanned without counting.
 *  2. Spread. One parallel counting scatter keys -> scratch on the top varying bits, as many
 *     as make the average bucket fit the in-cache kernel (tuning.bucket_keys), at most
 *     tuning.spread_bits. Each thread scatters its own contiguous chunk to private positions
 *     (an exclusive prefix over (bucket, thread)): no atomics. A pass larger than the caches
 *     may go through software write-combining buffers, one cache line of keys per bucket,
 *     written out whole with streaming stores when full (Polychroniou and Ross, "A
 *     comprehensive study of main-memory partitioning and its application to large-scale
 *     comparison- and radix-sort", SIGMOD 2014, section 4.2): the write-allocate read of every
 *     destination line and most TLB traffic disappear. Whether that beats plain stores depends
 *     on the CPU, so each pass measures it on its first keys (scatter_chunk()).
 *  3. Buckets. A bucket larger than a thread's fair share is sorted by all threads with the
 *     same scheme (recursively, the arrays swapping roles); the others are taken dynamically,
 *     largest first. A bucket still larger than the kernel's size gets sequential spread
 *     passes; a bucket that fits goes to the in-cache kernel:
 *       radix:  an LSD radix sort over the bucket's varying bits only (digits start at varying
 *               bits, all histograms in one pass), with the other array as scratch;
 *       vqsort: Highway's vectorised quicksort in place (sort/vqsort.cc), after at most one
 *               spread, on buckets of any size (see calibrate()).
 *     Which kernel is faster depends on the CPU (vqsort's AVX-512 paths against scalar
 *     scatters), so the process calibrates both once on a bucket of its own size and keeps the
 *     faster (local_tuning_default()).
 *
 * Every spread consumes at least one varying bit, so recursion is bounded by 64 levels. Cost
 * for uniform keys: one read pass, one scatter pass (about n / T per thread each), then the
 * kernel on buckets that fit L2. Sizes come from the caches read at run time (util/cpu.h), so
 * the same binary is tuned on a CPU with 512 KiB of L2 and on one with 1 MiB.
 */
#include "local/internal.h"

#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "util/alloc.h"
#include "util/cpu.h"
#include "util/knobs.h"
#include "util/util.h"

/* The LSD kernel's digit mask; the rest of the sizes are local/config.h's. */
#define LINE_KEYS LOCAL_LINE_KEYS
#define SAMPLE_KEYS LOCAL_SAMPLE_KEYS
#define MAX_SPREAD_BITS LOCAL_MAX_SPREAD_BITS

/* What one read-only pass learns about the input. */
struct scan {
    uint64_t and_all;   /* AND of all keys */
    uint64_t or_all;    /* OR of all keys */
    bool ascending;     /* non-decreasing */
    bool descending;    /* non-increasing */
};

static inline void progress_add(const struct local_tuning *t, size_t keys)
{
    if (t->progress != NULL) {
        __atomic_add_fetch(t->progress, (uint64_t)keys, __ATOMIC_RELAXED);
    }
}

/* Copies @n keys with @threads threads (one thread below the parallel threshold). */
static void copy_keys(uint64_t *dst, const uint64_t *src, size_t n, int threads, size_t par_min)
{
    if (threads <= 1 || n < par_min) {
        util_copy(dst, src, n * sizeof(*src));
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t lo = local_part_begin(n, t, nt), hi = local_part_begin(n, t + 1, nt);
        util_copy(dst + lo, src + lo, (hi - lo) * sizeof(*src));
    }
}

/* Reverses x[0..n) into dst (dst == x: in place). */
static void reverse_keys(uint64_t *x, uint64_t *dst, size_t n, int threads, size_t par_min)
{
    if (dst == x) {
#pragma omp parallel for num_threads(threads) if (threads > 1 && n >= par_min) schedule(static)
        for (size_t i = 0; i < n / 2; i++) {
            uint64_t t = x[i];
            x[i] = x[n - 1 - i];
            x[n - 1 - i] = t;
        }
        return;
    }
#pragma omp parallel for num_threads(threads) if (threads > 1 && n >= par_min) schedule(static)
    for (size_t i = 0; i < n; i++) {
        dst[i] = x[n - 1 - i];
    }
}

/* ------------------------------------------------------------------------------------------ */
/* The first pass and the spread                                                               */

/* AND, OR and monotonicity of chunk x[lo..hi) of x[0..m), its last key compared with the next
 * chunk's first; with @h, the histogram of digit (key >> shift) & mask as well. With @h and
 * !@order the caller knows the keys are neither ascending nor descending (a sample of them is
 * not monotone), and the loop leaves the comparisons out: they cost as much as the histogram. */
static void scan_chunk(const uint64_t *x, size_t lo, size_t hi, size_t m, unsigned shift,
                       uint64_t mask, size_t *h, bool order, struct scan *s)
{
    uint64_t a = ~(uint64_t)0, o = 0, prev = x[lo];
    unsigned not_up = 0, not_down = 0;
    if (h != NULL && !order) {
        for (size_t i = lo; i < hi; i++) {
            uint64_t v = x[i];
            h[(v >> shift) & mask]++;
            a &= v;
            o |= v;
        }
        *s = (struct scan){a, o, false, false};
        return;
    }
    if (h != NULL) {
        for (size_t i = lo; i < hi; i++) {
            uint64_t v = x[i];
            h[(v >> shift) & mask]++;
            a &= v;
            o |= v;
            not_up |= prev > v;
            not_down |= prev < v;
            prev = v;
        }
    } else {
        for (size_t i = lo; i < hi; i++) {
            uint64_t v = x[i];
            a &= v;
            o |= v;
            not_up |= prev > v;
            not_down |= prev < v;
            prev = v;
        }
    }
    if (hi < m) {
        not_up |= x[hi - 1] > x[hi];
        not_down |= x[hi - 1] < x[hi];
    }
    s->and_all = a;
    s->or_all = o;
    s->ascending = !not_up;
    s->descending = !not_down;
}

/* Step 1 over x[0..m) in @chunks chunks (one per thread): the combined scan in *@s and, with
 * @hist (chunks x 2^bits counters), each chunk's histogram of digit (key >> shift); @order as
 * for scan_chunk(). */
static void scan_count(const uint64_t *x, size_t m, unsigned shift, uint64_t mask, size_t *hist,
                       bool order, int chunks, struct scan *s)
{
    struct scan one, *part = chunks > 1 ? util_malloc((size_t)chunks * sizeof(*part)) : &one;
    size_t nb = (size_t)mask + 1;
    if (part == NULL) { /* no room for the partial results: one chunk, the same answer */
        part = &one;
        if (hist != NULL) {
            for (int c = 1; c < chunks; c++) {
                memset(hist + (size_t)c * nb, 0, nb * sizeof(*hist));
            }
        }
        chunks = 1;
    }
#pragma omp parallel num_threads(chunks) if (chunks > 1)
    {
        int nt = omp_get_num_threads();
        for (int c = omp_get_thread_num(); c < chunks; c += nt) {
            size_t lo = local_part_begin(m, (size_t)c, (size_t)chunks);
            size_t hi = local_part_begin(m, (size_t)c + 1, (size_t)chunks);
            size_t *h = hist ? hist + (size_t)c * nb : NULL;
            if (h != NULL) {
                memset(h, 0, nb * sizeof(*h));
            }
            if (lo < hi) {
                scan_chunk(x, lo, hi, m, shift, mask, h, order, &part[c]);
            } else {
                part[c] = (struct scan){~(uint64_t)0, 0, true, true};
            }
        }
    }
    *s = part[0];
    for (int c = 1; c < chunks; c++) {
        s->and_all &= part[c].and_all;
        s->or_all |= part[c].or_all;
        s->ascending = s->ascending && part[c].ascending;
        s->descending = s->descending && part[c].descending;
    }
    if (part != &one) {
        util_free(part);
    }
}

/* The varying bits of SAMPLE_KEYS evenly spaced keys, and whether they are monotone. */
static uint64_t sample_vary(const uint64_t *x, size_t m, bool *monotone)
{
    uint64_t a = ~(uint64_t)0, o = 0, prev = x[0];
    bool up = true, down = true;
    for (size_t k = 0; k < SAMPLE_KEYS; k++) {
        uint64_t v = x[(size_t)(((unsigned __int128)k * m) / SAMPLE_KEYS)];
        a &= v;
        o |= v;
        up = up && prev <= v;
        down = down && prev >= v;
        prev = v;
    }
    *monotone = up || down;
    return a ^ o;
}

/*
 * Scatters chunk x[lo..hi) into y by digit (key >> shift) & mask, bucket b's keys going to its
 * region y[pos[b]..end[b]): one store per key, through the caches. Each region is written from
 * a point of its own, wrapping round at its end: when the regions are as long as a multiple of a
 * large power of two (a power-of-two count of uniform keys), write positions that advanced in
 * step would fall into a few cache sets and evict each other (2.3x slower on one CPU); starting
 * region b (b * 37) lines in spreads them over the sets. The order of keys inside a bucket does
 * not matter: it is sorted next, and equal keys are indistinguishable. @pos is clobbered,
 * @begin (nb entries) is scratch.
 */
static void scatter_plain(const uint64_t *x, size_t lo, size_t hi, uint64_t *y, unsigned shift,
                          uint64_t mask, size_t *pos, const size_t *end, size_t *begin)
{
    size_t nb = (size_t)mask + 1;
    for (size_t b = 0; b < nb; b++) {
        size_t len = end[b] - pos[b];
        begin[b] = pos[b];
        pos[b] += len != 0 ? (b * 37 * LINE_KEYS) % len : 0;
    }
    for (size_t i = lo; i < hi; i++) {
        uint64_t v = x[i];
        size_t b = (size_t)((v >> shift) & mask);
        size_t p = pos[b];
        y[p++] = v;
        pos[b] = p == end[b] ? begin[b] : p;
    }
}

#if defined(__SSE2__)
/*
 * The same scatter around the caches: keys gather in @lines (one 64-byte line per bucket,
 * aligned like the lines of y), and a line goes out whole when it fills, with four 16-byte
 * streaming stores that the CPU's write-combining buffers join into one line write (no read of
 * the destination line first). The last key never goes through the buffer: a 16-byte load of
 * it right after its 8-byte store cannot be forwarded from the store buffer and stalls (seen
 * here as a third of the pass); the other slots were stored long before. Eight 8-byte
 * streaming stores instead measured slower still. Lines shared with a neighbour region (another chunk's or
 * bucket's keys) and the partial lines at the end are written key by key. @rs receives the
 * region starts (scratch of 2^bits entries).
 */
static void scatter_stream(const uint64_t *x, size_t lo, size_t hi, uint64_t *y, unsigned shift,
                           uint64_t mask, size_t *pos, size_t *rs, uint64_t *lines)
{
    size_t nb = (size_t)mask + 1;
    const size_t off = ((uintptr_t)y / sizeof(*y)) & (LINE_KEYS - 1);
    memcpy(rs, pos, nb * sizeof(*rs));
    for (size_t i = lo; i < hi; i++) {
        uint64_t v = x[i];
        size_t b = (size_t)((v >> shift) & mask);
        size_t p = pos[b]++;
        uint64_t *line = lines + b * LINE_KEYS;
        size_t slot = (p + off) & (LINE_KEYS - 1);
        if (slot != LINE_KEYS - 1) {
            line[slot] = v;
            continue;
        }
        size_t first = p - (LINE_KEYS - 1);
        if (p >= LINE_KEYS - 1 && first >= rs[b]) {
            const __m128i *s = (const __m128i *)(const void *)line;
            __m128i *d = (__m128i *)(void *)(y + first);
            _mm_stream_si128(d, _mm_load_si128(s));
            _mm_stream_si128(d + 1, _mm_load_si128(s + 1));
            _mm_stream_si128(d + 2, _mm_load_si128(s + 2));
            _mm_stream_si128(d + 3, _mm_set_epi64x((long long)v, (long long)line[6]));
        } else {
            line[slot] = v;
            for (size_t q = rs[b]; q <= p; q++) {
                y[q] = line[(q + off) & (LINE_KEYS - 1)];
            }
        }
    }
    /* The partial last line of every bucket. */
    for (size_t b = 0; b < nb; b++) {
        size_t e = pos[b], fill = (e + off) & (LINE_KEYS - 1);
        size_t first = e >= fill ? e - fill : 0;
        first = first < rs[b] ? rs[b] : first;
        const uint64_t *line = lines + b * LINE_KEYS;
        for (size_t q = first; q < e; q++) {
            y[q] = line[(q + off) & (LINE_KEYS - 1)];
        }
    }
    _mm_sfence(); /* streaming stores are weakly ordered: done before anyone reads y */
}
#endif

/* Scratch entries per bucket a chunk's scatter uses (see scatter_chunk()). */
#define SCRATCH_PER_BUCKET LOCAL_SCRATCH_PER_BUCKET

/* Bookkeeping of one spread of up to 2^bits buckets in @chunks chunks. */
struct spread {
    size_t *hist;    /* chunks x nb: counts, then each chunk's write positions */
    size_t *end;     /* chunks x nb: the end of each chunk's region of each bucket */
    size_t *scratch; /* chunks x nb x SCRATCH_PER_BUCKET: the scatter's own */
    size_t *start;   /* nb + 1: where bucket b begins in y */
    uint64_t *lines; /* chunks x nb x LINE_KEYS, 64-byte aligned */
    void *lines_raw;
};

static void spread_free(struct spread *sp)
{
    util_free(sp->hist);
    util_free(sp->end);
    util_free(sp->scratch);
    util_free(sp->start);
    util_free(sp->lines_raw);
}

static int spread_alloc(struct spread *sp, size_t nb, int chunks)
{
    size_t cells = nb * (size_t)chunks;
    memset(sp, 0, sizeof(*sp));
    sp->hist = util_malloc(cells * sizeof(size_t));
    sp->end = util_malloc(cells * sizeof(size_t));
    sp->scratch = util_malloc(cells * SCRATCH_PER_BUCKET * sizeof(size_t));
    sp->start = util_malloc((nb + 1) * sizeof(size_t));
    sp->lines_raw = util_malloc(cells * LINE_KEYS * sizeof(uint64_t) + 64);
    if (!sp->hist || !sp->end || !sp->scratch || !sp->start || !sp->lines_raw) {
        spread_free(sp);
        return UTIL_ENOMEM;
    }
    sp->lines = (uint64_t *)(((uintptr_t)sp->lines_raw + 63) & ~(uintptr_t)63);
    return UTIL_OK;
}

/* How a pass over @m keys scatters under tuning @t: PLAIN, STREAM, or AUTO (each chunk
 * measures). */
static enum local_scatter scatter_mode(size_t m, const struct local_tuning *t)
{
#if defined(__SSE2__)
    if (t->stream_keys == 0 || m < t->stream_keys) {
        return LOCAL_SCATTER_PLAIN;
    }
    return t->scatter;
#else
    (void)m;
    (void)t;
    return LOCAL_SCATTER_PLAIN;
#endif
}

/* AUTO scatters this fraction of a chunk's keys each way before it picks. */
#define PROBE_PARTS LOCAL_PROBE_PARTS

/*
 * Scatters chunk x[lo..hi) into its regions y[pos[b]..end[b]) by @mode, with @scratch (nb x
 * SCRATCH_PER_BUCKET entries) and @lines (nb lines) of its own. Plain or streaming stores: which
 * is faster depends on the CPU (on one AVX-512 CPU in a virtual machine streaming cost 1.4x,
 * where it won on the CPU the radix kernel was first tuned on), so AUTO measures it on the
 * chunk itself: it cuts off two sixteenths of the keys, A and B, counts them, gives each its own
 * part of every region (A, then B, then the rest C), scatters A plainly and B streaming, times
 * both, and scatters C the faster way.
 */
static void scatter_chunk(const uint64_t *x, size_t lo, size_t hi, uint64_t *y, unsigned shift,
                          uint64_t mask, size_t *pos, const size_t *end, size_t *scratch,
                          uint64_t *lines, enum local_scatter mode)
{
    size_t nb = (size_t)mask + 1;
#if defined(__SSE2__)
    if (mode == LOCAL_SCATTER_AUTO && hi - lo >= 2 * PROBE_PARTS) {
        size_t part = (hi - lo) / PROBE_PARTS;
        size_t *pos_a = scratch + nb, *end_a = scratch + 2 * nb, *pos_b = scratch + 3 * nb;
        /* Counts of A and B (in end_a, pos_b), then their regions at the front of each. */
        memset(end_a, 0, 2 * nb * sizeof(*end_a));
        for (size_t i = lo; i < lo + part; i++) {
            end_a[(x[i] >> shift) & mask]++;
        }
        for (size_t i = lo + part; i < lo + 2 * part; i++) {
            pos_b[(x[i] >> shift) & mask]++;
        }
        for (size_t b = 0; b < nb; b++) {
            size_t ca = end_a[b], cb = pos_b[b];
            pos_a[b] = pos[b];
            end_a[b] = pos[b] + ca;
            pos_b[b] = end_a[b];
            pos[b] = end_a[b] + cb; /* C starts where B ends */
        }
        double t0 = util_now();
        scatter_plain(x, lo, lo + part, y, shift, mask, pos_a, end_a, scratch);
        double t1 = util_now();
        scatter_stream(x, lo + part, lo + 2 * part, y, shift, mask, pos_b, scratch, lines);
        double t2 = util_now();
        lo += 2 * part;
        mode = t2 - t1 < t1 - t0 ? LOCAL_SCATTER_STREAM : LOCAL_SCATTER_PLAIN;
    }
    if (mode == LOCAL_SCATTER_STREAM) {
        scatter_stream(x, lo, hi, y, shift, mask, pos, scratch, lines);
        return;
    }
#else
    (void)lines;
    (void)mode;
#endif
    (void)nb;
    scatter_plain(x, lo, hi, y, shift, mask, pos, end, scratch);
}

/* Step 2 after the histograms of the chunks are in sp->hist: exclusive prefix over (bucket,
 * chunk), then every chunk scatters x -> y. */
static void spread_pass(const uint64_t *x, uint64_t *y, size_t m, unsigned shift, size_t nb,
                        struct spread *sp, int chunks, const struct local_tuning *t)
{
    enum local_scatter mode = scatter_mode(m, t);
    size_t sum = 0;
    for (size_t b = 0; b < nb; b++) {
        sp->start[b] = sum;
        for (int c = 0; c < chunks; c++) {
            size_t cell = (size_t)c * nb + b, cnt = sp->hist[cell];
            sp->hist[cell] = sum;
            sum += cnt;
            sp->end[cell] = sum;
        }
    }
    sp->start[nb] = sum;
    const uint64_t mask = (uint64_t)nb - 1;
#pragma omp parallel num_threads(chunks) if (chunks > 1)
    {
        int nt = omp_get_num_threads();
        for (int c = omp_get_thread_num(); c < chunks; c += nt) {
            size_t lo = local_part_begin(m, (size_t)c, (size_t)chunks);
            size_t hi = local_part_begin(m, (size_t)c + 1, (size_t)chunks);
            size_t cell = (size_t)c * nb;
            scatter_chunk(x, lo, hi, y, shift, mask, sp->hist + cell, sp->end + cell,
                          sp->scratch + cell * SCRATCH_PER_BUCKET,
                          sp->lines + cell * LINE_KEYS, mode);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* The sort                                                                                    */

/* What step 1 found: nothing left to do, or a spread to make. */
enum { PASS_DONE, PASS_SPREAD };

/* Digit width for a spread of m keys: enough buckets for the kernel (and for @threads to share
 * them out), at most tuning.spread_bits and the varying bits there are. */
static unsigned spread_width(size_t m, int threads, unsigned top, const struct local_tuning *t)
{
    size_t want = (m + t->bucket_keys - 1) / t->bucket_keys;
    size_t min_buckets = threads > 1 ? 8 * (size_t)threads : 2;
    want = want < min_buckets ? min_buckets : want;
    unsigned bits = 1;
    while (((size_t)1 << bits) < want && bits < t->spread_bits) {
        bits++;
    }
    return bits < top ? bits : top;
}

/*
 * Step 1 on x[0..m) with @chunks chunks: finishes sorted, reverse and all-equal input (the
 * result where @to_y says) and returns PASS_DONE; otherwise leaves the histograms of the
 * spread digit in sp->hist (allocated here, for *@bits bits at *@shift) and returns PASS_SPREAD.
 * Returns -1 when the bookkeeping cannot be allocated (nothing was changed).
 */
static int first_pass(uint64_t *x, uint64_t *y, size_t m, bool to_y, int chunks,
                      const struct local_tuning *t, struct spread *sp, unsigned *shift,
                      unsigned *bits)
{
    struct scan s;
    bool monotone;
    uint64_t svary = sample_vary(x, m, &monotone);
    unsigned guess = 0, width = 0;
    bool counted = false;
    if (!monotone && svary != 0) {
        /* Count while scanning, on the digit below the sample's top varying bit. */
        guess = local_high_bit(svary) + 1;
        width = spread_width(m, chunks, 64, t);
        width = width < guess ? width : guess;
        if (spread_alloc(sp, (size_t)1 << width, chunks) != UTIL_OK) {
            return -1;
        }
        scan_count(x, m, guess - width, ((uint64_t)1 << width) - 1, sp->hist, false, chunks,
                   &s);
        counted = true;
    } else {
        scan_count(x, m, 0, 0, NULL, true, chunks, &s);
    }
    uint64_t *dst = to_y ? y : x;
    uint64_t vary = s.and_all ^ s.or_all;
    if (s.ascending || vary == 0) {
        if (to_y) {
            copy_keys(y, x, m, chunks, t->par_min_keys);
        }
        goto done;
    }
    if (s.descending) {
        reverse_keys(x, dst, m, chunks, t->par_min_keys);
        goto done;
    }
    unsigned top = local_high_bit(vary) + 1;
    unsigned w = spread_width(m, chunks, top, t);
    if (!counted || top != guess || w != width) {
        /* The sample missed the top varying bits (or saw none): count again, exactly. */
        if (counted) {
            spread_free(sp);
        }
        if (spread_alloc(sp, (size_t)1 << w, chunks) != UTIL_OK) {
            return -1;
        }
        scan_count(x, m, top - w, ((uint64_t)1 << w) - 1, sp->hist, false, chunks, &s);
        guess = top;
        width = w;
    }
    *shift = guess - width;
    *bits = width;
    return PASS_SPREAD;
done:
    if (counted) {
        spread_free(sp);
    }
    return PASS_DONE;
}

/* qsort comparison of the last resort (seq_sort without memory for a spread). */
static int cmp_u64(const void *p, const void *q)
{
    uint64_t a = *(const uint64_t *)p, b = *(const uint64_t *)q;
    return (a > b) - (a < b);
}

/*
 * Sequential sort of x[0..m) into y (@to_y) or in place in x (!@to_y), the other array being
 * scratch: the kernel for buckets that fit it, otherwise a spread pass and recursion into the
 * sub-buckets (roles of x and y swapped). Without memory for a spread's bookkeeping it falls
 * back to the radix kernel, which needs none (its counts live on the stack).
 */
/* Whether seq_sort() spreads @m keys at spread level @level, or gives them to the kernel. */
static bool seq_spreads(size_t m, const struct local_tuning *t, unsigned level)
{
    return m > t->bucket_keys && m > 1 && m >= t->spread_min_keys &&
           (t->spread_levels == 0 || level < t->spread_levels);
}

static void seq_sort(uint64_t *x, uint64_t *y, size_t m, bool to_y,
                     const struct local_tuning *t, unsigned level)
{
    if (!seq_spreads(m, t, level)) {
        local_kernel_sort(x, y, m, to_y, t);
        return;
    }
    struct spread sp;
    unsigned shift = 0, bits = 0;
    int rc = first_pass(x, y, m, to_y, 1, t, &sp, &shift, &bits);
    if (rc == PASS_DONE) {
        return;
    }
    if (rc < 0) {
        struct local_tuning radix = *t;
        radix.kernel = LOCAL_KERNEL_RADIX;
        if (m < LOCAL_LSD_MAX_KEYS) {
            local_kernel_sort(x, y, m, to_y, &radix);
        } else { /* 2^31 keys and no memory for 100 KiB: leave the work to qsort */
            qsort(x, m, sizeof(*x), cmp_u64);
            if (to_y) {
                memcpy(y, x, m * sizeof(*x));
            }
        }
        return;
    }
    size_t nb = (size_t)1 << bits;
    spread_pass(x, y, m, shift, nb, &sp, 1, t);
    for (size_t b = 0; b < nb; b++) {
        size_t c = sp.start[b + 1] - sp.start[b];
        if (c > 0) {
            seq_sort(y + sp.start[b], x + sp.start[b], c, !to_y, t, level + 1);
        }
    }
    spread_free(&sp);
}

/* A bucket of the spread pass, for scheduling the largest first. */
struct bucket {
    size_t begin;
    size_t count;
};

static int bucket_larger_first(const void *a, const void *b)
{
    const struct bucket *p = a, *q = b;
    return (p->count < q->count) - (p->count > q->count);
}

static uint64_t *chunks_then_merge(uint64_t *x, uint64_t *y, size_t m, int threads,
                                   const struct local_tuning *t);
static void par_sort(uint64_t *x, uint64_t *y, size_t m, bool to_y, int threads,
                     const struct local_tuning *t, unsigned level);

/*
 * A bucket too big for one thread, at src[0..c), sorted by all threads into other (@to_other)
 * or back into src. Past the kernel's spread levels vqsort takes it as sorted chunks and a
 * merge: a bucket this big after a spread is mostly a few heavy keys (zipf), which vqsort's
 * partitioning disposes of in a pass, where more spreads would each cost a pass and move them
 * all again (measured 1.5x slower than one thread on 10^7 zipf keys).
 */
static void par_bucket(uint64_t *src, uint64_t *other, size_t c, bool to_other, int threads,
                       const struct local_tuning *t, unsigned level)
{
    if (t->kernel == LOCAL_KERNEL_VQSORT && t->spread_levels != 0 &&
        level >= t->spread_levels && threads <= LOCAL_MERGE_THREADS_MAX) {
        uint64_t *out = chunks_then_merge(src, other, c, threads, t);
        if (out == NULL) { /* no bookkeeping memory: src holds sorted chunks, one thread ends */
            seq_sort(src, other, c, to_other, t, level);
            return;
        }
        progress_add(t, c - c / 2); /* the merge: the other half of the work */
        if (!to_other) {
            copy_keys(src, other, c, threads, t->par_min_keys);
        }
        return;
    }
    par_sort(src, other, c, to_other, threads, t, level);
}

/*
 * Parallel sort of x[0..m) into y (@to_y) or in place in x, the other array being scratch:
 * steps 1 and 2 into the opposite array, then step 3 on the buckets.
 */
static void par_sort(uint64_t *x, uint64_t *y, size_t m, bool to_y, int threads,
                     const struct local_tuning *t, unsigned level)
{
    struct spread sp;
    unsigned shift = 0, bits = 0;
    int rc = first_pass(x, y, m, to_y, threads, t, &sp, &shift, &bits);
    if (rc == PASS_DONE) {
        progress_add(t, m);
        return;
    }
    if (rc < 0) {
        seq_sort(x, y, m, to_y, t, level); /* no bookkeeping memory: one thread */
        progress_add(t, m);
        return;
    }
    size_t nb = (size_t)1 << bits;
    struct bucket *order = util_malloc(nb * sizeof(*order));
    spread_pass(x, y, m, shift, nb, &sp, threads, t);

    /* Buckets that would unbalance the threads (more than half a thread's share of the keys)
     * are sorted by all threads together. */
    size_t big = m / (2 * (size_t)threads);
    big = big < t->par_min_keys ? t->par_min_keys : big;
    size_t nsmall = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t c = sp.start[b + 1] - sp.start[b];
        if (c == 0) {
            continue;
        }
        if (order != NULL && c <= big) {
            order[nsmall++] = (struct bucket){sp.start[b], c};
            continue;
        }
        /* The bucket is in y: sort it back into x unless the caller wants y. */
        par_bucket(y + sp.start[b], x + sp.start[b], c, !to_y, threads, t, level + 1);
    }
    spread_free(&sp);

    /* The rest: dynamically, largest first (longest-processing-time order). */
    if (order != NULL) {
        qsort(order, nsmall, sizeof(*order), bucket_larger_first);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (size_t k = 0; k < nsmall; k++) {
            size_t b0 = order[k].begin;
            seq_sort(y + b0, x + b0, order[k].count, !to_y, t, level + 1);
            progress_add(t, order[k].count);
        }
        util_free(order);
    }
}

/* Finishes x[0..m) when it is sorted, reverse sorted or all equal, found by one read when a
 * sample of it is monotone; returns whether it did. */
static bool trivially_sorted(uint64_t *x, size_t m)
{
    bool monotone;
    (void)sample_vary(x, m, &monotone);
    if (!monotone) {
        return false;
    }
    struct scan s;
    scan_count(x, m, 0, 0, NULL, true, 1, &s);
    if (s.ascending || s.and_all == s.or_all) {
        return true;
    }
    if (s.descending) {
        reverse_keys(x, x, m, 1, m);
        return true;
    }
    return false;
}

/*
 * The parallel sort with vqsort for a few threads: every thread sorts its own chunk of x in
 * place with vqsort, and local_merge_runs() merges the chunks into y with all threads (exact
 * splits, so the parts are balanced). Compared with a spread into buckets, this replaces a
 * counting pass and a scatter by one merging pass, which for two to four runs is cheaper
 * (a branch-free two-way merge, or a short loser tree). Returns y, or NULL when the merge has
 * no memory for its bookkeeping (x then holds sorted chunks: any sort may go on from there).
 */
static uint64_t *chunks_then_merge(uint64_t *x, uint64_t *y, size_t m, int threads,
                                   const struct local_tuning *t)
{
    uint64_t counts[LOCAL_MERGE_THREADS_MAX];
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int c = 0; c < threads; c++) {
        size_t lo = local_part_begin(m, (size_t)c, (size_t)threads);
        size_t hi = local_part_begin(m, (size_t)c + 1, (size_t)threads);
        local_vqsort_u64(x + lo, hi - lo);
        progress_add(t, (hi - lo) / 2); /* half the work: the merge is the rest */
    }
    for (int c = 0; c < threads; c++) {
        counts[c] = local_part_begin(m, (size_t)c + 1, (size_t)threads) -
                    local_part_begin(m, (size_t)c, (size_t)threads);
    }
    return local_merge_runs(x, counts, threads, y, threads) == UTIL_OK ? y : NULL;
}

int local_sort_either(uint64_t *keys, uint64_t *scratch, size_t n, int threads,
                             const struct local_tuning *t, uint64_t **sorted)
{
    struct local_tuning def;
    *sorted = keys;
    if (threads < 1) {
        return UTIL_EUSAGE;
    }
    if (n < 2) {
        return UTIL_OK;
    }
    if (keys == NULL || scratch == NULL) {
        return UTIL_EUSAGE;
    }
    if (t == NULL) {
        local_tuning_default(&def);
        t = &def;
    }
    if (n < t->par_min_keys || threads == 1) {
        /* An input the kernel takes whole (vqsort below its spread size, or a small input)
         * still skips sorted, reverse and all-equal input: one read when a sample of the keys is
         * already monotone. */
        if (seq_spreads(n, t, 0) || !trivially_sorted(keys, n)) {
            seq_sort(keys, scratch, n, false, t, 0);
        }
        progress_add(t, n);
        return UTIL_OK;
    }
    if (t->kernel == LOCAL_KERNEL_VQSORT && threads <= t->merge_threads &&
        n < t->merge_max_keys &&
        threads <= LOCAL_MERGE_THREADS_MAX && !trivially_sorted(keys, n)) {
        uint64_t *out = chunks_then_merge(keys, scratch, n, threads, t);
        if (out != NULL) {
            progress_add(t, n - n / 2); /* the merge: the other half of the work */
            *sorted = out;
            return UTIL_OK;
        }
    }
    par_sort(keys, scratch, n, false, threads, t, 0);
    return UTIL_OK;
}

int local_sort_tuned(uint64_t *keys, uint64_t *scratch, size_t n, int threads,
                            const struct local_tuning *t)
{
    uint64_t *sorted = keys;
    int rc = local_sort_either(keys, scratch, n, threads, t, &sorted);
    if (rc == UTIL_OK && sorted != keys) {
        copy_keys(keys, sorted, n, threads, 0);
    }
    return rc;
}

int local_sort(uint64_t *keys, uint64_t *scratch, size_t n, int threads)
{
    return local_sort_tuned(keys, scratch, n, threads, NULL);
}

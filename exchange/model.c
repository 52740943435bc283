/*
 * exchange/model.c: alpha-beta cost models of the exchange back-ends, and the count matrix a
 * sample sort hands them (see model.h).
 *
 * Every model walks the rounds its back-end would run on the byte matrix B and prices each
 * round as alpha * (start-ups of the busiest rank) + beta * (largest volume one rank sends or
 * receives in the round). Per model, the scheme and where it comes from:
 *   alltoallv-linear    all P-1 messages posted at once (Open MPI's basic linear algorithm):
 *                       one round, alpha (P-1) + beta max_i max(sent_i, received_i).
 *   alltoallv-pairwise  Open MPI's pairwise algorithm, the shift schedule of seed 003 §3.1:
 *                       P-1 rounds, in round k rank r sends to r+k and receives from r-k;
 *                       a round costs alpha + beta (its largest message).
 *   shift               the same rounds as the shift back-end runs them: empty pieces are
 *                       not sent, so they cost no start-up and synchronise nobody.
 *   pairwise            the 1-factorization of seed 004 §4.1: P-1 rounds (P for odd P), in
 *                       each every rank swaps with one partner; alpha + beta (largest message).
 *   transpose           Bader, Helman and JaJa's two regular rounds (seed 000): bins padded
 *                       to floor(n_max/P + (P-1)/2) and floor(h/P + (P-1)/2) elements, each
 *                       round an MPI_Alltoall: alpha (P-1) + beta (P-1) block.
 *   direct, forward,    the schedules of exchange/sched.h (seed 004 §2), built here on the
 *   fullduplex          packet matrix the MPI executor would build; each step costs alpha +
 *                       beta (its largest piece, in real bytes: last packets are short).
 *   grid                seed 003's two phases over a rows x cols grid (rows, then columns),
 *                       one bundle per peer and phase with a header of one 8-byte count per
 *                       (source, destination) pair: about 2 (sqrt(P) - 1) start-ups, data
 *                       moved up to twice.
 *   hypercube           log2 Q combining rounds (Q the largest power of two <= P, the other
 *                       ranks folded in before and out after), one bundle per round with an
 *                       8-byte count per pair: volume about (n/2) log2 P.
 * The round structure of pairwise, shift, grid and hypercube comes from exchange/topo.h, the
 * back-ends' own schedule functions. Where a model restates a rule instead (the scheduled
 * back-ends' packet size, the bundles' scatter threshold, the transpose dealing and bounds,
 * which are not exposed as functions), it is marked "mirrors"; keep the two in step.
 *
 * The second part models the sort's sample, splitter and bucket phases without MPI, so that
 * the simulator sees the count matrix a real run would exchange.
 */
#include "exchange/model.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/sched.h"
#include "exchange/topo.h"
#include "sort/sortex.h"
#include "util/alloc.h"
#include "util/util.h"

/* Bytes of one count in the headers of the grid and hypercube bundles. */
#define HEADER_BYTES ((uint64_t)sizeof(uint64_t))

/* ---- the case ------------------------------------------------------------------------------ */

uint64_t exchange_model_packet_bytes(int p, const uint64_t *bytes, uint64_t target_h)
{
    return exchange_sched_packet_bytes(p, bytes, 1, target_h);
}

void exchange_model_case_free(struct exchange_model_case *c)
{
    util_free(c->packets);
    c->packets = NULL;
}

int exchange_model_case_init(struct exchange_model_case *c, int p, const uint64_t *bytes,
                             uint64_t elem_bytes, uint64_t packet_bytes)
{
    memset(c, 0, sizeof(*c));
    if (p < 1 || p > EXCHANGE_MODEL_MAX_P) {
        return util_error("P must be from 1 to %d (%d)", EXCHANGE_MODEL_MAX_P, p);
    }
    size_t n = (size_t)p;
    c->p = p;
    c->bytes = bytes;
    c->elem_bytes = elem_bytes > 0 ? elem_bytes : 1;
    /* Sums in bytes first. The models add up to about 2P times all bytes (transpose's padded
     * blocks), so all of them together must stay below 2^64 / 4P: 1 PiB at P = 4096. */
    uint64_t h_bytes = 0, total = 0, all = 0, limit = UINT64_MAX / (4 * (uint64_t)n);
    for (size_t i = 0; i < n; i++) {
        uint64_t row = 0, col = 0;
        for (size_t j = 0; j < n; j++) {
            uint64_t x = bytes[i * n + j], y = bytes[j * n + i];
            if (x > limit - all || y > limit - col || x > limit - row) {
                return util_error("the counts are too large to model: at most %llu bytes in "
                                  "all (row %zu)",
                                  (unsigned long long)limit, i);
            }
            all += x;
            row += i != j ? x : 0; /* sent and received exclude the local copy */
            col += i != j ? y : 0;
            total += i != j ? x : 0;
        }
        h_bytes = row + col > h_bytes ? row + col : h_bytes;
    }
    c->h_bytes = h_bytes;
    c->total_bytes = total;
    c->packet_fixed = packet_bytes > 0;
    c->packet_bytes = packet_bytes > 0 ? packet_bytes : exchange_model_packet_bytes(p, bytes, 0);
    /* The packet matrix exactly as the executor builds it: ceil(b / S), diagonal 0. */
    c->packets = util_malloc(n * n * sizeof(uint64_t));
    if (c->packets == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory for a %d x %d packet matrix", p, p);
    }
    for (size_t k = 0; k < n * n; k++) {
        c->packets[k] = exchange_sched_packets(bytes[k], c->packet_bytes);
    }
    for (size_t i = 0; i < n; i++) {
        c->packets[i * n + i] = 0;
    }
    if (exchange_sched_degrees(p, c->packets, &c->h, &c->send_max, &c->recv_max) != UTIL_OK) {
        exchange_model_case_free(c);
        return util_error("the packet counts are too large (packet of %llu bytes)",
                          (unsigned long long)c->packet_bytes);
    }
    return UTIL_OK;
}

/* ---- shared helpers ------------------------------------------------------------------------ */

static void result_init(struct exchange_model_result *r, const struct exchange_model_case *c,
                        const char *algo, const char *duplex)
{
    memset(r, 0, sizeof(*r));
    r->algo = algo;
    r->duplex = duplex;
    r->packet_bytes = c->packet_bytes;
    r->h = c->h;
    r->steps = NAN;
    r->bound = NAN;
    r->sched_seconds = NAN;
    r->async_seconds = NAN;
}

/* Appends "key=value" to r->detail, ';' separated. */
static void detail(struct exchange_model_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void detail(struct exchange_model_result *r, const char *fmt, ...)
{
    size_t used = strlen(r->detail);
    if (used + 2 >= sizeof(r->detail)) {
        return;
    }
    if (used > 0) {
        r->detail[used++] = ';';
        r->detail[used] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(r->detail + used, sizeof(r->detail) - used, fmt, ap);
    va_end(ap);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/*
 * The asynchronous refinement of a round-by-round model (result field async_seconds): a rank
 * starts its part of a round when it finished its previous one, and a transfer starts when both
 * ends are ready (no global synchronisation between rounds, as with point-to-point calls).
 * ready[] holds each rank's finishing time so far; within a round the transfers read ready[]
 * and write next[], and async_commit() makes the round's times current.
 */
struct async {
    double *ready, *next; /* [p] each */
};

static int async_init(struct async *a, int p)
{
    a->ready = util_calloc(2 * (size_t)p, sizeof(double));
    a->next = a->ready != NULL ? a->ready + p : NULL;
    return a->ready != NULL ? UTIL_OK : UTIL_ENOMEM;
}

/* A transfer between @x and @y taking @cost seconds in the current round. */
static void async_xfer(struct async *a, int x, int y, double cost)
{
    double t = (a->ready[x] > a->ready[y] ? a->ready[x] : a->ready[y]) + cost;
    a->next[x] = t > a->next[x] ? t : a->next[x];
    a->next[y] = t > a->next[y] ? t : a->next[y];
}

/* Ends a round for ranks @x and @y (call for every transfer of the round, after them all). */
static void async_commit(struct async *a, int x, int y)
{
    a->ready[x] = a->next[x];
    a->ready[y] = a->next[y];
}

/* The last rank's finishing time; frees the arrays. */
static double async_done(struct async *a, int p)
{
    double t = 0;
    for (int i = 0; i < p; i++) {
        t = a->ready[i] > t ? a->ready[i] : t;
    }
    util_free(a->ready);
    return t;
}

/*
 * Round bookkeeping for the models whose rounds are sets of messages posted together: per rank
 * the bytes sent and received and the messages sent in the current round.
 */
struct rounds {
    const struct exchange_model_case *c;
    struct exchange_model_result *r;
    uint64_t *sent, *recv, *msgs, *total_msgs; /* [p] each */
};

static int rounds_init(struct rounds *w, const struct exchange_model_case *c,
                       struct exchange_model_result *r)
{
    w->c = c;
    w->r = r;
    r->steps = 0; /* each round adds its packet steps */
    w->sent = util_calloc(4 * (size_t)c->p, sizeof(uint64_t));
    if (w->sent == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory (%s model, P = %d)", r->algo, c->p);
    }
    w->recv = w->sent + c->p;
    w->msgs = w->recv + c->p;
    w->total_msgs = w->msgs + c->p;
    return UTIL_OK;
}

/* One message of @b bytes from @src to @dst in the current round. */
static void rounds_msg(struct rounds *w, int src, int dst, uint64_t b)
{
    w->sent[src] += b;
    w->recv[dst] += b;
    w->msgs[src]++;
    w->total_msgs[src]++;
    w->r->bytes_moved += b;
    w->r->max_message = max_u64(w->r->max_message, b);
}

/* Closes the current round: prices it (busiest rank's start-ups and volume), resets it. */
static void rounds_close(struct rounds *w)
{
    uint64_t vol = 0, starts = 0;
    for (int i = 0; i < w->c->p; i++) {
        vol = max_u64(vol, max_u64(w->sent[i], w->recv[i]));
        starts = max_u64(starts, w->msgs[i]);
    }
    w->r->rounds += starts > 0; /* a round nobody sends in is skipped */
    w->r->seconds += w->c->alpha * (double)starts + w->c->beta * (double)vol;
    w->r->steps += (double)vol / (double)w->c->packet_bytes;
    memset(w->sent, 0, 3 * (size_t)w->c->p * sizeof(uint64_t));
}

/* Ends the walk: the most messages any rank sent in all. */
static void rounds_free(struct rounds *w)
{
    for (int i = 0; i < w->c->p; i++) {
        w->r->startups = max_u64(w->r->startups, w->total_msgs[i]);
    }
    util_free(w->sent);
}

/* ---- alltoallv ----------------------------------------------------------------------------- */

/* Linear: every rank posts its P-1 messages at once; one round of P-1 start-ups (the empty
 * messages are posted too), then the busiest rank's volume at full bandwidth. */
static int model_linear(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    int p = c->p;
    struct rounds w;
    int err = rounds_init(&w, c, r);
    if (err != UTIL_OK) {
        return err;
    }
    for (int i = 0; i < p; i++) {
        for (int j = 0; j < p; j++) {
            if (i != j) {
                rounds_msg(&w, i, j, c->bytes[(size_t)i * p + j]);
            }
        }
    }
    if (p > 1) {
        rounds_close(&w);
    }
    rounds_free(&w);
    r->steps = NAN; /* all messages at once: no schedule of steps to count */
    return UTIL_OK;
}

/*
 * Shift rounds (seed 003 §3.1, exchange/topo.h): in round k = 1..P-1 rank i sends to i + k and
 * receives from i - k (mod P). Open MPI's pairwise alltoallv (@skip_empty 0) sends every
 * message, empty ones too, so every round synchronises every rank with two others; the shift
 * back-end (@skip_empty 1) sends only non-empty pieces.
 */
static int model_shift_rounds(const struct exchange_model_case *c, struct exchange_model_result *r,
                              int skip_empty)
{
    int p = c->p;
    struct rounds w;
    int err = rounds_init(&w, c, r);
    if (err != UTIL_OK) {
        return err;
    }
    struct async as;
    if (async_init(&as, p) != UTIL_OK) {
        rounds_free(&w);
        return util_fail(UTIL_ENOMEM, "out of memory (%s model, P = %d)", r->algo, p);
    }
    for (int k = 1; k < p; k++) {
        for (int i = 0; i < p; i++) {
            int j = topo_shift_to(k, i, p);
            uint64_t b = c->bytes[(size_t)i * p + j];
            if (b == 0 && skip_empty) {
                continue;
            }
            rounds_msg(&w, i, j, b);
            /* A send-receive: i's message to j is one transfer between the two. */
            async_xfer(&as, i, j, c->alpha + c->beta * (double)b);
        }
        for (int i = 0; i < p; i++) {
            async_commit(&as, i, topo_shift_to(k, i, p));
        }
        rounds_close(&w);
    }
    rounds_free(&w);
    r->async_seconds = async_done(&as, p);
    return UTIL_OK;
}

static int model_ompi_pairwise(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return model_shift_rounds(c, r, 0);
}

static int model_shift(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return model_shift_rounds(c, r, 1);
}

/* 1-factor pairwise (seed 004 §4.1, exchange/topo.h): P-1 rounds for even P, P for odd P;
 * partners swap both ways in one send-receive, an empty side sends nothing, and a pair with
 * nothing either way skips its round (as the pairwise back-end does). */
static int model_factor(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    int p = c->p, nrounds = p == 1 ? 0 : topo_factor_rounds(p);
    struct rounds w;
    int err = rounds_init(&w, c, r);
    if (err != UTIL_OK) {
        return err;
    }
    struct async as;
    if (async_init(&as, p) != UTIL_OK) {
        rounds_free(&w);
        return util_fail(UTIL_ENOMEM, "out of memory (%s model, P = %d)", r->algo, p);
    }
    for (int i = 0; i < nrounds; i++) {
        for (int j = 0; j < p; j++) {
            int q = topo_factor_partner(i, j, p);
            uint64_t out = c->bytes[(size_t)j * p + q], in = c->bytes[(size_t)q * p + j];
            if (q == j || out + in == 0) {
                continue; /* idle, or a pair with nothing either way */
            }
            if (out > 0) {
                rounds_msg(&w, j, q, out);
            }
            if (j < q) { /* one swap per pair, as long as the larger direction */
                async_xfer(&as, j, q, c->alpha + c->beta * (double)max_u64(out, in));
            }
        }
        for (int j = 0; j < p; j++) {
            async_commit(&as, j, topo_factor_partner(i, j, p));
        }
        rounds_close(&w);
    }
    rounds_free(&w);
    r->async_seconds = async_done(&as, p);
    return UTIL_OK;
}

/* ---- transpose ----------------------------------------------------------------------------- */

/* Mirrors the transpose back-end's block size: floor(n/P + (P-1)/2), never more than n (the
 * exact integer form of the paper's n/P + P/2, reached by some dealing). */
static uint64_t transpose_bound(uint64_t n, uint64_t p)
{
    uint64_t b = n / p + (2 * (n % p) + p * (p - 1)) / (2 * p);
    return b < n ? b : n;
}

/* Elements of a message of @b bytes (a byte matrix of whole keys divides exactly). */
static uint64_t elems(uint64_t b, uint64_t elem)
{
    return b / elem + (b % elem != 0);
}

/*
 * The largest bin of one dealing: runs of elements (the k-th from @c[k * stride] bytes,
 * k = 0..P-1) dealt from start bin (@s0 + k) mod P on, each bin getting e / P of a run of e and
 * the e mod P bins from the start on one more (mirrors the dealing rule of the transpose
 * back-end). The extra ones are added with a difference array over the bins: O(P) per dealing.
 */
static uint64_t largest_bin(const uint64_t *c, size_t stride, int p, int s0, uint64_t elem,
                            int64_t *diff)
{
    uint64_t base = 0;
    memset(diff, 0, ((size_t)p + 1) * sizeof(*diff));
    for (int k = 0; k < p; k++) {
        uint64_t e = elems(c[(size_t)k * stride], elem);
        uint64_t extra = e % (uint64_t)p;
        int start = (s0 + k) % p, end = start + (int)extra;
        base += e / (uint64_t)p;
        if (extra == 0) {
            continue;
        }
        diff[start]++;
        if (end <= p) {
            diff[end]--;
        } else {
            diff[p]--; /* the run wraps round: [start, P) and [0, end - P) */
            diff[0]++;
            diff[end - p]--;
        }
    }
    int64_t run = 0, best = 0;
    for (int b = 0; b < p; b++) {
        run += diff[b];
        best = run > best ? run : best;
    }
    return base + (uint64_t)best;
}

/* Elements of run e (from rank s, started at bin s0) that land in the bin at offset t from the
 * start: e / P, plus one for the first e mod P offsets. */
static uint64_t share_at(uint64_t e, int t, int p)
{
    return e / (uint64_t)p + ((uint64_t)t < e % (uint64_t)p ? 1 : 0);
}

/*
 * Transpose: round 1 sends bin b of every rank to rank b, round 2 bin j to rank j, both as
 * MPI_Alltoall with one block size (the bound: floor(n_max/P + (P-1)/2) and floor(h/P +
 * (P-1)/2) elements, n_max and h the largest row and column sums, own block included). The
 * largest bins actually dealt are reported beside the blocks; they never exceed them.
 * Modelled without the back-end's pipelining into cache-sized steps (each step is the same
 * scheme on a slice, with its own padding and two more start-ups).
 */
static int model_transpose(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    int p = c->p;
    size_t n = (size_t)p;
    uint64_t e = c->elem_bytes, pp = (uint64_t)p;
    int64_t *diff = util_malloc((n + 1) * sizeof(*diff));
    if (diff == NULL) {
        return util_fail(UTIL_ENOMEM, "out of memory (transpose model, P = %d)", p);
    }
    /* n_max, h and all elements, own blocks included (the back-end deals them too). */
    uint64_t n_max = 0, h = 0, all = 0, own = 0, bin1 = 0, bin2 = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t row = 0, col = 0;
        for (size_t j = 0; j < n; j++) {
            row += elems(c->bytes[i * n + j], e);
            col += elems(c->bytes[j * n + i], e);
            /* What stays home: run (i, j)'s share of bin i in round 1 (offset -j), and
             * run (j, i)'s share of rank i's own bin i in round 2 (offset -j). */
            own += share_at(elems(c->bytes[i * n + j], e), (int)((n - j) % n), p);
            own += share_at(elems(c->bytes[j * n + i], e), (int)((n - j) % n), p);
        }
        all += row;
        n_max = max_u64(n_max, row);
        h = max_u64(h, col);
        bin1 = max_u64(bin1, largest_bin(c->bytes + i * n, 1, p, (int)i, e, diff));
        bin2 = max_u64(bin2, largest_bin(c->bytes + i, n, p, (int)i, e, diff));
    }
    util_free(diff);
    uint64_t block1 = transpose_bound(n_max, pp), block2 = transpose_bound(h, pp);
    r->steps = 0;
    if (p > 1) {
        /* Two MPI_Alltoall rounds, P-1 blocks out and in per rank, padding included. */
        for (int k = 0; k < 2; k++) {
            uint64_t blk = (k == 0 ? block1 : block2) * e;
            r->rounds++;
            r->seconds += c->alpha * (double)(p - 1) + c->beta * (double)(pp - 1) * (double)blk;
            r->steps += (double)(pp - 1) * (double)blk / (double)c->packet_bytes;
            r->bytes_moved += pp * (pp - 1) * blk;
            r->max_message = max_u64(r->max_message, blk);
        }
        r->startups = 2 * (pp - 1);
    }
    uint64_t cross = 2 * all - own;
    detail(r, "bin1=%llu", (unsigned long long)bin1);
    detail(r, "block1=%llu", (unsigned long long)block1);
    detail(r, "bin2=%llu", (unsigned long long)bin2);
    detail(r, "block2=%llu", (unsigned long long)block2);
    detail(r, "padding_bytes=%llu",
           (unsigned long long)(r->bytes_moved > cross * e ? r->bytes_moved - cross * e : 0));
    return UTIL_OK;
}

/* ---- the scheduled back-ends --------------------------------------------------------------- */

/*
 * direct, forward, fullduplex: builds the schedule on the packet matrix (timed: this is what
 * every rank computes before the first byte moves), checks it, then walks its steps. A step
 * costs alpha + beta (its largest piece in real bytes); pieces past the end of a short last
 * packet are empty and, as in the executor, not sent; a step with nothing to send costs nothing.
 */
static int model_scheduled(const struct exchange_model_case *c, struct exchange_model_result *r,
                           const char *name)
{
    const struct exchange_sched_algo *algo = exchange_sched_lookup(name);
    struct exchange_sched *s = NULL;
    uint64_t *sends = NULL;
    struct async as = {NULL, NULL};
    struct exchange_model_case own = {0};
    size_t n = (size_t)c->p;
    int err;
    /* Without a packet size asked for, at the one this back-end would choose. */
    int own_rule = !c->packet_fixed && algo->target_h != EXCHANGE_SCHED_TARGET_H;
    uint64_t psize =
        own_rule ? exchange_model_packet_bytes(c->p, c->bytes, algo->target_h) : c->packet_bytes;
    if (psize != c->packet_bytes) {
        if ((err = exchange_model_case_init(&own, c->p, c->bytes, c->elem_bytes, psize)) !=
            UTIL_OK) {
            return err;
        }
        own.alpha = c->alpha;
        own.beta = c->beta;
        own.validate = c->validate;
        c = &own;
        r->packet_bytes = c->packet_bytes;
        r->h = c->h;
    }
    double t0 = util_now();
    if ((err = algo->build(c->p, c->packets, &s)) != UTIL_OK) {
        goto fail; /* the builder reported it */
    }
    r->sched_seconds = util_now() - t0;
    if (c->validate) {
        char why[256];
        if (exchange_sched_validate(s, c->p, c->packets, NULL, why, sizeof(why)) != UTIL_OK) {
            err = util_fail(UTIL_EIO, "internal error: the %s schedule is invalid: %s", name, why);
            goto fail;
        }
    }
    sends = util_calloc(n, sizeof(*sends));
    if (sends == NULL || async_init(&as, c->p) != UTIL_OK) {
        err = util_fail(UTIL_ENOMEM, "out of memory (%s model, P = %d)", name, c->p);
        goto fail;
    }
    /* Walk the steps: the largest piece of each, every piece's bytes, who sends how often. */
    uint64_t fwd_bytes = 0;
    for (uint64_t t = 0; t < s->nsteps; t++) {
        uint64_t big = 0, any = 0;
        for (uint64_t k = s->step_begin[t]; k < s->step_begin[t + 1]; k++) {
            const struct exchange_sched_xfer *x = &s->xfers[k];
            uint64_t off, len;
            exchange_sched_bytes(c->bytes[(size_t)x->msg_src * n + x->msg_dst], c->packet_bytes,
                                 x->off, x->len, &off, &len);
            if (len == 0) {
                continue;
            }
            any = 1;
            big = max_u64(big, len);
            sends[x->src]++;
            r->bytes_moved += len;
            fwd_bytes += x->hop == EXCHANGE_SCHED_HOP1 ? len : 0;
            async_xfer(&as, (int)x->src, (int)x->dst, c->alpha + c->beta * (double)len);
        }
        for (uint64_t k = s->step_begin[t]; k < s->step_begin[t + 1]; k++) {
            async_commit(&as, (int)s->xfers[k].src, (int)s->xfers[k].dst);
        }
        if (any) {
            r->seconds += c->alpha + c->beta * (double)big;
            r->max_message = max_u64(r->max_message, big);
        }
    }
    for (size_t i = 0; i < n; i++) {
        r->startups = max_u64(r->startups, sends[i]);
    }
    r->rounds = s->nsteps;
    r->steps = (double)s->length / EXCHANGE_SCHED_UNITS;
    r->bound = algo->bound(c->p, c->h, c->send_max, c->recv_max);
    detail(r, "xfers=%llu", (unsigned long long)s->nxfers);
    detail(r, "classes=%llu", (unsigned long long)s->matchings);
    detail(r, "forwarded_bytes=%llu", (unsigned long long)fwd_bytes);
    if (own_rule) {
        detail(r, "packet_bytes=%llu", (unsigned long long)r->packet_bytes);
        detail(r, "h_packets=%llu", (unsigned long long)r->h);
    }
    r->async_seconds = async_done(&as, c->p);
    as.ready = NULL;
fail:
    util_free(as.ready);
    util_free(sends);
    exchange_sched_free(s);
    exchange_model_case_free(&own);
    return err;
}

static int model_direct(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return model_scheduled(c, r, "direct");
}

static int model_forward(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return model_scheduled(c, r, "forward");
}

static int model_fullduplex(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    return model_scheduled(c, r, "fullduplex");
}

/* ---- bundles: grid and hypercube ---------------------------------------------------------- */

/* Mirrors BUNDLE_SCATTER_MIN_DEFAULT of exchange/bundle.c: a bundle whose payload is below
 * this many bytes travels packed (header and pieces in one message), a larger one scattered
 * (the header, then every non-empty piece as its own message). */
#define MODEL_SCATTER_MIN ((uint64_t)64 << 10)
/* Mirrors BUNDLE_EAGER_BYTES_DEFAULT (exchange/bundle.c) and BUNDLE_EAGER_CHUNKS (bundle.h):
 * a first message shorter than 4 eager chunks travels as chunks of 4032 bytes and a shorter
 * last one. */
#define MODEL_EAGER_BYTES ((uint64_t)4032)
#define MODEL_EAGER_CHUNKS 4

/* The bundle being collected for one peer: payload bytes, pieces (one header count each),
 * non-empty pieces and the largest piece. */
struct bundle {
    uint64_t bytes, pieces, full, largest;
};

static void bundle_add(struct bundle *b, uint64_t piece)
{
    b->bytes += piece;
    b->pieces++;
    b->full += piece > 0;
    b->largest = max_u64(b->largest, piece);
}

/* Sends the first message of a bundle, @b bytes, as exchange/bundle.c cuts it. */
static void bundle_first(struct rounds *w, int src, int dst, uint64_t b)
{
    if (b >= MODEL_EAGER_CHUNKS * MODEL_EAGER_BYTES) {
        rounds_msg(w, src, dst, b);
        return;
    }
    for (; b >= MODEL_EAGER_BYTES; b -= MODEL_EAGER_BYTES) {
        rounds_msg(w, src, dst, MODEL_EAGER_BYTES);
    }
    rounds_msg(w, src, dst, b); /* the shorter last chunk (empty after exact chunks) */
}

/* Sends bundle @b from @src to @dst in the current round, packed or scattered; clears it. */
static void bundle_send(struct rounds *w, int src, int dst, struct bundle *b)
{
    uint64_t header = HEADER_BYTES * b->pieces;
    if (b->bytes < MODEL_SCATTER_MIN) {
        bundle_first(w, src, dst, header + b->bytes);
    } else {
        bundle_first(w, src, dst, header);
        /* The pieces as messages of their own: account their bytes and start-ups at once. */
        w->sent[src] += b->bytes;
        w->recv[dst] += b->bytes;
        w->msgs[src] += b->full;
        w->total_msgs[src] += b->full;
        w->r->bytes_moved += b->bytes;
        w->r->max_message = max_u64(w->r->max_message, b->largest);
    }
    memset(b, 0, sizeof(*b));
}

/*
 * One phase of the grid (exchange/topo.h: ranks fill a rows x cols grid row by row; the piece
 * s -> d goes first within s's row to via = the rank in d's column, or the one in the row above
 * when the last row lacks that column, then within that column to d). Every (a, b), a != b,
 * with pieces routed a -> b in this phase forms one bundle. The pieces are enumerated by an
 * outer rank o and an inner rank i (phase 1: o is the source and bundles go o -> via; phase 2:
 * o is the destination and bundles go via -> o), collected per peer in @acc with @touched.
 */
static void grid_phase(struct rounds *w, const struct topo_grid *g, int phase, struct bundle *acc,
                       int *touched)
{
    int p = g->p;
    for (int o = 0; o < p; o++) {
        int nt = 0;
        for (int i = 0; i < p; i++) {
            int s = phase == 1 ? o : i, d = phase == 1 ? i : o;
            if (s == d) {
                continue; /* the own piece never leaves */
            }
            int peer = topo_grid_via(g, s, d); /* the intermediate: the bundle's other end */
            if ((phase == 1 && peer == s) || (phase == 2 && peer == d)) {
                continue; /* this phase keeps the piece where it is */
            }
            if (acc[peer].pieces == 0) {
                touched[nt++] = peer;
            }
            bundle_add(&acc[peer], w->c->bytes[(size_t)s * p + d]);
        }
        for (int k = 0; k < nt; k++) {
            int peer = touched[k];
            bundle_send(w, phase == 1 ? o : peer, phase == 1 ? peer : o, &acc[peer]);
        }
    }
}

/* Grid: phase 1 within rows, phase 2 within columns; each phase one bundle per peer, all
 * posted at once. */
static int model_grid(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    int p = c->p;
    struct topo_grid g = topo_grid_shape(p);
    struct rounds w;
    int err = rounds_init(&w, c, r);
    struct bundle *acc = util_calloc((size_t)p, sizeof(*acc));
    int *touched = util_malloc((size_t)p * sizeof(int));
    if (err != UTIL_OK || acc == NULL || touched == NULL) {
        err = err != UTIL_OK ? err : util_fail(UTIL_ENOMEM, "out of memory (grid model)");
        goto fail;
    }
    for (int phase = 1; phase <= 2 && p > 1; phase++) {
        grid_phase(&w, &g, phase, acc, touched);
        rounds_close(&w);
    }
    detail(r, "grid=%dx%d", g.rows, g.cols);
    detail(r, "volume_factor=%.3f",
           c->total_bytes ? (double)r->bytes_moved / (double)c->total_bytes : 0.0);
fail:
    if (err == UTIL_OK) {
        rounds_free(&w);
    } else {
        util_free(w.sent);
    }
    util_free(acc);
    util_free(touched);
    return err;
}

/*
 * Hypercube (exchange/topo.h): Q = the largest power of two <= P; rank e >= Q is folded into
 * node e - Q: it hands that node its whole send buffer first (its own piece included) and gets
 * its pieces back last. Before cube round k, node x holds the pieces (s, d) whose source node
 * agrees with x on the bits >= k and whose destination node agrees with x on the bits < k; it
 * sends x ^ 2^k, as one bundle, those whose destination node differs from x in bit k. So a
 * piece is held by x = (node(s) & ~mask) | (node(d) & mask) and moves in round k iff node(s)
 * and node(d) differ in bit k: one pass over the P^2 pieces per round.
 */
static int model_hypercube(const struct exchange_model_case *c, struct exchange_model_result *r)
{
    int p = c->p, dim = topo_cube_dim(p), q = 1 << dim;
    size_t n = (size_t)p;
    struct rounds w;
    int err = rounds_init(&w, c, r);
    struct bundle *acc = util_calloc((size_t)q, sizeof(*acc));
    if (err != UTIL_OK || acc == NULL) {
        err = err != UTIL_OK ? err : util_fail(UTIL_ENOMEM, "out of memory (hypercube model)");
        goto fail;
    }
    /* Fold: every extra rank hands its node its whole row. */
    if (p > q) {
        for (int e = q; e < p; e++) {
            for (size_t d = 0; d < n; d++) {
                bundle_add(&acc[0], c->bytes[(size_t)e * n + d]);
            }
            bundle_send(&w, e, e - q, &acc[0]);
        }
        rounds_close(&w);
    }
    /* The cube rounds. */
    for (int k = 0; k < dim; k++) {
        int bit = 1 << k, mask = bit - 1;
        for (size_t s = 0; s < n; s++) {
            int a = topo_cube_node((int)s, q);
            for (size_t d = 0; d < n; d++) {
                int b = topo_cube_node((int)d, q);
                if (((a ^ b) & bit) != 0) {
                    bundle_add(&acc[(a & ~mask) | (b & mask)], c->bytes[s * n + d]);
                }
            }
        }
        for (int x = 0; x < q; x++) {
            bundle_send(&w, x, x ^ bit, &acc[x]); /* every node, an empty bundle too */
        }
        rounds_close(&w);
    }
    /* Unfold: every node hands its extra rank the pieces for it, from every source. */
    if (p > q) {
        for (int e = q; e < p; e++) {
            for (size_t s = 0; s < n; s++) {
                bundle_add(&acc[0], c->bytes[s * n + (size_t)e]);
            }
            bundle_send(&w, e - q, e, &acc[0]);
        }
        rounds_close(&w);
    }
    detail(r, "cube_dim=%d", dim);
    detail(r, "folded=%d", p - q);
    detail(r, "volume_factor=%.3f",
           c->total_bytes ? (double)r->bytes_moved / (double)c->total_bytes : 0.0);
fail:
    if (err == UTIL_OK) {
        rounds_free(&w);
    } else {
        util_free(w.sent);
    }
    util_free(acc);
    return err;
}

/* ---- the registry -------------------------------------------------------------------------- */

/* Runs a model with its result set up for it. */
#define MODEL(var, nm, be, dup, sum, fn)                                                           \
    static int run_##var(const struct exchange_model_case *c, struct exchange_model_result *r)     \
    {                                                                                              \
        result_init(r, c, nm, dup);                                                                \
        return fn(c, r);                                                                           \
    }                                                                                              \
    static const struct exchange_model var = {nm, be, sum, run_##var}

MODEL(m_linear, "alltoallv-linear", "alltoallv", "full",
      "all P-1 messages at once: alpha (P-1) + beta max(sent, received)", model_linear);
MODEL(m_ompi_pairwise, "alltoallv-pairwise", "alltoallv", "full",
      "Open MPI's pairwise: P-1 shift rounds (to r+k, from r-k), empty messages sent too",
      model_ompi_pairwise);
MODEL(m_transpose, "transpose", "transpose", "full",
      "two MPI_Alltoall rounds of blocks padded to n_max/P + P/2 and h/P + P/2", model_transpose);
MODEL(m_direct, "direct", "direct", "half",
      "the direct h-relation schedule: <= 3 ceil(h/2) steps of alpha + beta (piece)", model_direct);
MODEL(m_forward, "forward", "forward", "half",
      "the forwarding schedule: ~6/5 (h+1) steps (fifths), alpha + beta (piece) each",
      model_forward);
MODEL(m_fullduplex, "fullduplex", "fullduplex", "full",
      "the full-duplex schedule: max(sent, received) steps of alpha + beta (piece)",
      model_fullduplex);
MODEL(m_factor, "pairwise", "pairwise", "full",
      "1-factor rounds (P-1, P for odd P), partners swap: alpha + beta (largest message) each",
      model_factor);
MODEL(m_shift, "shift", "shift", "full",
      "P-1 shift rounds (to r+k, from r-k), non-empty pieces only: alpha + beta (largest)",
      model_shift);
MODEL(m_grid, "grid", "grid", "full",
      "rows then columns of a sqrt(P) grid: ~2 (sqrt(P)-1) start-ups, data moved twice",
      model_grid);
MODEL(m_hypercube, "hypercube", "hypercube", "full",
      "log2 P combining rounds (non-powers of two folded): volume ~ (n/2) log2 P", model_hypercube);

const struct exchange_model *const exchange_models[] = {
    &m_linear, &m_ompi_pairwise, &m_transpose, &m_direct,    &m_forward, &m_fullduplex,
    &m_factor, &m_shift,         &m_grid,      &m_hypercube, NULL,
};

const struct exchange_model *exchange_model_find(const char *name)
{
    for (size_t i = 0; name != NULL && exchange_models[i] != NULL; i++) {
        if (strcmp(exchange_models[i]->name, name) == 0) {
            return exchange_models[i];
        }
    }
    return NULL;
}

void exchange_model_names(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; exchange_models[i] != NULL && used < cap; i++) {
        int k = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", exchange_models[i]->name);
        if (k < 0) {
            break;
        }
        used += (size_t)k;
    }
}

/* ---- the sort's count matrix --------------------------------------------------------------- */

/*
 * The sort's sample, splitter and bucket phases for P ranks in one process, with the sort's own
 * rules (sort/sortex.h: sortex_sample_total() and its refusal, sortex_sample_count(),
 * sortex_sample_index(), sortex_splitter_index(), sortex_bucket_boundary(), the (key, position)
 * order of sortex_tuple_order()); only the collectives are replaced by loops over the ranks.
 * tests/35-simulator.bats compares the matrix with what a real run reports.
 */
struct model_tuple {
    uint64_t key, pos;
};

static int tuple_cmp(const void *x, const void *y)
{
    const struct model_tuple *a = x, *b = y;
    return sortex_tuple_order(a->key, a->pos, b->key, b->pos);
}

int exchange_model_sort_counts(const struct datagen_params *dp, double epsilon, uint64_t oversample,
                               int threads, uint64_t *counts)
{
    uint64_t n = dp->n, p = dp->ranks;
    uint64_t *keys = NULL, *scratch = NULL;
    struct model_tuple *sample = NULL, *split = NULL;
    int err = UTIL_OK;
    threads = threads > 0 ? threads : 1;
    uint64_t slice_max = 0;
    for (uint64_t r = 0; r < p; r++) {
        uint64_t m = datagen_slice_begin(n, p, r + 1) - datagen_slice_begin(n, p, r);
        slice_max = max_u64(slice_max, m);
    }
    /* The sample size, and the sort's own refusal of too many samples. */
    uint64_t s = oversample;
    if (s == 0) {
        s = sortex_default_oversample((int)p, epsilon > 0 ? epsilon : 0.1);
    }
    uint64_t total = 0;
    if (sortex_sample_total(s, (int)p, &total) != UTIL_OK) {
        return util_error("the sort would refuse %llu samples (--oversample %llu with P = %llu)",
                          (unsigned long long)s * p, (unsigned long long)s,
                          (unsigned long long)p);
    }
    keys = util_alloc_big(n * sizeof(uint64_t));
    scratch = util_malloc((slice_max ? slice_max : 1) * sizeof(uint64_t));
    sample = util_malloc((size_t)(total < n ? total + p : n + 1) * sizeof(*sample));
    split = util_malloc((size_t)p * sizeof(*split));
    if (keys == NULL || scratch == NULL || sample == NULL || split == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for %llu keys and their sample",
                        (unsigned long long)n);
        goto fail;
    }
    /* Read and local sort: every rank's slice, generated as the file holds it, sorted. */
    uint64_t t = 0;
    for (uint64_t r = 0; r < p && err == UTIL_OK; r++) {
        uint64_t b = datagen_slice_begin(n, p, r), m = datagen_slice_begin(n, p, r + 1) - b;
        if ((err = datagen_fill_threads(dp, b, m, keys + b, threads)) != UTIL_OK ||
            (err = sortex_local_sort(keys + b, scratch, (size_t)m, threads)) != UTIL_OK) {
            break;
        }
        /* Sample: this rank's share of T, at the centres of equal gaps. */
        uint64_t sr = sortex_sample_count(total, m, n);
        for (uint64_t k = 0; k < sr; k++) {
            uint64_t idx = sortex_sample_index(k, sr, m);
            sample[t].key = keys[b + idx];
            sample[t].pos = b + idx;
            t++;
        }
    }
    if (err != UTIL_OK) {
        goto fail;
    }
    /* Splitters at regular ranks of the sorted sample. */
    qsort(sample, (size_t)t, sizeof(*sample), tuple_cmp);
    for (uint64_t j = 1; j < p; j++) {
        if (t == 0) {
            split[j - 1].key = split[j - 1].pos = UINT64_MAX;
        } else {
            split[j - 1] = sample[sortex_splitter_index((int)j, t, (int)p)];
        }
    }
    /* Buckets: every rank cuts its sorted keys at the splitters. */
    for (uint64_t r = 0; r < p; r++) {
        uint64_t b = datagen_slice_begin(n, p, r), m = datagen_slice_begin(n, p, r + 1) - b;
        uint64_t prev = 0;
        for (uint64_t j = 0; j < p; j++) {
            uint64_t next =
                j + 1 < p ? sortex_bucket_boundary(keys + b, m, b, split[j].key, split[j].pos) : m;
            next = next < prev ? prev : next;
            counts[r * p + j] = next - prev;
            prev = next;
        }
    }
fail:
    util_free_big(keys);
    util_free(scratch);
    util_free(sample);
    util_free(split);
    return err;
}

/*
 * tests/unit/test_sched.c: unit tests of the h-relation scheduler (exchange/sched.h).
 *
 *   test_sched matrices [pmax=64] [seeds=2]   every algorithm on every matrix family,
 *                                             p = 1..PMAX: validity, the theorems' bounds,
 *                                             fullduplex exactness
 *   test_sched lowerbound                     the 3-cycle instance of §2.5: direct 3h/2,
 *                                             forward ~6h/5
 *   test_sched validator                      hand-made schedules the validator must accept or
 *                                             reject
 *   test_sched joins                          which transfers an executor may send as one
 *                                             message
 *   test_sched bytes                          the packet / unit / byte mapping, packets of whole
 *                                             elements
 *   test_sched errors                         bad arguments are refused with an error code
 *   test_sched time [p=64] [mean=4] [reps=3]  scheduling time on random matrices (prints a
 *                                             table)
 *
 * On the harness of tests/unit/test.h (no test named: every one).
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/sched.h"
#include "tests/unit/test.h"
#include "util/alloc.h"
#include "util/util.h"

/* The three algorithms, in the order the checks compare them: direct, forward, fullduplex. */
static const struct exchange_sched_algo *const algos[] = {
    &exchange_sched_algo_direct,
    &exchange_sched_algo_forward,
    &exchange_sched_algo_fullduplex,
    NULL,
};

/* ---- random numbers and matrices ----------------------------------------------------------- */

/* A count with mean @mu: floor(2 mu u) rounded up with the probability of its fraction. */
static uint64_t around(double mu)
{
    double x = 2.0 * mu * test_unit();
    uint64_t k = (uint64_t)x;
    return k + (test_unit() < x - (double)k);
}

/* A random permutation of 0..n-1 in pi. */
static void shuffle(uint32_t *pi, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pi[i] = (uint32_t)i;
    }
    for (size_t i = n; i > 1; i--) {
        size_t j = test_below(i);
        uint32_t t = pi[i - 1];
        pi[i - 1] = pi[j];
        pi[j] = t;
    }
}

enum family {
    F_DENSE,    /* uniform counts 0..9 everywhere */
    F_SPARSE,   /* 10% of messages, 1..20 packets */
    F_ONEHOT,   /* one PE sends everything to one other, the rest is light */
    F_HOTSPOT,  /* everybody sends to PE 0 */
    F_PERM,     /* a random permutation, k packets each */
    F_SYMM,     /* m_ij = m_ji */
    F_CYCLES,   /* PEs in odd cycles (3, 5, 7), k packets each way: adversarial */
    F_TRIANGLE, /* the lower-bound instance of §2.5 with random h */
    F_HUGE,     /* counts up to 10^9: super-packets */
    F_SKEW,     /* Zipf-like rows */
    F_ZERO,     /* nothing but the diagonal */
    F_SINGLE,   /* one message */
    F_TIGHT,    /* layers of 3-cycle covers plus a matching of single packets: odd h, odd p */
    F_COUNT
};

static const char *const family_name[F_COUNT] = {"dense", "sparse", "onehot",   "hotspot", "perm",
                                                 "symm",  "cycles", "triangle", "huge",    "skew",
                                                 "zero",  "single", "tight"};

/* Fills the p x p matrix m with an instance of family f. */
static void gen(enum family f, int p, uint64_t *m)
{
    size_t n = (size_t)p;
    memset(m, 0, n * n * sizeof(*m));
    uint64_t k = 1 + test_below(12);
    switch (f) {
    case F_DENSE:
        for (size_t i = 0; i < n * n; i++) {
            m[i] = test_below(10);
        }
        break;
    case F_SPARSE:
        for (size_t i = 0; i < n * n; i++) {
            m[i] = test_below(10) == 0 ? 1 + test_below(20) : 0;
        }
        break;
    case F_ONEHOT:
        for (size_t i = 0; i < n * n; i++) {
            m[i] = test_below(4) == 0;
        }
        if (p > 1) {
            m[test_below(n) * n + test_below(n)] += 50 + test_below(100);
        }
        break;
    case F_HOTSPOT:
        for (size_t i = 0; i < n; i++) {
            m[i * n] = 1 + test_below(8);
        }
        break;
    case F_PERM: {
        uint32_t *pi = util_malloc(n * sizeof(*pi));
        shuffle(pi, n);
        for (size_t i = 0; i < n; i++) {
            m[i * n + pi[i]] = k;
        }
        util_free(pi);
        break;
    }
    case F_SYMM:
        for (size_t i = 0; i < n; i++) {
            for (size_t j = i; j < n; j++) {
                m[i * n + j] = m[j * n + i] = test_below(6);
            }
        }
        break;
    case F_CYCLES:
        /* Consecutive cycles of random odd length, each edge k packets in a random direction. */
        for (size_t s = 0; s < n;) {
            size_t len = 3 + 2 * test_below(3);
            len = s + len > n ? n - s : len;
            for (size_t t = 0; t < len && len > 1; t++) {
                size_t a = s + t, b = s + (t + 1) % len;
                if (test_below(2)) {
                    m[a * n + b] += k;
                } else {
                    m[b * n + a] += k;
                }
            }
            s += len;
        }
        break;
    case F_TRIANGLE:
        for (size_t s = 0; s + 3 <= n; s += 3) {
            m[s * n + s + 1] = m[(s + 1) * n + s + 2] = m[(s + 2) * n + s] = k;
        }
        break;
    case F_HUGE:
        for (size_t i = 0; i < n * n; i++) {
            m[i] = test_below(3) == 0 ? 0 : test_below(1000000000);
        }
        break;
    case F_SKEW:
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < n; j++) {
                m[i * n + j] = 200 / (1 + (i + 3 * j) % n);
            }
        }
        break;
    case F_ZERO:
        for (size_t i = 0; i < n; i++) {
            m[i * n + i] = 1 + test_below(5);
        }
        break;
    case F_SINGLE:
        if (p > 1) {
            m[0 * n + n - 1] = 1 + test_below(7);
        }
        break;
    case F_TIGHT: {
        /* Every PE on a 3-cycle in each layer (as far as p allows), then single packets. */
        uint32_t *pi = util_malloc(n * sizeof(*pi));
        for (uint64_t layer = 0; layer <= k % 4; layer++) {
            shuffle(pi, n);
            for (size_t s = 0; s + 3 <= n; s += 3) {
                for (size_t t = 0; t < 3; t++) {
                    m[pi[s + t] * n + pi[s + (t + 1) % 3]]++;
                }
            }
        }
        shuffle(pi, n);
        for (size_t i = 0, pairs = 1 + test_below(n / 2 + 1); i + 1 < n && i / 2 < pairs; i += 2) {
            m[pi[i] * n + pi[i + 1]]++;
        }
        util_free(pi);
        break;
    }
    case F_COUNT:
        break;
    }
}

/* ---- joined pieces -------------------------------------------------------------------------- */

/* One message of an executor that sends joined pieces as one (exchange_sched_joins()). */
struct jmsg {
    uint32_t src, dst, ms, md;
    uint64_t off, end;
    uint8_t hop;
};

/* The messages of rank @r's walk, joined runs as one, into @out; returns their number. Checks
 * that every joined run is one contiguous piece of one message over one direct hop. */
static size_t walk_messages(const struct exchange_sched *s, const uint8_t *join, int r,
                            struct jmsg *out, const char *what)
{
    size_t n = 0;
    for (uint64_t k = s->rank_begin[r]; k < s->rank_begin[r + 1]; k++) {
        const struct exchange_sched_xfer *x = &s->xfers[s->rank_xfers[k]];
        struct jmsg msg = {x->src, x->dst, x->msg_src, x->msg_dst, x->off, x->off + x->len, x->hop};
        while (join[s->rank_xfers[k]] && k + 1 < s->rank_begin[r + 1]) {
            const struct exchange_sched_xfer *y = &s->xfers[s->rank_xfers[++k]];
            expect_true(y->src == msg.src && y->dst == msg.dst && y->msg_src == msg.ms &&
                            y->msg_dst == msg.md && y->off == msg.end && y->hop == msg.hop &&
                            y->hop == EXCHANGE_SCHED_DIRECT,
                        "%s %s: rank %d joins transfer %" PRIu64 " to one it does not continue",
                        s->algo, what, r, s->rank_xfers[k]);
            msg.end = y->off + y->len;
        }
        expect_true(!join[s->rank_xfers[k]] || k + 1 < s->rank_begin[r + 1],
                    "%s %s: rank %d joins its last transfer", s->algo, what, r);
        out[n++] = msg;
    }
    return n;
}

static bool same_msg(const struct jmsg *a, const struct jmsg *b)
{
    return a->src == b->src && a->dst == b->dst && a->ms == b->ms && a->md == b->md &&
           a->off == b->off && a->end == b->end && a->hop == b->hop;
}

/* Groups @n messages stably by their sender (@by_src) or receiver into @out; @start gets p + 1
 * group offsets. */
static void group_by(const struct jmsg *m, size_t n, int p, bool by_src, struct jmsg *out,
                     size_t *start)
{
    memset(start, 0, ((size_t)p + 1) * sizeof(*start));
    for (size_t i = 0; i < n; i++) {
        start[(by_src ? m[i].src : m[i].dst) + 1]++;
    }
    for (int q = 0; q < p; q++) {
        start[q + 1] += start[q];
    }
    for (size_t i = 0; i < n; i++) {
        out[start[by_src ? m[i].src : m[i].dst]++] = m[i];
    }
    memmove(start + 1, start, (size_t)p * sizeof(*start));
    start[0] = 0;
}

/*
 * Joined pieces are safe to send as one message only if both ends of every pair see the same
 * messages in the same order: for every ordered pair (a, b), the messages a sends to b in its
 * walk equal, one by one, those b receives from a in its walk. Returns the transfers joined.
 */
static uint64_t check_joins(const struct exchange_sched *s, const char *what)
{
    size_t p = (size_t)s->p, most = 1;
    uint64_t joined = 0;
    uint8_t *join = util_malloc(s->nxfers + 1);
    expect_true(exchange_sched_joins(s, join) == 0, "%s %s: joins failed", s->algo, what);
    for (uint64_t i = 0; i < s->nxfers; i++) {
        joined += join[i];
    }
    for (size_t r = 0; r < p; r++) {
        size_t len = s->rank_begin[r + 1] - s->rank_begin[r];
        most = len > most ? len : most;
    }
    /* Per rank: what it sends, grouped by receiver; what it receives, grouped by sender. */
    struct jmsg *walk = util_malloc(most * sizeof(*walk));
    struct jmsg **out = util_calloc(p, sizeof(*out)), **in = util_calloc(p, sizeof(*in));
    size_t *out_at = util_malloc(p * (p + 1) * sizeof(size_t));
    size_t *in_at = util_malloc(p * (p + 1) * sizeof(size_t));
    for (size_t r = 0; r < p; r++) {
        size_t n = walk_messages(s, join, (int)r, walk, what), ns = 0, nr = 0;
        struct jmsg *sends = util_malloc((n + 1) * sizeof(*sends));
        struct jmsg *recvs = util_malloc((n + 1) * sizeof(*recvs));
        for (size_t i = 0; i < n; i++) {
            if (walk[i].src == r) {
                sends[ns++] = walk[i];
            } else {
                recvs[nr++] = walk[i];
            }
        }
        out[r] = util_malloc((ns + 1) * sizeof(**out));
        in[r] = util_malloc((nr + 1) * sizeof(**in));
        group_by(sends, ns, (int)p, false, out[r], out_at + r * (p + 1));
        group_by(recvs, nr, (int)p, true, in[r], in_at + r * (p + 1));
        util_free(sends);
        util_free(recvs);
    }
    for (size_t a = 0; a < p; a++) {
        for (size_t b = 0; b < p; b++) {
            const size_t *o = out_at + a * (p + 1), *i = in_at + b * (p + 1);
            size_t n = o[b + 1] - o[b];
            expect_true(n == i[a + 1] - i[a], "%s %s: %zu -> %zu: %zu messages sent, %zu received",
                        s->algo, what, a, b, n, i[a + 1] - i[a]);
            for (size_t k = 0; k < n && n == i[a + 1] - i[a]; k++) {
                if (!same_msg(&out[a][o[b] + k], &in[b][i[a] + k])) {
                    expect_true(false, "%s %s: %zu -> %zu: the ends disagree on message %zu",
                                s->algo, what, a, b, k);
                    break;
                }
            }
        }
    }
    for (size_t r = 0; r < p; r++) {
        util_free(out[r]);
        util_free(in[r]);
    }
    util_free(out);
    util_free(in);
    util_free(out_at);
    util_free(in_at);
    util_free(walk);
    util_free(join);
    return joined;
}

/* ---- the bounds -------------------------------------------------------------------------- */

/* Checks one schedule of @algo for m: validity and the bound of its theorem; its length. */
static uint64_t check_one(const struct exchange_sched_algo *algo, int p, const uint64_t *m,
                          const char *what, uint64_t *paper_misses, uint64_t *joined)
{
    struct exchange_sched *s = NULL;
    char why[256];
    uint64_t len = 0, h, smax, rmax;
    int rc = algo->build(p, m, &s);
    expect_true(rc == 0, "%s p=%d %s: build failed (%d)", algo->name, p, what, rc);
    if (rc != 0) {
        return 0;
    }
    expect_true(exchange_sched_degrees(p, m, &h, &smax, &rmax) == 0, "degrees");
    rc = exchange_sched_validate(s, p, m, &len, why, sizeof(why));
    expect_true(rc == 0, "%s p=%d %s h=%" PRIu64 ": invalid: %s", algo->name, p, what, h, why);
    expect_true(s->h == h && s->send_max == smax && s->recv_max == rmax && s->model == algo->model,
                "%s p=%d %s: statistics or model wrong", algo->name, p, what);
    if (rc != 0 && p <= 8) {
        exchange_sched_print(stderr, s);
    }
    /* Lengths in units (fifths of a step); c = ceil(h/2) colour classes. */
    uint64_t c = (h + 1) / 2, q4 = ((uint64_t)p + 3) / 4;
    double steps = (double)len / 5.0;
    expect_true(steps <= algo->bound(p, h, smax, rmax) + 1e-9,
                "%s p=%d %s h=%" PRIu64 ": %.1f steps above the algorithm's bound %.1f", algo->name,
                p, what, h, steps, algo->bound(p, h, smax, rmax));
    if (strcmp(algo->name, "direct") == 0) {
        expect_true(len <= 15 * c, "direct p=%d %s h=%" PRIu64 ": %.1f steps > 3 ceil(h/2)", p,
                    what, h, steps);
    } else if (strcmp(algo->name, "forward") == 0) {
        if (p % 2 == 0) {
            expect_true(len <= 12 * c, "forward p=%d %s h=%" PRIu64 ": %.1f steps > 12/5 ceil(h/2)",
                        p, what, h, steps);
            expect_true(steps <= 1.2 * (double)(h + 1) + 1e-9,
                        "forward p=%d %s h=%" PRIu64 ": %.1f steps > 6/5 (h+1)", p, what, h, steps);
        } else {
            expect_true(len <= 12 * c + 5 * ((c + q4 - 1) / q4),
                        "forward p=%d %s h=%" PRIu64 ": %.1f steps > 12/5 ceil(h/2) + flushes", p,
                        what, h, steps);
            double paper = (1.2 + 2.0 / p) * (double)(h + 1);
            if (h % 2 == 0) {
                expect_true(steps <= paper + 1e-9,
                            "forward p=%d %s h=%" PRIu64 ": %.1f steps > (6/5 + 2/p)(h+1) = %.2f",
                            p, what, h, steps, paper);
            } else if (steps > paper + 1e-9) {
                (*paper_misses)++; /* the documented rounding of §2.4, odd h only */
            }
        }
    } else {
        uint64_t delta = smax > rmax ? smax : rmax;
        expect_true(len == 5 * delta,
                    "fullduplex p=%d %s: %.1f steps != max(send, recv) = %" PRIu64, p, what, steps,
                    delta);
    }
    /* Direct delivery never splits packets; only forward forwards. */
    for (uint64_t k = 0; k < s->nxfers && strcmp(algo->name, "forward") != 0; k++) {
        const struct exchange_sched_xfer *x = &s->xfers[k];
        if (x->hop != EXCHANGE_SCHED_DIRECT || x->off % 5 != 0 || x->len % 5 != 0) {
            expect_true(false, "%s p=%d %s: transfer %" PRIu64 " splits or forwards", algo->name, p,
                        what, k);
            break;
        }
    }
    *joined += check_joins(s, what);
    /* Super-packets keep the schedule small: at most one class per regular-degree unit. */
    expect_true(s->matchings <=
                    (strcmp(algo->name, "fullduplex") == 0 ? (smax > rmax ? smax : rmax) : c),
                "%s p=%d %s: %" PRIu64 " classes", algo->name, p, what, s->matchings);
    exchange_sched_free(s);
    return len;
}

static void test_matrices(void)
{
    int pmax = (int)test_param_long("pmax", 64), seeds = (int)test_param_long("seeds", 2);
    uint64_t *m = util_malloc((size_t)pmax * (size_t)pmax * sizeof(*m));
    uint64_t runs = 0, misses = 0, joined = 0;
    for (int p = 1; p <= pmax; p++) {
        /* Every p up to 16, then a spread of even and odd ones. */
        if (p > 16 && p % 7 != 0 && p % 8 != 0 && p != pmax) {
            continue;
        }
        for (int f = 0; f < F_COUNT; f++) {
            for (int seed = 0; seed < seeds; seed++) {
                test_seed((uint64_t)p * 1000003u + (uint64_t)f * 7919u + (uint64_t)seed);
                gen((enum family)f, p, m);
                char what[64];
                snprintf(what, sizeof(what), "%s seed %d", family_name[f], seed);
                uint64_t len[3];
                for (size_t a = 0; a < 3; a++) {
                    len[a] = check_one(algos[a], p, m, what, &misses, &joined);
                    runs++;
                }
                /* Forwarding never makes things worse than direct delivery. */
                expect_true(len[1] <= len[0],
                            "p=%d %s: forward %" PRIu64 " > direct %" PRIu64 " units", p, what,
                            len[1], len[0]);
            }
        }
    }
    printf("%" PRIu64 " schedules checked, %" PRIu64
           " odd-p odd-h forward schedules above the paper's unrounded (6/5 + 2/p)(h+1), %" PRIu64
           " transfers joined to the next\n",
           runs, misses, joined);
    util_free(m);
}

/* ---- the lower-bound instance --------------------------------------------------------------- */

/*
 * §2.5 and footnote 1: p = 3k PEs in 3-cycles, h/2 packets on each cycle edge. Without
 * forwarding every colour class has odd cycles only, so direct needs exactly 3h/2 steps; with
 * forwarding exactly 6h/5 for even p, plus the M steps for odd p, which must stay between the
 * paper's lower bound 6/5 (1 + 3/(5p - 3)) h (no valid schedule can beat it) and its upper
 * bound (6/5 + 2/p)(h + 1), and never above direct.
 */
static void test_lowerbound(void)
{
    static const int ps[] = {3, 6, 9, 12, 15, 24, 33, 48, 63};
    static const uint64_t hs[] = {2, 10, 20, 40, 100, 1000};
    for (size_t a = 0; a < sizeof(ps) / sizeof(*ps); a++) {
        int p = ps[a];
        size_t n = (size_t)p;
        uint64_t *m = util_calloc(n * n, sizeof(*m));
        for (size_t b = 0; b < sizeof(hs) / sizeof(*hs); b++) {
            uint64_t h = hs[b];
            for (size_t s = 0; s < n; s += 3) {
                m[s * n + s + 1] = m[(s + 1) * n + s + 2] = m[(s + 2) * n + s] = h / 2;
            }
            struct exchange_sched *d = NULL, *f = NULL;
            uint64_t ld = 0, lf = 0;
            expect_true(exchange_sched_direct(p, m, &d) == 0 &&
                            exchange_sched_forward(p, m, &f) == 0,
                        "build p=%d h=%" PRIu64, p, h);
            if (d == NULL || f == NULL) {
                continue;
            }
            expect_true(exchange_sched_validate(d, p, m, &ld, NULL, 0) == 0, "direct valid");
            expect_true(exchange_sched_validate(f, p, m, &lf, NULL, 0) == 0, "forward valid");
            double rd = (double)ld / 5.0 / (double)h, rf = (double)lf / 5.0 / (double)h;
            double lower = p % 2 ? 1.2 * (1.0 + 3.0 / (5.0 * p - 3.0)) : 1.2;
            double upper = p % 2 ? (1.2 + 2.0 / p) * (double)(h + 1) / (double)h : 1.2;
            printf("p=%-3d h=%-5" PRIu64 " direct %.3f h  forward %.3f h  (lower bound %.3f h, "
                   "upper %.3f h)\n",
                   p, h, rd, rf, lower, upper);
            expect_true(ld == 15 * h / 2, "direct p=%d h=%" PRIu64 ": %.3f h, expected 1.5 h", p, h,
                        rd);
            expect_true(rf >= lower - 1e-9 && rf <= upper + 1e-9,
                        "forward p=%d h=%" PRIu64 ": %.3f h outside [%.3f, %.3f]", p, h, rf, lower,
                        upper);
            expect_true(lf <= ld, "p=%d h=%" PRIu64 ": forward %.3f h slower than direct", p, h,
                        rf);
            expect_true(p % 2 == 1 || ld * 4 == lf * 5,
                        "p=%d h=%" PRIu64 ": even p, but direct / forward = %.3f, not 5/4", p, h,
                        rd / rf);
            exchange_sched_free(d);
            exchange_sched_free(f);
        }
        util_free(m);
    }
}

/* ---- the validator on hand-made schedules ---------------------------------------------------- */

/* A hand-made transfer: step, src, dst, message, piece, hop. */
struct hx {
    uint64_t step;
    uint32_t src, dst, ms, md;
    uint64_t off, len;
    uint8_t hop;
};

/* Builds a schedule from @n transfers in step order over @nsteps steps of 5 units. */
static struct exchange_sched *hand(int p, enum exchange_sched_model model, const struct hx *x,
                                   size_t n, uint64_t nsteps)
{
    struct exchange_sched *s = util_calloc(1, sizeof(*s));
    s->algo = "hand";
    s->model = model;
    s->p = p;
    s->nsteps = nsteps;
    s->nxfers = n;
    s->step_begin = util_calloc(nsteps + 1, sizeof(uint64_t));
    s->step_units = util_calloc(nsteps + 1, sizeof(uint64_t));
    s->xfers = util_calloc(n + 1, sizeof(*s->xfers));
    s->rank_begin = util_calloc((size_t)p + 1, sizeof(uint64_t));
    s->rank_xfers = util_calloc(2 * n + 1, sizeof(uint64_t));
    for (uint64_t t = 0; t < nsteps; t++) {
        s->step_units[t] = 5;
        s->length += 5;
    }
    for (size_t k = 0; k < n; k++) {
        s->xfers[k] = (struct exchange_sched_xfer){x[k].step, x[k].off, x[k].len, x[k].src,
                                                   x[k].dst,  x[k].ms,  x[k].md,  x[k].hop};
        s->step_begin[x[k].step + 1] = k + 1;
        s->fwd_units_max = x[k].hop == EXCHANGE_SCHED_HOP1 && x[k].len > s->fwd_units_max
                               ? x[k].len
                               : s->fwd_units_max;
    }
    for (uint64_t t = 1; t <= nsteps; t++) {
        s->step_begin[t] =
            s->step_begin[t] > s->step_begin[t - 1] ? s->step_begin[t] : s->step_begin[t - 1];
    }
    /* The per-rank index, as the scheduler builds it. */
    size_t pos = 0;
    for (int r = 0; r < p; r++) {
        s->rank_begin[r] = pos;
        for (size_t k = 0; k < n; k++) {
            if (x[k].src == (uint32_t)r || x[k].dst == (uint32_t)r) {
                s->rank_xfers[pos++] = k;
            }
        }
    }
    s->rank_begin[p] = pos;
    return s;
}

/* Expects the validator to accept (want_ok) or reject a hand-made schedule. */
static void expect(const char *what, int p, const uint64_t *m, enum exchange_sched_model model,
                   const struct hx *x, size_t n, uint64_t nsteps, bool want_ok, const char *needle)
{
    struct exchange_sched *s = hand(p, model, x, n, nsteps);
    char why[256];
    int rc = exchange_sched_validate(s, p, m, NULL, why, sizeof(why));
    expect_true((rc == 0) == want_ok, "%s: validator said %d (%s)", what, rc, why);
    if (!want_ok && needle != NULL) {
        expect_true(strstr(why, needle) != NULL, "%s: reason '%s' lacks '%s'", what, why, needle);
    }
    exchange_sched_free(s);
}

static void test_validator(void)
{
    enum { D = EXCHANGE_SCHED_DIRECT, H1 = EXCHANGE_SCHED_HOP1, H2 = EXCHANGE_SCHED_HOP2 };
    const enum exchange_sched_model HALF = EXCHANGE_SCHED_HALF_DUPLEX;
    const enum exchange_sched_model FULL = EXCHANGE_SCHED_FULL_DUPLEX;
    /* 3 PEs: one packet 0 -> 1, one packet 1 -> 2; PE 2 keeps 4 packets for itself. */
    uint64_t m[9] = {0, 1, 0, 0, 0, 1, 0, 0, 4};
    struct hx ok[] = {{0, 0, 1, 0, 1, 0, 5, D}, {1, 1, 2, 1, 2, 0, 5, D}};
    expect("two steps", 3, m, HALF, ok, 2, 2, true, NULL);
    struct hx same[] = {{0, 0, 1, 0, 1, 0, 5, D}, {0, 1, 2, 1, 2, 0, 5, D}};
    expect("PE 1 sends and receives at once", 3, m, HALF, same, 2, 1, false, "busy");
    expect("... which full-duplex allows", 3, m, FULL, same, 2, 1, true, NULL);
    struct hx twice[] = {
        {0, 0, 1, 0, 1, 0, 5, D}, {1, 0, 1, 0, 1, 0, 5, D}, {2, 1, 2, 1, 2, 0, 5, D}};
    expect("a packet delivered twice", 3, m, HALF, twice, 3, 3, false, "twice");
    expect("a packet never delivered", 3, m, HALF, ok, 1, 1, false, "delivered");
    struct hx gap[] = {
        {0, 0, 1, 0, 1, 0, 2, D}, {1, 0, 1, 0, 1, 3, 2, D}, {2, 1, 2, 1, 2, 0, 5, D}};
    expect("a gap inside a packet", 3, m, HALF, gap, 3, 3, false, "never");
    struct hx fifths[] = {
        {0, 0, 1, 0, 1, 0, 2, D}, {1, 0, 1, 0, 1, 2, 3, D}, {2, 1, 2, 1, 2, 0, 5, D}};
    expect("a packet in two pieces", 3, m, HALF, fifths, 3, 3, true, NULL);
    struct hx outside[] = {{0, 0, 1, 0, 1, 0, 5, D}, {1, 1, 2, 1, 2, 5, 5, D}};
    expect("a piece past the message", 3, m, HALF, outside, 2, 2, false, "outside");
    struct hx diag[] = {
        {0, 0, 1, 0, 1, 0, 5, D}, {1, 1, 2, 1, 2, 0, 5, D}, {2, 2, 2, 2, 2, 0, 5, D}};
    expect("a local copy in the schedule", 3, m, HALF, diag, 3, 3, false, "bad PEs");
    struct hx wronghop[] = {{0, 0, 2, 0, 1, 0, 5, D}, {1, 1, 2, 1, 2, 0, 5, D}};
    expect("a direct transfer to the wrong PE", 3, m, HALF, wronghop, 2, 2, false, "hop");

    /* 4 PEs: message 0 -> 1 of one packet, forwarded by 2 or 3. */
    uint64_t f[16] = {0};
    f[0 * 4 + 1] = 1;
    struct hx fw[] = {
        {0, 0, 2, 0, 1, 0, 3, H1}, {1, 2, 1, 0, 1, 0, 3, H2}, {2, 0, 1, 0, 1, 3, 2, D}};
    expect("a forwarded piece", 4, f, HALF, fw, 3, 3, true, NULL);
    struct hx order[] = {
        {0, 2, 1, 0, 1, 0, 3, H2}, {1, 0, 2, 0, 1, 0, 3, H1}, {2, 0, 1, 0, 1, 3, 2, D}};
    expect("second hop before the first", 4, f, HALF, order, 3, 3, false, NULL);
    struct hx via[] = {
        {0, 0, 2, 0, 1, 0, 3, H1}, {1, 3, 1, 0, 1, 0, 3, H2}, {2, 0, 1, 0, 1, 3, 2, D}};
    expect("hops through different forwarders", 4, f, HALF, via, 3, 3, false, NULL);
    struct hx lost[] = {{0, 0, 2, 0, 1, 0, 3, H1}, {1, 0, 1, 0, 1, 3, 2, D}};
    expect("a piece that never leaves its forwarder", 4, f, HALF, lost, 2, 2, false, "hop");
    struct hx three[] = {{0, 0, 2, 0, 1, 0, 3, H1},
                         {1, 2, 3, 0, 1, 0, 3, H1},
                         {2, 3, 1, 0, 1, 0, 3, H2},
                         {3, 0, 1, 0, 1, 3, 2, D}};
    expect("a piece with three hops", 4, f, HALF, three, 4, 4, false, NULL);
    struct hx hold[] = {{0, 0, 2, 0, 1, 0, 1, H1},
                        {1, 0, 2, 0, 1, 1, 1, H1},
                        {2, 2, 1, 0, 1, 0, 1, H2},
                        {3, 2, 1, 0, 1, 1, 1, H2},
                        {4, 0, 1, 0, 1, 2, 3, D}};
    expect("two pieces in transit at one forwarder", 4, f, HALF, hold, 5, 5, false, "transit");

    /* Corrupted bookkeeping. */
    struct exchange_sched *s = hand(3, HALF, ok, 2, 2);
    s->length = 5;
    expect_true(exchange_sched_validate(s, 3, m, NULL, NULL, 0) != 0, "wrong length accepted");
    s->length = 10;
    s->rank_xfers[0] = 1;
    expect_true(exchange_sched_validate(s, 3, m, NULL, NULL, 0) != 0, "wrong rank index accepted");
    expect_true(exchange_sched_validate(s, 4, m, NULL, NULL, 0) != 0, "wrong p accepted");
    exchange_sched_free(s);

    /* A real schedule with one transfer moved into another step must fail. */
    uint64_t mm[16] = {0, 3, 1, 2, 1, 0, 2, 2, 2, 1, 0, 3, 1, 1, 1, 0};
    struct exchange_sched *r = NULL;
    expect_true(exchange_sched_forward(4, mm, &r) == 0, "forward 4");
    expect_true(exchange_sched_validate(r, 4, mm, NULL, NULL, 0) == 0, "forward 4 valid");
    r->xfers[0].off += 1;
    expect_true(exchange_sched_validate(r, 4, mm, NULL, NULL, 0) != 0, "shifted piece accepted");
    exchange_sched_free(r);
}

/* Hand-made walks: which transfers may join and which may not. */
static void test_joins(void)
{
    enum { D = EXCHANGE_SCHED_DIRECT, H1 = EXCHANGE_SCHED_HOP1, H2 = EXCHANGE_SCHED_HOP2 };
    /* 0 -> 1 three times running: joins; then 2 -> 1 comes between, so the fourth piece of
     * 0 -> 1 stands alone although 0 did nothing in between; then 0 -> 2 in two pieces with a
     * gap; then 1 -> 2 forwarded pieces, which never join; then 1 -> 2 in two pieces with 1 -> 0
     * between them, which 2 does not see. */
    const struct hx x[] = {
        {0, 0, 1, 0, 1, 0, 5, D},  {1, 0, 1, 0, 1, 5, 5, D},   {2, 0, 1, 0, 1, 10, 5, D},
        {3, 2, 1, 2, 1, 0, 5, D},  {4, 0, 1, 0, 1, 15, 5, D},  {5, 0, 2, 0, 2, 0, 5, D},
        {6, 0, 2, 0, 2, 10, 5, D}, {7, 0, 2, 0, 2, 5, 5, D},   {8, 1, 2, 1, 0, 0, 1, H1},
        {9, 2, 0, 1, 0, 0, 1, H2}, {10, 1, 2, 1, 0, 1, 1, H1}, {11, 2, 0, 1, 0, 1, 1, H2},
        {12, 1, 2, 1, 2, 0, 5, D}, {13, 1, 0, 1, 0, 0, 5, D},  {14, 1, 2, 1, 2, 5, 5, D},
    };
    const uint8_t want[] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    size_t n = sizeof(x) / sizeof(x[0]);
    struct exchange_sched *s = hand(3, EXCHANGE_SCHED_HALF_DUPLEX, x, n, n);
    uint8_t join[sizeof(want)];
    expect_true(exchange_sched_joins(s, join) == 0, "joins");
    for (size_t i = 0; i < n; i++) {
        expect_true(join[i] == want[i], "transfer %zu: join %d, want %d", i, join[i], want[i]);
    }
    expect_true(check_joins(s, "hand") == 2, "two joins");
    exchange_sched_free(s);
}

/* ---- bytes ------------------------------------------------------------------------------ */

static void test_bytes(void)
{
    expect_true(exchange_sched_packets(0, 10) == 0, "0 bytes");
    expect_true(exchange_sched_packets(10, 10) == 1, "exact");
    expect_true(exchange_sched_packets(11, 10) == 2, "short last packet");
    expect_true(exchange_sched_packets(UINT64_MAX, 1) == UINT64_MAX, "huge");
    /* Every unit partition of a message maps to a byte partition, for awkward sizes. */
    static const uint64_t sizes[] = {1, 7, 8, 1000, 1001, 65536, 999999};
    static const uint64_t packets[] = {1, 3, 5, 8, 4096, 65537};
    for (size_t a = 0; a < sizeof(sizes) / sizeof(*sizes); a++) {
        for (size_t b = 0; b < sizeof(packets) / sizeof(*packets); b++) {
            uint64_t bytes = sizes[a], S = packets[b], np = exchange_sched_packets(bytes, S);
            uint64_t next = 0, total = 0;
            test_seed(a * 31 + b);
            /* Random cuts of [0, 5 np) units. */
            for (uint64_t u = 0; u < 5 * np;) {
                uint64_t len = 1 + test_below(7);
                len = u + len > 5 * np ? 5 * np - u : len;
                uint64_t bo, bl;
                exchange_sched_bytes(bytes, S, u, len, &bo, &bl);
                expect_true(bo == next, "bytes=%" PRIu64 " S=%" PRIu64 ": gap at unit %" PRIu64,
                            bytes, S, u);
                next = bo + bl;
                total += bl;
                u += len;
            }
            expect_true(total == bytes, "bytes=%" PRIu64 " S=%" PRIu64 ": %" PRIu64 " covered",
                        bytes, S, total);
            /* Whole packets map to whole packets. */
            uint64_t bo, bl;
            exchange_sched_bytes(bytes, S, 0, 5, &bo, &bl);
            expect_true(bo == 0 && bl == (bytes < S ? bytes : S), "first packet");
        }
    }
    /* Offsets near 2^64 units clip instead of overflowing. */
    uint64_t bo, bl;
    exchange_sched_bytes(100, UINT64_MAX / 2, 5, UINT64_MAX - 10, &bo, &bl);
    expect_true(bo == 100 && bl == 0, "overflow clipped: %" PRIu64 " %" PRIu64, bo, bl);
    /* Packets of elements: 40 bytes for keys and bytes as ever, five whole elements otherwise,
     * and then no piece of any message of whole elements starts or ends inside an element. */
    static const uint64_t elems[] = {1, 2, 8, 13, 24, 100, 65536};
    static const uint64_t quanta[] = {40, 40, 40, 520, 120, 1000, 327680};
    for (size_t a = 0; a < sizeof(elems) / sizeof(*elems); a++) {
        uint64_t e = elems[a], q = exchange_sched_quantum(e);
        expect_true(q == quanta[a], "quantum of %" PRIu64 "-byte elements: %" PRIu64, e, q);
        uint64_t m[4] = {0, 777 + a, 12345, 0}; /* two PEs, in elements */
        for (uint64_t th = 1; th <= 64; th *= 4) {
            uint64_t S = exchange_sched_packet_bytes(2, m, e, e, th);
            expect_true(S % q == 0 && S >= EXCHANGE_SCHED_MIN_PACKET,
                        "e=%" PRIu64 ": packet %" PRIu64, e, S);
            uint64_t msg = m[2] * e, np = exchange_sched_packets(msg, S);
            for (uint64_t u = 0; u < 5 * np; u++) {
                exchange_sched_bytes(msg, S, u, 1, &bo, &bl);
                expect_true(bo % e == 0 && bl % e == 0,
                            "e=%" PRIu64 " S=%" PRIu64 ": unit %" PRIu64 " is bytes [%" PRIu64
                            ", +%" PRIu64 ")",
                            e, S, u, bo, bl);
            }
        }
    }
    /* A byte matrix prices the same packets as the matrix of elements it counts. */
    uint64_t me[4] = {0, 5000, 70000, 0}, mb[4] = {0, 5000 * 13, 70000 * 13, 0};
    expect_true(exchange_sched_packet_bytes(2, me, 13, 13, 0) ==
                    exchange_sched_packet_bytes(2, mb, 1, 13, 0),
                "elements and bytes disagree");
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_errors(void)
{
    uint64_t m[4] = {0, UINT64_MAX / 2, UINT64_MAX / 2, 0};
    for (size_t a = 0; algos[a] != NULL; a++) {
        struct exchange_sched *s = (struct exchange_sched *)1;
        expect_true(algos[a]->build(0, m, &s) == UTIL_EUSAGE && s == NULL, "p = 0");
        expect_true(algos[a]->build(2, NULL, &s) == UTIL_EUSAGE, "NULL matrix");
        expect_true(algos[a]->build(2, m, &s) == UTIL_EUSAGE, "overflowing counts");
    }
    exchange_sched_free(NULL);
}

/* ---- timing ------------------------------------------------------------------------------ */

/*
 * Scheduling time on random matrices with mean count @mu per message (h ~ 2 p mu), the best of
 * @reps runs per algorithm; one line per algorithm.
 */
static void test_time(void)
{
    int p = (int)test_param_long("p", 64), reps = (int)test_param_long("reps", 3);
    double mu = test_param_double("mean", 4);
    size_t n = (size_t)p;
    uint64_t *m = util_malloc(n * n * sizeof(*m));
    test_seed(42);
    for (size_t i = 0; i < n * n; i++) {
        m[i] = around(mu);
    }
    uint64_t h;
    exchange_sched_degrees(p, m, &h, NULL, NULL);
    for (size_t a = 0; algos[a] != NULL; a++) {
        double best = INFINITY;
        struct exchange_sched *s = NULL;
        for (int r = 0; r < reps; r++) {
            exchange_sched_free(s);
            s = NULL;
            double t0 = util_now();
            expect_true(algos[a]->build(p, m, &s) == 0, "build");
            double t = util_now() - t0;
            best = t < best ? t : best;
        }
        if (s == NULL) {
            continue;
        }
        double t0 = util_now();
        expect_true(exchange_sched_validate(s, p, m, NULL, NULL, 0) == 0, "valid");
        double tv = util_now() - t0;
        printf("p=%-5d mu=%-8g h=%-9" PRIu64 " %-10s %9.4f s  steps/h=%.3f classes=%-7" PRIu64
               " steps=%-8" PRIu64 " xfers=%-9" PRIu64 " (validate %.3f s)\n",
               p, mu, h, algos[a]->name, best, (double)s->length / 5.0 / (double)h, s->matchings,
               s->nsteps, s->nxfers, tv);
        exchange_sched_free(s);
    }
    util_free(m);
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {
        TEST(matrices), TEST(lowerbound), TEST(validator), TEST(joins),
        TEST(bytes),    TEST(errors),     TEST(time),      TEST_END,
    };
    return test_main(argc, argv, tests);
}

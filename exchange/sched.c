/*
 * exchange/sched.c: the schedule container: validation, degree statistics, the packet and byte
 * mapping, printing and the bounds of the algorithms (see sched.h). The algorithms themselves live
 * in sched_build.c.
 */
#include "exchange/sched.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/util.h"

void exchange_sched_free(struct exchange_sched *s)
{
    if (s == NULL) {
        return;
    }
    util_free(s->step_begin);
    util_free(s->step_units);
    util_free(s->xfers);
    util_free(s->rank_begin);
    util_free(s->rank_xfers);
    util_free(s);
}

int exchange_sched_degrees(int p, const uint64_t *m, uint64_t *h, uint64_t *send_max,
                           uint64_t *recv_max)
{
    uint64_t hh = 0, smax = 0, rmax = 0;
    size_t n = p > 0 ? (size_t)p : 0;
    uint64_t *send = util_calloc(n ? n : 1, sizeof(*send));
    uint64_t *recv = util_calloc(n ? n : 1, sizeof(*recv));
    int rc = send == NULL || recv == NULL ? UTIL_ENOMEM : UTIL_OK;
    /* Row sums are the sends, column sums the receives; the diagonal stays local. */
    for (size_t i = 0; i < n && rc == UTIL_OK; i++) {
        for (size_t j = 0; j < n; j++) {
            uint64_t x = i == j ? 0 : m[i * n + j];
            if (send[i] + x < send[i] || recv[j] + x < recv[j]) {
                rc = UTIL_EUSAGE; /* a sum beyond 64 bits */
                break;
            }
            send[i] += x;
            recv[j] += x;
        }
    }
    /* h counts both directions of each PE (half-duplex: it does one at a time). */
    for (size_t i = 0; i < n && rc == UTIL_OK; i++) {
        if (send[i] + recv[i] < send[i]) {
            rc = UTIL_EUSAGE;
            break;
        }
        hh = send[i] + recv[i] > hh ? send[i] + recv[i] : hh;
        smax = send[i] > smax ? send[i] : smax;
        rmax = recv[i] > rmax ? recv[i] : rmax;
    }
    util_free(send);
    util_free(recv);
    if (rc == UTIL_OK) {
        if (h != NULL) {
            *h = hh;
        }
        if (send_max != NULL) {
            *send_max = smax;
        }
        if (recv_max != NULL) {
            *recv_max = rmax;
        }
    }
    return rc;
}

/* a + b, or UINT64_MAX when that overflows. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t exchange_sched_quantum(uint64_t elem_bytes)
{
    /* 5 lcm(e, 8) = 5 e 8 / gcd(e, 8), and gcd(e, 8) is the largest power of two <= 8 in e. */
    uint64_t e = elem_bytes > 0 ? elem_bytes : 1, g = 1;
    while (g < 8 && e % (2 * g) == 0) {
        g *= 2;
    }
    return 5 * e * (8 / g);
}

uint64_t exchange_sched_packet_bytes(int p, const uint64_t *m, uint64_t unit_bytes,
                                     uint64_t elem_bytes, uint64_t target_h)
{
    uint64_t th = target_h > 0 ? target_h : EXCHANGE_SCHED_TARGET_H;
    uint64_t hmax = 0;
    size_t n = p > 0 ? (size_t)p : 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t load = 0;
        for (size_t j = 0; j < n; j++) {
            if (i != j) {
                load = add_sat(load, add_sat(m[i * n + j], m[j * n + i]));
            }
        }
        hmax = load > hmax ? load : hmax;
    }
    uint64_t bytes =
        unit_bytes != 0 && hmax > UINT64_MAX / unit_bytes ? UINT64_MAX : hmax * unit_bytes;
    uint64_t s = bytes / th + (bytes % th != 0);
    s = s > EXCHANGE_SCHED_MIN_PACKET ? s : EXCHANGE_SCHED_MIN_PACKET;
    uint64_t q = exchange_sched_quantum(elem_bytes);
    return s > UINT64_MAX - q ? UINT64_MAX / q * q : (s + q - 1) / q * q;
}

uint64_t exchange_sched_packets(uint64_t msg_bytes, uint64_t packet_bytes)
{
    return msg_bytes / packet_bytes + (msg_bytes % packet_bytes != 0);
}

/* Byte where unit @u starts: floor(u * S / 5), computed without overflowing u * S. */
static uint64_t unit_byte(uint64_t u, uint64_t packet_bytes, uint64_t msg_bytes)
{
    uint64_t whole = u / EXCHANGE_SCHED_UNITS, part = u % EXCHANGE_SCHED_UNITS;
    if (whole != 0 && packet_bytes > msg_bytes / whole) {
        return msg_bytes; /* beyond the end (or beyond 64 bits): clip */
    }
    uint64_t b = whole * packet_bytes;
    /* part * S / 5 without overflow: split S into quotient and remainder by 5. */
    uint64_t frac = part * (packet_bytes / EXCHANGE_SCHED_UNITS) +
                    part * (packet_bytes % EXCHANGE_SCHED_UNITS) / EXCHANGE_SCHED_UNITS;
    return b + frac < b || b + frac > msg_bytes ? msg_bytes : b + frac;
}

void exchange_sched_bytes(uint64_t msg_bytes, uint64_t packet_bytes, uint64_t off, uint64_t len,
                          uint64_t *byte_off, uint64_t *byte_len)
{
    uint64_t end = off + len < off ? UINT64_MAX : off + len;
    uint64_t b0 = unit_byte(off, packet_bytes, msg_bytes);
    uint64_t b1 = unit_byte(end, packet_bytes, msg_bytes);
    *byte_off = b0;
    *byte_len = b1 - b0;
}

/* ---- validation ------------------------------------------------------------------------- */

/* A piece as the validator sorts it: the message, the unit range, where and when it hopped. */
struct vpiece {
    uint32_t msrc, mdst;
    uint64_t off, len;
    uint64_t step;
    uint32_t via; /* forwarder: dst of a HOP1, src of a HOP2 */
};

static int vpiece_cmp(const void *a, const void *b)
{
    const struct vpiece *x = a, *y = b;
    if (x->msrc != y->msrc) {
        return x->msrc < y->msrc ? -1 : 1;
    }
    if (x->mdst != y->mdst) {
        return x->mdst < y->mdst ? -1 : 1;
    }
    if (x->off != y->off) {
        return x->off < y->off ? -1 : 1;
    }
    return x->len < y->len ? -1 : x->len > y->len;
}

/*
 * Sorts pieces by message, then offset: a counting sort into the p x p message buckets (via
 * @tmp, n pieces, and @cnt, p * p + 1 counters), then each bucket on its own, which keeps
 * validation near linear for schedules with millions of transfers.
 */
static void sort_pieces(struct vpiece *a, size_t n, uint64_t p, struct vpiece *tmp, uint64_t *cnt)
{
    memset(cnt, 0, (size_t)(p * p + 1) * sizeof(*cnt));
    for (size_t k = 0; k < n; k++) {
        cnt[(uint64_t)a[k].msrc * p + a[k].mdst + 1]++;
    }
    for (uint64_t b = 0; b < p * p; b++) {
        cnt[b + 1] += cnt[b];
    }
    for (size_t k = 0; k < n; k++) {
        tmp[cnt[(uint64_t)a[k].msrc * p + a[k].mdst]++] = a[k];
    }
    /* cnt[b] is now the end of bucket b; sort every bucket by offset. */
    for (uint64_t b = 0, begin = 0; b < p * p; b++) {
        if (cnt[b] - begin > 1) {
            qsort(tmp + begin, (size_t)(cnt[b] - begin), sizeof(*tmp), vpiece_cmp);
        }
        begin = cnt[b];
    }
    memcpy(a, tmp, n * sizeof(*a));
}

/* Records the first violation in why and returns UTIL_EUSAGE. */
static int bad(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t whylen, const char *fmt, ...)
{
    if (why != NULL && whylen > 0) {
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return UTIL_EUSAGE;
}

/* One transfer of step t (index k, the step lasting dur units): indices, lengths and the hop's
 * endpoints, and the piece within its message. */
static int check_xfer(const struct exchange_sched *s, const uint64_t *m,
                      const struct exchange_sched_xfer *x, uint64_t t, uint64_t k, uint64_t dur,
                      char *why, size_t whylen)
{
    uint64_t p = (uint64_t)s->p;
    /* Indices, lengths and the hop's endpoints. */
    if (x->src >= p || x->dst >= p || x->msg_src >= p || x->msg_dst >= p || x->src == x->dst ||
        x->msg_src == x->msg_dst) {
        return bad(why, whylen, "step %" PRIu64 ": transfer %" PRIu64 " has bad PEs", t, k);
    }
    if (x->step != t || x->len == 0 || x->len > dur || x->hop >= EXCHANGE_SCHED_HOP_COUNT) {
        return bad(why, whylen,
                   "step %" PRIu64 ": transfer %" PRIu64 " has a bad step, length or hop", t, k);
    }
    /* Direct: source to destination; hop 1 leaves the source, hop 2 reaches the end. */
    bool from = x->src == x->msg_src, to = x->dst == x->msg_dst;
    bool ok = x->hop == EXCHANGE_SCHED_DIRECT ? from && to
              : x->hop == EXCHANGE_SCHED_HOP1 ? from && !to
                                              : to && !from;
    if (!ok) {
        return bad(why, whylen, "step %" PRIu64 ": %u->%u does not fit hop %u of message %u->%u", t,
                   x->src, x->dst, x->hop, x->msg_src, x->msg_dst);
    }
    if (x->off + x->len < x->off ||
        x->off + x->len > m[(uint64_t)x->msg_src * p + x->msg_dst] * EXCHANGE_SCHED_UNITS) {
        return bad(why, whylen,
                   "step %" PRIu64 ": piece [%" PRIu64 ",+%" PRIu64 ") lies outside message %u->%u",
                   t, x->off, x->len, x->msg_src, x->msg_dst);
    }
    return UTIL_OK;
}

/* Ports: one send and one receive per PE and step, never both when half-duplex. Stamps the
 * transfer's ends with step t + 1 in sent_at and recv_at. */
static int check_ports(const struct exchange_sched *s, const struct exchange_sched_xfer *x,
                       uint64_t t, uint64_t *sent_at, uint64_t *recv_at, char *why, size_t whylen)
{
    bool half = s->model == EXCHANGE_SCHED_HALF_DUPLEX;
    if (sent_at[x->src] == t + 1 || recv_at[x->dst] == t + 1 ||
        (half && (recv_at[x->src] == t + 1 || sent_at[x->dst] == t + 1))) {
        return bad(why, whylen, "step %" PRIu64 ": PE %u or PE %u is busy twice (%s-duplex)", t,
                   x->src, x->dst, half ? "half" : "full");
    }
    sent_at[x->src] = t + 1;
    recv_at[x->dst] = t + 1;
    return UTIL_OK;
}

/* Update what forwarders hold after step t, transfers [b, e) (sends free, receives fill). */
static int check_held(const struct exchange_sched *s, uint64_t t, uint64_t b, uint64_t e,
                      uint32_t *held, char *why, size_t whylen)
{
    for (uint64_t k = b; k < e; k++) {
        const struct exchange_sched_xfer *x = &s->xfers[k];
        if (x->hop == EXCHANGE_SCHED_HOP2) {
            held[x->src]--;
        }
    }
    for (uint64_t k = b; k < e; k++) {
        const struct exchange_sched_xfer *x = &s->xfers[k];
        if (x->hop == EXCHANGE_SCHED_HOP1 && ++held[x->dst] > 1) {
            return bad(why, whylen, "step %" PRIu64 ": PE %u holds two pieces in transit", t,
                       x->dst);
        }
    }
    return UTIL_OK;
}

/* Shapes, indices and per-step port use; fills the delivered and first-hop piece lists. */
static int check_steps(const struct exchange_sched *s, const uint64_t *m, struct vpiece *dl,
                       size_t *ndl, struct vpiece *h1, size_t *nh1, struct vpiece *h2, size_t *nh2,
                       uint64_t *sent_at, uint64_t *recv_at, uint32_t *held, char *why,
                       size_t whylen)
{
    uint64_t length = 0, fwd_max = 0;
    int rc;
    if (s->step_begin[0] != 0 || s->step_begin[s->nsteps] != s->nxfers) {
        return bad(why, whylen, "step offsets do not span the %" PRIu64 " transfers", s->nxfers);
    }
    for (uint64_t t = 0; t < s->nsteps; t++) {
        uint64_t b = s->step_begin[t], e = s->step_begin[t + 1], dur = s->step_units[t];
        if (e < b || dur == 0) {
            return bad(why, whylen, "step %" PRIu64 ": bad offsets or zero duration", t);
        }
        length += dur;
        for (uint64_t k = b; k < e; k++) {
            const struct exchange_sched_xfer *x = &s->xfers[k];
            if ((rc = check_xfer(s, m, x, t, k, dur, why, whylen)) != UTIL_OK ||
                (rc = check_ports(s, x, t, sent_at, recv_at, why, whylen)) != UTIL_OK) {
                return rc;
            }
            /* Pieces in transit: a forwarder receives one, then passes it on. */
            struct vpiece v = {x->msg_src, x->msg_dst, x->off, x->len, t, 0};
            if (x->hop == EXCHANGE_SCHED_HOP1) {
                v.via = x->dst;
                h1[(*nh1)++] = v;
                fwd_max = x->len > fwd_max ? x->len : fwd_max;
            } else {
                if (x->hop == EXCHANGE_SCHED_HOP2) {
                    v.via = x->src;
                    h2[(*nh2)++] = v;
                    if (held[x->src] == 0) {
                        return bad(why, whylen, "step %" PRIu64 ": PE %u forwards nothing it holds",
                                   t, x->src);
                    }
                }
                dl[(*ndl)++] = v;
            }
        }
        if ((rc = check_held(s, t, b, e, held, why, whylen)) != UTIL_OK) {
            return rc;
        }
    }
    if (length != s->length) {
        return bad(why, whylen, "length %" PRIu64 " but the steps sum to %" PRIu64, s->length,
                   length);
    }
    if (fwd_max != s->fwd_units_max) {
        return bad(why, whylen,
                   "fwd_units_max %" PRIu64 " but the largest forwarded piece is %" PRIu64,
                   s->fwd_units_max, fwd_max);
    }
    return UTIL_OK;
}

/* Every off-diagonal message's delivered pieces partition [0, 5 m) exactly. */
static int check_delivery(const struct exchange_sched *s, const uint64_t *m, struct vpiece *dl,
                          size_t ndl, struct vpiece *tmp, uint64_t *cnt, char *why, size_t whylen)
{
    uint64_t p = (uint64_t)s->p, messages = 0, covered = 0;
    sort_pieces(dl, ndl, p, tmp, cnt);
    for (size_t k = 0; k < ndl;) {
        uint32_t ms = dl[k].msrc, md = dl[k].mdst;
        uint64_t want = m[(uint64_t)ms * p + md] * EXCHANGE_SCHED_UNITS, end = 0;
        /* Walk this message's pieces in offset order: no gap, no overlap. */
        for (; k < ndl && dl[k].msrc == ms && dl[k].mdst == md; k++) {
            if (dl[k].off != end) {
                return bad(why, whylen,
                           "message %u->%u: unit %" PRIu64 " %s", ms, md,
                           dl[k].off < end ? dl[k].off : end,
                           dl[k].off < end ? "is delivered twice" : "is never delivered");
            }
            end += dl[k].len;
        }
        if (end != want) {
            return bad(why, whylen, "message %u->%u: %" PRIu64 " of %" PRIu64 " units delivered",
                       ms, md, end, want);
        }
        covered++;
    }
    for (uint64_t i = 0; i < p; i++) {
        for (uint64_t j = 0; j < p; j++) {
            messages += i != j && m[i * p + j] != 0;
        }
    }
    if (covered != messages) {
        return bad(why, whylen, "%" PRIu64 " of %" PRIu64 " messages delivered", covered,
                   messages);
    }
    return UTIL_OK;
}

/* Every forwarded piece: one first hop and one second hop, same forwarder, in that order. */
static int check_hops(struct vpiece *h1, struct vpiece *h2, size_t n, uint64_t p,
                      struct vpiece *tmp, uint64_t *cnt, char *why, size_t whylen)
{
    sort_pieces(h1, n, p, tmp, cnt);
    sort_pieces(h2, n, p, tmp, cnt);
    for (size_t k = 0; k < n; k++) {
        if (vpiece_cmp(&h1[k], &h2[k]) != 0 || (k > 0 && vpiece_cmp(&h1[k - 1], &h1[k]) == 0)) {
            return bad(why, whylen, "message %u->%u: a forwarded piece at unit %" PRIu64
                                    " lacks its other hop or is forwarded twice",
                       h1[k].msrc, h1[k].mdst, h1[k].off);
        }
        if (h1[k].via != h2[k].via || h1[k].step >= h2[k].step) {
            return bad(why, whylen, "message %u->%u: the hops of the piece at unit %" PRIu64
                                    " use different forwarders or the wrong order",
                       h1[k].msrc, h1[k].mdst, h1[k].off);
        }
    }
    return UTIL_OK;
}

/* The per-rank index lists exactly each rank's transfers, in step order. */
static int check_index(const struct exchange_sched *s, char *why, size_t whylen)
{
    uint64_t p = (uint64_t)s->p;
    if (s->rank_begin[0] != 0 || s->rank_begin[p] != 2 * s->nxfers) {
        return bad(why, whylen, "the per-rank index does not hold every transfer twice");
    }
    for (uint64_t r = 0; r < p; r++) {
        uint64_t last = 0;
        for (uint64_t k = s->rank_begin[r]; k < s->rank_begin[r + 1]; k++) {
            uint64_t i = s->rank_xfers[k];
            if (i >= s->nxfers || (s->xfers[i].src != r && s->xfers[i].dst != r) ||
                (k > s->rank_begin[r] && i <= last)) {
                return bad(why, whylen, "the per-rank index of rank %" PRIu64 " is wrong", r);
            }
            last = i;
        }
    }
    return UTIL_OK;
}

int exchange_sched_validate(const struct exchange_sched *s, int p, const uint64_t *m,
                            uint64_t *length, char *why, size_t whylen)
{
    if (why != NULL && whylen > 0) {
        why[0] = '\0';
    }
    if (s == NULL || m == NULL || p < 1 || s->p != p) {
        return bad(why, whylen, "schedule for %d PEs checked against %d", s ? s->p : -1, p);
    }
    /* Pieces delivered (direct or second hop), first and second hops; port stamps per PE. */
    size_t n = s->nxfers ? (size_t)s->nxfers : 1;
    struct vpiece *dl = util_malloc(n * sizeof(*dl));
    struct vpiece *h1 = util_malloc(n * sizeof(*h1));
    struct vpiece *h2 = util_malloc(n * sizeof(*h2));
    uint64_t *sent_at = util_calloc((size_t)p, sizeof(*sent_at));
    uint64_t *recv_at = util_calloc((size_t)p, sizeof(*recv_at));
    uint32_t *held = util_calloc((size_t)p, sizeof(*held));
    struct vpiece *tmp = util_malloc(n * sizeof(*tmp));
    uint64_t *cnt = util_malloc(((size_t)p * (size_t)p + 1) * sizeof(*cnt));
    size_t ndl = 0, nh1 = 0, nh2 = 0;
    int rc = UTIL_ENOMEM;
    if (dl == NULL || h1 == NULL || h2 == NULL || sent_at == NULL || recv_at == NULL ||
        held == NULL || tmp == NULL || cnt == NULL) {
        goto fail;
    }
    /* One pass over the steps, then the piece lists sorted by message and offset. */
    rc = check_steps(s, m, dl, &ndl, h1, &nh1, h2, &nh2, sent_at, recv_at, held, why, whylen);
    if (rc == UTIL_OK && nh1 != nh2) {
        rc = bad(why, whylen, "%zu first hops but %zu second hops", nh1, nh2);
    }
    if (rc == UTIL_OK) {
        rc = check_hops(h1, h2, nh1, (uint64_t)p, tmp, cnt, why, whylen);
    }
    if (rc == UTIL_OK) {
        rc = check_delivery(s, m, dl, ndl, tmp, cnt, why, whylen);
    }
    /* Last, what the executor walks: the per-rank index. */
    if (rc == UTIL_OK) {
        rc = check_index(s, why, whylen);
    }
    if (rc == UTIL_OK && length != NULL) {
        *length = s->length;
    }
fail:
    util_free(dl);
    util_free(h1);
    util_free(h2);
    util_free(sent_at);
    util_free(recv_at);
    util_free(held);
    util_free(tmp);
    util_free(cnt);
    return rc;
}

int exchange_sched_joins(const struct exchange_sched *s, uint8_t *join)
{
    const uint64_t none = UINT64_MAX;
    uint64_t *after_src = util_malloc((s->nxfers ? s->nxfers : 1) * sizeof(uint64_t));
    if (after_src == NULL) {
        return UTIL_ENOMEM;
    }
    /* Every transfer is in two walks: its sender's (noted first) and its receiver's. */
    for (int r = 0; r < s->p; r++) {
        for (uint64_t k = s->rank_begin[r]; k < s->rank_begin[r + 1]; k++) {
            uint64_t i = s->rank_xfers[k];
            if (s->xfers[i].src == (uint32_t)r) {
                after_src[i] = k + 1 < s->rank_begin[r + 1] ? s->rank_xfers[k + 1] : none;
            }
        }
    }
    memset(join, 0, s->nxfers);
    for (int r = 0; r < s->p; r++) {
        for (uint64_t k = s->rank_begin[r]; k + 1 < s->rank_begin[r + 1]; k++) {
            uint64_t i = s->rank_xfers[k], j = s->rank_xfers[k + 1];
            const struct exchange_sched_xfer *x = &s->xfers[i], *y = &s->xfers[j];
            if (x->dst == (uint32_t)r) {
                join[i] = after_src[i] == j && x->hop == EXCHANGE_SCHED_DIRECT &&
                          y->hop == EXCHANGE_SCHED_DIRECT && y->src == x->src && y->dst == x->dst &&
                          y->off == x->off + x->len;
            }
        }
    }
    util_free(after_src);
    return UTIL_OK;
}

void exchange_sched_print(FILE *out, const struct exchange_sched *s)
{
    /* Header line, then each step with its duration and one line per transfer. */
    static const char *const hop[] = {"direct", "hop1", "hop2"};
    fprintf(out, "%s: p=%d h=%" PRIu64 " length=%" PRIu64 "/5 steps=%" PRIu64 " xfers=%" PRIu64
                 "\n",
            s->algo, s->p, s->h, s->length, s->nsteps, s->nxfers);
    for (uint64_t t = 0; t < s->nsteps; t++) {
        fprintf(out, "step %" PRIu64 " (%" PRIu64 " units)\n", t, s->step_units[t]);
        for (uint64_t k = s->step_begin[t]; k < s->step_begin[t + 1]; k++) {
            const struct exchange_sched_xfer *x = &s->xfers[k];
            fprintf(out, "  %u->%u %s msg %u->%u [%" PRIu64 ",+%" PRIu64 ")\n", x->src, x->dst,
                    hop[x->hop], x->msg_src, x->msg_dst, x->off, x->len);
        }
    }
}

/* ---- the algorithms and their bounds ------------------------------------------------------- */

/* §2.1: ceil(h/2) colour classes of at most 3 steps. */
static double bound_direct(int p, uint64_t h, uint64_t send_max, uint64_t recv_max)
{
    (void)p, (void)send_max, (void)recv_max;
    return 3.0 * (double)((h + 1) / 2);
}

/* §2.3-2.4: 12/5 per colour class, for odd p plus the sends of M (see sched.h). */
static double bound_forward(int p, uint64_t h, uint64_t send_max, uint64_t recv_max)
{
    (void)send_max, (void)recv_max;
    uint64_t c = (h + 1) / 2, q = ((uint64_t)p + 3) / 4;
    double b = 12.0 / 5.0 * (double)c;
    return p % 2 == 0 ? b : b + (double)((c + q - 1) / q);
}

/* König: exactly the larger of the busiest sender's and receiver's counts. */
static double bound_fullduplex(int p, uint64_t h, uint64_t send_max, uint64_t recv_max)
{
    (void)p, (void)h;
    return (double)(send_max > recv_max ? send_max : recv_max);
}

const struct exchange_sched_algo exchange_sched_algo_direct = {
    "direct", exchange_sched_direct, EXCHANGE_SCHED_HALF_DUPLEX, bound_direct};
const struct exchange_sched_algo exchange_sched_algo_forward = {
    "forward", exchange_sched_forward, EXCHANGE_SCHED_HALF_DUPLEX, bound_forward};
const struct exchange_sched_algo exchange_sched_algo_fullduplex = {
    "fullduplex", exchange_sched_fullduplex, EXCHANGE_SCHED_FULL_DUPLEX, bound_fullduplex};

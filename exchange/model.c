/*
 * exchange/model.c: what the back-ends' cost models share (see model.h and the model contract
 * in exchange.h): the instance with its derived figures, the run of one model, and the two ways
 * to price a walk, by rounds and asynchronously. The models themselves live beside their runs,
 * one per back-end file.
 */
#include "exchange/model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exchange/sched.h"
#include "util/alloc.h"
#include "util/util.h"

/* ---- the case ------------------------------------------------------------------------------ */

uint64_t exchange_model_packet_bytes(int p, const uint64_t *bytes, uint64_t elem_bytes,
                                     uint64_t target_h)
{
    return exchange_sched_packet_bytes(p, bytes, 1, elem_bytes, target_h);
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
    c->packet_bytes =
        packet_bytes > 0 ? packet_bytes : exchange_model_packet_bytes(p, bytes, c->elem_bytes, 0);
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

/* ---- running a model ----------------------------------------------------------------------- */

/* A result before its model fills it in: the back-end named, every figure it may not price
 * NaN. */
static void result_start(const struct exchange_model *m, struct exchange_model_result *r)
{
    memset(r, 0, sizeof(*r));
    r->algo = m->name;
    r->duplex = m->duplex;
    r->steps = NAN;
    r->bound = NAN;
    r->sched_seconds = NAN;
    r->async_seconds = NAN;
}

int exchange_model_run(const struct exchange_model *m, const struct exchange_model_case *c,
                       struct exchange_model_result *r)
{
    result_start(m, r);
    r->packet_bytes = c->packet_bytes;
    r->h = c->h;
    return m->run(c, r);
}

int exchange_model_run_equal(const struct exchange_model *m, const struct exchange_model_equal *e,
                             struct exchange_model_result *r)
{
    result_start(m, r);
    if (m->equal == NULL || e->p < 1) {
        return UTIL_EUSAGE;
    }
    return m->equal(e, r);
}

void exchange_model_equal_rounds(const struct exchange_model_equal *e, uint64_t rounds,
                                 uint64_t msgs, uint64_t bytes, uint64_t largest,
                                 struct exchange_model_result *r)
{
    uint64_t p = (uint64_t)e->p;
    r->rounds += rounds;
    r->startups += rounds * msgs;
    r->seconds += (double)rounds * (e->alpha * (double)msgs + e->beta * (double)bytes);
    r->bytes_moved += rounds * p * bytes;
    r->max_message = exchange_model_max(r->max_message, largest);
}

/* ---- pricing a walk ------------------------------------------------------------------------ */

void exchange_model_detail(struct exchange_model_result *r, const char *fmt, ...)
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

int exchange_model_async_init(struct exchange_model_async *a, int p)
{
    a->ready = util_calloc(2 * (size_t)p, sizeof(double));
    a->next = a->ready != NULL ? a->ready + p : NULL;
    return a->ready != NULL ? UTIL_OK : UTIL_ENOMEM;
}

/* A transfer between @x and @y taking @cost seconds in the current round. */
void exchange_model_async_xfer(struct exchange_model_async *a, int x, int y, double cost)
{
    double t = (a->ready[x] > a->ready[y] ? a->ready[x] : a->ready[y]) + cost;
    a->next[x] = t > a->next[x] ? t : a->next[x];
    a->next[y] = t > a->next[y] ? t : a->next[y];
}

/* Ends a round for ranks @x and @y (call for every transfer of the round, after them all). */
void exchange_model_async_commit(struct exchange_model_async *a, int x, int y)
{
    a->ready[x] = a->next[x];
    a->ready[y] = a->next[y];
}

void exchange_model_async_free(struct exchange_model_async *a)
{
    util_free(a->ready);
    a->ready = a->next = NULL;
}

double exchange_model_async_done(struct exchange_model_async *a, int p)
{
    double t = 0;
    for (int i = 0; i < p; i++) {
        t = a->ready[i] > t ? a->ready[i] : t;
    }
    util_free(a->ready);
    return t;
}

int exchange_model_rounds_init(struct exchange_model_rounds *w, const struct exchange_model_case *c,
                               struct exchange_model_result *r)
{
    memset(w, 0, sizeof(*w));
    w->c = c;
    w->r = r;
    r->steps = 0; /* each round adds its packet steps */
    w->sent = util_calloc(4 * (size_t)c->p, sizeof(uint64_t));
    if (w->sent == NULL || exchange_model_async_init(&w->async, c->p) != UTIL_OK) {
        util_free(w->sent);
        memset(w, 0, sizeof(*w));
        return util_fail(UTIL_ENOMEM, "out of memory (%s model, P = %d)", r->algo, c->p);
    }
    w->recv = w->sent + c->p;
    w->msgs = w->recv + c->p;
    w->total_msgs = w->msgs + c->p;
    return UTIL_OK;
}

/* One message of @b bytes from @src to @dst in the current round. */
void exchange_model_rounds_msg(struct exchange_model_rounds *w, int src, int dst, uint64_t b)
{
    w->sent[src] += b;
    w->recv[dst] += b;
    w->msgs[src]++;
    w->total_msgs[src]++;
    w->r->bytes_moved += b;
    w->r->max_message = exchange_model_max(w->r->max_message, b);
}

/* Closes the current round: prices it (busiest rank's start-ups and volume), resets it. */
void exchange_model_rounds_close(struct exchange_model_rounds *w)
{
    uint64_t vol = 0, starts = 0;
    for (int i = 0; i < w->c->p; i++) {
        vol = exchange_model_max(vol, exchange_model_max(w->sent[i], w->recv[i]));
        starts = exchange_model_max(starts, w->msgs[i]);
    }
    w->r->rounds += starts > 0; /* a round nobody sends in is skipped */
    w->r->seconds += w->c->alpha * (double)starts + w->c->beta * (double)vol;
    w->r->steps += (double)vol / (double)w->c->packet_bytes;
    memset(w->sent, 0, 3 * (size_t)w->c->p * sizeof(uint64_t));
}

void exchange_model_rounds_free(struct exchange_model_rounds *w)
{
    for (int i = 0; i < w->c->p; i++) {
        w->r->startups = exchange_model_max(w->r->startups, w->total_msgs[i]);
    }
    double async = exchange_model_async_done(&w->async, w->c->p);
    w->r->async_seconds = w->priced_async ? async : w->r->async_seconds;
    util_free(w->sent);
    memset(w, 0, sizeof(*w));
}

void exchange_model_rounds_discard(struct exchange_model_rounds *w)
{
    exchange_model_async_free(&w->async);
    util_free(w->sent);
    memset(w, 0, sizeof(*w));
}

void exchange_model_rounds_end(struct exchange_model_rounds *w, int err)
{
    if (err == UTIL_OK) {
        exchange_model_rounds_free(w);
    } else {
        exchange_model_rounds_discard(w);
    }
}

void exchange_model_detail_volume(struct exchange_model_result *r,
                                  const struct exchange_model_case *c)
{
    exchange_model_detail(r, "volume_factor=%.3f",
                          c->total_bytes ? (double)r->bytes_moved / (double)c->total_bytes : 0.0);
}

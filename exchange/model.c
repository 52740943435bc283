/*
 * exchange/model.c: what the back-ends' cost models share (see model.h and the model contract
 * in exchange.h): the instance with its derived figures, the run of one model, the two ways to
 * price a walk, by rounds and asynchronously, the critical path every walk also counts (the
 * busiest rank, or a node's work over its cores or its link, round by round; copies; rounds
 * that synchronise), and the machine's price of it (exchange/machine.h). The models themselves
 * live beside their runs, one per back-end file.
 */
#include "exchange/model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exchange/machine.h"
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

/* ---- the machine's price -------------------------------------------------------------------- */

/* The share of a node's buffers its last-level cache holds: @bytes of buffers on the node (the
 * ranks' send and receive buffers). 0 off one node: the links, not the caches, decide there. */
static double cache_share(const struct exchange_machine *m, double bytes)
{
    if (m == NULL || !m->shm || m->llc_bytes <= 0) {
        return 0;
    }
    return bytes <= m->llc_bytes ? 1.0 : m->llc_bytes / bytes;
}

/*
 * The machine's price of @r's critical path (exchange/machine.h): start-ups at @alpha, bytes at
 * @beta blended with the cache's rate by r->cache_share, copies likewise, synchronising rounds
 * at the machine's sync, each term times model @name's factor. @alpha and @beta are the case's
 * (a caller may have set other than the machine's); the cache's rates scale with them.
 */
static double machine_price(const struct exchange_machine *m, const char *name, int p, double alpha,
                            double beta, const struct exchange_model_result *r)
{
    if (m == NULL) {
        return NAN;
    }
    struct exchange_machine_factor f = exchange_machine_factor(m, name);
    double scale = m->beta > 0 ? beta / m->beta : 1.0, c = r->cache_share;
    double b = c * m->beta_cache * scale + (1 - c) * beta;
    double copy = c * m->copy_cache + (1 - c) * m->copy;
    /* A crowded node (more ranks than cores) synchronises by switching between its ranks. */
    int node = m->shm ? p : m->ranks_per_node;
    double sync = node > m->cores ? m->switch_s * node / m->cores : m->sync;
    return f.startup * alpha * (r->path_startups + r->path_rndv) + f.byte * b * r->path_bytes +
           f.copy * copy * r->copy_bytes + f.sync * sync * r->sync_rounds;
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
    r->predicted = NAN;
}

int exchange_model_run(const struct exchange_model *m, const struct exchange_model_case *c,
                       struct exchange_model_result *r)
{
    result_start(m, r);
    r->packet_bytes = c->packet_bytes;
    r->h = c->h;
    /* The node's buffers: every rank's send and receive buffer, own blocks included. */
    double all = 0;
    for (size_t k = 0; c->machine != NULL && k < (size_t)c->p * (size_t)c->p; k++) {
        all += (double)c->bytes[k];
    }
    r->cache_share = cache_share(c->machine, 2 * all);
    int err = m->run(c, r);
    if (err == UTIL_OK) {
        r->predicted = machine_price(c->machine, m->name, c->p, c->alpha, c->beta, r);
    }
    return err;
}

int exchange_model_run_equal(const struct exchange_model *m, const struct exchange_model_equal *e,
                             struct exchange_model_result *r)
{
    result_start(m, r);
    if (m->equal == NULL || e->p < 1) {
        return UTIL_EUSAGE;
    }
    r->cache_share = cache_share(e->machine, 2.0 * e->p * e->p * (double)e->block);
    int err = m->equal(e, r);
    if (err == UTIL_OK) {
        r->predicted = machine_price(e->machine, m->name, e->p, e->alpha, e->beta, r);
    }
    return err;
}

/* The sharing of @m (NULL: none) for @p ranks: cores the node's ranks share (one node), ranks a
 * node shares its link with (a network), the duplex share. */
static void machine_sharing(const struct exchange_machine *m, int p, int *shm, int *share,
                            int *per_node, double *duplex)
{
    *shm = m != NULL && m->shm;
    *share = *shm ? (p < m->cores ? p : m->cores) : 1;
    *share = *share > 0 ? *share : 1;
    *per_node = m != NULL && !m->shm && m->ranks_per_node > 1 ? m->ranks_per_node : 1;
    *per_node = *per_node < p ? *per_node : p;
    *duplex = m != NULL ? m->duplex : 0;
}

void exchange_model_equal_units(const struct exchange_model_equal *e, double rounds, double msgs,
                                double rndv, double bytes, double active,
                                struct exchange_model_result *r)
{
    int shm, share, per_node;
    double duplex;
    machine_sharing(e->machine, e->p, &shm, &share, &per_node, &duplex);
    double p = (double)e->p;
    /* Every busy rank alike: the busiest rank's, or the node's over its cores; a network node's
     * link carries its ranks' bytes to the others, as if spread evenly over them. */
    double node = shm ? fmax(1.0, active / share) : 1.0;
    double vol = fmax(bytes * (1 + duplex), shm ? bytes * node : 0);
    if (per_node > 1) {
        vol = fmax(vol, per_node * bytes * (p - per_node) / (p - 1) * (1 + duplex));
    }
    r->path_startups += rounds * msgs * node;
    r->path_rndv += rounds * rndv * node;
    r->path_bytes += rounds * vol;
    r->sync_rounds += rounds;
}

uint64_t exchange_model_equal_eager(const struct exchange_model_equal *e)
{
    return e->machine != NULL ? (uint64_t)e->machine->eager_bytes : 0;
}

void exchange_model_equal_rounds(const struct exchange_model_equal *e, uint64_t rounds,
                                 uint64_t msgs, uint64_t bytes, uint64_t largest,
                                 struct exchange_model_result *r)
{
    uint64_t eager = exchange_model_equal_eager(e);
    exchange_model_equal_rounds_rndv(e, rounds, msgs, eager > 0 && largest > eager ? msgs : 0,
                                     bytes, largest, r);
}

void exchange_model_equal_rounds_rndv(const struct exchange_model_equal *e, uint64_t rounds,
                                      uint64_t msgs, uint64_t rndv, uint64_t bytes,
                                      uint64_t largest, struct exchange_model_result *r)
{
    uint64_t p = (uint64_t)e->p;
    r->rounds += rounds;
    r->startups += rounds * msgs;
    r->seconds += (double)rounds * (e->alpha * (double)msgs + e->beta * (double)bytes);
    r->bytes_moved += rounds * p * bytes;
    r->max_message = exchange_model_max(r->max_message, largest);
    exchange_model_equal_units(e, (double)rounds, (double)msgs, (double)rndv, (double)bytes,
                               (double)e->p, r);
}

void exchange_model_equal_extras(const struct exchange_model_equal *e, uint64_t collectives,
                                 uint64_t count_bytes, uint64_t syncs, uint64_t copy,
                                 struct exchange_model_result *r)
{
    int shm, share, per_node;
    double duplex;
    machine_sharing(e->machine, e->p, &shm, &share, &per_node, &duplex);
    double p = (double)e->p;
    int cores = e->machine != NULL ? e->machine->cores : 1;
    double group = per_node < cores ? per_node : cores;
    double node = shm ? fmax(1.0, p / share) : fmax(1.0, per_node / (group > 0 ? group : 1));
    r->copy_bytes += (double)(e->block + copy) * node;
    if (collectives > 0) {
        uint64_t eager = exchange_model_equal_eager(e);
        exchange_model_equal_units(e, (double)collectives, p - 1,
                                   eager > 0 && count_bytes > eager ? p - 1 : 0,
                                   (p - 1) * (double)count_bytes, p, r);
    }
    r->sync_rounds += (double)syncs;
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
    machine_sharing(c->machine, c->p, &w->shm, &w->share, &w->per_node, &w->duplex);
    size_t p = (size_t)c->p, nodes = (p + (size_t)w->per_node - 1) / (size_t)w->per_node;
    w->sent = util_calloc(6 * p + 2 * nodes, sizeof(uint64_t));
    if (w->sent == NULL || exchange_model_async_init(&w->async, c->p) != UTIL_OK) {
        util_free(w->sent);
        memset(w, 0, sizeof(*w));
        return util_fail(UTIL_ENOMEM, "out of memory (%s model, P = %d)", r->algo, c->p);
    }
    w->recv = w->sent + p;
    w->msgs = w->recv + p;
    w->total_msgs = w->msgs + p;
    w->copy = w->total_msgs + p;
    w->rndv = w->copy + p;
    w->node_out = w->rndv + p;
    w->eager = c->machine != NULL ? (uint64_t)c->machine->eager_bytes : 0;
    w->node_in = w->node_out + nodes;
    /* Every back-end copies each rank's own block into place. */
    for (size_t i = 0; i < p; i++) {
        w->copy[i] = c->bytes[i * p + i];
    }
    return UTIL_OK;
}

/* One message of @b bytes from @src to @dst in the current round. */
void exchange_model_rounds_msg(struct exchange_model_rounds *w, int src, int dst, uint64_t b)
{
    w->sent[src] += b;
    w->recv[dst] += b;
    w->msgs[src]++;
    w->rndv[src] += w->eager > 0 && b > w->eager;
    if (w->per_node > 1 && src / w->per_node != dst / w->per_node) {
        w->node_out[src / w->per_node] += b;
        w->node_in[dst / w->per_node] += b;
    }
    if (w->units_only) {
        return;
    }
    w->total_msgs[src]++;
    w->r->bytes_moved += b;
    w->r->max_message = exchange_model_max(w->r->max_message, b);
}

/* Whether @p ranks on machine @m crowd a node (more ranks than cores). */
static int crowded(const struct exchange_machine *m, int p)
{
    return m != NULL && (m->shm ? p > m->cores : m->ranks_per_node > m->cores);
}

int exchange_model_posted(const struct exchange_model_case *c, uint64_t largest)
{
    return crowded(c->machine, c->p) || largest < EXCHANGE_POST_ALL_BELOW;
}

int exchange_model_equal_posted(const struct exchange_model_equal *e, uint64_t largest)
{
    return crowded(e->machine, e->p) || largest < EXCHANGE_POST_ALL_BELOW;
}

void exchange_model_rounds_copy(struct exchange_model_rounds *w, int rank, uint64_t b)
{
    w->copy[rank] += b;
}

void exchange_model_rounds_collective(struct exchange_model_rounds *w, uint64_t b)
{
    int p = w->c->p;
    w->units_only = 1;
    for (int i = 0; i < p; i++) {
        for (int j = 0; j < p; j++) {
            if (i != j) {
                exchange_model_rounds_msg(w, i, j, b);
            }
        }
    }
    if (p > 1) {
        exchange_model_rounds_close(w);
    }
    w->units_only = 0;
}

/* Closes the current round: prices it (busiest rank's start-ups and volume), resets it. */
void exchange_model_rounds_close(struct exchange_model_rounds *w)
{
    int p = w->c->p;
    uint64_t vol = 0, starts = 0;
    double link = 0, node_recv = 0, node_msgs = 0, rndv = 0, node_rndv = 0;
    for (int i = 0; i < p; i++) {
        rndv = fmax(rndv, (double)w->rndv[i]);
        node_rndv += (double)w->rndv[i];
        w->rndv[i] = 0;
        uint64_t hi = exchange_model_max(w->sent[i], w->recv[i]);
        uint64_t lo = w->sent[i] + w->recv[i] - hi;
        vol = exchange_model_max(vol, hi);
        starts = exchange_model_max(starts, w->msgs[i]);
        link = fmax(link, (double)hi + w->duplex * (double)lo);
        node_recv += (double)w->recv[i];
        node_msgs += (double)w->msgs[i];
    }
    /* The critical path: the busiest rank, or on one node all ranks' copies and start-ups over
     * the cores they share, or on a network the busiest node's link. */
    double path_s = (double)starts, path_b = link;
    if (w->shm) {
        rndv = fmax(rndv, node_rndv / w->share);
        path_s = fmax(path_s, node_msgs / w->share);
        path_b = fmax(path_b, node_recv / w->share);
    }
    size_t nodes = ((size_t)p + (size_t)w->per_node - 1) / (size_t)w->per_node;
    for (size_t k = 0; w->per_node > 1 && k < nodes; k++) {
        double hi = (double)exchange_model_max(w->node_out[k], w->node_in[k]);
        double lo = (double)(w->node_out[k] + w->node_in[k]) - hi;
        path_b = fmax(path_b, hi + w->duplex * lo);
    }
    w->r->path_startups += path_s;
    w->r->path_rndv += rndv;
    w->r->path_bytes += path_b;
    if (w->posted && !w->units_only) {
        w->posted_any |= starts > 0; /* one synchronisation for them all, at the end */
    } else {
        w->r->sync_rounds += starts > 0;
    }
    if (!w->units_only) {
        w->r->rounds += starts > 0; /* a round nobody sends in is skipped */
        w->r->seconds += w->c->alpha * (double)starts + w->c->beta * (double)vol;
        w->r->steps += (double)vol / (double)w->c->packet_bytes;
    }
    memset(w->sent, 0, 3 * (size_t)p * sizeof(uint64_t));
    if (w->per_node > 1) {
        memset(w->node_out, 0, 2 * nodes * sizeof(uint64_t));
    }
}

void exchange_model_rounds_free(struct exchange_model_rounds *w)
{
    int p = w->c->p;
    double copy = 0, node = 0, group = 0;
    int cores = w->c->machine != NULL ? w->c->machine->cores : 1;
    int group_share = w->per_node < cores ? w->per_node : cores;
    for (int i = 0; i < p; i++) {
        w->r->startups = exchange_model_max(w->r->startups, w->total_msgs[i]);
        copy = fmax(copy, (double)w->copy[i]);
        node += (double)w->copy[i];
        /* A network node's ranks share its cores too. */
        group += (double)w->copy[i];
        if ((i + 1) % w->per_node == 0 || i + 1 == p) {
            copy = fmax(copy, group / (group_share > 0 ? group_share : 1));
            group = 0;
        }
    }
    w->r->copy_bytes += w->shm ? fmax(copy, node / w->share) : copy;
    w->r->sync_rounds += w->posted_any;
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

/*
 * tests/unit/test_backends.c: exhaustive checks of the pure schedules in exchange/topo.h for
 * every P from 1 to 64: the 1-factor rounds and the shift rounds, the grid routing, and the
 * folded hypercube (simulated piece by piece); and the registry's contract that every back-end
 * describes itself completely: a name, a summary, a run and at least one cost model that prices
 * a matrix. Tests: factor, shift, grid, cube (each for P = 1..64), registry, equal. On the
 * harness of tests/unit/test.h: a violated rule is named with its P.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "exchange/machine.h"
#include "exchange/topo.h"
#include "tests/unit/test.h"

#define MAX_P 64

/* 1-factor: every pair meets exactly once, nobody twice in a round, odd P idles once each. */
static void factor(int p)
{
    static int met[MAX_P][MAX_P];
    int idle[MAX_P] = {0};
    memset(met, 0, sizeof(met));
    int rounds = topo_factor_rounds(p);
    expect_true(rounds == (p % 2 ? p : p - 1), "P=%d: %d rounds", p, rounds);
    for (int i = 0; i < rounds; i++) {
        for (int j = 0; j < p; j++) {
            int q = topo_factor_partner(i, j, p);
            expect_true(q >= 0 && q < p, "P=%d round %d: PE %d has partner %d", p, i, j, q);
            if (q < 0 || q >= p) {
                continue;
            }
            /* The partner relation of a round is an involution: nobody is busy twice. */
            expect_true(topo_factor_partner(i, q, p) == j, "P=%d round %d: %d -> %d -> %d", p, i, j,
                        q, topo_factor_partner(i, q, p));
            if (q == j) {
                idle[j]++;
            } else {
                met[j][q]++;
            }
        }
    }
    for (int j = 0; j < p; j++) {
        expect_true(idle[j] == (p % 2 ? 1 : 0), "P=%d: PE %d idles %d times", p, j, idle[j]);
        for (int q = 0; q < p; q++) {
            expect_true(q == j || met[j][q] == 1, "P=%d: PEs %d and %d meet %d times", p, j, q,
                        met[j][q]);
        }
    }
}

/* Shift: in round i the receive side is the inverse of the send side; every pair once. */
static void shift(int p)
{
    static int sent[MAX_P][MAX_P];
    memset(sent, 0, sizeof(sent));
    for (int i = 1; i < p; i++) {
        for (int r = 0; r < p; r++) {
            int to = topo_shift_to(i, r, p);
            expect_true(to != r && topo_shift_from(i, to, p) == r, "P=%d round %d: rank %d", p, i,
                        r);
            sent[r][to]++;
        }
    }
    for (int r = 0; r < p; r++) {
        for (int q = 0; q < p; q++) {
            expect_true(q == r || sent[r][q] == 1, "P=%d: %d sends to %d %d times", p, r, q,
                        sent[r][q]);
        }
    }
}

/* Grid: shape, a valid intermediate for every pair, phase-1 fan-out, contiguous sources. */
static void grid(int p)
{
    struct topo_grid g = topo_grid_shape(p);
    int c = g.cols;
    expect_true(g.rows >= 1 && g.rows <= c && (int64_t)g.rows * c >= p && (g.rows - 1) * c < p,
                "P=%d: grid %d x %d", p, g.rows, c);
    expect_true(g.last >= 1 && g.last <= c && (g.rows - 1) * c + g.last == p, "P=%d: last row %d",
                p, g.last);
    static int fanout[MAX_P][MAX_P];
    memset(fanout, 0, sizeof(fanout));
    for (int s = 0; s < p; s++) {
        for (int d = 0; d < p; d++) {
            int m = topo_grid_via(&g, s, d);
            expect_true(m >= 0 && m < p, "P=%d: via(%d, %d) = %d", p, s, d, m);
            if (m < 0 || m >= p) {
                continue;
            }
            fanout[s][m] = 1;
            /* Phase 2 stays within d's column. */
            expect_true(m % c == d % c, "P=%d: via(%d, %d) = %d leaves the column", p, s, d, m);
            /* Phase 1 stays within s's row, except a last-row rank reaching a missing column. */
            int same_row = m / c == s / c;
            int detour = s / c == g.rows - 1 && m / c == g.rows - 2 && d % c >= g.last;
            expect_true(same_row || detour, "P=%d: via(%d, %d) = %d leaves the row", p, s, d, m);
            /* The sources routed through m are exactly topo_grid_sources(m). */
            int lo, hi;
            topo_grid_sources(&g, m, &lo, &hi);
            expect_true(s >= lo && s < hi, "P=%d: %d routed via %d outside [%d, %d)", p, s, m, lo,
                        hi);
        }
    }
    for (int m = 0; m < p; m++) {
        int lo, hi;
        topo_grid_sources(&g, m, &lo, &hi);
        for (int s = lo; s < hi; s++) {
            expect_true(topo_grid_via(&g, s, m) == m, "P=%d: source %d of %d goes elsewhere", p, s,
                        m);
        }
    }
    /* Every rank starts cols - 1 phase-1 messages and at most rows - 1 phase-2 messages. */
    for (int s = 0; s < p; s++) {
        int n = 0;
        for (int m = 0; m < p; m++) {
            n += m != s && fanout[s][m];
        }
        expect_true(n == c - 1, "P=%d: rank %d has %d phase-1 partners, not %d", p, s, n, c - 1);
        expect_true(topo_grid_col_size(&g, s % c) - 1 <= g.rows - 1, "P=%d: column of %d", p, s);
    }
    /* Each destination's column peers, in row order, deliver [0, p) in order, once each. */
    for (int d = 0; d < p; d++) {
        int j = d % c, next = 0;
        for (int row = 0; row < topo_grid_col_size(&g, j); row++) {
            int lo, hi;
            topo_grid_sources(&g, row * c + j, &lo, &hi);
            expect_true(lo == next && hi > lo, "P=%d: column %d row %d covers [%d, %d) after %d", p,
                        j, row, lo, hi, next);
            next = hi;
        }
        expect_true(next == p, "P=%d: column %d covers [0, %d)", p, j, next);
    }
}

/* Hypercube: simulate every piece through the fold, the cube rounds and the unfold. */
static void cube(int p)
{
    static int at[MAX_P][MAX_P]; /* at[s][d]: the rank holding piece (s, d) */
    int dim = topo_cube_dim(p), q = 1 << dim;
    expect_true(q <= p && 2 * q > p, "P=%d: Q = %d", p, q);
    for (int s = 0; s < p; s++) {
        for (int d = 0; d < p; d++) {
            at[s][d] = topo_cube_node(s, q); /* the fold: extras hand everything to their node */
        }
    }
    for (int k = 0; k <= dim; k++) {
        /* The invariant before round k (and after the last one, k == dim). */
        for (int s = 0; s < p; s++) {
            for (int d = 0; d < p; d++) {
                int x = at[s][d];
                expect_true(x < q && topo_cube_holds_src(s, x, k, q) &&
                                topo_cube_holds_dst(d, x, k, q),
                            "P=%d before round %d: piece (%d, %d) at %d", p, k, s, d, x);
            }
        }
        if (k == dim) {
            break;
        }
        /* Round k: move the pieces whose destination node differs in bit k to the partner. */
        for (int s = 0; s < p; s++) {
            for (int d = 0; d < p; d++) {
                int x = at[s][d];
                if (((topo_cube_node(d, q) ^ x) >> k) & 1) {
                    at[s][d] = x ^ (1 << k);
                    expect_true(!topo_cube_holds_dst(d, x, k + 1, q), "P=%d round %d", p, k);
                }
            }
        }
    }
    /* After the cube rounds each node holds its members' pieces: the unfold finishes. */
    for (int s = 0; s < p; s++) {
        for (int d = 0; d < p; d++) {
            expect_true(at[s][d] == topo_cube_node(d, q), "P=%d: piece (%d, %d) ends at %d", p, s,
                        d, at[s][d]);
        }
    }
}

/*
 * The registry: every back-end has a name, a summary, a run and at least one model; every model
 * is named after its back-end (NAME or NAME-VARIANT), unique, says its port model, and prices a
 * small irregular matrix of elements of 1, 8, 13 and 100 bytes at P = 1, 5 and 8 without error
 * and with a positive time whenever bytes cross between ranks; a model with packets cuts them
 * in whole elements, five at least (no piece of a packet splits an element).
 */
static void test_registry(void)
{
    const struct exchange_ops *const *all = exchange_list();
    const char *seen[64];
    int nseen = 0;
    expect_true(all != NULL && all[0] != NULL, "empty registry");
    for (size_t i = 0; all != NULL && all[i] != NULL; i++) {
        const struct exchange_ops *b = all[i];
        expect_true(b->name != NULL && b->summary != NULL && b->run != NULL,
                    "back-end %zu: incomplete", i);
        expect_true(exchange_find(b->name) == b, "%s: not found under its name", b->name);
        expect_true(b->models != NULL && b->models[0] != NULL, "%s: has no cost model", b->name);
        for (size_t k = 0; b->models != NULL && b->models[k] != NULL; k++) {
            const struct exchange_model *m = b->models[k];
            size_t len = strlen(b->name);
            expect_true(m->name != NULL && m->summary != NULL && m->run != NULL &&
                            (strcmp(m->duplex, "half") == 0 || strcmp(m->duplex, "full") == 0),
                        "%s: model %zu incomplete", b->name, k);
            expect_true(strncmp(m->name, b->name, len) == 0 &&
                            (m->name[len] == '\0' || m->name[len] == '-'),
                        "%s: model %s not named after it", b->name, m->name);
            for (int j = 0; j < nseen; j++) {
                expect_true(strcmp(seen[j], m->name) != 0, "model %s twice", m->name);
            }
            seen[nseen < 64 ? nseen++ : 63] = m->name;
            static const uint64_t elems[] = {1, 8, 13, 100};
            for (int p = 1; p <= 8; p += p == 1 ? 4 : 3) {
                for (size_t z = 0; z < sizeof(elems) / sizeof(*elems); z++) {
                    uint64_t bytes[64], e = elems[z];
                    for (int x = 0; x < p * p; x++) {
                        bytes[x] = e * (uint64_t)((x * 7919 + 13) % 23) * 1000;
                    }
                    struct exchange_model_case c;
                    struct exchange_model_result r;
                    expect_true(exchange_model_case_init(&c, p, bytes, e, 0) == 0, "case init P=%d",
                                p);
                    c.alpha = 1e-6;
                    c.beta = 1e-9;
                    c.validate = 1;
                    expect_true(exchange_model_run(m, &c, &r) == 0,
                                "%s: model failed at P=%d e=%llu", m->name, p,
                                (unsigned long long)e);
                    expect_true(strcmp(r.algo, m->name) == 0, "%s: result named %s", m->name,
                                r.algo);
                    expect_true(p == 1 || r.seconds > 0, "%s: no time at P=%d", m->name, p);
                    expect_true(p == 1 || r.bytes_moved >= c.total_bytes,
                                "%s: moves too little at P=%d e=%llu", m->name, p,
                                (unsigned long long)e);
                    expect_true(m->target_h == 0 || r.packet_bytes % (5 * e) == 0,
                                "%s: packets of %llu bytes split %llu-byte elements", m->name,
                                (unsigned long long)r.packet_bytes, (unsigned long long)e);
                    exchange_model_case_free(&c);
                }
            }
        }
    }
}

/*
 * The equal-blocks forms against the walks they stand for: for every model that has one, on
 * bucket matrices (every pair the same block) at P = 2..66 and blocks from empty to scattered
 * bundles, the same rounds, start-ups, bytes on the links, largest message and time, wherever
 * the form claims to cover P.
 */
/* The machines the equal-blocks forms are checked on: none (the closed form), the built-in one
 * node, and a network of one rank a node on half-duplex links (with several ranks a node the
 * equal forms spread a node's bytes evenly over the others, which a walk need not). */
static const struct exchange_machine *test_machine(int k)
{
    static struct exchange_machine shm, net;
    exchange_machine_default(&shm);
    exchange_machine_default(&net);
    net.shm = 0;
    net.ranks_per_node = 1;
    net.duplex = 1;
    net.eager_bytes = 65536;
    return k == 0 ? NULL : k == 1 ? &shm : &net;
}

/* Relative difference of @a and @b (0 when both are 0). */
static double rel(double a, double b)
{
    return a == b ? 0 : fabs(a - b) / fmax(fabs(a), fabs(b));
}

static void test_equal(void)
{
    static const uint64_t blocks[] = {0, 8, 1000, 40000, 70000, 1 << 20};
    uint64_t *bytes = malloc(66 * 66 * sizeof(uint64_t));
    int covered = 0;
    for (size_t i = 0; exchange_list()[i] != NULL; i++) {
        const struct exchange_model *m = exchange_list()[i]->models[0];
        for (int p = 2; p <= 66 && m->equal != NULL; p += p < 10 ? 1 : 7) {
            for (size_t z = 0; z < 3 * sizeof(blocks) / sizeof(*blocks); z++) {
                const struct exchange_machine *mach = test_machine((int)(z % 3));
                struct exchange_model_equal e = {p, blocks[z / 3], 8, 1e-6, 1e-9, mach, (int)z % 2};
                struct exchange_model_result eq, walk;
                if (exchange_model_run_equal(m, &e, &eq) != 0) {
                    continue; /* not covered: the walk prices it */
                }
                covered++;
                for (int x = 0; x < p * p; x++) {
                    bytes[x] = blocks[z / 3];
                }
                struct exchange_model_case c;
                expect_true(exchange_model_case_init(&c, p, bytes, 8, 0) == 0, "case init P=%d", p);
                c.alpha = e.alpha;
                c.beta = e.beta;
                c.machine = e.machine;
                c.counts_known = e.counts_known;
                expect_true(exchange_model_run(m, &c, &walk) == 0, "%s: walk failed", m->name);
                /* The critical path, and the machine's price of it, as the walk finds them. */
                expect_true(rel(eq.path_startups + eq.path_rndv, walk.path_startups + walk.path_rndv) <
                              1e-9 &&
                          rel(eq.path_bytes, walk.path_bytes) < 1e-9 &&
                          rel(eq.copy_bytes, walk.copy_bytes) < 1e-9 &&
                          rel(eq.sync_rounds, walk.sync_rounds) < 1e-9 &&
                          (mach == NULL ? isnan(eq.predicted) && isnan(walk.predicted)
                                        : rel(eq.predicted, walk.predicted) < 1e-9),
                      "%s: equal form's critical path differs at P=%d block=%llu machine %d "
                      "counts %d: start-ups %g/%g bytes %g/%g copies %g/%g syncs %g/%g "
                      "predicted %g/%g",
                      m->name, p, (unsigned long long)blocks[z / 3], (int)(z % 3), c.counts_known,
                      eq.path_startups + eq.path_rndv, walk.path_startups + walk.path_rndv,
                      eq.path_bytes, walk.path_bytes, eq.copy_bytes, walk.copy_bytes,
                      eq.sync_rounds, walk.sync_rounds, eq.predicted, walk.predicted);
                expect_true(eq.rounds == walk.rounds && eq.startups == walk.startups &&
                          eq.bytes_moved == walk.bytes_moved && eq.max_message == walk.max_message &&
                          fabs(eq.seconds - walk.seconds) <= 1e-9 * walk.seconds,
                      "%s: equal form differs at P=%d block=%llu: rounds %llu/%llu startups "
                      "%llu/%llu bytes %llu/%llu largest %llu/%llu seconds %g/%g",
                      m->name, p, (unsigned long long)blocks[z / 3], (unsigned long long)eq.rounds,
                      (unsigned long long)walk.rounds, (unsigned long long)eq.startups,
                      (unsigned long long)walk.startups, (unsigned long long)eq.bytes_moved,
                      (unsigned long long)walk.bytes_moved, (unsigned long long)eq.max_message,
                      (unsigned long long)walk.max_message, eq.seconds, walk.seconds);
                exchange_model_case_free(&c);
            }
        }
    }
    expect_true(covered > 100, "only %d equal-blocks cases covered", covered);
    free(bytes);
}

/* Runs @check for every P from 1 to MAX_P. */
static void every_p(void (*check)(int))
{
    for (int p = 1; p <= MAX_P; p++) {
        check(p);
    }
}

static void test_factor(void)
{
    every_p(factor);
}

static void test_shift(void)
{
    every_p(shift);
}

static void test_grid(void)
{
    every_p(grid);
}

static void test_cube(void)
{
    every_p(cube);
}

int main(int argc, char **argv)
{
    static const struct test tests[] = {
        TEST(factor), TEST(shift), TEST(grid), TEST(cube), TEST(registry), TEST(equal), TEST_END,
    };
    return test_main(argc, argv, tests);
}

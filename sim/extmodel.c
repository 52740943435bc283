/*
 * sim/extmodel.c: the external sort modelled without data (see sim/sortmodel.h, sort/ext.c).
 *
 * The plan is the sort's own (sort/ext.c, plan()): pass 2 holds four bucket buffers and the
 * records' tuples, so a bucket may hold B = 0.85 M / (4 R + tuples) elements; buckets aim at
 * 0.6 B; pass 1 reads chunks of M / 12. The time of each pass is the slower of its I/O (the
 * rank's bytes read plus written at the machine's file rates: one device takes both) and its
 * work (classifying by binary search over the P q splitters, grouping by a copy, the exchange
 * by the back-end's equal-blocks model once a round, and in pass 2 the local sort of each
 * bucket), which the I/O threads overlap, plus one chunk or bucket that cannot overlap. The
 * sample: 128 random reads a bucket, their all-gather and sort. Bytes: every byte of the input
 * is read and written once a pass; temporary space is the input once.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "local/local.h"
#include "sim/sortmodel.h"
#include "util/util.h"

/* As sort/ext.c plans them. */
#define EXT_PASS2_SHARE 0.85
#define EXT_FILL 0.6
#define EXT_CHUNK_DIV 12
#define EXT_SAMPLES 128

const char *sim_ext_row_name(enum sim_ext_row r)
{
    static const char *const names[SIM_EXT_ROW_COUNT] = {"sample", "distribute", "sort_buckets",
                                                         "total"};
    return (unsigned)r < SIM_EXT_ROW_COUNT ? names[r] : "?";
}

static void put(struct sim_phase *ph, double secs, double bytes, double net, const char *note)
{
    ph->seconds = secs;
    ph->rank_bytes = bytes > 0 ? (uint64_t)bytes : 0;
    ph->net_bytes = net > 0 ? (uint64_t)net : 0;
    (void)snprintf(ph->note, sizeof(ph->note), "%s", note);
}

/* The in-memory need of a rank, as the sort computes it (sort/job.c, sort_memory_need()):
 * two buffers of the output bound ((1 + eps) n / P, the selection's), the records' tuples. */
static double memory_need(const struct sim_sort_case *sc, double tuple_bytes)
{
    double room = ceil((1.0 + sc->epsilon) * (double)sc->per_rank) + 1;
    return 2 * room * (double)sc->elem + room * tuple_bytes;
}

/* One round of pass 1's exchange: every rank sends chunk / P elements to every other, priced by
 * the back-end's equal-blocks model (the alltoallv's when the back-end has none). */
static double round_exchange(const struct sim_sort_case *sc, const struct sim_machine *m,
                             double chunk)
{
    if (sc->p < 2) {
        return 0;
    }
    int extrapolated;
    struct exchange_machine ex = sim_exchange_machine(sc, m, &extrapolated);
    struct exchange_model_equal e = {.p = sc->p,
                                     .block = (uint64_t)(chunk * (double)sc->elem / sc->p),
                                     .elem_bytes = sc->elem,
                                     .alpha = m->alpha,
                                     .beta = m->beta,
                                     .machine = &ex,
                                     .counts_known = 1};
    struct exchange_model_result r;
    const struct exchange_ops *b = sc->backend;
    for (int i = 0; b != NULL && b->models[i] != NULL; i++) {
        if (b->models[i]->equal != NULL &&
            exchange_model_run_equal(b->models[i], &e, &r) == UTIL_OK) {
            return isfinite(r.predicted) ? r.predicted : r.seconds;
        }
    }
    /* No closed form: the alpha-beta of one all-to-all of the round's bytes. */
    return m->alpha * (sc->p - 1) + m->beta * (double)e.block * (sc->p - 1);
}

int sim_ext_model(const struct sim_sort_case *sc, const struct sim_machine *m, uint64_t mem,
                  int force, struct sim_ext_result *out)
{
    memset(out, 0, sizeof(*out));
    const double N = (double)sc->per_rank, R = (double)sc->elem, p = sc->p;
    /* Records take a 16-byte tuple a record in the local sort (32 under 16 bytes). */
    double tuple_bytes = sc->elem != 8 ? (sc->elem < 16 ? 32.0 : 16.0) : 0.0;
    double need = memory_need(sc, tuple_bytes);
    out->need = (uint64_t)need;
    out->external = force || (mem > 0 && need > (double)mem);
    if (!out->external) {
        return UTIL_OK;
    }
    double bmax = floor(EXT_PASS2_SHARE * (double)mem / (4 * R + tuple_bytes));
    if (bmax < 16) {
        return util_error("a memory of %llu bytes cannot hold the buffers of an external sort "
                          "of %llu-byte records", (unsigned long long)mem,
                          (unsigned long long)sc->elem);
    }
    double q = fmax(1, ceil(N / (EXT_FILL * bmax)));
    double nb = p * q, chunk = fmax(1, floor((double)mem / EXT_CHUNK_DIV / R));
    double rounds = ceil(N / chunk);
    double share = fmax(1.0, (double)sc->ranks_per_node * sc->threads / m->cores);
    out->buckets = (uint64_t)nb;
    out->rounds = (uint64_t)rounds;
    out->bucket_elems = (uint64_t)bmax;
    out->temp_bytes = (uint64_t)(N * R * p);
    for (int pass = 0; pass < 2; pass++) {
        out->io_bytes[pass][0] = out->io_bytes[pass][1] = (uint64_t)(N * R * p);
    }
    char note[96];
    struct sim_phase *ph = out->phase;

    /* The sample: random reads of one element each, then one all-gather and a sort of all. */
    double k = EXT_SAMPLES * q, t = EXT_SAMPLES * nb, blob = 16 + ceil(R / 8) * 8;
    double sample = k * (2e-6 + R / m->read_bps) + m->alpha * 2 * ceil(log2(fmax(p, 2))) +
                    m->beta * blob * t + 1e-9 * m->qsort_ns * t * log2(fmax(t, 2));
    (void)snprintf(note, sizeof(note), "%.0f samples, %.0f buckets", t, nb);
    put(&ph[SIM_EXT_SAMPLE], sample, blob * t, blob * k, note);

    /* Pass 1: I/O (the slice read, the buckets written) against the work, overlapped. */
    double io1 = N * R / m->read_bps + N * R / m->write_bps;
    double classify = 1e-9 * m->probe_ns / 4 * N * ceil(log2(fmax(nb, 2)));
    double work1 = (classify + 2 * N * R / m->copy_bps) * share +
                   rounds * round_exchange(sc, m, chunk);
    (void)snprintf(note, sizeof(note), "%.0f rounds of %.3g elements; %s", rounds, chunk,
                   io1 > work1 ? "I/O-bound" : "work-bound");
    put(&ph[SIM_EXT_DISTRIBUTE], fmax(io1, work1) + chunk * R / m->read_bps, (double)mem,
        N * R * (p - 1) / p, note);

    /* Pass 2: the buckets read back and written out against their sorts, overlapped. */
    double bucket = N / q;
    double io2 = N * R / m->read_bps + N * R / m->write_bps;
    double work2 = q * sim_local_sort_seconds(m, bucket, sc->threads) * fmax(1, R / 8) * share;
    (void)snprintf(note, sizeof(note), "%.0f buckets of %.3g elements a rank; %s", q, bucket,
                   io2 > work2 ? "I/O-bound" : "work-bound");
    put(&ph[SIM_EXT_SORT], fmax(io2, work2) + bucket * R / m->read_bps, (double)mem, 0, note);

    struct sim_phase *tot = &ph[SIM_EXT_TOTAL];
    for (int r = 0; r < SIM_EXT_TOTAL; r++) {
        tot->seconds += ph[r].seconds;
        tot->rank_bytes = ph[r].rank_bytes > tot->rank_bytes ? ph[r].rank_bytes : tot->rank_bytes;
        tot->net_bytes += ph[r].net_bytes;
    }
    (void)snprintf(tot->note, sizeof(tot->note), "two passes, temporary %.3g bytes",
                   (double)out->temp_bytes);
    return UTIL_OK;
}

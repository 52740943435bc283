/*
 * sort/exchange.c: phase 6, bucket j goes to rank j through the chosen exchange back-end.
 *
 * One rank has one bucket, already sorted where the result belongs: no back-end runs and
 * nothing is copied (finish then has nothing to do either). Every back-end still handles P = 1
 * itself; the exchange benchmark's tests run them all at one rank. After the exchange the
 * back-ends' kept scratch (exchange_release_scratch()) is freed: the sort exchanges once (once
 * a level, with levels).
 *
 * The back-end reports into the exchange module's struct exchange_stats, and the sort copies
 * that into its public struct sortex_exchange_stats: the contract between sort/ and exchange/
 * may change without changing the library's interface.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "exchange/machine.h"
#include "sort/internal.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

/* --exchange auto sees the whole count matrix up to this P (P^2 counts gathered: 512 KiB at 256
 * ranks); beyond, the outer product of the row and column sums stands for it. */
#define AUTO_FULL_P 256
/* ... and prices the back-ends up to this P (the scheduled back-ends' models build their
 * schedules, O(P^2) and more); beyond, the default runs. */
#define AUTO_MAX_P 1024

/*
 * The non-empty counts of every rank's row, into the p x p matrix @m on rank 0 (zeroed there):
 * each rank sends its (destination, count) pairs, so rank 0 takes in as many words as the
 * matrix has non-empty cells, about 2 k a rank at a level that is not the last. Collective.
 * Returns 0 or UTIL_ENOMEM (agreed before the gather).
 */
static int gather_sparse(struct sort_job *job, uint64_t *m)
{
    int p = job->size, n = 0, err = UTIL_OK;
    for (int d = 0; d < p; d++) {
        n += job->send_counts[d] > 0;
    }
    uint64_t *mine = util_malloc(2 * (size_t)(n ? n : 1) * sizeof(uint64_t));
    int *counts = job->rank == 0 ? util_malloc(2 * (size_t)p * sizeof(int)) : NULL;
    uint64_t total = 0, *all = NULL;
    int ok = mine != NULL && (job->rank != 0 || counts != NULL);
    int words = 2 * n;
    MPI_Gather(&words, 1, MPI_INT, counts, 1, MPI_INT, 0, job->comm);
    for (int r = 0; job->rank == 0 && ok && r < p; r++) {
        counts[p + r] = (int)total;
        total += (uint64_t)counts[r];
    }
    if (job->rank == 0 && ok && total <= INT_MAX) {
        all = util_malloc((total ? total : 1) * sizeof(uint64_t));
    }
    ok = ok && (job->rank != 0 || all != NULL);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        err = util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory for the cost model",
                        job->rank);
        goto done;
    }
    for (int d = 0, i = 0; d < p; d++) {
        if (job->send_counts[d] > 0) {
            mine[i++] = (uint64_t)d;
            mine[i++] = job->send_counts[d];
        }
    }
    MPI_Gatherv(mine, words, MPI_UINT64_T, all, counts, counts != NULL ? counts + p : NULL,
                MPI_UINT64_T, 0, job->comm);
    for (int r = 0; job->rank == 0 && r < p; r++) {
        for (int i = counts[p + r]; i < counts[p + r] + counts[r]; i += 2) {
            m[(size_t)r * p + all[i]] = all[i + 1];
        }
    }
done:
    util_free(mine);
    util_free(counts);
    util_free(all);
    return err;
}

/*
 * The count matrix in bytes, on rank 0 (*@bytes, NULL elsewhere; util_free), for the back-ends'
 * cost models: up to AUTO_FULL_P ranks the rows are gathered; beyond, at a level of a
 * multi-level sort that is not the last, the rows' non-empty counts (gather_sparse()), else
 * each rank's bytes sent and received, and the matrix is their outer product over the total
 * (the skew between ranks survives, the pattern inside a row does not). Collective. Returns 0
 * or UTIL_ENOMEM.
 */
static int gather_matrix(struct sort_job *job, uint64_t **bytes)
{
    int p = job->size, err = UTIL_OK;
    size_t cells = (size_t)p * (size_t)p;
    uint64_t *m = job->rank == 0 ? util_malloc(cells * sizeof(uint64_t)) : NULL;
    uint64_t *sums = util_malloc(2 * (size_t)p * sizeof(uint64_t));
    int ok = sums != NULL && (job->rank != 0 || m != NULL);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        err = util_fail(UTIL_ENOMEM, "rank %d: exchange: out of memory for the cost model",
                        job->rank);
        goto done;
    }
    int sparse = p > AUTO_FULL_P && job->level != NULL && !job->level->last;
    if (p <= AUTO_FULL_P) {
        MPI_Gather(job->send_counts, p, MPI_UINT64_T, m, p, MPI_UINT64_T, 0, job->comm);
    } else if (sparse) {
        if (m != NULL) {
            memset(m, 0, cells * sizeof(uint64_t));
        }
        if ((err = gather_sparse(job, m)) != UTIL_OK) {
            goto done;
        }
    } else {
        uint64_t mine[2] = {0, 0};
        for (int r = 0; r < p; r++) {
            mine[0] += job->send_counts[r];
            mine[1] += job->recv_counts[r];
        }
        MPI_Gather(mine, 2, MPI_UINT64_T, sums, 2, MPI_UINT64_T, 0, job->comm);
    }
    if (job->rank == 0) {
        long double total = 0;
        for (int r = 0; p > AUTO_FULL_P && !sparse && r < p; r++) {
            total += sums[2 * r];
        }
        for (int i = 0; p > AUTO_FULL_P && !sparse && i < p; i++) {
            for (int j = 0; j < p; j++) {
                long double c = total > 0 ? sums[2 * i] * (long double)sums[2 * j + 1] / total : 0;
                m[(size_t)i * p + j] = (uint64_t)c;
            }
        }
        for (size_t c = 0; c < cells; c++) {
            m[c] *= job->rsize;
        }
    }
    *bytes = m;
    m = NULL;
done:
    util_free(m);
    util_free(sums);
    return err;
}

/* Seconds back-end @b's first model predicts for the case @mc on its machine (NAN when it
 * cannot tell). */
static double price(const struct exchange_model_case *mc, const struct exchange_ops *b)
{
    struct exchange_model_result r;
    if (exchange_model_run(b->models[0], mc, &r) != UTIL_OK) {
        return NAN;
    }
    return r.predicted;
}

/*
 * Prices this sort's exchange on rank 0 with the back-ends' cost models (exchange/exchange.h):
 * with @all every registered back-end, and *@pick names the cheapest (ties keep the first,
 * the default); else job->exchange alone. *@seconds gets the price (NAN when none could be
 * had). Beyond AUTO_MAX_P ranks nothing is priced. Collective; the results hold on rank 0.
 */
static int predict(struct sort_job *job, int all, int *pick, double *seconds)
{
    const struct exchange_ops *const *list = exchange_list();
    uint64_t *bytes = NULL;
    *pick = 0;
    *seconds = NAN;
    if (job->size > AUTO_MAX_P || job->size < 2) {
        return UTIL_OK;
    }
    int err = gather_matrix(job, &bytes);
    if (err != UTIL_OK || job->rank != 0) {
        return err;
    }
    struct exchange_model_case mc;
    struct exchange_machine machine;
    memset(&mc, 0, sizeof(mc));
    /* The machine file (SORTEX_MACHINE, else the user's, else the built-in constants, which
     * -v and --stats then name); one that cannot be read leaves the built-in constants, with
     * a warning: pricing only picks a back-end, and any of them sorts correctly. */
    if (exchange_machine_load_quiet(&machine, NULL) != UTIL_OK) {
        util_warn("the machine file %s cannot be read or is malformed (sortex-sched --machine %s "
                  "says where): the exchange is priced with built-in constants",
                  machine.path, machine.path);
    }
    if (exchange_model_case_init(&mc, job->size, bytes, job->rsize, 0) ==
        UTIL_OK) {
        mc.machine = &machine;
        mc.counts_known = 1; /* the bucket phase's all-to-all gave them */
        mc.alpha = util_knob(UTIL_KNOB_MODEL_ALPHA)->valid
                       ? 1e-9 * (double)util_knob_u64(UTIL_KNOB_MODEL_ALPHA)
                       : machine.alpha;
        mc.beta = util_knob(UTIL_KNOB_MODEL_BETA)->valid
                      ? 1e-12 * (double)util_knob_u64(UTIL_KNOB_MODEL_BETA)
                      : machine.beta;
        for (int b = 0; all && list[b] != NULL; b++) {
            double t = price(&mc, list[b]);
            if (!isnan(t) && (isnan(*seconds) || t < *seconds)) {
                *seconds = t;
                *pick = b;
            }
        }
        if (!all) {
            *seconds = price(&mc, job->exchange);
        }
    }
    exchange_model_case_free(&mc);
    util_free(bytes);
    return UTIL_OK;
}

/*
 * --exchange auto: every registered back-end's first cost model prices this sort's exchange
 * (predict()), and the cheapest runs; rank 0 broadcasts its choice, so every rank runs the same
 * back-end; beyond AUTO_MAX_P ranks the default runs (sparse at a level that is not the
 * last). With levels, each level's group prices its own exchange on its communicator and
 * *@predicted adds up over the levels in the stats. The machine is rank 0's machine file
 * (exchange_machine_load(): SORTEX_MACHINE, else ~/.config/sortex/machine.txt, else built-in
 * constants), which sortex-sched --calibrate writes; SORTEX_MODEL_ALPHA and SORTEX_MODEL_BETA
 * override its alpha and beta.
 */
static int pick_auto(struct sort_job *job, double *predicted)
{
    int pick = 0;
    double best = NAN;
    int err = predict(job, 1, &pick, &best);
    if (isnan(best) && job->level != NULL && !job->level->last) {
        /* Unpriced (beyond AUTO_MAX_P), a level that is not the last still has a sparse
         * matrix by construction, a rank sending to about 2k of its group's ranks: the
         * back-end of the non-empty pieces, where every other costs a start-up a rank. */
        const struct exchange_ops *const *list = exchange_list();
        for (int b = 0; list[b] != NULL; b++) {
            pick = strcmp(list[b]->name, "sparse") == 0 ? b : pick;
        }
    }
    MPI_Bcast(&pick, 1, MPI_INT, 0, job->comm);
    MPI_Bcast(&best, 1, MPI_DOUBLE, 0, job->comm);
    job->exchange = exchange_list()[pick];
    *predicted = isnan(best) ? 0 : best;
    job->stats->exchange_predicted += *predicted; /* every level's, with levels */
    return err;
}

/* The public copy of what the back-end reported, added to what earlier levels' exchanges did
 * (volumes, messages, rounds and time add up; the largest message and the back-end's own
 * figures are the largest of any level's, the figures named as the last back-end names them). */
static void report(struct sortex_exchange_stats *out, const struct exchange_stats *in)
{
    out->bytes_sent += in->bytes_sent;
    out->bytes_recv += in->bytes_recv;
    out->messages += in->messages;
    out->rounds += in->rounds;
    out->max_message = in->max_message > out->max_message ? in->max_message : out->max_message;
    out->seconds += in->seconds;
    int had = out->nextra;
    for (int i = 0; i < in->nextra && i < SORTEX_EXCHANGE_MAX_EXTRA; i++) {
        double v = in->extra[i].value;
        int same = i < had && out->extra[i].name != NULL &&
                   strcmp(out->extra[i].name, in->extra[i].name) == 0;
        out->extra[i].name = in->extra[i].name;
        out->extra[i].value = same && out->extra[i].value > v ? out->extra[i].value : v;
    }
    out->nextra = in->nextra < SORTEX_EXCHANGE_MAX_EXTRA ? in->nextra : SORTEX_EXCHANGE_MAX_EXTRA;
    out->nextra = out->nextra > had ? out->nextra : had;
}

int sort_exchange(struct sort_job *job)
{
    struct exchange_stats st;
    memset(&st, 0, sizeof(st));
    if (job->cfg->exchange_auto) {
        double predicted = 0;
        int err = pick_auto(job, &predicted);
        if (err != UTIL_OK) {
            return err;
        }
        sort_progress_measure(job, 0, "bytes", predicted);
    } else if (job->cfg->progress) {
        /* --progress cannot count inside a back-end: its model's time is the estimate. */
        int pick;
        double t = NAN;
        int err = predict(job, 0, &pick, &t);
        if (err != UTIL_OK) {
            return err;
        }
        sort_progress_measure(job, 0, "bytes", isnan(t) ? 0 : t);
    }
    sort_stall_at(job, "exchange-run"); /* the tests' slow exchange, after its estimate */
    job->stats->exchange_name = job->exchange->name;
    if (job->size == 1) {
        report(&job->stats->exchange, &st);
        return 0;
    }
    /* Elements are whole records, R bytes each: the back-ends move them as they are, counts
     * and capacity in records. */
    struct exchange_args args = {
        .comm = job->comm,
        .threads = job->threads,
        .elem_size = job->rsize,
        .send = job->a,
        .send_counts = job->send_counts,
        .recv = job->b,
        .recv_cap = job->cap_b,
        .recv_counts = job->recv_counts, /* the bucket phase's all-to-all filled them */
        .stats = &st,
        .recv_counts_known = 1,
    };
    int err = job->exchange->run(&args);
    report(&job->stats->exchange, &st);
    /* The sort exchanges once: the back-end's kept scratch would only hold memory from here on. */
    exchange_release_scratch();
    return err;
}

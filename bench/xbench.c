/*
 * bench/xbench.c: the exchange measurement kernel (see bench.h).
 *
 * Scheme, per (pattern, volume):
 *   plan     every rank computes the whole count matrix (sim/patterns.c), so it knows what it
 *            sends (its row) and exactly what it must receive (its column);
 *   fill     the send buffer gets element bench_elem_at(bench_key_base(seed, me, dst), index)
 *            at each position: elements of --record-size bytes (8: the key itself), every byte
 *            a function of (seed, source, destination, index);
 *   measure  warm-up + timed repetitions; in each, every back-end runs once, in the given
 *            order (A B C A B C ...), so that noise from a shared machine hits all alike. Each
 *            run: poison the receive area, barrier, time the back-end's run() on every rank;
 *            the repetition's time is the slowest rank's (and the fastest is kept too);
 *   check    after each run, outside the timed region: the received counts equal the column and
 *            every received element equals, byte for byte, the one its source computed,
 *            position by position.
 * Buffers are allocated once for the largest case, on transparent huge pages, and pre-touched,
 * so no page fault lands inside a timed run (MPI_Alltoallv measured ~1.6x faster on huge pages).
 * Cost of checking: one hash per 8 bytes received, O(V) per run, threaded.
 */
#include "bench/bench.h"

#include <endian.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/util.h"

const char bench_xbench_columns[] =
    "backend,pattern,param,P,threads,bytes_per_rank,reps,t_med,t_min,t_max,t_fast_med,"
    "mib_per_s,h_bytes,recv_imbalance,moved_bytes,messages,rounds,max_message,valid,"
    "ratio_med";

/* A byte no element is made of in practice (elements are hashes): what the receive area holds
 * before a run. */
#define POISON_BYTE 0xA5

uint64_t bench_key_base(uint64_t seed, int src, int dst)
{
    return sim_mix(seed ^ sim_mix(((uint64_t)(uint32_t)src << 32) | (uint32_t)dst));
}

uint64_t bench_key_at(uint64_t base, uint64_t index)
{
    return sim_mix(base + index * 0x9e3779b97f4a7c15ULL);
}

/* Word @w of the element whose key is @key, as the 8 bytes it is stored as (little-endian): the
 * key itself, then hashes of (key, w). */
static void elem_word(uint64_t key, size_t w, unsigned char *out)
{
    uint64_t v = htole64(w == 0 ? key : sim_mix(key + w * 0x9e3779b97f4a7c15ULL));
    memcpy(out, &v, sizeof(v));
}

void bench_elem_at(uint64_t base, uint64_t index, size_t size, unsigned char *out)
{
    uint64_t key = bench_key_at(base, index);
    unsigned char word[8];
    for (size_t at = 0, w = 0; at < size; at += sizeof(word), w++) {
        size_t n = size - at < sizeof(word) ? size - at : sizeof(word);
        elem_word(key, w, word);
        memcpy(out + at, word, n);
    }
}

/* Whether @got holds exactly bench_elem_at(base, index, size). */
static int elem_matches(uint64_t base, uint64_t index, size_t size, const unsigned char *got)
{
    uint64_t key = bench_key_at(base, index);
    unsigned char word[8];
    for (size_t at = 0, w = 0; at < size; at += sizeof(word), w++) {
        size_t n = size - at < sizeof(word) ? size - at : sizeof(word);
        elem_word(key, w, word);
        if (memcmp(got + at, word, n) != 0) {
            return 0;
        }
    }
    return 1;
}

double bench_median(double *v, int n)
{
    if (n <= 0) {
        return 0;
    }
    /* Insertion sort: n is a repetition count. */
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i - 1;
        for (; j >= 0 && v[j] > x; j--) {
            v[j + 1] = v[j];
        }
        v[j + 1] = x;
    }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* What one (pattern, volume) case asks of this rank, and its global shape. */
struct plan {
    uint64_t *row;         /* [P] elements this rank sends to each rank */
    uint64_t *col;         /* [P] elements this rank must receive from each rank */
    uint64_t send_total;   /* sum of row */
    uint64_t recv_total;   /* sum of col */
    uint64_t row_max;      /* the largest row sum: V, or a file's heaviest sender */
    uint64_t h_bytes;      /* max over ranks of bytes sent to plus received from other ranks */
    double recv_imbalance; /* max column sum / mean column sum */
};

static int agree(MPI_Comm comm, int err);

/*
 * Computes the matrix of spec into matrix[P*P] (elements of @elem bytes) and this rank's part
 * of it into pl. Collective: a row pattern is computed by every rank, a whole-matrix one (a
 * sort's counts, a file) by rank 0 and broadcast. Returns an error agreed by all ranks
 * (reported where it happened).
 */
static int plan_case(MPI_Comm comm, const struct sim_spec *spec, int me, size_t elem,
                     uint64_t *matrix, struct plan *pl)
{
    int P = spec->ranks, err = UTIL_OK;
    if (spec->pattern->matrix != NULL) {
        if (me == 0) {
            err = sim_spec_matrix(spec, matrix);
        }
        MPI_Bcast(&err, 1, MPI_INT, 0, comm);
        if (err == UTIL_OK) {
            MPI_Bcast(matrix, P * P, MPI_UINT64_T, 0, comm);
        }
    } else {
        err = agree(comm, sim_spec_matrix(spec, matrix));
    }
    if (err != UTIL_OK) {
        return err;
    }
    /* No rank sends or receives more than BENCH_MAX_BYTES: the counts of a saved matrix can ask
     * for any 64-bit number, and its sums and buffer sizes would overflow. Checked as they are
     * summed, so no sum passes the limit; every rank holds the same matrix and agrees. */
    const uint64_t most = BENCH_MAX_BYTES / elem;
    uint64_t hmax = 0, cmax = 0, rmax = 0, all = 0;
    for (int i = 0; i < P; i++) {
        uint64_t out = 0, in = 0, csum = 0, rsum = 0;
        for (int j = 0; j < P; j++) {
            uint64_t cin = matrix[(size_t)j * (size_t)P + (size_t)i];
            uint64_t cout = matrix[(size_t)i * (size_t)P + (size_t)j];
            if (cin > most - csum || cout > most - rsum) {
                if (me == 0) {
                    char label[96];
                    sim_spec_label(spec, label, sizeof(label));
                    util_error("%s%s asks rank %d to %s more than 2^40 bytes, the most a rank "
                               "may (%zu-byte elements; --bytes' limit too)",
                               spec->path[0] ? "the matrix in " : "pattern ",
                               spec->path[0] ? spec->path : label, i,
                               cout > most - rsum ? "send" : "receive", elem);
                }
                return UTIL_EUSAGE;
            }
            csum += cin;
            rsum += cout;
            if (j != i) {
                out += cout;
                in += cin;
            }
        }
        hmax = out + in > hmax ? out + in : hmax;
        cmax = csum > cmax ? csum : cmax;
        rmax = rsum > rmax ? rsum : rmax;
        all += rsum;
    }
    pl->send_total = pl->recv_total = 0;
    for (int j = 0; j < P; j++) {
        pl->row[j] = matrix[(size_t)me * (size_t)P + (size_t)j];
        pl->col[j] = matrix[(size_t)j * (size_t)P + (size_t)me];
        pl->send_total += pl->row[j];
        pl->recv_total += pl->col[j];
    }
    pl->row_max = rmax;
    pl->h_bytes = hmax * elem;
    pl->recv_imbalance = all ? (double)cmax * P / (double)all : 1.0;
    return UTIL_OK;
}

/* Writes this rank's elements of @elem bytes, grouped by destination, into send. */
static void fill_send(unsigned char *send, const uint64_t *row, int P, int me, uint64_t seed,
                      size_t elem, int threads)
{
    uint64_t off = 0;
    for (int j = 0; j < P; j++) {
        uint64_t base = bench_key_base(seed, me, j), n = row[j];
        unsigned char *dst = send + off * elem;
#pragma omp parallel for num_threads(threads) schedule(static) if (n > 65536)
        for (uint64_t k = 0; k < n; k++) {
            bench_elem_at(base, k, elem, dst + k * elem);
        }
        off += n;
    }
}

/* Sets n bytes of buf to the poison pattern, so elements a back-end failed to deliver are
 * noticed. */
static void poison(unsigned char *buf, uint64_t n, int threads)
{
    const uint64_t chunk = (uint64_t)8 << 18;
    uint64_t nchunks = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(static) if (nchunks > 1)
    for (uint64_t c = 0; c < nchunks; c++) {
        uint64_t lo = c * chunk, len = n - lo < chunk ? n - lo : chunk;
        memset(buf + lo, POISON_BYTE, len);
    }
}

/* Checks what arrived: counts per source, then every element, byte for byte. Returns the number
 * of wrong elements (a wrong count counts as its whole block) and the first source found wrong
 * in *bad_src. */
static uint64_t check_recv(const unsigned char *recv, const uint64_t *got, const struct plan *pl,
                           int P, int me, uint64_t seed, size_t elem, int threads, int *bad_src)
{
    uint64_t wrong = 0, off = 0;
    *bad_src = -1;
    for (int s = 0; s < P; s++) {
        if (got[s] != pl->col[s]) {
            wrong += pl->col[s] > got[s] ? pl->col[s] - got[s] : got[s] - pl->col[s];
            *bad_src = *bad_src < 0 ? s : *bad_src;
        }
    }
    if (wrong != 0) {
        return wrong;
    }
    for (int s = 0; s < P; s++) {
        uint64_t base = bench_key_base(seed, s, me), n = pl->col[s], bad = 0;
        const unsigned char *src = recv + off * elem;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : bad) if (n > 65536)
        for (uint64_t k = 0; k < n; k++) {
            bad += !elem_matches(base, k, elem, src + k * elem);
        }
        if (bad != 0 && *bad_src < 0) {
            *bad_src = s;
        }
        wrong += bad;
        off += n;
    }
    return wrong;
}

/* The volumes spec i runs at: every one of --bytes, or once for a pattern whose counts are
 * given (a file). */
static int volumes(const struct bench_xbench_config *cfg, int i)
{
    return cfg->specs[i].pattern->fixed ? 1 : cfg->nbytes;
}

/* Case (spec i, volume b) for P ranks, planned into pl (collective; see plan_case()). A given
 * matrix's volume is what its heaviest rank sends. */
static int set_case(MPI_Comm comm, const struct bench_xbench_config *cfg, int i, int b, int P,
                    int me, uint64_t *matrix, struct plan *pl, struct sim_spec *spec)
{
    *spec = cfg->specs[i];
    spec->ranks = P;
    spec->keys = cfg->bytes[b] / cfg->record_size;
    spec->seed = cfg->seed;
    int err = plan_case(comm, spec, me, cfg->record_size, matrix, pl);
    if (spec->pattern->fixed) {
        spec->keys = pl->row_max;
    }
    return err;
}

/* The largest send and receive areas this rank needs over every case, in elements. */
static int size_buffers(MPI_Comm comm, const struct bench_xbench_config *cfg, int P, int me,
                        uint64_t *matrix, struct plan *pl, uint64_t *send, uint64_t *recv)
{
    struct sim_spec spec;
    *send = *recv = 0;
    for (int i = 0; i < cfg->nspecs; i++) {
        for (int b = 0; b < volumes(cfg, i); b++) {
            int err = set_case(comm, cfg, i, b, P, me, matrix, pl, &spec);
            if (err != UTIL_OK) {
                return err;
            }
            *send = pl->send_total > *send ? pl->send_total : *send;
            *recv = pl->recv_total > *recv ? pl->recv_total : *recv;
        }
    }
    return UTIL_OK;
}

/* Refuses buffers that would not fit: the sum over the ranks of a node against 80% of it. Out
 * of memory before the fact, a runtime failure (exit 3) as the sort's --mem-limit refusal is. */
static int check_memory(MPI_Comm comm, uint64_t bytes, int rank)
{
    MPI_Comm node;
    int node_rank;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    unsigned long long sum = bytes, worst = 0;
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, node);
    MPI_Comm_free(&node);
    MPI_Allreduce(&sum, &worst, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    double limit = 0.8 * (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if ((double)worst > limit) {
        if (rank == 0) {
            util_fail(UTIL_ENOMEM,
                      "the buffers need %.1f GiB on one node, more than 80%% of its memory "
                      "(%.1f GiB); lower --bytes (%.1f GiB)",
                      (double)worst / 1073741824.0, limit / 1073741824.0,
                      (double)worst / 1073741824.0);
        }
        return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

/* Agrees on an error code: the most negative one of any rank. */
static int agree(MPI_Comm comm, int err)
{
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MIN, comm);
    return err;
}

/* Out of memory on this rank (reported here, by the rank where it happened) or elsewhere:
 * returns the agreed code. */
static int agree_alloc(MPI_Comm comm, int ok, int rank, const char *what)
{
    if (!ok) {
        util_fail(UTIL_ENOMEM, "rank %d: xbench: out of memory for %s", rank, what);
    }
    return agree(comm, ok ? UTIL_OK : UTIL_ENOMEM);
}

/* One case as run_case() runs it: where its elements go, the times of every back-end's
 * repetitions (tmax, tmin: [back-end][repetition]) and its results per back-end. */
struct xcase {
    MPI_Comm comm;
    const struct bench_xbench_config *cfg;
    const struct sim_spec *spec;
    const struct plan *pl;
    unsigned char *send, *recv;
    uint64_t recv_cap, *recv_counts;
    double *tmax, *tmin;
    int rank, P;
    size_t elem;
    char label[64];
    struct exchange_stats *last; /* per back-end: the stats of its last run */
    int *bad;                    /* per back-end: whether any of its runs delivered wrong data */
    double *rmed;                /* per back-end: the median paired ratio (case_ratios()) */
    double *ratio;               /* per repetition: room for the ratios of one back-end */
};

/* The check of back-end b's run in repetition r, outside the timed region: this rank reports
 * wrong elements the first time, and the ranks agree on whether any got some. */
static void case_check(struct xcase *c, int b, int r)
{
    const struct bench_xbench_config *cfg = c->cfg;
    int bad_src;
    uint64_t wrong = check_recv(c->recv, c->recv_counts, c->pl, c->P, c->rank, cfg->seed, c->elem,
                                cfg->threads, &bad_src);
    if (wrong != 0 && !c->bad[b]) {
        util_fail(UTIL_EUSAGE,
                  "rank %d: back-end %s delivered %llu wrong elements of %zu bytes on %s "
                  "with %llu bytes per rank (repetition %d, first from rank %d)",
                  c->rank, cfg->backends[b]->name, (unsigned long long)wrong, c->elem, c->label,
                  (unsigned long long)(c->spec->keys * c->elem), r, bad_src);
    }
    int w = wrong != 0;
    MPI_Allreduce(MPI_IN_PLACE, &w, 1, MPI_INT, MPI_MAX, c->comm);
    c->bad[b] |= w;
}

/* Back-end b's run in repetition r (warm-ups first): poisons the receive area, times the
 * exchange, checks it, and keeps its times and stats. Returns the agreed error of the run. */
static int case_run(struct xcase *c, int b, int r)
{
    const struct bench_xbench_config *cfg = c->cfg;
    const struct exchange_ops *ops = cfg->backends[b];
    int err, reps = cfg->reps;
    struct exchange_stats st;
    struct exchange_args args = {
        .comm = c->comm,
        .threads = cfg->threads,
        .elem_size = c->elem,
        .send = c->send,
        .send_counts = c->pl->row,
        .recv = c->recv,
        .recv_cap = c->recv_cap,
        .recv_counts = c->recv_counts,
        .stats = &st,
        .recv_counts_known = cfg->counts_given,
    };
    poison(c->recv, c->pl->recv_total * c->elem, cfg->threads);
    /* The receive counts: handed over (as the sort does), or left for the back-end. */
    if (cfg->counts_given) {
        memcpy(c->recv_counts, c->pl->col, (size_t)c->P * sizeof(uint64_t));
    } else {
        memset(c->recv_counts, 0, (size_t)c->P * sizeof(uint64_t));
    }

    /* The timed region: one exchange, barrier to barrier. */
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    int rc = ops->run(&args);
    double t[2] = {MPI_Wtime() - t0, 0};
    t[1] = -t[0];
    if ((err = agree(c->comm, rc)) != UTIL_OK) {
        if (c->rank == 0) {
            util_fail(err, "back-end %s failed on %s with %llu bytes per rank", ops->name, c->label,
                      (unsigned long long)(c->spec->keys * c->elem));
        }
        return err;
    }
    MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, c->comm);

    case_check(c, b, r);
    if (r >= cfg->warmup) {
        c->tmax[(size_t)b * (size_t)reps + (size_t)(r - cfg->warmup)] = t[0];
        c->tmin[(size_t)b * (size_t)reps + (size_t)(r - cfg->warmup)] = -t[1];
    }
    c->last[b] = st;
    return UTIL_OK;
}

/* Paired ratios first (the medians below sort the times in place): each repetition's time
 * over alltoallv's in the same repetition, run moments apart, so that the machine's slow
 * drifts cancel out of the comparison; their median per back-end, -1 without alltoallv. */
static void case_ratios(struct xcase *c)
{
    const struct bench_xbench_config *cfg = c->cfg;
    int nb = cfg->nbackends, reps = cfg->reps;
    int ref = -1;
    for (int b = 0; b < nb; b++) {
        ref = ref < 0 && strcmp(cfg->backends[b]->name, "alltoallv") == 0 ? b : ref;
    }
    for (int b = 0; b < nb && c->rank == 0; b++) {
        double *tx = c->tmax + (size_t)b * (size_t)reps, *tr = c->tmax + (size_t)ref * (size_t)reps;
        for (int r = 0; r < reps && ref >= 0; r++) {
            c->ratio[r] = tr[r] > 0 ? tx[r] / tr[r] : 0;
        }
        c->rmed[b] = ref >= 0 ? bench_median(c->ratio, reps) : -1;
    }
}

/* Back-end b's row: times over repetitions, exchange figures over ranks (collective), printed
 * by rank 0; counts the back-end in *invalid if it delivered wrong data. */
static void case_row(struct xcase *c, int b, FILE *out, int *invalid)
{
    const struct bench_xbench_config *cfg = c->cfg;
    const struct exchange_stats *last = &c->last[b];
    int reps = cfg->reps;
    unsigned long long sums[2] = {last->bytes_sent, last->messages};
    unsigned long long maxes[2] = {last->rounds, last->max_message};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, c->comm);
    MPI_Allreduce(MPI_IN_PLACE, maxes, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, c->comm);
    *invalid += c->bad[b];
    if (c->rank != 0) {
        return;
    }
    double *tx = c->tmax + (size_t)b * (size_t)reps, *tn = c->tmin + (size_t)b * (size_t)reps;
    double lo = tx[0], hi = tx[0];
    for (int r = 1; r < reps; r++) {
        lo = tx[r] < lo ? tx[r] : lo;
        hi = tx[r] > hi ? tx[r] : hi;
    }
    double med = bench_median(tx, reps), fast = bench_median(tn, reps);
    uint64_t bytes = c->spec->keys * c->elem;
    char param[64];
    sim_spec_param(c->spec, param, sizeof(param));
    fprintf(out,
            "%s,%s,%s,%d,%d,%llu,%d,%.9f,%.9f,%.9f,%.9f,%.3f,%llu,%.4f,%llu,%llu,%llu,%llu,"
            "%d,",
            cfg->backends[b]->name, c->spec->pattern->name, param, c->P, cfg->threads,
            (unsigned long long)bytes, reps, med, lo, hi, fast,
            med > 0 ? (double)bytes / 1048576.0 / med : 0.0, (unsigned long long)c->pl->h_bytes,
            c->pl->recv_imbalance, sums[0], sums[1], maxes[0], maxes[1], c->bad[b] ? 0 : 1);
    if (c->rmed[b] >= 0) {
        fprintf(out, "%.4f", c->rmed[b]);
    }
    fputc('\n', out);
    if (cfg->verbose) {
        fprintf(stderr, "%s: %-14s %11llu B  %-12s median %.6f s  %s\n", util_progname(), c->label,
                (unsigned long long)bytes, cfg->backends[b]->name, med,
                c->bad[b] ? "WRONG DATA" : "checked");
    }
}

/* Times and checks every back-end on one case; prints its rows from rank 0. */
static int run_case(MPI_Comm comm, const struct bench_xbench_config *cfg,
                    const struct sim_spec *spec, const struct plan *pl, unsigned char *send,
                    unsigned char *recv, uint64_t recv_cap, uint64_t *recv_counts, double *tmax,
                    double *tmin, FILE *out, int *invalid)
{
    int nb = cfg->nbackends, reps = cfg->reps, err = UTIL_OK;
    struct xcase c = {
        .comm = comm,
        .cfg = cfg,
        .spec = spec,
        .pl = pl,
        .send = send,
        .recv = recv,
        .recv_cap = recv_cap,
        .recv_counts = recv_counts,
        .tmax = tmax,
        .tmin = tmin,
        .P = spec->ranks,
        .elem = cfg->record_size,
    };
    MPI_Comm_rank(comm, &c.rank);
    c.last = util_calloc((size_t)nb, sizeof(*c.last));
    c.bad = util_calloc((size_t)nb, sizeof(int));
    c.rmed = util_calloc((size_t)nb, sizeof(double));
    c.ratio = util_calloc((size_t)reps, sizeof(double));
    if ((err = agree_alloc(comm, c.last && c.bad && c.rmed && c.ratio, c.rank, "the results")) !=
        UTIL_OK) {
        goto fail;
    }
    sim_spec_label(spec, c.label, sizeof(c.label));

    fill_send(send, pl->row, c.P, c.rank, cfg->seed, c.elem, cfg->threads);
    for (int r = 0; r < cfg->warmup + reps; r++) {
        for (int b = 0; b < nb; b++) {
            if ((err = case_run(&c, b, r)) != UTIL_OK) {
                goto fail;
            }
        }
    }
    case_ratios(&c);
    /* One row per back-end: times over repetitions, exchange figures over ranks. */
    for (int b = 0; b < nb; b++) {
        case_row(&c, b, out, invalid);
    }
    fflush(out);
fail:
    util_free(c.last);
    util_free(c.bad);
    util_free(c.rmed);
    util_free(c.ratio);
    return err;
}

int bench_xbench_run(MPI_Comm comm, const struct bench_xbench_config *cfg, FILE *out, int *invalid)
{
    int rank, P, err = UTIL_OK;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    *invalid = 0;
    unsigned char *send = NULL, *recv = NULL;
    const size_t elem = cfg->record_size;
    uint64_t *matrix = util_malloc((size_t)P * (size_t)P * sizeof(uint64_t));
    uint64_t *vecs = util_malloc(3 * (size_t)P * sizeof(uint64_t));
    size_t ntimes = (size_t)cfg->nbackends * (size_t)cfg->reps;
    double *times = util_malloc(2 * ntimes * sizeof(double));
    struct plan pl = {0};
    if ((err = agree_alloc(comm, matrix && vecs && times, rank, "the plan")) != UTIL_OK) {
        goto fail;
    }
    pl.row = vecs;
    pl.col = vecs + P;
    uint64_t *recv_counts = vecs + 2 * P;

    /* Buffers once, for the largest case: the largest row and column of this rank. */
    uint64_t send_elems = 0, recv_elems = 0;
    if ((err = size_buffers(comm, cfg, P, rank, matrix, &pl, &send_elems, &recv_elems)) !=
        UTIL_OK) {
        goto fail;
    }
    if ((err = check_memory(comm, (send_elems + recv_elems) * elem, rank)) != UTIL_OK) {
        goto fail;
    }
    send = util_alloc_big(send_elems * elem);
    recv = util_alloc_big(recv_elems * elem);
    if ((err = agree_alloc(comm, send && recv, rank, "the element buffers")) != UTIL_OK) {
        goto fail;
    }
    util_pretouch(send, send_elems * elem, cfg->threads);
    util_pretouch(recv, recv_elems * elem, cfg->threads);

    if (rank == 0) {
        fprintf(out, "%s\n", bench_xbench_columns);
    }
    for (int i = 0; i < cfg->nspecs && err == UTIL_OK; i++) {
        for (int b = 0; b < volumes(cfg, i) && err == UTIL_OK; b++) {
            struct sim_spec spec;
            if ((err = set_case(comm, cfg, i, b, P, rank, matrix, &pl, &spec)) != UTIL_OK) {
                break;
            }
            err = run_case(comm, cfg, &spec, &pl, send, recv, recv_elems, recv_counts, times,
                           times + ntimes, out, invalid);
        }
    }
fail:
    util_free_big(send);
    util_free_big(recv);
    util_free(matrix);
    util_free(vecs);
    util_free(times);
    return err;
}

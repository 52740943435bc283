/*
 * sim/sortmodel.c: the whole sort modelled phase by phase (see sortmodel.h).
 *
 * Costs, per rank, for P ranks of N elements of E bytes, T threads, R ranks a node of C cores
 * (compute phases slow down by max(1, R T / C) when ranks share cores):
 *   read, write   E N / rate
 *   local_sort    N ns(N) / speed(T): ns(N) log-linear through the two calibrated sizes,
 *                 speed(T) = 1 + (T - 1)(s2 - 1) from the two-thread speed-up s2
 *   sample        regular (--balance sample): S P tuples all-gathered (recursive doubling:
 *                 alpha log P + beta 16 S P) and sorted by qsort; refused as the sort refuses
 *                 (sort_sample_total()). Histogram: the first round's candidates gathered
 *                 and sorted
 *   splitters     histogram: every round's count (probes of the keys and of the count's
 *                 index, sim_count_seconds()), all-reduce of the counts
 *                 (alpha 2 log P + beta 2 x 8 C), and the next rounds; the rounds and their
 *                 candidate counts come from a replay of the selection in global-rank space
 *                 with the sort's own rules (sort/rules.h)
 *   bucket        2 (P - 1) binary searches after the regular sample (the histogram's last
 *                 round counted the boundaries), and the all-to-all of the counts (Bruck:
 *                 alpha log P + beta 8 P log P / 2)
 *   exchange      the back-end's own model (exchange/exchange.h) on the count matrix, plus the
 *                 copy of the own block
 *   finish        the merge of P runs when P <= LOCAL_MERGE_RUNS_PER_THREAD T (ns a key
 *                 growing with log P), else a re-sort: as the finish phase chooses
 * Memory per rank: the two element buffers of the output bound the sort reserves, plus what a
 * phase adds (the gathered sample or candidates and their counts, the brackets).
 */
#include "sim/sortmodel.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local/local.h"
#include "sort/rules.h"
#include "util/alloc.h"
#include "util/util.h"

static const char *const row_names[SIM_ROW_COUNT] = {
    "read", "local_sort", "sample", "splitters", "bucket", "exchange", "finish", "write", "total",
};

const char *sim_row_name(enum sim_row r)
{
    return (unsigned)r < SIM_ROW_COUNT ? row_names[r] : "?";
}

/* ---- the machine ------------------------------------------------------------------------- */

/* One constant of struct sim_machine: its name in files and what it is. */
struct machine_field {
    const char *name;
    size_t offset;
    const char *what;
};

#define FIELD(f, what) {#f, offsetof(struct sim_machine, f), what}
static const struct machine_field fields[] = {
    FIELD(sort_ns_small, "local sort, one thread, uniform keys: ns a key at 2^20 keys"),
    FIELD(sort_ns_large, "the same at 2^24 keys"),
    FIELD(sort_speedup, "the local sort with two threads over one, at 2^24 keys"),
    FIELD(sort_fixed, "seconds the first local sort of a process costs beyond its keys"),
    FIELD(merge_ns, "merging sorted runs, one thread: ns a key at two runs"),
    FIELD(merge_ns_log, "... plus this a key for every doubling of the runs"),
    FIELD(tuple_ns, "vqsort of 128-bit tuples: ns a tuple and doubling"),
    FIELD(qsort_ns, "qsort of (key, position) tuples: ns a tuple and doubling"),
    FIELD(probe_ns, "one probe of a binary search in 2^24 keys"),
    FIELD(probe_cached_ns, "one probe of a binary search in 2^12 keys, in cache"),
    FIELD(index_ns, "the selection's count index of 2^24 keys: ns an entry"),
    FIELD(copy_bps, "memcpy, bytes a second"),
    FIELD(read_bps, "reading a file from the page cache, bytes a second (one process)"),
    FIELD(write_bps, "writing a file into the page cache, bytes a second (one process)"),
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

void sim_machine_default(struct sim_machine *m)
{
    /* Measured by sortex-sched --sort --calibrate and --ping-pong on a project machine (AMD
     * EPYC, 2 cores, L2 1 MiB, Open MPI 4.1 shared memory); results/sched/sort-model.md. */
    *m = (struct sim_machine){
        .sort_ns_small = 3.7,
        .sort_ns_large = 5.2,
        .sort_speedup = 1.9,
        .sort_fixed = 2e-3,
        .merge_ns = 1.2,
        .merge_ns_log = 0.6,
        .tuple_ns = 0.35,
        .qsort_ns = 4.0,
        .probe_ns = 4.0,
        .probe_cached_ns = 4.0, /* not measured there: a probe of the keys' */
        .index_ns = 4.0,
        .copy_bps = 11e9,
        .read_bps = 4e9,
        .write_bps = 2e9,
    };
    exchange_machine_default(&m->ex);
    m->alpha = m->ex.alpha;
    m->beta = m->ex.beta;
    m->cores = m->ex.cores;
}

void sim_machine_print(FILE *f, const struct sim_machine *m)
{
    struct exchange_machine ex = m->ex;
    ex.alpha = m->alpha;
    ex.beta = m->beta;
    ex.cores = m->cores;
    exchange_machine_print(f, &ex);
    fprintf(f, "# ---- the whole sort's compute and file constants (sortex-sched --sort)\n");
    for (size_t i = 0; i < NFIELDS; i++) {
        fprintf(f, "# %s\n%s %.6g\n", fields[i].what, fields[i].name,
                *(const double *)((const char *)m + fields[i].offset));
    }
}

int sim_machine_line(void *ctx, const char *name, const char *value, const char *path, int no)
{
    struct sim_machine *m = ctx;
    char *end;
    double v = strtod(value, &end);
    size_t i = 0;
    while (i < NFIELDS && strcmp(fields[i].name, name) != 0) {
        i++;
    }
    if (i == NFIELDS) {
        return util_error("unknown constant in the machine file (%s:%d: %s)", path, no, name);
    }
    if (end == value || *(end + strspn(end, " \t")) != '\0' || !(v >= 0) || isinf(v)) {
        return util_error("bad line in the machine file (%s:%d)", path, no);
    }
    if (m != NULL) {
        *(double *)((char *)m + fields[i].offset) = v;
    }
    return UTIL_OK;
}

int sim_machine_load(struct sim_machine *m, const char *path)
{
    m->ex.alpha = m->alpha;
    m->ex.beta = m->beta;
    m->ex.cores = m->cores;
    struct exchange_machine ex;
    m->probe_cached_ns = m->index_ns = NAN; /* files from before the count's index */
    int err = exchange_machine_load_with(&ex, path, sim_machine_line, m);
    m->probe_cached_ns = isnan(m->probe_cached_ns) ? m->probe_ns : m->probe_cached_ns;
    m->index_ns = isnan(m->index_ns) ? m->probe_ns : m->index_ns;
    if (err == UTIL_OK) {
        m->ex = ex;
        m->alpha = ex.alpha;
        m->beta = ex.beta;
        m->cores = ex.cores;
    }
    return err;
}

void sim_machine_head(FILE *f, const struct sim_machine *m, int max_p, int rpn)
{
    char what[600];
    exchange_machine_describe(&m->ex, what, sizeof(what));
    fprintf(f, "machine %s\n", what);
    fprintf(f, "        alpha %.3g us, beta %.3g ns/B (%.2f GB/s), %s; file read %.2f GB/s and "
               "write %.2f GB/s a process\n",
            m->alpha * 1e6, m->beta * 1e9, m->beta > 0 ? 1e-9 / m->beta : 0.0,
            m->ex.shm ? "links between ranks on one node" : "a network's links",
            m->read_bps / 1e9, m->write_bps / 1e9);
    if (m->ex.shm && max_p > rpn) {
        fprintf(f, "        measured on one node: beyond %d ranks its alpha and beta stand for a "
                   "network they never crossed, and every rank reads and writes at one "
                   "process's page-cache rate, which a shared file system will not give %d "
                   "ranks\n",
                rpn, max_p);
    }
    if (m->ex.source == EXCHANGE_MACHINE_BUILTIN || (m->ex.shm && max_p > rpn)) {
        fprintf(f, "        measure the machine you will sort on: `mpirun -np P sortex-sched "
                   "--calibrate > machine.txt` across its nodes, then --machine machine.txt\n");
    }
    fprintf(f, "\n");
}

int sim_machine_read(struct sim_machine *m, const char *path)
{
    m->ex.alpha = m->alpha;
    m->ex.beta = m->beta;
    m->ex.cores = m->cores;
    int err = exchange_machine_read(&m->ex, path, sim_machine_line, m);
    m->alpha = m->ex.alpha;
    m->beta = m->ex.beta;
    m->cores = m->ex.cores;
    return err;
}

/* ---- calibration ------------------------------------------------------------------------- */

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The best of @reps runs of the local sort of @n random keys with @threads threads, ns a key. */
static double time_local_sort(uint64_t *a, uint64_t *b, size_t n, int threads, int reps)
{
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        uint64_t s = 0x9e3779b97f4a7c15ULL + (uint64_t)r;
        for (size_t i = 0; i < n; i++) {
            a[i] = xorshift(&s);
        }
        double t0 = util_now();
        (void)local_sort(a, b, n, threads);
        double t = util_now() - t0;
        best = t < best ? t : best;
    }
    return 1e9 * best / (double)n;
}

/* ns a key to merge @runs equal sorted runs of @n keys in all, one thread. */
static double time_merge(uint64_t *a, uint64_t *b, size_t n, int runs)
{
    uint64_t counts[64];
    for (int r = 0; r < runs; r++) {
        size_t lo = n * (size_t)r / (size_t)runs, hi = n * (size_t)(r + 1) / (size_t)runs;
        counts[r] = hi - lo;
        for (size_t i = lo; i < hi; i++) {
            a[i] = (uint64_t)(i - lo) * 2654435761u + (uint64_t)r;
        }
    }
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = util_now();
        (void)local_merge_runs(a, counts, runs, b, 1);
        double t = util_now() - t0;
        best = t < best ? t : best;
    }
    return 1e9 * best / (double)n;
}

/* ns a probe of @queries binary searches for random keys in @n sorted keys (a[i] = 7 i),
 * written into a[0, n) first: out of cache at 2^24 keys, in a core's cache at 2^12. */
static double time_probe(uint64_t *a, size_t n, size_t queries, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint64_t)i * 7;
    }
    uint64_t found = 0, probes = 0;
    double t0 = util_now();
    for (size_t q = 0; q < queries; q++) {
        uint64_t key = xorshift(s) % (7 * n), lo = 0, hi = n;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            probes++;
            if (a[mid] < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        found += lo;
    }
    return 1e9 * (util_now() - t0) / (double)(probes + (found & 1));
}

static int cmp_pair(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    if (a[0] != b[0]) {
        return a[0] < b[0] ? -1 : 1;
    }
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* File I/O through the page cache: bytes a second to write, then to read, @bytes in @dir. */
static int time_io(const char *dir, uint64_t *buf, size_t bytes, double *wr, double *rd)
{
    char path[4096];
    (void)snprintf(path, sizeof(path), "%s/.sortex-calibrate.%ld", dir, (long)getpid());
    /* The fastest of three: one write can meet the kernel's writeback of other files, which
     * once made the rate 5x too slow here; the other calibrations keep their fastest run too. */
    *wr = *rd = 0;
    for (int rep = 0; rep < 3; rep++) {
        int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
        if (fd < 0) {
            return util_fail(UTIL_EIO, "cannot create a scratch file (%s: %s)", path,
                             strerror(errno));
        }
        double t0 = util_now();
        ssize_t w = write(fd, buf, bytes);
        double t1 = util_now();
        ssize_t r = pread(fd, buf, bytes, 0);
        double t2 = util_now();
        close(fd);
        unlink(path);
        if (w != (ssize_t)bytes || r != (ssize_t)bytes) {
            return util_fail(UTIL_EIO, "the scratch file could not be written and read (%s)",
                             dir);
        }
        *wr = fmax(*wr, (double)bytes / (t1 - t0));
        *rd = fmax(*rd, (double)bytes / (t2 - t1));
    }
    return UTIL_OK;
}

int sim_machine_calibrate(struct sim_machine *m, const char *dir)
{
    const size_t big = (size_t)1 << 24, small = (size_t)1 << 20;
    uint64_t *a = util_alloc_big(big * sizeof(uint64_t));
    uint64_t *b = util_alloc_big(big * sizeof(uint64_t));
    int err = UTIL_OK;
    if (a == NULL || b == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for the calibration");
        goto done;
    }
    util_pretouch(a, big * sizeof(uint64_t), 1);
    util_pretouch(b, big * sizeof(uint64_t), 1);
    /* The process's first sort pays the kernels' calibration: what a rank's phase adds. */
    double first = time_local_sort(a, b, 1024, 1, 1);
    m->sort_fixed = 1e-9 * 1024 * (first - time_local_sort(a, b, 1024, 1, 5));
    m->sort_ns_small = time_local_sort(a, b, small, 1, 5);
    m->sort_ns_large = time_local_sort(a, b, big, 1, 3);
    m->sort_speedup = m->sort_ns_large / time_local_sort(a, b, big, 2, 3);
    double two = time_merge(a, b, big, 2), many = time_merge(a, b, big, 32);
    m->merge_ns = two;
    m->merge_ns_log = (many - two) / 4.0; /* log2(32) - log2(2) doublings */
    /* Sorting 2^20 tuples: vqsort's 128-bit sort (the candidates), qsort (the sample). */
    uint64_t s = 12345;
    for (size_t i = 0; i < 2 * small; i++) {
        a[i] = xorshift(&s);
    }
    double t0 = util_now();
    local_vqsort_u128(a, small);
    m->tuple_ns = 1e9 * (util_now() - t0) / (double)small / 20.0;
    for (size_t i = 0; i < 2 * small; i++) {
        a[i] = xorshift(&s);
    }
    t0 = util_now();
    qsort(a, small, 2 * sizeof(uint64_t), cmp_pair);
    m->qsort_ns = 1e9 * (util_now() - t0) / (double)small / 20.0;
    /* Binary searches: ns a probe in 2^24 sorted keys, and in 2^12 (in cache). */
    m->probe_ns = time_probe(a, big, 200000, &s);
    m->probe_cached_ns = time_probe(a, 4096, 400000, &s);
    t0 = util_now(); /* a[] is 2^24 keys, mostly out of cache after the searches above */
    sort_count_index(a, big, b);
    m->index_ns = 1e9 * (util_now() - t0) / (double)sort_count_index_len(big);
    t0 = util_now();
    memcpy(b, a, big * sizeof(uint64_t));
    m->copy_bps = (double)(big * sizeof(uint64_t)) / (util_now() - t0);
    err = time_io(dir, a, big * sizeof(uint64_t), &m->write_bps, &m->read_bps);
    m->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    m->ex.cores = m->cores;
done:
    util_free_big(a);
    util_free_big(b);
    return err;
}

/* ---- the phases -------------------------------------------------------------------------- */

static double log2u(double x)
{
    return x > 1 ? log2(x) : 0;
}

/* Rounds of a recursive-doubling or Bruck collective over p ranks. */
static double steps(int p)
{
    return ceil(log2u((double)p));
}

double sim_local_sort_seconds(const struct sim_machine *m, double n, int threads)
{
    double ns = m->sort_ns_small + (m->sort_ns_large - m->sort_ns_small) * (log2u(n) - 20) / 4;
    ns = ns > m->sort_ns_small * 0.5 ? ns : m->sort_ns_small * 0.5;
    double speed = 1.0 + (threads - 1) * (m->sort_speedup - 1.0);
    return 1e-9 * n * ns / (speed > 1 ? speed : 1);
}

double sim_count_seconds(const struct sim_machine *m, double gap, int indexed)
{
    return 1e-9 * sort_count_cost(gap, indexed, m->probe_ns, m->probe_cached_ns);
}

double sim_count_index_seconds(const struct sim_machine *m, double n)
{
    return 1e-9 * m->index_ns * (double)sort_count_index_len((uint64_t)n);
}

/* One histogram round, as the model replays it. */
struct round_cost {
    uint64_t candidates;
};

/* Collects the global ranks a round draws (sort_split_draw()'s callback). */
int sim_drawn_keep(void *arg, uint64_t i)
{
    struct sim_drawn *d = arg;
    if (d->n == d->cap) {
        uint64_t cap = d->cap ? 2 * d->cap : 4096;
        uint64_t *p = util_realloc(d->r, cap * sizeof(*p));
        if (p == NULL) {
            return UTIL_ENOMEM;
        }
        d->r = p;
        d->cap = cap;
    }
    d->r[d->n++] = i;
    return UTIL_OK;
}

/*
 * The histogram selection replayed in global-rank space: an element's global rank is all a
 * round's draw and choice depend on, so brackets are [g_lo, g_hi) of ranks and a drawn
 * candidate's rank is its index. The draws of all ranks are one generator's here (the same
 * law: each element drawn with its bracket's density). Stores the candidates of each round in
 * @per_round (room for 64) and the rounds in *@rounds.
 */
static int replay_histogram(uint64_t n, int p, double eps, int exact, uint64_t *per_round,
                            uint64_t *rounds)
{
    size_t nb = (size_t)(p > 1 ? p - 1 : 1);
    struct sort_bracket *br = util_calloc(nb, sizeof(*br));
    struct sort_split_range *r = util_malloc(nb * sizeof(*r));
    struct sim_drawn d = {NULL, 0, 0};
    int err = UTIL_OK;
    *rounds = 0;
    if (!br || !r) {
        err = util_fail(UTIL_ENOMEM, "out of memory for %d brackets", p);
        goto out;
    }
    uint64_t tol = sort_split_tolerance(n, p, eps, exact);
    uint64_t open = sort_split_start(br, p, n, tol);
    for (int round = 0; open > 0 && round < 64; round++) {
        /* One draw over the global ranges stands for every rank's over its own. */
        sort_split_ranges(br, p, NULL, NULL, r);
        d.n = 0;
        uint64_t rng = sort_split_seed(round, 0);
        if ((err = sort_split_draw(r, nb, &rng, sim_drawn_keep, &d)) != UTIL_OK) {
            err = util_fail(UTIL_ENOMEM, "out of memory for the candidates");
            goto out;
        }
        per_round[round] = d.n;
        *rounds = (uint64_t)round + 1;
        open = sort_split_update(br, p, n, tol, NULL, d.r, d.n, NULL, NULL);
    }
out:
    util_free(br);
    util_free(r);
    util_free(d.r);
    return err;
}

/* The largest slice a rank may end with: the bound the sort reserves for (sortex.c). */
static double output_bound(const struct sim_sort_case *sc, uint64_t s)
{
    double n = (double)sc->per_rank * sc->p, share = (double)sc->per_rank;
    enum sortex_balance balance =
        sort_balance_resolve(sc->balance, sc->p, sc->epsilon, sc->oversample);
    if (balance == SORTEX_BALANCE_SAMPLE) {
        return ceil((1.0 + (sc->p + 1.0) / (double)s) * share) + sc->p;
    }
    uint64_t tol = sort_split_tolerance((uint64_t)n, sc->p, sc->epsilon,
                                          balance == SORTEX_BALANCE_EXACT);
    return ceil(share) + 2.0 * (double)tol;
}

static void set(struct sim_phase *ph, double secs, double bytes, double net, const char *note)
{
    ph->seconds = secs;
    ph->rank_bytes = bytes > 0 ? (uint64_t)bytes : 0;
    ph->net_bytes = net > 0 ? (uint64_t)net : 0;
    (void)snprintf(ph->note, sizeof(ph->note), "%s", note);
}

/*
 * The machine the exchange of @sc is priced on: m->ex with m's alpha and beta. A machine of one
 * node (links shm) stands for the network when the P ranks do not fit one node of
 * ranks_per_node: its constants then price P / ranks_per_node nodes of that many ranks each,
 * which *@extrapolated says, for the note.
 */
struct exchange_machine sim_exchange_machine(const struct sim_sort_case *sc,
                                             const struct sim_machine *m, int *extrapolated)
{
    struct exchange_machine ex = m->ex;
    ex.alpha = m->alpha;
    ex.beta = m->beta;
    ex.cores = m->cores;
    *extrapolated = ex.shm && sc->ranks_per_node < sc->p;
    if (*extrapolated) {
        ex.shm = 0;
        ex.ranks_per_node = sc->ranks_per_node;
    }
    return ex;
}

/* The exchange of @sc priced by @b's closed form for equal blocks of a rank's volume on machine
 * @ex (@mean: standing for a pattern's mean, which the note says; @whose ends the note). 0 when
 * the back-end's model has no such form (@out untouched). */
static int equal_blocks(const struct sim_sort_case *sc, const struct sim_machine *m,
                        const struct exchange_ops *b, const struct exchange_machine *ex, int mean,
                        const char *whose, struct sim_phase *out)
{
    struct exchange_model_equal eq = {.p = sc->p,
                                      .block = sc->per_rank / (uint64_t)sc->p * sc->elem,
                                      .elem_bytes = sc->elem,
                                      .alpha = m->alpha,
                                      .beta = m->beta,
                                      .machine = ex,
                                      .counts_known = 1};
    struct exchange_model_result r;
    if (exchange_model_run_equal(b->models[0], &eq, &r) != UTIL_OK) {
        return 0;
    }
    char note[96];
    if (mean) {
        (void)snprintf(note, sizeof(note), "%s model, equal blocks of the pattern's mean%s",
                       b->models[0]->name, whose);
    } else {
        (void)snprintf(note, sizeof(note), "%s model (equal blocks), %llu rounds%s",
                       b->models[0]->name, (unsigned long long)r.rounds, whose);
    }
    set(out, r.predicted, 0, (double)r.bytes_moved / sc->p, note);
    return 1;
}

int sim_sort_exchange(const struct sim_sort_case *sc, const struct sim_machine *m,
                      const struct exchange_ops *b, struct sim_phase *out)
{
    int p = sc->p, err = UTIL_OK, extrapolated;
    if (p == 1) {
        set(out, 0, 0, 0, "one rank: nothing moves");
        return UTIL_OK;
    }
    struct exchange_machine ex = sim_exchange_machine(sc, m, &extrapolated);
    const char *whose = extrapolated ? "; one node's constants for the network" : "";
    /* Equal blocks (uniform keys) from P alone where the back-end's model has that form:
     * beyond the matrix models' P, and from 1024 ranks on, where walks grow slow. */
    int equal = sc->matrix->pattern == sim_pattern_find("bucket");
    if (equal && (p > EXCHANGE_MODEL_MAX_P || p >= 1024) &&
        equal_blocks(sc, m, b, &ex, 0, whose, out)) {
        return UTIL_OK;
    }
    if (p > EXCHANGE_MODEL_MAX_P) {
        /* No P x P matrix fits: a pattern is taken as equal blocks of its mean (a sort's
         * volume a rank, spread over the ranks), the one form every P has. */
        if (equal || !equal_blocks(sc, m, b, &ex, 1, whose, out)) {
            set(out, NAN, 0, 0, "no equal-blocks form, beyond the matrix models' P");
        }
        return UTIL_OK;
    }
    uint64_t *counts = util_malloc((size_t)p * (size_t)p * sizeof(uint64_t));
    uint64_t *bytes = util_malloc((size_t)p * (size_t)p * sizeof(uint64_t));
    struct exchange_model_case c;
    struct exchange_model_result r;
    memset(&c, 0, sizeof(c));
    if (counts == NULL || bytes == NULL) {
        err = util_fail(UTIL_ENOMEM, "out of memory for the %d x %d count matrix", p, p);
        goto out;
    }
    struct sim_spec spec = *sc->matrix;
    spec.ranks = p;
    spec.keys = sc->per_rank;
    if ((err = sim_spec_matrix(&spec, counts)) != UTIL_OK) {
        goto out;
    }
    for (size_t i = 0; i < (size_t)p * (size_t)p; i++) {
        bytes[i] = counts[i] * sc->elem;
    }
    if ((err = exchange_model_case_init(&c, p, bytes, sc->elem, 0)) !=
        UTIL_OK) {
        goto out;
    }
    c.alpha = m->alpha;
    c.beta = m->beta;
    c.machine = &ex;
    c.counts_known = 1; /* the bucket phase's all-to-all gave them */
    if ((err = exchange_model_run(b->models[0], &c, &r)) != UTIL_OK) {
        goto out;
    }
    /* The heaviest rank's sends: what the model moves, over P, at least the row. */
    uint64_t row_max = 0;
    for (int i = 0; i < p; i++) {
        uint64_t s = 0;
        for (int j = 0; j < p; j++) {
            s += i == j ? 0 : bytes[(size_t)i * p + j];
        }
        row_max = s > row_max ? s : row_max;
    }
    double moved = (double)r.bytes_moved / p;
    char note[96];
    (void)snprintf(note, sizeof(note), "%s model, %llu rounds%s", b->models[0]->name,
                   (unsigned long long)r.rounds, whose);
    set(out, r.predicted, 0, moved > row_max ? moved : (double)row_max, note);
out:
    exchange_model_case_free(&c);
    util_free(counts);
    util_free(bytes);
    return err;
}

void sim_sort_fixed_rows(const struct sim_sort_case *sc, const struct sim_machine *m,
                         double buffers, struct sim_sort_result *out)
{
    double N = (double)sc->per_rank, E = (double)sc->elem;
    double share = fmax(1.0, (double)sc->ranks_per_node * sc->threads / m->cores);
    struct sim_phase *ph = out->phase;
    set(&ph[SIM_ROW_READ], E * N / m->read_bps * share, buffers, 0, "E N / read rate");
    set(&ph[SIM_ROW_LOCAL_SORT],
        m->sort_fixed + sim_local_sort_seconds(m, N, sc->threads) * share * fmax(1, E / 8), buffers,
        0, "calibrated rate at N, and the first sort's calibration");
    set(&ph[SIM_ROW_WRITE], E * N / m->write_bps * share, buffers, 0, "E N / write rate");
}

/* The regular sample's phases (sample: the all-gather and sort of s P tuples; splitters: picked
 * from it), or its refusal (an infinite time) where sort_sample_total() refuses the size. */
static void model_sample(const struct sim_sort_case *sc, const struct sim_machine *m, uint64_t s,
                         double buffers, double share, struct sim_sort_result *out)
{
    int p = sc->p;
    struct sim_phase *ph = out->phase;
    char note[96];
    uint64_t total = 0;
    if (sort_sample_total(s, p, &total) != UTIL_OK) {
        out->refused = 1;
        total = (uint64_t)fmin((double)s * p, 1e18);
    }
    double t = (double)total;
    out->candidates = total;
    (void)snprintf(note, sizeof(note), "%s%.3g tuples all-gathered",
                   out->refused ? "refused: " : "", t);
    set(&ph[SIM_ROW_SAMPLE],
        out->refused ? INFINITY
                     : (m->alpha * steps(p) + m->beta * 16 * t * (p - 1) / p +
                        1e-9 * m->qsort_ns * t * log2u(t) * share),
        buffers + 16 * t + 16 * (double)s, 16 * t * (p - 1) / p, note);
    set(&ph[SIM_ROW_SPLITTERS], 0, buffers + 16 * t, 0, "picked from the sorted sample");
}

/* The histogram's phases, as its rounds replayed in global-rank space (replay_histogram())
 * cost them: round 1's all-gather is the sample phase, the other rounds and every round's
 * counting and all-reduce the splitters phase. */
static int model_histogram(const struct sim_sort_case *sc, const struct sim_machine *m,
                           double buffers, double share, struct sim_sort_result *out)
{
    int p = sc->p, err;
    double N = (double)sc->per_rank, n = N * p;
    struct sim_phase *ph = out->phase;
    char note[96];
    uint64_t per_round[64];
    uint64_t rounds = 0;
    if ((err = replay_histogram((uint64_t)n, p, sc->epsilon,
                                out->balance == SORTEX_BALANCE_EXACT, per_round, &rounds)) !=
        UTIL_OK) {
        return err;
    }
    out->rounds = rounds;
    double gather_t = 0, gather_b = 0, split_t = 0, split_mem = 0, split_net = 0;
    double brackets = 40.0 * p; /* struct bracket in sort/select.c */
    int indexed = 0; /* the count's index (keys, not records): the first round's, if it pays */
    for (uint64_t k = 0; k < rounds; k++) {
        double c = (double)per_round[k];
        double index = 0;
        if (k == 0 && sc->elem == 8 && sort_count_index_pays(per_round[k], (uint64_t)N)) {
            indexed = 1;
            index = sim_count_index_seconds(m, N);
        }
        out->candidates += per_round[k];
        double g = m->alpha * 2 * steps(p) + m->beta * (4.0 * p + 16 * c * (p - 1) / p) +
                   1e-9 * m->tuple_ns * c * log2u(c) * share;
        double count = (index + c * sim_count_seconds(m, N / fmax(c, 1), indexed)) * share;
        double reduce = m->alpha * 2 * steps(p) + m->beta * 2 * 8 * c * (p - 1) / p;
        if (k == 0) {
            gather_t = g;
            gather_b = 16 * c * (p - 1) / p;
        } else {
            split_t += g;
            split_net += 16 * c * (p - 1) / p;
        }
        split_t += count + reduce;
        split_net += 2 * 8 * c * (p - 1) / p;
        split_mem = fmax(split_mem, 24 * c); /* the tuples and their counts */
    }
    (void)snprintf(note, sizeof(note), "%.3g candidates in round 1",
                   rounds ? (double)per_round[0] : 0.0);
    set(&ph[SIM_ROW_SAMPLE], gather_t, buffers + 16 * (rounds ? per_round[0] : 0) + brackets,
        gather_b, note);
    (void)snprintf(note, sizeof(note), "%llu rounds, %.3g candidates",
                   (unsigned long long)rounds, (double)out->candidates);
    set(&ph[SIM_ROW_SPLITTERS], split_t, buffers + split_mem + brackets, split_net, note);
    return UTIL_OK;
}

int sim_sort_model(const struct sim_sort_case *sc, const struct sim_machine *m,
                   struct sim_sort_result *out)
{
    if (sc->levels != 0) {
        return sim_level_model(sc, m, out);
    }
    memset(out, 0, sizeof(*out));
    int p = sc->p, err = UTIL_OK;
    enum sortex_balance balance =
        sort_balance_resolve(sc->balance, p, sc->epsilon, sc->oversample);
    out->balance = balance;
    double N = (double)sc->per_rank, E = (double)sc->elem, n = N * p;
    double share = fmax(1.0, (double)sc->ranks_per_node * sc->threads / m->cores);
    double lg = log2u(N);
    struct sim_phase *ph = out->phase;

    /* The buffers every in-memory phase holds: two of the output bound. */
    uint64_t s = sc->oversample ? sc->oversample : sort_default_oversample(p, sc->epsilon);
    double buffers = 2.0 * output_bound(sc, s) * E;

    sim_sort_fixed_rows(sc, m, buffers, out);

    if (balance == SORTEX_BALANCE_SAMPLE) {
        model_sample(sc, m, s, buffers, share, out);
    } else if ((err = model_histogram(sc, m, buffers, share, out)) != UTIL_OK) {
        return err;
    }

    /* The regular sample's splitters are searched for; the histogram's boundaries are the
     * counts its last round made (sort/select.c). */
    int search = balance == SORTEX_BALANCE_SAMPLE;
    set(&ph[SIM_ROW_BUCKET],
        search * 1e-9 * m->probe_ns * 2 * (p - 1) * lg * share + m->alpha * steps(p) +
            m->beta * 8.0 * p * steps(p) / 2,
        buffers, 8.0 * p * steps(p) / 2,
        search ? "binary searches, counts all-to-all" : "counts all-to-all");

    if ((err = sim_sort_exchange(sc, m, sc->backend, &ph[SIM_ROW_EXCHANGE])) != UTIL_OK) {
        return err;
    }
    /* The exchange model shares the node's cores among its ranks itself. */
    ph[SIM_ROW_EXCHANGE].rank_bytes = (uint64_t)buffers;

    double out_n = fmin(output_bound(sc, s), n);
    if (p == 1) {
        set(&ph[SIM_ROW_FINISH], 0, buffers, 0, "one rank: nothing to combine");
    } else if (p <= LOCAL_MERGE_RUNS_PER_THREAD * sc->threads) {
        double ns = m->merge_ns + m->merge_ns_log * (log2u(p) - 1);
        double speed = 1.0 + (sc->threads - 1) * (m->sort_speedup - 1.0);
        set(&ph[SIM_ROW_FINISH], 1e-9 * out_n * ns / speed * share * fmax(1, E / 8), buffers, 0,
            "merge of P runs");
    } else {
        set(&ph[SIM_ROW_FINISH], sim_local_sort_seconds(m, out_n, sc->threads) * share, buffers, 0,
            "re-sort (more runs than the merge pays for)");
    }
    struct sim_phase *tot = &ph[SIM_ROW_TOTAL];
    for (int r = 0; r < SIM_ROW_TOTAL; r++) {
        tot->seconds += ph[r].seconds;
        tot->rank_bytes = ph[r].rank_bytes > tot->rank_bytes ? ph[r].rank_bytes : tot->rank_bytes;
        tot->net_bytes += ph[r].net_bytes;
    }
    (void)snprintf(tot->note, sizeof(tot->note), "exchange %s", sc->backend->name);
    return UTIL_OK;
}

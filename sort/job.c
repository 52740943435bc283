/*
 * sort/job.c: what every phase of a sort shares, below the orchestrator (sort/sortex.c) and
 * the phases: the job's set-up and tear-down, the ranks' agreement after each phase
 * (sort_agree()), the timing of a phase (sort_run_phase()), the element buffers and their
 * faulting-in, the default threads, the sizes the sort reserves for, the global statistics, and
 * the test hooks (SORTEX_FAIL, SORTEX_STALL). Phases call down to it, never up to the
 * orchestrator.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sort/internal.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

int sort_injected(const struct sort_job *job, enum sortex_phase phase)
{
    const struct util_knob_value *v = util_knob(UTIL_KNOB_FAIL); /* PHASE[:RANK] */
    if (!v->valid || strcmp(v->word, sortex_phase_name(phase)) != 0 ||
        (v->nargs > 0 && v->arg[0] != job->world_rank)) {
        return UTIL_OK;
    }
    return util_fail(UTIL_EINJECT, "rank %d: %s: injected failure (SORTEX_FAIL=%s)",
                     job->world_rank, sortex_phase_name(phase), v->text);
}

void sort_stall_at(const struct sort_job *job, const char *point)
{
    const struct util_knob_value *v = util_knob(UTIL_KNOB_STALL); /* POINT:RANK:SECONDS */
    if (!v->valid || v->nargs != 2 || strcmp(v->word, point) != 0 ||
        v->arg[0] != job->world_rank || v->arg[1] < 0) {
        return;
    }
    int seconds = (int)v->arg[1];
    fprintf(stderr, "%s: rank %d pid %ld stalling %d s in %s\n", util_progname(), job->world_rank,
            (long)getpid(), seconds, point);
    fflush(stderr);
    sleep((unsigned)seconds);
}

/* The resident count of buffer @buf (&job->a or &job->b). */
static uint64_t *touched_of(struct sort_job *job, uint64_t **buf)
{
    return buf == &job->a ? &job->touched_a : &job->touched_b;
}

int sort_reserve_room(struct sort_job *job, uint64_t **buf, uint64_t *cap, uint64_t room,
                      uint64_t touch)
{
    uint64_t other = (buf == &job->a) ? job->cap_b : job->cap_a;
    uint64_t limit = job->cfg->mem_limit;
    uint64_t esize = job->rsize;
    if (limit != 0 && (room + other) * esize > limit) {
        return util_fail(UTIL_ENOMEM,
                         "rank %d: %s buffers of %llu bytes exceed --mem-limit (%llu bytes)",
                         job->rank, job->fmt ? "record" : "key",
                         (unsigned long long)((room + other) * esize), (unsigned long long)limit);
    }
    /* The old buffer's contents are never kept (every caller grows a buffer whose elements are
     * done with): freed first, so that old and new never coexist. */
    sortex_free_keys(*buf);
    *buf = NULL;
    *cap = 0;
    *touched_of(job, buf) = 0;
    uint64_t *p = room <= SIZE_MAX / esize ? util_alloc_big((size_t)(room * esize)) : NULL;
    if (p == NULL) {
        return util_fail(UTIL_ENOMEM, "rank %d: out of memory for %llu %s", job->rank,
                         (unsigned long long)room, job->fmt ? "records" : "keys");
    }
    *buf = p;
    *cap = room;
    return sort_reserve(job, buf, cap, touch < room ? touch : room);
}

int sort_reserve(struct sort_job *job, uint64_t **buf, uint64_t *cap, uint64_t n)
{
    if (*cap < n || *buf == NULL) {
        return sort_reserve_room(job, buf, cap, n, n);
    }
    /* Fault the pages in now, all threads at once, on huge pages. Memory first touched by
     * another process's copy into it (Open MPI's single-copy transfers, CMA) was measured
     * here at 1.6-2.4 s for 128 MiB, against 0.1 s for the same exchange into touched
     * memory: those faults are taken 4 KiB at a time inside the kernel's copy. Only what is
     * not resident yet: the rest of the room costs no memory until it is asked for. */
    uint64_t *touched = touched_of(job, buf);
    if (*touched < n) {
        util_pretouch((unsigned char *)*buf + *touched * job->rsize, (n - *touched) * job->rsize,
                      job->threads);
        *touched = n;
    }
    return UTIL_OK;
}

void sort_swap_buffers(struct sort_job *job)
{
    uint64_t *p = job->a, cap = job->cap_a, touched = job->touched_a;
    job->a = job->b;
    job->cap_a = job->cap_b;
    job->touched_a = job->touched_b;
    job->b = p;
    job->cap_b = cap;
    job->touched_b = touched;
}

/*
 * Threads per rank by default, the first that applies: OMP_NUM_THREADS when the user set it;
 * Slurm's CPUs per task (srun -c, SLURM_CPUS_PER_TASK); otherwise the CPUs this rank may run
 * on (its affinity mask, which taskset, mpirun --bind-to, srun and cgroups narrow) shared by
 * the ranks of this node whose masks overlap it. Collective over @comm.
 */
static int default_threads(MPI_Comm comm)
{
    cpu_set_t mine;
    int cpus = 0, sharers = 1;
    if (sched_getaffinity(0, sizeof(mine), &mine) == 0) {
        cpus = CPU_COUNT(&mine);
    } else {
        CPU_ZERO(&mine);
    }
    cpus = cpus > 0 ? cpus : omp_get_num_procs();
    /* Every rank takes part in the node's gather, whatever it decides. */
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        int local = 1, me = 0;
        MPI_Comm_size(node, &local);
        MPI_Comm_rank(node, &me);
        cpu_set_t *all = util_malloc((size_t)local * sizeof(*all));
        int ok = all != NULL;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);
        sharers = local; /* no room to look: assume they all share */
        if (ok) {
            MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE,
                          node);
            sharers = 0;
            for (int r = 0; r < local; r++) {
                cpu_set_t both;
                CPU_AND(&both, &mine, &all[r]);
                sharers += r == me || CPU_COUNT(&both) > 0;
            }
        }
        util_free(all);
        MPI_Comm_free(&node);
    }
    int t;
    if (util_knob(UTIL_KNOB_OMP_THREADS)->set) {
        t = omp_get_max_threads();
    } else if (util_knob(UTIL_KNOB_SLURM_CPUS)->valid) {
        t = (int)util_knob_u64(UTIL_KNOB_SLURM_CPUS);
    } else {
        t = cpus / (sharers > 0 ? sharers : 1);
    }
    return t > 0 ? t : 1;
}

int sort_agree(const struct sort_job *job, int err)
{
    /* The most severe (lowest) code, and the lowest rank holding an error line. */
    int v[2] = {err, util_report_pending() ? job->rank : INT_MAX};
    if (MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MIN, job->comm) != MPI_SUCCESS) {
        util_report_release(true);
        return UTIL_EMPI;
    }
    util_report_release(v[1] == job->rank);
    return v[0];
}

/* Runs one phase: times it, checks the injection hook, agrees, reports progress. */
int sort_run_phase(struct sort_job *job, enum sortex_phase phase, int (*fn)(struct sort_job *))
{
    sort_stall_at(job, sortex_phase_name(phase));
    sort_progress_begin(job, phase);
    double t0 = util_now();
    int err = fn(job);
    sort_progress_end(job);
    if (err == UTIL_OK) {
        err = sort_injected(job, phase);
    }
    job->stats->phase_seconds[phase] += util_now() - t0;
    err = sort_agree(job, err);
    if (job->cfg->progress && job->world_rank == 0) {
        char step[16];
        sort_phase_step(phase, job->stats->external, step, sizeof(step));
        fprintf(stderr, "%s: %-7s %-10s %8.3f s%s\n", util_progname(), step, sortex_phase_name(phase),
                job->stats->phase_seconds[phase], err ? "  (failed)" : "");
    }
    return err;
}


/*
 * The start of every sort, before any MPI call: the job empty, the caller's config (or the
 * defaults) and stats (or a local one, cleared). Checks @comm (its line, if any, printed at
 * once: no communicator, no agreement) and then holds error lines back (util_report_defer())
 * and checks cfg. The entry point checks its own pointers after this, and sort_job_init() agrees.
 */
int sort_job_open(struct sort_job *job, MPI_Comm comm, const struct sortex_config *cfg,
                    struct sortex_stats *stats, const char *fn)
{
    memset(job, 0, sizeof(*job));
    job->comm = MPI_COMM_NULL;
    if (cfg == NULL) {
        sortex_config_default(&job->cfg_default);
        cfg = &job->cfg_default;
    }
    stats = stats ? stats : &job->stats_local;
    memset(stats, 0, sizeof(*stats));
    job->cfg = cfg;
    job->stats = stats;
    int err = sort_comm_check(fn, comm);
    util_report_defer(true); /* one failure, one line: see sort_agree() */
    return err == UTIL_OK ? sort_config_check(fn, cfg) : err;
}

/* Sets up what every sort needs: the private communicator, the ranks' agreement on the
 * arguments (@err: this rank's verdict so far), threads, epsilon, the back-end. All ranks agree
 * on the outcome. With an unusable @comm, returns @err without an MPI call. */
int sort_job_init(struct sort_job *job, MPI_Comm comm, struct sort_args *args, int err)
{
    if (!sort_comm_usable(comm)) {
        return err;
    }
    const struct sortex_config *cfg = job->cfg;
    struct sortex_stats *stats = job->stats;
    if (MPI_Comm_dup(comm, &job->comm) != MPI_SUCCESS) {
        job->comm = MPI_COMM_NULL;
        return util_fail(UTIL_EMPI, "MPI_Comm_dup failed");
    }
    MPI_Comm_rank(job->comm, &job->rank);
    MPI_Comm_size(job->comm, &job->size);
    job->world_rank = job->rank;
    args->cfg = cfg;
    if ((err = sort_args_agree(job->comm, args, err)) != UTIL_OK) {
        return err;
    }
    job->exchange = cfg->exchange ? cfg->exchange : exchange_list()[0];
    job->rsize = sizeof(uint64_t);
    job->mem_type = MPI_UINT64_T;
    const struct util_format *f = cfg->format;
    if (f != NULL && f->byte_key) {
        job->fmt = f;
        job->rsize = f->record_size;
        job->blob_words = sort_blob_words(f->key_size);
        MPI_Type_contiguous((int)f->record_size, MPI_BYTE, &job->mem_type);
        MPI_Type_commit(&job->mem_type);
    }
    /* The default is collective: every rank takes part when any rank asks for it. */
    int dflt = args->any_default_threads ? default_threads(job->comm) : 1;
    job->threads = cfg->threads > 0 ? cfg->threads : dflt;
    job->epsilon = cfg->epsilon > 0 ? cfg->epsilon : 0.1;
    job->balance = sort_balance_resolve(cfg->balance, job->size, job->epsilon, cfg->oversample);
    if (cfg->levels > 1 && cfg->balance == SORTEX_BALANCE_AUTO) {
        job->balance = SORTEX_BALANCE_EXACT; /* levels: the histogram's windows, then the
                                                shift to exact shares (sort/levels.c) */
    }
    job->levels = 1; /* sort_levels_choose_job() decides, once n is known */
    stats->levels = 1;
    stats->balance = job->balance;
    stats->threads = job->threads;
    stats->check = cfg->check ? "passed" : "off";
    size_t p = (size_t)job->size;
    job->send_counts = util_calloc(p, sizeof(uint64_t));
    job->recv_counts = util_calloc(p, sizeof(uint64_t));
    job->splitters = util_calloc(p, sizeof(struct sort_tuple));
    job->cut = util_calloc(p, sizeof(uint64_t));
    if (!job->send_counts || !job->recv_counts || !job->splitters || !job->cut) {
        err = util_fail(UTIL_ENOMEM, "rank %d: out of memory", job->rank);
    }
    /* The sort's parallel regions take job->threads; the caller's setting comes back in
     * sort_job_free(), so a host program's own OpenMP code is left as it was. */
    job->host_threads = omp_get_max_threads();
    omp_set_num_threads(job->threads);
    if (err == UTIL_OK) {
        err = sort_progress_open(job);
    }
    return sort_agree(job, err);
}

void sort_job_free(struct sort_job *job)
{
    sort_progress_close(job);
    if (job->fmt != NULL) {
        MPI_Type_free(&job->mem_type);
    }
    util_free(job->rsample);
    util_free(job->rsplitters);
    util_free(job->send_counts);
    util_free(job->recv_counts);
    util_free(job->splitters);
    util_free(job->cut);
    util_free(job->sample);
    util_free(job->tmp_path);
    if (job->comm != MPI_COMM_NULL) {
        MPI_Comm_free(&job->comm);
    }
    util_report_release(true); /* nothing is left here unless a rank failed after agreeing */
    util_report_defer(false);
    if (job->host_threads > 0) {
        omp_set_num_threads(job->host_threads);
    }
}

/* The largest slice any rank can end with, never more than n: with the regular sample
 * (1 + eps) n/P + P, where eps = (P+1)/S is what the oversampling factor S guarantees (see
 * sample.c); with the histogram, ceil(n/P) + 2 tol, each splitter being at most tol from its
 * target (select.c); exact shares with levels pass through the eps bound on the way. */
uint64_t sort_output_bound(const struct sort_job *job)
{
    uint64_t p = (uint64_t)job->size;
    long double bound;
    if (job->balance == SORTEX_BALANCE_SAMPLE) {
        long double eps = (long double)(p + 1) / (long double)job->oversample;
        bound = ceill((1.0L + eps) * (long double)job->n_total / (long double)p) + p;
    } else {
        /* Exact shares with levels: the levels select within eps before the final shift. */
        int levels = job->cfg->levels > 1 ||
                     (job->cfg->levels == 0 && job->size > SORT_LEVELS_ONE_P);
        uint64_t tol = sort_split_tolerance(job->n_total, job->size, job->epsilon,
                                              job->balance == SORTEX_BALANCE_EXACT && !levels);
        bound = ceill((long double)job->n_total / (long double)p) + 2.0L * tol;
    }
    return bound >= (long double)job->n_total ? job->n_total : (uint64_t)bound;
}

/*
 * The part of a buffer faulted in up front: the rank's input slice or its fair share ceil(n/P),
 * whichever is larger, and a 64th more. Each buffer has room for the output bound ((1 + eps)
 * n/P + 1, which --mem-limit checks up front), but the histogram's splitters land near their
 * targets, so a rank's output rarely passes its share by much: the rest of the room is faulted
 * in (becomes resident) only when a rank learns it receives more (sort_reserve() in the bucket
 * and finish phases), and costs no memory otherwise. Faulting the whole bound in up front cost
 * every rank 2 eps n/P elements it almost never used: 2.36x the input in all for gensort's
 * records at P = 2, against 2.2x asked.
 */
uint64_t sort_first_touch(const struct sort_job *job)
{
    uint64_t p = (uint64_t)job->size;
    uint64_t share = job->n_total / p + (job->n_total % p != 0);
    uint64_t base = share > job->n_local ? share : job->n_local;
    return base + base / 64 + 1;
}

/* The memory one rank's in-memory sort of a file needs: its two buffers with room for the
 * largest output, for records the local sort's tuples, and with root I/O on rank 0 the whole
 * input as it is read. */
uint64_t sort_memory_need(const struct sort_job *job)
{
    uint64_t room = sort_output_bound(job);
    room = room > job->n_local ? room : job->n_local;
    uint64_t need = 2 * room * job->rsize;
    if (job->fmt != NULL) {
        need += local_record_tuples(room, job->fmt) * sizeof(struct local_rec_tuple);
    }
    if (job->cfg->io != SORTEX_IO_MPIIO && job->rank == 0) {
        need += job->n_total * job->rsize;
    }
    return need;
}

/* Chooses the oversampling factor of the regular sample: the user's, or the smallest that
 * guarantees epsilon; and states the bound the splitters will keep. */
void sort_choose_oversample(struct sort_job *job)
{
    if (job->balance != SORTEX_BALANCE_SAMPLE) {
        uint64_t tol = sort_split_tolerance(job->n_total, job->size, job->epsilon,
                                              job->balance == SORTEX_BALANCE_EXACT);
        job->oversample = 0;
        job->stats->oversample = 0;
        job->stats->epsilon_bound =
            job->n_total ? 2.0 * (double)tol * job->size / (double)job->n_total : 0.0;
        return;
    }
    uint64_t s = job->cfg->oversample;
    if (s == 0) {
        s = sort_default_oversample(job->size, job->epsilon);
    }
    job->oversample = s;
    job->stats->oversample = s;
    job->stats->epsilon_bound = (double)(job->size + 1) / (double)s;
}

/* Global figures every rank agrees on: imbalance and peak memory. */
void sort_finish_stats(struct sort_job *job)
{
    struct sortex_stats *st = job->stats;
    struct rusage ru;
    uint64_t max_out = job->n_out;
    MPI_Allreduce(MPI_IN_PLACE, &max_out, 1, MPI_UINT64_T, MPI_MAX, job->comm);
    st->n_total = job->n_total;
    st->n_out = job->n_out;
    st->imbalance = job->n_total ? (double)max_out * job->size / (double)job->n_total : 1.0;
    st->samples = job->nsample;
    st->buffer_bytes = (job->cap_a + job->cap_b) * job->rsize;
    st->total_seconds = 0;
    for (int p = 0; p < SORTEX_PHASE_COUNT; p++) {
        st->total_seconds += st->phase_seconds[p];
    }
    if (job->levels <= 1) {
        /* One level: the whole sort's group (the levels' driver fills them otherwise). */
        struct sortex_level_stats *ls = &st->level[0];
        ls->groups = job->size;
        ls->ranks = job->size;
        ls->exchange = st->exchange_name;
        ls->messages = st->exchange.messages;
        ls->bytes_sent = st->exchange.bytes_sent;
        ls->seconds = 0;
        for (int p = SORTEX_PHASE_SAMPLE; p <= SORTEX_PHASE_FINISH; p++) {
            ls->seconds += st->phase_seconds[p];
        }
        st->levels = 1;
    }
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        st->peak_rss_kib = ru.ru_maxrss;
    }
}

/* What a phase asks of the job about its buckets: how many, each boundary's target rank and
 * the tolerance, one level's or the whole sort's (sort/internal.h). */
int sort_buckets(const struct sort_job *job)
{
    return job->level != NULL ? job->level->k : job->size;
}

uint64_t sort_target(const struct sort_job *job, int j)
{
    const struct sort_level *lv = job->level;
    if (lv == NULL) {
        return sort_split_target(j, job->n_total, job->size);
    }
    return sort_level_target(lv->n_world, lv->p_world,
                             lv->first_rank + sort_level_first(j, job->size, lv->k),
                             lv->group_offset, job->n_total);
}

uint64_t sort_tolerance(const struct sort_job *job)
{
    /* With levels, exact shares come from the final shift: every level selects within eps. */
    const struct sort_level *lv = job->level;
    return sort_split_tolerance(lv != NULL ? lv->n_world : job->n_total,
                                lv != NULL ? lv->p_world : job->size, job->epsilon,
                                lv == NULL && job->balance == SORTEX_BALANCE_EXACT);
}

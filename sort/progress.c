/*
 * sort/progress.c: --progress, what a long sort is doing while it does it.
 *
 * Rank 0 reports for the job: every phase's time when it ends (sort/sortex.c), and while a
 * phase runs longer than SORT_PROGRESS_PERIOD, a line every period with the phase's elapsed
 * time and, where the phase can count its work (bytes read or written, keys sorted), the
 * fraction done, the rate and the time left. A phase whose work is one opaque call (the local
 * sort's single vqsort of a rank's keys) gives an estimate instead, from the rate this process
 * measured for its kernel (local_sort_estimate()), and says it is one. A reporter
 * thread on rank 0 does the printing; the phases only add to an atomic counter.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "sort/internal.h"
#include "util/alloc.h"
#include "util/util.h"

/* Seconds between two reports of a running phase. */
#define SORT_PROGRESS_PERIOD 2.0

struct sort_progress {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int quit;
    /* The running phase; phase < 0 when none. */
    int phase;
    int external; /* the job runs the external sort (the step labels) */
    double t0;
    uint64_t total;      /* units of the phase; 0 = not counted */
    uint64_t done;       /* units done so far (atomic) */
    double estimate;     /* expected seconds when not counted; 0 = unknown */
    const char *unit;    /* "bytes" or "keys" */
};

/* "1.2 GB", "340 MB", "12 M keys": a quantity of @unit for a progress line. */
static void fmt_amount(char *buf, size_t cap, double v, const char *unit)
{
    if (unit[0] == 'b') {
        (void)snprintf(buf, cap, v >= 1e9 ? "%.1f GB" : "%.0f MB", v >= 1e9 ? v / 1e9 : v / 1e6);
    } else {
        (void)snprintf(buf, cap, "%.1f M %s", v / 1e6, unit);
    }
}

/* One line about the running phase. */
static void report(struct sort_progress *p)
{
    double el = util_now() - p->t0;
    uint64_t done = __atomic_load_n(&p->done, __ATOMIC_RELAXED);
    char line[256];
    char step[16];
    sort_phase_step((enum sortex_phase)p->phase, p->external, step, sizeof(step));
    int n = snprintf(line, sizeof(line), "%s: %-7s %-10s %8.1f s ...", util_progname(), step,
                     sortex_phase_name((enum sortex_phase)p->phase), el);
    if (p->total > 0 && done > 0) {
        char a[32], b[32], r[32];
        double rate = (double)done / el;
        fmt_amount(a, sizeof(a), (double)done, p->unit);
        fmt_amount(b, sizeof(b), (double)p->total, p->unit);
        fmt_amount(r, sizeof(r), rate, p->unit);
        double left = rate > 0 ? (double)(p->total - (done < p->total ? done : p->total)) / rate : 0;
        (void)snprintf(line + n, sizeof(line) - (size_t)n, "  %3.0f%%  %s of %s  %s/s  ETA %.1f s",
                       100.0 * (double)done / (double)p->total, a, b, r, left);
    } else if (p->estimate > 0 && el < p->estimate) {
        (void)snprintf(line + n, sizeof(line) - (size_t)n,
                       "  about %.0f%% (estimated %.1f s in all)  ETA about %.1f s",
                       100.0 * el / p->estimate, p->estimate, p->estimate - el);
    } else if (p->estimate > 0) {
        (void)snprintf(line + n, sizeof(line) - (size_t)n,
                       "  longer than the %.1f s estimated (a busy machine?)", p->estimate);
    } else {
        (void)snprintf(line + n, sizeof(line) - (size_t)n, "  running");
    }
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static void *reporter(void *arg)
{
    struct sort_progress *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->quit) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)SORT_PROGRESS_PERIOD;
        int phase = p->phase;
        double t0 = p->t0;
        (void)pthread_cond_timedwait(&p->cv, &p->mu, &until);
        /* The same phase still running a whole period later: say how it goes. */
        if (!p->quit && p->phase >= 0 && p->phase == phase && p->t0 == t0 &&
            util_now() - p->t0 >= SORT_PROGRESS_PERIOD) {
            report(p);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int sort_progress_open(struct sort_job *job)
{
    if (!job->cfg->progress || job->rank != 0) {
        return UTIL_OK;
    }
    struct sort_progress *p = util_calloc(1, sizeof(*p));
    if (p == NULL) {
        return UTIL_OK; /* no reports, no failure */
    }
    p->phase = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->thread, NULL, reporter, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        util_free(p);
        return UTIL_OK;
    }
    job->progress = p;
    return UTIL_OK;
}

void sort_progress_close(struct sort_job *job)
{
    struct sort_progress *p = job->progress;
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    util_free(p);
    job->progress = NULL;
}

void sort_progress_begin(struct sort_job *job, enum sortex_phase phase)
{
    struct sort_progress *p = job->progress;
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->phase = (int)phase;
    p->external = job->stats->external;
    p->t0 = util_now();
    p->total = 0;
    p->estimate = 0;
    p->unit = "keys";
    __atomic_store_n(&p->done, 0, __ATOMIC_RELAXED);
    pthread_cond_signal(&p->cv); /* the period starts now */
    pthread_mutex_unlock(&p->mu);
}

void sort_progress_measure(struct sort_job *job, uint64_t total, const char *unit,
                           double estimate)
{
    struct sort_progress *p = job->progress;
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->total = total;
    p->unit = unit;
    p->estimate = estimate;
    pthread_mutex_unlock(&p->mu);
}

uint64_t *sort_progress_counter(struct sort_job *job)
{
    struct sort_progress *p = job->progress;
    return p != NULL ? &p->done : NULL;
}

void sort_progress_add(struct sort_job *job, uint64_t units)
{
    struct sort_progress *p = job->progress;
    if (p != NULL) {
        __atomic_add_fetch(&p->done, units, __ATOMIC_RELAXED);
    }
}

void sort_progress_end(struct sort_job *job)
{
    struct sort_progress *p = job->progress;
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->phase = -1;
    pthread_mutex_unlock(&p->mu);
}

void sort_phase_step(enum sortex_phase phase, int external, char *buf, size_t cap)
{
    if (phase == SORTEX_PHASE_CHECK) {
        (void)snprintf(buf, cap, "[check]"); /* it runs twice, outside the numbering */
    } else if (external) {
        /* The external sort: the sample, then its two passes. */
        (void)snprintf(buf, cap, phase == SORTEX_PHASE_DISTRIBUTE     ? "[pass 1]"
                                 : phase == SORTEX_PHASE_SORT_BUCKETS ? "[pass 2]"
                                                                      : "[sample]");
    } else {
        (void)snprintf(buf, cap, "[%d/%d]", (int)phase + 1, SORTEX_PHASE_CHECK);
    }
}

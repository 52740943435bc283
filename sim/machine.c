/*
 * sim/machine.c: the machine sortex-sched prices with (--machine, SORTEX_MACHINE, the user's
 * file, else the built-in constants; exchange/machine.h) and its measurement, sortex-sched
 * --calibrate.
 */
#include "sim/sim.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exchange/machine.h"
#include "sim/sortmodel.h"
#include "util/alloc.h"
#include "util/cpu.h"
#include "util/util.h"

int sim_machine_setup(struct exchange_machine *m, const char *path, double alpha, double beta,
                      struct exchange_model_case *c)
{
    int err = exchange_machine_load_with(m, path, sim_machine_line, NULL);
    if (err != UTIL_OK) {
        return err;
    }
    c->machine = m;
    c->alpha = isnan(alpha) ? m->alpha : alpha;
    c->beta = isnan(beta) ? m->beta : beta;
    return UTIL_OK;
}

/* ---- --calibrate ------------------------------------------------------------------------- */

/*
 * What --calibrate measures, and how. Every figure is the median (or, for the copies, the
 * fastest) of repeated trials, so that a neighbour's burst moves it little.
 *   alpha        one-way time of an 8-byte message between ranks 0 and 1;
 *   beta         one-way time a byte of a 64 MiB message, alpha removed; beta_cache the same
 *                at 256 KiB (both buffers in the cache);
 *   duplex       ranks 0 and 1 exchanging 16 MiB both ways at once against one way: 0 when both
 *                directions run at full rate, 1 when they share it;
 *   sync         a barrier of as many ranks as a node has cores (the others sleep meanwhile);
 *   switch_s     a barrier of all ranks of a crowded node, per rank over the cores (when the
 *                job has more ranks on a node than it has cores; else the built-in figure);
 *   copy         memcpy of 128 MiB, copy_cache of 256 KiB, on rank 0;
 *   shm, ranks_per_node, cores, llc_bytes  where the ranks run: one node or several (by
 *                processor name), rank 0's node's ranks, cores and last-level cache.
 * Ranks that take no part in a measurement wait in a barrier they test once a millisecond, so
 * that on a node with more ranks than cores they do not take the measuring ranks' cores.
 */

#define CAL_BIG    ((int)(64 << 20))
#define CAL_SMALL  ((int)(256 << 10))
#define CAL_DUPLEX ((int)(16 << 20))

/* Waits in a barrier of @comm without spinning: MPI_Ibarrier, tested once a millisecond. */
static void idle_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(comm, &req);
    while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median time of a barrier of @comm over @trials trials of @reps barriers. */
static double barrier_time(MPI_Comm comm, int trials, int reps)
{
    double t[32];
    trials = trials < 32 ? trials : 32;
    for (int k = 0; k < trials; k++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            MPI_Barrier(comm);
        }
        t[k] = (MPI_Wtime() - t0) / reps;
    }
    qsort(t, (size_t)trials, sizeof(double), cmp_double);
    return t[trials / 2];
}

/* The fastest of @reps memcpy of @bytes from @src to @dst, seconds a byte. */
static double copy_time(char *dst, const char *src, size_t bytes, int reps)
{
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        double t0 = util_now();
        memcpy(dst, src, bytes);
        double t = util_now() - t0;
        best = t < best ? t : best;
    }
    return best / (double)bytes;
}

/* Where the ranks run: *@shm 1 when every rank shares rank 0's processor name, *@on_node the
 * ranks on rank 0's node, *@nodes the distinct names. Collective. */
static void placement(MPI_Comm comm, int *shm, int *on_node, int *nodes)
{
    int p, len;
    char mine[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_Comm_size(comm, &p);
    MPI_Get_processor_name(mine, &len);
    char *all = util_calloc((size_t)p, MPI_MAX_PROCESSOR_NAME);
    if (all == NULL) {
        *shm = 1, *on_node = p, *nodes = 1; /* a guess; the file says one node */
        return;
    }
    MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  comm);
    *on_node = 0;
    *nodes = 0;
    for (int i = 0; i < p; i++) {
        const char *name = all + (size_t)i * MPI_MAX_PROCESSOR_NAME;
        *on_node += strcmp(name, all) == 0;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen = strcmp(name, all + (size_t)j * MPI_MAX_PROCESSOR_NAME) == 0;
        }
        *nodes += !seen;
    }
    *shm = *nodes == 1;
    util_free(all);
}

/* The link between ranks 0 and 1: alpha, beta, beta_cache, duplex into @m; the other ranks
 * idle. Returns 0, or UTIL_ENOMEM (agreed by all ranks). */
static int measure_link(MPI_Comm world, int rank, struct exchange_machine *m)
{
    MPI_Comm pair;
    MPI_Comm_split(world, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    char *buf = rank < 2 ? util_malloc(CAL_BIG) : NULL;
    int ok = rank >= 2 || buf != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, world);
    if (ok && rank < 2) {
        memset(buf, 1, CAL_BIG);
        (void)sim_ping_pong_time(pair, buf, 8, 3, 100, 0); /* warm-up */
        double lat = sim_ping_pong_time(pair, buf, 8, 31, 1000, 0);
        double big = sim_ping_pong_time(pair, buf, CAL_BIG, 7, 2, 0);
        double small = sim_ping_pong_time(pair, buf, CAL_SMALL, 15, 20, 0);
        double one = sim_ping_pong_time(pair, buf, CAL_DUPLEX, 7, 2, 0);
        double two = sim_ping_pong_time(pair, buf, CAL_DUPLEX, 7, 2, 1);
        m->alpha = lat;
        m->beta = fmax(big - lat, 0) / CAL_BIG;
        /* Within the cache a byte costs at most what it does beyond (a busy moment can make
         * the small message look slower). */
        m->beta_cache = fmin(fmax(small - lat, 0) / CAL_SMALL, m->beta);
        m->duplex = fmin(1, fmax(0, (two - one) / fmax(one - lat, 1e-12)));
    }
    if (rank < 2 && pair != MPI_COMM_NULL) {
        MPI_Comm_free(&pair);
    }
    idle_barrier(world);
    util_free(buf);
    if (!ok) {
        return util_fail(UTIL_ENOMEM, "rank %d: out of memory for the calibration", rank);
    }
    MPI_Bcast(m, (int)sizeof(*m), MPI_BYTE, 0, world);
    return UTIL_OK;
}

/* Synchronisation: a barrier of as many ranks as cores (sync), and of all when a node holds
 * more ranks than cores (switch_s). */
static void measure_sync(MPI_Comm world, int rank, int size, int on_node,
                         struct exchange_machine *m)
{
    int few = size < m->cores ? size : m->cores;
    MPI_Comm part;
    MPI_Comm_split(world, rank < few ? 0 : MPI_UNDEFINED, rank, &part);
    if (rank < few) {
        m->sync = few > 1 ? barrier_time(part, 15, 200) : 0;
        MPI_Comm_free(&part);
    }
    idle_barrier(world);
    MPI_Bcast(&m->sync, 1, MPI_DOUBLE, 0, world);
    if (on_node > m->cores) {
        m->switch_s = barrier_time(world, 9, 50) * m->cores / on_node;
    }
}

int sim_calibrate(const char *dir, int *argc, char ***argv)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        return util_fail(UTIL_EMPI, "MPI_Init failed");
    }
    int rank, size, err = UTIL_OK, shm, on_node, nodes;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct sim_machine sm;
    sim_machine_default(&sm);
    struct exchange_machine *m = &sm.ex;
    placement(MPI_COMM_WORLD, &shm, &on_node, &nodes);
    m->shm = shm;
    m->ranks_per_node = shm ? 1 : on_node;
    m->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    MPI_Bcast(&m->cores, 1, MPI_INT, 0, MPI_COMM_WORLD);
    m->llc_bytes = (double)util_caches()->l3;
    m->eager_bytes = shm ? 4096 : 65536; /* Open MPI's vader and tcp eager limits */
    if (size >= 2 && (err = measure_link(MPI_COMM_WORLD, rank, m)) == UTIL_OK) {
        measure_sync(MPI_COMM_WORLD, rank, size, on_node, m);
    }
    /* Copies and the compute constants on rank 0, the others sleeping. */
    if (err == UTIL_OK && rank == 0) {
        char *a = util_alloc_big((size_t)128 << 20), *b = util_alloc_big((size_t)128 << 20);
        if (a == NULL || b == NULL) {
            err = util_fail(UTIL_ENOMEM, "out of memory for the calibration");
        } else {
            util_pretouch(a, (size_t)128 << 20, 1);
            util_pretouch(b, (size_t)128 << 20, 1);
            m->copy = copy_time(b, a, (size_t)128 << 20, 3);
            m->copy_cache = fmin(copy_time(b, a, CAL_SMALL, 200), m->copy);
        }
        util_free_big(a);
        util_free_big(b);
        if (err == UTIL_OK) {
            err = sim_machine_calibrate(&sm, *dir != '\0' ? dir : "/tmp");
        }
    }
    if (err == UTIL_OK || rank != 0) {
        idle_barrier(MPI_COMM_WORLD);
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err == UTIL_OK && rank == 0) {
        char host[MPI_MAX_PROCESSOR_NAME] = "", stamp[32] = "";
        int len;
        MPI_Get_processor_name(host, &len);
        time_t now = time(NULL);
        struct tm tm;
        if (gmtime_r(&now, &tm) != NULL) {
            (void)strftime(stamp, sizeof(stamp), "%Y-%m-%d", &tm);
        }
        sm.alpha = m->alpha;
        sm.beta = m->beta;
        sm.cores = m->cores;
        m->source = EXCHANGE_MACHINE_FILE_GIVEN;
        (void)snprintf(m->origin, sizeof(m->origin),
                       "sortex-sched --calibrate, %s, %d ranks on %d node(s) from %s (%s)%s", stamp,
                       size, nodes, host, util_cpu_model(),
                       size < 2 ? "; one rank: alpha, beta and sync are the built-in ones" : "");
        printf("# The machine of sortex's cost models (exchange/machine.h), measured by "
               "sortex-sched --calibrate.\n"
               "# Give it to sortex-sched --machine, or put it in ~/.config/sortex/machine.txt "
               "(or name it in\n# SORTEX_MACHINE) for sortex --exchange auto. The factor lines "
               "are the back-ends' fits of a project\n# machine; bench/run --suites xmodel refits "
               "them from this machine's exchange benchmark.\n");
        sim_machine_print(stdout, &sm);
    }
    MPI_Finalize();
    return err;
}

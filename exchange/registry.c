/*
 * exchange/registry.c: the table of exchange back-ends and what they share (see exchange.h):
 * lookup by name, the list for --exchange help and error lines, the int limit of one MPI call
 * and the chunks it cuts messages into, the checks of the arguments every run makes, the
 * receive buffer of a rank whose room is too small (it still takes part, so no peer waits), the
 * abort of a back-end that cannot go on once its peers are committed, and whether to post every
 * round at once.
 */
#include "exchange/exchange.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

/* One line per back-end, NAME for the `const struct exchange_ops exchange_NAME` its file defines;
 * the first is the default. The list declares them and fills the table. */
#define EXCHANGE_BACKENDS(X)                                                                       \
    X(alltoallv)                                                                                   \
    X(direct)                                                                                      \
    X(forward)                                                                                     \
    X(fullduplex)                                                                                  \
    X(pairwise)                                                                                    \
    X(shift)                                                                                       \
    X(grid)                                                                                        \
    X(hypercube)                                                                                   \
    X(transpose)                                                                                   \
    X(sparse)

#define DECLARE(name) extern const struct exchange_ops exchange_##name;
EXCHANGE_BACKENDS(DECLARE)
#undef DECLARE

#define ENTRY(name) &exchange_##name,
static const struct exchange_ops *const registry[] = {EXCHANGE_BACKENDS(ENTRY) NULL};
#undef ENTRY

/* The back-end called @name, or NULL (a linear search: the table is short). */
const struct exchange_ops *exchange_find(const char *name)
{
    for (size_t i = 0; registry[i] != NULL; i++) {
        if (strcmp(registry[i]->name, name) == 0) {
            return registry[i];
        }
    }
    return NULL;
}

const struct exchange_ops *const *exchange_list(void)
{
    return registry;
}

/* "alltoallv, direct, ...": the names for an error line, cut at @cap. */
void exchange_names(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; registry[i] != NULL && used < cap; i++) {
        int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", registry[i]->name);
        if (n < 0) {
            break;
        }
        used += (size_t)n;
    }
}

void exchange_print_help(FILE *out)
{
    fprintf(out, "exchange back-ends (--exchange NAME):\n");
    for (size_t i = 0; registry[i] != NULL; i++) {
        fprintf(out, "%-12s %s\n", registry[i]->name, registry[i]->summary);
    }
}

/* INT_MAX, or the lower SORTEX_INT_LIMIT the tests set to take the large-message paths. */
uint64_t exchange_int_limit(void)
{
    return util_knob_u64(UTIL_KNOB_INT_LIMIT);
}

/* The int limit rounded down to whole elements (an element never straddles two chunks). */
uint64_t exchange_chunk_bytes(size_t elem_size)
{
    uint64_t limit = exchange_int_limit(), e = elem_size > 0 ? elem_size : 1;
    return limit >= e ? limit - limit % e : limit;
}

int exchange_check_args(const struct exchange_args *args, int rank)
{
    if (args->elem_size == 0) {
        return util_fail(UTIL_EUSAGE,
                         "rank %d: exchange: an element needs at least one byte (elem_size 0)",
                         rank);
    }
    return UTIL_OK;
}

/* The caller's buffer when it holds @need elements; otherwise a scratch buffer the back-end
 * receives into and throws away (the error is set, the exchange goes on to its end). */
void *exchange_recv_target(const struct exchange_args *args, uint64_t need, int rank, void **drain,
                           int *err)
{
    if (need <= args->recv_cap) {
        return args->recv;
    }
    *err = util_fail(UTIL_EUSAGE, "rank %d: exchange: receive buffer too small (%llu > %llu)",
                     rank, (unsigned long long)need, (unsigned long long)args->recv_cap);
    *drain = util_malloc(need ? need * args->elem_size : 1);
    if (*drain == NULL) {
        exchange_abort_midway(args->comm, rank, "out of memory to drain what peers send");
    }
    return *drain;
}

/* One line, then MPI_Abort: returning would leave the peers waiting on this rank. */
void exchange_abort_midway(MPI_Comm comm, int rank, const char *what)
{
    util_fail(UTIL_ENOMEM, "rank %d: exchange: %s; peers may be waiting on this rank, so the "
                           "job is aborted",
              rank, what);
    MPI_Abort(comm, UTIL_EXIT_RUNTIME);
    abort(); /* MPI_Abort does not return; if it ever did, neither may this */
}

int exchange_post_all(uint64_t largest)
{
    /* Once per process: every exchange asks, and omp_get_num_procs() is a system call. */
    static int oversubscribed = -1; /* -1: not known yet */
    if (oversubscribed < 0) {
        uint64_t local = util_knob_u64(UTIL_KNOB_LOCAL_SIZE);
        oversubscribed = local > (uint64_t)omp_get_num_procs();
    }
    return oversubscribed || largest < EXCHANGE_POST_ALL_BELOW;
}

void exchange_stats_extra(struct exchange_stats *stats, const char *name, double value)
{
    if (stats->nextra < EXCHANGE_MAX_EXTRA) {
        stats->extra[stats->nextra].name = name;
        stats->extra[stats->nextra].value = value;
        stats->nextra++;
    }
}

uint64_t exchange_displs(const uint64_t *counts, int n, uint64_t *displs)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = sum;
        sum += counts[i];
    }
    return sum;
}

/*
 * sort/stats.c: the --stats JSON document and the -v summary. Both are collective: per-rank
 * figures are reduced (min/avg/max) or gathered to rank 0, which prints.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exchange/machine.h"
#include "sort/internal.h"
#include "sort/names.h"
#include "util/alloc.h"
#include "util/temp.h"
#include "util/json.h"
#include "util/util.h"

/* min, avg, max over ranks of one double. */
struct spread {
    double min, avg, max;
};

/* Which machine the exchange's cost models priced with, on rank 0: the lookup the sort made
 * (exchange_machine_load()), described; a file that could not be read is said so. */
static void machine_used(char *buf, size_t cap)
{
    struct exchange_machine m;
    if (exchange_machine_load_quiet(&m, NULL) != UTIL_OK) { /* the sort warned already */
        (void)snprintf(buf, cap, "built-in constants (the machine file %s could not be read)",
                       m.path);
        return;
    }
    exchange_machine_describe(&m, buf, cap);
    if (m.source == EXCHANGE_MACHINE_BUILTIN && strlen(buf) + 80 < cap) {
        strcat(buf, "; measure yours with sortex-sched --calibrate");
    }
}

static struct spread reduce_spread(MPI_Comm comm, double v)
{
    struct spread s;
    int p;
    MPI_Comm_size(comm, &p);
    MPI_Allreduce(&v, &s.min, 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(&v, &s.max, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&v, &s.avg, 1, MPI_DOUBLE, MPI_SUM, comm);
    s.avg /= p;
    return s;
}

static void print_spread(FILE *f, const char *name, struct spread s, const char *tail)
{
    fprintf(f, "\"%s\": {\"min\": %.6f, \"avg\": %.6f, \"max\": %.6f}%s", name, s.min, s.avg, s.max,
            tail);
}

/* A spread of counts: the extremes are integers, the average is not. */
static void print_count_spread(FILE *f, const char *name, struct spread s, const char *tail)
{
    fprintf(f, "\"%s\": {\"min\": %.0f, \"avg\": %.3f, \"max\": %.0f}%s", name, s.min, s.avg,
            s.max, tail);
}

static void mpi_library(char *lib, size_t cap)
{
    char buf[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(buf, &len);
    char *cut = strpbrk(buf, ",\n");
    if (cut != NULL) {
        *cut = '\0';
    }
    (void)snprintf(lib, cap, "%s", buf);
}

/* What the JSON document says of the ranks: reduced over all of them, or gathered to rank 0. */
struct json_figures {
    struct spread phase[SORTEX_PHASE_COUNT], total, exch, nout;
    uint64_t sums[3];  /* bytes sent, received, messages: summed */
    uint64_t maxes[2]; /* the largest message, rounds: the largest */
    /* The external sort's per-rank figures. */
    struct spread budget, need, temp, pass[2][2];
    double extra[SORTEX_EXCHANGE_MAX_EXTRA];
    /* The levels: how many, and level by level the groups, the ranks of a rank's group,
     * messages, bytes and time; every message a rank sent at any level; the final shift. */
    int nlev;
    struct spread lev[SORTEX_LEVELS_MAX][5], starts, shifted;
    /* Rank 0 only: every rank's peak RSS, host and output count. */
    long *rss_all;
    char *hosts;
    uint64_t *nout_all;
};

/* The arguments, checked on every rank, then agreed (one line for the job). */
static int json_args(MPI_Comm comm, const struct sortex_config **cfg, struct sortex_config *dflt,
                     const struct sortex_stats *st, const char *path)
{
    const char *fn = "sortex_stats_write_json";
    if (sort_comm_check(fn, comm) != UTIL_OK) {
        return UTIL_EUSAGE;
    }
    if (*cfg == NULL) {
        sortex_config_default(dflt);
        *cfg = dflt;
    }
    util_report_defer(true);
    int err = sort_config_check(fn, *cfg);
    if (err == UTIL_OK && (st == NULL || path == NULL)) {
        err = util_error("%s: a NULL argument (%s)", fn, st == NULL ? "stats" : "path");
    }
    struct sort_args args = {
        .fn = fn, .call = SORT_CALL_JSON, .cfg = *cfg, .path_name = {"path"}, .path = {path}};
    err = sort_args_agree(comm, &args, err);
    util_report_defer(false);
    return err;
}

/* The reductions every rank takes part in. */
static void json_reduce(MPI_Comm comm, const struct sortex_stats *st, struct json_figures *g)
{
    for (int i = 0; i < SORTEX_PHASE_COUNT; i++) {
        g->phase[i] = reduce_spread(comm, st->phase_seconds[i]);
    }
    g->total = reduce_spread(comm, st->total_seconds);
    g->exch = reduce_spread(comm, st->exchange.seconds);
    g->nout = reduce_spread(comm, (double)st->n_out);
    g->sums[0] = st->exchange.bytes_sent;
    g->sums[1] = st->exchange.bytes_recv;
    g->sums[2] = st->exchange.messages;
    g->maxes[0] = st->exchange.max_message;
    g->maxes[1] = st->exchange.rounds;
    MPI_Allreduce(MPI_IN_PLACE, g->sums, 3, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, g->maxes, 2, MPI_UINT64_T, MPI_MAX, comm);
    g->budget = reduce_spread(comm, (double)st->mem_budget);
    g->need = reduce_spread(comm, (double)st->mem_need);
    g->temp = reduce_spread(comm, (double)st->temp_bytes);
    for (int i = 0; i < 4; i++) {
        g->pass[i / 2][i % 2] = reduce_spread(comm, (double)st->pass_bytes[i / 2][i % 2]);
    }
    for (int i = 0; i < SORTEX_EXCHANGE_MAX_EXTRA; i++) {
        g->extra[i] = i < st->exchange.nextra ? st->exchange.extra[i].value : 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, g->extra, SORTEX_EXCHANGE_MAX_EXTRA, MPI_DOUBLE, MPI_MAX, comm);
    /* Level by level, and every message a rank sent at any level. */
    g->nlev = st->levels >= 1 && st->levels <= SORTEX_LEVELS_MAX ? st->levels : 1;
    double startups = 0;
    for (int l = 0; l < g->nlev; l++) {
        const struct sortex_level_stats *ls = &st->level[l];
        g->lev[l][0] = reduce_spread(comm, (double)ls->groups);
        g->lev[l][1] = reduce_spread(comm, (double)ls->ranks);
        g->lev[l][2] = reduce_spread(comm, (double)ls->messages);
        g->lev[l][3] = reduce_spread(comm, (double)ls->bytes_sent);
        g->lev[l][4] = reduce_spread(comm, ls->seconds);
        startups += (double)ls->messages;
    }
    g->starts = reduce_spread(comm, startups);
    g->shifted = reduce_spread(comm, (double)st->shifted);
}

/* The per-rank figures gathered to rank 0 (g's arrays, freed by the caller). Collective. */
static int json_gather(MPI_Comm comm, int rank, int p, const struct sortex_stats *st,
                       struct json_figures *g)
{
    long rss = st->peak_rss_kib;
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int hlen = 0;
    MPI_Get_processor_name(host, &hlen);
    if (rank == 0) {
        g->rss_all = util_malloc((size_t)p * sizeof(long));
        g->hosts = util_malloc((size_t)p * MPI_MAX_PROCESSOR_NAME);
        g->nout_all = util_malloc((size_t)p * sizeof(uint64_t));
    }
    int ok = rank != 0 || (g->rss_all && g->hosts && g->nout_all);
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok) {
        return rank == 0 ? util_fail(UTIL_ENOMEM, "stats: out of memory") : UTIL_ENOMEM;
    }
    MPI_Gather(&rss, 1, MPI_LONG, g->rss_all, 1, MPI_LONG, 0, comm);
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, g->hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
               0, comm);
    MPI_Gather(&st->n_out, 1, MPI_UINT64_T, g->nout_all, 1, MPI_UINT64_T, 0, comm);
    return UTIL_OK;
}

/* The document's head: the program, the job and the sort's settings. */
static void json_head(FILE *f, const struct sortex_config *cfg, const struct sortex_stats *st,
                      int p, const char *input, const char *output, const char *command)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    mpi_library(lib, sizeof(lib));
    const struct exchange_ops *ex = cfg->exchange ? cfg->exchange : exchange_list()[0];
    char stamp[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) != NULL) {
        (void)strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    fprintf(f, "{\"sortex\": \"%s\", \"commit\": \"%s\", \"time\": \"%s\", \"command\": ",
            sortex_version(), util_commit(), stamp);
    util_json_string(f, command ? command : "");
    fprintf(f, ",\n \"mpi_library\": ");
    util_json_string(f, lib);
    fprintf(f, ", \"allocator\": ");
    util_json_string(f, util_allocator_name());
    fprintf(f, ",\n \"input\": ");
    util_json_string(f, input ? input : "");
    fprintf(f, ", \"output\": ");
    util_json_string(f, output ? output : "");
    fprintf(f, ", \"exchange\": \"%s\", \"exchange_auto\": %s, \"exchange_predicted_s\": %.9g, "
               "\"key_type\": \"%s\", \"record_size\": %zu, \"check\": \"%s\",\n",
            st->exchange_name ? st->exchange_name : ex->name,
            cfg->exchange_auto ? "true" : "false", st->exchange_predicted,
            cfg->format ? cfg->format->name : "u64",
            cfg->format ? cfg->format->record_size : sizeof(uint64_t), st->check ? st->check : "off");
    char machine[768];
    machine_used(machine, sizeof(machine));
    fprintf(f, " \"exchange_machine\": ");
    util_json_string(f, machine);
    fprintf(f, ",\n");
    fprintf(f, " \"n\": %llu, \"P\": %d, \"threads\": %d, \"epsilon\": %g, \"balance\": \"%s\", "
               "\"balance_auto\": %s, "
               "\"oversample\": %llu, \"samples\": %llu, \"splitter_rounds\": %llu, "
               "\"epsilon_bound\": %.6f, \"finish\": \"%s\",\n",
            (unsigned long long)st->n_total, p, st->threads, cfg->epsilon > 0 ? cfg->epsilon : 0.1,
            util_name_of(sort_balance_names, (int)st->balance),
            cfg->balance == SORTEX_BALANCE_AUTO ? "true" : "false",
            (unsigned long long)st->oversample, (unsigned long long)st->samples,
            (unsigned long long)st->splitter_rounds, st->epsilon_bound,
            st->finish ? st->finish : "none");
}

/* The phases' times and the external sort's figures. */
static void json_phases(FILE *f, const struct sortex_stats *st, const struct json_figures *g)
{
    fprintf(f, " \"phases\": {");
    for (int i = 0; i < SORTEX_PHASE_COUNT; i++) {
        print_spread(f, sortex_phase_name((enum sortex_phase)i), g->phase[i],
                     i + 1 < SORTEX_PHASE_COUNT ? ", " : "},\n ");
    }
    print_spread(f, "total", g->total, ",\n");
    fprintf(f, " \"external\": %s, \"mem_source\": \"%s\", ", st->external ? "true" : "false",
            st->mem_source ? st->mem_source : "none");
    print_count_spread(f, "mem_budget", g->budget, ", ");
    print_count_spread(f, "mem_need", g->need, ",\n ");
    fprintf(f, "\"buckets\": %llu, \"split_buckets\": %llu, ", (unsigned long long)st->buckets,
            (unsigned long long)st->split_buckets);
    print_count_spread(f, "temp_bytes", g->temp, ",\n \"passes\": [");
    for (int i = 0; i < 2; i++) {
        fprintf(f, "%s{", i ? ", " : "");
        print_count_spread(f, "bytes_read", g->pass[i][0], ", ");
        print_count_spread(f, "bytes_written", g->pass[i][1], "}");
    }
    fprintf(f, "],\n");
}

/* The balance, the exchange's figures, the levels and the ranks, to the document's end. */
static void json_exchange(FILE *f, const struct sortex_stats *st, int p,
                          const struct json_figures *g)
{
    fprintf(f, " \"imbalance\": %.6f, ", st->imbalance);
    print_count_spread(f, "n_out", g->nout, ",\n");
    fprintf(f, " \"exchange_stats\": {\"bytes_sent\": %llu, \"bytes_recv\": %llu, "
               "\"messages\": %llu, \"rounds\": %llu, \"max_message\": %llu, ",
            (unsigned long long)g->sums[0], (unsigned long long)g->sums[1],
            (unsigned long long)g->sums[2], (unsigned long long)g->maxes[1],
            (unsigned long long)g->maxes[0]);
    print_spread(f, "seconds", g->exch, "");
    for (int i = 0; i < st->exchange.nextra; i++) {
        fprintf(f, ", \"%s\": %.17g", st->exchange.extra[i].name, g->extra[i]);
    }
    fprintf(f, "},\n \"levels\": %d, \"levels_auto\": %s, \"levels_price_s\": [", g->nlev,
            st->levels_auto ? "true" : "false");
    for (int l = 0; l < SORTEX_LEVELS_MAX; l++) {
        fprintf(f, "%s%.9g", l ? ", " : "", st->levels_price[l]);
    }
    fprintf(f, "],\n \"level_stats\": [");
    static const char *const lev_names[5] = {"groups", "ranks", "messages", "bytes_sent",
                                             "seconds"};
    for (int l = 0; l < g->nlev; l++) {
        fprintf(f, "%s{\"level\": %d, \"exchange\": \"%s\", ", l ? ",\n  " : "", l + 1,
                st->level[l].exchange ? st->level[l].exchange : "none");
        for (int i = 0; i < 5; i++) {
            (i == 4 ? print_spread : print_count_spread)(f, lev_names[i], g->lev[l][i],
                                                          i < 4 ? ", " : "}");
        }
    }
    fprintf(f, "],\n ");
    print_count_spread(f, "startups", g->starts, ", ");
    print_count_spread(f, "shifted", g->shifted, ",\n \"ranks\": [");
    for (int r = 0; r < p; r++) {
        fprintf(f, "%s{\"rank\": %d, \"host\": ", r ? ", " : "", r);
        util_json_string(f, g->hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME);
        fprintf(f, ", \"n_out\": %llu, \"peak_rss_kib\": %ld}", (unsigned long long)g->nout_all[r],
                g->rss_all[r]);
    }
    fprintf(f, "]}\n");
}

int sortex_stats_write_json(MPI_Comm comm, const struct sortex_config *cfg,
                            const struct sortex_stats *st, const char *input, const char *output,
                            const char *command, const char *path)
{
    struct sortex_config dflt;
    int err = json_args(comm, &cfg, &dflt, st, path);
    if (err != UTIL_OK) {
        return err;
    }
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    struct json_figures g = {0};
    json_reduce(comm, st, &g);
    err = json_gather(comm, rank, p, st, &g);
    char *tmp = NULL;
    if (err == UTIL_OK && rank == 0) {
        /* A file appears whole or not at all: written under a temporary name, renamed at the
         * end. */
        int to_stdout = strcmp(path, "-") == 0;
        FILE *f = to_stdout ? stdout : util_temp_fopen(path, &tmp);
        if (f == NULL) {
            err = util_fail(UTIL_EIO, "cannot write the stats file: %s (%s)", strerror(errno),
                            path);
        } else {
            json_head(f, cfg, st, p, input, output, command);
            json_phases(f, st, &g);
            json_exchange(f, st, p, &g);
            int rc = to_stdout ? 0 : util_temp_fclose(f, tmp, path);
            if (rc != 0) {
                err = util_fail(UTIL_EIO, "cannot write the stats file: %s (%s)",
                                util_temp_strerror(rc), path);
            }
        }
    }
    util_free(tmp);
    util_free(g.rss_all);
    util_free(g.hosts);
    util_free(g.nout_all);
    MPI_Bcast(&err, 1, MPI_INT, 0, comm);
    return err;
}

void sortex_stats_print(MPI_Comm comm, const struct sortex_stats *st)
{
    const char *fn = "sortex_stats_print";
    if (sort_comm_check(fn, comm) != UTIL_OK) {
        return;
    }
    util_report_defer(true);
    int err = st == NULL ? util_error("%s: a NULL argument (stats)", fn) : UTIL_OK;
    struct sort_args args = {.fn = fn, .call = SORT_CALL_PRINT};
    err = sort_args_agree(comm, &args, err);
    util_report_defer(false);
    if (err != UTIL_OK) {
        return;
    }
    sort_stats_summary(comm, NULL, st);
}

/* The -v line of the levels (rank 0's view: the groups of its own group at each level), and
 * with --levels auto what decided them. */
static void levels_line(const struct sortex_stats *st)
{
    int nlev = st->levels >= 1 && st->levels <= SORTEX_LEVELS_MAX ? st->levels : 1;
    fprintf(stderr, "  levels %d", nlev);
    if (nlev > 1) {
        fprintf(stderr, " (groups");
        for (int l = 0; l < nlev; l++) {
            fprintf(stderr, "%s%d", l ? " x " : " ", st->level[l].groups);
        }
        fprintf(stderr, ")");
    }
    if (st->levels_auto && st->levels_price[0] > 0) {
        fprintf(stderr, ", auto: the cost model priced L = 1..%d at", SORTEX_LEVELS_MAX);
        for (int l = 0; l < SORTEX_LEVELS_MAX; l++) {
            fprintf(stderr, "%s%.2f", l ? ", " : " ", 1e3 * st->levels_price[l]);
        }
        fprintf(stderr, " ms, the least");
    } else if (st->levels_auto) {
        fprintf(stderr, ", auto: %s", st->balance == SORTEX_BALANCE_SAMPLE
                                          ? "the regular sample selects in one level"
                                          : "one level up to 64 ranks");
    }
    fputc('\n', stderr);
    for (int l = 0; nlev > 1 && l < nlev; l++) {
        const struct sortex_level_stats *ls = &st->level[l];
        fprintf(stderr, "    level %d: %d groups of %d ranks' group, exchange %s, %llu messages "
                        "sent, %.3f s (rank 0)\n",
                l + 1, ls->groups, ls->ranks, ls->exchange ? ls->exchange : "none",
                (unsigned long long)ls->messages, ls->seconds);
    }
}

void sort_stats_summary(MPI_Comm comm, const struct sortex_config *cfg,
                        const struct sortex_stats *st)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    struct spread phase[SORTEX_PHASE_COUNT];
    for (int i = 0; i < SORTEX_PHASE_COUNT; i++) {
        phase[i] = reduce_spread(comm, st->phase_seconds[i]);
    }
    uint64_t bytes = st->exchange.bytes_sent;
    MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, comm);
    long rss = st->peak_rss_kib;
    MPI_Allreduce(MPI_IN_PLACE, &rss, 1, MPI_LONG, MPI_SUM, comm);
    uint64_t io[5] = {st->pass_bytes[0][0], st->pass_bytes[0][1], st->pass_bytes[1][0],
                      st->pass_bytes[1][1], st->temp_bytes};
    MPI_Allreduce(MPI_IN_PLACE, io, 5, MPI_UINT64_T, MPI_SUM, comm);
    uint64_t need = st->mem_need, budget = st->mem_budget;
    MPI_Allreduce(MPI_IN_PLACE, &need, 1, MPI_UINT64_T, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, &budget, 1, MPI_UINT64_T, MPI_MIN, comm);
    if (rank != 0) {
        return;
    }
    double total = 0;
    /* Records of a byte-key format, or keys; the check only when it ran. */
    bool records = cfg != NULL && cfg->format != NULL && cfg->format->byte_key;
    bool check = cfg != NULL ? cfg->check != 0 : st->check != NULL && strcmp(st->check, "off") != 0;
    fprintf(stderr, "%s: %llu %s, %d thread%s per rank, exchange %s", util_progname(),
            (unsigned long long)st->n_total, records ? "records" : "keys", st->threads,
            st->threads == 1 ? "" : "s", st->exchange_name ? st->exchange_name : "?");
    if (st->exchange_predicted > 0) {
        char machine[768];
        machine_used(machine, sizeof(machine));
        fprintf(stderr, " (auto: its model predicted %.3f ms, the least, on %s)",
                1e3 * st->exchange_predicted, machine);
    }
    fputc('\n', stderr);
    const double mib = 1048576.0;
    if (st->external) {
        fprintf(stderr, "  external sort: a rank's share needs %.1f MiB in memory, more than the "
                        "%.1f MiB it may use (%s): %llu buckets, two passes",
                (double)need / mib, (double)budget / mib, st->mem_source ? st->mem_source : "?",
                (unsigned long long)st->buckets);
        if (st->split_buckets > 0) {
            fprintf(stderr, ", %llu bucket%s too big for memory split by an extra pass",
                    (unsigned long long)st->split_buckets, st->split_buckets == 1 ? "" : "s");
        }
        fprintf(stderr, "\n  pass 1 read %.1f MiB, wrote %.1f MiB; pass 2 read %.1f MiB, "
                        "wrote %.1f MiB; temporary files %.1f MiB\n",
                (double)io[0] / mib, (double)io[1] / mib, (double)io[2] / mib, (double)io[3] / mib,
                (double)io[4] / mib);
    } else if (st->mem_source != NULL && budget > 0) {
        fprintf(stderr, "  in memory: a rank's share needs %.1f MiB, within the %.1f MiB it may "
                        "use (%s)\n",
                (double)need / mib, (double)budget / mib, st->mem_source);
    }
    fprintf(stderr, "  %-12s %9s %9s\n", "phase", "max s", "avg s");
    for (int i = 0; i < SORTEX_PHASE_COUNT; i++) {
        /* The phases of the mode that ran (the sample runs in both), check under --check. */
        int ext_phase = i == SORTEX_PHASE_DISTRIBUTE || i == SORTEX_PHASE_SORT_BUCKETS;
        int both = i == SORTEX_PHASE_SAMPLE || i == SORTEX_PHASE_CHECK;
        if ((!both && ext_phase != (st->external != 0)) || (i == SORTEX_PHASE_CHECK && !check)) {
            continue;
        }
        fprintf(stderr, "  %-12s %9.3f %9.3f\n", sortex_phase_name((enum sortex_phase)i),
                phase[i].max, phase[i].avg);
        total += phase[i].max;
    }
    fprintf(stderr, "  %-12s %9.3f\n", "sum", total);
    char bound[32] = "";
    if (!st->external) {
        (void)snprintf(bound, sizeof(bound), " (bound %.4f)", 1.0 + st->epsilon_bound);
    }
    fprintf(stderr, "  imbalance %.4f%s, exchanged %.1f MiB, peak RSS %.1f MiB total\n",
            st->imbalance, bound, (double)bytes / 1048576.0, (double)rss / 1024.0);
    if (!st->external) {
        levels_line(st);
    }
}

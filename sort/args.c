/*
 * sort/args.c: the public functions' checks of their arguments, and the ranks' agreement on
 * them (see sort/internal.h and the contracts of sort/sortex.h).
 *
 * The library trusts no argument. Each collective function first checks, on every rank, what
 * it can check alone: a communicator it can use, no NULL where it needs a pointer, every field
 * of the configuration within the ranges the CLI accepts. Then the ranks agree, in one
 * all-reduce of a few words, on the verdict and on the fields that must be the same on every
 * rank: those that decide which collectives the sort makes or the order it produces (the
 * format, the back-end, the selection and its epsilon and oversampling, the levels, the I/O
 * mode, --check, --progress, --sync, the paths, and which function was called at all). A
 * mistake on one rank so becomes the same error code on every rank, reported once, where it
 * used to be a crash, a hang in a collective its peers never enter, MPI_ERR_TRUNCATE, or a file
 * sorted in no order.
 *
 * The all-reduce takes the maximum of unsigned words: each rank's code (negated: the most
 * severe wins), the lowest rank holding an error line (as UINT64_MAX - rank), whether some rank
 * asks for the default threads, and each field both as v and as ~v, so that one reduction gives
 * the maximum and the minimum of every field. A rank that failed its own checks gives no field
 * (zeros in both halves); a field differs when its minimum is below its maximum.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sort/internal.h"
#include "sort/names.h"
#include "util/util.h"

/* What must agree, one word each. The format takes four: its kind and its bytes. */
enum word {
    W_CALL,
    W_FORMAT,
    W_RECORD_SIZE,
    W_KEY_OFFSET,
    W_KEY_SIZE,
    W_EXCHANGE,
    W_BALANCE,
    W_EPSILON,
    W_OVERSAMPLE,
    W_IO,
    W_CHECK,
    W_PROGRESS,
    W_SYNC,
    W_EXTERNAL,
    W_LEVELS,
    W_PATH0,
    W_PATH1,
    W_COUNT
};

/* The names of the fields in the error line (the paths name themselves). */
static const char *const word_names[W_COUNT] = {
    [W_CALL] = "the function called",
    [W_FORMAT] = "cfg.format",
    [W_RECORD_SIZE] = "cfg.format",
    [W_KEY_OFFSET] = "cfg.format",
    [W_KEY_SIZE] = "cfg.format",
    [W_EXCHANGE] = "cfg.exchange",
    [W_BALANCE] = "cfg.balance",
    [W_EPSILON] = "cfg.epsilon",
    [W_OVERSAMPLE] = "cfg.oversample",
    [W_IO] = "cfg.io",
    [W_CHECK] = "cfg.check",
    [W_PROGRESS] = "cfg.progress",
    [W_SYNC] = "cfg.sync",
    [W_EXTERNAL] = "cfg.external",
    [W_LEVELS] = "cfg.levels",
};

/* The format's kind: byte keys are their bytes (gensort and its layout are the same format);
 * numbers are which number (u64 and NULL the same). */
#define FORMAT_BYTES 1000u

/* Why @comm cannot be used (a sentence), or NULL when it can. Not collective. */
static const char *comm_problem(MPI_Comm comm)
{
    int init = 0, done = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&done);
    if (!init || done) {
        return !init ? "MPI is not initialised" : "MPI is finalised";
    }
    if (comm == MPI_COMM_NULL) {
        return "the communicator is MPI_COMM_NULL";
    }
    int inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        return "the communicator is an intercommunicator";
    }
    return NULL;
}

bool sort_comm_usable(MPI_Comm comm)
{
    return comm_problem(comm) == NULL;
}

int sort_comm_check(const char *fn, MPI_Comm comm)
{
    const char *why = comm_problem(comm);
    return why == NULL ? UTIL_OK : util_error("%s: %s (comm)", fn, why);
}

/* True when @f is a format of util_format_list() or a well-formed layout. */
static bool format_valid(const struct util_format *f)
{
    for (const struct util_format *const *g = util_format_list(); *g != NULL; g++) {
        if (*g == f) {
            return true;
        }
    }
    return f->byte_key && f->record_size >= 1 && f->record_size <= UTIL_RECORD_MAX &&
           f->key_size >= 1 && f->key_offset <= f->record_size &&
           f->key_size <= f->record_size - f->key_offset;
}

/* The registry index of back-end @ops (NULL: the default, 0), or -1 if it is none of them. */
static int exchange_index(const struct exchange_ops *ops)
{
    const struct exchange_ops *const *list = exchange_list();
    for (int i = 0; list[i] != NULL; i++) {
        if (list[i] == ops || (ops == NULL && i == 0)) {
            return i;
        }
    }
    return -1;
}

int sort_config_check(const char *fn, const struct sortex_config *cfg)
{
    if (cfg->format != NULL && !format_valid(cfg->format)) {
        return util_error("%s: cfg.format is no format of sortex_format_find() or "
                          "sortex_format_layout() (%p)",
                          fn, (const void *)cfg->format);
    }
    if (exchange_index(cfg->exchange) < 0) {
        return util_error("%s: cfg.exchange is no back-end of sortex_exchange_find() (%p)", fn,
                          (const void *)cfg->exchange);
    }
    if (cfg->threads < 0 || cfg->threads > SORTEX_THREADS_MAX) {
        return util_error("%s: cfg.threads must be 0 (the default) or from 1 to %d (%d)", fn,
                          SORTEX_THREADS_MAX, cfg->threads);
    }
    if (cfg->epsilon != 0 &&
        !(cfg->epsilon >= SORTEX_EPSILON_MIN && cfg->epsilon <= SORTEX_EPSILON_MAX)) {
        return util_error("%s: cfg.epsilon must be 0 (the default, 0.1) or from %g to %g (%g)", fn,
                          SORTEX_EPSILON_MIN, SORTEX_EPSILON_MAX, cfg->epsilon);
    }
    if (cfg->oversample > SORTEX_OVERSAMPLE_MAX) {
        return util_error("%s: cfg.oversample must be 0 (the default) or from 1 to %d (%llu)", fn,
                          SORTEX_OVERSAMPLE_MAX, (unsigned long long)cfg->oversample);
    }
    if ((unsigned)cfg->balance >= SORTEX_BALANCE_COUNT) {
        return util_error("%s: cfg.balance is no enum sortex_balance (%d)", fn, (int)cfg->balance);
    }
    if (cfg->oversample != 0 && cfg->balance != SORTEX_BALANCE_SAMPLE &&
        cfg->balance != SORTEX_BALANCE_AUTO) {
        return util_error("%s: cfg.oversample applies to SORTEX_BALANCE_SAMPLE only (%llu)", fn,
                          (unsigned long long)cfg->oversample);
    }
    if (cfg->levels < 0 || cfg->levels > SORTEX_LEVELS_MAX) {
        return util_error("%s: cfg.levels must be 0 (auto) or from 1 to %d (%d)", fn,
                          SORTEX_LEVELS_MAX, cfg->levels);
    }
    if (cfg->levels > 1 && (cfg->balance == SORTEX_BALANCE_SAMPLE || cfg->oversample != 0)) {
        return util_error("%s: more than one level takes the histogram selection, not the "
                          "regular sample (cfg.levels %d)", fn, cfg->levels);
    }
    if ((unsigned)cfg->finish >= SORTEX_FINISH_COUNT) {
        return util_error("%s: cfg.finish is no enum sortex_finish (%d)", fn, (int)cfg->finish);
    }
    if ((unsigned)cfg->io >= SORTEX_IO_COUNT) {
        return util_error("%s: cfg.io is no enum sortex_io (%d)", fn, (int)cfg->io);
    }
    if ((unsigned)cfg->external >= SORTEX_EXTERNAL_COUNT) {
        return util_error("%s: cfg.external is no enum sortex_external (%d)", fn,
                          (int)cfg->external);
    }
    for (int i = 0; cfg->temp_dirs != NULL && cfg->temp_dirs[i] != NULL; i++) {
        if (cfg->temp_dirs[i][0] == '\0') {
            return util_error("%s: cfg.temp_dirs[%d] is an empty path", fn, i);
        }
    }
    return UTIL_OK;
}

/* FNV-1a of a path: the same string gives the same word on every rank. */
static uint64_t path_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; s != NULL && *s != '\0'; s++) {
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    }
    return h;
}

/* The words of this rank's call (cfg checked already). */
static void words_of(const struct sort_args *a, uint64_t w[W_COUNT])
{
    memset(w, 0, W_COUNT * sizeof(uint64_t));
    w[W_CALL] = (uint64_t)a->call;
    for (int i = 0; i < 2; i++) {
        w[W_PATH0 + i] = a->path_name[i] != NULL ? path_hash(a->path[i]) : 0;
    }
    const struct sortex_config *cfg = a->cfg;
    if (cfg == NULL) {
        return;
    }
    const struct util_format *f = cfg->format ? cfg->format : util_format_default();
    if (f->byte_key) {
        w[W_FORMAT] = FORMAT_BYTES;
    } else {
        for (const struct util_format *const *g = util_format_list(); *g != f; g++) {
            w[W_FORMAT]++;
        }
    }
    w[W_RECORD_SIZE] = f->record_size;
    w[W_KEY_OFFSET] = f->key_offset;
    w[W_KEY_SIZE] = f->key_size;
    /* auto ignores cfg.exchange: one past the registry's last. */
    int count = 0;
    while (exchange_list()[count] != NULL) {
        count++;
    }
    w[W_EXCHANGE] = (uint64_t)(cfg->exchange_auto ? count : exchange_index(cfg->exchange));
    w[W_BALANCE] = (uint64_t)cfg->balance;
    double eps = cfg->epsilon > 0 ? cfg->epsilon : 0.1;
    memcpy(&w[W_EPSILON], &eps, sizeof(eps)); /* positive doubles order as their bits */
    w[W_OVERSAMPLE] = cfg->oversample;
    w[W_IO] = (uint64_t)cfg->io;
    w[W_CHECK] = cfg->check != 0;
    w[W_PROGRESS] = cfg->progress != 0;
    w[W_SYNC] = cfg->sync != 0;
    w[W_EXTERNAL] = (uint64_t)cfg->external;
    w[W_LEVELS] = (uint64_t)cfg->levels;
}

/* Rank 0's value of word @w, for the error line. */
static void describe(const struct sort_args *a, enum word w, char *buf, size_t cap)
{
    const struct sortex_config *cfg = a->cfg;
    switch (w) {
    case W_CALL:
        (void)snprintf(buf, cap, "%s", a->fn);
        break;
    case W_FORMAT:
    case W_RECORD_SIZE:
    case W_KEY_OFFSET:
    case W_KEY_SIZE:
        util_format_describe(cfg->format ? cfg->format : util_format_default(), buf, cap);
        break;
    case W_EXCHANGE:
        (void)snprintf(buf, cap, "%s",
                       cfg->exchange_auto ? "auto"
                                          : exchange_list()[exchange_index(cfg->exchange)]->name);
        break;
    case W_BALANCE:
        (void)snprintf(buf, cap, "%s", util_name_of(sort_balance_names, (int)cfg->balance));
        break;
    case W_EPSILON:
        (void)snprintf(buf, cap, "%g", cfg->epsilon > 0 ? cfg->epsilon : 0.1);
        break;
    case W_OVERSAMPLE:
        (void)snprintf(buf, cap, "%llu", (unsigned long long)cfg->oversample);
        break;
    case W_IO:
        (void)snprintf(buf, cap, "%s", util_name_of(sort_io_names, (int)cfg->io));
        break;
    case W_EXTERNAL:
        (void)snprintf(buf, cap, "%d", (int)cfg->external);
        break;
    case W_LEVELS:
        (void)snprintf(buf, cap, "%d", cfg->levels);
        break;
    case W_CHECK:
    case W_PROGRESS:
    case W_SYNC:
        (void)snprintf(buf, cap, "%d",
                       (w == W_CHECK      ? cfg->check
                        : w == W_PROGRESS ? cfg->progress
                                          : cfg->sync) != 0);
        break;
    default:
        (void)snprintf(buf, cap, "%s", a->path[w - W_PATH0]);
        break;
    }
}

int sort_args_agree(MPI_Comm comm, struct sort_args *a, int err)
{
    enum { ERR, SPEAKER, DEFAULT_THREADS, FIELDS, WORDS = FIELDS + 2 * W_COUNT };
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    uint64_t v[WORDS];
    memset(v, 0, sizeof(v));
    v[ERR] = (uint64_t)(-(int64_t)err);
    v[SPEAKER] = util_report_pending() ? UINT64_MAX - (uint64_t)rank : 0;
    if (err == UTIL_OK) {
        uint64_t w[W_COUNT];
        words_of(a, w);
        for (int i = 0; i < W_COUNT; i++) {
            v[FIELDS + i] = w[i];
            v[FIELDS + W_COUNT + i] = ~w[i];
        }
        v[DEFAULT_THREADS] = a->cfg != NULL && a->cfg->threads == 0;
    }
    if (MPI_Allreduce(MPI_IN_PLACE, v, WORDS, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS) {
        util_report_release(true);
        return UTIL_EMPI;
    }
    a->any_default_threads = v[DEFAULT_THREADS] != 0;
    if (v[ERR] != 0) {
        /* Some rank's own checks failed: the lowest rank with a line speaks. */
        util_report_release(v[SPEAKER] == UINT64_MAX - (uint64_t)rank);
        return -(int)v[ERR];
    }
    for (int i = 0; i < W_COUNT; i++) {
        uint64_t max = v[FIELDS + i], min = ~v[FIELDS + W_COUNT + i];
        if (min < max) {
            if (rank == 0) {
                char value[256];
                describe(a, (enum word)i, value, sizeof(value));
                const char *name = i >= W_PATH0 ? a->path_name[i - W_PATH0] : word_names[i];
                (void)util_error("%s: the ranks differ in %s (rank 0: %s)", a->fn, name, value);
            }
            util_report_release(rank == 0);
            return UTIL_EUSAGE;
        }
    }
    return UTIL_OK;
}

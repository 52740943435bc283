/*
 * tests/unit/test_args_mpi.c: every public function of the library called with each argument
 * NULL, out of range, or differing between the ranks, through the public header (sort/sortex.h)
 * alone.
 *
 * usage: mpirun -np P test_args_mpi [-v] dir=DIR [CASE ...]   (default: every case; DIR takes
 *                                                             the files; -v shows what each call
 *                                                             printed)
 *        test_args_mpi --list                                (the cases, one a line)
 *
 * A case is one argument made wrong, applied on every rank, on rank 0 only and on the last rank
 * only. Its kind says what the library must make of it:
 *   BAD   wrong wherever it is: the case's error code on every rank, whichever ranks have it;
 *   DIFF  valid by itself, wrong when the ranks differ: success when every rank has it (or
 *         P = 1), SORTEX_EUSAGE on every rank when only some do;
 *   OWN   the rank's own business (threads, mem_limit, finish, a NULL stats): success anywhere.
 * For each call every rank checks the code it got against the expected one, so that a rank
 * returning something else, a crash or a hang (the Bats timeout) fails the case. Each rank's
 * stderr is captured during the call: a failing collective call prints exactly one error line
 * for the whole job, a successful call none, a communicator that is MPI_COMM_NULL one line on
 * every process given it, and sortex_format_layout() never prints. A successful sort is checked
 * too: the count is kept and the ranks' slices are in order, a file's as well; a failed one has
 * freed the caller's buffer and left no output file.
 *
 * MPI_COMM_NULL is tried on every rank only: a rank given a valid communicator waits in its
 * collective for ranks that never join it (the header's contract says so).
 *
 * Each case is a test of the harness (tests/unit/test_mpi.h), and so are mpi/before-init and
 * mpi/after-finalize; the intercommunicator cases are skipped at P = 1.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sort/sortex.h"
#include "tests/unit/test_mpi.h"

enum fn { FN_SORT, FN_RECORDS, FN_FILE, FN_JSON, FN_PRINT, FN_LAYOUT, FN_PLAIN };
enum kind { BAD, DIFF, OWN };
enum scope { SCOPE_ALL, SCOPE_FIRST, SCOPE_LAST, SCOPE_COUNT };
static const char *const scope_names[SCOPE_COUNT] = {"every rank", "rank 0", "last rank"};

/* The arguments of one call of any of the functions, valid until a case mutates them. */
struct call {
    MPI_Comm comm;
    MPI_Comm made[2]; /* communicators a mutation made, freed after the call */
    /* sortex_sort(), sortex_sort_records(): buf points at data, n at count. */
    void *data;
    uint64_t count;
    void **buf;
    uint64_t *n;
    int no_data; /* mutations: data stays NULL (count as set) */
    struct sortex_config cfg_store;
    const struct sortex_config *cfg;
    struct sortex_stats stats_store;
    struct sortex_stats *stats;
    /* sortex_sort_file(): in, out; sortex_stats_write_json(): path and the strings. */
    const char *in, *out, *path, *input, *output, *command;
    /* sortex_format_layout() */
    size_t r, o, k;
    const struct util_format *layout_store;
    const struct util_format **layout;
};

struct tcase {
    const char *name;
    enum fn fn;
    enum kind kind;
    int code;                      /* BAD: the code every rank must return */
    void (*base)(struct call *);   /* optional: on every rank, before the mutation */
    void (*mutate)(struct call *); /* on the ranks of the scope */
    int (*plain)(void);            /* FN_PLAIN: 0 when the function kept its contract */
    int all_only;                  /* wrong in another way when only some ranks have it */
};

static char dir[4096];
static char in_path[4200], in2_path[4200], out_path[4200], out2_path[4200], json_path[4200],
    json2_path[4200], missing_path[4200], bad_dir_path[4200];
static const struct util_format *layout13;  /* 13-byte records, 5-byte key at 3 */
static const struct util_format *layout100; /* gensort's bytes as a layout */
static struct sortex_stats sorted_stats;    /* a real sort's, for the stats functions */
static const uint64_t foreign[32];          /* an address that is no back-end */
#define IN_KEYS 4000u

/* ---- mutations --------------------------------------------------------------------------- */

static void m_none(struct call *c)
{
    (void)c;
}
static void m_comm_null(struct call *c)
{
    c->comm = MPI_COMM_NULL;
}
/* An intercommunicator between the even and the odd ranks (P >= 2; every rank). */
static void m_comm_inter(struct call *c)
{
    MPI_Comm_split(MPI_COMM_WORLD, test_rank % 2, test_rank, &c->made[0]);
    MPI_Intercomm_create(c->made[0], 0, MPI_COMM_WORLD, test_rank % 2 ? 0 : 1, 77, &c->made[1]);
    c->comm = c->made[1];
}
static void m_cfg_null(struct call *c)
{
    c->cfg = NULL;
}
static void m_stats_null(struct call *c)
{
    c->stats = NULL;
}
static void m_buf_null(struct call *c)
{
    c->buf = NULL;
}
static void m_n_null(struct call *c)
{
    c->n = NULL;
}
static void m_data_null(struct call *c)
{
    c->no_data = 1;
    c->count = 5;
}
static void m_data_null_empty(struct call *c)
{
    c->no_data = 1;
    c->count = 0;
}
static void m_gensort(struct call *c)
{
    c->cfg_store.format = sortex_format_find("gensort");
}
static void m_layout100(struct call *c)
{
    c->cfg_store.format = layout100;
}
static void m_u64(struct call *c)
{
    c->cfg_store.format = sortex_format_find("u64");
}
static void m_i64(struct call *c)
{
    c->cfg_store.format = sortex_format_find("i64");
}
static void m_threads_negative(struct call *c)
{
    c->cfg_store.threads = -1;
}
static void m_threads_huge(struct call *c)
{
    c->cfg_store.threads = 1000000;
}
static void m_threads_4097(struct call *c)
{
    c->cfg_store.threads = 4097;
}
static void m_threads_3(struct call *c)
{
    c->cfg_store.threads = 3;
}
static void m_threads_default(struct call *c)
{
    c->cfg_store.threads = 0;
}
static void m_epsilon_negative(struct call *c)
{
    c->cfg_store.epsilon = -1;
}
static void m_epsilon_nan(struct call *c)
{
    c->cfg_store.epsilon = NAN;
}
static void m_epsilon_inf(struct call *c)
{
    c->cfg_store.epsilon = INFINITY;
}
static void m_epsilon_small(struct call *c)
{
    c->cfg_store.epsilon = 0.0005;
}
static void m_epsilon_large(struct call *c)
{
    c->cfg_store.epsilon = 11;
}
static void m_epsilon_02(struct call *c)
{
    c->cfg_store.epsilon = 0.2;
}
static void m_epsilon_default(struct call *c)
{
    c->cfg_store.epsilon = 0.1; /* what 0 stands for */
}
static void m_balance_range(struct call *c)
{
    c->cfg_store.balance = SORTEX_BALANCE_COUNT;
}
static void m_balance_negative(struct call *c)
{
    c->cfg_store.balance = (enum sortex_balance) - 1;
}
static void m_balance_exact(struct call *c)
{
    c->cfg_store.balance = SORTEX_BALANCE_EXACT;
}
static void m_balance_eps(struct call *c)
{
    c->cfg_store.balance = SORTEX_BALANCE_EPS;
}
static void m_finish_range(struct call *c)
{
    c->cfg_store.finish = SORTEX_FINISH_COUNT;
}
static void m_finish_negative(struct call *c)
{
    c->cfg_store.finish = (enum sortex_finish) - 1;
}
static void m_finish_sort(struct call *c)
{
    c->cfg_store.finish = SORTEX_FINISH_SORT;
}
static void m_finish_merge(struct call *c)
{
    c->cfg_store.finish = SORTEX_FINISH_MERGE;
}
static void m_io_range(struct call *c)
{
    c->cfg_store.io = SORTEX_IO_COUNT;
}
static void m_io_root(struct call *c)
{
    c->cfg_store.io = SORTEX_IO_ROOT;
}
static void m_io_rootv(struct call *c)
{
    c->cfg_store.io = SORTEX_IO_ROOTV;
}
static void m_oversample_range(struct call *c)
{
    c->cfg_store.oversample = 1000001;
}
static void m_oversample_eps(struct call *c)
{
    c->cfg_store.balance = SORTEX_BALANCE_EPS;
    c->cfg_store.oversample = 512;
}
static void m_oversample_512(struct call *c)
{
    c->cfg_store.balance = SORTEX_BALANCE_SAMPLE;
    c->cfg_store.oversample = 512;
}
static void m_exchange_direct(struct call *c)
{
    c->cfg_store.exchange = sortex_exchange_find("direct");
}
static void m_exchange_auto(struct call *c)
{
    c->cfg_store.exchange_auto = 1;
}
static void m_exchange_foreign(struct call *c)
{
    c->cfg_store.exchange = (const struct exchange_ops *)(const void *)foreign;
}
static void m_exchange_default(struct call *c)
{
    c->cfg_store.exchange = sortex_exchange_find(sortex_exchange_name(0)); /* NULL's meaning */
}
static void m_check(struct call *c)
{
    c->cfg_store.check = 1;
}
static void m_progress(struct call *c)
{
    c->cfg_store.progress = 1;
}
static void m_sync(struct call *c)
{
    c->cfg_store.sync = 1;
}
static void m_mem_tiny(struct call *c)
{
    c->cfg_store.mem_limit = 64;
}
static void m_mem_large(struct call *c)
{
    c->cfg_store.mem_limit = (uint64_t)1 << 40;
}
static void m_in_null(struct call *c)
{
    c->in = NULL;
}
static void m_out_null(struct call *c)
{
    c->out = NULL;
}
static void m_in_other(struct call *c)
{
    c->in = in2_path;
}
static void m_out_other(struct call *c)
{
    c->out = out2_path;
}
static void m_in_missing(struct call *c)
{
    c->in = missing_path;
}
static void m_path_null(struct call *c)
{
    c->path = NULL;
}
static void m_path_other(struct call *c)
{
    c->path = json2_path;
}
static void m_path_bad_dir(struct call *c)
{
    c->path = bad_dir_path;
}
static void m_strings_null(struct call *c)
{
    c->input = c->output = c->command = NULL;
}
static void m_layout_out_null(struct call *c)
{
    c->layout = NULL;
}
static void m_layout_r0(struct call *c)
{
    c->r = 0;
}
static void m_layout_r_big(struct call *c)
{
    c->r = 65537;
}
static void m_layout_k0(struct call *c)
{
    c->k = 0;
}
static void m_layout_key_past(struct call *c)
{
    c->o = 10;
}

/* ---- the functions that are not collective ------------------------------------------------ */

static int p_config_default_null(void)
{
    sortex_config_default(NULL);
    return 0;
}
static int p_exchange_find(void)
{
    return sortex_exchange_find(NULL) != NULL || sortex_exchange_find("nope") != NULL;
}
static int p_exchange_name(void)
{
    int count = 0;
    while (sortex_exchange_name(count) != NULL) {
        count++;
    }
    return count == 0 || sortex_exchange_name(-1) != NULL ||
           sortex_exchange_name(INT32_MIN) != NULL;
}
static int p_format_find(void)
{
    return sortex_format_find(NULL) != NULL || sortex_format_find("nope") != NULL;
}
static int p_format_free(void)
{
    sortex_format_free(NULL);
    sortex_format_free(sortex_format_find("gensort")); /* a named format: ignored */
    return sortex_record_size(sortex_format_find("gensort")) != 100;
}
static int p_record_size(void)
{
    return sortex_record_size(NULL) != 8 || sortex_record_size(layout13) != 13;
}
static int p_phase_name(void)
{
    return sortex_phase_name((enum sortex_phase) - 1) != NULL ||
           sortex_phase_name(SORTEX_PHASE_COUNT) != NULL ||
           sortex_phase_name(SORTEX_PHASE_READ) == NULL;
}
static int p_alloc_huge(void)
{
    void *a = sortex_alloc_keys(UINT64_MAX);
    void *b = sortex_alloc_records(NULL, UINT64_MAX);
    void *c = sortex_alloc_records(layout13, UINT64_MAX / 8);
    int bad = a != NULL || b != NULL || c != NULL;
    sortex_free_keys(a);
    sortex_free_records(b);
    sortex_free_records(c);
    return bad;
}
static int p_free_null(void)
{
    sortex_free_keys(NULL);
    sortex_free_records(NULL);
    return 0;
}

/* ---- the table --------------------------------------------------------------------------- */

#define EU SORTEX_EUSAGE
static const struct tcase cases[] = {
    /* sortex_sort(): 8-byte keys in memory */
    {"sort/valid", FN_SORT, OWN, 0, NULL, m_none, NULL, 0},
    {"sort/cfg-null", FN_SORT, OWN, 0, NULL, m_cfg_null, NULL, 0},
    {"sort/stats-null", FN_SORT, OWN, 0, NULL, m_stats_null, NULL, 0},
    {"sort/empty-keys-null", FN_SORT, OWN, 0, NULL, m_data_null_empty, NULL, 0},
    {"sort/comm-null", FN_SORT, BAD, EU, NULL, m_comm_null, NULL, 0},
    {"sort/comm-inter", FN_SORT, BAD, EU, NULL, m_comm_inter, NULL, 0},
    {"sort/keys-null", FN_SORT, BAD, EU, NULL, m_buf_null, NULL, 0},
    {"sort/n-null", FN_SORT, BAD, EU, NULL, m_n_null, NULL, 0},
    {"sort/keys-null-with-n", FN_SORT, BAD, EU, NULL, m_data_null, NULL, 0},
    {"sort/format-records", FN_SORT, BAD, EU, NULL, m_gensort, NULL, 0},
    {"sort/format-i64", FN_SORT, DIFF, 0, NULL, m_i64, NULL, 0},
    {"sort/format-u64-is-null", FN_SORT, OWN, 0, NULL, m_u64, NULL, 0},
    {"sort/threads-negative", FN_SORT, BAD, EU, NULL, m_threads_negative, NULL, 0},
    {"sort/threads-huge", FN_SORT, BAD, EU, NULL, m_threads_huge, NULL, 0},
    {"sort/threads-4097", FN_SORT, BAD, EU, NULL, m_threads_4097, NULL, 0},
    {"sort/threads-3", FN_SORT, OWN, 0, NULL, m_threads_3, NULL, 0},
    {"sort/threads-default", FN_SORT, OWN, 0, NULL, m_threads_default, NULL, 0},
    {"sort/epsilon-negative", FN_SORT, BAD, EU, NULL, m_epsilon_negative, NULL, 0},
    {"sort/epsilon-nan", FN_SORT, BAD, EU, NULL, m_epsilon_nan, NULL, 0},
    {"sort/epsilon-inf", FN_SORT, BAD, EU, NULL, m_epsilon_inf, NULL, 0},
    {"sort/epsilon-small", FN_SORT, BAD, EU, NULL, m_epsilon_small, NULL, 0},
    {"sort/epsilon-large", FN_SORT, BAD, EU, NULL, m_epsilon_large, NULL, 0},
    {"sort/epsilon-0.2", FN_SORT, DIFF, 0, NULL, m_epsilon_02, NULL, 0},
    {"sort/epsilon-0.1-is-0", FN_SORT, OWN, 0, NULL, m_epsilon_default, NULL, 0},
    {"sort/balance-range", FN_SORT, BAD, EU, NULL, m_balance_range, NULL, 0},
    {"sort/balance-negative", FN_SORT, BAD, EU, NULL, m_balance_negative, NULL, 0},
    {"sort/balance-exact", FN_SORT, DIFF, 0, NULL, m_balance_exact, NULL, 0},
    {"sort/balance-eps", FN_SORT, DIFF, 0, NULL, m_balance_eps, NULL, 0},
    {"sort/finish-range", FN_SORT, BAD, EU, NULL, m_finish_range, NULL, 0},
    {"sort/finish-negative", FN_SORT, BAD, EU, NULL, m_finish_negative, NULL, 0},
    {"sort/finish-sort", FN_SORT, OWN, 0, NULL, m_finish_sort, NULL, 0},
    {"sort/finish-merge", FN_SORT, OWN, 0, NULL, m_finish_merge, NULL, 0},
    {"sort/io-range", FN_SORT, BAD, EU, NULL, m_io_range, NULL, 0},
    {"sort/io-root", FN_SORT, DIFF, 0, NULL, m_io_root, NULL, 0},
    {"sort/oversample-range", FN_SORT, BAD, EU, NULL, m_oversample_range, NULL, 0},
    {"sort/oversample-with-eps", FN_SORT, BAD, EU, NULL, m_oversample_eps, NULL, 0},
    {"sort/oversample-512", FN_SORT, DIFF, 0, NULL, m_oversample_512, NULL, 0},
    {"sort/exchange-direct", FN_SORT, DIFF, 0, NULL, m_exchange_direct, NULL, 0},
    {"sort/exchange-auto", FN_SORT, DIFF, 0, NULL, m_exchange_auto, NULL, 0},
    {"sort/exchange-default-is-null", FN_SORT, OWN, 0, NULL, m_exchange_default, NULL, 0},
    {"sort/exchange-foreign", FN_SORT, BAD, EU, NULL, m_exchange_foreign, NULL, 0},
    {"sort/check", FN_SORT, DIFF, 0, NULL, m_check, NULL, 0},
    {"sort/progress", FN_SORT, DIFF, 0, NULL, m_progress, NULL, 0},
    {"sort/sync", FN_SORT, DIFF, 0, NULL, m_sync, NULL, 0},
    {"sort/mem-limit-tiny", FN_SORT, BAD, SORTEX_ENOMEM, NULL, m_mem_tiny, NULL, 0},
    {"sort/mem-limit-large", FN_SORT, OWN, 0, NULL, m_mem_large, NULL, 0},

    /* sortex_sort_records(): 13-byte records (a layout) unless the case says otherwise */
    {"records/valid", FN_RECORDS, OWN, 0, NULL, m_none, NULL, 0},
    {"records/stats-null", FN_RECORDS, OWN, 0, NULL, m_stats_null, NULL, 0},
    {"records/gensort", FN_RECORDS, DIFF, 0, NULL, m_gensort, NULL, 0},
    {"records/gensort-is-its-layout", FN_RECORDS, OWN, 0, m_layout100, m_gensort, NULL, 0},
    {"records/numbers", FN_RECORDS, DIFF, 0, NULL, m_u64, NULL, 0},
    {"records/cfg-null", FN_RECORDS, DIFF, 0, NULL, m_cfg_null, NULL, 0},
    {"records/comm-null", FN_RECORDS, BAD, EU, NULL, m_comm_null, NULL, 0},
    {"records/records-null", FN_RECORDS, BAD, EU, NULL, m_buf_null, NULL, 0},
    {"records/n-null", FN_RECORDS, BAD, EU, NULL, m_n_null, NULL, 0},
    {"records/records-null-with-n", FN_RECORDS, BAD, EU, NULL, m_data_null, NULL, 0},
    {"records/threads-negative", FN_RECORDS, BAD, EU, NULL, m_threads_negative, NULL, 0},
    {"records/epsilon-nan", FN_RECORDS, BAD, EU, NULL, m_epsilon_nan, NULL, 0},
    {"records/balance-range", FN_RECORDS, BAD, EU, NULL, m_balance_range, NULL, 0},
    {"records/balance-exact", FN_RECORDS, DIFF, 0, NULL, m_balance_exact, NULL, 0},

    /* sortex_sort_file(): u64 keys unless the case says otherwise */
    {"file/valid", FN_FILE, OWN, 0, NULL, m_none, NULL, 0},
    {"file/cfg-null", FN_FILE, OWN, 0, NULL, m_cfg_null, NULL, 0},
    {"file/stats-null", FN_FILE, OWN, 0, NULL, m_stats_null, NULL, 0},
    {"file/comm-null", FN_FILE, BAD, EU, NULL, m_comm_null, NULL, 0},
    {"file/comm-inter", FN_FILE, BAD, EU, NULL, m_comm_inter, NULL, 0},
    {"file/in-null", FN_FILE, BAD, EU, NULL, m_in_null, NULL, 0},
    {"file/out-null", FN_FILE, BAD, EU, NULL, m_out_null, NULL, 0},
    {"file/in-other", FN_FILE, DIFF, 0, NULL, m_in_other, NULL, 0},
    {"file/out-other", FN_FILE, DIFF, 0, NULL, m_out_other, NULL, 0},
    {"file/in-missing", FN_FILE, BAD, EU, NULL, m_in_missing, NULL, 0},
    {"file/format-i64", FN_FILE, DIFF, 0, NULL, m_i64, NULL, 0},
    {"file/format-gensort", FN_FILE, DIFF, 0, NULL, m_gensort, NULL, 0},
    {"file/io-root", FN_FILE, DIFF, 0, NULL, m_io_root, NULL, 0},
    {"file/io-rootv", FN_FILE, DIFF, 0, NULL, m_io_rootv, NULL, 0},
    {"file/io-range", FN_FILE, BAD, EU, NULL, m_io_range, NULL, 0},
    {"file/balance-exact", FN_FILE, DIFF, 0, NULL, m_balance_exact, NULL, 0},
    {"file/check", FN_FILE, DIFF, 0, NULL, m_check, NULL, 0},
    {"file/sync", FN_FILE, DIFF, 0, NULL, m_sync, NULL, 0},
    {"file/threads-huge", FN_FILE, BAD, EU, NULL, m_threads_huge, NULL, 0},
    {"file/epsilon-inf", FN_FILE, BAD, EU, NULL, m_epsilon_inf, NULL, 0},
    {"file/finish-sort", FN_FILE, OWN, 0, NULL, m_finish_sort, NULL, 0},

    /* sortex_stats_write_json() */
    {"json/valid", FN_JSON, OWN, 0, NULL, m_none, NULL, 0},
    {"json/cfg-null", FN_JSON, OWN, 0, NULL, m_cfg_null, NULL, 0},
    {"json/strings-null", FN_JSON, OWN, 0, NULL, m_strings_null, NULL, 0},
    {"json/comm-null", FN_JSON, BAD, EU, NULL, m_comm_null, NULL, 0},
    {"json/comm-inter", FN_JSON, BAD, EU, NULL, m_comm_inter, NULL, 0},
    {"json/stats-null", FN_JSON, BAD, EU, NULL, m_stats_null, NULL, 0},
    {"json/path-null", FN_JSON, BAD, EU, NULL, m_path_null, NULL, 0},
    {"json/path-other", FN_JSON, DIFF, 0, NULL, m_path_other, NULL, 0},
    {"json/path-unwritable", FN_JSON, BAD, SORTEX_EIO, NULL, m_path_bad_dir, NULL, 1},
    {"json/cfg-balance", FN_JSON, DIFF, 0, NULL, m_balance_exact, NULL, 0},
    {"json/cfg-threads", FN_JSON, BAD, EU, NULL, m_threads_negative, NULL, 0},

    /* sortex_stats_print(): returns nothing; a bad argument gives one error line */
    {"print/valid", FN_PRINT, OWN, 0, NULL, m_none, NULL, 0},
    {"print/stats-null", FN_PRINT, BAD, 0, NULL, m_stats_null, NULL, 0},
    {"print/comm-null", FN_PRINT, BAD, 0, NULL, m_comm_null, NULL, 0},
    {"print/comm-inter", FN_PRINT, BAD, 0, NULL, m_comm_inter, NULL, 0},

    /* sortex_format_layout(): not collective, prints nothing */
    {"layout/valid", FN_LAYOUT, OWN, 0, NULL, m_none, NULL, 0},
    {"layout/out-null", FN_LAYOUT, BAD, EU, NULL, m_layout_out_null, NULL, 0},
    {"layout/record-size-0", FN_LAYOUT, BAD, EU, NULL, m_layout_r0, NULL, 0},
    {"layout/record-size-65537", FN_LAYOUT, BAD, EU, NULL, m_layout_r_big, NULL, 0},
    {"layout/key-size-0", FN_LAYOUT, BAD, EU, NULL, m_layout_k0, NULL, 0},
    {"layout/key-past-record", FN_LAYOUT, BAD, EU, NULL, m_layout_key_past, NULL, 0},

    /* the rest: not collective, no error codes */
    {"plain/config-default-null", FN_PLAIN, OWN, 0, NULL, NULL, p_config_default_null, 0},
    {"plain/exchange-find", FN_PLAIN, OWN, 0, NULL, NULL, p_exchange_find, 0},
    {"plain/exchange-name", FN_PLAIN, OWN, 0, NULL, NULL, p_exchange_name, 0},
    {"plain/format-find", FN_PLAIN, OWN, 0, NULL, NULL, p_format_find, 0},
    {"plain/format-free", FN_PLAIN, OWN, 0, NULL, NULL, p_format_free, 0},
    {"plain/record-size", FN_PLAIN, OWN, 0, NULL, NULL, p_record_size, 0},
    {"plain/phase-name", FN_PLAIN, OWN, 0, NULL, NULL, p_phase_name, 0},
    {"plain/alloc-huge", FN_PLAIN, OWN, 0, NULL, NULL, p_alloc_huge, 0},
    {"plain/free-null", FN_PLAIN, OWN, 0, NULL, NULL, p_free_null, 0},
};
#undef EU
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* ---- set-up and checks ------------------------------------------------------------------- */

/* The valid call of function @fn. */
static void call_init(struct call *c, enum fn fn)
{
    memset(c, 0, sizeof(*c));
    c->comm = MPI_COMM_WORLD;
    c->made[0] = c->made[1] = MPI_COMM_NULL;
    sortex_config_default(&c->cfg_store);
    c->cfg_store.threads = 2;
    if (fn == FN_RECORDS) {
        c->cfg_store.format = layout13;
    }
    c->cfg = &c->cfg_store;
    c->stats = &c->stats_store;
    if (fn == FN_JSON || fn == FN_PRINT) {
        c->stats_store = sorted_stats;
    }
    c->buf = &c->data;
    c->n = &c->count;
    c->count = 300 + 53 * (uint64_t)test_rank;
    c->in = in_path;
    c->out = out_path;
    c->path = json_path;
    c->input = in_path;
    c->output = out_path;
    c->command = "test_args_mpi";
    c->r = 13;
    c->o = 3;
    c->k = 5;
    c->layout = &c->layout_store;
}

/* The format a sort of @c runs with (NULL: u64). */
static const struct util_format *call_format(const struct call *c)
{
    return c->cfg != NULL ? c->cfg->format : NULL;
}

/* Fills this rank's keys or records for the call's format, from seed @seed. */
static void make_data(struct call *c, uint64_t seed)
{
    if (c->no_data) {
        c->data = NULL;
        return;
    }
    size_t r = sortex_record_size(call_format(c));
    c->data = sortex_alloc_records(call_format(c), c->count ? c->count : 1);
    unsigned char *p = c->data;
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)test_rank + 1;
    for (size_t i = 0; p != NULL && i < c->count * r; i++) {
        p[i] = (unsigned char)(util_splitmix64(&s) >> 56);
    }
}

/* Order of two elements of format @f (NULL: u64): numbers by value, records by key bytes. */
static int elem_cmp(const struct util_format *f, const unsigned char *a, const unsigned char *b)
{
    const struct util_format *i64 = sortex_format_find("i64");
    if (sortex_record_size(f) == 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (f == i64) {
            return (int64_t)x < (int64_t)y ? -1 : (int64_t)x > (int64_t)y;
        }
        return x < y ? -1 : x > y;
    }
    size_t o = f == layout13 ? 3 : 0, k = f == layout13 ? 5 : 10;
    return memcmp(a + o, b + o, k);
}

/* True when @n elements of format @f at @p are in order. */
static bool in_order(const struct util_format *f, const unsigned char *p, uint64_t n)
{
    size_t r = sortex_record_size(f);
    for (uint64_t i = 1; i < n; i++) {
        if (elem_cmp(f, p + (i - 1) * r, p + i * r) > 0) {
            return false;
        }
    }
    return true;
}

/* After a successful in-memory sort: the count is kept and the slices follow one another. */
static void check_sorted_memory(const struct call *c, uint64_t n_before, const char *what)
{
    const struct util_format *f = call_format(c);
    size_t r = sortex_record_size(f);
    uint64_t sums[2] = {n_before, c->count};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    expect_true(sums[0] == sums[1], "%s: %llu elements in, %llu out", what,
                (unsigned long long)sums[0], (unsigned long long)sums[1]);
    expect_true(in_order(f, c->data, c->count), "%s: this rank's slice is out of order", what);
    /* Each rank's first and last element, to see that rank r's last <= rank r+1's first. */
    unsigned char mine[2 * 128 + 1] = {0};
    mine[0] = c->count > 0;
    if (c->count > 0) {
        memcpy(mine + 1, c->data, r);
        memcpy(mine + 1 + 128, (unsigned char *)c->data + (c->count - 1) * r, r);
    }
    unsigned char *all = malloc((size_t)test_size * sizeof(mine));
    MPI_Allgather(mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE,
                  MPI_COMM_WORLD);
    const unsigned char *last = NULL;
    for (int q = 0; q < test_size; q++) {
        const unsigned char *e = all + (size_t)q * sizeof(mine);
        if (e[0]) {
            expect_true(last == NULL || elem_cmp(f, last, e + 1) <= 0,
                        "%s: rank %d's slice starts below its predecessor's end", what, q);
            last = e + 1 + 128;
        }
    }
    free(all);
}

/* Rank 0: the sorted file @path holds the input's count of elements of format @f, in order. */
static void check_sorted_file(const struct util_format *f, const char *path, const char *what)
{
    FILE *fp = fopen(path, "rb");
    expect_true(fp != NULL, "%s: no output file %s", what, path);
    if (fp == NULL) {
        return;
    }
    unsigned char *p = malloc(IN_KEYS * 8 + 1);
    size_t got = fread(p, 1, IN_KEYS * 8 + 1, fp);
    fclose(fp);
    expect_true(got == IN_KEYS * 8, "%s: output of %zu bytes, not %u", what, got, IN_KEYS * 8);
    expect_true(in_order(f, p, got / sortex_record_size(f)), "%s: the output file is out of order",
                what);
    free(p);
}

/* Runs the call; returns the code (sortex_stats_print: 0). */
static int run_call(enum fn fn, struct call *c)
{
    switch (fn) {
    case FN_SORT:
        return sortex_sort(c->comm, (uint64_t **)c->buf, c->n, c->cfg, c->stats);
    case FN_RECORDS:
        return sortex_sort_records(c->comm, c->buf, c->n, c->cfg, c->stats);
    case FN_FILE:
        return sortex_sort_file(c->comm, c->in, c->out, c->cfg, c->stats);
    case FN_JSON:
        return sortex_stats_write_json(c->comm, c->cfg, c->stats, c->input, c->output, c->command,
                                       c->path);
    case FN_PRINT:
        sortex_stats_print(c->comm, c->stats);
        return 0;
    case FN_LAYOUT:
        return sortex_format_layout(c->r, c->o, c->k, c->layout);
    default:
        return 0;
    }
}

/* stderr of this rank while a call runs: a file, counted afterwards. */
static FILE *capture;
static int saved_fd = -1;

static void capture_begin(void)
{
    fflush(stderr);
    if (ftruncate(fileno(capture), 0) != 0) {
        perror("ftruncate");
    }
    rewind(capture);
    saved_fd = dup(STDERR_FILENO);
    dup2(fileno(capture), STDERR_FILENO);
}

/* Reads the capture back: returns its error lines ("PROG: error: "); @echo prints them all. */
static int capture_read(bool echo)
{
    rewind(capture);
    char line[2048];
    int errors = 0;
    while (fgets(line, sizeof(line), capture) != NULL) {
        errors += strstr(line, ": error: ") != NULL;
        if (echo) {
            fprintf(stderr, "  rank %d printed: %s", test_rank, line);
        }
    }
    return errors;
}

/* Ends the capture; returns the error lines it caught. */
static int capture_end(void)
{
    fflush(stderr);
    dup2(saved_fd, STDERR_FILENO);
    close(saved_fd);
    return capture_read(false);
}

/* Runs case @t with its mutation on the ranks of @scope; checks every rank. */
static void run_case(const struct tcase *t, enum scope scope, uint64_t seed)
{
    int mutated = scope == SCOPE_ALL || (scope == SCOPE_FIRST && test_rank == 0) ||
                  (scope == SCOPE_LAST && test_rank == test_size - 1);
    int nmutated = scope == SCOPE_ALL ? test_size : 1;
    int mixed = scope != SCOPE_ALL && test_size > 1;
    int wrong = t->kind == BAD || (t->kind == DIFF && mixed);
    int expect = wrong ? (t->kind == BAD ? t->code : SORTEX_EUSAGE) : 0;
    /* No communicator to agree over: every process given it speaks. */
    int per_process = t->mutate == m_comm_null || t->mutate == m_comm_inter;
    int lines = !wrong || t->fn == FN_LAYOUT || t->fn == FN_PLAIN ? 0 : per_process ? nmutated : 1;
    char what[160];
    (void)snprintf(what, sizeof(what), "%s on %s (P=%d)", t->name, scope_names[scope], test_size);

    struct call c;
    call_init(&c, t->fn);
    if (t->base != NULL) {
        t->base(&c);
    }
    if (mutated && t->mutate != NULL) {
        t->mutate(&c);
    }
    if (t->fn == FN_SORT || t->fn == FN_RECORDS) {
        make_data(&c, seed);
    }
    uint64_t n_before = c.count;
    if (test_rank == 0 && t->fn == FN_FILE) {
        (void)unlink(out_path);
        (void)unlink(out2_path);
    }
    if (test_rank == 0 && t->fn == FN_JSON) {
        (void)unlink(json_path);
        (void)unlink(json2_path);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    capture_begin();
    int code = t->fn == FN_PLAIN ? t->plain() : run_call(t->fn, &c);
    int errors = capture_end();

    int bad_code = code != expect;
    expect_d_eq(code, expect, "%s: the code returned", what);
    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (test_rank == 0) {
        expect_d_eq(total, lines, "%s: the error lines in the job", what);
    }
    if (test_verbose || bad_code || (test_rank == 0 && total != lines)) {
        (void)capture_read(true); /* what this rank printed, to see why */
    }

    /* The results: a sort's output, a failed sort's buffer, the files left behind. */
    if (t->fn == FN_SORT || t->fn == FN_RECORDS) {
        if (code == 0 && expect == 0) {
            check_sorted_memory(&c, n_before, what);
        } else if (code != 0 && c.buf != NULL && c.n != NULL) {
            expect_true(c.data == NULL && c.count == 0, "%s: failed, but *keys or *n was kept",
                        what);
        }
        sortex_free_records(c.data); /* the sorted slice, or still ours */
    }
    if (t->fn == FN_FILE && test_rank == 0) {
        if (expect == 0 && code == 0) {
            check_sorted_file(call_format(&c), c.out, what);
        } else if (expect != 0) {
            expect_true(access(out_path, F_OK) != 0 && access(out2_path, F_OK) != 0,
                        "%s: failed, but left an output file", what);
        }
    }
    if (t->fn == FN_JSON && test_rank == 0) {
        if (expect == 0 && code == 0) {
            expect_true(access(c.path, F_OK) == 0, "%s: no stats file %s", what, c.path);
        } else if (expect != 0) {
            expect_true(access(json_path, F_OK) != 0 && access(json2_path, F_OK) != 0,
                        "%s: failed, but wrote a stats file", what);
        }
    }
    for (int i = 1; i >= 0; i--) {
        if (c.made[i] != MPI_COMM_NULL) {
            MPI_Comm_free(&c.made[i]);
        }
    }
    if (t->fn == FN_LAYOUT && c.layout != NULL) {
        expect_true(code == 0 || *c.layout == NULL, "%s: failed, but *out is not NULL", what);
        sortex_format_free(code == 0 ? *c.layout : NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The collective functions called while MPI is not running, before MPI_Init or after
 * MPI_Finalize: SORTEX_EUSAGE and one line on every process, the keys freed, no MPI call.
 * Returns 0 when they kept that contract. */
static int outside_mpi(const char *when)
{
    uint64_t n = 4;
    uint64_t *keys = sortex_alloc_keys(n);
    struct sortex_stats st;
    memset(&st, 0, sizeof(st));
    capture_begin();
    int codes[3] = {
        sortex_sort(MPI_COMM_WORLD, &keys, &n, NULL, NULL),
        sortex_sort_file(MPI_COMM_WORLD, in_path, out_path, NULL, NULL),
        sortex_stats_write_json(MPI_COMM_WORLD, NULL, &st, NULL, NULL, NULL, json_path)};
    sortex_stats_print(MPI_COMM_WORLD, &st);
    int errors = capture_end();
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        bad |= codes[i] != SORTEX_EUSAGE;
    }
    if (bad || errors != 4 || keys != NULL) {
        fprintf(stderr, "%s: codes %d %d %d, %d error lines (4 expected), keys %s\n", when,
                codes[0], codes[1], codes[2], errors, keys ? "kept" : "freed");
        (void)capture_read(true);
        sortex_free_keys(keys);
        return 1;
    }
    return 0;
}

/* Writes IN_KEYS random keys from @seed to @path (rank 0). */
static void write_input(const char *path, uint64_t seed)
{
    uint64_t *k = malloc(IN_KEYS * 8);
    for (unsigned i = 0; i < IN_KEYS; i++) {
        k[i] = util_splitmix64(&seed);
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(k, 8, IN_KEYS, f) != IN_KEYS || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(k);
}

/* Case *@row on every scope it has (the case's index gives its data's seed). */
static void test_case(const void *row)
{
    const struct tcase *t = row;
    if (t->mutate == m_comm_inter && test_size < 2) {
        test_skip("an intercommunicator joins two groups of ranks");
        return;
    }
    /* Not collective, or no communicator: every rank at once only. */
    int scopes = t->fn == FN_LAYOUT || t->fn == FN_PLAIN || t->mutate == m_comm_null ||
                         t->mutate == m_comm_inter || t->all_only
                     ? 1
                     : SCOPE_COUNT;
    for (int s = 0; s < scopes; s++) {
        run_case(t, (enum scope)s, (uint64_t)(t - cases) + 1);
    }
}

/* What outside_mpi() found before MPI_Init (0: the contract held). */
static int before_init;

static void test_before_init(void)
{
    expect_d_eq(before_init, 0, "the collective functions before MPI_Init");
}

static void test_after_finalize(void)
{
    expect_d_eq(outside_mpi("after MPI_Finalize"), 0,
                "the collective functions after "
                "MPI_Finalize");
}

int main(int argc, char **argv)
{
    /* The tests: before MPI_Init, the cases, after MPI_Finalize (each process for itself). */
    static struct test tests[NCASES + 3];
    size_t ntests = 0;
    tests[ntests++] = (struct test){"mpi/before-init", test_before_init, NULL, NULL};
    for (size_t i = 0; i < NCASES; i++) {
        tests[ntests++] = (struct test){cases[i].name, NULL, test_case, &cases[i]};
    }
    const struct test *last = &tests[ntests];
    tests[ntests++] = (struct test){"mpi/after-finalize", test_after_finalize, NULL, NULL};
    tests[ntests] = (struct test)TEST_END;
    test_init(argc, argv, tests);
    const char *arg = test_param("dir", NULL);
    if (arg == NULL) {
        fprintf(stderr, "usage: mpirun -np P test_args_mpi [-v] dir=DIR [CASE ...] | --list\n");
        return 2;
    }
    (void)snprintf(dir, sizeof(dir), "%s", arg);
    (void)snprintf(in_path, sizeof(in_path), "%s/in.bin", dir);
    (void)snprintf(in2_path, sizeof(in2_path), "%s/in2.bin", dir);
    (void)snprintf(out_path, sizeof(out_path), "%s/out.bin", dir);
    (void)snprintf(out2_path, sizeof(out2_path), "%s/out2.bin", dir);
    (void)snprintf(json_path, sizeof(json_path), "%s/stats.json", dir);
    (void)snprintf(json2_path, sizeof(json2_path), "%s/stats2.json", dir);
    (void)snprintf(missing_path, sizeof(missing_path), "%s/missing.bin", dir);
    (void)snprintf(bad_dir_path, sizeof(bad_dir_path), "%s/no/such/dir/stats.json", dir);
    capture = tmpfile();
    if (capture == NULL) {
        perror("test_args_mpi: tmpfile");
        return 2;
    }
    if (test_wanted("mpi/before-init")) {
        before_init = outside_mpi("before MPI_Init");
    }
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    test_mpi_begin();
    if (test_rank == 0) {
        write_input(in_path, 1);
        write_input(in2_path, 2);
    }
    if (sortex_format_layout(13, 3, 5, &layout13) != 0 ||
        sortex_format_layout(100, 0, 10, &layout100) != 0) {
        fprintf(stderr, "set-up failed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* The stats of a real sort, for the stats functions. */
    struct call c;
    call_init(&c, FN_FILE);
    if (sortex_sort_file(MPI_COMM_WORLD, in_path, out_path, c.cfg, &sorted_stats) != 0) {
        fprintf(stderr, "the first sort failed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    for (const struct test *t = tests; t != last; t++) {
        if (test_wanted(t->name)) {
            test_run(t);
        }
    }
    sortex_format_free(layout13);
    sortex_format_free(layout100);
    test_mpi_end();
    MPI_Finalize();
    if (test_wanted(last->name)) {
        test_run(last);
    }
    int status = test_finish();
    fclose(capture);
    return status;
}

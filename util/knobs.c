/*
 * util/knobs.c: the table of environment variables and their one parser (see knobs.h). This is
 * the only file of sortex that calls getenv().
 *
 * The defaults live here, in the table, and the code that uses a knob reads its value through
 * util_knob_u64(); the reasons for each default are given where it is used (the file named in
 * the row).
 */
#include "util/knobs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

static const struct util_knob_info table[UTIL_KNOB_COUNT] = {
    [UTIL_KNOB_SCHED_TARGET_H] =
        {"SORTEX_SCHED_TARGET_H", UTIL_KNOB_SETTING, UTIL_KNOB_INT_T, 0, 1, 1048576, NULL,
         "back-end's", "packets",
         "direct, forward, fullduplex cut h into this many packets (rank 0's value holds for "
         "all; 1..1048576, else the exchange stops) [exchange/scheduled.c]"},
    [UTIL_KNOB_SCHED_LOOKAHEAD] =
        {"SORTEX_SCHED_LOOKAHEAD", UTIL_KNOB_SETTING, UTIL_KNOB_INT_T, 0, 1, 8, NULL, "auto",
         "steps",
         "scheduled steps in flight, 1..8 (1: one step at a time, the paper's model); auto: all "
         "for small pieces or an oversubscribed node, else 2 [exchange/scheduled.c]"},
    [UTIL_KNOB_TRANSPOSE_STEP] =
        {"SORTEX_TRANSPOSE_STEP", UTIL_KNOB_SETTING, UTIL_KNOB_COUNT_T, (uint64_t)1 << 16, 1,
         UINT64_MAX, NULL, "64Ki", "keys",
         "keys per rank in one pipelined transpose step (a huge value: no pipeline) "
         "[exchange/transpose.c]"},
    [UTIL_KNOB_SCATTER_MIN] =
        {"SORTEX_SCATTER_MIN", UTIL_KNOB_SETTING, UTIL_KNOB_COUNT_T, (uint64_t)64 << 10, 0,
         UINT64_MAX, NULL, "64Ki", "bytes",
         "grid and hypercube send a bundle with this much payload or more scattered, piece by "
         "piece; less packed into one message [exchange/bundle.c]"},
    [UTIL_KNOB_EAGER_BYTES] =
        {"SORTEX_EAGER_BYTES", UTIL_KNOB_SETTING, UTIL_KNOB_COUNT_T, 4032, 0, UINT64_MAX, NULL,
         "4032", "bytes",
         "short first bundle messages travel as eager chunks of this size (0: never) "
         "[exchange/bundle.c]"},
    [UTIL_KNOB_KERNEL] =
        {"SORTEX_KERNEL", UTIL_KNOB_SETTING, UTIL_KNOB_WORD_T, 0, 0, 0, "radix,vqsort", "auto", "",
         "the local sort's in-cache kernel; auto: the faster on this CPU, by a calibration of "
         "about 10 ms at the first sort [local/tuning.c]"},
    [UTIL_KNOB_SCATTER] =
        {"SORTEX_SCATTER", UTIL_KNOB_SETTING, UTIL_KNOB_WORD_T, 0, 0, 0, "plain,stream", "auto", "",
         "how the local sort's spread passes larger than the caches write their buckets: "
         "plain stores or streaming stores; auto: the faster, timed by each pass on its first "
         "keys [local/tuning.c]"},
    [UTIL_KNOB_MODEL_ALPHA] =
        {"SORTEX_MODEL_ALPHA", UTIL_KNOB_SETTING, UTIL_KNOB_COUNT_T, 0, 0, UINT64_MAX, NULL,
         "the machine's", "ns",
         "overrides the machine file's start-up time a message with which --exchange auto and "
         "--progress price the back-ends (sortex-sched --calibrate measures the file) "
         "[sort/exchange.c]"},
    [UTIL_KNOB_MODEL_BETA] =
        {"SORTEX_MODEL_BETA", UTIL_KNOB_SETTING, UTIL_KNOB_COUNT_T, 0, 0, UINT64_MAX, NULL,
         "the machine's", "ps/byte",
         "overrides the machine file's time a byte on a link for the same pricing (100: "
         "10 GB/s) [sort/exchange.c]"},
    [UTIL_KNOB_MACHINE] =
        {"SORTEX_MACHINE", UTIL_KNOB_SETTING, UTIL_KNOB_TEXT_T, 0, 0, 0, NULL,
         "~/.config/sortex/machine.txt", "",
         "the machine file (sortex-sched --calibrate writes one) with which --exchange auto, "
         "--progress and sortex-sched price the back-ends when --machine names none; unset and "
         "without that file: built-in constants of a project machine [exchange/machine.c]"},
    [UTIL_KNOB_L1D_BYTES] =
        {"SORTEX_L1D_BYTES", UTIL_KNOB_SETTING, UTIL_KNOB_COUNT_T, 0, 1024, UINT64_MAX, NULL,
         "as read", "bytes",
         "the L1 data cache per core the local sort plans for, instead of the size read from "
         "the CPU [util/cpu.c]"},
    [UTIL_KNOB_L2_BYTES] =
        {"SORTEX_L2_BYTES", UTIL_KNOB_SETTING, UTIL_KNOB_COUNT_T, 0, 4096, UINT64_MAX, NULL,
         "as read", "bytes",
         "the L2 cache per core the local sort plans for (bucket sizes, spread passes), "
         "instead of the size read from the CPU [util/cpu.c]"},
    [UTIL_KNOB_OMP_THREADS] =
        {"OMP_NUM_THREADS", UTIL_KNOB_SETTING, UTIL_KNOB_TEXT_T, 0, 0, 0, NULL, "see --threads",
         "threads",
         "OpenMP's own variable: when set, OpenMP's reading of it is the threads per "
         "rank, unless --threads says otherwise [sort/sortex.c]"},
    [UTIL_KNOB_TMPDIR] =
        {"TMPDIR", UTIL_KNOB_SETTING, UTIL_KNOB_TEXT_T, 0, 0, 0, NULL, "the output's directory",
         "",
         "the directory of the external sort's temporary files when --temp-dir is not given "
         "(the usual variable) [sort/ext.c]"},
    [UTIL_KNOB_XDG_CONFIG_HOME] =
        {"XDG_CONFIG_HOME", UTIL_KNOB_SETTING, UTIL_KNOB_TEXT_T, 0, 0, 0, NULL, "$HOME/.config",
         "", "the directory of the user's configuration (the usual variable): the machine file "
             "is sortex/machine.txt in it [exchange/machine.c]"},
    [UTIL_KNOB_HOME] =
        {"HOME", UTIL_KNOB_SETTING, UTIL_KNOB_TEXT_T, 0, 0, 0, NULL, "as the system sets it", "",
         "the user's home directory (the usual variable): the machine file is "
         ".config/sortex/machine.txt in it unless XDG_CONFIG_HOME says otherwise "
         "[exchange/machine.c]"},
    [UTIL_KNOB_INT_LIMIT] =
        {"SORTEX_INT_LIMIT", UTIL_KNOB_HOOK, UTIL_KNOB_COUNT_T, 2147483647, 1, 2147483647, NULL,
         "INT_MAX", "bytes",
         "the most bytes the exchange hands to one MPI call (elements of 100 bytes reach it at "
         "INT_MAX / 100): lower it to take the large-message paths with small data "
         "[exchange/registry.c]"},
    [UTIL_KNOB_FWD_RING_BYTES] =
        {"SORTEX_FWD_RING_BYTES", UTIL_KNOB_HOOK, UTIL_KNOB_COUNT_T, (uint64_t)8 << 20,
         1, UINT64_MAX, NULL, "8Mi", "bytes",
         "forward's ring of pieces in transit (1: one piece at a time) [exchange/fwd_ring.c]"},
    [UTIL_KNOB_SCHED_JOIN] =
        {"SORTEX_SCHED_JOIN", UTIL_KNOB_HOOK, UTIL_KNOB_COUNT_T, 1, 0, UINT64_MAX, NULL, "1", "",
         "0: the scheduled back-ends send pieces that run on separately (any rank's 0 holds "
         "for all) [exchange/scheduled.c]"},
    [UTIL_KNOB_ROUNDS] =
        {"SORTEX_ROUNDS", UTIL_KNOB_HOOK, UTIL_KNOB_WORD_T, 0, 0, 0, "sync,async", "auto", "",
         "pairwise and shift: sync (a blocking round at a time) or async (all posted at once) "
         "[exchange/pairwise.c]"},
    [UTIL_KNOB_FAIL] = {"SORTEX_FAIL", UTIL_KNOB_HOOK, UTIL_KNOB_SPEC_T, 0, 0, 0, "PHASE[:RANK]",
                        "none", "",
                        "the sort fails after PHASE (on RANK only, if given) [sort/sortex.c]"},
    [UTIL_KNOB_STALL] =
        {"SORTEX_STALL", UTIL_KNOB_HOOK, UTIL_KNOB_SPEC_T, 0, 0, 0, "POINT:RANK:SECONDS", "none",
         "", "RANK announces itself and sleeps SECONDS at POINT: a phase's start, read-chunk, "
         "exchange-run, sort-bucket (the external sort's pass 2) or commit [sort/sortex.c]; "
         "verify-read, rank 0 [verify/files.c]"},
    [UTIL_KNOB_CORRUPT] =
        {"SORTEX_CORRUPT", UTIL_KNOB_HOOK, UTIL_KNOB_SPEC_T, 0, 0, 0, "order|keys:RANK", "none", "",
         "under --check, right before it looks: order swaps RANK's first and last output keys, "
         "keys copies its second key over its first [sort/check.c]"},
    [UTIL_KNOB_EXT_FILL] =
        {"SORTEX_EXT_FILL", UTIL_KNOB_HOOK, UTIL_KNOB_INT_T, 60, 1, 10000, NULL, "60", "%",
         "the external sort plans its buckets at this share of what pass 2 holds (above 100: "
         "buckets too big, split by the extra pass) [sort/ext.c]"},
    [UTIL_KNOB_LOCAL_SIZE] =
        {"OMPI_COMM_WORLD_LOCAL_SIZE", UTIL_KNOB_LAUNCH, UTIL_KNOB_INT_T, 0, 1, 2147483647, NULL,
         "unknown", "ranks",
         "ranks on this node, set by Open MPI's mpirun: more than the cores makes the "
         "round-based back-ends post everything at once [exchange/registry.c]"},
    [UTIL_KNOB_SLURM_CPUS] =
        {"SLURM_CPUS_PER_TASK", UTIL_KNOB_LAUNCH, UTIL_KNOB_INT_T, 0, 1, 4096, NULL, "unset",
         "CPUs",
         "Slurm's CPUs per task (srun -c): the threads per rank when OMP_NUM_THREADS is "
         "unset [sort/sortex.c]"},
    [UTIL_KNOB_SLURM_MEM_NODE] =
        {"SLURM_MEM_PER_NODE", UTIL_KNOB_LAUNCH, UTIL_KNOB_COUNT_T, 0, 1, UINT64_MAX, NULL,
         "unset", "MiB",
         "Slurm's memory a node (sbatch --mem): bounds the memory the ranks of a node may use "
         "[util/mem.c]"},
    [UTIL_KNOB_SLURM_MEM_CPU] =
        {"SLURM_MEM_PER_CPU", UTIL_KNOB_LAUNCH, UTIL_KNOB_COUNT_T, 0, 1, UINT64_MAX, NULL,
         "unset", "MiB",
         "Slurm's memory a CPU (sbatch --mem-per-cpu), times SLURM_CPUS_ON_NODE: bounds the "
         "memory the ranks of a node may use [util/mem.c]"},
    [UTIL_KNOB_SLURM_CPUS_NODE] =
        {"SLURM_CPUS_ON_NODE", UTIL_KNOB_LAUNCH, UTIL_KNOB_INT_T, 0, 1, 2147483647, NULL,
         "unset", "CPUs", "the job's CPUs on this node, set by Slurm [util/mem.c]"},
    [UTIL_KNOB_HNP_URI] =
        {"OMPI_MCA_orte_hnp_uri", UTIL_KNOB_LAUNCH, UTIL_KNOB_TEXT_T, 0, 0, 0, NULL, "unset", "",
         "Open MPI's address of mpirun: equal to the local daemon's, mpirun runs on this host "
         "and --io root can write into its standard output [sort/io_root.c]"},
    [UTIL_KNOB_DAEMON_URI] =
        {"OMPI_MCA_orte_local_daemon_uri", UTIL_KNOB_LAUNCH, UTIL_KNOB_TEXT_T, 0, 0, 0, NULL,
         "unset", "", "Open MPI's address of this host's daemon [sort/io_root.c]"},
    [UTIL_KNOB_OMPI_RANK] =
        {"OMPI_COMM_WORLD_RANK", UTIL_KNOB_LAUNCH, UTIL_KNOB_INT_T, 0, 0, 2147483647, NULL,
         "unset", "",
         "this process's rank, set by Open MPI's mpirun: before MPI_Init, only rank 0 answers "
         "--help, --version and --knobs (the first of the four rank variables set holds) "
         "[util/util.c]"},
    [UTIL_KNOB_PMIX_RANK] =
        {"PMIX_RANK", UTIL_KNOB_LAUNCH, UTIL_KNOB_INT_T, 0, 0, 2147483647, NULL, "unset", "",
         "this process's rank, set by a PMIx process manager [util/util.c]"},
    [UTIL_KNOB_PMI_RANK] =
        {"PMI_RANK", UTIL_KNOB_LAUNCH, UTIL_KNOB_INT_T, 0, 0, 2147483647, NULL, "unset", "",
         "this process's rank, set by a PMI process manager (MPICH's Hydra) [util/util.c]"},
    [UTIL_KNOB_SLURM_RANK] =
        {"SLURM_PROCID", UTIL_KNOB_LAUNCH, UTIL_KNOB_INT_T, 0, 0, 2147483647, NULL, "unset", "",
         "this task's rank, set by Slurm's srun [util/util.c]"},
};

static struct util_knob_value values[UTIL_KNOB_COUNT];
static int loaded;

/* Parses @text as knob @k into @v (set already); leaves valid at 0 when it does not parse. */
static void parse(const struct util_knob_info *k, const char *text, struct util_knob_value *v)
{
    uint64_t u = 0;
    long l = 0;
    switch (k->type) {
    case UTIL_KNOB_COUNT_T:
        v->valid = util_parse_count(text, &u) == UTIL_OK && u >= k->min && u <= k->max;
        break;
    case UTIL_KNOB_INT_T:
        v->valid = util_parse_int(text, (long)k->min, (long)k->max, &l) == UTIL_OK;
        u = (uint64_t)l;
        break;
    case UTIL_KNOB_WORD_T: {
        /* The position of text among the comma separated choices, from 1. */
        size_t len = strlen(text);
        const char *c = k->choices;
        for (uint64_t i = 1; c != NULL && *c != '\0'; i++) {
            const char *end = strchr(c, ',');
            size_t clen = end != NULL ? (size_t)(end - c) : strlen(c);
            if (clen == len && strncmp(c, text, len) == 0) {
                v->valid = 1;
                u = i;
                break;
            }
            c = end != NULL ? end + 1 : NULL;
        }
        break;
    }
    case UTIL_KNOB_SPEC_T: {
        /* WORD[:INT[:INT]]: the word is what precedes the first ':'. */
        const char *colon = strchr(text, ':');
        size_t len = colon != NULL ? (size_t)(colon - text) : strlen(text);
        if (len == 0 || len >= sizeof(v->word)) {
            break;
        }
        memcpy(v->word, text, len);
        v->word[len] = '\0';
        v->valid = 1;
        char buf[32];
        while (colon != NULL && v->valid) {
            const char *s = colon + 1;
            colon = strchr(s, ':');
            size_t n = colon != NULL ? (size_t)(colon - s) : strlen(s);
            v->valid = v->nargs < 2 && n < sizeof(buf);
            if (v->valid) {
                memcpy(buf, s, n);
                buf[n] = '\0';
                v->valid = util_parse_int(buf, -2147483647L, 2147483647L, &v->arg[v->nargs]) ==
                           UTIL_OK;
                v->nargs++;
            }
        }
        if (!v->valid) {
            v->word[0] = '\0';
            v->nargs = 0;
        }
        break;
    }
    case UTIL_KNOB_TEXT_T:
        v->valid = 1;
        break;
    default:
        break;
    }
    v->value = v->valid ? u : k->dflt;
}

/* Reads every knob from the environment: the one place sortex calls getenv(). */
static void load(void)
{
    for (int i = 0; i < UTIL_KNOB_COUNT; i++) {
        const struct util_knob_info *k = &table[i];
        struct util_knob_value *v = &values[i];
        const char *text = getenv(k->name);
        memset(v, 0, sizeof(*v));
        v->value = k->dflt;
        if (text != NULL && *text != '\0') {
            v->set = 1;
            v->text = text;
            parse(k, text, v);
        }
    }
    loaded = 1;
}

const struct util_knob_info *util_knob_info(enum util_knob k)
{
    return (unsigned)k < UTIL_KNOB_COUNT ? &table[k] : NULL;
}

const struct util_knob_value *util_knob(enum util_knob k)
{
    if (!loaded) {
        load();
    }
    return &values[(unsigned)k < UTIL_KNOB_COUNT ? k : 0];
}

uint64_t util_knob_u64(enum util_knob k)
{
    return util_knob(k)->value;
}

/* Prints @text word by word in lines of at most @width columns, each after @indent blanks. */
static void wrap(FILE *out, const char *text, int indent, int width)
{
    int col = 0;
    while (*text != '\0') {
        while (*text == ' ') {
            text++;
        }
        int len = (int)strcspn(text, " ");
        if (len == 0) {
            break;
        }
        if (col > 0 && col + 1 + len > width) {
            fputc('\n', out);
            col = 0;
        }
        if (col == 0) {
            col = fprintf(out, "%*s%.*s", indent, "", len, text);
        } else {
            col += fprintf(out, " %.*s", len, text);
        }
        text += len;
    }
    fputc('\n', out);
}

void util_knob_stall(const char *point, int rank)
{
    const struct util_knob_value *v = util_knob(UTIL_KNOB_STALL); /* POINT:RANK:SECONDS */
    if (!v->valid || v->nargs != 2 || strcmp(v->word, point) != 0 || v->arg[0] != rank ||
        v->arg[1] < 0) {
        return;
    }
    fprintf(stderr, "%s: rank %d pid %ld stalling %ld s in %s\n", util_progname(), rank,
            (long)getpid(), v->arg[1], point);
    fflush(stderr);
    sleep((unsigned)v->arg[1]);
}

void util_knobs_print(FILE *out)
{
    static const char *const heads[UTIL_KNOB_KIND_COUNT] = {
        "settings (environment variables, read once per process):",
        "test hooks (for the test suites and measurements; leave them unset):",
        "set by the launcher:",
    };
    for (int kind = 0; kind < UTIL_KNOB_KIND_COUNT; kind++) {
        fprintf(out, "%s%s\n", kind ? "\n" : "", heads[kind]);
        for (int i = 0; i < UTIL_KNOB_COUNT; i++) {
            const struct util_knob_info *k = &table[i];
            const struct util_knob_value *v = util_knob((enum util_knob)i);
            if ((int)k->kind != kind) {
                continue;
            }
            /* NAME, default, unit, syntax and value when set; then what it does, indented. */
            char line[512], unit[32] = "", syntax[64] = "", now[160] = "";
            if (k->unit[0] != '\0') {
                (void)snprintf(unit, sizeof(unit), "unit %s", k->unit);
            }
            if (k->choices != NULL) {
                (void)snprintf(syntax, sizeof(syntax), "%s %s",
                               k->type == UTIL_KNOB_WORD_T ? "one of" : "syntax", k->choices);
            }
            if (v->set) {
                (void)snprintf(now, sizeof(now), "(set: %.120s%s)", v->text,
                               v->valid ? "" : ", not valid");
            }
            (void)snprintf(line, sizeof(line), "  %-27s default %-11s %-13s %s %s", k->name,
                           k->dflt_text, unit, syntax, now);
            size_t len = strlen(line);
            while (len > 0 && line[len - 1] == ' ') {
                line[--len] = '\0';
            }
            fprintf(out, "%s\n", line);
            wrap(out, k->what, 6, 100);
        }
    }
}

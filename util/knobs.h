/*
 * util/knobs.h: the one table of environment variables sortex reads.
 *
 * Every tunable (SORTEX_SCHED_TARGET_H ...), every test hook (SORTEX_FAIL ...) and every
 * variable the launcher sets that sortex consults (OMPI_COMM_WORLD_LOCAL_SIZE, the ranks) is a
 * row of one table in util/knobs.c, with its default, its unit, its range and whether it is a test
 * hook. The whole environment is read once per process, by one parser, the first time any knob
 * is asked for; later changes to the environment are not seen. `sortex --knobs` prints the table
 * (settings first, test hooks apart), and the README lists it.
 *
 * A value that does not parse or lies outside the range counts as unset (the default holds),
 * except where the knob's user decides otherwise: SORTEX_SCHED_TARGET_H stops the exchange
 * with one error line instead (util_knob()->valid tells them apart).
 */
#ifndef SORTEX_UTIL_KNOBS_H
#define SORTEX_UTIL_KNOBS_H

#include <stdint.h>
#include <stdio.h>

/** The knobs, in the order `sortex --knobs` lists them within their kind. */
enum util_knob {
    /* settings */
    UTIL_KNOB_SCHED_TARGET_H,  /* packets h is cut into by direct, forward, fullduplex */
    UTIL_KNOB_SCHED_LOOKAHEAD, /* scheduled steps in flight */
    UTIL_KNOB_TRANSPOSE_STEP,  /* keys per rank per transpose step */
    UTIL_KNOB_SCATTER_MIN,     /* bundle payload from which it travels scattered */
    UTIL_KNOB_EAGER_BYTES,     /* eager chunk of a short first bundle message */
    UTIL_KNOB_KERNEL,          /* the local sort's in-cache kernel: radix or vqsort */
    UTIL_KNOB_SCATTER,         /* the local sort's large spread passes: plain or stream */
    UTIL_KNOB_MODEL_ALPHA,     /* --exchange auto: the model's start-up, ns */
    UTIL_KNOB_MODEL_BETA,      /* --exchange auto: the model's seconds a byte, in ps */
    UTIL_KNOB_MACHINE,         /* --exchange auto: the machine file of the cost models */
    UTIL_KNOB_L1D_BYTES,       /* the L1 data cache the local sort plans for */
    UTIL_KNOB_L2_BYTES,        /* the L2 cache the local sort plans for */
    UTIL_KNOB_OMP_THREADS,     /* OpenMP's own: when set, the threads per rank */
    UTIL_KNOB_TMPDIR,          /* the temporary files' directory of the external sort */
    UTIL_KNOB_XDG_CONFIG_HOME, /* where the user's machine file lives (sortex/machine.txt) */
    UTIL_KNOB_HOME,            /* ... else under $HOME/.config */
    /* test hooks */
    UTIL_KNOB_INT_LIMIT,      /* largest count handed to one MPI call */
    UTIL_KNOB_FWD_RING_BYTES, /* forwarding ring size */
    UTIL_KNOB_SCHED_JOIN,     /* join pieces that run on (0: never) */
    UTIL_KNOB_ROUNDS,         /* pairwise and shift rounds: sync or async */
    UTIL_KNOB_FAIL,           /* failure injection: PHASE[:RANK] */
    UTIL_KNOB_STALL,          /* stall injection: POINT:RANK:SECONDS */
    UTIL_KNOB_CORRUPT,        /* corruption under --check: order:RANK or keys:RANK */
    UTIL_KNOB_EXT_FILL,       /* external sort: buckets planned at this % of what fits */
    /* set by the launcher */
    UTIL_KNOB_LOCAL_SIZE,  /* ranks on this node (Open MPI) */
    UTIL_KNOB_SLURM_CPUS,  /* CPUs per task (Slurm's srun -c) */
    UTIL_KNOB_SLURM_MEM_NODE, /* Slurm's --mem: MiB a node */
    UTIL_KNOB_SLURM_MEM_CPU,  /* Slurm's --mem-per-cpu: MiB a CPU */
    UTIL_KNOB_SLURM_CPUS_NODE, /* Slurm: the CPUs of the job on this node */
    UTIL_KNOB_HNP_URI,     /* Open MPI: mpirun's address */
    UTIL_KNOB_DAEMON_URI,  /* Open MPI: this node's daemon's address */
    UTIL_KNOB_OMPI_RANK,   /* Open MPI: this process's rank */
    UTIL_KNOB_PMIX_RANK,   /* PMIx: this process's rank */
    UTIL_KNOB_PMI_RANK,    /* PMI (MPICH's Hydra, Slurm's PMI-2): this process's rank */
    UTIL_KNOB_SLURM_RANK,  /* Slurm: this task's rank (srun) */
    UTIL_KNOB_COUNT
};

/** What kind of variable a knob is. */
enum util_knob_kind {
    UTIL_KNOB_SETTING = 0, /* a user may tune it */
    UTIL_KNOB_HOOK = 1,    /* for the test suites and measurements; leave it unset */
    UTIL_KNOB_LAUNCH = 2,  /* set by the MPI launcher, never by hand */
    UTIL_KNOB_KIND_COUNT
};

/** How a knob's text is read. */
enum util_knob_type {
    UTIL_KNOB_COUNT_T = 0, /* a count with suffixes (util_parse_count()), within [min, max] */
    UTIL_KNOB_INT_T = 1,   /* a plain integer (util_parse_int()), within [min, max] */
    UTIL_KNOB_WORD_T = 2,  /* one of the comma separated words of `choices`: value 1, 2, ... */
    UTIL_KNOB_SPEC_T = 3,  /* WORD[:INT[:INT]]: the word and up to two integers */
    UTIL_KNOB_TEXT_T = 4,  /* any text, taken as it is (valid when set) */
    UTIL_KNOB_TYPE_COUNT
};

/** One row of the table. */
struct util_knob_info {
    const char *name;          /* the environment variable */
    enum util_knob_kind kind;
    enum util_knob_type type;
    uint64_t dflt;             /* the value when unset or invalid */
    uint64_t min, max;         /* the accepted range (counts and integers) */
    const char *choices;       /* words (UTIL_KNOB_WORD_T) or the syntax (UTIL_KNOB_SPEC_T) */
    const char *dflt_text;     /* the default as --knobs prints it */
    const char *unit;          /* "bytes", "keys", "packets", "steps", "ranks", "" */
    const char *what;          /* one line: what it does, and where */
};

/** A knob as read from the environment. */
struct util_knob_value {
    int set;          /* the variable is set and not empty */
    int valid;        /* set, and parsed within the range */
    uint64_t value;   /* the parsed value when valid, else the default */
    const char *text; /* the variable's text when set, else NULL */
    char word[32];    /* UTIL_KNOB_SPEC_T: the word ("" when not valid) */
    long arg[2];      /* UTIL_KNOB_SPEC_T: the integers after it ... */
    int nargs;        /* ... and how many there were */
};

/** The row of @k (never NULL for k < UTIL_KNOB_COUNT). */
const struct util_knob_info *util_knob_info(enum util_knob k);

/**
 * Knob @k as read from the environment. The first call reads every knob (call it first from one
 * thread; the library does, before any parallel region asks); the result lives as long as the
 * process.
 */
const struct util_knob_value *util_knob(enum util_knob k);

/** The value of knob @k: its parsed value when set and valid, else its default. */
uint64_t util_knob_u64(enum util_knob k);

/**
 * The stall hook of the reliability tests outside the sort: when SORTEX_STALL is @point:@rank:S,
 * prints "PROG: rank RANK pid PID stalling S s in POINT" on stderr and sleeps S seconds.
 */
void util_knob_stall(const char *point, int rank);

/**
 * Prints the table for `--knobs`: the settings, then the test hooks, then the launcher's
 * variables, each with its default, unit and what it does, and its value when set.
 */
void util_knobs_print(FILE *out);

#endif

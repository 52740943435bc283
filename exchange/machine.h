/*
 * exchange/machine.h: the machine the exchange cost models price for, and its file.
 *
 * A model walks the messages its back-end would send (exchange/exchange.h) and sums, round by
 * round, what the busiest rank or node must do: start-ups, bytes on the links, local copies
 * (exchange_model_result's path_startups, path_bytes, copy_bytes and sync_rounds). The machine
 * turns those into seconds:
 *
 *   predicted = f_startup alpha S + f_byte beta' V + f_copy copy' K + f_sync sync R
 *
 * with S the start-ups, V the bytes and K the copied bytes on the critical path, R the rounds
 * that synchronise ranks, beta' and copy' the per-byte costs blended between the cache's and
 * memory's by the share of the node's buffers the last-level cache holds, and f_* the factors
 * of the back-end's model, fitted against measured exchanges where the closed form misses
 * (1 when the file gives none). How V is counted depends on the machine: on one node
 * (links shm) the receiving ranks copy every byte, so a round costs at least the node's
 * received bytes over its cores; on a network (links net) a rank's sends and receives share
 * its link by the duplex share, and the ranks of a node share its link.
 *
 * The file: "name value" lines, '#' comments, as exchange_machine_print() writes them and
 * `sortex-sched --calibrate` measures them; the whole-sort model's compute constants
 * (sim/sortmodel.h) live in the same file. Where a program looks for it:
 * exchange_machine_load().
 */
#ifndef SORTEX_EXCHANGE_MACHINE_H
#define SORTEX_EXCHANGE_MACHINE_H

#include <stdint.h>
#include <stdio.h>

/** Models a machine file may give factors for (every registered back-end's models fit). */
#define EXCHANGE_MACHINE_MODELS 32

/** Where the sort looks for the machine file when none is named: $XDG_CONFIG_HOME/sortex/ or
 * $HOME/.config/sortex/, this file name. */
#define EXCHANGE_MACHINE_FILE "machine.txt"

/** One model's factors on the machine's terms (1: the closed form as it is). */
struct exchange_machine_factor {
    double startup, byte, copy, sync;
};

/** Where a machine's constants came from. */
enum exchange_machine_source {
    EXCHANGE_MACHINE_BUILTIN = 0, /* compiled in: measured on a project machine */
    EXCHANGE_MACHINE_FILE_GIVEN,  /* a file named on the command line */
    EXCHANGE_MACHINE_FILE_ENV,    /* the file SORTEX_MACHINE names */
    EXCHANGE_MACHINE_FILE_HOME,   /* the user's file (EXCHANGE_MACHINE_FILE under ~/.config) */
    EXCHANGE_MACHINE_SOURCE_COUNT
};

/** What the exchange models know about a machine. */
struct exchange_machine {
    double alpha;       /* seconds a message start-up */
    double beta;        /* seconds a byte on a link, buffers beyond the cache */
    double beta_cache;  /* seconds a byte on a link when the node's buffers fit its cache */
    double copy;        /* seconds a byte copied locally (memcpy), beyond the cache */
    double copy_cache;  /* seconds a byte copied locally within the cache */
    double sync;        /* seconds a round that synchronises ranks costs beyond its messages */
    double switch_s;    /* seconds a node with more ranks than cores takes to switch from one
                         * rank to another: such a node's synchronising round costs this times
                         * its ranks over its cores instead of sync */
    double duplex;      /* 0: a rank sends and receives at once at full rate; 1: its sends and
                         * receives share one rate (half duplex); between: part of the smaller */
    double llc_bytes;   /* the last-level cache of a node, bytes (0: no cache term) */
    double eager_bytes; /* the largest message sent eagerly; a longer one takes a rendezvous, a
                         * second start-up (Open MPI: btl_vader_eager_limit, btl_tcp_eager_limit) */
    int cores;          /* cores a node has */
    int shm;            /* 1: the ranks share one node (shared memory); 0: a network */
    int ranks_per_node; /* network: ranks sharing one node's link (at least 1) */
    int nfactors;
    struct {
        char model[32];
        struct exchange_machine_factor f;
    } factor[EXCHANGE_MACHINE_MODELS];
    enum exchange_machine_source source;
    char path[512];   /* the file read ("" for the built-in constants) */
    char origin[256]; /* one line: whose machine, when and how the constants were measured */
};

/** The built-in constants: one node of a project machine (2 cores, Open MPI 4.1 shared memory),
 * fitted to its exchange benchmark; origin says so. */
void exchange_machine_default(struct exchange_machine *m);

/** A line of a machine file that is not an exchange constant: @name and its @value text.
 * Returns 0 when the caller knows the name, UTIL_EUSAGE (after one line) when not. */
typedef int exchange_machine_other_fn(void *ctx, const char *name, const char *value,
                                      const char *path, int line);

/**
 * Reads the "name value" lines of @path over @m (names it lacks keep their value). Lines whose
 * name is not an exchange constant go to @other (NULL: they are skipped, as the sort skips the
 * whole-sort model's constants). Sets m->path and m->source = EXCHANGE_MACHINE_FILE_GIVEN.
 * Returns 0 or UTIL_EUSAGE (one line naming the file and line: unreadable, malformed, a value
 * out of range, an unknown name @other refuses).
 */
int exchange_machine_read(struct exchange_machine *m, const char *path,
                          exchange_machine_other_fn *other, void *ctx);

/** Writes @m as exchange_machine_read() reads it, a comment line above each constant. */
void exchange_machine_print(FILE *f, const struct exchange_machine *m);

/**
 * The machine a program prices with: the file @path when given (an error when it cannot be
 * read); else the file SORTEX_MACHINE names (the same); else the user's file, when it exists
 * (EXCHANGE_MACHINE_FILE under $XDG_CONFIG_HOME/sortex, or $HOME/.config/sortex); else the
 * built-in constants. Lines that are not exchange constants are skipped. Returns 0 or
 * UTIL_EUSAGE (one line); m->source says which it took.
 */
int exchange_machine_load(struct exchange_machine *m, const char *path);

/** exchange_machine_load() with the lines that are not exchange constants handed to @other
 * (see exchange_machine_read()): for programs that know the file's other constants. */
int exchange_machine_load_with(struct exchange_machine *m, const char *path,
                               exchange_machine_other_fn *other, void *ctx);

/**
 * exchange_machine_load() without a word on stderr: a file that cannot be read or is malformed
 * leaves the built-in constants in @m (m->path names the file, m->source where it came from).
 * Returns 0 or UTIL_EUSAGE, as exchange_machine_load() does. For programs that price to choose
 * and must not fail for it (the sort's --exchange auto), and for descriptions.
 */
int exchange_machine_load_quiet(struct exchange_machine *m, const char *path);

/** The user's machine file path (see exchange_machine_load()) into @buf; 0, or UTIL_EUSAGE
 * when neither $XDG_CONFIG_HOME nor $HOME is set. */
int exchange_machine_home_path(char *buf, size_t cap);

/** One line saying which constants @m holds and where they came from, for -v and reports:
 * "built-in constants of a project machine (...)" or "FILE (origin)". */
void exchange_machine_describe(const struct exchange_machine *m, char *buf, size_t cap);

/** The factors of model @name on @m ({1, 1, 1, 1} when the machine gives none). */
struct exchange_machine_factor exchange_machine_factor(const struct exchange_machine *m,
                                                       const char *name);

/** Sets model @name's factors on @m (adds it, or replaces it). Returns 0, or UTIL_EUSAGE when
 * the table is full or the name too long. */
int exchange_machine_set_factor(struct exchange_machine *m, const char *name,
                                const struct exchange_machine_factor *f);

#endif

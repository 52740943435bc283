/*
 * util/util.h: the small shared toolbox of every sortex program: error reporting, exit codes,
 * number parsing, files written atomically, clocks and the version banner.
 */
#ifndef SORTEX_UTIL_H
#define SORTEX_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes shared by every program (documented in the README and every --help). */
enum util_exit {
    UTIL_EXIT_OK = 0,      /* success (verify: the file is a valid sort) */
    UTIL_EXIT_INVALID = 1, /* verify: the data is not a valid sort; deps: packages missing */
    UTIL_EXIT_USAGE = 2,   /* a user mistake: bad flag, missing or malformed input, bad output */
    UTIL_EXIT_RUNTIME = 3, /* a failure while running: I/O error, out of memory, MPI failure */
    UTIL_EXIT_COUNT
};

/* Library error codes: 0 is success, negative values are failures. The public interface returns
 * them to a host program as enum sortex_error (sort/sortex.h), the same values (sort/sortex.c
 * asserts it); this header stays free of MPI. */
enum util_err {
    UTIL_OK = 0,
    UTIL_EUSAGE = -1,   /* the caller's arguments or input are wrong */
    UTIL_EIO = -2,      /* reading or writing failed */
    UTIL_ENOMEM = -3,   /* an allocation failed or a limit refused it */
    UTIL_EMPI = -4,     /* an MPI call failed */
    UTIL_EINJECT = -5,  /* a failure injected for testing (SORTEX_FAIL) */
    UTIL_ECHECK = -6,   /* a result failed its own check (sortex --check) */
    UTIL_ERR_COUNT = 7
};

/** Maps a library error code to the program exit code. */
int util_exit_code(int err);

/** Sets the program name used as the prefix of every message ("sortex-gen"). */
void util_set_progname(const char *name);
/** The program name set by util_set_progname(), "sortex" by default. */
const char *util_progname(void);

/**
 * The rank a launcher (mpirun, srun, a PMI/PMIx process manager) gave this process, read from
 * the environment before MPI_Init; 0 when started alone. Lets --help and --version answer
 * without an MPI job, once per job.
 */
int util_launch_rank(void);

/**
 * Prints one line "PROG: error: <formatted message>" on stderr. Always returns UTIL_EUSAGE so
 * that parsing code can write `return util_error(...)`.
 */
int util_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Like util_error() but for runtime failures; returns @err. */
int util_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Prints "PROG: warning: ..." on stderr. */
void util_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * One failure, one line, in a job of many processes: while deferral is on, the first error line
 * of this process (util_error(), util_fail()) is kept instead of printed, and later ones are
 * dropped as its consequences. At the point where the processes agree on the outcome, the one
 * chosen to speak calls util_report_release(true) and the others util_report_release(false).
 * Warnings are never deferred. Process-wide; safe when several threads fail at once.
 */
void util_report_defer(bool on);
/** True when an error line is being kept. */
bool util_report_pending(void);
/** True while deferral is on (to restore it after turning it on for a moment). */
bool util_report_deferring(void);
/** Prints the kept error line (when @print) and forgets it. */
void util_report_release(bool print);

/**
 * Parses a non-negative count with an optional suffix: K, M, G, T, P are powers of ten (10^3
 * ...), Ki, Mi, Gi, Ti, Pi are powers of two (2^10 ...); "1e6" style exponents are accepted too.
 * Rejects empty strings, signs, leading white space, garbage and overflow. Returns 0 or UTIL_EUSAGE (no message).
 */
int util_parse_count(const char *s, uint64_t *out);
/** Parses a plain integer in [lo, hi] (decimal, no suffix). Returns 0 or UTIL_EUSAGE. */
int util_parse_int(const char *s, long lo, long hi, long *out);
/** Parses a finite double in [lo, hi]. Returns 0 or UTIL_EUSAGE. */
int util_parse_double(const char *s, double lo, double hi, double *out);

/**
 * Splits @text, a comma separated list, into its items: at most @max pointers into @buf (@cap
 * bytes, where text is copied) stored in @items, their number in *@n. Every item must have a
 * character: an empty list, an empty item ("64,,8") and a comma at either end are refused, as
 * are more than @max items and a text of @cap bytes or more. On a mistake prints one line naming
 * the option @what ("--ranks") and returns UTIL_EUSAGE; else 0.
 */
int util_split_list(const char *text, const char *what, char *buf, size_t cap, char **items,
                    int max, int *n);

/*
 * Name tables: the names of an enum's values, one table per enum, which every command line,
 * report and error line reads. A table lists its names in the order help and errors give them,
 * each with its value, and ends with {NULL, 0}.
 */
struct util_name {
    const char *name;
    int value;
};

/** The value of @name in @names, or -1 when it is none of them. */
int util_name_find(const struct util_name *names, const char *name);
/** The name of value @v in @names, or "?" when @v is none of its values. */
const char *util_name_of(const struct util_name *names, int v);
/** Writes the names into @buf as a sentence lists them, "auto, eps, exact or sample" (always
 * terminated). */
void util_names_join(const struct util_name *names, char *buf, size_t cap);

/**
 * Makes the program's exit check standard output: at exit it is flushed, and when a write to it
 * failed (a full disk, a closed pipe while SIGPIPE is ignored) one error line is printed and
 * the program exits 3 (UTIL_EXIT_RUNTIME) instead of what it returned: what it printed was
 * lost. Every main() calls it first, so --help and --list are covered too.
 */
void util_check_stdout_at_exit(void);

/** Monotonic wall-clock seconds. */
double util_now(void);

/**
 * Checks that @path is an existing regular file whose size is a multiple of @record bytes and
 * stores the size. Prints one error line naming the problem, and the file by its role @what
 * ("input", "sorted file"), and returns UTIL_EUSAGE otherwise.
 */
int util_check_input(const char *path, const char *what, size_t record, uint64_t *size);

/**
 * Checks that the directory that would hold @path exists and is writable, and that @path, if it
 * exists, is a regular file (not a directory, symbolic link, device, FIFO or socket: outputs are
 * renamed into place, which would replace such a file instead of writing into it). Prints one
 * error line and returns UTIL_EUSAGE otherwise.
 */
int util_check_output(const char *path);

/**
 * What identifies one state of a file: a change of contents or size changes it. The
 * modification time alone does not: `touch -r`, `cp -p` and `rsync -t` put it back after
 * rewriting a file in place. The change time (ctime) moves on every write, and no call sets it
 * back, so the two together catch a rewrite whatever is done to the mtime. (It also moves on a
 * chmod, chown or new link: the checks that use it then fail safe, refusing a file that did not
 * change.)
 */
struct util_file_id {
    uint64_t dev, ino;
    uint64_t size;
    int64_t mtime_sec, mtime_nsec;
    int64_t ctime_sec, ctime_nsec;
};

/** Fills @id from stat(@path). Returns 0, or UTIL_EIO with errno set (prints nothing). */
int util_file_id_get(const char *path, struct util_file_id *id);

/** True when @a and @b describe the same file in the same state. */
bool util_file_id_same(const struct util_file_id *a, const struct util_file_id *b);

/** True when @a and @b name the same existing file (same device and inode). */
bool util_same_file(const char *a, const char *b);

/**
 * True when @a and @b name the same file, existing or to be created: util_same_file() if both
 * exist, the same name in the same directory if neither does yet (so two outputs given as
 * "out" and "./out" are caught before either is written).
 */
bool util_same_path(const char *a, const char *b);

/**
 * After getopt_long() returned '?': the text naming the offending option, "-x" for an unknown
 * short option (built in @buf), else the argument itself ("--nope", "--sync=1": getopt sets
 * optopt to a long option's value when it is given one it does not take).
 */
const char *util_bad_option(char *const argv[], char *buf, size_t len);

/** Version banner for --version: "PROG VERSION" on the first line, then the commit, the MPI
 * library, the allocator and the compiler flags. */
void util_print_version(FILE *out);

/** The commit the binary was built from, e.g. "3f2a9c1d0b7e" ("-dirty" if modified). */
const char *util_commit(void);
/** The compiler and flags the library was built with, e.g. "gcc 12.2.0 -O2 -g -DNDEBUG -fopenmp". */
const char *util_build_flags(void);

/**
 * splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
 * 2014): advances the state *@s and returns the next 64 random bits. Every random draw of
 * sortex that must be the same on every run comes from it.
 */
static inline uint64_t util_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/** The splitmix64 finaliser alone: 64 well-mixed bits of @x (counter-based randomness). */
static inline uint64_t util_mix64(uint64_t x)
{
    uint64_t s = x - 0x9e3779b97f4a7c15ULL;
    return util_splitmix64(&s);
}

/** qsort() order of two uint64_t. */
int util_cmp_u64(const void *a, const void *b);

#endif

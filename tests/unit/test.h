/*
 * tests/unit/test.h: the one harness of the C unit tests, after jemalloc's
 * test/include/test/test.h: checks that say where they failed and with which values, a list of
 * tests run by name or all, and one seeded generator.
 *
 * A program lists its tests and hands the list to test_main():
 *
 *     static void test_combine(void)
 *     {
 *         expect_u64_eq(whole.count, parts.count, "split at %zu", cut);
 *     }
 *
 *     int main(int argc, char **argv)
 *     {
 *         static const struct test tests[] = {TEST(combine), TEST(records), TEST_END};
 *         return test_main(argc, argv, tests);
 *     }
 *
 * Command line: PROGRAM [--list] [-v] [KEY=VALUE ...] [NAME ...]. The NAMEs pick tests (none:
 * every test, in the list's order); KEY=VALUE words are parameters the tests read
 * (test_param_long() and the like; one that no test reads is an error); --list prints the names,
 * one a line; -v sets test_verbose. Before each test the generator restarts from the seed
 * (seed=N, default 1), so a test draws the same numbers run alone or among the others.
 *
 * A check counts, and a failed one prints "FAIL FILE:LINE: [rank R: ]CHECK: VALUES: MESSAGE" and
 * the test goes on, so that one run shows every failure. After each test one line: "ok NAME",
 * "not ok NAME: F of C checks failed", or "skip NAME: REASON"; a test that made no check at all
 * fails ("made no check"), since it could never have failed. At the end one line,
 * "PROGRAM: N ran, F failed, S skipped, C checks". Exit status: 0 when no test failed, 1 when
 * one did, 2 on a bad command line.
 *
 * tests/unit/test_mpi.h adds what the tests run under mpirun need.
 */
#ifndef SORTEX_TESTS_TEST_H
#define SORTEX_TESTS_TEST_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* ---- the list of tests ------------------------------------------------------------------- */

typedef void test_fn(void);
typedef void test_row_fn(const void *row);

/** One test: a function of its own (fn), or a row of a table (row_fn called with row). */
struct test {
    const char *name;
    test_fn *fn;
    test_row_fn *row_fn;
    const void *row;
};

/** The entry of the test function test_NAME, run as NAME. */
#define TEST(name)                                                                                 \
    {                                                                                              \
#name, test_##name, NULL, NULL                                                             \
    }
/** The end of a list. */
#define TEST_END                                                                                   \
    {                                                                                              \
        NULL, NULL, NULL, NULL                                                                     \
    }

/* ---- the harness's state ----------------------------------------------------------------- */

/** The rank in an MPI job (test_mpi.h), -1 elsewhere: failures name it, rank 0 alone prints. */
static int test_rank = -1;
/** -v was given: a test may say more. */
static int test_verbose;

static const char *test_prog_ = "test";
static uint64_t test_seed_ = 1, test_rng_;
/* The running test's checks, failed checks and skip reason; the totals of the tests run. */
static long long test_checks_, test_failed_;
static char test_skip_[160];
static long long test_total_checks_;
static int test_ran_, test_failed_tests_, test_skipped_;
/* The command line's test names and parameters (KEY=VALUE, each marked once read). */
static char **test_names_, **test_params_;
static int test_nnames_, test_nparams_;
static bool *test_param_read_;
/* How a count of all the processes is taken (test_mpi.h: a sum over the ranks); NULL: one. */
static long long (*test_sum_)(long long);

static inline long long test_sum(long long x)
{
    return test_sum_ != NULL ? test_sum_(x) : x;
}

/* ---- checks ------------------------------------------------------------------------------ */

/* Counts a check; returns @ok. */
static inline bool test_count_(bool ok)
{
    test_checks_++;
    return ok;
}

/* The start of a failure line: where, and on which rank. */
static inline void test_fail_begin_(const char *file, int line)
{
    test_failed_++;
    fflush(stderr);
    printf("FAIL %s:%d: ", file, line);
    if (test_rank >= 0) {
        printf("rank %d: ", test_rank);
    }
}

/* The end of a failure line: the check's own message. */
__attribute__((format(printf, 1, 2))) static inline void test_fail_end_(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/** Checks that @cond holds; the message (a printf format and its values) says what failed. */
#define expect_true(cond, ...)                                                                     \
    do {                                                                                           \
        if (!test_count_((cond) ? true : false)) {                                                 \
            test_fail_begin_(__FILE__, __LINE__);                                                  \
            printf("%s: ", #cond);                                                                 \
            test_fail_end_(__VA_ARGS__);                                                           \
        }                                                                                          \
    } while (0)

/** Checks that @cond does not hold. */
#define expect_false(cond, ...) expect_true(!(cond), __VA_ARGS__)

/** A failed check: for a failure found by other means (a first difference, a missing file). */
#define test_fail(...)                                                                             \
    do {                                                                                           \
        test_count_(false);                                                                        \
        test_fail_begin_(__FILE__, __LINE__);                                                      \
        test_fail_end_(__VA_ARGS__);                                                               \
    } while (0)

/* A comparison of two values of @type, printed with @pri when it fails. */
#define TEST_CMP_(type, pri, a, op, b, ...)                                                        \
    do {                                                                                           \
        type test_a_ = (a), test_b_ = (b);                                                         \
        if (!test_count_(test_a_ op test_b_)) {                                                    \
            test_fail_begin_(__FILE__, __LINE__);                                                  \
            printf("%s " #op " %s: %" pri " " #op " %" pri ": ", #a, #b, test_a_, test_b_);        \
            test_fail_end_(__VA_ARGS__);                                                           \
        }                                                                                          \
    } while (0)

/** Comparisons of two values (uint64_t, int, size_t, double), then a message as above. */
#define expect_u64_eq(a, b, ...) TEST_CMP_(uint64_t, PRIu64, a, ==, b, __VA_ARGS__)
#define expect_u64_ne(a, b, ...) TEST_CMP_(uint64_t, PRIu64, a, !=, b, __VA_ARGS__)
#define expect_u64_lt(a, b, ...) TEST_CMP_(uint64_t, PRIu64, a, <, b, __VA_ARGS__)
#define expect_u64_le(a, b, ...) TEST_CMP_(uint64_t, PRIu64, a, <=, b, __VA_ARGS__)
#define expect_u64_gt(a, b, ...) TEST_CMP_(uint64_t, PRIu64, a, >, b, __VA_ARGS__)
#define expect_u64_ge(a, b, ...) TEST_CMP_(uint64_t, PRIu64, a, >=, b, __VA_ARGS__)
#define expect_d_eq(a, b, ...)   TEST_CMP_(int, "d", a, ==, b, __VA_ARGS__)
#define expect_d_ne(a, b, ...)   TEST_CMP_(int, "d", a, !=, b, __VA_ARGS__)
#define expect_d_lt(a, b, ...)   TEST_CMP_(int, "d", a, <, b, __VA_ARGS__)
#define expect_d_le(a, b, ...)   TEST_CMP_(int, "d", a, <=, b, __VA_ARGS__)
#define expect_d_gt(a, b, ...)   TEST_CMP_(int, "d", a, >, b, __VA_ARGS__)
#define expect_d_ge(a, b, ...)   TEST_CMP_(int, "d", a, >=, b, __VA_ARGS__)
#define expect_zu_eq(a, b, ...)  TEST_CMP_(size_t, "zu", a, ==, b, __VA_ARGS__)
#define expect_zu_le(a, b, ...)  TEST_CMP_(size_t, "zu", a, <=, b, __VA_ARGS__)
#define expect_dbl_le(a, b, ...) TEST_CMP_(double, "g", a, <=, b, __VA_ARGS__)
#define expect_dbl_ge(a, b, ...) TEST_CMP_(double, "g", a, >=, b, __VA_ARGS__)

/** Checks that two strings are equal. */
#define expect_str_eq(a, b, ...)                                                                   \
    do {                                                                                           \
        const char *test_a_ = (a), *test_b_ = (b);                                                 \
        if (!test_count_(test_a_ != NULL && test_b_ != NULL && strcmp(test_a_, test_b_) == 0)) {   \
            test_fail_begin_(__FILE__, __LINE__);                                                  \
            printf("%s equals %s: \"%s\" and \"%s\": ", #a, #b, test_a_ ? test_a_ : "(null)",      \
                   test_b_ ? test_b_ : "(null)");                                                  \
            test_fail_end_(__VA_ARGS__);                                                           \
        }                                                                                          \
    } while (0)

/** Marks the running test skipped, for the reason given (a printf format); it should return. */
__attribute__((format(printf, 1, 2))) static inline void test_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(test_skip_, sizeof(test_skip_), fmt, ap);
    va_end(ap);
}

/** calloc() of at least one byte, or a line and exit 2: the tests' allocations never fail
 * quietly. */
static inline void *test_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/** The failed checks of the running test so far, on this process. */
static inline long long test_failures(void)
{
    return test_failed_;
}

/* ---- the generator ----------------------------------------------------------------------- */

/** Restarts the generator at @seed (each test starts at the seed of the command line). */
static inline void test_seed(uint64_t seed)
{
    test_rng_ = seed;
}

/** The next 64 random bits: util_splitmix64(), the generator of sortex itself. */
static inline uint64_t test_rand(void)
{
    return util_splitmix64(&test_rng_);
}

/** Uniform in [0, @n) (0 when @n is 0). */
static inline uint64_t test_below(uint64_t n)
{
    return n ? test_rand() % n : 0;
}

/** Uniform in [0, 1), 53 random bits. */
static inline double test_unit(void)
{
    return (double)(test_rand() >> 11) / 9007199254740992.0;
}

/* ---- parameters -------------------------------------------------------------------------- */

/* Exits after a command-line mistake (2), with one line. */
__attribute__((format(printf, 1, 2), noreturn)) static inline void test_usage_(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: error: ", test_prog_);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

/** The value of parameter @key on the command line (KEY=VALUE), or @dflt. */
static inline const char *test_param(const char *key, const char *dflt)
{
    size_t len = strlen(key);
    for (int i = test_nparams_ - 1; i >= 0; i--) {
        if (strncmp(test_params_[i], key, len) == 0 && test_params_[i][len] == '=') {
            test_param_read_[i] = true;
            return test_params_[i] + len + 1;
        }
    }
    return dflt;
}

/** Parameter @key as a number, or @dflt; a value that is not one ends the program (2). */
static inline double test_param_double(const char *key, double dflt)
{
    const char *text = test_param(key, NULL);
    char *end = NULL;
    double v = text != NULL ? strtod(text, &end) : dflt;
    if (text != NULL && (end == text || *end != '\0')) {
        test_usage_("%s is not a number (%s)", key, text);
    }
    return v;
}

/** Parameter @key as a whole number (up to 2^53), or @dflt; otherwise as test_param_double(). */
static inline long test_param_long(const char *key, long dflt)
{
    double v = test_param_double(key, (double)dflt);
    if (v != (double)(long)v) {
        test_usage_("%s is not a whole number (%s)", key, test_param(key, ""));
    }
    return (long)v;
}

/* ---- running ----------------------------------------------------------------------------- */

/**
 * Reads the command line against @tests (ending with TEST_END): --list prints the names and
 * exits 0; an unknown name or option exits 2. Call before any test; an MPI program may call it
 * before MPI_Init().
 */
static inline void test_init(int argc, char **argv, const struct test *tests)
{
    const char *slash = strrchr(argv[0], '/');
    test_prog_ = slash != NULL ? slash + 1 : argv[0];
    util_set_progname(test_prog_);
    test_names_ = calloc((size_t)argc, sizeof(*test_names_));
    test_params_ = calloc((size_t)argc, sizeof(*test_params_));
    test_param_read_ = calloc((size_t)argc, sizeof(*test_param_read_));
    if (test_names_ == NULL || test_params_ == NULL || test_param_read_ == NULL) {
        test_usage_("out of memory");
    }
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--list") == 0) {
            for (const struct test *t = tests; t->name != NULL; t++) {
                printf("%s\n", t->name);
            }
            exit(0);
        }
        if (strcmp(argv[a], "-v") == 0) {
            test_verbose = 1;
        } else if (argv[a][0] == '-') {
            test_usage_("unknown option (%s); usage: %s [--list] [-v] [KEY=VALUE ...] [NAME ...]",
                        argv[a], test_prog_);
        } else if (strchr(argv[a], '=') != NULL) {
            test_params_[test_nparams_++] = argv[a];
        } else {
            const struct test *t = tests;
            while (t->name != NULL && strcmp(t->name, argv[a]) != 0) {
                t++;
            }
            if (t->name == NULL) {
                test_usage_("no such test (%s); --list lists them", argv[a]);
            }
            test_names_[test_nnames_++] = argv[a];
        }
    }
    test_seed_ = (uint64_t)test_param_long("seed", 1);
}

/** True when the command line asks for test @name (it names none: every test). */
static inline bool test_wanted(const char *name)
{
    for (int i = 0; i < test_nnames_; i++) {
        if (strcmp(test_names_[i], name) == 0) {
            return true;
        }
    }
    return test_nnames_ == 0;
}

/** Runs one test, whether wanted or not, and prints its line. */
static inline void test_run(const struct test *t)
{
    test_checks_ = test_failed_ = 0;
    test_skip_[0] = '\0';
    test_seed(test_seed_);
    if (t->fn != NULL) {
        t->fn();
    } else {
        t->row_fn(t->row);
    }
    fflush(stdout);
    long long checks = test_sum(test_checks_), failed = test_sum(test_failed_);
    long long skipped = test_sum(test_skip_[0] != '\0');
    test_total_checks_ += checks;
    if (skipped > 0 && failed == 0) {
        test_skipped_++;
        if (test_rank <= 0) {
            printf("skip %s: %s\n", t->name, test_skip_[0] ? test_skip_ : "on some ranks");
        }
    } else if (failed > 0 || checks == 0) {
        test_ran_++;
        test_failed_tests_++;
        if (test_rank <= 0 && checks == 0) {
            printf("not ok %s: made no check\n", t->name);
        } else if (test_rank <= 0) {
            printf("not ok %s: %lld of %lld checks failed\n", t->name, failed, checks);
        }
    } else {
        test_ran_++;
        if (test_rank <= 0) {
            printf("ok %s\n", t->name);
        }
    }
    fflush(stdout);
}

/** Runs every test of @tests the command line asks for, in order. */
static inline void test_run_all(const struct test *tests)
{
    for (const struct test *t = tests; t->name != NULL; t++) {
        if (test_wanted(t->name)) {
            test_run(t);
        }
    }
}

/**
 * Prints the summary line; returns the exit status: 0 when no test failed, 1 when one did or a
 * parameter was given that no test read.
 */
static inline int test_finish(void)
{
    bool unread = false;
    for (int i = 0; i < test_nparams_; i++) {
        if (!test_param_read_[i]) {
            fprintf(stderr, "%s: error: no test read the parameter (%s)\n", test_prog_,
                    test_params_[i]);
            unread = true;
        }
    }
    if (test_rank <= 0) {
        printf("%s: %d ran, %d failed, %d skipped, %lld checks\n", test_prog_, test_ran_,
               test_failed_tests_, test_skipped_, test_total_checks_);
        fflush(stdout);
    }
    free(test_names_);
    free(test_params_);
    free(test_param_read_);
    return test_failed_tests_ > 0 || unread ? 1 : 0;
}

/** The whole main() of a program of tests: reads the command line, runs, sums up. */
static inline int test_main(int argc, char **argv, const struct test *tests)
{
    test_init(argc, argv, tests);
    test_run_all(tests);
    return test_finish();
}

#endif

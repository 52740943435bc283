/*
 * tests/unit/test_mpi.h: the harness (tests/unit/test.h) for the unit tests run under mpirun.
 * Every rank runs every test; a failed check names its rank; a test's checks and failures are
 * summed over the ranks, and rank 0 alone prints the lines, so that the verdict, the summary and
 * the exit status are the job's.
 */
#ifndef SORTEX_TESTS_TEST_MPI_H
#define SORTEX_TESTS_TEST_MPI_H

#include <mpi.h>

#include "tests/unit/test.h"

/** The number of ranks (after test_mpi_begin()). */
static int test_size = 1;

/* @x summed over the ranks of MPI_COMM_WORLD. */
static inline long long test_mpi_sum_(long long x)
{
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return x;
}

/** After MPI_Init(): failures name the rank, counts are the job's, rank 0 prints. */
static inline void test_mpi_begin(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &test_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &test_size);
    test_sum_ = test_mpi_sum_;
}

/** Before MPI_Finalize(): from here on each process counts for itself. */
static inline void test_mpi_end(void)
{
    test_sum_ = NULL;
}

/** The whole main() of a program of MPI tests: MPI_Init(), the tests, MPI_Finalize(). */
static inline int test_mpi_main(int argc, char **argv, const struct test *tests)
{
    test_init(argc, argv, tests);
    MPI_Init(&argc, &argv);
    test_mpi_begin();
    test_run_all(tests);
    int status = test_finish();
    test_mpi_end();
    MPI_Finalize();
    return status;
}

#endif

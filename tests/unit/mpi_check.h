/*
 * tests/unit/mpi_check.h: what the MPI unit tests share: a check that names the failing rank
 * and marks the run failed, and a small deterministic generator.
 *
 * The including file defines `static int rank, failed;` before it includes this header.
 */
#ifndef SORTEX_TESTS_MPI_CHECK_H
#define SORTEX_TESTS_MPI_CHECK_H

#include <stdint.h>
#include <stdio.h>

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL rank %d: ", rank);                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failed = 1;                                                                            \
        }                                                                                          \
    } while (0)

/* xorshift64: the next value of the stream @s (nonzero seed). */
static inline uint64_t xorshift_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif

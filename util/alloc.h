/*
 * util/alloc.h: the one allocation interface of sortex.
 *
 * Everything goes through the process's malloc: the library links no allocator of its own, so
 * a host program keeps its own. The programs link jemalloc, which then serves the whole
 * process; sanitizer builds do not, so that AddressSanitizer sees every allocation. Big buffers (the key arrays)
 * go through util_alloc_big(): 2 MiB aligned and advised onto transparent huge pages, which on
 * the machines we measured cut first-touch cost ~10x and made MPI transfers ~1.6x faster.
 */
#ifndef SORTEX_UTIL_ALLOC_H
#define SORTEX_UTIL_ALLOC_H

#include <stddef.h>

/** malloc() that reports failure through errno = ENOMEM and a NULL return, never aborts. */
void *util_malloc(size_t size);
/** calloc() counterpart of util_malloc(). */
void *util_calloc(size_t count, size_t size);
/** realloc() counterpart of util_malloc(); on failure the old block is untouched. */
void *util_realloc(void *ptr, size_t size);
/** Frees a block from util_malloc(), util_calloc() or util_realloc(); NULL is fine. */
void util_free(void *ptr);

/**
 * Allocates a large buffer of @size bytes, 2 MiB aligned, advised to use transparent huge
 * pages. The memory is not touched. Returns NULL (errno = ENOMEM) on failure; size 0 returns
 * a valid minimal block. Free it with util_free_big().
 */
void *util_alloc_big(size_t size);
/** Frees a buffer from util_alloc_big(); NULL is fine. */
void util_free_big(void *ptr);

/** Size from which util_alloc_scratch() takes huge pages. */
#define UTIL_SCRATCH_BIG_BYTES ((size_t)1 << 20)

/**
 * A scratch buffer of @size bytes, not touched: from util_alloc_big() (huge pages) from
 * UTIL_SCRATCH_BIG_BYTES on, from util_malloc() below, where a fresh 2 MiB page to fault in and
 * zero would cost more than what the buffer is for. Returns NULL (errno = ENOMEM) on failure.
 * Free it with util_free_scratch() and the same @size.
 */
void *util_alloc_scratch(size_t size);
/** Frees a buffer of @size bytes from util_alloc_scratch(); NULL is fine. */
void util_free_scratch(void *ptr, size_t size);

/**
 * Touches every page of @ptr[0..size) with @threads OpenMP threads so that page faults are
 * paid here, in parallel, and not inside a timed phase.
 */
void util_pretouch(void *ptr, size_t size, int threads);

/**
 * memcpy() for big blocks: copies @size bytes in blocks of UTIL_COPY_BLOCK. glibc copies a
 * block of up to 1 MiB with `rep movsb` and a bigger one with a vector loop; on the machines we
 * measured, one 32-96 MiB memcpy ran 5-15% slower than the same copy in 512 KiB blocks (Open
 * MPI copies its own block in 128 KiB blocks, which is where alltoallv got its edge).
 */
void util_copy(void *dst, const void *src, size_t size);

/**
 * Gives the memory freed so far back to the system now. jemalloc keeps freed pages for about
 * ten seconds before it returns them (its decay), so one phase's freed buffers and the next
 * phase's new ones would both count against a memory budget; the external sort calls this
 * between its phases. glibc's malloc_trim() where jemalloc is absent.
 */
void util_release(void);

/** Names the allocator in use, e.g. "jemalloc 5.3.0-0-g54eaed1d8b56" when the process has
 * jemalloc, else "glibc malloc". */
const char *util_allocator_name(void);

#endif

/* util/alloc.c: allocation wrapper (see alloc.h). */
#include "util/alloc.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 * jemalloc's control interface, declared weak: the library never links jemalloc itself, so a
 * host program keeps its own allocator. The programs link jemalloc (the Makefile's
 * USE_JEMALLOC), which then replaces malloc for the whole process and defines this symbol; in
 * any other process (a host program, the sanitizer build) the address is NULL.
 */
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
    __attribute__((weak));

#define HUGE_ALIGN ((size_t)2 << 20)
/* Below glibc's 1 MiB limit for `rep movsb` on these machines (see util_copy in alloc.h). */
#define UTIL_COPY_BLOCK ((size_t)512 << 10)

void *util_malloc(size_t size)
{
    return malloc(size ? size : 1);
}

void *util_calloc(size_t count, size_t size)
{
    if (count == 0 || size == 0) {
        return calloc(1, 1);
    }
    return calloc(count, size);
}

void *util_realloc(void *ptr, size_t size)
{
    return realloc(ptr, size ? size : 1);
}

void util_free(void *ptr)
{
    free(ptr);
}

void *util_alloc_big(size_t size)
{
    void *p = NULL;
    /* Round up to whole huge pages so that the advice covers the last one too. */
    size_t rounded = size < HUGE_ALIGN ? HUGE_ALIGN : (size + HUGE_ALIGN - 1) & ~(HUGE_ALIGN - 1);
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    int rc = posix_memalign(&p, HUGE_ALIGN, rounded);
    if (rc != 0) {
        errno = rc;
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(p, rounded, MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
    return p;
}

void util_free_big(void *ptr)
{
    free(ptr);
}

void *util_alloc_scratch(size_t size)
{
    return size >= UTIL_SCRATCH_BIG_BYTES ? util_alloc_big(size) : util_malloc(size);
}

void util_free_scratch(void *ptr, size_t size)
{
    if (size >= UTIL_SCRATCH_BIG_BYTES) {
        util_free_big(ptr);
    } else {
        util_free(ptr);
    }
}

void util_pretouch(void *ptr, size_t size, int threads)
{
    char *c = ptr;
    const size_t page = 4096;
    if (threads < 1) {
        threads = 1;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t off = 0; off < size; off += page) {
        c[off] = 0;
    }
}

void util_copy(void *dst, const void *src, size_t size)
{
    char *d = dst;
    const char *s = src;
    for (size_t off = 0; off < size; off += UTIL_COPY_BLOCK) {
        size_t len = size - off < UTIL_COPY_BLOCK ? size - off : UTIL_COPY_BLOCK;
        memcpy(d + off, s + off, len);
    }
}

/* jemalloc's MALLCTL_ARENAS_ALL: "arena.4096.purge" purges every arena. */
#define JEMALLOC_ARENAS_ALL "4096"

void util_release(void)
{
    if (mallctl != NULL) {
        (void)mallctl("arena." JEMALLOC_ARENAS_ALL ".purge", NULL, NULL, NULL, 0);
    } else {
        (void)malloc_trim(0);
    }
}

const char *util_allocator_name(void)
{
    if (mallctl == NULL) {
        return "glibc malloc"; /* the C library's, or whatever the host program brought */
    }
    static char name[96];
    const char *version = NULL;
    size_t len = sizeof(version);
    if (mallctl("version", &version, &len, NULL, 0) == 0 && version != NULL) {
        (void)snprintf(name, sizeof(name), "jemalloc %s", version);
        return name;
    }
    return "jemalloc";
}

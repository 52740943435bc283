/*
 * util/aio.h: file reads and writes that run beside the caller's work.
 *
 * A small pool of I/O threads takes requests (read or write @len bytes of a descriptor at an
 * offset) from a queue and carries each out whole with pread()/pwrite(), retrying short and
 * interrupted calls, while the thread that submitted it sorts, exchanges or classifies. The
 * caller waits for a request when it needs its buffer. So the slowest of reading, working and
 * writing sets the pace of a streaming pass, not their sum, as long as the caller keeps the
 * next read and the last write in flight (double buffering).
 *
 * The threads make no MPI call and touch nothing but the requests' buffers: a caller under
 * MPI_THREAD_FUNNELED may use them. Plain POSIX I/O serves every file system that every rank
 * reaches (NFS, Lustre, GPFS), as MPI-IO's own POSIX drivers do.
 */
#ifndef SORTEX_UTIL_AIO_H
#define SORTEX_UTIL_AIO_H

#include <stddef.h>
#include <stdint.h>

/** What a request does. */
enum util_aio_op {
    UTIL_AIO_READ,  /* pread() @len bytes; ending early (the file is shorter) is an error */
    UTIL_AIO_WRITE, /* pwrite() @len bytes */
    UTIL_AIO_OP_COUNT
};

/** One request. The caller owns it (and its buffer) until util_aio_wait() returned. */
struct util_aio_req {
    enum util_aio_op op;
    int fd;
    void *buf;
    size_t len;
    uint64_t offset;
    /* Set by the pool. */
    int err;                   /* 0, an errno value, or EIO for a read that ended early */
    int state;                 /* 0 idle, 1 queued or running, 2 done (read under the lock) */
    struct util_aio_req *next; /* the queue */
};

struct util_aio;

/**
 * Starts a pool of @threads I/O threads (1 or more; 2 lets a read and a write run at once on
 * different devices). Returns the pool, or NULL with errno set.
 */
struct util_aio *util_aio_start(int threads);

/** Queues @r, which must not be queued already. Never blocks. */
void util_aio_submit(struct util_aio *a, struct util_aio_req *r);

/** Waits until @r is done (an idle request returns at once) and returns its err. */
int util_aio_wait(struct util_aio *a, struct util_aio_req *r);

/** Bytes the pool has read and written so far (completed requests). */
void util_aio_bytes(const struct util_aio *a, uint64_t *read, uint64_t *written);

/** Waits for every queued request, stops the threads and frees the pool; NULL is fine. */
void util_aio_stop(struct util_aio *a);

/** pread() or pwrite() of all @len bytes at @offset, retried when short or interrupted, on the
 * calling thread. Returns 0 or an errno value (EIO: a read that reached the end of the file). */
int util_pio(enum util_aio_op op, int fd, void *buf, size_t len, uint64_t offset);

#endif

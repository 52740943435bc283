/* util/aio.c: the I/O threads of streaming passes (see aio.h). */
#include "util/aio.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "util/alloc.h"

/* The most threads a pool runs. */
#define AIO_THREADS_MAX 8

struct util_aio {
    pthread_mutex_t lock;
    pthread_cond_t work; /* a request was queued, or the pool stops */
    pthread_cond_t done; /* a request completed */
    struct util_aio_req *head, *tail;
    bool stopping;
    int threads;
    uint64_t bytes_read, bytes_written;
    pthread_t tid[AIO_THREADS_MAX];
};

int util_pio(enum util_aio_op op, int fd, void *buf, size_t len, uint64_t offset)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = op == UTIL_AIO_READ ? pread(fd, p, len, (off_t)offset)
                                        : pwrite(fd, p, len, (off_t)offset);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        if (n == 0) {
            return op == UTIL_AIO_READ ? EIO : ENOSPC;
        }
        p += n;
        len -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

static void *worker(void *arg)
{
    struct util_aio *a = arg;
    pthread_mutex_lock(&a->lock);
    for (;;) {
        while (a->head == NULL && !a->stopping) {
            pthread_cond_wait(&a->work, &a->lock);
        }
        struct util_aio_req *r = a->head;
        if (r == NULL) {
            break; /* stopping, nothing left */
        }
        a->head = r->next;
        if (a->head == NULL) {
            a->tail = NULL;
        }
        pthread_mutex_unlock(&a->lock);
        int err = util_pio(r->op, r->fd, r->buf, r->len, r->offset);
        pthread_mutex_lock(&a->lock);
        r->err = err;
        r->state = 2;
        if (err == 0) {
            *(r->op == UTIL_AIO_READ ? &a->bytes_read : &a->bytes_written) += r->len;
        }
        pthread_cond_broadcast(&a->done);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

struct util_aio *util_aio_start(int threads)
{
    threads = threads < 1 ? 1 : threads > AIO_THREADS_MAX ? AIO_THREADS_MAX : threads;
    struct util_aio *a = util_calloc(1, sizeof(*a));
    if (a == NULL) {
        return NULL;
    }
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->work, NULL);
    pthread_cond_init(&a->done, NULL);
    for (int i = 0; i < threads; i++) {
        int rc = pthread_create(&a->tid[i], NULL, worker, a);
        if (rc != 0) {
            util_aio_stop(a);
            errno = rc;
            return NULL;
        }
        a->threads = i + 1;
    }
    return a;
}

void util_aio_submit(struct util_aio *a, struct util_aio_req *r)
{
    pthread_mutex_lock(&a->lock);
    r->err = 0;
    r->state = 1;
    r->next = NULL;
    if (a->tail != NULL) {
        a->tail->next = r;
    } else {
        a->head = r;
    }
    a->tail = r;
    pthread_cond_signal(&a->work);
    pthread_mutex_unlock(&a->lock);
}

int util_aio_wait(struct util_aio *a, struct util_aio_req *r)
{
    pthread_mutex_lock(&a->lock);
    while (r->state == 1) {
        pthread_cond_wait(&a->done, &a->lock);
    }
    r->state = 0;
    int err = r->err;
    pthread_mutex_unlock(&a->lock);
    return err;
}

void util_aio_bytes(const struct util_aio *a, uint64_t *read, uint64_t *written)
{
    struct util_aio *m = (struct util_aio *)a; /* the lock only */
    pthread_mutex_lock(&m->lock);
    *read = a->bytes_read;
    *written = a->bytes_written;
    pthread_mutex_unlock(&m->lock);
}

void util_aio_stop(struct util_aio *a)
{
    if (a == NULL) {
        return;
    }
    pthread_mutex_lock(&a->lock);
    a->stopping = true;
    pthread_cond_broadcast(&a->work);
    pthread_mutex_unlock(&a->lock);
    for (int i = 0; i < a->threads; i++) {
        pthread_join(a->tid[i], NULL);
    }
    pthread_cond_destroy(&a->work);
    pthread_cond_destroy(&a->done);
    pthread_mutex_destroy(&a->lock);
    util_free(a);
}

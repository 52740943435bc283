/*
 * exchange/arena.c: the kept scratch of the back-ends (see arena.h): a small table of buffers,
 * each with its owner, its size, whether it is taken, and whether its owner's current exchange
 * took it.
 */
#include "exchange/arena.h"

#include <stdint.h>
#include <string.h>

#include "exchange/exchange.h"
#include "util/alloc.h"

/* Buffers the arena keeps track of; beyond them, buffers are freed when given back. Hypercube
 * takes three per round (at most 12 + 2 rounds for P <= 4096) and grid five. */
#define ARENA_SLOTS 128

/* From this size on a buffer goes on huge pages (util_alloc_big()), below it on the heap. Pieces
 * of 64 KiB and more travel scattered, straight into and out of these buffers by single-copy
 * transfers, which pin every page they touch; a kept buffer pays its huge pages' first fault
 * once. */
#define ARENA_HUGE_MIN ((size_t)64 << 10)

struct slot {
    void *buf; /* NULL: the slot is empty */
    size_t size;
    const void *owner;
    int taken; /* handed out, not given back yet */
    int used;  /* taken since the owner's last exchange_arena_end() */
};

static void *arena_alloc(size_t bytes)
{
    return bytes >= ARENA_HUGE_MIN ? util_alloc_big(bytes) : util_malloc(bytes);
}

static void arena_free(void *buf, size_t bytes)
{
    if (bytes >= ARENA_HUGE_MIN) {
        util_free_big(buf);
    } else {
        util_free(buf);
    }
}

static struct slot slots[ARENA_SLOTS];

void *exchange_arena_take(const void *owner, size_t bytes, size_t *size, int *fresh)
{
    /* The owner's smallest free buffer that is large enough. */
    struct slot *best = NULL, *empty = NULL;
    for (size_t i = 0; i < ARENA_SLOTS; i++) {
        struct slot *s = &slots[i];
        if (s->buf == NULL) {
            empty = empty != NULL ? empty : s;
        } else if (s->owner == owner && !s->taken && s->size >= bytes &&
                   (best == NULL || s->size < best->size)) {
            best = s;
        }
    }
    if (fresh != NULL) {
        *fresh = best == NULL;
    }
    if (best != NULL) {
        best->taken = best->used = 1;
        *size = best->size;
        return best->buf;
    }
    /* A new one, tracked when a slot is free (else freed when given back). */
    void *buf = arena_alloc(bytes);
    if (buf != NULL && empty != NULL) {
        *empty = (struct slot){buf, bytes, owner, 1, 1};
    }
    *size = bytes;
    return buf;
}

void exchange_arena_give(void *buf, size_t size)
{
    if (buf == NULL) {
        return;
    }
    for (size_t i = 0; i < ARENA_SLOTS; i++) {
        if (slots[i].buf == buf) {
            slots[i].taken = 0;
            return;
        }
    }
    arena_free(buf, size); /* not tracked: the table was full */
}

void exchange_arena_end(const void *owner)
{
    for (size_t i = 0; i < ARENA_SLOTS; i++) {
        struct slot *s = &slots[i];
        if (s->buf == NULL || s->owner != owner || s->taken) {
            continue;
        }
        if (!s->used) {
            arena_free(s->buf, s->size);
            memset(s, 0, sizeof(*s));
        }
        s->used = 0;
    }
}

void exchange_release_scratch(void)
{
    for (size_t i = 0; i < ARENA_SLOTS; i++) {
        struct slot *s = &slots[i];
        if (s->buf != NULL && !s->taken) {
            arena_free(s->buf, s->size);
            memset(s, 0, sizeof(*s));
        }
    }
}

/*
 * exchange/arena.h: the scratch memory the back-ends keep from one exchange to the next
 * (internal to exchange/; the public exchange_release_scratch() frees it).
 *
 * The big buffers of an exchange (transpose's staging blocks, grid's and hypercube's landing,
 * forwarding and staging buffers, forward's ring) are taken here and given back at its end,
 * in bytes. A buffer given back stays with the process, so an exchange that comes again (a
 * benchmark's repetitions, a sort that exchanges more than once) finds its pages mapped and
 * faulted in: a big buffer freed goes back to the system (jemalloc returns huge extents at
 * once), and allocated anew it faults every page again, inside the exchange.
 *
 * Every buffer belongs to an owner (a back-end): a take is served by the owner's smallest free
 * buffer that is large enough, else allocated (on huge pages from 64 KiB, see arena.c);
 * exchange_arena_end() frees the owner's buffers its exchange did not take, so what a back-end
 * keeps is what its last exchange used. A rank runs one exchange at a time, and the arena is
 * used from one thread.
 */
#ifndef SORTEX_EXCHANGE_ARENA_H
#define SORTEX_EXCHANGE_ARENA_H

#include <stddef.h>

/**
 * A buffer of at least @bytes for @owner (any address that names it, e.g. its exchange_ops):
 * a kept one, or a new one. Stores its size in *@size and whether it is new (its pages not yet
 * touched) in *@fresh (may be NULL). Returns NULL (errno = ENOMEM) when out of memory.
 */
void *exchange_arena_take(const void *owner, size_t bytes, size_t *size, int *fresh);

/** Gives @buf (from exchange_arena_take(), @size bytes) back, to be kept; NULL is fine. */
void exchange_arena_give(void *buf, size_t size);

/** Ends an exchange of @owner: frees its buffers that were not taken since the last end. */
void exchange_arena_end(const void *owner);

#endif

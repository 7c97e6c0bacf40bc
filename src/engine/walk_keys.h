/* walk_keys.h -- the keys of the keyed stream (riffle.h, "Keyed order") in
 * input order, for the record walk (walk.c).
 *
 * Keys depend on the item number only, never on the records, so they can be
 * drawn before the records they belong to are even read.  They are drawn in
 * pieces of about what the walk asks for (a small input never pays for 2^16
 * keys) -- or, with a helper thread, the first block of 2^16 items so and
 * every later block whole with rf_keyed_keys, ahead of the walk on the
 * helper.  With ChaCha20 the keys cost about as much as finding the records
 * (docs/BENCHMARKS_CLI.md), so the helper takes a third to a half off a walk.
 * Whichever thread draws a block, its keys are the same: the output does not
 * depend on the helper. */
#ifndef RF_ENGINE_WALK_KEYS_H
#define RF_ENGINE_WALK_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "riffle.h"

struct key_ring;

/* Fields are private, except keys / avail / next (read-only). */
struct walk_keys {
    uint64_t next;        /* item whose key is keys[0] */
    const uint64_t *keys; /* the keys of items next .. next + avail - 1 */
    size_t avail;
    const rf_keyed_order *order;
    int helper;
    rf_keyed_stream ks;   /* keys in pieces */
    rf_keyed *piece;
    uint64_t *piece_keys;
    struct key_ring *ring; /* the later blocks, whole; NULL until needed */
};

/* Keys from item 0 of o (which must outlive w); with `helper`, blocks from
 * the second on are drawn ahead on a helper thread, in 2 MiB of buffers.
 * Returns RF_OK, RF_ENOMEM or RF_ECRYPTO. */
rf_status rfi_walk_keys_init(struct walk_keys *w, const rf_keyed_order *o, int helper);

/* When w->avail is 0: make it at least 1 (about `want`, or a whole block of
 * 2^16 from the helper).  Returns RF_OK, RF_ENOMEM or RF_ECRYPTO. */
rf_status rfi_walk_keys_more(struct walk_keys *w, size_t want);

/* The first n <= avail keys are used. */
static inline void rfi_walk_keys_take(struct walk_keys *w, size_t n)
{
    w->keys += n;
    w->avail -= n;
    w->next += n;
}

/* Stop the helper and free everything (the generator state wiped). */
void rfi_walk_keys_free(struct walk_keys *w);

#endif

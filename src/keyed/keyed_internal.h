/* keyed_internal.h -- the keyed order's sort with the tie shuffle as a
 * parameter, so that tests/unit/test_keyed.c can drive the ties from a scripted
 * generator (not installed). */
#ifndef RF_KEYED_INTERNAL_H
#define RF_KEYED_INTERNAL_H

#include "riffle.h"

/* Shuffle the m >= 2 items of a tie (all with key `key`, in input order). */
typedef rf_status (*rfi_tie_fn)(void *ctx, uint64_t key, rf_keyed *run, size_t m);

/* rf_keyed_sort with ties handed to tie(ctx, ...), in increasing key order
 * when threads == 1. */
rf_status rfi_keyed_sort_with(rf_keyed *a, size_t n, unsigned threads, rfi_tie_fn tie,
                              void *ctx);

/* rf_keyed_index_vals for the items of one key range alone: those whose
 * keys k have floor(k * parts / 2^64) == part (rf_engine_owner's ranges),
 * in the order they have in the whole (riffle.h, "Keyed order": the order
 * inside a key range depends on its items alone).  keys and vals are asked
 * for every item, as rf_keyed_index_vals asks them; *idx is malloc'ed here
 * with the *count values kept (NULL when none: free it either way).  With
 * size not NULL, vals must write n + 1 values for n items, the last being
 * where the block's last item ends (a value past its own), so that an
 * item's size is the next value minus its own: *size is the kept items'
 * total.  Returns as rf_keyed_index_vals (RF_EINVAL also for part >= parts
 * or a NULL vals, idx or count). */
rf_status rfi_keyed_index_part(const rf_keyed_order *o, uint64_t m, rf_keyed_keys_fn keys,
                               rf_keyed_vals_fn vals, void *ctx, uint64_t vmax, unsigned part,
                               unsigned parts, unsigned threads, uint64_t **idx,
                               uint64_t *count, uint64_t *size);

/* Items per keyed block: each block of items has its own substream. */
#define RFI_KEYED_BLOCK_BITS 16

#endif

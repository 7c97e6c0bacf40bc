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

/* Items per keyed block: each block of items has its own substream. */
#define RFI_KEYED_BLOCK_BITS 16

#endif

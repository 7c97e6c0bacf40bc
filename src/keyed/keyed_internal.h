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

/* Whether a key lies in key range `part` of `parts` (rf_engine_owner's
 * ranges: floor(key * parts / 2^64) == part), and *at its place inside
 * the range: the low word of key * parts, which grows with the key across
 * the range and spreads its keys over all 64 bits. */
static inline int rfi_keyed_part_place(uint64_t key, unsigned part, unsigned parts,
                                       uint64_t *at)
{
    const unsigned __int128 p = (unsigned __int128)key * parts;
    *at = (uint64_t)p;
    return (uint64_t)(p >> 64) == part;
}

/* rf_keyed_index_vals for a list of n of the m items, in item order: of
 * item list i its place at[i] and its value val[i], where the places are
 * any increasing function of the keys (rfi_keyed_part_place's for the
 * items of one key range), the values as rf_keyed_index_vals wants them.
 * idx[j] = the value of the list item in place j of the keyed order among
 * the listed items -- for one key range's items, their order in the whole
 * (riffle.h, "Keyed order": the order inside a key range depends on its
 * items alone).  keys and vals are asked only for the blocks of near ties,
 * as rf_keyed_index_vals asks them; first_val[c] is the value of block c's
 * first item (of all m).  Returns as rf_keyed_index_vals (RF_EINVAL also
 * for NULL keys, vals or first_val, or n > m). */
rf_status rfi_keyed_index_list(const rf_keyed_order *o, uint64_t m, const uint64_t *at,
                               const uint64_t *val, size_t n, rf_keyed_keys_fn keys,
                               rf_keyed_vals_fn vals, void *ctx, const uint64_t *first_val,
                               uint64_t vmax, unsigned threads, uint64_t *idx);

/* Items per keyed block: each block of items has its own substream. */
#define RFI_KEYED_BLOCK_BITS 16

#endif

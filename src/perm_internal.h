/* Internal: the Feistel network behind rf_perm's cipher modes (not installed). */
#ifndef RF_PERM_INTERNAL_H
#define RF_PERM_INTERNAL_H

#include "riffle_perm.h"

/* Derive the round keys of p (p->mode, p->max, p->rounds set) from key.
 * RF_OK or RF_ECRYPTO. */
rf_status rfi_feistel_keys(rf_perm *p, const uint8_t key[RF_KEY_BYTES]);

/* The network E (and its inverse) on [0, 2^b), b = hi_bits + lo_bits, with
 * cycle walking into [0, max]. */
uint64_t rfi_feistel_at(const rf_perm *p, uint64_t x);
uint64_t rfi_feistel_inverse(const rf_perm *p, uint64_t y);
/* out[j] = rfi_feistel_at(p, first + j), several lanes at a time. */
void rfi_feistel_range(const rf_perm *p, uint64_t first, size_t count, uint64_t *out);

#endif

/* Internal: the fused Fisher-Yates fast path (src/permute/shuffle_fused.c) and
 * the byte swap shared by src/permute/shuffle.c and src/permute/deck.c. */
#ifndef RF_SHUFFLE_INTERNAL_H
#define RF_SHUFFLE_INTERNAL_H

#include "riffle.h"

/* Apply the first `limit` steps (limit <= n - 1) of rf_shuffle's Fisher-Yates
 * to n elements of `size` bytes at a, drawing from g.  Returns 1 if done, 0
 * (nothing drawn) when no fused path exists for this generator kind and
 * element size: the caller then uses the generic path. */
int rfi_shuffle_fused(rf_rng *g, unsigned char *a, size_t n, size_t size, size_t limit);

/* Exchange size bytes at x and y (distinct), 64 bytes at a time: the element
 * swap of the generic shuffle path and of the deck. */
void rfi_swap_bytes(unsigned char *x, unsigned char *y, size_t size);

#endif

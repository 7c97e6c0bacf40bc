/* Internal: growing an array by doubling. */
#ifndef RF_COMMON_GROW_H
#define RF_COMMON_GROW_H

#include <stddef.h>

/* items (of *cap elements of `size` bytes, or NULL with *cap 0) reallocated
 * to twice *cap, or to `first` elements when empty.  Returns the new array
 * and sets *cap, or NULL (items untouched) when out of memory or when the
 * size would overflow. */
void *rfi_grow(void *items, size_t *cap, size_t size, size_t first);

#endif

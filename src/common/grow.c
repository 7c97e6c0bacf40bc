/* Growing arrays: doubling keeps appends amortised O(1). */
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

void *rfi_grow(void *items, size_t *cap, size_t size, size_t first)
{
    const size_t want = *cap ? *cap : first / 2;
    if (want > SIZE_MAX / 2 / size)
        return NULL;
    void *p = realloc(items, 2 * want * size);
    if (p)
        *cap = 2 * want;
    return p;
}

/* Internal: a fixed-capacity open-addressing hash map from uint64 to uint64
 * for the O(k) samplers (sparse Fisher-Yates, Floyd's set), in caller memory.
 * Linear probing on a power-of-two table kept at most half full, so probes
 * are O(1) expected; keys are positions in [0, n) with n <= UINT64_MAX, so
 * UINT64_MAX is free to mark an empty cell.  Never allocates, never deletes. */
#ifndef RF_SAMPLE_MAP_H
#define RF_SAMPLE_MAP_H

#include <stddef.h>
#include <stdint.h>

#define RFI_MAP_EMPTY UINT64_MAX

typedef struct rfi_map {
    uint64_t *cells; /* 2 words per cell (key, value), or 1 for a set */
    size_t mask;     /* capacity - 1 */
    unsigned shift;  /* 64 - log2(capacity) */
    unsigned width;  /* words per cell */
} rfi_map;

/* Capacity for at most k keys: the smallest power of two >= 2k, at least 8;
 * 0 if that overflows size_t arithmetic for cells of `width` words. */
static inline size_t rfi_map_capacity(size_t k, unsigned width)
{
    size_t cap = 8;
    while (cap < k || cap - k < k) {
        if (cap > SIZE_MAX / 2 / (width * sizeof(uint64_t)))
            return 0;
        cap *= 2;
    }
    return cap;
}

static inline void rfi_map_init(rfi_map *m, void *mem, size_t cap, unsigned width)
{
    m->cells = mem;
    m->mask = cap - 1;
    m->width = width;
    unsigned lg = 0;
    while (((size_t)1 << lg) < cap)
        lg++;
    m->shift = 64 - lg;
    for (size_t i = 0; i < cap; i++)
        m->cells[i * width] = RFI_MAP_EMPTY;
}

/* Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): the high bits of key times
 * 2^64 / golden ratio. */
static inline size_t rfi_map_slot(const rfi_map *m, uint64_t key)
{
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> m->shift);
    while (m->cells[i * m->width] != key && m->cells[i * m->width] != RFI_MAP_EMPTY)
        i = (i + 1) & m->mask;
    return i;
}

/* Value stored for key, or `dflt` if none (map cells only). */
static inline uint64_t rfi_map_get(const rfi_map *m, uint64_t key, uint64_t dflt)
{
    const size_t i = rfi_map_slot(m, key);
    return m->cells[2 * i] == key ? m->cells[2 * i + 1] : dflt;
}

/* Set key's value (map cells only); the map must have room (precondition). */
static inline void rfi_map_put(rfi_map *m, uint64_t key, uint64_t value)
{
    const size_t i = rfi_map_slot(m, key);
    m->cells[2 * i] = key;
    m->cells[2 * i + 1] = value;
}

/* Add key to a set (width 1); returns 0 if it was already there. */
static inline int rfi_set_add(rfi_map *m, uint64_t key)
{
    const size_t i = rfi_map_slot(m, key);
    if (m->cells[i] == key)
        return 0;
    m->cells[i] = key;
    return 1;
}

#endif

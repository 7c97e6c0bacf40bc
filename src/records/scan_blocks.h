/* scan_blocks.h -- the block loop of the SIMD emitting scans (scan_avx2.c,
 * scan_avx512.c), written once: whole 64-byte blocks through a block
 * emitter, the tail by the reference (records_scan.h). */
#ifndef RIFFLE_SCAN_BLOCKS_H
#define RIFFLE_SCAN_BLOCKS_H

#include <string.h>

#include "records_scan.h"

/* Stores the positions of one 64-byte block's delimiters (at + index) at o,
 * possibly followed by up to 8 more values of no meaning; returns how many. */
typedef size_t emit_fn(const unsigned char *block, unsigned char delim, uint64_t at,
                       uint64_t *o);

/* The emitting scan (records_scan.h) of both SIMD variants: whole 64-byte
 * blocks through `emit`, whose stores may run past the last position, so
 * they go to a local buffer of 16 blocks that is copied out exactly; the
 * tail by the reference.  Always inlined with a constant `emit`. */
static inline __attribute__((always_inline)) size_t
scan_blocks(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
            uint64_t *out, emit_fn *emit)
{
    enum { BLOCKS = 16 };
    uint64_t tmp[BLOCKS * 64 + 8];
    size_t n = 0, i = 0;
    while (len - i >= 64) {
        const size_t span = len - i >= BLOCKS * 64 ? BLOCKS * 64 : (len - i) / 64 * 64;
        size_t t = 0;
        for (size_t k = 0; k < span; k += 64)
            t += emit(p + i + k, delim, base + i + k + 1, tmp + t);
        memcpy(out + n, tmp, t * sizeof *out);
        n += t;
        i += span;
    }
    return n + rf_scan_ref_(p + i, len - i, delim, base + i, out + n);
}

#endif

/* Internal: the batched Lemire draw at 64 and 32 bits, and the Fisher-Yates
 * draw schedule shared by every shuffle, partial shuffle and the audit. */
#ifndef RF_BOUNDED_INTERNAL_H
#define RF_BOUNDED_INTERNAL_H

#include "riffle.h"

/* 64-bit words: rf_mulhi64_ and rf_lemire64_batch_ come from riffle.h. */
#define rfi_mulhi64 rf_mulhi64_
#define rfi_lemire64_batch rf_lemire64_batch_
#define rfi_lemire64_falling rf_lemire64_falling_

static inline uint32_t rfi_mulhi32(uint32_t a, uint32_t b, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *lo = (uint32_t)p;
    return (uint32_t)(p >> 32);
}

#define LT_WORD uint32_t
#define LT_MULHI rfi_mulhi32
#define LT_NAME(x) rfi_lemire32_##x
#include "riffle_lemire.h"
#undef LT_WORD
#undef LT_MULHI
#undef LT_NAME

/* The Fisher-Yates draw schedule (part of the stream contract).  Step t of a
 * shuffle of n draws d_t uniform in [0, n - t) for t = 0 .. n-2.  Steps are
 * grouped into batches drawn from one 64-bit word: a batch that starts at bound
 * b takes rfi_batch_len(b) steps (never past the bound-2 step).  The product of
 * a batch's bounds is at most b^k <= 2^60, so a word is rejected with
 * probability below 2^-4 (pairs near 2^30), 2^-7 (triples near 2^19), 2^-8,
 * 2^-9 and 2^-10 for the longer batches -- the thresholds follow
 * Brackett-Rozinsky & Lemire (2024, Sec. 5), which found them fastest. */
#define RFI_BATCH_STEPS_MAX 6
/* Steps in the batch that starts at bound b, and in *U an upper bound on the
 * product of its bounds (b <= 2^s and k steps give at most 2^(s*k)). */
static inline size_t rfi_batch_len(uint64_t b, uint64_t *U)
{
    size_t k;
    if (b > (UINT64_C(1) << 30)) {
        k = 1;
        *U = b;
    } else if (b > (UINT64_C(1) << 19)) {
        k = 2;
        *U = UINT64_C(1) << 60;
    } else if (b > (UINT64_C(1) << 14)) {
        k = 3;
        *U = UINT64_C(1) << 57;
    } else if (b > (UINT64_C(1) << 11)) {
        k = 4;
        *U = UINT64_C(1) << 56;
    } else if (b > (UINT64_C(1) << 9)) {
        k = 5;
        *U = UINT64_C(1) << 55;
    } else {
        k = 6;
        *U = UINT64_C(1) << 54;
    }
    return k < b - 1 ? k : (size_t)(b - 1);
}

/* Fill d[0..) with the draws of steps t, t+1, ... of a Fisher-Yates shuffle of
 * n, d[i] uniform in [0, n - t - i), in whole batches, until at least `want`
 * are filled or the steps run out (t reaches n - 1).  Returns how many were
 * filled: at most want + RFI_BATCH_STEPS_MAX - 1, so d must hold that many.
 * want >= 1.  For an rf_source with `below`, each draw is one below() call. */
size_t rfi_draw_steps(rf_rng *g, uint64_t n, uint64_t t, size_t want, uint64_t *d);

#endif

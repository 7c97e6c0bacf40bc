/* PCG64 (XSL-RR 128/64) set-up, as pcg-c's pcg64_srandom_r:
 *   state = 0; inc = (initseq << 1) | 1; step; state += initstate; step. */
#include "riffle.h"

static void add128(uint64_t *hi, uint64_t *lo, uint64_t bhi, uint64_t blo)
{
    uint64_t l = *lo + blo;
    *hi += bhi + (l < blo);
    *lo = l;
}

void rf_pcg64_init(rf_pcg64 *p, uint64_t initstate_hi, uint64_t initstate_lo,
                   uint64_t initseq_hi, uint64_t initseq_lo)
{
    p->state_hi = 0;
    p->state_lo = 0;
    p->inc_hi = (initseq_hi << 1) | (initseq_lo >> 63);
    p->inc_lo = (initseq_lo << 1) | 1u;
    (void)rf_pcg64_next64(p);
    add128(&p->state_hi, &p->state_lo, initstate_hi, initstate_lo);
    (void)rf_pcg64_next64(p);
}

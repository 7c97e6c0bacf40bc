/* xoshiro256++ set-up (the per-word function is inline in riffle.h). */
#include "riffle.h"

/* splitmix64 (Steele, Lea & Flood 2014), the seeding generator the xoshiro
 * authors recommend; used here only to replace an all-zero state. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rf_xoshiro_init(rf_xoshiro *x, const uint64_t state[4])
{
    if ((state[0] | state[1] | state[2] | state[3]) == 0) {
        uint64_t sm = 0;
        for (int i = 0; i < 4; i++)
            x->s[i] = splitmix64(&sm);
        return;
    }
    for (int i = 0; i < 4; i++)
        x->s[i] = state[i];
}

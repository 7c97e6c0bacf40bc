/* rf_keyhash: unit values of byte strings (riffle_sample.h).
 *
 * The selection key is BLAKE2b("riffle keyhash" || key) cut to SipHash's 16
 * bytes, so a selection's values are unrelated to the streams the same seed
 * gives the keyed order or a generator.  SipHash-2-4 is a PRF on short
 * inputs (Aumasson and Bernstein, INDOCRYPT 2012): fields of a few bytes cost
 * a few dozen cycles, and no input can be chosen to land in a part without
 * the key. */
#include "riffle_sample.h"

#include <math.h>
#include <sodium.h>
#include <string.h>

#include "common/sodium.h"
#include "rng/rng_internal.h"

_Static_assert(crypto_shorthash_siphash24_KEYBYTES == sizeof(((rf_keyhash *)0)->k),
               "rf_keyhash holds a SipHash key");

rf_status rf_keyhash_init(rf_keyhash *h, const uint8_t key[RF_KEY_BYTES])
{
    uint8_t derived[RF_KEY_BYTES];
    const rf_status st = rfi_seed_prefixed(derived, "riffle keyhash", key, RF_KEY_BYTES);
    if (st != RF_OK)
        return st;
    memcpy(h->k, derived, sizeof h->k);
    sodium_memzero(derived, sizeof derived);
    return RF_OK;
}

uint64_t rf_keyhash_unit(const rf_keyhash *h, const void *bytes, size_t len)
{
    unsigned char out[crypto_shorthash_siphash24_BYTES];
    static const unsigned char none[1];
    (void)crypto_shorthash_siphash24(out, len ? bytes : none, len, h->k);
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | out[i];
    return u;
}

rf_status rf_unit_threshold(double p, uint64_t *t, int *all)
{
    if (!(p >= 0.0 && p <= 1.0))
        return RF_EINVAL;
    *all = p == 1.0;
    /* p < 1 is a double below 1: p * 2^64 is exact and below 2^64. */
    *t = *all ? UINT64_MAX : (uint64_t)ldexp(p, 64);
    return RF_OK;
}

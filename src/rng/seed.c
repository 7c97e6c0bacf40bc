/* Seed derivation: every seed form becomes a 32-byte key through BLAKE2b-256
 * (libsodium crypto_generichash), with a domain-separation prefix so that the
 * integer 42 and the string "42" give different keys.  Part of the stream
 * contract (riffle.h). */
#include "riffle.h"
#include "common/sodium.h"
#include "rng_internal.h"

#include <sodium.h>
#include <string.h>

static const char PREFIX_U64[] = "riffle/seed/u64";
static const char PREFIX_STR[] = "riffle/seed/str";

rf_status rf_seed_u64(uint8_t key[RF_KEY_BYTES], uint64_t seed)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(seed >> (8 * i));
    return rfi_seed_prefixed(key, PREFIX_U64, le, sizeof le);
}

rf_status rf_seed_string(uint8_t key[RF_KEY_BYTES], const void *bytes, size_t len)
{
    if (bytes == NULL && len > 0)
        return RF_EINVAL;
    return rfi_seed_prefixed(key, PREFIX_STR, bytes, len);
}

/* Digits only, at least one, value in range: the integer in *v. */
static int decimal_u64(const char *s, uint64_t *v)
{
    if (!*s)
        return 0;
    uint64_t x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        const unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return 0;
        x = x * 10 + d;
    }
    *v = x;
    return 1;
}

rf_status rf_seed_text(uint8_t key[RF_KEY_BYTES], const char *text)
{
    uint64_t v;
    if (text == NULL)
        return RF_EINVAL;
    if (decimal_u64(text, &v))
        return rf_seed_u64(key, v);
    return rf_seed_string(key, text, strlen(text));
}

rf_status rfi_seed_prefixed(uint8_t key[RF_KEY_BYTES], const char *prefix,
                            const void *bytes, size_t len)
{
    crypto_generichash_state st;
    if (rfi_sodium_ready() != RF_OK)
        return RF_ECRYPTO;
    if (crypto_generichash_init(&st, NULL, 0, RF_KEY_BYTES) != 0 ||
        crypto_generichash_update(&st, (const unsigned char *)prefix, strlen(prefix)) != 0 ||
        (len > 0 && crypto_generichash_update(&st, bytes, len) != 0) ||
        crypto_generichash_final(&st, key, RF_KEY_BYTES) != 0)
        return RF_ECRYPTO;
    return RF_OK;
}

rf_status rf_seed_os(uint8_t key[RF_KEY_BYTES])
{
    return rf_entropy(key, RF_KEY_BYTES);
}

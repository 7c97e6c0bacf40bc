/* Provably fair dealing (riffle_fair.h): the versioned derivation of a deal
 * from a server seed, a client seed and a nonce, and the commitment.
 *
 * HMAC-SHA-256 (RFC 2104 with FIPS 180-4's SHA-256; libsodium
 * crypto_auth_hmacsha256) keyed by the server seed is a pseudorandom function
 * of its message, so each (client seed, nonce) gets an independent 256-bit
 * ChaCha20 key while the server seed stays secret.  The client seed is
 * length-prefixed so that no two (client seed, nonce) pairs give the same
 * message.  A 256-bit key leaves every one of the 52! < 2^226 orders of a deck
 * reachable; the deck's draws are unbiased (Lemire's rejection, riffle.h). */
#include "riffle_fair.h"
#include "common/sodium.h"

#include <sodium.h>
#include <string.h>

static void put_be64(unsigned char out[8], uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (unsigned char)v;
}

rf_status rf_fair_commit(uint8_t commit[RF_FAIR_COMMIT_BYTES],
                         const uint8_t server_seed[RF_FAIR_SEED_BYTES])
{
    if (rfi_sodium_ready() != RF_OK)
        return RF_ECRYPTO;
    crypto_hash_sha256(commit, server_seed, RF_FAIR_SEED_BYTES);
    return RF_OK;
}

rf_status rf_fair_key(uint8_t key[RF_KEY_BYTES], const uint8_t server_seed[RF_FAIR_SEED_BYTES],
                      const void *client, size_t len, uint64_t nonce)
{
    if (client == NULL && len > 0)
        return RF_EINVAL;
    if (rfi_sodium_ready() != RF_OK)
        return RF_ECRYPTO;
    unsigned char be_len[8], be_nonce[8];
    put_be64(be_len, (uint64_t)len);
    put_be64(be_nonce, nonce);
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, server_seed, RF_FAIR_SEED_BYTES);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)RF_FAIR_LABEL,
                                  sizeof RF_FAIR_LABEL - 1);
    crypto_auth_hmacsha256_update(&st, be_len, sizeof be_len);
    if (len > 0)
        crypto_auth_hmacsha256_update(&st, client, len);
    crypto_auth_hmacsha256_update(&st, be_nonce, sizeof be_nonce);
    crypto_auth_hmacsha256_final(&st, key);
    sodium_memzero(&st, sizeof st);
    return RF_OK;
}

rf_status rf_fair_rng_init(rf_rng *g, const uint8_t server_seed[RF_FAIR_SEED_BYTES],
                           const void *client, size_t len, uint64_t nonce)
{
    uint8_t key[RF_KEY_BYTES];
    rf_status s = rf_fair_key(key, server_seed, client, len, nonce);
    if (s == RF_OK)
        s = rf_rng_init(g, RF_RNG_CHACHA20, key, 0);
    sodium_memzero(key, sizeof key);
    return s;
}

rf_status rf_fair_deal(size_t *order, size_t n, const uint8_t server_seed[RF_FAIR_SEED_BYTES],
                       const void *client, size_t len, uint64_t nonce)
{
    if (n == 0)
        return RF_EINVAL;
    rf_rng g;
    rf_status s = rf_fair_rng_init(&g, server_seed, client, len, nonce);
    /* The deck's storage is the order: each card dealt is swapped to the
     * front of the undealt part, so the first i slots are the first i cards
     * dealt (rf_deck_dealt). */
    rf_deck deck;
    rf_deck_init(&deck, order, n);
    size_t card;
    for (size_t i = 0; s == RF_OK && i < n; i++)
        s = rf_deck_deal(&deck, &g, &card);
    sodium_memzero(&g, sizeof g);
    return s;
}

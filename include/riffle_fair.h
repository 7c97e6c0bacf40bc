/*
 * riffle_fair.h -- provably fair dealing by commit and reveal.
 *
 * A game server draws a secret 32-byte server seed, publishes its commitment
 * (SHA-256 of the seed) before the game, and deals from a generator derived
 * from the server seed, a client seed the player chooses and a nonce (the
 * game's number).  After the game it reveals the server seed; anyone can
 * check the commitment and deal again.  The derivation, version 1
 * ("riffle-deal-v1"; docs/provably-fair.md gives it byte for byte):
 *
 *   key  = HMAC-SHA-256(key = server seed,
 *                       "riffle-deal-v1" (14 bytes, no terminator)
 *                       || client seed length (8 bytes, big-endian)
 *                       || client seed bytes
 *                       || nonce (8 bytes, big-endian))
 *   rng  = ChaCha20 keyed by key, stream 0: rf_rng_init(RF_RNG_CHACHA20, key, 0)
 *   deal = the deck of n cards dealt by rf_deck (riffle.h), one unbiased
 *          draw per card, the order `riffle deal` deals in
 *   commitment = SHA-256(server seed)
 *
 * The derivation is part of the stream contract: a change is a new label
 * ("riffle-deal-v2") and a new RF_FAIR_VERSION, never a change of v1.
 *
 * Nothing here allocates, prints or keeps state; any thread may call.
 */
#ifndef RIFFLE_FAIR_H
#define RIFFLE_FAIR_H

#include <stddef.h>
#include <stdint.h>

#include "riffle.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_FAIR_VERSION 1
#define RF_FAIR_LABEL "riffle-deal-v1"
#define RF_FAIR_SEED_BYTES 32   /* a server seed */
#define RF_FAIR_COMMIT_BYTES 32 /* a commitment: SHA-256 */

/* commit = SHA-256(server_seed).  RF_OK, or RF_ECRYPTO if libsodium cannot
 * start. */
RF_API RF_NODISCARD rf_status rf_fair_commit(uint8_t commit[RF_FAIR_COMMIT_BYTES],
                                             const uint8_t server_seed[RF_FAIR_SEED_BYTES]);

/* The generator key of the derivation above from the server seed, the
 * client seed client[0..len) (any bytes; len may be 0) and the nonce.
 * RF_EINVAL if client is NULL with len > 0, RF_ECRYPTO if libsodium cannot
 * start. */
RF_API RF_NODISCARD rf_status rf_fair_key(uint8_t key[RF_KEY_BYTES],
                                          const uint8_t server_seed[RF_FAIR_SEED_BYTES],
                                          const void *client, size_t len, uint64_t nonce);

/* g = ChaCha20 keyed by rf_fair_key(...), stream 0: the generator of the
 * deal.  Errors as rf_fair_key.  The intermediate key is wiped. */
RF_API RF_NODISCARD rf_status rf_fair_rng_init(rf_rng *g,
                                               const uint8_t server_seed[RF_FAIR_SEED_BYTES],
                                               const void *client, size_t len,
                                               uint64_t nonce);

/* The whole deal of a deck of n cards (n >= 1): order[i] is the card (0 ..
 * n-1, in the deck's starting order) dealt i-th.  Dealing k < n cards deals
 * order[0..k), as a deck deals one card at a time.  Errors as rf_fair_key,
 * and RF_EINVAL for n == 0. */
RF_API RF_NODISCARD rf_status rf_fair_deal(size_t *order, size_t n,
                                           const uint8_t server_seed[RF_FAIR_SEED_BYTES],
                                           const void *client, size_t len, uint64_t nonce);

#ifdef __cplusplus
}
#endif

#endif

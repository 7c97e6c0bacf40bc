/* Internal: generator details shared between src/ files (not installed). */
#ifndef RF_RNG_INTERNAL_H
#define RF_RNG_INTERNAL_H

#include "riffle.h"

/* rf_chacha.flags */
#define RFI_CHACHA_VALID 1u    /* keyed in this process */
#define RFI_CHACHA_OS 2u       /* keyed from the OS: rekey after fork */
#define RFI_CHACHA_PIDCHECK 4u /* no wipe-on-fork: compare pid at refill */
#define RFI_CHACHA_WIPE 8u     /* lives in MADV_WIPEONFORK memory */

/* The first 32 bytes of ChaCha20(key, nonce = stream, counter 0). */
/* count words of c into out: the same as count rf_chacha_next64 calls. */
void rfi_chacha_fill64(rf_chacha *c, uint64_t *out, size_t count);

void rfi_chacha_first_bytes(uint8_t out[32], const uint8_t key[RF_KEY_BYTES],
                            uint64_t stream);

/* key = BLAKE2b-256(prefix || bytes[0..len)). */
rf_status rfi_seed_prefixed(uint8_t key[RF_KEY_BYTES], const char *prefix,
                            const void *bytes, size_t len);

#endif

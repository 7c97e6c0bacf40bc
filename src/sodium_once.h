/* Internal: libsodium start-up and helpers shared by the generator files. */
#ifndef RF_SODIUM_ONCE_H
#define RF_SODIUM_ONCE_H

#include "riffle.h"

/* sodium_init() once per process (it picks the vectorised ChaCha20); RF_OK or
 * RF_ECRYPTO.  Cheap after the first call. */
rf_status rfi_sodium_ready(void);

/* key = BLAKE2b-256(prefix || bytes[0..len)). */
rf_status rfi_seed_prefixed(uint8_t key[RF_KEY_BYTES], const char *prefix,
                            const void *bytes, size_t len);

#endif

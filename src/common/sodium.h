/* Internal: libsodium start-up. */
#ifndef RF_COMMON_SODIUM_H
#define RF_COMMON_SODIUM_H

#include "riffle.h"

/* sodium_init() once per process (it picks the vectorised ChaCha20); RF_OK or
 * RF_ECRYPTO.  Cheap after the first call. */
rf_status rfi_sodium_ready(void);

#endif

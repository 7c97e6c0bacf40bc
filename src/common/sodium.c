/* libsodium's start-up, once per process for every layer that uses it. */
#include <sodium.h>
#include <stdatomic.h>

#include "sodium.h"

/* A cached "sodium_init() succeeded" bit: libsodium's own start-up is global
 * and idempotent; this only saves its mutex on every generator set-up. */
static atomic_int sodium_state; /* 0 unknown, 1 ready */

rf_status rfi_sodium_ready(void)
{
    if (atomic_load_explicit(&sodium_state, memory_order_acquire) == 1)
        return RF_OK;
    if (sodium_init() < 0)
        return RF_ECRYPTO;
    atomic_store_explicit(&sodium_state, 1, memory_order_release);
    return RF_OK;
}

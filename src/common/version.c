/* Version and error strings. */
#include "riffle.h"

const char *rf_version(void)
{
    return RF_VERSION_STRING;
}

unsigned rf_version_number(void)
{
    return RF_VERSION_NUMBER;
}

const char *rf_strerror(rf_status status)
{
    switch (status) {
    case RF_OK:
        return "success";
    case RF_EINVAL:
        return "invalid argument";
    case RF_ENOMEM:
        return "out of memory";
    case RF_EENTROPY:
        return "the operating system gave no randomness";
    case RF_ECRYPTO:
        return "libsodium could not be initialised";
    case RF_EEMPTY:
        return "not enough cards left in the deck";
    case RF_ERANGE:
        return "value out of range";
    case RF_EIO:
        return "input/output error";
    }
    return "unknown error";
}

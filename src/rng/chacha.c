/* ChaCha20 keystream generator through libsodium.
 *
 * Keystream blocks come from crypto_stream_chacha20_xor_ic() -- Bernstein's
 * variant: 64-bit nonce (our stream number) and 64-bit block counter -- applied
 * to zeros.  libsodium's AVX2/SSSE3 code (Dolbeau) computes 8 blocks per call
 * when given 512 bytes, hence RF_CHACHA_BUFFER.  RFC 8439's IETF variant is the
 * same function with the counter and nonce words split 32/96 instead of 64/64,
 * so its test vectors apply directly (tests/unit/test_rng.c). */
#include "riffle.h"
#include "rng_internal.h"
#include "common/sodium.h"

#include <sodium.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* len bytes of keystream from block `block` on: zeros encrypted in place
 * (libsodium allows the output to be the input). */
static void chacha_keystream(uint8_t *out, size_t len, uint64_t stream, uint64_t block,
                             const uint8_t key[RF_KEY_BYTES])
{
    unsigned char nonce[8];
    for (int i = 0; i < 8; i++)
        nonce[i] = (unsigned char)(stream >> (8 * i));
    memset(out, 0, len);
    crypto_stream_chacha20_xor_ic(out, out, len, nonce, block, key);
}

rf_status rf_chacha_init(rf_chacha *c, const uint8_t key[RF_KEY_BYTES], uint64_t stream)
{
    if (rfi_sodium_ready() != RF_OK)
        return RF_ECRYPTO;
    memcpy(c->key, key, RF_KEY_BYTES);
    c->stream = stream;
    c->counter = 0;
    c->avail = 0;
    c->flags = RFI_CHACHA_VALID;
    c->pid = 0;
    return RF_OK;
}

void rf_chacha_seek(rf_chacha *c, uint64_t block)
{
    c->counter = block;
    c->avail = 0;
}

void rfi_chacha_first_bytes(uint8_t out[32], const uint8_t key[RF_KEY_BYTES],
                            uint64_t stream)
{
    chacha_keystream(out, 32, stream, 0, key);
}

/* Rekey from the OS: a fork()ed child of an OS-seeded generator (its wiped
 * state has VALID clear), or a zero-filled struct that was never keyed.  If the
 * OS gives nothing, derive a fresh key from the old one, the pid, the time and
 * the address: unpredictable while the old key was, and distinct from the
 * parent's -- the best a void refill can do; rf_rng_new_os reports the failure
 * when it happens at creation. */
static void chacha_rekey(rf_chacha *c)
{
    uint8_t key[RF_KEY_BYTES];
    uint32_t keep = c->flags & (RFI_CHACHA_OS | RFI_CHACHA_PIDCHECK | RFI_CHACHA_WIPE);
    if (rf_entropy(key, sizeof key) != RF_OK) {
        struct { uint8_t old[RF_KEY_BYTES]; pid_t pid; struct timespec ts; void *where; } m;
        memset(&m, 0, sizeof m);
        memcpy(m.old, c->key, RF_KEY_BYTES);
        m.pid = getpid();
        clock_gettime(CLOCK_MONOTONIC, &m.ts);
        m.where = c;
        crypto_generichash(key, sizeof key, (const unsigned char *)&m, sizeof m, NULL, 0);
        sodium_memzero(&m, sizeof m);
    }
    (void)rfi_sodium_ready(); /* on failure libsodium still runs its reference code */
    memcpy(c->key, key, RF_KEY_BYTES);
    sodium_memzero(key, sizeof key);
    c->stream = 0;
    c->counter = 0;
    /* After a wipe, OS/PIDCHECK/WIPE are gone with the rest: a wiped page is
     * still wipe-on-fork, so VALID alone keeps detecting the next fork. */
    c->flags = RFI_CHACHA_VALID | RFI_CHACHA_OS | keep;
    c->pid = (keep & RFI_CHACHA_PIDCHECK) ? (int32_t)getpid() : 0;
}

/* count words, as count calls of rf_chacha_next64 would give them, with the
 * whole 64-byte blocks among them written by one libsodium call straight
 * into out (the keyed order's keys: 2^16 words a block) instead of 512
 * bytes at a time through c->buf.  The bytes of the keystream are the
 * words' little-endian bytes, so the bulk is the keystream itself on a
 * little-endian machine and is byte-swapped in place elsewhere.  A
 * generator that may have to rekey (OS-keyed, or not yet keyed) takes the
 * word path, where the rekey checks are. */
void rfi_chacha_fill64(rf_chacha *c, uint64_t *out, size_t count)
{
    for (; count > 0 && c->avail >= 8; count--)
        *out++ = rf_chacha_next64(c);
    const size_t blocks = count / 8;
    if (blocks > 0 && c->flags == RFI_CHACHA_VALID) {
        unsigned char *bytes = (unsigned char *)out;
        chacha_keystream(bytes, blocks * 64, c->stream, c->counter, c->key);
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
        for (size_t j = 0; j < blocks * 8; j++)
            out[j] = rf_load_le64_(bytes + 8 * j);
#endif
        c->counter += blocks;
        c->avail = 0;
        out += blocks * 8;
        count -= blocks * 8;
    }
    for (; count > 0; count--)
        *out++ = rf_chacha_next64(c);
}

void rf_chacha_refill(rf_chacha *c)
{
    if (!(c->flags & RFI_CHACHA_VALID) ||
        ((c->flags & RFI_CHACHA_PIDCHECK) && c->pid != (int32_t)getpid()))
        chacha_rekey(c);
    chacha_keystream(c->buf, RF_CHACHA_BUFFER, c->stream, c->counter, c->key);
    c->counter += RF_CHACHA_BUFFER / 64;
    c->avail = RF_CHACHA_BUFFER;
}

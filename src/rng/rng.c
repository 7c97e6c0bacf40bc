/* The polymorphic generator handle: keying, seeding, naming, filling, and the
 * fork-safe OS-seeded default. */
#include "riffle.h"
#include "rng_internal.h"

#include <sodium.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const struct {
    const char *name;
    rf_rng_kind kind;
} kind_names[] = {
    {"chacha20", RF_RNG_CHACHA20},     {"chacha", RF_RNG_CHACHA20},
    {"xoshiro256++", RF_RNG_XOSHIRO256PP}, {"xoshiro256pp", RF_RNG_XOSHIRO256PP},
    {"xoshiro", RF_RNG_XOSHIRO256PP},  {"pcg64", RF_RNG_PCG64},
    {"pcg", RF_RNG_PCG64},
};

const char *rf_rng_kind_name(rf_rng_kind kind)
{
    switch (kind) {
    case RF_RNG_CHACHA20:
        return "chacha20";
    case RF_RNG_XOSHIRO256PP:
        return "xoshiro256++";
    case RF_RNG_PCG64:
        return "pcg64";
    case RF_RNG_SOURCE:
        return "source";
    }
    return "unknown";
}

rf_status rf_rng_kind_parse(const char *name, rf_rng_kind *kind)
{
    if (name == NULL)
        return RF_EINVAL;
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (strcmp(name, kind_names[i].name) == 0) {
            *kind = kind_names[i].kind;
            return RF_OK;
        }
    return RF_EINVAL;
}

static uint64_t le64(const uint8_t *p)
{
    return rf_load_le64_(p);
}

rf_status rf_rng_init(rf_rng *g, rf_rng_kind kind, const uint8_t key[RF_KEY_BYTES],
                      uint64_t stream)
{
    uint8_t b[32];
    rf_status st;
    switch (kind) {
    case RF_RNG_CHACHA20:
        g->kind = kind;
        return rf_chacha_init(&g->u.chacha, key, stream);
    case RF_RNG_XOSHIRO256PP:
    case RF_RNG_PCG64:
        break;
    case RF_RNG_SOURCE:
    default:
        return RF_EINVAL;
    }
    /* Counter-based derivation for the fast generators: their state is the
     * first 32 keystream bytes of ChaCha20(key, nonce = stream). */
    st = rf_chacha_init(&g->u.chacha, key, stream); /* starts libsodium */
    if (st != RF_OK)
        return st;
    rfi_chacha_first_bytes(b, key, stream);
    g->kind = kind;
    if (kind == RF_RNG_XOSHIRO256PP) {
        const uint64_t s[4] = {le64(b), le64(b + 8), le64(b + 16), le64(b + 24)};
        rf_xoshiro_init(&g->u.xoshiro, s);
    } else {
        rf_pcg64_init(&g->u.pcg, le64(b + 8), le64(b), le64(b + 24), le64(b + 16));
    }
    sodium_memzero(b, sizeof b);
    return RF_OK;
}

rf_status rf_rng_seed_u64(rf_rng *g, rf_rng_kind kind, uint64_t seed)
{
    uint8_t key[RF_KEY_BYTES];
    rf_status st = rf_seed_u64(key, seed);
    if (st == RF_OK)
        st = rf_rng_init(g, kind, key, 0);
    return st;
}

rf_status rf_rng_seed_string(rf_rng *g, rf_rng_kind kind, const void *bytes, size_t len)
{
    uint8_t key[RF_KEY_BYTES];
    rf_status st = rf_seed_string(key, bytes, len);
    if (st == RF_OK)
        st = rf_rng_init(g, kind, key, 0);
    return st;
}

rf_status rf_rng_from_source(rf_rng *g, const rf_source *src)
{
    if (src == NULL || (src->next64 == NULL && src->below == NULL))
        return RF_EINVAL;
    g->kind = RF_RNG_SOURCE;
    g->u.source = *src;
    return RF_OK;
}

/* ChaCha20's words are its keystream read 8 bytes at a time, little-endian,
 * so the bytes of whole words are the buffered keystream itself: copied in
 * blocks, not a word at a time (riffle rng writes this stream at the
 * keystream's own speed).  Leaves fewer than 8 bytes to the word loop. */
static size_t fill_chacha(rf_chacha *c, unsigned char *p, size_t len)
{
    size_t done = 0;
    while (len - done >= 8) {
        if (c->avail < 8)
            rf_chacha_refill(c);
        const size_t whole = (len - done) & ~(size_t)7;
        const size_t n = whole < c->avail ? whole : c->avail;
        memcpy(p + done, c->buf + (RF_CHACHA_BUFFER - c->avail), n);
        c->avail -= n;
        done += n;
    }
    return done;
}

void rf_rng_fill(rf_rng *g, void *buf, size_t len)
{
    unsigned char *p = buf;
    if (g->kind == RF_RNG_CHACHA20) {
        const size_t done = fill_chacha(&g->u.chacha, p, len);
        p += done;
        len -= done;
    }
    while (len > 0) {
        uint64_t w = rf_rng_next64(g);
        size_t n = len < 8 ? len : 8;
        for (size_t i = 0; i < n; i++)
            p[i] = (unsigned char)(w >> (8 * i));
        p += n;
        len -= n;
    }
}

/* The OS-seeded generator lives alone in its own pages, marked
 * MADV_WIPEONFORK (Linux >= 4.14): a child sees them zero-filled, so its
 * rf_chacha has VALID clear and avail 0, and the very next word goes through
 * rf_chacha_refill, which rekeys from the OS.  No check is added to the
 * per-word path.  (OpenBSD's arc4random uses minherit(MAP_INHERIT_ZERO) the
 * same way; glibc 2.36's arc4random, MADV_WIPEONFORK.) */
static size_t os_mapping_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t p = page > 0 ? (size_t)page : 4096;
    return (sizeof(rf_rng) + p - 1) / p * p;
}

rf_rng *rf_rng_new_os(rf_status *status)
{
    uint8_t key[RF_KEY_BYTES];
    rf_status st = rf_seed_os(key);
    rf_rng *g = NULL;
    size_t len = os_mapping_size();
    void *m;
    uint32_t flags = RFI_CHACHA_OS;

    if (st != RF_OK)
        goto fail;
    m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        st = RF_ENOMEM;
        goto fail;
    }
    g = m;
#ifdef MADV_WIPEONFORK
    if (madvise(m, len, MADV_WIPEONFORK) == 0)
        flags |= RFI_CHACHA_WIPE;
    else
#endif
        flags |= RFI_CHACHA_PIDCHECK;
    st = rf_rng_init(g, RF_RNG_CHACHA20, key, 0);
    if (st != RF_OK)
        goto fail_unmap;
    g->u.chacha.flags |= flags;
    g->u.chacha.pid = (flags & RFI_CHACHA_PIDCHECK) ? (int32_t)getpid() : 0;
    sodium_memzero(key, sizeof key);
    if (status)
        *status = RF_OK;
    return g;

fail_unmap:
    munmap(m, len);
fail:
    sodium_memzero(key, sizeof key);
    if (status)
        *status = st;
    return NULL;
}

void rf_rng_free(rf_rng *g)
{
    if (g == NULL)
        return;
    sodium_memzero(g, sizeof *g);
    munmap(g, os_mapping_size());
}

/* bytesum.c -- the hash of a file's bytes in pieces (bytesum.h): the
 * portable word loop, the choice of variant, the ranges and the stream. */
#include <string.h>

#include "bytesum.h"

/* XXH64's final avalanche primes (Yann Collet, XXH64 specification). */
#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull

uint64_t rfi_bytesum_words_ref(const unsigned char *p, size_t nw, uint64_t i0)
{
    uint64_t k = RFI_BYTESUM_K0 + i0 * RFI_BYTESUM_K1, s = 0;
    for (size_t i = 0; i < nw; i++, p += 8) {
        uint64_t w;
        memcpy(&w, p, sizeof w); /* one unaligned load */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        const uint64_t x = w ^ k;
        s += w + (x & 0xffffffffu) * (x >> 32);
        k += RFI_BYTESUM_K1;
    }
    return s;
}

/* The SSE2 variant is the x86-64 baseline: chosen when built, no run-time
 * check needed. */
static uint64_t words(const unsigned char *p, size_t nw, uint64_t i0)
{
#if defined(RFI_HAVE_BYTESUM_SSE2)
    return rfi_bytesum_words_sse2(p, nw, i0);
#else
    return rfi_bytesum_words_ref(p, nw, i0);
#endif
}

/* Word i from a partial one: its bytes, then zeros. */
static uint64_t padded(const unsigned char *p, size_t have, uint64_t i)
{
    unsigned char b[8] = {0};
    memcpy(b, p, have);
    return rfi_bytesum_words_ref(b, 1, i);
}

uint64_t rfi_bytesum_range(const unsigned char *data, uint64_t size, uint64_t lo, uint64_t hi)
{
    const uint64_t first = (lo + 7) / 8, end = (hi + 7) / 8; /* words [first, end) */
    if (first >= end)
        return 0;
    const uint64_t whole = size / 8 < end ? size / 8 : end; /* words with 8 bytes */
    uint64_t s = whole > first ? words(data + 8 * first, (size_t)(whole - first), first) : 0;
    if (whole < end) /* the file's last, partial word */
        s += padded(data + 8 * whole, (size_t)(size - 8 * whole), whole);
    return s;
}

uint64_t rfi_bytesum_finish(uint64_t sum, uint64_t len)
{
    uint64_t h = sum ^ (len * P1);
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    return h ^ (h >> 32);
}

void rfi_bytesum_init(struct rfi_bytesum *s)
{
    memset(s, 0, sizeof *s);
}

void rfi_bytesum_feed(struct rfi_bytesum *s, const unsigned char *p, size_t n)
{
    size_t have = (size_t)(s->len % 8);
    s->len += n;
    if (have > 0) { /* complete the word begun */
        const size_t take = n < 8 - have ? n : 8 - have;
        memcpy(s->carry + have, p, take);
        p += take;
        n -= take;
        have += take;
        if (have < 8)
            return;
        s->sum += rfi_bytesum_words_ref(s->carry, 1, (s->len - n) / 8 - 1);
    }
    const size_t whole = n / 8;
    s->sum += words(p, whole, (s->len - n) / 8);
    memcpy(s->carry, p + 8 * whole, n - 8 * whole);
}

uint64_t rfi_bytesum_value(const struct rfi_bytesum *s)
{
    const size_t have = (size_t)(s->len % 8);
    const uint64_t sum = s->sum + (have ? padded(s->carry, have, s->len / 8) : 0);
    return rfi_bytesum_finish(sum, s->len);
}

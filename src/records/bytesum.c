/* bytesum.c -- the hash of a file's bytes in pieces (bytesum.h). */
#include <string.h>

#include "bytesum.h"

/* Odd constants of wyhash's (the keys' starts and steps) and of xxHash64's
 * final avalanche (Yann Collet, XXH64 specification). */
#define A0 0xa0761d6478bd642full
#define A1 0xe7037ed1a0b428dbull
#define B0 0x8ebc6af09c88c6e3ull
#define B1 0x589965cc75374cc3ull
#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull

__extension__ typedef unsigned __int128 u128;

static uint64_t word_le(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w); /* one unaligned load */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

static uint64_t mix(uint64_t x, uint64_t y)
{
    const u128 m = (u128)x * y;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

/* Blocks j0, j0 + 1, ... of p[0, 16n). */
static uint64_t blocks(const unsigned char *p, size_t n, uint64_t j0)
{
    uint64_t a = A0 + j0 * A1, b = B0 + j0 * B1, s0 = 0, s1 = 0;
    size_t i = 0;
    for (; i + 2 <= n; i += 2, p += 32) { /* two sums: two products in flight */
        s0 += mix(word_le(p) ^ a, word_le(p + 8) ^ b);
        s1 += mix(word_le(p + 16) ^ (a + A1), word_le(p + 24) ^ (b + B1));
        a += 2 * A1;
        b += 2 * B1;
    }
    if (i < n)
        s0 += mix(word_le(p) ^ a, word_le(p + 8) ^ b);
    return s0 + s1;
}

/* Block j from a partial one: its bytes, then zeros. */
static uint64_t padded(const unsigned char *p, size_t have, uint64_t j)
{
    unsigned char b[16] = {0};
    memcpy(b, p, have);
    return blocks(b, 1, j);
}

uint64_t rfi_bytesum_range(const unsigned char *data, uint64_t size, uint64_t lo, uint64_t hi)
{
    const uint64_t first = (lo + 15) / 16, end = (hi + 15) / 16; /* blocks [first, end) */
    if (first >= end)
        return 0;
    const uint64_t whole = size / 16 < end ? size / 16 : end; /* blocks with 16 bytes */
    uint64_t s = whole > first ? blocks(data + 16 * first, (size_t)(whole - first), first) : 0;
    if (whole < end) /* the file's last, partial block */
        s += padded(data + 16 * whole, (size_t)(size - 16 * whole), whole);
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
    size_t have = (size_t)(s->len % 16);
    s->len += n;
    if (have > 0) { /* complete the block begun */
        const size_t take = n < 16 - have ? n : 16 - have;
        memcpy(s->carry + have, p, take);
        p += take;
        n -= take;
        have += take;
        if (have < 16)
            return;
        s->sum += blocks(s->carry, 1, (s->len - n) / 16 - 1);
    }
    const size_t whole = n / 16;
    s->sum += blocks(p, whole, (s->len - n) / 16);
    memcpy(s->carry, p + 16 * whole, n - 16 * whole);
}

uint64_t rfi_bytesum_value(const struct rfi_bytesum *s)
{
    const size_t have = (size_t)(s->len % 16);
    const uint64_t sum = s->sum + (have ? padded(s->carry, have, s->len / 16) : 0);
    return rfi_bytesum_finish(sum, s->len);
}

/* bytesum.h -- a hash of a file's bytes that can be taken in pieces, in any
 * order and on any thread, or as a stream, with one result.
 *
 * The bytes are cut into 8-byte words at offsets 8i from the start of the
 * file (the last one padded with zeros); word w_i contributes
 * w_i + lo(x_i) * hi(x_i), x_i = w_i ^ (K0 + i K1), the product of the
 * 32-bit halves of the word against a key that moves with i (the
 * accumulation of XXH3, Yann Collet, https://github.com/Cyan4973/xxHash,
 * which vector units do two or four words at a time), and the
 * contributions are added (mod 2^64); the length is folded in at the end
 * through XXH64's avalanche.  The sum of the words that start in [lo, hi)
 * can so be taken by whoever reads those bytes anyway -- the threads that
 * count a mapped file's records, the walk of the streaming engines while a
 * chunk is in the cache -- and the pieces added up.  It finds accidents (a
 * file rewritten while a run read it), not an adversary, who may change the
 * file at will anyway; the sum is kept within one run only. */
#ifndef RF_RECORDS_BYTESUM_H
#define RF_RECORDS_BYTESUM_H

#include <stddef.h>
#include <stdint.h>

/* The sum of the words of data[0, size) that start in [lo, hi)
 * (lo <= hi <= size); before the length is folded in. */
uint64_t rfi_bytesum_range(const unsigned char *data, uint64_t size, uint64_t lo, uint64_t hi);

/* The hash of `len` bytes whose words sum to `sum`. */
uint64_t rfi_bytesum_finish(uint64_t sum, uint64_t len);

/* The same hash of bytes fed in order, in pieces of any length. */
struct rfi_bytesum {
    uint64_t sum;
    uint64_t len;           /* bytes fed */
    unsigned char carry[8]; /* the word begun, len % 8 bytes of it */
};

void rfi_bytesum_init(struct rfi_bytesum *s);
void rfi_bytesum_feed(struct rfi_bytesum *s, const unsigned char *p, size_t n);
/* The hash of the bytes fed so far (s is left as it is). */
uint64_t rfi_bytesum_value(const struct rfi_bytesum *s);

/* The variants: the sum of the nw whole words at p, words i0, i0 + 1, ...
 * of the file.  The portable reference, and SSE2 (the x86-64 baseline, two
 * words a vector) where it is built; tests hold them to one result. */
#define RFI_BYTESUM_K0 0xa0761d6478bd642full
#define RFI_BYTESUM_K1 0xe7037ed1a0b428dbull
uint64_t rfi_bytesum_words_ref(const unsigned char *p, size_t nw, uint64_t i0);
#if defined(__SSE2__)
#define RFI_HAVE_BYTESUM_SSE2 1
uint64_t rfi_bytesum_words_sse2(const unsigned char *p, size_t nw, uint64_t i0);
#endif

#endif

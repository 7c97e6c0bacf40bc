/* bytesum.h -- a hash of a file's bytes that can be taken in pieces, in any
 * order and on any thread, or as a stream, with one result.
 *
 * The bytes are cut into 16-byte blocks at offsets 16j from the start of
 * the file (the last one padded with zeros); block j contributes
 * mix(w0 ^ a_j, w1 ^ b_j), its two little-endian words against keys that
 * move with j, and the contributions are added (mod 2^64); the length is
 * folded in at the end.  The sum of the blocks that start in [lo, hi) can
 * so be taken by whoever reads those bytes anyway -- the threads that count
 * a mapped file's records, the walk of the streaming engines while a chunk
 * is in the cache -- and the pieces added up.  mix is the folded 64x64->128
 * bit product of wyhash and mum-hash (Wang Yi, https://github.com/wangyi-fudan/wyhash;
 * Vladimir Makarov, https://github.com/vnmakarov/mum-hash): one multiply per
 * 16 bytes.  It finds accidents (a file rewritten while a run read it), not
 * an adversary, who may change the file at will anyway; the sum is kept
 * within one run only. */
#ifndef RF_RECORDS_BYTESUM_H
#define RF_RECORDS_BYTESUM_H

#include <stddef.h>
#include <stdint.h>

/* The sum of the blocks of data[0, size) that start in [lo, hi)
 * (lo <= hi <= size); before the length is folded in. */
uint64_t rfi_bytesum_range(const unsigned char *data, uint64_t size, uint64_t lo, uint64_t hi);

/* The hash of `len` bytes whose blocks sum to `sum`. */
uint64_t rfi_bytesum_finish(uint64_t sum, uint64_t len);

/* The same hash of bytes fed in order, in pieces of any length. */
struct rfi_bytesum {
    uint64_t sum;
    uint64_t len;           /* bytes fed */
    unsigned char carry[16]; /* the block begun, len % 16 bytes of it */
};

void rfi_bytesum_init(struct rfi_bytesum *s);
void rfi_bytesum_feed(struct rfi_bytesum *s, const unsigned char *p, size_t n);
/* The hash of the bytes fed so far (s is left as it is). */
uint64_t rfi_bytesum_value(const struct rfi_bytesum *s);

#endif

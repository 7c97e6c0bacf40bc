/* test_bytes.h -- what the engine tests build their inputs and outputs with:
 * a growing byte buffer and a small, fast generator of test data.  A failed
 * allocation fails the running cmocka test. */
#ifndef RF_TEST_BYTES_H
#define RF_TEST_BYTES_H

#include <stddef.h>
#include <stdint.h>

typedef struct buf {
    unsigned char *p;
    size_t len, cap;
} buf;

/* Append p[0..n) to b (b = {0} is an empty buffer). */
void buf_put(buf *b, const void *p, size_t n);
/* Free b's bytes; b is empty again. */
void buf_free(buf *b);

/* The next number of SplitMix64 (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014; the constants of Vigna's
 * splitmix64.c) from the state *s: test data only, not riffle's randomness. */
uint64_t mix_next(uint64_t *s);

#endif

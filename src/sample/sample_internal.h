/* Internal: the two representations behind rf_sample, exported to the tests
 * so that both are enumerated exactly whatever rf_sample would pick. */
#ifndef RF_SAMPLE_INTERNAL_H
#define RF_SAMPLE_INTERNAL_H

#include "riffle.h"

/* a = n words of scratch. */
void rfi_sample_dense(rf_rng *g, uint64_t n, size_t k, uint64_t *out, uint64_t *a);
/* mem = cap * 2 words, cap = rfi_map_capacity(k, 2). */
void rfi_sample_sparse(rf_rng *g, uint64_t n, size_t k, uint64_t *out, void *mem,
                       size_t cap);

#endif

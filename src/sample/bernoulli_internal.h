/* Internal: the geometric skip of rf_bernoulli, exported to the tests so
 * that its law can be counted exactly over every 53-bit uniform. */
#ifndef RF_BERNOULLI_INTERNAL_H
#define RF_BERNOULLI_INTERNAL_H

#include <stdint.h>

/* floor(log(u) / log1m) for u in (0, 1], log1m = log(1 - r) < 0 (-inf: 0),
 * saturated at UINT64_MAX. */
uint64_t rfi_geometric_skip(double u, double log1m);

#endif

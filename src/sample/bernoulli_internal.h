/* Internal: the geometric skip of rf_bernoulli and a stream whose draws a
 * test scripts, exported so that the skip's law can be counted over every
 * 53-bit uniform and the ladder's walk enumerated over every class of
 * draws. */
#ifndef RF_BERNOULLI_INTERNAL_H
#define RF_BERNOULLI_INTERNAL_H

#include <stdint.h>

#include "riffle_sample.h"

/* floor(log(u) / log1m) for u in (0, 1], log1m = log(1 - r) < 0 (-inf: 0),
 * saturated at UINT64_MAX. */
uint64_t rfi_geometric_skip(double u, double log1m);

/* What a draw is for: a skip (its word w gives the uniform 1 - (w >> 11)
 * 2^-53) or a unit value inside the level's band. */
enum { RFI_DRAW_SKIP = 0, RFI_DRAW_VALUE = 1 };
/* The word of the next draw of level m: a skip from record `at`, or the
 * value of the member record `at`; log1m is the level's log(1 - r), from
 * which the skip will be computed. */
typedef uint64_t (*rfi_bernoulli_draw_fn)(void *ctx, int kind, unsigned m, uint64_t at,
                                          double log1m);

/* rf_bernoulli_new with a ladder of levels 0 .. top (1 <= top <= 62; the
 * library's is 62) whose draws come from script, not from a key.  NULL with
 * *status RF_EINVAL (p or top) or RF_ENOMEM.  Free with rf_bernoulli_free. */
rf_bernoulli *rfi_bernoulli_new_scripted(double p, unsigned top, rfi_bernoulli_draw_fn script,
                                         void *ctx, rf_status *status);

#endif

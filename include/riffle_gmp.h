/*
 * riffle_gmp.h -- permutation ranks as GMP integers.
 *
 * The arbitrary-n rank/unrank of riffle_perm.h with mpz_t ranks instead of
 * decimal strings, for callers that already use GMP (link with -lgmp; the
 * library itself always does).  Definitions, errors and costs are those of
 * the "Permutation numbers" section of riffle_perm.h.
 */
#ifndef RIFFLE_GMP_H
#define RIFFLE_GMP_H

#include <gmp.h>

#include "riffle_perm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rank of perm[0..n) into `rank` (an initialised mpz_t, overwritten; on error
 * its value is unspecified).  RF_EINVAL for an invalid permutation, with
 * *where as in riffle_perm.h.  scratch: rf_rank_scratch_size(n) bytes aligned
 * for size_t, or NULL to allocate (RF_ENOMEM). */
RF_API RF_NODISCARD rf_status rf_rank_mpz(mpz_t rank, const size_t *perm, size_t n,
                                          size_t *where, void *scratch,
                                          size_t scratch_size);

/* The permutation of 0..n-1 of rank `rank` into perm[0..n).  RF_ERANGE if rank
 * < 0 or rank >= n!.  Scratch as rf_rank_mpz. */
RF_API RF_NODISCARD rf_status rf_unrank_mpz(const mpz_t rank, size_t n, size_t *perm,
                                            void *scratch, size_t scratch_size);

#ifdef __cplusplus
}
#endif

#endif /* RIFFLE_GMP_H */

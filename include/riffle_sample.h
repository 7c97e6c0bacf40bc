/*
 * riffle_sample.h -- selections by key, by group and by probability.
 *
 * Three selections that a front end makes while it streams records, each a
 * pure function of a 32-byte key (a seed's, riffle.h rf_seed_*) and what it
 * is told, so that a seed fixes the result:
 *
 *   rf_keyhash      a key's bytes (a field of a record: a user, a session) to
 *                   a 64-bit unit value u, read as u / 2^64 in [0, 1): the
 *                   same bytes always give the same u, whatever else the
 *                   input holds -- so a key keeps its split part, or its place
 *                   in a sample of keys, when rows are added;
 *   rf_bernoulli    the records numbered i with u_i < P, for a unit value u_i
 *                   of (key, i), found in one streaming pass with geometric
 *                   skips -- and the selection for a larger P contains the
 *                   one for a smaller P;
 *   rf_groups       one reservoir of k slots per group (Li's Algorithm L,
 *                   riffle_perm.h), each driven by randomness of (key, group,
 *                   the group's item number), so a group's sample does not
 *                   depend on the other groups' records.
 *
 * Everything follows riffle.h: caller-owned objects, *_new allocates and
 * *_free(NULL) is a no-op, fallible functions return an rf_status, nothing
 * prints or aborts.  An object is used by one thread at a time; distinct
 * objects need no locking.
 *
 * Stream contract: for a given key, every result here is fixed across
 * versions and machines (rf_bernoulli's skips use libm's log and log1p on
 * IEEE-754 binary64, as riffle_perm.h's Algorithm L does).
 */
#ifndef RIFFLE_SAMPLE_H
#define RIFFLE_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "riffle.h"
#include "riffle_perm.h" /* RF_RESERVOIR_DISCARD */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Unit values of keys                                                      */
/* ------------------------------------------------------------------------ */

/* The hash key of a selection: 16 bytes, derived from a 32-byte key by
 * BLAKE2b (libsodium crypto_generichash) of a domain prefix and the key.
 * Fields are private. */
typedef struct rf_keyhash {
    uint8_t k[16];
} rf_keyhash;

/* Derive h from key.  Returns RF_OK, or RF_ECRYPTO if libsodium cannot
 * start.  Does not allocate. */
RF_API RF_NODISCARD rf_status rf_keyhash_init(rf_keyhash *h, const uint8_t key[RF_KEY_BYTES]);

/* The unit value of bytes[0..len) (len may be 0): SipHash-2-4 (libsodium
 * crypto_shorthash_siphash24; Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", INDOCRYPT 2012) under h's key, read little-endian.  As a
 * PRF, the values of distinct byte strings behave as independent uniform
 * 64-bit words to anyone without the key. */
RF_API uint64_t rf_keyhash_unit(const rf_keyhash *h, const void *bytes, size_t len);

/* The threshold of a probability: the unit values u with u < *t are those
 * selected with probability p (*t = p * 2^64, rounded down), and with p = 1
 * every value is (*all = 1).  RF_EINVAL unless 0 <= p <= 1 (NaN included). */
RF_API RF_NODISCARD rf_status rf_unit_threshold(double p, uint64_t *t, int *all);

/* ------------------------------------------------------------------------ */
/* Bernoulli sampling with geometric skips                                  */
/* ------------------------------------------------------------------------ */

/* Record i (from 0) gets a unit value u_i, a function of (key, i) only, and
 * is selected when u_i < P (rf_unit_threshold): each record independently
 * with probability P, and a larger P selects a superset.  The values are
 * never drawn record by record.  They come from a ladder of nested sets
 * T_0 = every record, T_1, ..., T_62, T_m = { i : u_i < 2^-m }:
 *   - T_62 is a Bernoulli(2^-62) set drawn by geometric skips;
 *   - T_m for m < 62 is T_{m+1} plus, in each gap between consecutive
 *     members of T_{m+1}, the records chosen by geometric skips with
 *     probability r_m = 2^-(m+1) / (1 - 2^-(m+1)), so that each record is in
 *     T_m with probability 2^-(m+1) + (1 - 2^-(m+1)) r_m = 2^-m, independently;
 *   - a record first added at level m < 62 has u_i = 2^-(m+1) (1 + v), at
 *     level 62 u_i = 2^-62 v, v a further uniform draw of that gap.
 * Draw j of the gap of level m that starts at record s is SipHash-2-4 of
 * (s, j) (two little-endian 64-bit words) under a key of (key, m) (BLAKE2b),
 * so every u_i depends on the key and i only.  To select with P in (2^-(m+1), 2^-m], the stream walks
 * T_m (at most twice the selection, expected) and the levels above it
 * (their sizes halve), and keeps the members with u_i < P: O(1) expected
 * work per selected record, none per record passed over.  Each skip is
 * floor(log U / log(1 - r)) for a uniform double U in (0, 1] (Devroye,
 * "Non-Uniform Random Variate Generation", 1986, X.2): exact up to the
 * rounding of doubles.
 *
 * Allocates (about 3 KiB): rf_bernoulli_new, rf_bernoulli_free. */
typedef struct rf_bernoulli rf_bernoulli;

/* Past the last record: no record is ever numbered so. */
#define RF_BERNOULLI_END UINT64_MAX

/* A stream selecting with probability p from key.  NULL with *status
 * RF_EINVAL (p not in [0, 1], or NaN), RF_ENOMEM, or RF_ECRYPTO. */
RF_API rf_bernoulli *rf_bernoulli_new(const uint8_t key[RF_KEY_BYTES], double p,
                                      rf_status *status);
RF_API void rf_bernoulli_free(rf_bernoulli *b);

/* The number of the next selected record (increasing from call to call), or
 * RF_BERNOULLI_END when none is left below 2^64 - 1 (at once for p = 0). */
RF_API uint64_t rf_bernoulli_next(rf_bernoulli *b);

/* The unit value u_i of the record rf_bernoulli_next returned last (for
 * tests and for callers that keep it as a tag). */
RF_API uint64_t rf_bernoulli_unit(const rf_bernoulli *b);

/* ------------------------------------------------------------------------ */
/* A reservoir per group                                                    */
/* ------------------------------------------------------------------------ */

/* Groups are byte strings (a record's group field).  Each group met gets an
 * index, 0, 1, ... in order of its first offer, and a reservoir of k slots:
 * after the stream, its slots hold a uniformly random min(k, n_g)-subset of
 * the group's n_g items (Li's Algorithm L).  The draws of the group's item
 * number j come from xoshiro256++ seeded by ChaCha20 under a key derived
 * from the key, stream SipHash(group, j) (riffle.h rf_rng_init), so a
 * group's selection depends on the key, the group's bytes and its own items
 * only.  Memory: the groups' bytes and about 64 bytes per group; the caller
 * holds the k items per group.  Allocates. */
typedef struct rf_groups rf_groups;

/* RF_EINVAL for k == 0; NULL with *status RF_ENOMEM or RF_ECRYPTO. */
RF_API rf_groups *rf_groups_new(const uint8_t key[RF_KEY_BYTES], size_t k, rf_status *status);
RF_API void rf_groups_free(rf_groups *gs);

/* Offer the next item of group bytes[0..len): *group is its group's index,
 * *slot the slot of that group's reservoir it must be stored in (replacing
 * what is there), or RF_RESERVOIR_DISCARD (riffle_perm.h).  Returns RF_OK,
 * RF_ENOMEM (a new group could not be added: nothing changed), RF_ECRYPTO. */
RF_API RF_NODISCARD rf_status rf_groups_offer(rf_groups *gs, const void *bytes, size_t len,
                                              size_t *group, size_t *slot);

/* The groups met so far. */
RF_API size_t rf_groups_count(const rf_groups *gs);

#ifdef __cplusplus
}
#endif

#endif

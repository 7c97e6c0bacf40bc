/*
 * riffle_perm.h -- huge ranges, sampling and permutation numbers.
 *
 * This header is the manual for the parts of libriffle that permute or sample
 * without materialising the whole input:
 *
 *   rf_perm         a keyed bijection on [0, N) for any 1 <= N <= 2^64, with p(i)
 *                   and its inverse in O(1) memory (scan-order randomisation,
 *                   "riffle -i LO-HI" for ranges too large to hold);
 *   rf_sample       k of n without replacement, in uniformly random order, O(k);
 *   rf_sample_subset  a uniform k-subset, sorted, O(k) (Floyd);
 *   rf_seqsample    k of n in increasing order with O(1) memory (Vitter's D);
 *   rf_reservoir    k items of a stream of unknown length (Li's Algorithm L);
 *   rf_wsample      weighted sampling without replacement (Efraimidis-Spirakis
 *                   A-ExpJ);
 *   rf_rank_*       lexicographic rank and unrank of permutations (Lehmer code);
 *                   arbitrary n through decimal strings here, or GMP integers
 *                   through riffle_gmp.h.
 *
 * Everything follows riffle.h: caller-owned objects, *_init never allocates,
 * *_new allocates and *_free(NULL) is a no-op, fallible functions return an
 * rf_status, nothing prints or aborts.  Thread rules are riffle.h's; in addition
 * an initialised rf_perm is read-only, so one rf_perm may be evaluated by many
 * threads at once.
 *
 * Randomness comes only from rf_below, rf_range and rf_double (riffle.h), so an
 * rf_source with a `below` callback scripts every bounded draw.  The integer
 * algorithms (rf_sample, rf_sample_subset, the rf_perm table) are exactly
 * uniform, and riffle's tests check so by exact enumeration.  Three
 * algorithms are inherently real-valued -- Vitter's Algorithm D, Li's
 * Algorithm L and A-ExpJ compute skip lengths and keys from logarithms of
 * uniform doubles -- so they are exact only up to the rounding of IEEE
 * doubles with 53-bit uniforms; they are tested statistically with fixed
 * seeds.
 *
 * Stream contract: as in riffle.h, for a given key or generator state the
 * results of every function here are fixed across versions, machines and
 * compilers (the floating-point ones assume IEEE-754 binary64 with
 * round-to-nearest and a correctly behaved libm log/exp/log1p; the pinned tests
 * would catch a platform that differs).
 */
#ifndef RIFFLE_PERM_H
#define RIFFLE_PERM_H

#include "riffle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Random-access permutations                                               */
/* ------------------------------------------------------------------------ */

/*
 * An rf_perm is a bijection p on [0, N) chosen by a 32-byte key (RF_KEY_BYTES,
 * made as for the generators: rf_seed_u64, rf_seed_string, rf_seed_os).  The
 * domain size is given as max = N - 1 so that N = 2^64 (max = UINT64_MAX) is
 * expressible; max = 0 is the one-element domain.
 *
 * Modes:
 *
 *   RF_PERM_TABLE: exact.  The table t[0..N) is 0, 1, ..., N-1 shuffled by
 *     rf_shuffle with the generator rf_rng_init(RF_RNG_CHACHA20, key, stream 0),
 *     and p(i) = t[i].  So p is a uniformly random permutation of [0, N) given
 *     a uniform key (up to the 2^256 keys: see below), and p(i) is exactly the
 *     i-th item that rf_shuffle with that generator gives for the range: a
 *     table permutation agrees with shuffling 0..N-1 itself.  Needs 8 bytes
 *     per element (forward and inverse tables, uint32): N <= 2^32.
 *
 *   RF_PERM_SIPHASH: a Feistel network on exactly b = bit_width(N - 1) bits,
 *     with cycle walking into [0, N) (Black & Rogaway, "Ciphers with Arbitrary
 *     Finite Domains", CT-RSA 2002): y = E(x); while (y >= N) y = E(y).  The
 *     walk stays in [0, N) and terminates because E permutes [0, 2^b) and
 *     2^(b-1) < N, so fewer than 2 steps are expected.  The network is the
 *     alternating unbalanced Feistel of NIST SP 800-38G (FF1) on bit strings:
 *     x = A || B with A the high u = floor(b/2) bits and B the low v = b - u
 *     bits; round r (r = 0 .. 7) replaces (A, B) by (B, A xor F_r(B) mod 2^m)
 *     with m = u in even rounds and m = v in odd rounds, 8 rounds (the round
 *     count of FF3-1).  F_r is the SipHash-1-3 core (Aumasson & Bernstein
 *     2012) on the single 64-bit block B under the 128-bit round key K_r: the
 *     state initialised from K_r, one compression round on B, the 0xff
 *     finalisation and three finalisation rounds (no length block: the input
 *     length is fixed, so none is needed).  SipHash is a PRF designed for
 *     exactly this -- short inputs under a secret 128-bit key -- and a Feistel
 *     network of PRF rounds is a pseudo-random permutation (Luby & Rackoff
 *     1988; Patarin 2003 for more rounds and better bounds).  SipHash-1-3 is
 *     the reduced-round variant (the one Rust's and CPython's hash tables
 *     use); the designers' conservative choice is SipHash-2-4.  No practical
 *     attack on either as a PRF is known, but 1-3 has the smaller margin.
 *     Speed: the 8 rounds of one evaluation are 8 dependent SipHash calls,
 *     so a single rf_perm_at is latency-bound; rf_perm_at_range evaluates
 *     independent indices side by side in vector lanes -- AVX-512F (16
 *     lanes) or AVX2 (8 lanes), chosen at run time on x86-64, else 4
 *     interleaved scalar lanes -- and is several times cheaper per index
 *     (figures: riffle's documentation, BENCHMARKS_PERM.md).  Every path
 *     computes the same function: results never depend on the CPU.
 *
 *   RF_PERM_MULTIPLY: the same network and cycle walking with 10 rounds of the
 *     cheaper round function F_r(B) = lo ^ hi, where hi:lo is the 128-bit
 *     product (B xor K_r[0]) * (K_r[1] | 1).  This is the multiply-and-fold
 *     mixing of Philox (Salmon et al., "Parallel random numbers: as easy as 1,
 *     2, 3", SC 2011, whose 10-round multiply Feistel passes TestU01 BigCrush)
 *     and wyhash.  Statistically strong, much cheaper than SIPHASH in
 *     rf_perm_at (BENCHMARKS_PERM.md has the figures), and NOT a cryptographic
 *     PRF: use it when nobody is trying to predict the order, SIPHASH when
 *     somebody might.
 *
 *   RF_PERM_AUTO: TABLE when N <= RF_PERM_TABLE_MAX, else SIPHASH.
 *
 * Round keys: K_r = BLAKE2b-128 keyed with `key`, of the 25-byte message
 *   "riffle/perm/v1\0" || mode byte (2 or 3) || le64(max) || round byte r
 * (15 + 1 + 8 + 1 = 25 bytes; crypto_generichash), so every domain size and
 * every mode gives an unrelated permutation.  K_r[0] and K_r[1] are the two
 * little-endian halves.
 *
 * The honest claim.  A keyed family has at most 2^256 members while [0, N)
 * has N! permutations (already more than 2^256 at N = 58), so no mode can
 * reach every permutation of a large domain; the TABLE mode is the exact
 * uniform shuffle of riffle.h driven by ChaCha20, the cipher modes are
 * pseudo-random permutations: with a uniformly random secret key, SIPHASH is
 * believed indistinguishable from a uniform permutation by any feasible test
 * that does not break SipHash or see a large part of the domain (the 4-round
 * Luby-Rackoff proof covers about 2^(b/4) queries on a b-bit domain, and more
 * rounds push the bound towards 2^(b/2), Patarin 2003); it is not exactly
 * uniform, and the multiply mode has no such claim at all.  Feistel
 * networks on very small domains are attackable (Durak & Vaudenay, CRYPTO
 * 2017, on FF3/FF1), which is why NIST SP 800-38G Rev. 1 requires domains of
 * at least one million points; RF_PERM_TABLE_MAX = 2^20 follows it, so AUTO
 * never uses a cipher below that size.  The structure also shows exactly: an
 * XOR-Feistel round that modifies m >= 2 bits is an even permutation (and the
 * half swaps cancel over an even number of rounds), so on N = 2^b (b >= 4)
 * every cipher permutation is even and half of the N!
 * permutations are unreachable (Even & Goldreich 1983) -- detectable only by
 * evaluating the whole domain, and shown by riffle's tests together with a
 * chi-square rejection of the cipher modes on N = 5, which the table passes.
 * A cipher mode may still be forced on any N >= 1 (the tests do, to check
 * the network exhaustively).
 *
 * The stream contract covers every mode: pinned known-answer vectors in
 * riffle's tests fix p for given keys.
 */

#define RF_PERM_TABLE_MAX ((uint64_t)1 << 20) /* AUTO uses a table for N <= this */
#define RF_PERM_MAX_ROUNDS 10

typedef enum rf_perm_mode {
    RF_PERM_AUTO = 0,    /* TABLE for small N, else SIPHASH (resolved at init) */
    RF_PERM_TABLE = 1,   /* exact Fisher-Yates table, 8 bytes per element */
    RF_PERM_SIPHASH = 2, /* Feistel, SipHash-1-3 rounds: strong, O(1) memory */
    RF_PERM_MULTIPLY = 3 /* Feistel, multiply-fold rounds: fast, O(1) memory */
} rf_perm_mode;

/* Fields are private. */
typedef struct rf_perm {
    uint64_t max;      /* N - 1 */
    rf_perm_mode mode; /* resolved: never RF_PERM_AUTO after init */
    unsigned rounds;
    unsigned hi_bits, lo_bits; /* u and v */
    uint64_t rk[RF_PERM_MAX_ROUNDS][2];
    uint32_t *fwd, *inv; /* TABLE mode */
    void *owned;         /* memory from rf_perm_new, else NULL */
} rf_perm;

/* Bytes of caller scratch that rf_perm_init needs for (max, mode): 8 * N for a
 * table (AUTO resolved as documented), 0 for the cipher modes.  SIZE_MAX when
 * a table is impossible (N > 2^32, or larger than the address space). */
RF_API size_t rf_perm_scratch_size(uint64_t max, rf_perm_mode mode);

/* Initialise p as the permutation of [0, max] chosen by key and mode.  A
 * table mode uses scratch[0..scratch_size) (at least rf_perm_scratch_size
 * bytes, aligned for uint32_t; it must outlive p) and costs O(N) time; the
 * cipher modes ignore scratch (may be NULL) and cost a few BLAKE2b calls.
 * Returns RF_EINVAL for an unknown mode or missing/short scratch, RF_ERANGE for
 * a table with N > 2^32, RF_ECRYPTO if libsodium cannot start.  Never
 * allocates. */
RF_API RF_NODISCARD rf_status rf_perm_init(rf_perm *p, const uint8_t key[RF_KEY_BYTES],
                                           uint64_t max, rf_perm_mode mode,
                                           void *scratch, size_t scratch_size);

/* rf_perm_init with memory allocated here (the struct, and the table if the
 * mode needs one).  Returns NULL on failure and sets *status (if non-NULL) to
 * the reason (RF_ENOMEM, or as rf_perm_init).  Free with rf_perm_free. */
RF_API rf_perm *rf_perm_new(const uint8_t key[RF_KEY_BYTES], uint64_t max,
                            rf_perm_mode mode, rf_status *status);

/* Wipe the round keys and table of p (sodium_memzero) and, if p came from
 * rf_perm_new, free it.  NULL is a no-op.  After rf_perm_init, calling this
 * only wipes (the caller owns the struct and scratch). */
RF_API void rf_perm_free(rf_perm *p);

/* p(i), for 0 <= i <= max (precondition).  O(1) memory; the cipher modes take
 * fewer than 2 network evaluations on average, and a walk is never longer
 * than the cycle of the network through i.  Thread-safe on a shared p. */
RF_API uint64_t rf_perm_at(const rf_perm *p, uint64_t i);

/* p^-1(y), for 0 <= y <= max (precondition): rf_perm_at(p, rf_perm_inverse(p,
 * y)) == y.  Same costs as rf_perm_at. */
RF_API uint64_t rf_perm_inverse(const rf_perm *p, uint64_t y);

/* out[j] = p(first + j) for j in [0, count); first + count - 1 <= max
 * (precondition).  The same values as rf_perm_at, evaluated several at a time
 * where that is faster: the streaming form for "riffle -i LO-HI".  For the
 * SipHash mode this is the fast path (vector lanes, see above; it pays once
 * count is a few dozen);
 * a lane whose value must cycle-walk again stays in its lane while the
 * others take new indices.  No allocation; thread-safe on a shared p. */
RF_API void rf_perm_at_range(const rf_perm *p, uint64_t first, size_t count,
                             uint64_t *out);

/* max (that is, N - 1) and the resolved mode of an initialised p. */
RF_API uint64_t rf_perm_max(const rf_perm *p);
RF_API rf_perm_mode rf_perm_get_mode(const rf_perm *p);

/* "auto", "table", "siphash", "multiply"; "unknown" otherwise. */
RF_API const char *rf_perm_mode_name(rf_perm_mode mode);
/* Parse one of those names; RF_EINVAL if unknown. */
RF_API RF_NODISCARD rf_status rf_perm_mode_parse(const char *name, rf_perm_mode *mode);

/* ------------------------------------------------------------------------ */
/* k of n without replacement                                               */
/* ------------------------------------------------------------------------ */

/* Bytes of scratch rf_sample needs for (n, k): O(k) (a hash map of at most k
 * entries, or an array of n words when n is at most a small multiple of k). */
RF_API size_t rf_sample_scratch_size(uint64_t n, size_t k);

/* Draw k distinct values of [0, n) into out[0..k), in uniformly random order:
 * each of the n!/(n-k)! k-permutations equally likely.  Fisher-Yates stopped
 * after k steps, on a virtual array:
 *     for t = 0 .. k-1:  j = t + rf_below(g, n - t);  swap(a[t], a[j]);
 *     out[t] = a[t]
 * where a[i] = i initially.  When n is huge, a[] is a sparse open-addressing
 * hash map holding only the displaced positions (at most one new entry per
 * step), so time and memory are O(k) for any n; when n is small the array is
 * materialised.  The output is the same either way (a function of the draws
 * only), and the draws are unbatched rf_below calls, so rf_sample(n, k) is the
 * head of rf_sample(n, k') for k <= k' from the same generator state.  (It is
 * not the head of rf_shuffle of the range, whose draws are batched: use
 * rf_shuffle_partial for that.)
 * scratch: at least rf_sample_scratch_size(n, k) bytes aligned for uint64_t,
 * or NULL to let the function allocate (and free) it.  k > n is RF_EINVAL;
 * k == 0 draws nothing.  RF_ENOMEM if scratch is NULL and allocation fails. */
RF_API RF_NODISCARD rf_status rf_sample(rf_rng *g, uint64_t n, size_t k, uint64_t *out,
                                        void *scratch, size_t scratch_size);

/* Bytes of scratch rf_sample_subset needs: a hash set of k values, O(k). */
RF_API size_t rf_sample_subset_scratch_size(size_t k);

/* A uniformly random k-subset of [0, n) (each of the C(n, k) equally likely)
 * into out[0..k) in increasing order, by Floyd's algorithm (Bentley & Floyd,
 * "A sample of brilliance", CACM 30(9), 1987):
 *     for j = n-k .. n-1:  t = rf_below(g, j + 1);
 *                          insert (t is in S) ? j : t  into S
 * then sorted.  Exactly k draws, O(k) memory, O(k log k) time, any n.  Scratch
 * and errors as rf_sample. */
RF_API RF_NODISCARD rf_status rf_sample_subset(rf_rng *g, uint64_t n, size_t k,
                                               uint64_t *out, void *scratch,
                                               size_t scratch_size);

/* ------------------------------------------------------------------------ */
/* Sequential sampling: k of n in increasing order, O(1) memory             */
/* ------------------------------------------------------------------------ */

/* Vitter's Algorithm D ("An efficient algorithm for sequential random
 * sampling", ACM TOMS 13(1), 1987): the selected indices come out in
 * increasing order, one per call, with O(1) memory and O(k) expected time and
 * draws whatever n is -- for selecting rows of a file in one pass.  While the
 * number still to select is at least 1/13 of the records left, Vitter's
 * Algorithm A (one uniform per selection, a short product loop) is used, as
 * the paper prescribes; the last selection is an exact rf_below draw.  Real
 * valued (doubles); exact up to rounding.  Fields are private. */
typedef struct rf_seqsample {
    uint64_t pos;     /* index of the next record not yet passed over */
    uint64_t left;    /* records from pos to n-1 */
    uint64_t want;    /* selections still to make */
    double vprime;    /* Vitter's V', valid when have_vprime */
    int have_vprime;
} rf_seqsample;

/* Select k of the n records 0..n-1.  RF_EINVAL if k > n.  No allocation, no
 * draw. */
RF_API RF_NODISCARD rf_status rf_seqsample_init(rf_seqsample *s, uint64_t n, uint64_t k);

/* The next selected index (greater than the previous one) in *index, RF_OK; or
 * RF_EEMPTY once all k have been given (nothing drawn).  The records skipped
 * since the previous selection are *index - previous - 1. */
RF_API RF_NODISCARD rf_status rf_seqsample_next(rf_seqsample *s, rf_rng *g,
                                                uint64_t *index);

/* Selections still to come. */
RF_API uint64_t rf_seqsample_remaining(const rf_seqsample *s);

/* ------------------------------------------------------------------------ */
/* Reservoir sampling                                                       */
/* ------------------------------------------------------------------------ */

/* Li's Algorithm L (K.-H. Li, "Reservoir-sampling algorithms of time
 * complexity O(n(1 + log(N/n)))", ACM TOMS 20(4), 1994): a uniform k-subset of
 * a stream of unknown length, with geometric skips, so only O(k(1 +
 * log(N/k))) draws are made for N items.  The reservoir holds k slots in
 * caller memory; this object only says what to do with each item:
 *
 *     rf_reservoir_init(&r, k);
 *     for each item:  s = rf_reservoir_offer(&r, g);
 *                     if (s != RF_RESERVOIR_DISCARD) slot[s] = item;
 *
 * or, to pass over unwanted items without examining them, ask
 * rf_reservoir_skip(&r), drop that many items, tell rf_reservoir_pass(&r,
 * count), and offer the next one.  After the stream, slots 0 .. size-1 hold a
 * uniformly random subset of min(k, N) items; their order in the slots is not
 * random (rf_shuffle them for a sample in random order).  Real valued: the
 * skips come from logarithms of doubles (exact up to rounding).  Fields are
 * private. */
#define RF_RESERVOIR_DISCARD SIZE_MAX

typedef struct rf_reservoir {
    size_t k;
    uint64_t seen; /* items offered or passed */
    uint64_t next; /* index of the next item to keep (after the fill) */
    double w;      /* Li's W */
} rf_reservoir;

/* A reservoir of k >= 1 slots (RF_EINVAL for k == 0).  No draw. */
RF_API RF_NODISCARD rf_status rf_reservoir_init(rf_reservoir *r, size_t k);

/* The item number rf_reservoir_seen(r) arrives: returns the slot it must be
 * stored in (overwriting the item there), or RF_RESERVOIR_DISCARD.  The first
 * k items go to slots 0..k-1 in order; later ones replace a uniform slot
 * (rf_below(k)) when their turn comes.  Draws only when an item is kept. */
RF_API size_t rf_reservoir_offer(rf_reservoir *r, rf_rng *g);

/* How many of the coming items will certainly be discarded (0 while filling):
 * the caller may drop them unseen and report them with rf_reservoir_pass.
 * Saturates at UINT64_MAX. */
RF_API uint64_t rf_reservoir_skip(const rf_reservoir *r);

/* Record that `count` items were dropped unseen; count <= rf_reservoir_skip(r)
 * (precondition). */
RF_API void rf_reservoir_pass(rf_reservoir *r, uint64_t count);

/* Items offered or passed so far, and slots filled (min(k, seen)). */
RF_API uint64_t rf_reservoir_seen(const rf_reservoir *r);
RF_API size_t rf_reservoir_size(const rf_reservoir *r);

/* ------------------------------------------------------------------------ */
/* Weighted sampling without replacement                                    */
/* ------------------------------------------------------------------------ */

/* Efraimidis & Spirakis, "Weighted random sampling with a reservoir", IPL
 * 97(5), 2006, algorithm A-ExpJ: item i with weight w_i > 0 gets the key
 * u_i^(1/w_i) (u_i uniform) and the k largest keys win; the exponential jumps
 * draw one uniform per replacement instead of one per item.  Keys are kept as
 * logarithms, log(u)/w, in a min-heap, each as a double with an exponent of
 * its own (weights are scaled by a power of two, which is exact), so that
 * every finite positive weight is drawn exactly as its ratios to the others
 * say, subnormal (below 2.2e-308) and huge (1e308) alike.  The result, in decreasing key order,
 * is distributed as k successive draws without replacement, each choosing
 * among the remaining items with probability proportional to weight.  Zero
 * weights are never chosen; negative, NaN and infinite weights are rejected
 * with RF_EINVAL.  Real valued (exact up to rounding).
 *
 * Streaming form: the caller keeps k item slots, as with rf_reservoir:
 *     rf_wsample_offer(&s, g, weight, &slot) -> store the item in slot, or
 *     discard it when slot == RF_RESERVOIR_DISCARD;
 * at the end rf_wsample_result gives the chosen slots in sample order.
 * Fields are private. */
typedef struct rf_wsample_entry {
    double key;  /* log of the Efraimidis-Spirakis key is key * 2^key_exp, <= 0 */
    int key_exp;
    size_t slot;
} rf_wsample_entry;

typedef struct rf_wsample {
    size_t k;
    size_t filled;          /* heap entries in use */
    rf_wsample_entry *heap; /* min-heap on key, k entries of caller memory */
    double jump;            /* weight still to pass before the next replacement: */
    int jump_exp;           /* jump * 2^jump_exp */
    int have_jump;
    int finished;           /* rf_wsample_result was called */
    void *owned;            /* from rf_wsample_new */
} rf_wsample;

/* Bytes of scratch for k slots (k * sizeof(rf_wsample_entry)); SIZE_MAX on
 * overflow. */
RF_API size_t rf_wsample_scratch_size(size_t k);

/* A weighted sampler of k >= 1 items using scratch (at least
 * rf_wsample_scratch_size(k) bytes, aligned for double).  RF_EINVAL for k == 0
 * or short scratch.  Never allocates. */
RF_API RF_NODISCARD rf_status rf_wsample_init(rf_wsample *s, size_t k, void *scratch,
                                              size_t scratch_size);
/* rf_wsample_init with allocated memory; NULL if out of memory or k == 0. */
RF_API rf_wsample *rf_wsample_new(size_t k);
/* Free a sampler from rf_wsample_new; NULL is a no-op. */
RF_API void rf_wsample_free(rf_wsample *s);

/* Offer the next item with `weight`.  RF_OK and *slot = the slot to store it
 * in (replacing the item there) or RF_RESERVOIR_DISCARD; RF_EINVAL (state
 * unchanged, nothing drawn, *slot = RF_RESERVOIR_DISCARD) if weight is
 * negative, NaN or infinite, or after rf_wsample_result.  Zero weights are
 * always discarded without a draw. */
RF_API RF_NODISCARD rf_status rf_wsample_offer(rf_wsample *s, rf_rng *g, double weight,
                                               size_t *slot);

/* Finish: write the chosen slots to slots[0..count) in sample order (largest
 * key first) and return count = min(k, number of positive-weight items).
 * The sampler accepts no more items afterwards. */
RF_API size_t rf_wsample_result(rf_wsample *s, size_t *slots);

/* Array form: choose k of the n items with weights w[0..n) into out[0..count)
 * (item indices, in sample order); *count = min(k, positive weights).
 * RF_EINVAL (nothing drawn) if any weight is negative, NaN or infinite, in
 * which case *count is the index of the first bad weight.  Allocates O(k)
 * (RF_ENOMEM). */
RF_API RF_NODISCARD rf_status rf_sample_weighted(rf_rng *g, const double *w, size_t n,
                                                 size_t k, size_t *out, size_t *count);

/* ------------------------------------------------------------------------ */
/* Permutation numbers                                                      */
/* ------------------------------------------------------------------------ */

/* The lexicographic rank of a permutation p of 0..n-1 is its position in the
 * sorted list of all n! permutations: the identity is 0 and the reversed
 * permutation n! - 1.  It is the Lehmer code read in the factorial number
 * system: rank = sum_i d_i (n-1-i)!, d_i = #{ j > i : p[j] < p[i] }.  Ranking
 * and unranking find the digits with a Fenwick tree of counts (O(n log n)
 * operations; P. M. Fenwick, Softw. Pract. Exper. 24(3), 1994).  The rank, a
 * number of log2(n!) ~ n log2(n/e) bits, is assembled from the digits by a
 * product tree -- segments of digits combined pairwise, V = V_left P_right +
 * V_right with P the product of a segment's radices -- and taken apart by the
 * matching remainder tree (quotients left, remainders right), with GMP's
 * subquadratic multiplication and division (D. J. Bernstein, "Fast
 * multiplication and its applications", MSRI Publ. 44, 2008).  So the cost is
 * O(M(n log n) log n) bit operations, M that of a multiplication, instead of
 * Horner's O(n^2 log n) (figures in docs/BENCHMARKS_PERM.md).  Unranking keeps
 * the tree of radix products while it divides: O(n log^2 n) bits of GMP
 * memory besides the scratch.
 *
 * Invalid permutations: a value >= n or a repeated value gives RF_EINVAL with
 * *where (if non-NULL) set to the first position at which the problem is seen
 * -- p[*where] >= n means out of range, otherwise p[*where] repeats an earlier
 * value.
 *
 * 64-bit fast path for n <= RF_RANK_U64_MAX_N (20! < 2^64 < 21!); any n
 * through decimal strings below, or mpz_t through riffle_gmp.h (52! needs 226
 * bits). */
#define RF_RANK_U64_MAX_N 20

/* n! for n <= 20; 0 for larger n. */
RF_API uint64_t rf_factorial_u64(unsigned n);

/* Rank of perm[0..n) into *rank; RF_ERANGE if n > 20, RF_EINVAL (see above)
 * for an invalid permutation.  No allocation. */
RF_API RF_NODISCARD rf_status rf_rank_u64(const size_t *perm, size_t n, uint64_t *rank,
                                          size_t *where);

/* The permutation of 0..n-1 of rank `rank` into perm[0..n); RF_ERANGE if n >
 * 20 or rank >= n!.  No allocation. */
RF_API RF_NODISCARD rf_status rf_unrank_u64(uint64_t rank, size_t n, size_t *perm);

/* Bytes of scratch the arbitrary-n functions need (a Fenwick tree of n
 * words); SIZE_MAX on overflow. */
RF_API size_t rf_rank_scratch_size(size_t n);

/* Bytes (terminating NUL included) enough for the decimal rank of any
 * permutation of n elements: an upper bound on the digits of n!. */
RF_API size_t rf_rank_string_size(size_t n);

/* Decimal rank (no sign, no leading zeros, "0" for the identity) of perm[0..n)
 * into buf[0..bufsize), NUL-terminated.  RF_EINVAL for an invalid permutation
 * (with *where) or bufsize < rf_rank_string_size(n) (nothing written).
 * scratch: rf_rank_scratch_size(n) bytes aligned for size_t, or NULL to
 * allocate (RF_ENOMEM). */
RF_API RF_NODISCARD rf_status rf_rank_string(const size_t *perm, size_t n, char *buf,
                                             size_t bufsize, size_t *where,
                                             void *scratch, size_t scratch_size);

/* The permutation of rank `rank` (a decimal string of digits only, leading
 * zeros allowed) into perm[0..n).  RF_EINVAL for an empty or non-decimal
 * string, RF_ERANGE if rank >= n!.  Scratch as rf_rank_string. */
RF_API RF_NODISCARD rf_status rf_unrank_string(const char *rank, size_t n, size_t *perm,
                                               void *scratch, size_t scratch_size);

#ifdef __cplusplus
}
#endif

#endif /* RIFFLE_PERM_H */

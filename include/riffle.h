/*
 * riffle.h -- fair, fast shuffling: the public interface of libriffle.
 *
 * This header is the manual.  Every public function's contract sits right above
 * it: preconditions, result, whether it allocates, thread notes.
 *
 * Layers (each uses only the ones above it):
 *   entropy  -> rng (ChaCha20, xoshiro256++, PCG64) -> uniform (unbiased bounded
 *   integers) -> permute (Fisher-Yates, partial shuffle, deck)
 *
 * Threads: every object here is caller-owned and has no hidden shared state.  One
 * object may be used by one thread at a time; distinct objects may be used from
 * distinct threads freely.  For parallel work give each thread its own generator,
 * derived with rf_rng_init(..., stream) from one seed (counter-based substreams).
 * The functions that take a thread count start POSIX threads and join them
 * before returning; those threads block every asynchronous signal (SIGINT,
 * SIGTERM, SIGPIPE, ...), so a program's handlers run on its own threads.
 *
 * fork(): a generator made by rf_rng_new_os() notices that it is running in a
 * child process and rekeys itself from the OS before producing another byte, so
 * parent and child never share output.  Any other generator is plain data: after
 * fork() parent and child hold equal copies and produce equal streams, as they
 * must for reproducible seeded runs.
 *
 * Stream contract: for a given generator kind, key and stream number, the words
 * produced by rf_rng_next64() and the results of every shuffle, partial shuffle,
 * deal and bounded draw below are fixed across versions, machines, compilers and
 * element sizes.  They are pinned by riffle's golden tests; changing them is a
 * major version.
 */
#ifndef RIFFLE_H
#define RIFFLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RF_VERSION_MAJOR 0
#define RF_VERSION_MINOR 1
#define RF_VERSION_PATCH 0
#define RF_VERSION_STRING "0.1.0"
/* One number for compile-time comparisons: 10000*major + 100*minor + patch. */
#define RF_VERSION_NUMBER \
    (RF_VERSION_MAJOR * 10000 + RF_VERSION_MINOR * 100 + RF_VERSION_PATCH)

#if defined(RF_BUILDING_LIBRARY) && defined(__GNUC__)
#define RF_API __attribute__((visibility("default")))
#else
#define RF_API
#endif

#if defined(__GNUC__)
#define RF_NODISCARD __attribute__((warn_unused_result))
#else
#define RF_NODISCARD
#endif

/* The version of the library actually linked, e.g. "0.1.0". */
RF_API const char *rf_version(void);
/* RF_VERSION_NUMBER of the library actually linked. */
RF_API unsigned rf_version_number(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* Every fallible function returns one of these.  The values are pinned. */
typedef enum rf_status {
    RF_OK = 0,
    RF_EINVAL = 1,   /* an argument is outside the function's contract */
    RF_ENOMEM = 2,   /* an allocation failed */
    RF_EENTROPY = 3, /* the operating system gave no randomness */
    RF_ECRYPTO = 4,  /* libsodium could not be initialised */
    RF_EEMPTY = 5,   /* not enough cards left in the deck */
    RF_ERANGE = 6,   /* a count or size does not fit the result type */
    RF_EIO = 7       /* an input, output or temporary file failed (riffle_engine.h) */
} rf_status;

/* A short English description of `status` ("not enough cards left", ...).
 * Never NULL; unknown values give "unknown error". */
RF_API const char *rf_strerror(rf_status status);

/* ------------------------------------------------------------------------ */
/* Entropy                                                                  */
/* ------------------------------------------------------------------------ */

/* Fill buf[0..len) with bytes from the operating system's secure generator
 * (getrandom(2); /dev/urandom where getrandom is missing).  Interrupted calls are
 * retried; short reads are completed.  Returns RF_EENTROPY when the OS cannot
 * deliver -- the buffer must then not be used.  Does not allocate. */
RF_API RF_NODISCARD rf_status rf_entropy(void *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Seeds                                                                    */
/* ------------------------------------------------------------------------ */

/* Every generator is keyed by 32 bytes.  These derive a key from other seeds with
 * BLAKE2b-256 (libsodium crypto_generichash), domain-separated so that integer
 * 42 and string "42" give different keys:
 *   rf_seed_u64:    key = BLAKE2b-256("riffle/seed/u64" || le64(seed))
 *   rf_seed_string: key = BLAKE2b-256("riffle/seed/str" || bytes[0..len))
 * The derivations are part of the stream contract. */
#define RF_KEY_BYTES 32
RF_API RF_NODISCARD rf_status rf_seed_u64(uint8_t key[RF_KEY_BYTES], uint64_t seed);
RF_API RF_NODISCARD rf_status rf_seed_string(uint8_t key[RF_KEY_BYTES],
                                             const void *bytes, size_t len);
/* The seed rule of every front end (the riffle program's --seed, the MPI
 * program, the Python package): a text of decimal digits only (at least one)
 * whose value is at most UINT64_MAX is the integer seed,
 * rf_seed_u64(key, value); any other text is the string seed,
 * rf_seed_string(key, text, strlen(text)).  So "007" is the integer 7,
 * "18446744073709551615" the integer 2^64-1, and "18446744073709551616",
 * "", "-1", "+7", " 7" and "x7" are strings.  The rule is part of the
 * stream contract, as the derivations are.  RF_EINVAL if text is NULL. */
RF_API RF_NODISCARD rf_status rf_seed_text(uint8_t key[RF_KEY_BYTES], const char *text);
/* key = 32 bytes of OS entropy (rf_entropy). */
RF_API RF_NODISCARD rf_status rf_seed_os(uint8_t key[RF_KEY_BYTES]);

/* ------------------------------------------------------------------------ */
/* Generators                                                               */
/* ------------------------------------------------------------------------ */

/* The concrete state structs are public so that they can live on the stack and
 * the per-word functions can be inlined (as in pcg-c).  Their fields are private:
 * use the functions, not the fields. */

/* ChaCha20 (Bernstein's original variant: 64-bit block counter in state words
 * 12-13, 64-bit nonce in words 14-15), computed by libsodium, whose vectorised
 * implementation is the fast one.  The nonce is riffle's stream number.  Words
 * are the keystream read 8 bytes at a time, little-endian. */
#define RF_CHACHA_BUFFER 512 /* keystream bytes buffered: 8 blocks, one AVX2 call */
typedef struct rf_chacha {
    uint8_t key[RF_KEY_BYTES];
    uint64_t stream;  /* nonce */
    uint64_t counter; /* next block to compute */
    size_t avail;     /* unread bytes at the end of buf */
    uint32_t flags;   /* valid / OS-keyed / fork-detection bits */
    int32_t pid;      /* owner process, where fork is detected by pid */
    uint8_t buf[RF_CHACHA_BUFFER];
} rf_chacha;

/* xoshiro256++ 1.0 (Blackman & Vigna, 2019): 256-bit state, period 2^256 - 1. */
typedef struct rf_xoshiro {
    uint64_t s[4];
} rf_xoshiro;

/* PCG64 in the XSL-RR 128/64 output variant (O'Neill 2014; pcg-c's pcg64,
 * numpy's PCG64): 128-bit LCG state and odd increment, kept as 64-bit halves. */
typedef struct rf_pcg64 {
    uint64_t state_hi, state_lo;
    uint64_t inc_hi, inc_lo;
} rf_pcg64;

/* A caller-provided source, for replaying recorded draws, enumerating every
 * draw sequence in exact fairness tests (as riffle's own tests do), or
 * plugging in another generator.  `next64` gives raw words (needed by
 * rf_rng_next64 and rf_double).  If `below` is non-NULL, every bounded draw of
 * every algorithm -- single or batched -- calls below(ctx, n) once, in
 * algorithm order, and must return a value in [0, n); if it is NULL, bounded
 * draws are made from next64 words exactly as for the built-in generators. */
typedef struct rf_source {
    uint64_t (*next64)(void *ctx);
    uint64_t (*below)(void *ctx, uint64_t n);
    void *ctx;
} rf_source;

typedef enum rf_rng_kind {
    RF_RNG_CHACHA20 = 0, /* secure default */
    RF_RNG_XOSHIRO256PP = 1,
    RF_RNG_PCG64 = 2,
    RF_RNG_SOURCE = 3 /* caller-provided rf_source */
} rf_rng_kind;

/* The polymorphic handle every algorithm takes: a tagged union, so it can live
 * on the stack and the algorithms can dispatch once per call, not per draw. */
typedef struct rf_rng {
    rf_rng_kind kind;
    union {
        rf_chacha chacha;
        rf_xoshiro xoshiro;
        rf_pcg64 pcg;
        rf_source source;
    } u;
} rf_rng;

/* Name of a kind ("chacha20", "xoshiro256++", "pcg64", "source"). */
RF_API const char *rf_rng_kind_name(rf_rng_kind kind);
/* Parse a kind name (also "chacha", "xoshiro", "pcg"); RF_EINVAL if unknown.
 * RF_RNG_SOURCE cannot be named. */
RF_API RF_NODISCARD rf_status rf_rng_kind_parse(const char *name, rf_rng_kind *kind);

/* Key a generator of `kind` with `key` for substream `stream`.  Distinct
 * (key, stream) pairs give independent streams; this is the counter-based
 * derivation the engines use: one generator per (seed, block number), never one
 * stream shared in scheduling order.
 *   ChaCha20:     key = key, nonce = stream, block counter = 0.
 *   xoshiro256++: state = first 32 bytes of ChaCha20(key, nonce = stream), as
 *                 four little-endian words (never all zero in practice; an
 *                 all-zero result is replaced by splitmix64(0) expansion).
 *   PCG64:        the same 32 ChaCha20 bytes as (initstate, initseq), two
 *                 little-endian 128-bit numbers, seeded as pcg64_srandom_r.
 * Returns RF_EINVAL for RF_RNG_SOURCE or an unknown kind, RF_ECRYPTO if libsodium
 * cannot start.  Does not allocate. */
RF_API RF_NODISCARD rf_status rf_rng_init(rf_rng *g, rf_rng_kind kind,
                                          const uint8_t key[RF_KEY_BYTES],
                                          uint64_t stream);
/* rf_rng_init with key rf_seed_u64(seed), stream 0. */
RF_API RF_NODISCARD rf_status rf_rng_seed_u64(rf_rng *g, rf_rng_kind kind, uint64_t seed);
/* rf_rng_init with key rf_seed_string(bytes, len), stream 0. */
RF_API RF_NODISCARD rf_status rf_rng_seed_string(rf_rng *g, rf_rng_kind kind,
                                                 const void *bytes, size_t len);
/* Wrap a caller-provided source (copied; src->ctx must outlive g).  RF_EINVAL if
 * src->next64 and src->below are both NULL. */
RF_API RF_NODISCARD rf_status rf_rng_from_source(rf_rng *g, const rf_source *src);

/* The secure default: a ChaCha20 generator keyed from the OS, held in memory
 * that the kernel wipes in a fork()ed child (madvise MADV_WIPEONFORK), so that a
 * child rekeys from the OS before its first draw instead of repeating the
 * parent's stream (the OpenBSD arc4random technique).  Where the kernel lacks
 * wipe-on-fork, the generator checks getpid() at every buffer refill instead, so
 * at most RF_CHACHA_BUFFER buffered bytes can repeat in a child.
 * Allocates; free with rf_rng_free.  On failure returns NULL and sets *status
 * (if status is non-NULL) to RF_ENOMEM, RF_EENTROPY or RF_ECRYPTO. */
RF_API rf_rng *rf_rng_new_os(rf_status *status);
/* Frees a generator from rf_rng_new_os (wiping its key).  NULL is a no-op. */
RF_API void rf_rng_free(rf_rng *g);

/* Type-specific initialisers, for known-answer tests and for callers who want
 * one concrete generator without the handle.  No allocation. */
RF_API RF_NODISCARD rf_status rf_chacha_init(rf_chacha *c, const uint8_t key[RF_KEY_BYTES],
                                             uint64_t stream);
/* Move to keystream block `block` (64 bytes each) of the current key/stream,
 * discarding buffered output: the next word starts at byte 64*block. */
RF_API void rf_chacha_seek(rf_chacha *c, uint64_t block);
/* Set the raw state; an all-zero state is invalid and replaced by the
 * splitmix64(0) expansion (as rf_rng_init documents). */
RF_API void rf_xoshiro_init(rf_xoshiro *x, const uint64_t state[4]);
/* pcg64_srandom_r(initstate, initseq) with 128-bit numbers given as halves. */
RF_API void rf_pcg64_init(rf_pcg64 *p, uint64_t initstate_hi, uint64_t initstate_lo,
                          uint64_t initseq_hi, uint64_t initseq_lo);

/* Refill the ChaCha20 buffer (out of line; called by rf_chacha_next64).
 * Private, exported only for the inline function below. */
RF_API void rf_chacha_refill(rf_chacha *c);

static inline uint64_t rf_load_le64_(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
           (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
           (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static inline uint64_t rf_chacha_next64(rf_chacha *c)
{
    if (c->avail < 8)
        rf_chacha_refill(c);
    uint64_t v = rf_load_le64_(c->buf + (RF_CHACHA_BUFFER - c->avail));
    c->avail -= 8;
    return v;
}

static inline uint64_t rf_rotl64_(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256++ as in the authors' reference xoshiro256plusplus.c. */
static inline uint64_t rf_xoshiro_next64(rf_xoshiro *x)
{
    uint64_t *s = x->s;
    const uint64_t result = rf_rotl64_(s[0] + s[3], 23) + s[0];
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rf_rotl64_(s[3], 45);
    return result;
}

/* PCG64 XSL-RR: advance the 128-bit LCG by the multiplier
 * 2549297995355413924 * 2^64 + 4865540595714422341, then output from the new
 * state (pcg-c's pcg_setseq_128_xsl_rr_64_random_r: step first at 128 bits). */
static inline uint64_t rf_pcg64_next64(rf_pcg64 *p)
{
    uint64_t hi = p->state_hi, lo = p->state_lo;
#if defined(__SIZEOF_INT128__)
    const unsigned __int128 mul = ((unsigned __int128)2549297995355413924ULL << 64) |
                                  4865540595714422341ULL;
    unsigned __int128 s = ((unsigned __int128)hi << 64) | lo;
    s = s * mul + (((unsigned __int128)p->inc_hi << 64) | p->inc_lo);
    hi = (uint64_t)(s >> 64);
    lo = (uint64_t)s;
#else
    /* 128-bit multiply-add from 32-bit pieces of the low 64x64 product. */
    const uint64_t mhi = 2549297995355413924ULL, mlo = 4865540595714422341ULL;
    const uint64_t a0 = lo & 0xffffffffu, a1 = lo >> 32;
    const uint64_t b0 = mlo & 0xffffffffu, b1 = mlo >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    const uint64_t nlo = ((mid << 32) | (p00 & 0xffffffffu)) + p->inc_lo;
    hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32) + hi * mlo + lo * mhi + p->inc_hi +
         (nlo < p->inc_lo);
    lo = nlo;
#endif
    p->state_hi = hi;
    p->state_lo = lo;
    const unsigned rot = (unsigned)(hi >> 58);
    const uint64_t xsl = hi ^ lo;
    return (xsl >> rot) | (xsl << ((64 - rot) & 63));
}

/* The next 64-bit word of any generator.  For RF_RNG_SOURCE, source.next64 must
 * be set (precondition). */
static inline uint64_t rf_rng_next64(rf_rng *g)
{
    /* Tested fastest generator first (a switch let gcc order it otherwise). */
    if (g->kind == RF_RNG_XOSHIRO256PP)
        return rf_xoshiro_next64(&g->u.xoshiro);
    if (g->kind == RF_RNG_PCG64)
        return rf_pcg64_next64(&g->u.pcg);
    if (g->kind == RF_RNG_SOURCE)
        return g->u.source.next64(g->u.source.ctx);
    return rf_chacha_next64(&g->u.chacha);
}

/* Fill buf[0..len) with generator output: whole words little-endian, the last
 * word truncated.  Does not allocate. */
RF_API void rf_rng_fill(rf_rng *g, void *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Unbiased integers and floats                                             */
/* ------------------------------------------------------------------------ */

/* High and low words of a 64x64-bit product (private helper). */
static inline uint64_t rf_mulhi64_(uint64_t a, uint64_t b, uint64_t *lo)
{
#if defined(__SIZEOF_INT128__)
    const unsigned __int128 p = (unsigned __int128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
#else
    const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
    const uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

/* rf_lemire64_batch_(next, ctx, bounds, k, out): the proven bounded-draw code
 * (riffle_lemire.h), instantiated for 64-bit words. */
#define LT_WORD uint64_t
#define LT_MULHI rf_mulhi64_
#define LT_NAME(x) rf_lemire64_##x##_
#include "riffle_lemire.h"
#undef LT_WORD
#undef LT_MULHI
#undef LT_NAME

static inline uint64_t rf_rng_word_(void *g)
{
    return rf_rng_next64((rf_rng *)g);
}

static inline uint64_t rf_xoshiro_word_(void *x)
{
    return rf_xoshiro_next64((rf_xoshiro *)x);
}
static inline uint64_t rf_pcg64_word_(void *p)
{
    return rf_pcg64_next64((rf_pcg64 *)p);
}
static inline uint64_t rf_chacha_word_(void *c)
{
    return rf_chacha_next64((rf_chacha *)c);
}

/* Typed bounded draws: rf_below on one concrete generator, without the
 * handle's dispatch -- for the hottest loops.  Same results as rf_below on an
 * rf_rng of that kind in the same state. */
static inline uint64_t rf_xoshiro_below(rf_xoshiro *x, uint64_t n)
{
    uint64_t r;
    rf_lemire64_batch_(rf_xoshiro_word_, x, &n, 1, &r);
    return r;
}
static inline uint64_t rf_pcg64_below(rf_pcg64 *p, uint64_t n)
{
    uint64_t r;
    rf_lemire64_batch_(rf_pcg64_word_, p, &n, 1, &r);
    return r;
}
static inline uint64_t rf_chacha_below(rf_chacha *c, uint64_t n)
{
    uint64_t r;
    rf_lemire64_batch_(rf_chacha_word_, c, &n, 1, &r);
    return r;
}

/* Uniform in [0, n), n >= 1 (precondition), exactly unbiased: Lemire's
 * nearly-divisionless rejection (ACM TOMACS 2019) on one 64-bit word per try.
 * Expected tries < 1 + n / 2^64.  Inline: a draw costs a word and a multiply. */
static inline uint64_t rf_below(rf_rng *g, uint64_t n)
{
    uint64_t r;
    if (g->kind == RF_RNG_SOURCE && g->u.source.below != NULL)
        return g->u.source.below(g->u.source.ctx, n);
    rf_lemire64_batch_(rf_rng_word_, g, &n, 1, &r);
    return r;
}

/* Uniform in [0, n), n >= 1, from 32-bit words (the high half of a 64-bit
 * word): the same method at half width.  A different stream from rf_below. */
RF_API uint32_t rf_below32(rf_rng *g, uint32_t n);

/* Uniform in [lo, hi] inclusive, lo <= hi; [0, UINT64_MAX] returns one raw
 * word. */
RF_API uint64_t rf_range(rf_rng *g, uint64_t lo, uint64_t hi);

/* Uniform double in [0, 1) with 53 random bits: (word >> 11) * 2^-53.  Every
 * multiple of 2^-53 in [0, 1) is equally likely. */
RF_API double rf_double(rf_rng *g);

/* Batched bounded draws (Brackett-Rozinsky & Lemire, "Batched Ranged Random
 * Integer Generation", SPE 2024): out[i] uniform in [0, bounds[i]), all k draws
 * jointly uniform and independent, from a single 64-bit word per try.
 * Preconditions: 1 <= k <= RF_BATCH_MAX, every bound >= 1, and the product of
 * the bounds <= 2^64 (else RF_ERANGE and nothing is drawn). */
#define RF_BATCH_MAX 8
RF_API RF_NODISCARD rf_status rf_below_batch(rf_rng *g, const uint64_t *bounds, size_t k,
                                             uint64_t *out);

/* ------------------------------------------------------------------------ */
/* Shuffles                                                                 */
/* ------------------------------------------------------------------------ */

/* The shuffle is Fisher-Yates in Durstenfeld's in-place form, front to back:
 *     for t = 0 .. n-2:  j = t + below(n - t);  swap(a[t], a[j])
 * so every one of the n! orderings is equally likely (checked by exact
 * enumeration of every draw sequence in riffle's tests).  The bounds n down to
 * 2 are drawn in batches of up to 6 per 64-bit word (Brackett-Rozinsky &
 * Lemire 2024), which is what makes it fast; the batch schedule is part of the
 * stream contract.  Because position t is final after step t, the first k
 * elements after rf_shuffle_partial(g, a, n, k, ...) are exactly those
 * rf_shuffle would have put there from the same generator state: "-n K" is the
 * head of the full shuffle.  The same draws are used for every element size and
 * for the callback form, so a seed gives the same permutation whatever is
 * shuffled. */

/* Shuffle n elements of `size` bytes at base.  Fast paths for 4- and 8-byte
 * elements; any other size works (size 0 or n < 2 is a no-op that draws
 * nothing).  Does not allocate; no error is possible.
 *
 * Which shuffle to call: rf_shuffle stays Fisher-Yates at every size, because
 * its permutation is pinned (and -n K = rf_shuffle_partial is its head) and
 * must not depend on whether memory could be had.  For arrays of any size
 * where speed matters more than that head property, call
 * rf_shuffle_parallel(g, a, n, size, 0, scratch): it chooses by size itself --
 * plain Fisher-Yates (rf_shuffle on a substream) up to 2^17 elements, the
 * cache-aware bucket method on every core beyond -- and is much faster than
 * rf_shuffle on arrays far beyond the caches, even on one thread (figures:
 * riffle's documentation, BENCHMARKS_BIG.md); its output is the same for
 * every thread count and machine. */
RF_API void rf_shuffle(rf_rng *g, void *base, size_t n, size_t size);
/* Typed forms (same permutation as rf_shuffle for the same generator state). */
RF_API void rf_shuffle_u32(rf_rng *g, uint32_t *a, size_t n);
RF_API void rf_shuffle_u64(rf_rng *g, uint64_t *a, size_t n);
RF_API void rf_shuffle_ptr(rf_rng *g, void **a, size_t n);

/* Shuffle data that is not one array: swap(ctx, i, j) exchanges items i and j
 * (called with i < j only).  The classic shuffle(array, n, swap) interface. */
typedef void (*rf_swap_fn)(void *ctx, size_t i, size_t j);
RF_API void rf_shuffle_swap(rf_rng *g, size_t n, rf_swap_fn swap, void *ctx);

/* Partial shuffle: afterwards base[0..k) is a uniform random k-permutation of the
 * n elements (each of the n!/(n-k)! equally likely) and base[k..n) holds the
 * rest in unspecified order.  O(k) time and draws: the lottery case, k unique
 * draws from a large pool.  k > n is treated as k = n. */
RF_API void rf_shuffle_partial(rf_rng *g, void *base, size_t n, size_t k, size_t size);

/* ------------------------------------------------------------------------ */
/* Large arrays                                                             */
/* ------------------------------------------------------------------------ */

/* Beyond the caches, Fisher-Yates waits on one cache miss per element.  The
 * bucket shuffle (Sanders, "Random permutation on parallel and external memory
 * machines", IPL 1998) avoids that: every element gets an independent uniform
 * bucket out of B, the elements are scattered into their buckets (input order
 * kept inside a bucket), and each bucket -- small enough for the L2 cache --
 * is copied back to its place and shuffled there with rf_shuffle.  Every one
 * of the n! orderings is exactly equally likely (the proof is in riffle's
 * documentation, proofs.md; riffle's tests check it by exact enumeration).
 * It is a different permutation from rf_shuffle's for the same generator
 * state.
 *
 * Output contract: the permutation is a function of the generator state and n
 * only -- not of the element size, the thread count, the machine or its cache
 * sizes.  B = 2^k with k the smallest integer >= 0 such that n <= 2^(17+k),
 * at most 2^12 = 4096 (buckets of at most 2^17 elements -- 1 MiB of 8-byte
 * elements, about half of a 2 MiB L2 -- up to n = 2^29).  The random numbers
 * (part of the stream contract, pinned by riffle's tests):
 *   - key = 32 bytes of rf_rng_fill(g): g advances by exactly 4 words;
 *   - the buckets of elements [b*2^16, (b+1)*2^16) (block b) come from the
 *     substream rf_rng_init(kind, key, stream = b): each 64-bit word gives
 *     floor(64/k) buckets as k-bit digits, most significant first (Lemire's
 *     multiply by 2^k, never rejected), one element after another;
 *   - bucket j is shuffled by rf_shuffle with the substream
 *     rf_rng_init(kind, key, stream = 2^63 + j).
 * With B = 1 (n <= 2^17) this is rf_shuffle with substream 2^63: no scratch.
 * A generator of kind RF_RNG_SOURCE has no key: every draw comes from g
 * itself, one rf_below(g, B) per element in input order, then the buckets'
 * rf_shuffle in bucket order (one thread; this path allocates 2n bytes).
 * n < 2 or size 0 is a no-op that draws nothing. */

/* Bytes of scratch rf_shuffle_bucket and rf_shuffle_parallel need for n
 * elements of `size` bytes: n * size plus bookkeeping (at most n/32 bytes +
 * 700 KiB; about 1 MB at n = 10^8); 0 when n <= 2^17 (none is used);
 * SIZE_MAX if that does not fit in size_t. */
RF_API size_t rf_shuffle_bucket_scratch_size(size_t n, size_t size);

/* Shuffle n elements of `size` bytes at base with the bucket shuffle on the
 * calling thread.  scratch: rf_shuffle_bucket_scratch_size(n, size) bytes that
 * do not overlap base, any alignment, contents ignored and left unspecified;
 * or NULL, and the library maps its own (with huge pages where the kernel
 * offers them) and unmaps it before returning -- convenient, but faulting in
 * fresh memory can cost more than the shuffle itself (BENCHMARKS_BIG.md):
 * reuse one buffer for repeated large shuffles.  Allocates nothing else,
 * except 2n bytes for an RF_RNG_SOURCE generator.  Returns RF_OK; RF_ENOMEM
 * if a needed allocation fails, RF_ERANGE if the scratch size overflows (both
 * before anything is drawn or moved); RF_ECRYPTO (base untouched) if
 * libsodium cannot start.
 * Same output as rf_shuffle_parallel with any thread count. */
RF_API RF_NODISCARD rf_status rf_shuffle_bucket(rf_rng *g, void *base, size_t n, size_t size,
                                                void *scratch);

/* The bucket shuffle on `threads` threads (POSIX threads; 0 = one per online
 * CPU; at most 64), with the calling thread as one of them.  The output is
 * exactly rf_shuffle_bucket's for the same generator state, whatever the
 * thread count.  Scratch as for rf_shuffle_bucket; besides, each thread after
 * the first allocates 144 bytes per bucket of bookkeeping, and if that or a
 * thread cannot be had, the calling thread does the work instead (same
 * output).  Returns as rf_shuffle_bucket.  The array, the scratch and g must
 * not be touched by other threads during the call. */
RF_API RF_NODISCARD rf_status rf_shuffle_parallel(rf_rng *g, void *base, size_t n, size_t size,
                                                  unsigned threads, void *scratch);

/* ------------------------------------------------------------------------ */
/* Keyed order                                                              */
/* ------------------------------------------------------------------------ */

/* The order the riffle program gives records: one definition that a single
 * in-memory sort, many threads, or an external sort over temporary bucket
 * files all compute exactly alike, because it depends on the keys alone and
 * never on how the work is split.
 *
 * Item i (i = 0, 1, 2, ... in input order) gets a 64-bit key k_i, and the
 * items are put in increasing key order.  Items with equal keys -- a tie,
 * rare: about n^2 / 2^65 pairs among n items -- are put in a uniformly random
 * order of their own.  The random numbers (part of the stream contract,
 * pinned by riffle's tests):
 *   - K = BLAKE2b-256("riffle/keyed/key" || key), T = BLAKE2b-256(
 *     "riffle/keyed/tie" || key), as rf_seed_string derives keys;
 *   - k_i = word (i mod 2^16) of rf_rng_init(kind, K, stream = i / 2^16):
 *     blocks of 2^16 items have their own substreams, so any block range can
 *     be keyed on any thread, in any order;
 *   - the items of a tie with key v, taken in input order, are shuffled by
 *     rf_shuffle with rf_rng_init(kind, T, stream = v).
 *
 * Every one of the n! orders is exactly equally likely (for ideal
 * generators).  Scattering items into 2^b buckets by the top b bits of their
 * keys (input order kept inside each bucket), ordering each bucket with
 * rf_keyed_sort and concatenating gives the same output for every b, so a
 * file larger than memory is shuffled to the same output as in memory.  The
 * first k items of the order are the k smallest keys.  Why all this holds:
 * riffle's documentation (keyed-order.md). */

/* An item to order: its key and the caller's value (an offset, an index). */
typedef struct rf_keyed {
    uint64_t key;
    uint64_t val;
} rf_keyed;

/* The derived keys of one keyed order.  Fields are private. */
typedef struct rf_keyed_order {
    rf_rng_kind kind;
    uint8_t item_key[RF_KEY_BYTES]; /* K */
    uint8_t tie_key[RF_KEY_BYTES];  /* T */
} rf_keyed_order;

/* Derive the order's keys from a generator kind (not RF_RNG_SOURCE) and a
 * 32-byte key (from rf_seed_u64, rf_seed_string, rf_seed_os...).  Returns
 * RF_OK, RF_EINVAL for a bad kind, RF_ECRYPTO if libsodium cannot start. */
RF_API RF_NODISCARD rf_status rf_keyed_order_init(rf_keyed_order *o, rf_rng_kind kind,
                                                  const uint8_t key[RF_KEY_BYTES]);

/* Keys of consecutive items, generated sequentially.  Fields are private. */
typedef struct rf_keyed_stream {
    rf_keyed_order order;
    uint64_t next; /* item whose key comes next */
    rf_rng g;      /* substream of block next / 2^16, positioned at next */
} rf_keyed_stream;

/* Start at item `first` (skipping into its block costs up to 2^16 words for
 * xoshiro256++ and PCG64, one seek for ChaCha20). */
RF_API RF_NODISCARD rf_status rf_keyed_stream_init(rf_keyed_stream *s,
                                                   const rf_keyed_order *o, uint64_t first);
/* Set a[j].key to the key of the next item, j = 0 .. count-1 (a[j].val is
 * untouched).  Returns RF_OK or RF_ECRYPTO. */
RF_API RF_NODISCARD rf_status rf_keyed_stream_fill(rf_keyed_stream *s, rf_keyed *a,
                                                   size_t count);
/* The key of the next item alone. */
RF_API uint64_t rf_keyed_stream_next(rf_keyed_stream *s);

/* Set a[j].key = k_(first + j) for j < count, on `threads` threads (0 = one
 * per online CPU; the result does not depend on it).  Returns RF_OK,
 * RF_ECRYPTO. */
RF_API RF_NODISCARD rf_status rf_keyed_fill(const rf_keyed_order *o, uint64_t first,
                                            rf_keyed *a, size_t count, unsigned threads);

/* The keys alone: out[j] = k_(first + j) for j < count, on the calling
 * thread.  Returns RF_OK, RF_ECRYPTO.  (As a keys function for
 * rf_keyed_index it is cheapest called on whole blocks of 2^16 items.) */
RF_API RF_NODISCARD rf_status rf_keyed_keys(const rf_keyed_order *o, uint64_t first,
                                            uint64_t *out, size_t count);

/* Put a[0..n) in the keyed order: sort by key, then shuffle every tie as
 * described above.  The vals must be distinct and, among items with equal
 * keys, increase in input order (record offsets and item numbers do): they
 * are how input order is known after an unstable sort.  In-place MSD radix
 * sort (American flag sort): O(n) for random keys, no allocation on one
 * thread; with threads != 1 (0 = one per online CPU) the buckets of the first
 * pass are sorted in parallel, same result.  Returns RF_OK, or RF_ECRYPTO
 * (then a is sorted but ties may be unshuffled). */
RF_API RF_NODISCARD rf_status rf_keyed_sort(const rf_keyed_order *o, rf_keyed *a, size_t n,
                                            unsigned threads);

/* The keyed order of m items as their numbers, idx[j] = the item in place j,
 * in 8 bytes per item -- for items whose keys can be produced again on
 * demand (the keyed stream itself, a file of keys), where rf_keyed_sort would
 * need 16 bytes per item and, in place on hundreds of megabytes, is slow.
 * keys(ctx, first, out, n) must write the keys of items first .. first+n-1
 * to out and return RF_OK (or any other status, which stops the work and is
 * returned); it is called from several threads at once, on disjoint ranges.
 * The keys are read twice (a histogram of their top bits, then a scatter
 * into those buckets; keyed-order.md describes the method).  The order is
 * exactly rf_keyed_sort's, for every thread count (0 = one per online CPU).
 * keys is asked for whole blocks of 2^16 items (first a multiple of 2^16)
 * except at the end.  Allocates about
 * 1.5 MiB per thread of tables besides idx.  Returns RF_OK, RF_ENOMEM,
 * RF_ECRYPTO, or the status of a failed keys call. */
typedef rf_status (*rf_keyed_keys_fn)(void *ctx, uint64_t first, uint64_t *out, size_t n);
RF_API RF_NODISCARD rf_status rf_keyed_index(const rf_keyed_order *o, uint64_t m,
                                             rf_keyed_keys_fn keys, void *ctx,
                                             unsigned threads, uint64_t *idx);

/* rf_keyed_index with the caller's values in place of item numbers:
 * out[j] = the value of the item in place j.  vals(ctx, first, out, n) must
 * write the values of items first .. first+n-1, the same on every call; they
 * must strictly increase with the item number and be at most vmax.  It is
 * called like keys (whole blocks of 2^16 items, several threads, disjoint
 * blocks), once per block in the scatter and again for the few blocks that
 * hold a near tie.  The point: records at increasing byte offsets in one
 * buffer get their offsets in the keyed order directly, in 8 bytes per record
 * in all -- no table of offsets beside the order, and no random lookup in one
 * afterwards.  Fewer key bits fit beside a wider value (vmax of 2^30 leaves
 * 34 + the bucket bits), so near ties are more frequent but stay rare.
 * Same order as rf_keyed_index for every thread count.
 * Returns as rf_keyed_index, RF_EINVAL for vals == NULL, or RF_EINVAL when a
 * block's values came out different the second time. */
typedef rf_status (*rf_keyed_vals_fn)(void *ctx, uint64_t first, uint64_t *out, size_t n);
RF_API RF_NODISCARD rf_status rf_keyed_index_vals(const rf_keyed_order *o, uint64_t m,
                                                  rf_keyed_keys_fn keys, rf_keyed_vals_fn vals,
                                                  void *ctx, uint64_t vmax, unsigned threads,
                                                  uint64_t *out);

/* ------------------------------------------------------------------------ */
/* Decks                                                                    */
/* ------------------------------------------------------------------------ */

/* A deck deals cards on demand: each deal draws one of the cards still in the
 * deck uniformly (j = dealt + below(remaining); the chosen card is swapped to
 * the front of the undealt part), so dealing costs O(1) per card and the dealt
 * order is a uniform random permutation.  Reset is O(1): every card goes back
 * and nothing moves, because uniformity does not depend on the order of the
 * undealt cards.  The items live in caller memory; a deck never allocates
 * unless made by rf_deck_new.  Fields are private. */
typedef struct rf_deck {
    unsigned char *items;
    size_t n;     /* cards in a full deck */
    size_t size;  /* bytes per card */
    size_t dealt; /* cards dealt since the last reset */
    int owned;    /* items allocated by rf_deck_new */
} rf_deck;

/* A deck of the cards 0, 1, ..., n-1 stored as size_t in cards[0..n), which
 * this fills.  Cards are dealt as size_t values. */
RF_API void rf_deck_init(rf_deck *d, size_t *cards, size_t n);
/* A deck whose cards are the n items of `size` bytes at items (used in place;
 * their order changes as cards are dealt).  size >= 1. */
RF_API void rf_deck_init_items(rf_deck *d, void *items, size_t n, size_t size);
/* Allocate a deck of the cards 0..n-1 (size_t).  NULL if out of memory. */
RF_API rf_deck *rf_deck_new(size_t n);
/* Free a deck from rf_deck_new; NULL is a no-op. */
RF_API void rf_deck_free(rf_deck *d);

/* Put every card back, in O(1). */
RF_API void rf_deck_reset(rf_deck *d);
/* Cards not yet dealt. */
RF_API size_t rf_deck_remaining(const rf_deck *d);
/* Deal one card, copying its `size` bytes to *card.  RF_EEMPTY (and nothing
 * drawn or copied) when the deck is empty. */
RF_API RF_NODISCARD rf_status rf_deck_deal(rf_deck *d, rf_rng *g, void *card);
/* Deal k cards into cards[0..k) in deal order.  All or nothing: RF_EEMPTY and
 * no draw if fewer than k remain. */
RF_API RF_NODISCARD rf_status rf_deck_deal_n(rf_deck *d, rf_rng *g, size_t k, void *cards);
/* The cards dealt since the last reset, in deal order (count in *count).  The
 * pointer is valid until the next reset or deal. */
RF_API const void *rf_deck_dealt(const rf_deck *d, size_t *count);

/* ------------------------------------------------------------------------ */
/* Shuffle bags                                                             */
/* ------------------------------------------------------------------------ */

/* A shuffle bag (the "random bag" of game design: a Tetris piece generator,
 * a loot table, a playlist): each item comes out exactly once per bag, in a
 * uniformly random order, and when the bag is empty it is refilled with every
 * item and reshuffled, independently of the bags before.  So no item waits
 * longer than 2n - 1 draws, and over whole bags every item is drawn equally
 * often.  Built on rf_deck: a bag is a deck dealt one card at a time and reset
 * when empty, so its draws are the deck's (one rf_below(remaining) per draw,
 * none for the last item of a bag) and a seed fixes them.  The items live in
 * caller memory; a bag never allocates.  Fields are private.  Not thread-safe:
 * one bag, one thread at a time (as its generator). */
typedef struct rf_bag {
    rf_deck deck;
} rf_bag;

/* A bag of the items 0, 1, ..., n-1 stored as size_t in items[0..n), which
 * this fills; they are drawn as size_t values.  Does not allocate. */
RF_API void rf_bag_init(rf_bag *b, size_t *items, size_t n);
/* A bag of the n items of `size` bytes at items (used in place; their order
 * changes as they are drawn).  size >= 1.  Does not allocate. */
RF_API void rf_bag_init_items(rf_bag *b, void *items, size_t n, size_t size);
/* Draw the next item, copying its `size` bytes to *item; an empty bag is
 * refilled first.  RF_EEMPTY (nothing drawn or copied) only for a bag of no
 * items (n == 0). */
RF_API RF_NODISCARD rf_status rf_bag_draw(rf_bag *b, rf_rng *g, void *item);
/* Items left in the current bag before the next refill: n after init or a
 * refill, then one fewer per draw down to 0 (the next draw refills). */
RF_API size_t rf_bag_left(const rf_bag *b);
/* Put every item back now (a new bag, e.g. for a new game), in O(1). */
RF_API void rf_bag_refill(rf_bag *b);

/* ------------------------------------------------------------------------ */
/* Shoes                                                                    */
/* ------------------------------------------------------------------------ */

/* A casino shoe (blackjack, baccarat): `decks` copies of a deck of
 * `per_deck` cards shuffled together, dealt on demand, with a cut card.
 * Built on rf_deck: the shoe is a deck of decks * per_deck items holding the
 * card values, item i being value i mod per_deck, so each value 0 ..
 * per_deck - 1 is in it `decks` times.  Its draws are the deck's (one
 * rf_below(remaining) per card, none for the last), so the dealt values are
 * a uniformly random arrangement of the shoe, a seed fixes them, and a shoe
 * of one deck deals the values an rf_deck of per_deck cards deals.  The cut
 * card stands `cut` cards from the end: once it has come out
 * (rf_shoe_cut_out), the game finishes the round in progress -- the cards
 * behind it are dealt as any other -- and shuffles anew (rf_shoe_refill).
 * Burn cards are cards dealt and put aside.  The cards live in caller
 * memory; a shoe never allocates.  Fields are private.  Not thread-safe: one
 * shoe, one thread at a time (as its generator). */
typedef struct rf_shoe {
    rf_deck deck;
    size_t cut; /* cards behind the cut card */
} rf_shoe;

/* A shoe of `decks` decks of `per_deck` cards in cards[0 .. decks *
 * per_deck) (the caller's array; the product must fit a size_t), the cut
 * card at the very end (cut 0). */
RF_API void rf_shoe_init(rf_shoe *s, size_t *cards, size_t decks, size_t per_deck);
/* Put the cut card `cut` cards from the end of the full shoe.  RF_EINVAL
 * (nothing changed) when cut is more than the cards of the shoe. */
RF_API RF_NODISCARD rf_status rf_shoe_set_cut(rf_shoe *s, size_t cut);
/* Deal the next card: its value (0 .. per_deck - 1) in *card.  RF_EEMPTY
 * (nothing drawn or written) when the shoe is empty. */
RF_API RF_NODISCARD rf_status rf_shoe_deal(rf_shoe *s, rf_rng *g, size_t *card);
/* Nonzero once the cut card has come out: no more cards left than `cut`. */
RF_API int rf_shoe_cut_out(const rf_shoe *s);
/* Cards left in the shoe. */
RF_API size_t rf_shoe_remaining(const rf_shoe *s);
/* Every card back in the shoe for the next shuffle, in O(1); the cut card
 * stays where it was put. */
RF_API void rf_shoe_refill(rf_shoe *s);

#ifdef __cplusplus
}
#endif

#endif /* RIFFLE_H */

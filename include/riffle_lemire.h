/* riffle_lemire.h -- private to riffle.h (included by it; do not include it
 * yourself).  Lemire's nearly-divisionless bounded draw, batched, generic over
 * the word width.  Included with parameters:
 *   LT_WORD          unsigned word type of W bits
 *   LT_MULHI(a,b,lo) high W bits of the 2W-bit product a*b; low W bits to *lo
 *   LT_NAME(x)       name mangling for this instantiation
 * The library instantiates it at 64 and 32 bits; riffle's tests also at 8 and
 * 16 bits, where every possible word can be enumerated -- the same source text
 * checked exhaustively at small width.
 *
 * It is exact (Lemire, "Fast Random Integer Generation in an Interval", ACM
 * TOMACS 2019; batched: Brackett-Rozinsky & Lemire, SPE 2024): with
 * P = b1*...*bk <= 2^W, the digits taken from one word x are the mixed-radix
 * form of floor(x*P / 2^W), and rejecting the words whose final leftover is
 * below 2^W mod P leaves exactly floor(2^W / P) words for every digit tuple.
 * Since 2^W mod P < P, a leftover >= P accepts without computing it (the
 * "nearly divisionless" part).  The full derivation: riffle's documentation
 * (proofs.md). */

#ifndef RF_UNROLL_
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define RF_UNROLL_ _Pragma("GCC unroll 8")
#else
#define RF_UNROLL_
#endif
#endif

#ifndef RF_COLD_
#if defined(__GNUC__)
#define RF_COLD_ __attribute__((noinline, cold, unused))
#else
#define RF_COLD_
#endif
#endif

static inline void LT_NAME(batch)(LT_WORD (*next)(void *), void *ctx,
                                  const LT_WORD *bounds, size_t k, LT_WORD *out)
{
    /* The product modulo 2^W; it is 0 exactly when P == 2^W (all words accepted). */
    LT_WORD prod = 1;
    for (size_t i = 0; i < k; i++)
        prod = (LT_WORD)(1ull * prod * bounds[i]); /* 1ull: no signed overflow at 16 bits */
    for (;;) {
        LT_WORD lo = next(ctx);
        RF_UNROLL_
        for (size_t i = 0; i < k; i++)
            out[i] = LT_MULHI(lo, bounds[i], &lo);
        if (prod == 0 || lo >= prod)
            return;
        const LT_WORD t = (LT_WORD)((LT_WORD)(0u - prod) % prod); /* 2^W mod P */
        if (lo >= t)
            return;
    }
}

/* The same draw for the falling bounds b, b-1, ..., b-k+1 of a Fisher-Yates
 * batch, given an upper bound U on their product P (P <= U < 2^W).  Every word
 * with lo >= U is accepted at once -- correct because U >= P > 2^W mod P -- so
 * the product and the division are computed only for the rare words below U
 * (probability U / 2^W).  The acceptance rule is exactly the one above, so the
 * results are identical to LT_NAME(batch) on the same bounds. */
/* The exact test of the falling form, reached only for words below U: kept
 * out of line so that the hot loop stays small. */
RF_COLD_ static int LT_NAME(falling_accepts)(LT_WORD lo, LT_WORD b, size_t k)
{
    LT_WORD prod = 1;
    for (size_t i = 0; i < k; i++)
        prod = (LT_WORD)(1ull * prod * (LT_WORD)(b - i));
    if (lo >= prod)
        return 1;
    return lo >= (LT_WORD)((LT_WORD)(0u - prod) % prod); /* lo >= 2^W mod P */
}

static inline void LT_NAME(falling)(LT_WORD (*next)(void *), void *ctx, LT_WORD b,
                                    size_t k, LT_WORD U, LT_WORD *out)
{
    for (;;) {
        LT_WORD lo = next(ctx);
        /* Fully unrolled when k is a constant: gcc -O2 alone keeps the loop. */
        RF_UNROLL_
        for (size_t i = 0; i < k; i++)
            out[i] = LT_MULHI(lo, (LT_WORD)(b - i), &lo);
        if (lo >= U || LT_NAME(falling_accepts)(lo, b, k))
            return;
    }
}

/* Lexicographic rank and unrank on 64 bits (n <= 20).
 *
 * The rank of p is its Lehmer code d_i = #{ j > i : p[j] < p[i] } read as a
 * factorial-base number, rank = sum_i d_i (n-1-i)!  (Knuth, TAOCP vol. 2,
 * 3.3.2 P, and Lehmer 1960): lexicographic order compares p[0] first, and
 * exactly d_0 (n-1)! permutations start with a smaller first element, and so
 * on.  Evaluated by Horner's rule in the mixed radix n, n-1, ..., 1.
 * d_i is also the number of values below p[i] not used before position i,
 * which a bitmask of used values counts with one popcount. */
#include "riffle_perm.h"

static unsigned popcount32(uint32_t x)
{
    unsigned c = 0;
    for (; x; x &= x - 1)
        c++;
    return c;
}

uint64_t rf_factorial_u64(unsigned n)
{
    if (n > RF_RANK_U64_MAX_N)
        return 0;
    uint64_t f = 1;
    for (unsigned i = 2; i <= n; i++)
        f *= i;
    return f;
}

rf_status rf_rank_u64(const size_t *perm, size_t n, uint64_t *rank, size_t *where)
{
    if (n > RF_RANK_U64_MAX_N)
        return RF_ERANGE;
    uint32_t used = 0;
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t v = perm[i];
        if (v >= n || (used >> v & 1u)) {
            if (where)
                *where = i;
            return RF_EINVAL;
        }
        const unsigned smaller_used = popcount32(used & ((1u << v) - 1u));
        r = r * (n - i) + (v - smaller_used);
        used |= 1u << v;
    }
    *rank = r;
    return RF_OK;
}

rf_status rf_unrank_u64(uint64_t rank, size_t n, size_t *perm)
{
    if (n > RF_RANK_U64_MAX_N || rank >= rf_factorial_u64((unsigned)n))
        return RF_ERANGE;
    /* Factorial-base digits, least significant (radix 1) last. */
    for (size_t m = 1; m <= n; m++) {
        perm[n - m] = (size_t)(rank % m);
        rank /= m;
    }
    /* Digit d_i selects the d_i-th smallest unused value. */
    uint32_t used = 0;
    for (size_t i = 0; i < n; i++) {
        size_t d = perm[i], v = 0;
        for (;; v++) {
            if (used >> v & 1u)
                continue;
            if (d-- == 0)
                break;
        }
        perm[i] = v;
        used |= 1u << v;
    }
    return RF_OK;
}

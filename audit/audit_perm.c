/*
 * audit_perm.c -- permutations as the audit sees them: a[p] is the item (0-based)
 * found at position p after shuffling the identity.  Ranks are lexicographic
 * (the Lehmer code read as a factorial-base number; Knuth TAOCP 3, 5.1.1), so
 * rank 0 is the identity and rank n!-1 the reversal.
 */
#include <string.h>

#include "audit.h"

double audit_factorial(size_t n)
{
    double f = 1.0;
    for (size_t i = 2; i <= n; i++)
        f *= (double)i;
    return f;
}

uint64_t audit_factorial_u64(size_t n)
{
    if (n > 20)
        return 0;
    uint64_t f = 1;
    for (size_t i = 2; i <= n; i++)
        f *= i;
    return f;
}

uint64_t audit_rank(const uint32_t *a, size_t n)
{
    /* Digit i of the Lehmer code = items smaller than a[i] not yet used; for
     * n <= 20 a bit mask of used items counts them with one popcount. */
    uint64_t rank = 0;
    uint32_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t below = (1u << a[i]) - 1u;
        const uint64_t digit = a[i] - (uint32_t)__builtin_popcount(used & below);
        rank = rank * (n - i) + digit;
        used |= 1u << a[i];
    }
    return rank;
}

void audit_unrank(uint64_t rank, size_t n, uint32_t *a)
{
    uint32_t digits[21];
    for (size_t i = n; i-- > 0;) {
        const uint64_t base = n - i;
        digits[i] = (uint32_t)(rank % base);
        rank /= base;
    }
    uint32_t used = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t d = digits[i], v = 0;
        for (;; v++) {
            if (used & (1u << v))
                continue;
            if (d == 0)
                break;
            d--;
        }
        a[i] = v;
        used |= 1u << v;
    }
}

size_t audit_fixed_points(const uint32_t *a, size_t n)
{
    size_t k = 0;
    for (size_t p = 0; p < n; p++)
        k += a[p] == p;
    return k;
}

size_t audit_rising_sequences(const uint32_t *a, size_t n, uint32_t *pos)
{
    if (n == 0)
        return 0;
    for (size_t p = 0; p < n; p++)
        pos[a[p]] = (uint32_t)p;
    size_t runs = 1;
    for (size_t i = 0; i + 1 < n; i++)
        runs += pos[i + 1] < pos[i];
    return runs;
}

size_t audit_successions(const uint32_t *a, size_t n)
{
    size_t k = 0;
    for (size_t p = 0; p + 1 < n; p++)
        k += a[p + 1] == a[p] + 1;
    return k;
}

int audit_is_cycle(const uint32_t *a, size_t n, unsigned char *seen)
{
    memset(seen, 0, n);
    size_t len = 0, p = 0;
    do {
        seen[p] = 1;
        p = a[p];
        len++;
    } while (!seen[p]);
    return p == 0 && len == n;
}

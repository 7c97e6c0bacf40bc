/* The scripted generator of the exact tests on the audit library's odometer,
 * rank and factorial (audit/audit.h), with the size_t items the tests use. */
#include "scripted.h"

#include <stdlib.h>

void rf_script_init(rf_script *s)
{
    audit_odometer_init(&s->odo);
    s->error = 0;
}

void rf_script_rng(rf_script *s, rf_rng *g)
{
    if (audit_odometer_rng(&s->odo, g) != 0)
        s->error = 1;
}

int rf_script_next(rf_script *s)
{
    const int more = audit_odometer_next(&s->odo);
    if (s->odo.fault != AUDIT_ODOMETER_OK)
        s->error = 1;
    return more && !s->error;
}

uint64_t rf_script_den(const rf_script *s)
{
    audit_u128 den;
    if (audit_odometer_den(&s->odo, &den) != 0 || den > UINT64_MAX)
        return 0;
    return (uint64_t)den;
}

size_t rf_test_perm_rank(const size_t *p, size_t n)
{
    /* audit_rank reads a permutation of 0..n-1; anything else would index the
     * tests' count arrays out of range, so it stops the test here. */
    uint32_t a[20];
    uint32_t seen = 0;
    if (n > 20)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= n || (seen >> p[i] & 1u))
            abort();
        seen |= 1u << p[i];
        a[i] = (uint32_t)p[i];
    }
    return (size_t)audit_rank(a, n);
}

uint64_t rf_test_factorial(unsigned n)
{
    return audit_factorial_u64(n);
}

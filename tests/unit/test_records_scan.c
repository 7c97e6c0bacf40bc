/* The SSE2 delimiter scan must agree exactly with the portable reference, at
 * every length and alignment and every density of delimiters, including the
 * 64-byte block edges and the tail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/cpu.h"
#include "records/records_scan.h"
#include "riffle_io.h"

/* xorshift64: test data only (not a riffle generator). */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void compare(const unsigned char *p, size_t len, unsigned char delim)
{
    uint64_t *a = malloc((len + 1) * sizeof *a), *b = malloc((len + 1) * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    const size_t na = rf_scan_ref_(p, len, delim, 1000, a);
#if defined(RF_HAVE_SCAN_SSE2)
    const size_t nb = rf_scan_sse2_(p, len, delim, 1000, b);
#else
    const size_t nb = rf_scan_best_()(p, len, delim, 1000, b);
#endif
    assert_int_equal(na, nb);
    if (na)
        assert_memory_equal(a, b, na * sizeof *a);
    size_t expect = 0;
    for (size_t i = 0; i < len; i++)
        expect += p[i] == delim;
    assert_int_equal(na, expect);
    /* Counting and locating agree with the scan, in every variant. */
    assert_int_equal(rf_count_ref_(p, len, delim), expect);
    assert_int_equal(rf_delims_count(p, len, delim), expect);
    assert_int_equal(rf_delims_find(p, len, delim, 1000, b), expect);
    if (na)
        assert_memory_equal(a, b, na * sizeof *a);
    for (size_t k = 0; k <= na; k++) {
        const size_t want = k < na ? (size_t)(a[k] - 1000 - 1) : len;
        assert_int_equal(rf_nth_ref_(p, len, delim, k), want);
        assert_int_equal(rf_delims_nth(p, len, delim, k), want);
    }
#if defined(RF_HAVE_DELIMS_AVX2)
    if (rfi_cpu_avx2()) {
        assert_int_equal(rf_count_avx2_(p, len, delim), expect);
        assert_int_equal(rf_scan_avx2_(p, len, delim, 1000, b), expect);
        if (na)
            assert_memory_equal(a, b, na * sizeof *a);
        for (size_t k = 0; k <= na; k++)
            assert_int_equal(rf_nth_avx2_(p, len, delim, k),
                             k < na ? (size_t)(a[k] - 1000 - 1) : len);
    }
    if (rfi_cpu_avx512_vbmi2()) {
        assert_int_equal(rf_scan_avx512_(p, len, delim, 1000, b), expect);
        if (na)
            assert_memory_equal(a, b, na * sizeof *a);
    }
#endif
    free(a);
    free(b);
}

static void agrees_with_reference(void **state)
{
    (void)state;
#if !defined(RF_HAVE_SCAN_SSE2)
    skip();
#endif
    enum { MAX = 400 };
    unsigned char *buf = malloc(MAX + 64);
    assert_non_null(buf);
    uint64_t s = 88172645463325252u;
    const unsigned densities[] = {1, 2, 3, 17, 64, 255, 1000};
    for (size_t d = 0; d < sizeof densities / sizeof densities[0]; d++)
        for (size_t align = 0; align < 16; align++)
            for (size_t len = 0; len <= MAX; len += 1 + len / 16) {
                unsigned char *p = buf + align;
                for (size_t i = 0; i < len; i++) {
                    const uint64_t x = next(&s);
                    p[i] = x % densities[d] == 0 ? '\n' : (unsigned char)(x >> 32);
                }
                compare(p, len, '\n');
                compare(p, len, '\0');
            }
    free(buf);
}

static void all_and_none(void **state)
{
    (void)state;
    unsigned char buf[300];
    memset(buf, '\n', sizeof buf);
    compare(buf, sizeof buf, '\n');
    compare(buf, sizeof buf, 'x');
    memset(buf, 0xff, sizeof buf);
    compare(buf, sizeof buf, 0xff);
    compare(buf, 0, '\n');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agrees_with_reference),
        cmocka_unit_test(all_and_none),
    };
    return cmocka_run_group_tests_name("records_scan", tests, NULL, NULL);
}

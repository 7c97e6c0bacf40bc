/* rf_seed_text: the --seed rule every front end shares.  Each text must give
 * exactly the key of the derivation the rule names (rf_seed_u64 of its value,
 * or rf_seed_string of its bytes), and the two derivations must differ, so
 * that a text taken by the wrong rule fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "riffle.h"

static void key_of_text(uint8_t key[RF_KEY_BYTES], const char *text)
{
    assert_int_equal(rf_seed_text(key, text), RF_OK);
}

static void assert_integer_seed(const char *text, uint64_t value)
{
    uint8_t got[RF_KEY_BYTES], want[RF_KEY_BYTES], other[RF_KEY_BYTES];
    key_of_text(got, text);
    assert_int_equal(rf_seed_u64(want, value), RF_OK);
    assert_int_equal(rf_seed_string(other, text, strlen(text)), RF_OK);
    assert_memory_equal(got, want, RF_KEY_BYTES);
    assert_memory_not_equal(got, other, RF_KEY_BYTES);
}

static void assert_string_seed(const char *text)
{
    uint8_t got[RF_KEY_BYTES], want[RF_KEY_BYTES];
    key_of_text(got, text);
    assert_int_equal(rf_seed_string(want, text, strlen(text)), RF_OK);
    assert_memory_equal(got, want, RF_KEY_BYTES);
}

static void integers(void **state)
{
    (void)state;
    assert_integer_seed("0", 0);
    assert_integer_seed("42", 42);
    assert_integer_seed("007", 7); /* leading zeros: still the integer */
    assert_integer_seed("000", 0);
    assert_integer_seed("18446744073709551615", UINT64_MAX);
    assert_integer_seed("018446744073709551615", UINT64_MAX);
}

static void strings(void **state)
{
    (void)state;
    assert_string_seed("18446744073709551616"); /* UINT64_MAX + 1 */
    assert_string_seed("99999999999999999999");
    assert_string_seed("");
    assert_string_seed("-1");
    assert_string_seed("+7");
    assert_string_seed(" 7");
    assert_string_seed("7 ");
    assert_string_seed("x7");
    assert_string_seed("7x");
    assert_string_seed("0x10");
    /* and not the integer that a lenient parser would read */
    uint8_t a[RF_KEY_BYTES], b[RF_KEY_BYTES];
    key_of_text(a, "x7");
    assert_int_equal(rf_seed_u64(b, 7), RF_OK);
    assert_memory_not_equal(a, b, RF_KEY_BYTES);
    key_of_text(a, "18446744073709551616");
    assert_int_equal(rf_seed_u64(b, 0), RF_OK); /* 2^64 wrapped */
    assert_memory_not_equal(a, b, RF_KEY_BYTES);
}

static void null_text(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    assert_int_equal(rf_seed_text(key, NULL), RF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integers),
        cmocka_unit_test(strings),
        cmocka_unit_test(null_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

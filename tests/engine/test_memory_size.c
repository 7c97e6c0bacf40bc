/* rf_engine_memory_parse: budgets as every front end writes them.  Sizes are
 * checked against their byte counts worked by hand; percentages against the
 * usable memory, computed here in 128 bits; malformed texts, zero and
 * overflow are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "riffle.h"
#include "riffle_engine.h"

static void sizes(void **state)
{
    (void)state;
    const struct {
        const char *text;
        uint64_t bytes;
    } ok[] = {
        {"1", 1},
        {"4096", 4096},
        {"7b", 7},
        {"7B", 7},
        {"1k", 1024},
        {"1K", 1024},
        {"8kB", 8192},
        {"512M", 512ull << 20},
        {"64MB", 64ull << 20},
        {"3g", 3ull << 30},
        {"2GB", 2ull << 30},
        {"1T", 1ull << 40},
        {"16777215T", 16777215ull << 40},
        {"18446744073709551615", UINT64_MAX},
        {"007K", 7 << 10},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        uint64_t v = 0;
        assert_int_equal(rf_engine_memory_parse(ok[i].text, &v), RF_OK);
        assert_int_equal(v, ok[i].bytes);
    }
}

static void refusals(void **state)
{
    (void)state;
    const char *bad[] = {"0", "0K", "0%", "x", "", "1.5G", "5X", "1KiB", "101%", "1000%",
                         "1%%", "-1", " 1", "1 ", "+1", "1M2", "16777216T",
                         "18446744073709551616", "M", "%", "1BB", "1KK"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v = 12345;
        assert_int_equal(rf_engine_memory_parse(bad[i], &v), RF_EINVAL);
        assert_int_equal(v, 12345); /* untouched */
    }
    uint64_t v;
    assert_int_equal(rf_engine_memory_parse(NULL, &v), RF_EINVAL);
    assert_int_equal(rf_engine_memory_parse("1M", NULL), RF_EINVAL);
}

static void percentages(void **state)
{
    (void)state;
    const uint64_t mem = rf_engine_usable_memory();
    const unsigned ns[] = {1, 3, 50, 99, 100};
    const char *texts[] = {"1%", "3%", "50%", "99%", "100%"};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        uint64_t v = 0;
        const rf_status st = rf_engine_memory_parse(texts[i], &v);
        if (mem == 0) {
            assert_int_equal(st, RF_ERANGE);
            continue;
        }
        const uint64_t want = (uint64_t)((unsigned __int128)mem * ns[i] / 100);
        assert_int_equal(st, want ? RF_OK : RF_EINVAL);
        if (want)
            assert_int_equal(v, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes),
        cmocka_unit_test(refusals),
        cmocka_unit_test(percentages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

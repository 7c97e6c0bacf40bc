/* Key-range bucket files (src/engine/keyfiles.c): the cut of a key range
 * into buckets (every key in exactly one, the buckets in key order, the
 * top bits on the full range), the fan-out and the split rule, and the
 * files themselves, named and unnamed: appended, read back, dropped, and
 * none left when the files close. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/engine_internal.h"
#include "engine/keyfiles.h"
#include "riffle_engine.h"
#include "riffle_io.h"

static void full_range_is_top_bits(void **state)
{
    (void)state;
    for (unsigned bits = 1; bits <= RFI_KEYFILES_MAX_BITS; bits++) {
        struct rfi_keyset *s = rfi_keyset_new(0, UINT64_MAX, bits, 2);
        assert_non_null(s);
        assert_int_equal(s->n, 1u << bits);
        const uint64_t keys[] = {0, 1, UINT64_MAX, (uint64_t)1 << 63, 0x0123456789abcdefu};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            assert_int_equal(rfi_keyset_bucket(s, keys[i]), keys[i] >> (64 - bits));
        assert_int_equal(rfi_keyset_low(s, 0), 0);
        assert_true(rfi_keyset_high(s, s->n - 1) == UINT64_MAX);
        free(s);
    }
}

/* Every bucket's bounds hold exactly its keys, one after another. */
static void check_cut(const struct rfi_keyset *s)
{
    assert_true(s->n >= 1);
    assert_true(rfi_keyset_low(s, 0) == s->lo);
    assert_true(rfi_keyset_high(s, s->n - 1) == s->hi);
    for (unsigned i = 0; i < s->n; i++) {
        const uint64_t lo = rfi_keyset_low(s, i), hi = rfi_keyset_high(s, i);
        assert_true(lo <= hi);
        assert_int_equal(rfi_keyset_bucket(s, lo), i);
        assert_int_equal(rfi_keyset_bucket(s, hi), i);
        if (i + 1 < s->n)
            assert_true(rfi_keyset_low(s, i + 1) == hi + 1);
    }
}

static void any_range(void **state)
{
    (void)state;
    const uint64_t ranges[][2] = {
        {0, UINT64_MAX},         {UINT64_MAX / 3, 2 * (UINT64_MAX / 3)},
        {5, 5},                  {10, 12},
        {1000, 1000 + 255},      {1000, 1000 + 256},
        {UINT64_MAX - 7, UINT64_MAX},
    };
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
        for (unsigned bits = 1; bits <= RFI_KEYFILES_MAX_BITS; bits++) {
            struct rfi_keyset *s = rfi_keyset_new(ranges[r][0], ranges[r][1], bits, 1);
            assert_non_null(s);
            assert_true(s->n <= 1u << bits);
            /* at least half the buckets asked for, when the range has the keys */
            if (ranges[r][1] - ranges[r][0] >= (1u << bits))
                assert_true(s->n > 1u << (bits - 1));
            check_cut(s);
            free(s);
        }
}

static void fanout_and_fit(void **state)
{
    (void)state;
    assert_int_equal(rfi_keyfiles_fanout(0, 1 << 20), RFI_KEYFILES_MAX_BITS);
    assert_int_equal(rfi_keyfiles_fanout(1, 3 << 20), 1);
    assert_int_equal(rfi_keyfiles_fanout(4u << 20, 3 << 20), 2);
    assert_int_equal(rfi_keyfiles_fanout((4u << 20) + 1, 3 << 20), 3); /* buckets of a third */
    assert_int_equal(rfi_keyfiles_fanout(UINT64_MAX / 2, 3 << 20), RFI_KEYFILES_MAX_BITS);
    assert_true(rfi_keyfiles_order_budget(1) == RFI_KEYFILES_MIN_ORDER);
    assert_true(rfi_keyfiles_order_budget(1 << 30) == 1 << 30);
    struct rfi_keyset *s = rfi_keyset_new(0, UINT64_MAX, 8, 1);
    assert_non_null(s);
    assert_true(rfi_keyset_fits(s, 3, RFI_KEYFILES_MIN_ORDER, 1000, 1));
    assert_false(rfi_keyset_fits(s, 3, RFI_KEYFILES_MIN_ORDER + 1, 1000, 1));
    assert_true(rfi_keyset_fits(s, 3, UINT64_MAX, 1, 1)); /* one entry */
    free(s);
    struct rfi_keyset *one = rfi_keyset_new(7, 7, 8, 1);
    assert_non_null(one);
    assert_true(rfi_keyset_fits(one, 0, UINT64_MAX, 1000, 1)); /* one key */
    free(one);
}

static char dir[PATH_MAX];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/riffle-keyfiles-XXXXXX", rf_temp_dir(NULL));
    return mkdtemp(dir) ? 0 : -1;
}

static int entries(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* Fails if anything was left; removes it either way (a failed assertion
 * leaves the run's files). */
static int teardown(void **state)
{
    (void)state;
    if (rmdir(dir) == 0)
        return 0;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? -1 : -2;
}

static void files_round_trip(int named)
{
    rf_engine_error err;
    memset(&err, 0, sizeof err);
    struct engine e = {.tmpdir = dir, .named_temps = named, .budget = 1 << 20, .err = &err};
    struct rfi_keyfiles k;
    rfi_keyfiles_init(&k, &e);
    struct rfi_keyset *s = rfi_keyset_new(0, UINT64_MAX, 2, 2);
    assert_non_null(s);
    assert_int_equal(rfi_keyset_create(&k, s), 0);
    for (unsigned i = 0; i < s->n; i++)
        for (unsigned j = 0; j < 2; j++)
            assert_true(s->b[i].f[j].fd >= 0);
    struct rfi_keyfile *f = &s->b[1].f[0];
    assert_int_equal(rfi_keyfile_append(&k, f, "abc", 3), 0);
    assert_int_equal(rfi_keyfile_append(&k, f, "defg", 4), 0);
    assert_true(f->size == 7);
    char got[8] = {0};
    assert_int_equal(rfi_keyfile_read(&k, f, got, 7, 0), 0);
    assert_memory_equal(got, "abcdefg", 7);
    assert_int_equal(rfi_keyfile_read(&k, f, got, 2, 6), 1); /* past the end */
    assert_int_equal(err.status, RF_EIO);
    /* a split: a child over bucket 1's keys, its files made at first use */
    assert_int_equal(rfi_keyset_split(&k, s, 1, 100 << 20, 1 << 20), 0);
    struct rfi_keyset *c = s->b[1].child;
    assert_non_null(c);
    assert_true(c->lo == rfi_keyset_low(s, 1) && c->hi == rfi_keyset_high(s, 1));
    assert_int_equal(c->n, 1u << RFI_KEYFILES_MAX_BITS);
    assert_int_equal(c->b[5].f[1].fd, -1);
    assert_int_equal(rfi_keyfile_append(&k, &c->b[5].f[1], "x", 1), 0);
    assert_true(c->b[5].f[1].fd >= 0);
    rfi_keybucket_drop(&k, &s->b[1]);
    assert_int_equal(s->b[1].f[0].fd, -1);
    if (named)
        assert_int_equal(entries(k.t.dir), 4 * 2 - 2 + 1); /* bucket 1's files gone */
    rfi_keyset_free(&k, s);
    if (named)
        assert_int_equal(entries(k.t.dir), 0);
    assert_int_equal(rfi_keyfiles_close(&k), 0);
    assert_int_equal(entries(dir), 0);
}

static void named_files(void **state)
{
    (void)state;
    files_round_trip(1);
}

static void unnamed_files(void **state)
{
    (void)state;
    files_round_trip(0);
}

/* Named bucket files announced to a program's registry (rf_removal_temp as
 * the temp callback): a signal handler's rf_removal_run in the middle of a
 * run removes every one of them and the directory, split sets' included. */
static void named_files_reach_the_registry(void **state)
{
    (void)state;
    rf_engine_error err;
    memset(&err, 0, sizeof err);
    rf_removal *reg = rf_removal_new();
    assert_non_null(reg);
    struct engine e = {.tmpdir = dir, .named_temps = 1, .budget = 1 << 20, .err = &err,
                       .temp = rf_removal_temp, .temp_ctx = reg};
    struct rfi_keyfiles k;
    rfi_keyfiles_init(&k, &e);
    struct rfi_keyset *s = rfi_keyset_new(0, UINT64_MAX, 3, 2);
    assert_non_null(s);
    assert_int_equal(rfi_keyset_create(&k, s), 0);
    assert_int_equal(rfi_keyset_split(&k, s, 6, 100 << 20, 1 << 20), 0);
    assert_int_equal(rfi_keyfile_append(&k, &s->b[6].child->b[200].f[0], "y", 1), 0);
    assert_int_equal(entries(k.t.dir), 8 * 2 + 1);
    assert_int_equal(rf_removal_run(reg), 0);
    assert_int_equal(entries(dir), 0); /* the files and riffle-XXXXXX */
    /* the run goes on to its end as if nothing happened: nothing to remove */
    rfi_keyset_free(&k, s);
    assert_int_equal(rfi_keyfiles_close(&k), 0);
    assert_int_equal(rf_removal_run(reg), 0); /* forgotten by the close */
    rf_removal_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_range_is_top_bits),
        cmocka_unit_test(any_range),
        cmocka_unit_test(fanout_and_fit),
        cmocka_unit_test_setup_teardown(named_files, setup, teardown),
        cmocka_unit_test_setup_teardown(unnamed_files, setup, teardown),
        cmocka_unit_test_setup_teardown(named_files_reach_the_registry, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

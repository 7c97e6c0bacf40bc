/* CSV record ends: the AVX2 scan and the public rf_csv_* agree exactly with
 * the portable reference and with a byte-at-a-time oracle, at every length,
 * state and limit; records cut as CSV index, measure and write whole; an
 * input that leaves a quote open is found with the line its record starts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/cpu.h"
#include "records/csv_scan.h"
#include "riffle_io.h"

/* xorshift64: test data only (not a riffle generator). */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The oracle: one byte at a time, the definition of csv_scan.h. */
static size_t oracle(const unsigned char *p, size_t len, int *quoted, uint64_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '"')
            *quoted = !*quoted;
        else if (p[i] == '\n' && !*quoted)
            out[n++] = i + 1;
    }
    return n;
}

static void check_variant(rf_csv_fn_ fn, const unsigned char *p, size_t len, int quoted,
                          const uint64_t *want, size_t nwant, int end_quoted)
{
    uint64_t *got = malloc((len + 1) * sizeof *got);
    assert_non_null(got);
    struct rf_csv_state_ s = {quoted, 0, 0};
    assert_int_equal(fn(p, len, 0, got, SIZE_MAX, &s), nwant);
    for (size_t i = 0; i < nwant; i++)
        assert_int_equal(got[i], want[i]);
    assert_int_equal(s.quoted, end_quoted);
    assert_int_equal(s.stop, len);
    assert_int_equal(s.last, nwant ? want[nwant - 1] : 0);
    /* Stopping after k ends: just after the k-th, outside quotes. */
    for (size_t k = 1; k <= nwant; k++) {
        struct rf_csv_state_ t = {quoted, 0, 0};
        assert_int_equal(fn(p, len, 7, NULL, k, &t), k);
        assert_int_equal(t.stop, want[k - 1]);
        assert_int_equal(t.last, want[k - 1]);
        assert_int_equal(t.quoted, 0);
    }
    free(got);
}

static void compare(const unsigned char *p, size_t len)
{
    uint64_t *want = malloc((len + 1) * sizeof *want);
    assert_non_null(want);
    for (int quoted = 0; quoted <= 1; quoted++) {
        int end = quoted;
        const size_t n = oracle(p, len, &end, want);
        check_variant(rf_csv_scan_ref_, p, len, quoted, want, n, end);
#if defined(RF_HAVE_CSV_AVX2)
        if (rfi_cpu_avx2())
            check_variant(rf_csv_scan_avx2_, p, len, quoted, want, n, end);
#endif
        int q = quoted;
        assert_int_equal(rf_csv_count(p, len, &q), n);
        assert_int_equal(q, end);
        if (quoted)
            continue;
        /* The public scans from a record start. */
        uint64_t *found = malloc((len + 1) * sizeof *found);
        assert_non_null(found);
        assert_int_equal(rf_csv_find(p, len, 100, found), n);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(found[i], want[i] + 100);
        for (size_t k = 0; k <= n; k++)
            assert_int_equal(rf_csv_nth(p, len, k), k < n ? want[k] - 1 : len);
        int open = -1;
        assert_int_equal(rf_csv_whole(p, len, &open), n ? want[n - 1] : 0);
        assert_int_equal(open, end);
        free(found);
    }
    free(want);
}

/* Random bytes of quotes, line feeds, CRs, commas and letters, at every
 * density, every length up to 300 and at odd alignments. */
static void test_random_agree(void **state)
{
    (void)state;
    static const unsigned char alphabet[] = "\"\n\r,ab";
    unsigned char *buf = malloc(400);
    assert_non_null(buf);
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 3000; round++) {
        const size_t len = (size_t)(next(&s) % 300), off = (size_t)(next(&s) % 7);
        const unsigned density = (unsigned)(next(&s) % 4); /* 0: few specials */
        for (size_t i = 0; i < len; i++) {
            const uint64_t r = next(&s);
            buf[off + i] = (density == 0 && r % 16 != 0) ? 'x' : alphabet[r % 6];
        }
        compare(buf + off, len);
    }
    free(buf);
}

static void test_cases(void **state)
{
    (void)state;
    static const char *cases[] = {
        "", "\n", "a,b\n", "a,\"b\nc\"\nd\n", "\"\"\"\"\n\"\n\"\n", "x,\"y\r\nz\"\r\nw\r\n",
        "\"unterminated\nstill\n", "a\"b\nc\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        compare((const unsigned char *)cases[i], strlen(cases[i]));
    const char *t = "id,v\n1,\"a\nb\"\n2,\"\"\"q\"\"\"\n";
    assert_int_equal(rf_csv_nth(t, strlen(t), 0), 4);
    assert_int_equal(rf_csv_nth(t, strlen(t), 1), 12);
    assert_int_equal(rf_csv_nth(t, strlen(t), 2), strlen(t) - 1);
}

/* The line reported for an open quote is where its record starts. */
static void test_open_quote_line(void **state)
{
    (void)state;
    const char *ok = "a\n\"b\nc\"\n";
    assert_int_equal(rf_csv_open_quote_line(ok, strlen(ok)), 0);
    const char *bad = "a\n\"b\nc\"\nd,\"e\nf\ng\n";
    assert_int_equal(rf_csv_open_quote_line(bad, strlen(bad)), 4);
    const char *first = "\"never closed";
    assert_int_equal(rf_csv_open_quote_line(first, strlen(first)), 1);
    assert_int_equal(rf_csv_open_quote_line("", 0), 0);
}

/* A long record across many 64-byte blocks, quoted from the start. */
static void test_long_quoted(void **state)
{
    (void)state;
    const size_t len = 10000;
    unsigned char *p = malloc(len);
    assert_non_null(p);
    memset(p, '\n', len);
    p[0] = '"';
    p[len - 2] = '"';
    compare(p, len);
    assert_int_equal(rf_csv_nth(p, len, 0), len - 1);
    free(p);
}

/* rf_records_csv: index, lengths and the writers cut whole CSV records. */
static void test_records_csv(void **state)
{
    (void)state;
    const char *text = "h1,h2\n1,\"x\ny\"\n2,\"\"\"\"\n3,\"a\r\nb\"\r\n4,z";
    rf_records r;
    rf_records_init(&r, '\n');
    rf_records_csv(&r);
    assert_int_equal(rf_records_add_bytes(&r, text, strlen(text)), 0);
    assert_int_equal(rf_records_index(&r), 0);
    assert_int_equal(r.n, 5);
    assert_int_equal(rf_records_length(&r, r.offs[1]), strlen("1,\"x\ny\""));
    assert_int_equal(rf_records_length(&r, r.offs[3]), strlen("3,\"a\r\nb\"\r"));
    char path[] = "/tmp/riffle-test-csv-XXXXXX";
    FILE *f = fdopen(mkstemp(path), "w+");
    assert_non_null(f);
    unlink(path);
    unsigned char buf[8];
    rf_writer w;
    rf_writer_init(&w, fileno(f), buf, sizeof buf); /* smaller than a record */
    const uint64_t order[] = {r.offs[4], r.offs[1], r.offs[3]};
    assert_int_equal(rf_records_write(&r, order, 3, &w), 0);
    assert_int_equal(rf_writer_flush(&w), 0);
    char out[128] = {0};
    rewind(f);
    const size_t got = fread(out, 1, sizeof out - 1, f);
    const char *want = "4,z\n1,\"x\ny\"\n3,\"a\r\nb\"\r\n";
    assert_int_equal(got, strlen(want));
    assert_string_equal(out, want);
    fclose(f);
    rf_records_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_agree),
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_open_quote_line),
        cmocka_unit_test(test_long_quoted),
        cmocka_unit_test(test_records_csv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

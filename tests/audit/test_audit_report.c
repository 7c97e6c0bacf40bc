/*
 * test_audit_report.c -- the report writers of `riffle audit`
 * (audit/audit_report.c, audit/audit_html.c): the JSON schema is stable (a golden
 * document for exact mode, the documented field set for statistical mode), and
 * the text and HTML reports carry the numbers and figures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

typedef void (*writer_fn)(FILE *f, const audit_result *r);

static char *render(writer_fn w, const audit_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    w(f, r);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void html_writer(FILE *f, const audit_result *r)
{
    assert_int_equal(audit_report_html(f, r), 0);
}

static void exact_naive3(audit_exact *e, audit_size_result *sz, audit_result *r)
{
    const audit_algo *al = audit_zoo_find("naive");
    audit_exact_init(e);
    assert_int_equal(audit_exact_run(al, 3, 0, 0, e), 0);
    memset(sz, 0, sizeof *sz);
    sz->n = 3;
    sz->ex = e;
    *r = (audit_result){.subject = "naive", .kind = "builtin", .mode = "exact",
                        .algo = al, .alpha = 0.001, .verdict = "biased",
                        .nsizes = 1, .sizes = sz};
    snprintf(r->reason, sizeof r->reason, "not uniform");
}

/* The whole exact-mode document for naive n = 3 (schema riffle-audit/1, see
 * docs/audit-json.md).  A change here is a schema change. */
static const char golden_json[] =
    "{\"schema\": \"riffle-audit/1\", \"subject\": \"naive\", \"kind\": \"builtin\", "
    "\"mode\": \"exact\", \"fair_by_design\": false, \"param\": null, \"seed\": null, "
    "\"alpha\": 0.001, \"verdict\": \"biased\", \"reason\": \"not uniform\", "
    "\"exit_status\": 2, \"seconds\": 0, \"command\": null, \"certification\": null, "
    "\"sizes\": [{\"n\": 3, "
    "\"exact\": {\"method\": \"dynamic programme over orderings\", \"paths\": 0, "
    "\"full\": true, \"orderings\": 6, \"support\": 6, \"distinct\": 2, "
    "\"min\": {\"fraction\": \"4/27\", \"value\": 0.14814814814814814}, \"argmin\": 0, "
    "\"max\": {\"fraction\": \"5/27\", \"value\": 0.18518518518518517}, \"argmax\": 1, "
    "\"median\": {\"fraction\": \"1/6\", \"value\": 0.16666666666666666}, "
    "\"tv\": {\"fraction\": \"1/18\", \"value\": 0.055555555555555552}, "
    "\"uniform\": false, \"denominator\": \"27\", "
    "\"numerators\": [\"4\", \"5\", \"5\", \"5\", \"4\", \"4\"], "
    "\"fixed_points\": {\"fraction\": \"26/27\", \"value\": 0.96296296296296291}, "
    "\"matrix_uniform\": false, \"position_denominator\": \"27\", "
    "\"position_numerators\": [[\"9\", \"9\", \"9\"], [\"10\", \"8\", \"9\"], "
    "[\"8\", \"10\", \"9\"]]}, \"statistical\": null}]}\n";

static void json_exact_golden(void **state)
{
    (void)state;
    audit_exact e;
    audit_size_result sz;
    audit_result r;
    exact_naive3(&e, &sz, &r);
    char *out = render(audit_report_json, &r);
    assert_string_equal(out, golden_json);
    free(out);
    audit_exact_clear(&e);
}

/* Statistical mode: every field docs/audit-json.md lists is present. */
static void json_statistical_fields(void **state)
{
    (void)state;
    const audit_algo *al = audit_zoo_find("fisher-yates");
    audit_acc acc;
    assert_int_equal(audit_acc_init(&acc, 5, 5000), 0);
    assert_int_equal(audit_run_builtin(al, 0, 9, 0, 5000, 1, &acc), 0);
    audit_size_result sz = {.n = 5, .trials = acc.trials, .acc = &acc};
    audit_acc_tests(&acc, sz.tests);
    audit_result r = {.subject = "fisher-yates", .kind = "builtin",
                      .mode = "statistical", .algo = al, .seed = 9, .alpha = 0.001,
                      .verdict = "fair", .nsizes = 1, .sizes = &sz};
    char *out = render(audit_report_json, &r);
    static const char *const fields[] = {
        "\"schema\": \"riffle-audit/1\"", "\"seed\": 9", "\"statistical\": {\"trials\": 5000",
        "\"tests\": [{\"name\": \"orderings\"", "\"name\": \"item-position\"",
        "\"name\": \"fixed-points\"", "\"name\": \"rising-sequences\"",
        "\"name\": \"successions\"", "\"name\": \"duplicate-orderings\"",
        "\"name\": \"runs\"", "\"name\": \"serial-correlation\"", "\"name\": \"poker\"",
        "\"name\": \"gap\"", "\"name\": \"coupon-collector\"", "\"level_99\": \"pass\"",
        "\"certification\": null", "\"pairs_of_games\": 4999", "\"runs_counts\": [",
        "\"serial_z\": [", "\"poker_counts\": null", "\"gap_counts\": [",
        "\"applicable\": ", "\"statistic\": ", "\"df\": ", "\"p_value\": ",
        "\"adjusted_p\": ", "\"detectable_w\": ", "\"note\": ", "\"blocks\": 5", "\"position_counts\": [[",
        "\"fixed_point_counts\": [", "\"rising_sequence_counts\": [",
        "\"succession_counts\": [", "\"ordering_counts\": [", "\"exact\": null"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strstr(out, fields[i]) == NULL)
            fail_msg("missing %s in %s", fields[i], out);
    free(out);
    audit_acc_free(&acc);
}

static void text_report(void **state)
{
    (void)state;
    audit_exact e;
    audit_size_result sz;
    audit_result r;
    exact_naive3(&e, &sz, &r);
    char *out = render(audit_report_text, &r);
    static const char *const lines[] = {
        "min 4/27 = 0.148148 (rank 0: 1 2 3)", "max 5/27 = 0.185185 (rank 1: 1 3 2)",
        "total variation distance from uniform: 1/18",
        "expected fixed points: 26/27", "DELIBERATELY WRONG", "verdict: biased"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (strstr(out, lines[i]) == NULL)
            fail_msg("missing '%s' in:\n%s", lines[i], out);
    free(out);
    audit_exact_clear(&e);
}

static size_t count(const char *s, const char *what)
{
    size_t k = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
        k++;
    return k;
}

static void html_report(void **state)
{
    (void)state;
    audit_exact e;
    audit_size_result sz;
    audit_result r;
    exact_naive3(&e, &sz, &r);
    char *out = render(html_writer, &r);
    assert_true(strncmp(out, "<!DOCTYPE html>", 15) == 0);
    assert_int_equal(count(out, "<svg "), 3); /* rank order, sorted, heatmap */
    assert_int_equal(count(out, "</svg>"), 3);
    assert_int_equal(count(out, "<rect x="), 9 + 1); /* 3x3 cells and a frame */
    assert_non_null(strstr(out, "verdict: <strong>biased</strong>"));
    assert_null(strstr(out, "<script"));
    assert_null(strstr(out, " src=")); /* self-contained: nothing to fetch */
    free(out);
    audit_exact_clear(&e);
}

/* A command's output in the reports: JSON stays valid UTF-8 (bytes that are
 * not UTF-8 become U+FFFD, controls \u00XX), the text shows no control byte,
 * and an excerpt is cut at a character boundary. */
static void hostile_bytes(void **state)
{
    (void)state;
    audit_size_result sz;
    memset(&sz, 0, sizeof sz);
    audit_result r = {.subject = "cmd\033[2J", .kind = "command", .mode = "statistical",
                      .alpha = 0.001, .verdict = "broken", .nsizes = 0, .sizes = &sz,
                      .broken = 1,
                      .broken_example = "x\033[31m\001\xff\xc3\xa9\xe2\x82 \xed\xa0\x80"};
    snprintf(r.reason, sizeof r.reason, "bad");
    char *json = render(audit_report_json, &r);
    assert_non_null(strstr(json, "\"example\": \"x\\u001b[31m\\u0001\\ufffd\xc3\xa9"
                                 "\\ufffd\\ufffd \\ufffd\\ufffd\\ufffd\""));
    assert_non_null(strstr(json, "\"subject\": \"cmd\\u001b[2J\""));
    for (const unsigned char *p = (const unsigned char *)json; *p;) {
        const size_t len = audit_utf8_char(p);
        assert_true(len > 0);
        p += len;
    }
    free(json);
    char *text = render(audit_report_text, &r);
    assert_null(strchr(text, '\033'));
    assert_null(strchr(text, '\001'));
    assert_non_null(strstr(text, "x\\x1b[31m\\x01\\xff\xc3\xa9\\xe2\\x82 "));
    free(text);
    /* 39 bytes and a 2-byte character: 40 bytes would split it. */
    const char line[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9z";
    assert_int_equal(audit_utf8_cut(line, sizeof line - 1, 40), 39);
    assert_int_equal(audit_utf8_cut(line, sizeof line - 1, 41), 41);
    assert_int_equal(audit_utf8_cut(line, 10, 40), 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_exact_golden),
        cmocka_unit_test(json_statistical_fields),
        cmocka_unit_test(text_report),
        cmocka_unit_test(html_report),
        cmocka_unit_test(hostile_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

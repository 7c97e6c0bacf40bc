/*
 * audit_report.c -- the text table and the JSON document of `riffle audit`.
 * The JSON schema is documented in docs/audit-json.md; its field set is pinned
 * by tests/audit/test_audit_report.c.  Items are shown 1-based, as the lines
 * "1".."n" that --cmd feeds.
 */
#include <math.h>
#include <string.h>

#include "audit.h"
#include "audit_cert.h"
#include "audit_rules.h"

#define LIST_ALL_MAX_N 4   /* list every ordering up to 4! = 24 */
#define LIST_EXTREMES 5    /* else the 5 least and 5 most likely */
#define MATRIX_TEXT_MAX_N 10

double audit_ratio_double(const mpz_t num, const mpz_t den)
{
    mpq_t q;
    mpq_init(q);
    mpq_set_num(q, num);
    mpq_set_den(q, den);
    mpq_canonicalize(q);
    const double d = mpq_get_d(q);
    mpq_clear(q);
    return d;
}

void audit_fprint_ratio(FILE *f, const mpz_t num, const mpz_t den)
{
    mpq_t q;
    mpq_init(q);
    mpq_set_num(q, num);
    mpq_set_den(q, den);
    mpq_canonicalize(q);
    gmp_fprintf(f, "%Qd", q);
    mpq_clear(q);
}

int audit_exit_status(const char *verdict)
{
    if (strcmp(verdict, "fair") == 0)
        return 0;
    return strcmp(verdict, "inconclusive") == 0 ? 3 : 2;
}

/* The length of the well-formed UTF-8 character at s (RFC 3629, section 4:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or 0. */
size_t audit_utf8_char(const unsigned char *s)
{
    const unsigned c = s[0];
    if (c < 0x80)
        return c ? 1 : 0;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* Text that came from a command's output, for a terminal: printable ASCII and
 * well-formed UTF-8 as they are; control characters (C0, DEL and the C1
 * range U+0080..U+009F, which terminals may obey) as \uXXXX or \xHH, bytes
 * that are not UTF-8 as \xHH, a backslash doubled.  Nothing that reaches the
 * terminal can be an escape sequence. */
void audit_fput_bytes(FILE *f, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0; i < len;) {
        /* The character is measured on a NUL-terminated copy of at most 4
         * bytes, so nothing past s[len) is read. */
        unsigned char ch[5] = {0};
        memcpy(ch, s + i, len - i < 4 ? len - i : 4);
        const size_t clen = audit_utf8_char(ch);
        if (ch[0] == '\\') {
            fputs("\\\\", f);
        } else if (clen == 1 && ch[0] >= 0x20 && ch[0] < 0x7F) {
            fputc(ch[0], f);
        } else if (clen == 2 && ch[0] == 0xC2 && ch[1] < 0xA0) {
            fprintf(f, "\\u%04x", ch[1]); /* C1 control */
        } else if (clen > 1) {
            fwrite(ch, 1, clen, f);
        } else {
            fprintf(f, "\\x%02x", ch[0]);
        }
        i += clen ? clen : 1;
    }
}

void audit_fput_text(FILE *f, const char *str)
{
    if (str != NULL)
        audit_fput_bytes(f, str, strlen(str));
}

static void print_ordering(FILE *f, uint64_t rank, size_t n)
{
    uint32_t a[21];
    audit_unrank(rank, n, a);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%u", i ? " " : "", a[i] + 1);
}

static void print_pvalue(FILE *f, double p)
{
    if (p < 1e-300)
        fprintf(f, "%10s", "<1e-300");
    else
        fprintf(f, "%10.3g", p);
}

/* ---- text: exact mode ----------------------------------------------------- */

static void text_ordering_line(FILE *f, const audit_exact *e, uint64_t r)
{
    fprintf(f, "    %8llu  ", (unsigned long long)r);
    print_ordering(f, r, e->n);
    fputs("  ", f);
    audit_fprint_ratio(f, e->num[r], e->den);
    fprintf(f, " = %.6g\n", audit_ratio_double(e->num[r], e->den));
}

/* Ranks sorted by probability (a selection of the extremes is enough). */
static void text_extremes(FILE *f, const audit_exact *e)
{
    uint64_t pick[2 * LIST_EXTREMES];
    size_t got = 0;
    /* Least likely first: repeated selection over the n! values (n <= 9). */
    for (int side = 0; side < 2; side++) {
        fprintf(f, "  %s likely orderings (rank, ordering, probability):\n",
                side == 0 ? "least" : "most");
        const size_t start = got;
        for (size_t k = 0; k < LIST_EXTREMES && k < e->nperm; k++) {
            uint64_t best = UINT64_MAX;
            for (uint64_t r = 0; r < e->nperm; r++) {
                int used = 0;
                for (size_t u = start; u < got; u++)
                    used |= pick[u] == r;
                if (used)
                    continue;
                const int c = best == UINT64_MAX ? 0 : mpz_cmp(e->num[r], e->num[best]);
                if (best == UINT64_MAX || (side == 0 ? c < 0 : c > 0))
                    best = r;
            }
            pick[got++] = best;
            text_ordering_line(f, e, best);
        }
    }
}

static void text_matrix(FILE *f, const audit_exact *e, const audit_exact_summary *s)
{
    const size_t n = e->n;
    if (s->matrix_uniform) {
        fprintf(f, "  item-to-position matrix: every entry exactly 1/%zu\n", n);
        return;
    }
    if (n > MATRIX_TEXT_MAX_N) {
        size_t lo = 0, hi = 0;
        for (size_t i = 1; i < n * n; i++) {
            if (mpz_cmp(e->pos_num[i], e->pos_num[lo]) < 0)
                lo = i;
            if (mpz_cmp(e->pos_num[i], e->pos_num[hi]) > 0)
                hi = i;
        }
        fprintf(f, "  item-to-position matrix (uniform: 1/%zu = %.6g):\n", n, 1.0 / n);
        fprintf(f, "    smallest P[item %zu -> position %zu] = %.6g\n", lo / n + 1,
                lo % n + 1, audit_ratio_double(e->pos_num[lo], e->pos_den));
        fprintf(f, "    largest  P[item %zu -> position %zu] = %.6g\n", hi / n + 1,
                hi % n + 1, audit_ratio_double(e->pos_num[hi], e->pos_den));
        fputs("    (full matrix: --json or --report)\n", f);
        return;
    }
    fprintf(f, "  item-to-position probabilities x %zu (1 = uniform; row item, "
               "column position):\n      ", n);
    for (size_t p = 0; p < n; p++)
        fprintf(f, "%7zu", p + 1);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "    %2zu", i + 1);
        for (size_t p = 0; p < n; p++)
            fprintf(f, "%7.4f",
                    (double)n * audit_ratio_double(e->pos_num[i * n + p], e->pos_den));
        fputc('\n', f);
    }
}

static void text_exact(FILE *f, const audit_size_result *sz)
{
    const audit_exact *e = sz->ex;
    audit_exact_summary s;
    audit_exact_summarize(e, &s);
    fprintf(f, "n = %zu: exact, %s", e->n, e->method);
    if (e->paths)
        fprintf(f, ", %llu draw paths", (unsigned long long)e->paths);
    fputc('\n', f);
    if (s.full) {
        fprintf(f, "  orderings: %llu, reachable %llu, distinct probabilities %llu\n",
                (unsigned long long)e->nperm, (unsigned long long)s.support,
                (unsigned long long)s.distinct);
        gmp_fprintf(f, "  min %Qd = %.6g (rank %llu: ", s.min, mpq_get_d(s.min),
                    (unsigned long long)s.argmin);
        print_ordering(f, s.argmin, e->n);
        gmp_fprintf(f, ")\n  max %Qd = %.6g (rank %llu: ", s.max, mpq_get_d(s.max),
                    (unsigned long long)s.argmax);
        print_ordering(f, s.argmax, e->n);
        gmp_fprintf(f, ")\n  median %Qd = %.6g   uniform 1/%llu = %.6g\n", s.median,
                    mpq_get_d(s.median), (unsigned long long)e->nperm, 1.0 / (double)e->nperm);
        gmp_fprintf(f, "  total variation distance from uniform: %Qd = %.6g\n", s.tv,
                    mpq_get_d(s.tv));
    } else {
        fputs("  (position matrix only: n is too large for all n! orderings)\n", f);
    }
    gmp_fprintf(f, "  expected fixed points: %Qd = %.6g (fair: exactly 1)\n", s.fixed,
                mpq_get_d(s.fixed));
    if (s.full && !s.uniform) {
        if (e->n <= LIST_ALL_MAX_N) {
            fputs("  orderings (rank, ordering, probability):\n", f);
            for (uint64_t r = 0; r < e->nperm; r++)
                text_ordering_line(f, e, r);
        } else {
            text_extremes(f, e);
        }
    }
    text_matrix(f, e, &s);
    audit_exact_summary_clear(&s);
}

/* ---- text: statistical mode ----------------------------------------------- */

/* The deviations a size ruled out (audit_verdict.c), in words. */
static void text_ruled_out(FILE *f, const audit_size_result *sz, double power)
{
    if (!(sz->ruled_out_bias < INFINITY) || sz->acc == NULL)
        return;
    const size_t b = sz->acc->blocks;
    fprintf(f, "  ruled out with %g%% power: an item-position bias of %.2g%% or more (%s)",
            100.0 * power, 100.0 * sz->ruled_out_bias,
            b == sz->n ? "any item, any position" : "over blocks of items and positions");
    if (isfinite(sz->ruled_out_tv))
        fprintf(f, "; a total variation of %.2g%% or more among the %llu orderings",
                100.0 * sz->ruled_out_tv, (unsigned long long)sz->acc->nperm);
    fputc('\n', f);
}

static void text_tests(FILE *f, const audit_size_result *sz, double power)
{
    fprintf(f, "n = %zu: %llu trials\n", sz->n, (unsigned long long)sz->trials);
    fprintf(f, "  %-20s %12s %9s %10s %10s %4s %8s  %s\n", "test", "statistic", "df",
            "p-value", "adjusted", "99%", "detect-w", "note");
    const audit_test *best = NULL;
    for (int i = 0; i < AUDIT_T_COUNT; i++) {
        const audit_test *t = &sz->tests[i];
        if (!t->applicable) {
            fprintf(f, "  %-20s %12s %9s %10s %10s %4s %8s  %s\n", t->name, "-", "-", "-",
                    "-", "-", "-", t->note);
            continue;
        }
        fprintf(f, "  %-20s %12.6g ", t->name, t->stat);
        if (t->df > 0)
            fprintf(f, "%9.0f ", t->df);
        else
            fprintf(f, "%9s ", "-");
        print_pvalue(f, t->pvalue);
        fputc(' ', f);
        print_pvalue(f, t->adjusted);
        fprintf(f, " %4s", audit_level_pass(t) ? "pass" : "FAIL");
        if (isfinite(t->detectable_w))
            fprintf(f, " %8.3g", t->detectable_w);
        else
            fprintf(f, " %8s", "-");
        fprintf(f, "  %s\n", t->note);
        if (isfinite(t->detectable_w) && (best == NULL || t->detectable_w < best->detectable_w))
            best = t;
    }
    if (best != NULL)
        fprintf(f, "  smallest deviation these trials could find: w = %.3g (%s)\n",
                best->detectable_w, best->name);
    text_ruled_out(f, sz, power);
}

static void text_command(FILE *f, const audit_result *r)
{
    fprintf(f, "command: %.3f ms per trial (wall clock, parallel); timeout %.3g s (%s); "
               "output limit %llu bytes\n",
            r->per_trial_us / 1000.0, r->timeout,
            r->timeout_derived ? "derived from the first trials" : "--timeout",
            (unsigned long long)r->max_output);
    if (r->timed_out || r->over_output)
        fprintf(f, "killed: %llu trials at the timeout, %llu over the output limit\n",
                (unsigned long long)r->timed_out, (unsigned long long)r->over_output);
}

void audit_report_text(FILE *f, const audit_result *r)
{
    fputs("riffle audit: ", f);
    audit_fput_text(f, r->subject);
    fprintf(f, " (%s, %s", r->kind, r->mode);
    if (strcmp(r->mode, "statistical") == 0 && r->algo != NULL)
        fprintf(f, ", seed %llu", (unsigned long long)r->seed);
    if (strcmp(r->mode, "statistical") == 0)
        fprintf(f, ", alpha %g", r->alpha);
    fputs(")\n", f);
    if (r->algo != NULL)
        fprintf(f, "  %s%s\n", r->algo->summary,
                r->algo->fair ? "" : "  [DELIBERATELY WRONG reference implementation]");
    for (size_t i = 0; i < r->nsizes; i++) {
        if (r->sizes[i].ex != NULL)
            text_exact(f, &r->sizes[i]);
        else
            text_tests(f, &r->sizes[i], r->power);
    }
    if (r->stat_known && !r->sequential)
        fprintf(f, "power: detect-w is the deviation (Cohen's w) each test would find "
                   "with %g%% power at level %.3g; \"fair\" needs w <= %g at every size\n",
                100.0 * r->power, r->test_level, r->promised_w);
    if (r->stat_known && r->sequential)
        fprintf(f, "sequential: look %zu, level %.3g = alpha / (%zu x %zu); detect-w is the "
                   "deviation (Cohen's w) each test would find with %g%% power at level "
                   "%.3g; the audit stops when a test rejects or an item-position bias of "
                   "%g%% is ruled out at every size\n",
                r->look, r->look_level, r->look, r->look + 1, 100.0 * r->power,
                r->test_level, 100.0 * r->deviation);
    if (strcmp(r->kind, "command") == 0 && strcmp(r->mode, "statistical") == 0)
        text_command(f, r);
    if (r->time_limited)
        fprintf(f, "time limit: %g s reached; judged on the trials gathered\n",
                r->time_limit);
    if (r->broken) {
        fprintf(f, "broken outputs: %llu (first: ", (unsigned long long)r->broken);
        audit_fput_text(f, r->broken_example ? r->broken_example : "");
        fputs(")\n", f);
    }
    if (r->cert != NULL)
        audit_cert_text(f, r, r->cert);
    fprintf(f, "verdict: %s -- ", r->verdict);
    audit_fput_text(f, r->reason);
    fputc('\n', f);
}

/* ---- JSON ------------------------------------------------------------------ */

/* A JSON string (RFC 8259) that is always valid UTF-8: well-formed UTF-8
 * copied, control characters escaped, and each byte that is not part of a
 * well-formed character replaced by U+FFFD (docs/audit-json.md). */
static void json_str(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (s != NULL && *s) {
        const size_t len = audit_utf8_char(s);
        const unsigned c = *s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20 || c == 0x7F)
            fprintf(f, "\\u%04x", c);
        else if (len == 0)
            fputs("\\ufffd", f);
        else
            fwrite(s, 1, len, f);
        s += len ? len : 1;
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.17g", v);
}

static void json_mpz(FILE *f, const mpz_t z)
{
    gmp_fprintf(f, "\"%Zd\"", z);
}

/* {"fraction": "a/b", "value": d} */
static void json_frac(FILE *f, const mpq_t q)
{
    gmp_fprintf(f, "{\"fraction\": \"%Qd\", \"value\": ", q);
    json_num(f, mpq_get_d(q));
    fputc('}', f);
}

static void json_exact(FILE *f, const audit_exact *e)
{
    audit_exact_summary s;
    audit_exact_summarize(e, &s);
    const size_t n = e->n;
    fputs("{\"method\": ", f);
    json_str(f, e->method);
    fprintf(f, ", \"paths\": %llu, \"full\": %s, ", (unsigned long long)e->paths,
            s.full ? "true" : "false");
    if (s.full) {
        fprintf(f, "\"orderings\": %llu, \"support\": %llu, \"distinct\": %llu, ",
                (unsigned long long)e->nperm, (unsigned long long)s.support,
                (unsigned long long)s.distinct);
        fputs("\"min\": ", f);
        json_frac(f, s.min);
        fprintf(f, ", \"argmin\": %llu, \"max\": ", (unsigned long long)s.argmin);
        json_frac(f, s.max);
        fprintf(f, ", \"argmax\": %llu, \"median\": ", (unsigned long long)s.argmax);
        json_frac(f, s.median);
        fputs(", \"tv\": ", f);
        json_frac(f, s.tv);
        fprintf(f, ", \"uniform\": %s, \"denominator\": ", s.uniform ? "true" : "false");
        json_mpz(f, e->den);
        fputs(", \"numerators\": [", f);
        for (uint64_t r = 0; r < e->nperm; r++) {
            fputs(r ? ", " : "", f);
            json_mpz(f, e->num[r]);
        }
        fputs("], ", f);
    }
    fputs("\"fixed_points\": ", f);
    json_frac(f, s.fixed);
    fprintf(f, ", \"matrix_uniform\": %s, \"position_denominator\": ",
            s.matrix_uniform ? "true" : "false");
    json_mpz(f, e->pos_den);
    fputs(", \"position_numerators\": [", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", [" : "[", f);
        for (size_t p = 0; p < n; p++) {
            fputs(p ? ", " : "", f);
            json_mpz(f, e->pos_num[i * n + p]);
        }
        fputc(']', f);
    }
    fputs("]}", f);
    audit_exact_summary_clear(&s);
}

static void json_u64_array(FILE *f, const uint64_t *v, size_t count)
{
    fputc('[', f);
    for (size_t i = 0; i < count; i++)
        fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    fputc(']', f);
}

static void json_stat(FILE *f, const audit_size_result *sz)
{
    const audit_acc *a = sz->acc;
    fprintf(f, "{\"trials\": %llu, \"tests\": [", (unsigned long long)sz->trials);
    for (int i = 0; i < AUDIT_T_COUNT; i++) {
        const audit_test *t = &sz->tests[i];
        fputs(i ? ", {\"name\": " : "{\"name\": ", f);
        json_str(f, t->name);
        fprintf(f, ", \"applicable\": %s, \"statistic\": ", t->applicable ? "true" : "false");
        json_num(f, t->stat);
        fputs(", \"df\": ", f);
        json_num(f, t->df);
        fputs(", \"p_value\": ", f);
        json_num(f, t->pvalue);
        fputs(", \"adjusted_p\": ", f);
        json_num(f, t->adjusted);
        fputs(", \"level_99\": ", f);
        json_str(f, !t->applicable ? "not run" : audit_level_pass(t) ? "pass" : "fail");
        fputs(", \"detectable_w\": ", f);
        json_num(f, t->detectable_w);
        fputs(", \"note\": ", f);
        json_str(f, t->note);
        fputc('}', f);
    }
    fputs("], \"ruled_out\": {\"item_position_bias\": ", f);
    json_num(f, sz->ruled_out_bias);
    fputs(", \"total_variation\": ", f);
    json_num(f, sz->ruled_out_tv);
    fputc('}', f);
    if (a != NULL) {
        fprintf(f, ", \"blocks\": %zu, \"position_counts\": [", a->blocks);
        for (size_t i = 0; i < a->blocks; i++) {
            fputs(i ? ", " : "", f);
            json_u64_array(f, a->pos + i * a->blocks, a->blocks);
        }
        fputs("], \"fixed_point_counts\": ", f);
        json_u64_array(f, a->fixed, a->n + 1);
        fputs(", \"rising_sequence_counts\": ", f);
        json_u64_array(f, a->rising, a->n + 1);
        fputs(", \"succession_counts\": ", f);
        json_u64_array(f, a->succ, a->n + 1);
        fputs(", \"ordering_counts\": ", f);
        if (a->order != NULL)
            json_u64_array(f, a->order, a->nperm);
        else
            fputs("null", f);
        if (a->rules != NULL)
            audit_rules_json(f, a->rules);
    }
    fputc('}', f);
}

/* Statistical mode only (the exact-mode document is pinned as it is). */
static void json_power(FILE *f, const audit_result *r)
{
    fputs(", \"power\": {\"probability\": ", f);
    json_num(f, r->power);
    fputs(", \"test_level\": ", f);
    json_num(f, r->test_level);
    fputs(", \"promised_w\": ", f);
    json_num(f, r->promised_w);
    fputs(", \"trials_to_decide\": ", f);
    if (r->trials_to_decide)
        fprintf(f, "%llu", (unsigned long long)r->trials_to_decide);
    else
        fputs("null", f);
    fprintf(f, ", \"time_limited\": %s, \"design\": \"%s\", \"look\": %zu, \"look_level\": ",
            r->time_limited ? "true" : "false", r->sequential ? "sequential" : "fixed", r->look);
    json_num(f, r->look_level);
    fputs(", \"deviation\": ", f);
    json_num(f, r->sequential ? r->deviation : NAN);
    fputc('}', f);
}

void audit_report_json(FILE *f, const audit_result *r)
{
    fputs("{\"schema\": \"riffle-audit/1\", \"subject\": ", f);
    json_str(f, r->subject);
    fputs(", \"kind\": ", f);
    json_str(f, r->kind);
    fputs(", \"mode\": ", f);
    json_str(f, r->mode);
    fputs(", \"fair_by_design\": ", f);
    fputs(r->algo == NULL ? "null" : r->algo->fair ? "true" : "false", f);
    fputs(", \"param\": ", f);
    if (r->algo != NULL && r->algo->param_name != NULL)
        fprintf(f, "%u", r->param);
    else
        fputs("null", f);
    /* The seed matters only for in-process trials. */
    if (strcmp(r->mode, "statistical") == 0 && r->algo != NULL)
        fprintf(f, ", \"seed\": %llu, \"alpha\": ", (unsigned long long)r->seed);
    else
        fputs(", \"seed\": null, \"alpha\": ", f);
    json_num(f, r->alpha);
    fputs(", \"verdict\": ", f);
    json_str(f, r->verdict);
    fputs(", \"reason\": ", f);
    json_str(f, r->reason);
    fprintf(f, ", \"exit_status\": %d, \"seconds\": ", audit_exit_status(r->verdict));
    json_num(f, r->seconds);
    if (r->stat_known)
        json_power(f, r);
    fputs(", \"command\": ", f);
    if (strcmp(r->kind, "command") == 0) {
        fputs("{\"per_trial_ms\": ", f);
        json_num(f, r->per_trial_us / 1000.0);
        fprintf(f, ", \"broken\": %llu, \"example\": ", (unsigned long long)r->broken);
        json_str(f, r->broken_example ? r->broken_example : "");
        if (strcmp(r->mode, "statistical") == 0) {
            fputs(", \"timeout_s\": ", f);
            json_num(f, r->timeout);
            fprintf(f, ", \"timeout_derived\": %s, \"max_output\": %llu, "
                       "\"timed_out\": %llu, \"over_output\": %llu",
                    r->timeout_derived ? "true" : "false", (unsigned long long)r->max_output,
                    (unsigned long long)r->timed_out, (unsigned long long)r->over_output);
        }
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs(", \"certification\": ", f);
    if (r->cert != NULL)
        audit_cert_json(f, r, r->cert);
    else
        fputs("null", f);
    fputs(", \"sizes\": [", f);
    for (size_t i = 0; i < r->nsizes; i++) {
        const audit_size_result *sz = &r->sizes[i];
        fprintf(f, "%s{\"n\": %zu, \"exact\": ", i ? ", " : "", sz->n);
        if (sz->ex != NULL)
            json_exact(f, sz->ex);
        else
            fputs("null", f);
        fputs(", \"statistical\": ", f);
        if (sz->ex == NULL)
            json_stat(f, sz);
        else
            fputs("null", f);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

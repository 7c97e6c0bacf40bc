/*
 * audit_html.c -- the self-contained HTML report (--report=FILE.html): no
 * scripts, no external files; figures are inline SVG, as in the Dr. Dobb's
 * "Algorithm Alley" study (Jan 2000):
 *   1. frequency of every ordering in rank order (1 = uniform),
 *   2. the same values sorted,
 *   3. the item-to-position heatmap (observed / expected; blue below, red above).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "audit_cert.h"
#include "audit_rules.h"
#include "audit_verdict.h"

#define FIG_W 720.0
#define FIG_H 220.0
#define PAD 36.0
#define HEAT_CELL_MAX 28.0
#define BAR_MAX 5040 /* one bar per ordering up to 7! */

/* Text into HTML: markup characters as entities; control characters and
 * bytes that are not UTF-8 (a command's output may hold either) shown as
 * \xHH, so that the page is always well-formed UTF-8. */
static void html_text(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    while (s != NULL && *s) {
        const size_t len = audit_utf8_char(s);
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if (len == 0 || *s < 0x20 || *s == 0x7F)
                fprintf(f, "\\x%02x", *s);
            else
                fwrite(s, 1, len, f);
        }
        s += len ? len : 1;
    }
}

static int dbl_cmp(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Ratio of each ordering's frequency to uniform, or NULL if not known. */
static double *ordering_ratios(const audit_size_result *sz, uint64_t *count)
{
    double *v = NULL;
    if (sz->ex != NULL && sz->ex->num != NULL) {
        const audit_exact *e = sz->ex;
        *count = e->nperm;
        if ((v = malloc(e->nperm * sizeof *v)) != NULL)
            for (uint64_t r = 0; r < e->nperm; r++)
                v[r] = audit_ratio_double(e->num[r], e->den) * (double)e->nperm;
    } else if (sz->acc != NULL && sz->acc->order != NULL && sz->acc->trials > 0) {
        const audit_acc *a = sz->acc;
        *count = a->nperm;
        if ((v = malloc(a->nperm * sizeof *v)) != NULL)
            for (uint64_t r = 0; r < a->nperm; r++)
                v[r] = (double)a->order[r] * (double)a->nperm / (double)a->trials;
    }
    return v;
}

static void svg_axes(FILE *f, double top, const char *xlabel)
{
    const double y1 = PAD + (FIG_H - 2 * PAD) * (1.0 - 1.0 / top);
    fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#333'/>\n", PAD,
            FIG_H - PAD, FIG_W - PAD / 2, FIG_H - PAD);
    fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#333'/>\n", PAD, PAD, PAD,
            FIG_H - PAD);
    fprintf(f, "<line x1='%g' y1='%.2f' x2='%g' y2='%.2f' stroke='#2a7' "
               "stroke-dasharray='4 3'/>\n", PAD, y1, FIG_W - PAD / 2, y1);
    fprintf(f, "<text x='4' y='%.2f' font-size='11'>1</text>\n", y1 + 4);
    fprintf(f, "<text x='4' y='%g' font-size='11'>%.3g</text>\n", PAD + 4, top);
    fprintf(f, "<text x='4' y='%g' font-size='11'>0</text>\n", FIG_H - PAD + 4);
    fprintf(f, "<text x='%g' y='%g' font-size='12' text-anchor='middle'>%s</text>\n",
            FIG_W / 2, FIG_H - 8, xlabel);
}

/* One figure of values v[0..count) (ratios to uniform) as vertical bars. */
static void svg_bars(FILE *f, const double *v, uint64_t count, const char *title,
                     const char *xlabel)
{
    double top = 1.0;
    for (uint64_t i = 0; i < count; i++)
        top = fmax(top, v[i]);
    top *= 1.05;
    fprintf(f, "<figure><figcaption>%s</figcaption>\n<svg xmlns='http://www.w3.org/2000/svg' "
               "viewBox='0 0 %g %g' width='%g' height='%g'>\n", title, FIG_W, FIG_H,
            FIG_W, FIG_H);
    const double w = FIG_W - 1.5 * PAD, h = FIG_H - 2 * PAD;
    if (count <= BAR_MAX) {
        fputs("<path fill='none' stroke='#36c' stroke-width='1' d='", f);
        for (uint64_t i = 0; i < count; i++) {
            const double x = PAD + w * ((double)i + 0.5) / (double)count;
            fprintf(f, "M%.1f %.1fV%.1f", x, FIG_H - PAD, FIG_H - PAD - h * v[i] / top);
        }
        fputs("'/>\n", f);
    } else {
        /* More orderings than pixels (n! up to 362880): one column per pixel
         * showing the largest (light) and smallest (dark) value it covers. */
        const size_t cols = (size_t)w;
        for (int pass = 0; pass < 2; pass++) {
            fprintf(f, "<path fill='none' stroke='%s' stroke-width='1' d='",
                    pass == 0 ? "#9bd" : "#236");
            for (size_t c = 0; c < cols; c++) {
                const uint64_t lo = count * c / cols, hi = count * (c + 1) / cols;
                double ext = v[lo];
                for (uint64_t i = lo; i < hi; i++)
                    ext = pass == 0 ? fmax(ext, v[i]) : fmin(ext, v[i]);
                fprintf(f, "M%.1f %.1fV%.1f", PAD + (double)c + 0.5, FIG_H - PAD,
                        FIG_H - PAD - h * ext / top);
            }
            fputs("'/>\n", f);
        }
    }
    svg_axes(f, top, xlabel);
    fputs("</svg></figure>\n", f);
}

static void heat_color(double ratio, double span, char *buf, size_t len)
{
    double d = (ratio - 1.0) / (span > 0 ? span : 1.0);
    d = fmax(-1.0, fmin(1.0, d));
    const int fade = (int)lround(255.0 * (1.0 - fabs(d)));
    if (d >= 0)
        snprintf(buf, len, "rgb(255,%d,%d)", fade, fade);
    else
        snprintf(buf, len, "rgb(%d,%d,255)", fade, fade);
}

/* Observed / expected ratio of each matrix cell (b x b). */
static double *matrix_ratios(const audit_size_result *sz, size_t *b)
{
    double *m = NULL;
    if (sz->ex != NULL) {
        const audit_exact *e = sz->ex;
        const size_t n = e->n;
        *b = n;
        if ((m = malloc(n * n * sizeof *m)) != NULL)
            for (size_t i = 0; i < n * n; i++)
                m[i] = audit_ratio_double(e->pos_num[i], e->pos_den) * (double)n;
    } else if (sz->acc != NULL && sz->acc->trials > 0) {
        const audit_acc *a = sz->acc;
        const size_t k = a->blocks, n = a->n;
        *b = k;
        if ((m = malloc(k * k * sizeof *m)) != NULL)
            for (size_t i = 0; i < k; i++)
                for (size_t j = 0; j < k; j++)
                    m[i * k + j] = (double)a->pos[i * k + j] * (double)n /
                                   ((double)a->trials * audit_block_size(i, k, n) *
                                    audit_block_size(j, k, n));
    }
    return m;
}

static void svg_heatmap(FILE *f, const audit_size_result *sz)
{
    size_t b = 0;
    double *m = matrix_ratios(sz, &b);
    if (m == NULL || b == 0) {
        free(m);
        return;
    }
    double span = 0.0;
    for (size_t i = 0; i < b * b; i++)
        span = fmax(span, fabs(m[i] - 1.0));
    const double cell = fmin(HEAT_CELL_MAX, 480.0 / (double)b), side = cell * (double)b;
    fprintf(f, "<figure><figcaption>Item-to-position %s: observed / uniform (white = 1, "
               "red up to %.3g, blue down to %.3g); rows: items, columns: positions"
               "</figcaption>\n<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 %g %g' "
               "width='%g' height='%g'>\n",
            sz->acc != NULL && sz->acc->blocks != sz->n ? "blocks" : "matrix", 1.0 + span,
            1.0 - span, side + 40, side + 40, side + 40, side + 40);
    char color[32];
    for (size_t i = 0; i < b; i++) {
        for (size_t j = 0; j < b; j++) {
            heat_color(m[i * b + j], span, color, sizeof color);
            fprintf(f, "<rect x='%.2f' y='%.2f' width='%.2f' height='%.2f' fill='%s'>"
                       "<title>item %zu, position %zu: %.4f</title></rect>\n",
                    30 + cell * (double)j, 10 + cell * (double)i, cell, cell, color, i + 1,
                    j + 1, m[i * b + j]);
        }
    }
    fprintf(f, "<rect x='30' y='10' width='%.2f' height='%.2f' fill='none' stroke='#333'/>\n",
            side, side);
    fprintf(f, "<text x='2' y='22' font-size='11'>1</text><text x='2' y='%.2f' "
               "font-size='11'>%zu</text>\n", side + 8, b);
    fputs("</svg></figure>\n", f);
    free(m);
}

static void html_tests(FILE *f, const audit_size_result *sz)
{
    fputs("<table><tr><th>test</th><th>statistic</th><th>df</th><th>p-value</th>"
          "<th>adjusted</th><th>99 %</th><th>detectable w</th><th>note</th></tr>\n", f);
    for (int i = 0; i < AUDIT_T_COUNT; i++) {
        const audit_test *t = &sz->tests[i];
        fprintf(f, "<tr><td>%s</td>", t->name);
        if (t->applicable)
            fprintf(f, "<td>%.6g</td><td>%.0f</td><td>%.3g</td><td>%.3g</td><td>%s</td>",
                    t->stat, t->df, t->pvalue, t->adjusted,
                    audit_level_pass(t) ? "pass" : "FAIL");
        else
            fputs("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>", f);
        if (isfinite(t->detectable_w))
            fprintf(f, "<td>%.3g</td>", t->detectable_w);
        else
            fputs("<td>-</td>", f);
        fputs("<td>", f);
        html_text(f, t->note);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (sz->ruled_out_bias < INFINITY) {
        fprintf(f, "<p>Ruled out with %g%% power: an item-position bias of %.2g%% or more",
                100.0 * AUDIT_POWER, 100.0 * sz->ruled_out_bias);
        if (isfinite(sz->ruled_out_tv))
            fprintf(f, "; a total variation of %.2g%% or more among the orderings",
                    100.0 * sz->ruled_out_tv);
        fputs(".</p>\n", f);
    }
}

static void html_exact(FILE *f, const audit_exact *e)
{
    audit_exact_summary s;
    audit_exact_summarize(e, &s);
    fprintf(f, "<table><tr><th>method</th><td>%s</td></tr>\n", e->method);
    if (s.full)
        gmp_fprintf(f, "<tr><th>orderings</th><td>%llu (reachable %llu, distinct "
                       "probabilities %llu)</td></tr>\n<tr><th>min / max</th><td>%Qd / "
                       "%Qd</td></tr>\n<tr><th>total variation</th><td>%Qd = %.6g</td></tr>\n",
                    (unsigned long long)e->nperm, (unsigned long long)s.support,
                    (unsigned long long)s.distinct, s.min, s.max, s.tv, mpq_get_d(s.tv));
    fprintf(f, "<tr><th>expected fixed points</th><td>%.6g (fair: 1)</td></tr></table>\n",
            mpq_get_d(s.fixed));
    audit_exact_summary_clear(&s);
}

static void html_size(FILE *f, const audit_size_result *sz)
{
    fprintf(f, "<h2>n = %zu</h2>\n", sz->n);
    if (sz->ex != NULL)
        html_exact(f, sz->ex);
    else {
        fprintf(f, "<p>%llu trials</p>\n", (unsigned long long)sz->trials);
        html_tests(f, sz);
        if (sz->acc != NULL && sz->acc->rules != NULL)
            audit_rules_html(f, sz->acc->rules);
    }
    uint64_t count = 0;
    double *v = ordering_ratios(sz, &count);
    if (v != NULL) {
        svg_bars(f, v, count, "Frequency of each ordering / uniform, in rank order",
                 "orderings by lexicographic rank");
        qsort(v, count, sizeof *v, dbl_cmp);
        svg_bars(f, v, count, "The same frequencies, sorted", "orderings, sorted");
        free(v);
    }
    svg_heatmap(f, sz);
}

int audit_report_html(FILE *f, const audit_result *r)
{
    const int fair = strcmp(r->verdict, "fair") == 0;
    fputs("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>\n<title>riffle "
          "audit: ", f);
    html_text(f, r->subject);
    fputs("</title>\n<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;"
          "color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid "
          "#bbb;padding:.2em .5em;text-align:left}figure{margin:1em 0}figcaption{font-size:"
          ".9em;color:#444}.verdict{font-size:1.3em;padding:.4em;border-radius:4px}"
          ".fair{background:#dfd}.biased{background:#fdd}.inconclusive{background:#ffd}</style>\n</head><body>\n<h1>riffle "
          "audit: ", f);
    html_text(f, r->subject);
    fprintf(f, "</h1>\n<p>%s, %s mode", r->kind, r->mode);
    if (strcmp(r->mode, "statistical") == 0)
        fprintf(f, ", seed %llu, alpha %g", (unsigned long long)r->seed, r->alpha);
    fputs("</p>\n", f);
    if (r->algo != NULL) {
        fputs("<p>", f);
        html_text(f, r->algo->summary);
        if (!r->algo->fair)
            fputs(" <strong>(deliberately wrong reference implementation)</strong>", f);
        fputs("</p>\n", f);
    }
    fprintf(f, "<p class='verdict %s'>verdict: <strong>%s</strong> &mdash; ",
            fair ? "fair" : strcmp(r->verdict, "inconclusive") == 0 ? "inconclusive" : "biased",
            r->verdict);
    html_text(f, r->reason);
    fputs("</p>\n", f);
    if (r->broken) {
        fprintf(f, "<p>broken outputs: %llu; first: ", (unsigned long long)r->broken);
        html_text(f, r->broken_example);
        fputs("</p>\n", f);
    }
    for (size_t i = 0; i < r->nsizes; i++)
        html_size(f, &r->sizes[i]);
    if (r->cert != NULL)
        audit_cert_html(f, r, r->cert);
    fputs("<p><small>generated by riffle audit</small></p>\n</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}

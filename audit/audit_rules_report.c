/*
 * audit_rules_report.c -- the counts behind the rules' tests in the JSON and
 * HTML reports (audit_rules.h): what a lab reads beside the p-values, the
 * first hands by category against their exact expectation above all.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit_rules.h"

static void json_counts(FILE *f, const char *name, const uint64_t *c, size_t cells)
{
    fprintf(f, ", \"%s\": ", name);
    if (cells == 0) {
        fputs("null", f);
        return;
    }
    fputc('[', f);
    for (size_t i = 0; i < cells; i++)
        fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)c[i]);
    fputc(']', f);
}

void audit_rules_json(FILE *f, const audit_rules_acc *r)
{
    audit_rules_counts c;
    audit_rules_get_counts(r, &c);
    fprintf(f, ", \"pairs_of_games\": %llu", (unsigned long long)c.pairs);
    json_counts(f, "runs_counts", c.runs, c.runs_cells);
    fputs(", \"serial_z\": [", f);
    double *z = malloc((c.n + 1) * sizeof *z);
    if (z != NULL) {
        audit_rules_serial_z(r, z);
        for (size_t p = 0; p < c.n; p++) {
            fputs(p ? ", " : "", f);
            if (isfinite(z[p]))
                fprintf(f, "%.6g", z[p]);
            else
                fputs("null", f);
        }
    }
    free(z);
    fputc(']', f);
    json_counts(f, "poker_counts", c.poker, c.poker_cells);
    json_counts(f, "gap_counts", c.gaps, c.gap_cells);
    json_counts(f, "coupon_counts", c.coupon, c.coupon_cells);
}

void audit_rules_html(FILE *f, const audit_rules_acc *r)
{
    audit_rules_counts c;
    audit_rules_get_counts(r, &c);
    uint64_t hands = 0;
    for (size_t i = 0; i < c.poker_cells; i++)
        hands += c.poker[i];
    if (hands == 0)
        return;
    double p[AUDIT_POKER_HANDS];
    audit_law_poker(c.ranks, p);
    fprintf(f, "<table><caption>The first five cards of %llu deals (4 suits x %zu ranks)"
               "</caption>\n<tr><th>hand</th><th>dealt</th><th>expected</th>"
               "<th>probability</th></tr>\n", (unsigned long long)hands, c.ranks);
    for (int i = AUDIT_POKER_HANDS - 1; i >= 0; i--)
        fprintf(f, "<tr><td>%s</td><td>%llu</td><td>%.1f</td><td>%.6g</td></tr>\n",
                audit_poker_name(i), (unsigned long long)c.poker[i], p[i] * (double)hands,
                p[i]);
    fputs("</table>\n", f);
}

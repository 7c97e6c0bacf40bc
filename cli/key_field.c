/* key_field.c -- a record's key field (key_field.h). */
#include <string.h>

#include "cli.h"
#include "key_field.h"

int key_field_parse(const char *cmd, const char *what, const char *arg, size_t *field)
{
    uint64_t v;
    int over;
    if (cli_parse_u64(arg, &v, &over) != 0 || over || v == 0 || v >= SIZE_MAX)
        return cli_usage(cmd, "invalid %s field %s", what, cli_quote(arg));
    *field = (size_t)v;
    return CLI_CONTINUE;
}

int key_field_parse_delim(const char *cmd, const char *arg, unsigned char *delim)
{
    if (strlen(arg) != 1)
        return cli_usage(cmd, "the delimiter must be a single character");
    *delim = (unsigned char)arg[0];
    return CLI_CONTINUE;
}

void key_field_csv(struct key_field *k, const char *column, int delim_given)
{
    k->csv = 1;
    k->column = column;
    k->field = KEY_FIELD_BY_NAME;
    if (!delim_given)
        k->delim = ',';
}

/* The field of a delimited record that starts at p: [*b, *e) its text (for
 * a CSV field in quotes, what lies between them); returns where the next
 * field's delimiter is, or end. */
static const unsigned char *next_field(const struct key_field *k, const unsigned char *p,
                                       const unsigned char *end, const unsigned char **b,
                                       const unsigned char **e)
{
    const int quoted = k->csv && p < end && *p == '"';
    *b = p;
    if (quoted) {
        /* RFC 4180 section 2, rules 5-7: the field ends at a quote that is
         * not doubled. */
        const unsigned char *q = p + 1;
        while ((q = memchr(q, '"', (size_t)(end - q))) && q + 1 < end && q[1] == '"')
            q += 2;
        *b = p + 1;
        *e = q ? q : end;
        p = q ? q + 1 : end;
    }
    const unsigned char *d = memchr(p, k->delim, (size_t)(end - p));
    if (!quoted)
        *e = d ? d : end;
    return d ? d : end;
}

int key_field_find(const struct key_field *k, const unsigned char *rec, size_t len,
                   const unsigned char **key, size_t *key_len)
{
    const unsigned char *p = rec, *end = rec + len;
    if (k->csv && end > p && end[-1] == '\r')
        end--;
    for (size_t f = 1;; f++) {
        const unsigned char *b, *e;
        p = next_field(k, p, end, &b, &e);
        if (f == k->field) {
            *key = b;
            *key_len = (size_t)(e - b);
            return 0;
        }
        if (p == end)
            return -1;
        p++;
    }
}

/* Whether the CSV field text t[0..n) (quoted: doubled quotes stand for one)
 * reads `name`. */
static int text_is(const unsigned char *t, size_t n, int quoted, const char *name)
{
    size_t i = 0;
    for (; *name; name++, i++) {
        if (i >= n || t[i] != (unsigned char)*name)
            return 0;
        if (quoted && t[i] == '"' && (++i >= n || t[i] != '"'))
            return 0;
    }
    return i == n;
}

/* The column named k->column among the header's fields: its number, or 0. */
static size_t column_named(const struct key_field *k, const unsigned char *hdr, size_t len)
{
    const unsigned char *p = hdr, *end = hdr + len;
    if (end > p && end[-1] == '\r')
        end--;
    for (size_t f = 1;; f++) {
        const unsigned char *b, *e;
        const int quoted = p < end && *p == '"';
        p = next_field(k, p, end, &b, &e);
        if (text_is(b, (size_t)(e - b), quoted, k->column))
            return f;
        if (p == end)
            return 0;
        p++;
    }
}

int key_field_resolve(struct key_field *k, const unsigned char *hdr, size_t len,
                      const char *file, const char *what)
{
    if (k->field != KEY_FIELD_BY_NAME)
        return 0;
    uint64_t v;
    int over;
    size_t f = hdr ? column_named(k, hdr, len) : 0;
    if (f == 0 && cli_parse_u64(k->column, &v, &over) == 0 && !over && v > 0 && v < SIZE_MAX)
        f = (size_t)v;
    if (f == 0) {
        if (hdr)
            cli_error("%s: no %s column %s in the CSV header", cli_quote_file(file), what,
                      cli_quote(k->column));
        else
            cli_error("%s: the %s column %s is a name, but there is no header "
                      "(give --header=1, or a column number)",
                      cli_quote_file(file), what, cli_quote(k->column));
        return -1;
    }
    k->field = f;
    return 0;
}

void key_field_missing(const struct key_field *k, const char *name, unsigned long long line)
{
    if (k->csv)
        cli_error("%s:%llu: missing key column %s", cli_quote_file(name), line,
                  cli_quote(k->column));
    else
        cli_error("%s:%llu: missing key field %zu", cli_quote_file(name), line, k->field);
}

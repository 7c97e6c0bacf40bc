/* sample_input.c -- the records `riffle sample` reads (sample_input.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample_input.h"

/* Whether an odd number of double quotes lies in p[0..n): reading them
 * flips between inside and outside quotes (RFC 4180 section 2; a doubled
 * quote flips twice). */
static int flips(const char *p, size_t n)
{
    int odd = 0;
    for (const char *q = p; (q = memchr(q, '"', n - (size_t)(q - p))) != NULL; q++)
        odd ^= 1;
    return odd;
}

/* A record of one file grows line by line until it ends outside quotes. */
struct csv_rec {
    char *buf;
    size_t len, cap;
};

static int rec_append(struct csv_rec *r, const char *p, size_t n)
{
    if (n > r->cap - r->len) {
        size_t cap = r->cap ? r->cap : 256;
        while (n > cap - r->len) {
            if (cap > SIZE_MAX / 2)
                return -1;
            cap *= 2;
        }
        char *b = realloc(r->buf, cap);
        if (!b)
            return -1;
        r->buf = b;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, p, n);
    r->len += n;
    return 0;
}

static int csv_in_file(const char *name, cli_record_fn *fn, void *ctx, uint64_t *pos)
{
    const int is_stdin = strcmp(name, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(name, "r");
    if (!f) {
        cli_error("%s: %s", cli_quote_file(name), strerror(errno));
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    struct csv_rec rec = {0};
    uint64_t lines = 0, first = 1;
    int quoted = 0, bad = 0;
    while (!bad && (got = getdelim(&line, &cap, '\n', f)) >= 0) {
        if (rec.len == 0)
            first = lines + 1;
        lines++;
        quoted ^= flips(line, (size_t)got);
        if (rec_append(&rec, line, (size_t)got) != 0) {
            cli_error("memory exhausted");
            bad = 1;
        } else if (!quoted) {
            const size_t len = rec.len && rec.buf[rec.len - 1] == '\n' ? rec.len - 1 : rec.len;
            bad = fn(ctx, rec.buf, len, (*pos)++, name, first) != 0;
            rec.len = 0;
        }
    }
    if (!bad && ferror(f)) {
        cli_read_error(name, errno ? errno : EIO);
        bad = 1;
    }
    if (!bad && quoted) {
        cli_error("%s: unterminated quote in the CSV record starting at line %llu",
                  cli_quote_file(name), (unsigned long long)first);
        bad = 1;
    }
    free(line);
    free(rec.buf);
    if (is_stdin)
        clearerr(f);
    else
        fclose(f);
    return bad;
}

int cli_each_csv_record(char **files, int n_files, cli_record_fn *fn, void *ctx)
{
    uint64_t pos = 0;
    if (n_files == 0)
        return csv_in_file("-", fn, ctx, &pos);
    for (int i = 0; i < n_files; i++)
        if (csv_in_file(files[i], fn, ctx, &pos) != 0)
            return 1;
    return 0;
}

/* A header record: kept with its delimiter; the first one names the key's
 * column. */
static int keep_header(struct sample_input *in, const char *rec, size_t len, uint64_t pos,
                       const char *name)
{
    if (pos == 0 && in->key &&
        key_field_resolve(in->key, (const unsigned char *)rec, len, name, in->key_what) != 0)
        return 1;
    if (len + 1 > in->head_cap - in->head_len) {
        size_t cap = in->head_cap ? in->head_cap : 256;
        while (len + 1 > cap - in->head_len)
            cap *= 2;
        unsigned char *h = realloc(in->head, cap);
        if (!h) {
            cli_error("memory exhausted");
            return 1;
        }
        in->head = h;
        in->head_cap = cap;
    }
    memcpy(in->head + in->head_len, rec, len);
    in->head[in->head_len + len] = in->delim;
    in->head_len += len + 1;
    return 0;
}

static int each(void *ctx, char *rec, size_t len, uint64_t pos, const char *name, uint64_t line)
{
    struct sample_input *in = ctx;
    if (pos < in->header)
        return keep_header(in, rec, len, pos, name);
    if (pos == in->header && in->key &&
        key_field_resolve(in->key, NULL, 0, name, in->key_what) != 0)
        return 1;
    return in->fn(in->ctx, rec, len, pos - in->header, name, line);
}

int sample_input_each(struct sample_input *in, cli_record_fn *fn, void *ctx)
{
    in->fn = fn;
    in->ctx = ctx;
    return in->csv ? cli_each_csv_record(in->files, in->n_files, each, in)
                   : cli_each_record(in->files, in->n_files, in->delim, each, in);
}

void sample_input_put_header(const struct sample_input *in, rf_writer *w)
{
    if (in->head_len)
        rf_writer_put(w, in->head, in->head_len);
}

void sample_input_free(struct sample_input *in)
{
    free(in->head);
    in->head = NULL;
    in->head_len = in->head_cap = 0;
}

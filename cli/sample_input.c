/* sample_input.c -- the records `riffle sample` reads (sample_input.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decompress.h"
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

/* The records of one stream: lines (delim), or CSV records growing line by
 * line until they end outside quotes.  *pos counts on across files. */
static int each_in_stream(FILE *f, const char *name, int csv, unsigned char delim,
                          cli_record_fn *fn, void *ctx, uint64_t *pos)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    struct csv_rec rec = {0};
    uint64_t lines = 0, first = 1;
    int quoted = 0, bad = 0;
    while (!bad && (got = getdelim(&line, &cap, csv ? '\n' : delim, f)) >= 0) {
        size_t len = (size_t)got;
        lines++;
        if (!csv) {
            if (len && line[len - 1] == (char)delim)
                len--;
            bad = fn(ctx, line, len, (*pos)++, name, lines) != 0;
            continue;
        }
        if (rec.len == 0)
            first = lines;
        quoted ^= flips(line, len);
        if (rec_append(&rec, line, len) != 0) {
            cli_error("memory exhausted");
            bad = 1;
        } else if (!quoted) {
            len = rec.len && rec.buf[rec.len - 1] == '\n' ? rec.len - 1 : rec.len;
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
    return bad;
}

/* Input `in` (a name, or a descriptor: standard input, a decompressed
 * input's pipe) as a stream. */
static int each_in_input(const rf_engine_input *in, int csv, unsigned char delim,
                         cli_record_fn *fn, void *ctx, uint64_t *pos)
{
    const int is_stdin = in->fd == STDIN_FILENO;
    const int fd = in->fd >= 0 ? (is_stdin ? STDIN_FILENO : dup(in->fd)) : -1;
    FILE *f = is_stdin ? stdin : fd >= 0 ? fdopen(fd, "r") : fopen(in->name, "r");
    if (!f) {
        cli_error("%s: %s", cli_quote_file(in->name), strerror(errno));
        if (fd > STDIN_FILENO)
            close(fd);
        return 1;
    }
    const int bad = each_in_stream(f, in->name, csv, delim, fn, ctx, pos);
    if (is_stdin)
        clearerr(f);
    else
        fclose(f);
    return bad;
}

/* Every input in turn, compressed ones decompressed (decompress.h): a
 * corrupt one fails the run once it was read. */
static int each_input(const struct sample_input *in, cli_record_fn *fn, void *ctx)
{
    const size_t n = in->n_files > 0 ? (size_t)in->n_files : 1;
    rf_engine_input *v = malloc(n * sizeof *v);
    struct cli_inflow *flow = NULL;
    uint64_t pos = 0;
    int bad = 1;
    if (!v) {
        cli_error("memory exhausted");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = in->n_files > 0 ? in->files[i] : "-";
        v[i] = strcmp(name, "-") == 0 ? rf_engine_input_fd(STDIN_FILENO, "-")
                                      : rf_engine_input_path(name);
    }
    if (inflow_start(&flow, v, n) == 0) {
        bad = 0;
        for (size_t i = 0; i < n && !bad; i++)
            if (!v[i].data) /* else a descriptor given again: read once */
                bad = each_in_input(&v[i], in->csv, in->delim, fn, ctx, &pos);
        if (!bad)
            bad = inflow_check(flow) != 0;
    }
    inflow_end(flow);
    free(v);
    return bad;
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
    return each_input(in, each, in);
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

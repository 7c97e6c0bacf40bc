/*
 * nums_tokens.c -- what the number subcommands (perm, rank, unrank) share:
 * reading blank-separated tokens from standard input, and the final write
 * check.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_numbers.h"

void nums_tokens_init(struct nums_tokens *t, FILE *f, int commas)
{
    t->f = f;
    t->commas = commas;
    t->buf = NULL;
    t->cap = 0;
    t->line = 1;
    t->col = 0;
    t->last = 0;
    t->bad = -1;
    t->where[0] = '\0';
}

void nums_tokens_free(struct nums_tokens *t)
{
    free(t->buf);
    t->buf = NULL;
    t->cap = 0;
}

static int is_sep(const struct nums_tokens *t, int c)
{
    return isspace(c) || (t->commas && c == ',');
}

/* A byte no token may hold: NUL and the other control bytes that are not
 * blanks.  Without this check a NUL would end the token's C string early and
 * the bytes after it would vanish unseen ("0\0002" read as 0). */
static int is_foreign(int c)
{
    return c == 0x7f || (c < 0x20 && !isspace(c));
}

/* The next byte, counting lines and columns (bytes, from 1). */
static int next_byte(struct nums_tokens *t)
{
    const int c = getc(t->f);
    if (c == EOF)
        return c;
    if (t->last == '\n') {
        t->line++;
        t->col = 0;
    }
    t->col++;
    t->last = c;
    return c;
}

/* Append c at buf[len], growing the buffer; -1 if out of memory. */
static int put(struct nums_tokens *t, size_t len, int c)
{
    if (len + 1 >= t->cap) {
        char *b = cli_grow(t->buf, &t->cap, 1, 64);
        if (!b)
            return -1;
        t->buf = b;
    }
    t->buf[len] = (char)c;
    return 0;
}

const char *nums_token(struct nums_tokens *t, int *err)
{
    int c;
    *err = 0;
    while ((c = next_byte(t)) != EOF && is_sep(t, c))
        ;
    snprintf(t->where, sizeof t->where, "-:%llu:%zu", (unsigned long long)t->line, t->col);
    size_t len = 0;
    for (; c != EOF && !is_sep(t, c); c = next_byte(t)) {
        if (is_foreign(c)) {
            t->bad = c;
            *err = EILSEQ;
            return NULL;
        }
        if (put(t, len++, c) != 0) {
            *err = ENOMEM;
            return NULL;
        }
    }
    if (ferror(t->f)) {
        *err = errno ? errno : EIO;
        return NULL;
    }
    if (len == 0)
        return NULL;
    t->buf[len] = '\0';
    return t->buf;
}

void nums_token_error(const struct nums_tokens *t, int err)
{
    if (err == EILSEQ && t->bad >= 0)
        cli_error("-:%llu:%zu: invalid byte '\\%03o'", (unsigned long long)t->line, t->col,
                  (unsigned)t->bad);
    else
        cli_error("-: %s", strerror(err));
}

int nums_write_failed(int err)
{
    if (!err)
        return 0;
    /* EPIPE too: with SIGPIPE ignored, the reader's going away is an error
     * like any other, reported as shuf does ("write error: Broken pipe"). */
    cli_error("write error: %s", strerror(err));
    return 1;
}

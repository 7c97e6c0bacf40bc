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
    while ((c = getc(t->f)) != EOF && is_sep(t, c))
        ;
    size_t len = 0;
    for (; c != EOF && !is_sep(t, c); c = getc(t->f)) {
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

int nums_write_failed(int err)
{
    if (!err)
        return 0;
    /* EPIPE too: with SIGPIPE ignored, the reader's going away is an error
     * like any other, reported as shuf does ("write error: Broken pipe"). */
    cli_error("write error: %s", strerror(err));
    return 1;
}

/*
 * cli_util.c -- messages in the coreutils shape, checked output of help text,
 * and the number parser shared by the riffle program's commands.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

__attribute__((format(printf, 1, 0))) static void vmessage(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

void cli_read_error(const char *name, int err)
{
    if (strcmp(cli_prog, "shuf") == 0)
        cli_error("read error: %s", strerror(err));
    else
        cli_error("%s: %s", name, strerror(err));
}

int cli_try_help(const char *cmd)
{
    fprintf(stderr, "Try '%s%s%s --help' for more information.\n", cli_prog,
            cmd ? " " : "", cmd ? cmd : "");
    return CLI_FAIL;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    return cli_try_help(cmd);
}

int cli_print_stdout(const char *text)
{
    fputs(text, stdout);
    if (fflush(stdout) == 0 && !ferror(stdout))
        return CLI_OK;
    cli_error("write error: %s", strerror(errno));
    return CLI_FAIL;
}

int cli_parse_u64(const char *s, uint64_t *v, int *overflow)
{
    *overflow = 0;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '+')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    uint64_t x = 0;
    for (; isdigit((unsigned char)*s); s++) {
        const unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10) {
            *overflow = 1;
            x = UINT64_MAX;
        } else if (!*overflow) {
            x = x * 10 + d;
        }
    }
    if (*s)
        return -1;
    *v = x;
    return 0;
}

/* Quote s for a message the way coreutils' quote() does in the C locale:
 * 'text', with ', \ and unprintable bytes backslash-escaped.  The result stays
 * valid for the next 7 calls. */
const char *cli_quote(const char *s)
{
    static const char esc_from[] = "\a\b\f\n\r\t\v\\'";
    static const char esc_to[] = "abfnrtv\\'";
    /* Kept reachable (and freed on reuse): quoted strings are few and live
     * until their message is printed. */
    static char *ring[8];
    static unsigned next;
    char *q = malloc(4 * strlen(s) + 3);
    if (!q)
        return s;
    free(ring[next % 8]);
    ring[next++ % 8] = q;
    char *p = q;
    *p++ = '\'';
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        const char *e = c ? strchr(esc_from, c) : NULL;
        if (e) {
            *p++ = '\\';
            *p++ = esc_to[e - esc_from];
        } else if (c < 0x20 || c == 0x7f) {
            p += sprintf(p, "\\%03o", c);
        } else {
            *p++ = (char)c;
        }
    }
    *p++ = '\'';
    *p = '\0';
    return q;
}

void *cli_grow(void *items, size_t *cap, size_t size, size_t first)
{
    const size_t want = *cap ? *cap : first / 2;
    if (want > SIZE_MAX / 2 / size)
        return NULL;
    void *p = realloc(items, 2 * want * size);
    if (p)
        *cap = 2 * want;
    return p;
}

int cli_named_temps(void)
{
    const char *s = getenv("RIFFLE_NAMED_TEMPS");
    return s && *s;
}

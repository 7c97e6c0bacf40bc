/*
 * cli_util.c -- messages in the coreutils shape, checked output of help text,
 * and the number parser shared by the riffle program's commands.
 */
#include <ctype.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>
#include <unistd.h>

#include "cli.h"

const char *cli_prog = "riffle";

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
        cli_error("%s: %s", cli_quote_file(name), strerror(err));
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

int cli_write_stdout(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    while (len > 0) {
        const ssize_t k = write(STDOUT_FILENO, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EPIPE)
            return 1;
        if (k < 0) {
            cli_error("write error: %s", strerror(errno));
            return -1;
        }
        p += k;
        len -= (size_t)k;
    }
    return 0;
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

/* The character set of messages: LC_ALL, LC_CTYPE or LANG as coreutils reads
 * them (setlocale(LC_ALL, "")), looked up without changing the program's own
 * locale, which stays "C" so that the parsers' isspace and strtod never
 * depend on the environment.  (locale_t)0 when the named locale does not
 * exist: then the C locale, as for shuf. */
static locale_t message_locale(int *utf8)
{
    static int done, is_utf8;
    static locale_t loc;
    if (!done) {
        done = 1;
        loc = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
        is_utf8 = loc && strcmp(nl_langinfo_l(CODESET, loc), "UTF-8") == 0;
    }
    *utf8 = is_utf8;
    return loc;
}

/* The length of the character at s (up to its NUL) and whether it is
 * printable in the current locale, as gnulib's quotearg decides: a unibyte
 * locale asks isprint; a multibyte one mbrtowc and iswprint, and an invalid
 * or incomplete sequence is unprintable (one byte, or, incomplete, the rest). */
static size_t char_at(const char *s, int *printable)
{
    if (MB_CUR_MAX == 1) {
        *printable = isprint((unsigned char)*s) != 0;
        return 1;
    }
    mbstate_t st;
    memset(&st, 0, sizeof st);
    wchar_t w;
    const size_t len = strlen(s);
    const size_t n = mbrtowc(&w, s, len, &st);
    if (n == (size_t)-1) {
        *printable = 0;
        return 1;
    }
    if (n == (size_t)-2) {
        *printable = 0;
        return len;
    }
    *printable = iswprint((wint_t)w) != 0;
    return n ? n : 1;
}

/* Write c as a backslash escape: \a .. \v, \\, or three octal digits. */
static char *put_escape(char *p, unsigned char c)
{
    static const char from[] = "\a\b\f\n\r\t\v\\";
    static const char to[] = "abfnrtv\\";
    const char *e = c ? strchr(from, c) : NULL;
    *p++ = '\\';
    if (e)
        *p++ = to[e - from];
    else
        p += sprintf(p, "%03o", c);
    return p;
}

/* Quote s as coreutils' quote() does (gnulib quotearg, locale_quoting_style):
 * 'text' in the C locale, \u2018text\u2019 in a UTF-8 one; backslash
 * escapes for \ and the control characters (\n, \t, ... or octal \ooo),
 * octal for each byte that is not a printable character of the locale (in
 * the C locale, every byte above 0x7F), and a backslash before the closing
 * quote where the text holds it.  Printable UTF-8 is kept under a UTF-8
 * locale.  The result stays valid for the next 7 calls. */
const char *cli_quote(const char *s)
{
    /* Kept reachable (and freed on reuse): quoted strings are few and live
     * until their message is printed. */
    static char *ring[8];
    static unsigned next;
    int utf8;
    const locale_t loc = message_locale(&utf8);
    const char *lq = utf8 ? "\u2018" : "'", *rq = utf8 ? "\u2019" : "'";
    const size_t rq_len = strlen(rq);
    char *q = malloc(5 * strlen(s) + 7);
    if (!q)
        return s;
    free(ring[next % 8]);
    ring[next++ % 8] = q;
    const locale_t old = uselocale(loc ? loc : LC_GLOBAL_LOCALE);
    char *p = stpcpy(q, lq);
    while (*s) {
        int printable;
        const size_t n = char_at(s, &printable);
        const unsigned char c = (unsigned char)*s;
        if (strncmp(s, rq, rq_len) == 0)
            *p++ = '\\';
        if (c == '\\' || (n == 1 && c < 0x80 && !printable)) {
            p = put_escape(p, c);
        } else if (!printable) {
            for (size_t i = 0; i < n; i++)
                p = put_escape(p, (unsigned char)s[i]);
        } else {
            memcpy(p, s, n);
            p += n;
        }
        s += n;
    }
    strcpy(p, rq);
    uselocale(old);
    return q;
}

int cli_set_once(const char **slot, const char *arg, const char *plural)
{
    if (*slot && strcmp(*slot, arg) != 0) {
        cli_error("multiple %s specified", plural);
        return CLI_FAIL;
    }
    *slot = arg;
    return CLI_CONTINUE;
}

/* Bytes that make a file name need quotes in a shell, and those that cannot
 * stand inside double quotes as they are (gnulib's quotearg, whose special
 * list this is; '#' and '~' only at the start). */
static int shell_special(unsigned char c, int first)
{
    if ((c == '#' || c == '~') && first)
        return 1;
    return c != 0 && strchr("!\"$&'()*:;<=>?[\\^`| ", c) != NULL;
}

static int dquote_unsafe(unsigned char c)
{
    return c != 0 && strchr("!\"$&()*;<=>?[\\^`|", c) != NULL;
}

/* What the name needs: 0 nothing, 1 double quotes (it holds a single quote
 * and nothing double quotes would change), 2 single quotes. */
static int name_quoting(const char *s)
{
    if (!*s)
        return 2;
    int need = 0, squote = 0, dq_ok = 1;
    for (const char *p = s; *p;) {
        int printable;
        const size_t n = char_at(p, &printable);
        const unsigned char c = (unsigned char)*p;
        if (!printable || (n == 1 && shell_special(c, p == s)))
            need = 1;
        if (!printable || (n == 1 && dquote_unsafe(c)))
            dq_ok = 0;
        squote |= c == '\'';
        p += n;
    }
    return !need ? 0 : squote && dq_ok ? 1 : 2;
}

/* Write s single-quoted for a shell at out, without the closing quote;
 * `escape`: the pass starts inside $'...'.  Returns the end, and in *escape
 * whether the pass ended inside $'...'. */
static char *shell_quote(char *out, const char *s, int *escape)
{
    char *p = out;
    *p++ = '\'';
    while (*s) {
        int printable;
        const size_t n = char_at(s, &printable);
        if (!printable) {
            if (!*escape)
                p = stpcpy(p, "'$'");
            *escape = 1;
            for (size_t i = 0; i < n; i++)
                p = put_escape(p, (unsigned char)s[i]);
        } else if (*s == '\'') {
            p = stpcpy(p, "'\\''");
            *escape = 0;
        } else {
            if (*escape)
                p = stpcpy(p, "''");
            *escape = 0;
            memcpy(p, s, n);
            p += n;
        }
        s += n;
    }
    return p;
}

/* A file name as coreutils' quotef() writes it in "FILE: reason" messages
 * (gnulib quotearg, shell_escape_quoting_style, ':' quoted): as it is when a
 * shell would read it back unchanged, else "it's" when that is enough, else
 * 'a b', with '\'' for a single quote and $'\ooo' (or $'\n') for each run of
 * bytes that are not printable characters of the locale: ''$'\377''x'. */
const char *cli_quote_file(const char *s)
{
    static char *ring[4];
    static unsigned next;
    int utf8;
    const locale_t loc = message_locale(&utf8);
    const locale_t old = uselocale(loc ? loc : LC_GLOBAL_LOCALE);
    const int how = name_quoting(s);
    char *q = how ? malloc(7 * strlen(s) + 8) : NULL;
    if (!q) {
        uselocale(old);
        return s;
    }
    free(ring[next % 4]);
    ring[next++ % 4] = q;
    if (how == 1) {
        sprintf(q, "\"%s\"", s);
    } else {
        /* gnulib scans a name holding a single quote once without writing
         * it, then writes it; the second pass starts inside $'...' when the
         * first ended there (its pending_shell_escape_end is not reset), so
         * that shuf writes a'b<U+0001> as '''a'\''b'$'\001'.  Quirk for quirk. */
        int escape = 0;
        shell_quote(q, s, &escape);
        if (!strchr(s, '\''))
            escape = 0;
        strcpy(shell_quote(q, s, &escape), "'");
    }
    uselocale(old);
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

/* One file of cli_each_record; *pos counts on across files. */
static int each_in_file(const char *name, unsigned char delim, cli_record_fn *fn, void *ctx,
                        uint64_t *pos)
{
    const int is_stdin = strcmp(name, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(name, "r");
    if (!f) {
        cli_error("%s: %s", cli_quote_file(name), strerror(errno));
        return 1;
    }
    char *rec = NULL;
    size_t cap = 0;
    ssize_t got;
    uint64_t line = 0;
    int bad = 0;
    while (!bad && (got = getdelim(&rec, &cap, delim, f)) >= 0) {
        size_t len = (size_t)got;
        if (len && rec[len - 1] == (char)delim)
            len--;
        bad = fn(ctx, rec, len, (*pos)++, name, ++line) != 0;
    }
    if (!bad && ferror(f)) {
        cli_read_error(name, errno ? errno : EIO);
        bad = 1;
    }
    free(rec);
    if (is_stdin)
        clearerr(f);
    else
        fclose(f);
    return bad;
}

int cli_each_record(char **files, int n_files, unsigned char delim, cli_record_fn *fn,
                    void *ctx)
{
    uint64_t pos = 0;
    if (n_files == 0)
        return each_in_file("-", delim, fn, ctx, &pos);
    for (int i = 0; i < n_files; i++)
        if (each_in_file(files[i], delim, fn, ctx, &pos) != 0)
            return 1;
    return 0;
}

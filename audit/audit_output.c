/*
 * audit_output.c -- judging what an external shuffler (--cmd) wrote: is an
 * output a permutation of the lines "1".."n", and why not; where to cut a
 * quoted line without splitting a UTF-8 character; and what a command string
 * asks of the shell.  Pure string analysis: running the command is the front
 * end's (cli/audit_runner.c).
 */
#include <string.h>

#include "audit.h"

/* ---- the command ------------------------------------------------------------- */

int audit_command_needs_shell(const char *command)
{
    /* POSIX sh metacharacters, quotes and expansions (XCU 2.2, 2.6, 2.13), and
     * a leading VAR=value assignment. */
    if (strpbrk(command, "|&;<>()$`\\\"'*?[]#~{}\n") != NULL)
        return 1;
    const size_t first = strcspn(command + strspn(command, " \t"), " \t");
    const char *eq = memchr(command + strspn(command, " \t"), '=', first);
    return eq != NULL;
}

int audit_command_blank(const char *command)
{
    return command[strspn(command, " \t\n")] == '\0';
}

/* ---- checking an output ---------------------------------------------------- */

/* Is s[0..len) the canonical decimal of a number in 1..n?  Returns it or 0. */
static size_t line_value(const char *s, size_t len, size_t n)
{
    if (len == 0 || len > 19 || s[0] == '0')
        return 0;
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    return v <= n ? v : 0;
}

/* At most `max` bytes of s[0..len) without splitting a UTF-8 character: the
 * cut backs off over continuation bytes (10xxxxxx) to the start of the
 * character it would split (RFC 3629, section 3). */
size_t audit_utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t cut = max;
    while (cut > 0 && max - cut < 3 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    return ((unsigned char)s[cut] & 0xC0) == 0x80 ? max : cut;
}

int audit_parse_output(const char *buf, size_t len, size_t n, uint32_t *a,
                       unsigned char *seen, char *why, size_t why_len)
{
    memset(seen, 0, n);
    size_t count = 0, pos = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        const size_t end = nl ? (size_t)(nl - buf) : len;
        const size_t v = line_value(buf + pos, end - pos, n);
        if (v == 0) {
            snprintf(why, why_len, "altered or unexpected line '%.*s'",
                     (int)audit_utf8_cut(buf + pos, end - pos, 40), buf + pos);
            return -1;
        }
        if (seen[v - 1]) {
            snprintf(why, why_len, "line '%zu' appears twice", v);
            return -1;
        }
        seen[v - 1] = 1;
        if (count < n)
            a[count] = (uint32_t)(v - 1);
        count++;
        pos = end + 1;
    }
    if (count != n) {
        size_t missing = 0;
        while (missing < n && seen[missing])
            missing++;
        snprintf(why, why_len, "%zu lines out for %zu in; line '%zu' is missing", count,
                 n, missing + 1);
        return -1;
    }
    return 0;
}

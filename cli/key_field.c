/* key_field.c -- a record's key field (key_field.h). */
#include <string.h>

#include "cli.h"
#include "key_field.h"

int key_field_parse(const char *cmd, const char *what, const char *arg, size_t *field)
{
    uint64_t v;
    int over;
    if (cli_parse_u64(arg, &v, &over) != 0 || over || v == 0 || v > SIZE_MAX)
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

int key_field_find(const struct key_field *k, const unsigned char *rec, size_t len,
                   const unsigned char **key, size_t *key_len)
{
    const unsigned char *p = rec, *end = rec + len;
    for (size_t f = 1; f < k->field; f++) {
        const unsigned char *d = memchr(p, k->delim, (size_t)(end - p));
        if (!d)
            return -1;
        p = d + 1;
    }
    const unsigned char *d = memchr(p, k->delim, (size_t)(end - p));
    *key = p;
    *key_len = (size_t)((d ? d : end) - p);
    return 0;
}

void key_field_missing(const struct key_field *k, const char *name, unsigned long long line)
{
    cli_error("%s:%llu: missing key field %zu", cli_quote_file(name), line, k->field);
}

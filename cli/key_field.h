/* key_field.h -- the key of a record for --key and --group: field FIELD
 * (from 1) of the record, fields separated by one delimiter byte (TAB unless
 * -d/--field-delimiter says otherwise), as cut -f reads them.  One small
 * function finds the field, so that another record syntax (CSV columns by
 * name) can be added here without touching its callers. */
#ifndef RIFFLE_KEY_FIELD_H
#define RIFFLE_KEY_FIELD_H

#include <stddef.h>

struct key_field {
    size_t field;        /* from 1; 0: no key */
    unsigned char delim; /* the byte between fields */
};

/* --key=FIELD or --group=FIELD (`what` names it in the message): a field
 * number from 1.  Returns CLI_CONTINUE, or CLI_FAIL after a usage message;
 * `cmd` names a subcommand for the hint, or NULL. */
int key_field_parse(const char *cmd, const char *what, const char *arg, size_t *field);
/* -d/--field-delimiter=C: one byte.  Returns CLI_CONTINUE or CLI_FAIL after
 * a usage message. */
int key_field_parse_delim(const char *cmd, const char *arg, unsigned char *delim);

/* The key of rec[0..len) in [*key, *key + *key_len).  Returns 0, or -1 when
 * the record has fewer fields (an empty field is a key: ""). */
int key_field_find(const struct key_field *k, const unsigned char *rec, size_t len,
                   const unsigned char **key, size_t *key_len);

/* "NAME:LINE: missing key field F" (the file as a message names it). */
void key_field_missing(const struct key_field *k, const char *name, unsigned long long line);

#endif

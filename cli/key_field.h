/* key_field.h -- the key of a record for --key and --group: field FIELD
 * (from 1) of the record, fields separated by one delimiter byte (TAB unless
 * -d/--field-delimiter says otherwise), as cut -f reads them; or, with
 * --csv, a CSV column (RFC 4180 fields, comma-separated unless -d says
 * otherwise) named in the header or numbered.  One small function finds
 * the field, so that its callers do not know the record syntax. */
#ifndef RIFFLE_KEY_FIELD_H
#define RIFFLE_KEY_FIELD_H

#include <stddef.h>
#include <stdint.h>

/* field of a CSV key whose column is not known yet (key_field_resolve). */
#define KEY_FIELD_BY_NAME SIZE_MAX

struct key_field {
    size_t field;        /* from 1; 0: no key; KEY_FIELD_BY_NAME: --csv, unresolved */
    unsigned char delim; /* the byte between fields */
    int csv;             /* CSV fields: a quoted field's key is the bytes between
                            its quotes, so "a" and a are one key (a doubled quote
                            inside stays doubled: the map is one to one) */
    const char *column;  /* --csv: the column as given */
};

/* --key=FIELD or --group=FIELD (`what` names it in the message): a field
 * number from 1.  Returns CLI_CONTINUE, or CLI_FAIL after a usage message;
 * `cmd` names a subcommand for the hint, or NULL. */
int key_field_parse(const char *cmd, const char *what, const char *arg, size_t *field);
/* -d/--field-delimiter=C: one byte.  Returns CLI_CONTINUE or CLI_FAIL after
 * a usage message. */
int key_field_parse_delim(const char *cmd, const char *arg, unsigned char *delim);

/* --csv: the key is the CSV column `column` (a name in the header, else a
 * number from 1), found by key_field_resolve; fields are separated by ','
 * unless `delim_given` (then k->delim stays as -d set it). */
void key_field_csv(struct key_field *k, const char *column, int delim_given);
/* --csv: the key's column from the header record hdr[0..len) (hdr NULL:
 * no header): the first field whose text (unquoted) is the column as given,
 * else the column as a number.  Returns 0, or -1 after the message
 * "FILE: no column 'NAME' in the CSV header" (`what`: "key", "group"). */
int key_field_resolve(struct key_field *k, const unsigned char *hdr, size_t len,
                      const char *file, const char *what);

/* The key of rec[0..len) in [*key, *key + *key_len).  Returns 0, or -1 when
 * the record has fewer fields (an empty field is a key: "").  A CSV
 * record's closing CR (of CR LF) is not part of its last field. */
int key_field_find(const struct key_field *k, const unsigned char *rec, size_t len,
                   const unsigned char **key, size_t *key_len);

/* "NAME:LINE: missing key field F" (the file as a message names it; with
 * --csv, the column as given). */
void key_field_missing(const struct key_field *k, const char *name, unsigned long long line);

#endif

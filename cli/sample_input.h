/* sample_input.h -- the records `riffle sample` reads: lines (or
 * NUL-terminated records), or CSV records with --csv; the first --header
 * records kept aside to be printed first (never sampled), and a CSV key or
 * group column named in the first of them found there. */
#ifndef RIFFLE_SAMPLE_INPUT_H
#define RIFFLE_SAMPLE_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "key_field.h"
#include "riffle_io.h"

struct sample_input {
    char **files;           /* none: standard input */
    int n_files;
    unsigned char delim;    /* the record delimiter */
    int csv;                /* --csv: CSV records (delim '\n') */
    uint64_t header;        /* --header=K */
    struct key_field *key;  /* its column resolved from the header, or NULL */
    const char *key_what;   /* "key" or "group", for the message */
    /* private */
    unsigned char *head;    /* the header records, each with its delimiter */
    size_t head_len, head_cap;
    cli_record_fn *fn;
    void *ctx;
};

/* Hand every record after the header to fn (cli_each_record's contract:
 * its number counts from 0 after the header; for CSV records, `line` is
 * the line where the record starts).  Compressed inputs are decompressed
 * (decompress.h); a corrupt one is an error once it was read.  A CSV input
 * that ends inside quotes is an error: "FILE: unterminated quote in the CSV
 * record starting at line N".  Returns 0, or 1 after a message. */
int sample_input_each(struct sample_input *in, cli_record_fn *fn, void *ctx);
/* The header records, to w. */
void sample_input_put_header(const struct sample_input *in, rf_writer *w);
void sample_input_free(struct sample_input *in);

#endif

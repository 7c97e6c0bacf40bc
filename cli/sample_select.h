/* sample_select.h -- `riffle sample` by key, by group and by probability
 * (sample_select.c); cmd_sample.c parses the options. */
#ifndef RIFFLE_SAMPLE_SELECT_H
#define RIFFLE_SAMPLE_SELECT_H

#include <stdint.h>

#include "cli.h"
#include "key_field.h"
#include "sample_input.h"

struct sample_select {
    struct key_field key;   /* --key or --group (field 0: neither) */
    int by_group;           /* the field is --group's */
    int have_prob;
    double prob;            /* --prob */
    uint64_t count;         /* -n (when not have_prob) */
    unsigned char delim;    /* the record delimiter */
    const struct cli_rng_opts *rng;
    char **files;
    int n_files;
    struct sample_input *input; /* the records read, the --header kept aside */
};

/* Run it; returns the exit status. */
int sample_run_select(const struct sample_select *s);

#endif

/* shuf.h -- options of the shuf-compatible mode, shared by shuf_options.c
 * (parsing) and cmd_shuf.c (running). */
#ifndef RIFFLE_SHUF_H
#define RIFFLE_SHUF_H

#include <stdint.h>

#include "cli.h"

struct shuf_opts {
    int shuf_mode;     /* invoked as shuf: no riffle extensions */
    int echo, repeat;
    unsigned char delim;
    int have_range;
    uint64_t lo, hi;   /* -i LO-HI: lo <= hi, or lo = hi + 1 (empty) */
    int have_count;
    uint64_t count;    /* -n, the smallest given; UINT64_MAX if huge */
    uint64_t header;   /* --header=K, 0 if none */
    const char *output;
    struct cli_rng_opts rng;
    char **operands;
    int n_operands;
};

/* Parse argv into o.  Returns CLI_CONTINUE to go on, or an exit status (after
 * --help, --version or a message). */
int cli_shuf_parse(int argc, char **argv, int shuf_mode, struct shuf_opts *o);

#endif

/* shuf.h -- options of the shuf-compatible mode, shared by shuf_options.c
 * (parsing) and cmd_shuf.c (running). */
#ifndef RIFFLE_SHUF_H
#define RIFFLE_SHUF_H

#include <stdint.h>

#include "cli.h"
#include "key_field.h"
#include "output.h"

struct shuf_opts {
    int shuf_mode;     /* invoked as shuf: no riffle extensions */
    int echo, repeat;
    unsigned char delim;
    int have_range;
    uint64_t lo, hi;   /* -i LO-HI: lo <= hi, or lo = hi + 1 (empty) */
    int have_count;
    uint64_t count;    /* -n, the smallest given; UINT64_MAX if huge */
    uint64_t header;   /* --header=K, 0 if none */
    const char *header_arg, *memory_arg, *threads_arg; /* as given (cli_set_once) */
    const char *output;
    struct cli_rng_opts rng;
    /* riffle only (shuf mode leaves the defaults) */
    uint64_t memory;      /* --memory bytes; 0: not given (rf_engine_default_memory) */
    const char *tmpdir;   /* -T/--temporary-directory; NULL: cli_tmpdir's default */
    unsigned threads;     /* --threads, resolved: >= 1 (0 given = all cores) */
    int progress;         /* -1 --no-progress, 0 auto (stderr a terminal), 1 --progress */
    int csv;              /* --csv: CSV records */
    const char *split_spec, *output_pattern; /* as given */
    struct cli_split split; /* the plan of --split/--output-pattern; SPLIT_NONE if none */
    const char *key_arg, *field_delim_arg; /* --key, -d as given */
    struct key_field key; /* --key: field 0 if none */
    const char *compress_arg; /* --compress as given */
    enum cli_codec compress;  /* --compress, or CLI_CODEC_BY_NAME (shuf mode: NONE) */
    int lockstep;         /* --lockstep: every file in one order, each to its own output */
    const char **outputs; /* every -o, in order (argc slots); n_outputs of them */
    int n_outputs;
    const char **patterns; /* every --output-pattern, in order; n_patterns of them */
    int n_patterns;
    struct cli_split *splits; /* --lockstep --split: one plan and names per input */
    char **operands;
    int n_operands;
};

/* Parse argv into o.  Returns CLI_CONTINUE to go on, or an exit status (after
 * --help, --version or a message). */
int cli_shuf_parse(int argc, char **argv, int shuf_mode, struct shuf_opts *o);
/* Release what cli_shuf_parse allocated (the split plan). */
void cli_shuf_free(struct shuf_opts *o);

/* The directory for temporary files: -T DIR, else $TMPDIR (when set and not
 * empty), else "/tmp".  Only an explicit -T is checked up front (it must be
 * an existing, writable directory); $TMPDIR and /tmp are checked when used. */
const char *cli_tmpdir(const struct shuf_opts *o);

/* The first `head` records of r, the --header: written in place to a single
 * output, or handed to the split output, which starts every part with them
 * (an unterminated last one gets its delimiter).  Reads r->offs[head]: call
 * before the offsets are shuffled.  0, or -1 after a message. */
int shuf_put_header(struct cli_output *out, const rf_records *r, size_t head);

/* output_open on the output the options name: -o FILE, the --split parts or
 * standard output. */
int shuf_output_open(struct cli_output *out, const struct shuf_opts *o);

#endif

/* shuf.h -- options of the shuf-compatible mode, shared by shuf_options.c
 * (parsing) and cmd_shuf.c (running). */
#ifndef RIFFLE_SHUF_H
#define RIFFLE_SHUF_H

#include <stdint.h>

#include "cli.h"
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
    char **operands;
    int n_operands;
};

/* Parse argv into o.  Returns CLI_CONTINUE to go on, or an exit status (after
 * --help, --version or a message). */
int cli_shuf_parse(int argc, char **argv, int shuf_mode, struct shuf_opts *o);
/* Release what cli_shuf_parse allocated (the split plan). */
void cli_shuf_free(struct shuf_opts *o);

/* --memory=SIZE: rf_engine_memory_parse, the rule of every front end, with
 * the program's messages (`cmd` names a subcommand for the hint, or NULL).
 * *given holds the value given before (NULL at first): another one is an
 * error (cli_set_once).  Returns CLI_CONTINUE, or CLI_FAIL after a message. */
int cli_parse_memory(const char *cmd, const char *arg, const char **given, uint64_t *v);
/* --threads=N, 0 <= N <= 4096 (0: one per core, resolved by the caller);
 * *given as for cli_parse_memory. */
int cli_parse_threads(const char *cmd, const char *arg, const char **given, unsigned *v);
/* -T DIR is checked at once (an existing, writable directory), so that a
 * typo fails before a long run rather than when the first temporary file is
 * made.  Returns CLI_CONTINUE, or CLI_FAIL after a message. */
int cli_check_tmpdir(const char *dir);

/* The directory for temporary files: -T DIR, else $TMPDIR (when set and not
 * empty), else "/tmp".  Only an explicit -T is checked up front (it must be
 * an existing, writable directory); $TMPDIR and /tmp are checked when used. */
const char *cli_tmpdir(const struct shuf_opts *o);

#endif

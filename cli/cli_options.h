/*
 * cli_options.h -- the getopt tables of riffle's commands, exported: each
 * command parses its options with its own table here, and fuzz/cli_argv.c
 * builds command lines from the same tables, so that the fuzzer knows every
 * option the program has without a copy of any.
 */
#ifndef RIFFLE_CLI_OPTIONS_H
#define RIFFLE_CLI_OPTIONS_H

#include <getopt.h>

struct cli_options {
    const char *command;           /* "deal", ...; "" for the shuffle */
    int shuf_name;                 /* the table of the `shuf` name */
    const char *shortopts;         /* getopt_long's optstring */
    const struct option *longopts; /* ends with a NULL name */
};

extern const struct cli_options cli_deal_options;    /* cmd_deal.c */
extern const struct cli_options cli_perm_options;    /* cmd_perm.c */
extern const struct cli_options cli_rank_options;    /* cmd_rank.c */
extern const struct cli_options cli_unrank_options;  /* cmd_rank.c */
extern const struct cli_options cli_sample_options;  /* cmd_sample.c */
extern const struct cli_options cli_scatter_options; /* cmd_scatter.c */
extern const struct cli_options cli_gather_options;  /* cmd_gather.c */
extern const struct cli_options cli_rng_options;     /* cmd_rng.c */
extern const struct cli_options cli_verify_options;  /* cmd_verify.c */
extern const struct cli_options cli_audit_options;   /* cmd_audit.c */
extern const struct cli_options cli_riffle_options;  /* shuf_options.c: riffle's shuffle */
extern const struct cli_options cli_shuf_options;    /* shuf_options.c: as `shuf` */

/* The tables above, ending with NULL. */
extern const struct cli_options *const cli_all_options[];

#endif /* RIFFLE_CLI_OPTIONS_H */

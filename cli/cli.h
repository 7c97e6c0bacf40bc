/* cli.h -- what the files of the riffle program share.  The program uses only
 * the public headers (riffle.h, riffle_io.h, riffle_perm.h). */
#ifndef RIFFLE_CLI_H
#define RIFFLE_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "riffle.h"

/* Exit statuses, as shuf's. */
#define CLI_OK 0
#define CLI_FAIL 1
/* Returned by option parsers when the command should go on. */
#define CLI_CONTINUE (-1)

/* Name in messages: "riffle", or "shuf" when invoked under that name. */
extern const char *cli_prog;

/* "prog: message\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failed read of input `name` (not a failed open): "NAME: reason", or,
 * under the shuf name, GNU shuf's "read error: reason". */
void cli_read_error(const char *name, int err);

/* Every record of the files (none: standard input; "-" is standard input),
 * read with getdelim and handed to fn without its delimiter: its bytes,
 * its number across the files (from 0), its file and its line there (from
 * 1).  fn returns 0 to go on, else the reading stops (fn printed why).  An
 * unreadable file is reported.  Returns 0, or 1 after a message. */
typedef int cli_record_fn(void *ctx, char *rec, size_t len, uint64_t pos, const char *name,
                          uint64_t line);
int cli_each_record(char **files, int n_files, unsigned char delim, cli_record_fn *fn,
                    void *ctx);
/* cli_error, then "Try 'prog --help' for more information."; returns 1.
 * `cmd` names a subcommand for the hint ("deal"), or NULL. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The hint line alone (after getopt has printed its own message); returns 1. */
int cli_try_help(const char *cmd);
/* Write text to stdout and check that it got there (--help, --version):
 * returns 0, or prints "prog: write error: ..." and returns 1. */
int cli_print_stdout(const char *text);
/* Write all of buf to standard output with write(2), for the commands whose
 * output is a stream a reader may stop reading (riffle rng, deal --count),
 * with SIGPIPE ignored: returns 0, 1 when the reader has gone (EPIPE: the
 * caller stops quietly, as `yes | head` does), or -1 after "write error". */
int cli_write_stdout(const void *buf, size_t len);

/* Room for more items in a growing array: `items` (capacity *cap items of
 * `size` bytes) reallocated to twice *cap, or `first` items when empty.
 * Returns the array and updates *cap, or NULL (out of memory, or a size that
 * would overflow) with the array and *cap as they were. */
void *cli_grow(void *items, size_t *cap, size_t size, size_t first);

/* One rule for an option given more than once, in every command, GNU
 * shuf's: a count (-n) keeps the smallest value, any other option may be
 * repeated only with the same value.  cli_set_once stores arg in *slot, or,
 * when *slot holds a different value, prints "multiple PLURAL specified"
 * (shuf's "multiple output files specified") and returns CLI_FAIL. */
int cli_set_once(const char **slot, const char *arg, const char *plural);

/* 'text' with quotes and unprintables escaped, as coreutils' quote() writes
 * it: \u2018text\u2019 when the environment's locale (LC_ALL, LC_CTYPE,
 * LANG) is UTF-8.  Never NULL. */
const char *cli_quote(const char *s);

/* A file name for "FILE: reason" messages, as coreutils' quotef() writes it:
 * bare when a shell would read it unchanged (in.txt), else quoted ('a b',
 * "it's", ''$'\377'); never NULL. */
const char *cli_quote_file(const char *s);

/* Parse an unsigned decimal count the way coreutils' xstrtoumax does for shuf:
 * leading blanks and '+' allowed, no sign '-', no suffix.  A value too large
 * for uint64 saturates to UINT64_MAX and sets *overflow.  Returns 0 on success,
 * -1 if s is not a number. */
int cli_parse_u64(const char *s, uint64_t *v, int *overflow);

/* Whether temporary files must be named ones even where unnamed ones
 * (O_TMPFILE) work: the environment variable RIFFLE_NAMED_TEMPS is set
 * and not empty.  Undocumented for users: the tests of the fallback path
 * and of the signal-time removal of named files use it. */
int cli_named_temps(void);

/* How the generator is chosen (--seed, --rng, --random-source). */
struct cli_rng_opts {
    const char *seed;          /* NULL: none */
    const char *rng_name;      /* NULL: chacha20 */
    const char *random_source; /* NULL: none */
    int production;            /* --production given */
};

/* The getopt codes (struct option val) of --seed, --rng and --random-source,
 * the same in every command so that cli_rng_option parses them for all.  A
 * command numbers its own long-only options from CLI_OPT_FIRST_FREE on, so
 * that no code means two options. */
enum cli_option_code {
    CLI_OPT_SEED = 256,
    CLI_OPT_RNG,
    CLI_OPT_RANDOM_SOURCE,
    CLI_OPT_PRODUCTION,
    CLI_OPT_FIRST_FREE
};

/* Returned by cli_rng_option for an option that is not one of the four. */
#define CLI_NOT_RNG (-2)

/* Take getopt's result `opt` (with its `arg`) into r if it is --seed, --rng,
 * --random-source or --production.  Returns CLI_CONTINUE when taken,
 * CLI_NOT_RNG when opt is another option, or CLI_FAIL after "multiple seeds specified" (and the like):
 * a second, different value is an error in every command, as shuf's -o. */
int cli_rng_option(struct cli_rng_opts *r, int opt, const char *arg);
/* Validate --rng early (a usage error).  Returns 0 or 1 after a message. */
int cli_rng_check(const struct cli_rng_opts *o, const char *cmd);
/* Production mode, for the commands that deal or draw for live play (deal,
 * sample, rng and the shuffle): with --production, or RIFFLE_PRODUCTION set
 * to anything but "" or "0" in the environment, --seed and --random-source are
 * refused, so that no stream can be made to repeat.  Returns 0, or 1 after a
 * usage message. */
int cli_production_check(const struct cli_rng_opts *o, const char *cmd);
/* Build the generator.  Returns g (in *storage) or one from rf_rng_new_os, or
 * NULL after printing an error.  Release with cli_rng_release. */
rf_rng *cli_rng_make(const struct cli_rng_opts *o, rf_rng *storage);
void cli_rng_release(rf_rng *g, rf_rng *storage);
/* The generator kind --rng names (chacha20 when not given). */
rf_rng_kind cli_rng_kind(const struct cli_rng_opts *o);
/* The key the generator of cli_rng_make is keyed with (whatever --rng says):
 * rf_seed_u64 or rf_seed_string of --seed, the first 32 bytes of
 * --random-source, else rf_seed_os.  Returns 0, or -1 after a message. */
int cli_rng_key(const struct cli_rng_opts *o, uint8_t key[RF_KEY_BYTES]);

/* The shuf-compatible mode: `riffle` without a subcommand, or `shuf` (then
 * shuf_mode is 1: GNU shuf's options only).  Returns the exit status. */
int cli_shuf_main(int argc, char **argv, int shuf_mode);

#endif

/* dist.h -- what `riffle scatter` and `riffle gather` share: the file
 * transport's directory, its files, and their options (docs/distributed.md).
 *
 * A run of P tasks over a directory D (every task of the three steps sees
 * the same D, e.g. on a shared file system):
 *   D/count.I   scatter --count, task I: its part's record count;
 *   D/header    scatter task 0: the --header records' bytes;
 *   D/I.to.J    scatter task I: its packets for owner J (riffle_engine.h's
 *               wire format, untouched; with --by-reference, frames of
 *               references into the inputs, which the gather then maps);
 * each beginning with the run's identity (dist_run.h), each written
 * atomically (a temporary beside it, renamed into place), so a
 * task that dies leaves nothing half-written, and a retried task replaces
 * its files with the same bytes. */
#ifndef RIFFLE_DIST_H
#define RIFFLE_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "cli_options.h"
#include "riffle_engine.h"
#include "riffle_io.h"

/* More tasks than this would keep too many files open at once (a scatter
 * task writes one file per task, all guarded by cleanup.h). */
#define DIST_MAX_TASKS 4000u

/* The options every step takes. */
struct dist_opts {
    const char *cmd;         /* "scatter" or "gather", for messages */
    uint64_t task, tasks;
    int have_task, have_tasks;
    const char *task_arg, *tasks_arg; /* as given (cli_set_once) */
    const char *dir;
    struct cli_rng_opts rng;
};

/* The getopt codes of --task, --tasks and --dir; a step numbers its own
 * long-only options from DIST_OPT_FIRST_FREE on. */
enum dist_option_code {
    DIST_OPT_TASK = CLI_OPT_FIRST_FREE,
    DIST_OPT_TASKS,
    DIST_OPT_DIR,
    DIST_OPT_FIRST_FREE
};

/* The getopt_long entries of the options every step takes, in two runs so
 * that each step's table keeps its order (the order in which getopt_long
 * lists the candidates of an ambiguous abbreviation). */
#define DIST_PLACE_LONGOPTS                                                                        \
    {"task", required_argument, NULL, DIST_OPT_TASK},                                              \
        {"tasks", required_argument, NULL, DIST_OPT_TASKS},                                        \
        {"dir", required_argument, NULL, DIST_OPT_DIR}
#define DIST_KEY_LONGOPTS                                                                          \
    {"seed", required_argument, NULL, CLI_OPT_SEED},                                               \
        {"rng", required_argument, NULL, CLI_OPT_RNG},                                             \
        {"random-source", required_argument, NULL, CLI_OPT_RANDOM_SOURCE}

/* Scan argv with t's table (optind is reset first): --task, --tasks, --dir,
 * --seed, --rng and --random-source go into o, every other option to
 * on(ctx, c, optarg).  Returns CLI_CONTINUE with optind at the first
 * operand, or else the first result that is not CLI_CONTINUE (CLI_FAIL after
 * a usage message for an invalid --task or --tasks). */
int dist_getopt(struct dist_opts *o, int argc, char **argv, const struct cli_options *t,
                int (*on)(void *ctx, int c, const char *arg), void *ctx);
/* The options as a whole: --task, --tasks and --dir given, I < P <= the
 * maximum, and, with need_key, --seed or --random-source (without one the
 * tasks could not agree on the order).  Returns CLI_CONTINUE or CLI_FAIL
 * after a message. */
int dist_check(const struct dist_opts *o, int need_key);
/* The engine options' key and generator from --seed / --random-source and
 * --rng.  Returns 0, or 1 after a message. */
int dist_key(const struct dist_opts *o, rf_engine_options *eo);

/* D/NAME into buf[len]; 0, or -1 after a message when it does not fit. */
int dist_path(const struct dist_opts *o, char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A file replaced atomically and guarded against signals (cleanup.h). */
struct dist_file {
    rf_atomic_file a;
    int guard;
    int open;
};
/* Returns 0, or -1 after "PATH: reason". */
int dist_file_open(struct dist_file *f, const char *path);
/* Write it all; 0, or an errno value. */
int dist_file_write(struct dist_file *f, const void *p, size_t len);
/* Commit (fsync, rename).  Returns 0, or -1 after a message. */
int dist_file_commit(struct dist_file *f, const char *path);
/* Remove the temporary; the target stays as it was.  Safe when not open. */
void dist_file_abort(struct dist_file *f);

/* The whole of a small file (a count, the header), malloc'ed (NUL after
 * it).  Returns 0, or -1 after a message; `why` says, when the file is
 * missing, what was expected to make it. */
int dist_read_small(const char *path, const char *why, char **bytes, size_t *len);

/* An engine error as the program words it (riffle_engine.h's sentence). */
void dist_engine_error(const rf_engine_error *err);

#endif

/* run_options.h -- the options that every command running the engine takes
 * alike (the shuffle, scatter, gather): --memory, --threads and -T, parsed
 * with one rule and one set of messages. */
#ifndef RIFFLE_RUN_OPTIONS_H
#define RIFFLE_RUN_OPTIONS_H

#include <stdint.h>

#include "cli.h"

/* --threads above this is surely a mistake. */
#define CLI_MAX_THREADS 4096

/* --memory=SIZE: rf_engine_memory_parse, the rule of every front end, with
 * the program's messages (`cmd` names a subcommand for the hint, or NULL).
 * *given holds the value given before (NULL at first): another one is an
 * error (cli_set_once).  Returns CLI_CONTINUE, or CLI_FAIL after a message. */
int cli_parse_memory(const char *cmd, const char *arg, const char **given, uint64_t *v);
/* --threads=N, 0 <= N <= CLI_MAX_THREADS (0: one per core, see
 * cli_threads_resolve); *given as for cli_parse_memory. */
int cli_parse_threads(const char *cmd, const char *arg, const char **given, unsigned *v);
/* n, or for 0 the number of online cores (at most CLI_MAX_THREADS; 1 when
 * unknown). */
unsigned cli_threads_resolve(unsigned n);
/* -T DIR is checked at once (an existing, writable directory), so that a
 * typo fails before a long run rather than when the first temporary file is
 * made.  Returns CLI_CONTINUE, or CLI_FAIL after a message. */
int cli_check_tmpdir(const char *dir);

#endif

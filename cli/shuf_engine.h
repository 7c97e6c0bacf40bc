/* shuf_engine.h -- the shuf mode's records through the library's engine
 * (riffle_engine.h). */
#ifndef RIFFLE_SHUF_ENGINE_H
#define RIFFLE_SHUF_ENGINE_H

#include "riffle.h"
#include "riffle_engine.h"

struct cli_output;
struct progress;
struct shuf_opts;

/* The shuf mode's records (files, stdin, -e) without -r, written to the
 * output the options name.  Returns the exit status. */
int shuf_run_keyed(const struct shuf_opts *o, struct progress *p);
/* --lockstep: every file operand in one keyed order, each to its own -o
 * (or split), all committed at the end or none (shuf_lockstep.c).  Returns
 * the exit status. */
int shuf_run_lockstep(const struct shuf_opts *o, struct progress *p);
/* The file operands names[0..n) as engine inputs, "-" (and no operand at
 * all) standard input, in *count entries of a malloc'ed array; NULL when out
 * of memory. */
rf_engine_input *shuf_file_inputs(char *const *names, int n, size_t *count);
/* Reads one input into the caller's records: its name, its descriptor (or
 * -1: open the name), and whether it is the only one.  0, or -1 after a
 * message. */
typedef int shuf_input_fn(void *ctx, const char *name, int fd, int sole);
/* Each file operand (or standard input) handed to add(ctx, ...) in order,
 * compressed ones decompressed on the way unless `raw` (decompress.h); a
 * descriptor given twice is read once.  0, or -1 after a message. */
int shuf_each_input(const struct shuf_opts *o, int raw, shuf_input_fn *add, void *ctx);
/* The engine's options from the program's: the key of --seed/--random-source
 * (or the OS), --rng, -z, --header, -n, --memory, -T, --threads; no
 * progress (shuf_engine_run adds it).  Returns 0, or 1 after a message. */
int shuf_engine_options(const struct shuf_opts *o, rf_engine_options *eo);
/* One run of the engine over in[0..n) into sink, drawing the progress line
 * p.  Returns CLI_OK (out, which the sink writes, still to close), or
 * CLI_FAIL after the message, out aborted (or closed, for its own write
 * error). */
int shuf_engine_run(const rf_engine_options *eo, const rf_engine_input *in, size_t n,
                    const rf_engine_sink *sink, struct cli_output *out, struct progress *p);
/* The keyed order of --seed/--random-source (or the OS) and --rng.  Returns
 * 0, or 1 after a message. */
int shuf_keyed_order(const struct shuf_opts *o, rf_keyed_order *order);

#endif

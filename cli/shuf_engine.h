/* shuf_engine.h -- the shuf mode's records through the library's engine
 * (riffle_engine.h). */
#ifndef RIFFLE_SHUF_ENGINE_H
#define RIFFLE_SHUF_ENGINE_H

#include "riffle.h"
#include "riffle_engine.h"

struct progress;
struct shuf_opts;

/* The shuf mode's records (files, stdin, -e) without -r, written to the
 * output the options name.  Returns the exit status. */
int shuf_run_keyed(const struct shuf_opts *o, struct progress *p);
/* The file operands names[0..n) as engine inputs, "-" (and no operand at
 * all) standard input, in *count entries of a malloc'ed array; NULL when out
 * of memory. */
rf_engine_input *shuf_file_inputs(char *const *names, int n, size_t *count);
/* The keyed order of --seed/--random-source (or the OS) and --rng.  Returns
 * 0, or 1 after a message. */
int shuf_keyed_order(const struct shuf_opts *o, rf_keyed_order *order);

#endif

/* shuf_engine.h -- the shuf mode's records through the library's engine
 * (riffle_engine.h). */
#ifndef RIFFLE_SHUF_ENGINE_H
#define RIFFLE_SHUF_ENGINE_H

#include "riffle.h"

struct progress;
struct shuf_opts;

/* The shuf mode's records (files, stdin, -e) without -r, written to the
 * output the options name.  Returns the exit status. */
int shuf_run_keyed(const struct shuf_opts *o, struct progress *p);
/* The keyed order of --seed/--random-source (or the OS) and --rng.  Returns
 * 0, or 1 after a message. */
int shuf_keyed_order(const struct shuf_opts *o, rf_keyed_order *order);

#endif

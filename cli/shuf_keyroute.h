/* shuf_keyroute.h -- the shuf mode's --key at any size: the engine's full
 * shuffle routed record by record to the part of its key (shuf_keyroute.c). */
#ifndef RIFFLE_SHUF_KEYROUTE_H
#define RIFFLE_SHUF_KEYROUTE_H

struct progress;
struct shuf_opts;

/* Whether the split can be routed: file operands or standard input (not
 * -e), and at most 64 compressed parts (each gets a thread). */
int shuf_keyroute_fits(const struct shuf_opts *o);
/* The split by --key of shuf_bykey.c, byte for byte, through the engine
 * (any size, --memory, --threads, -T, compressed inputs).  Returns the exit
 * status. */
int shuf_run_keyroute(const struct shuf_opts *o, struct progress *p);

#endif

/* shuf_bykey.h -- the shuf mode's --key: a split by key (shuf_bykey.c). */
#ifndef RIFFLE_SHUF_BYKEY_H
#define RIFFLE_SHUF_BYKEY_H

struct shuf_opts;

/* The records (files, stdin, -e) split by --key into the parts of --split.
 * Returns the exit status. */
int shuf_run_bykey(const struct shuf_opts *o);

#endif

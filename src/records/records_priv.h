/* records_priv.h -- internals shared by records.c and input.c. */
#ifndef RIFFLE_RECORDS_PRIV_H
#define RIFFLE_RECORDS_PRIV_H

#include "riffle_io.h"

/* Make room for `extra` more bytes at r->buf_ + r->size, moving a mapped block
 * to the heap first.  Returns 0 or ENOMEM (then r is unchanged). */
int rf_records_reserve_(rf_records *r, size_t extra);

/* Before appending a new input: if the data so far does not end with the
 * delimiter, append one (so the previous input's last record stays whole).
 * Returns 0 or ENOMEM. */
int rf_records_seal_(rf_records *r);

/* Search the bytes appended since the last call for delimiters, recording
 * record starts in offs[0..found_).  Returns 0 or ENOMEM. */
int rf_records_scan_(rf_records *r);

#endif

/* decompress.h -- compressed inputs (gzip, zstd: codec.h) read as if they
 * were plain: each one becomes the read end of a pipe that one thread fills
 * with its decompressed bytes, so the engine reads it as it reads a pipe on
 * standard input.  `riffle --seed=S f.gz` therefore writes exactly what
 * `zcat f.gz | riffle --seed=S` writes, whichever engine runs.
 *
 * Use:
 *     struct cli_inflow *flow;
 *     if (inflow_start(&flow, in, n) != 0) fail;   // message printed
 *     ... run the engine on in[0..n); before writing anything (the sink's
 *     begin, which comes once every input is read): ...
 *     if (inflow_check(flow) != 0) fail;           // message printed
 *     inflow_end(flow);                            // on every path
 *
 * A corrupt or truncated input ends its pipe early, which the engine cannot
 * tell from its end: inflow_check is what makes it an error, naming the file
 * and the offset in the compressed bytes where decoding failed.
 */
#ifndef RIFFLE_DECOMPRESS_H
#define RIFFLE_DECOMPRESS_H

#include <stddef.h>

#include "riffle_engine.h"

struct cli_inflow;

/* Look at the first bytes of each regular file among in[0..n), and of a
 * pipe on standard input when it is the first input (nothing is consumed);
 * each compressed one is replaced by the read end of a pipe of its
 * decompressed bytes, filled by one thread, input after input, in order.
 * Other pipes are read as they are.
 * A regular file that cannot be opened or read is an error here; one that
 * is not there is left for the engine to report in its turn.  *flow is NULL when no input is compressed.  Returns 0,
 * or -1 after a message. */
int inflow_start(struct cli_inflow **flow, rf_engine_input *in, size_t n);
/* Whether every compressed input decoded to its end.  Call once every pipe
 * was read to its end.  Returns 0 (also for a NULL flow), or -1 after the
 * message of the first input that failed: "FILE: invalid gzip data at byte
 * N: reason", "FILE: truncated zstd data at byte N", or a read error. */
int inflow_check(struct cli_inflow *flow);
/* Stop the thread (its pipes' readers are closed), wait for it, free.  Any
 * time after inflow_start; NULL is a no-op. */
void inflow_end(struct cli_inflow *flow);

#endif

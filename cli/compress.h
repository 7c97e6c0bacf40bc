/* compress.h -- compressed output files (gzip, zstd: codec.h): the writer
 * of each compressed target writes into a pipe, and one thread reads the
 * pipes and writes each target's compressed bytes.  Targets are written one
 * after another (the parts of a split are never interleaved), so one thread
 * serves them all with one compressor at a time: bytes arriving for target
 * j finish every earlier target's last frame.
 *
 * Use:
 *     struct cli_outflow *f;
 *     outflow_start(&f, fds, codecs, n, threads);  // fds[i] now pipes
 *     ...write to fds...; outflow_failed(f) says early that it went wrong
 *     e = outflow_finish(f, &which);               // pipes closed, all written
 *     outflow_free(f);
 */
#ifndef RIFFLE_COMPRESS_H
#define RIFFLE_COMPRESS_H

#include <stddef.h>

#include "codec.h"

struct cli_outflow;

/* For every i with codecs[i] gzip or zstd, replace fds[i] (the target) with
 * the write end of a pipe whose bytes the thread compresses into the
 * target.  zstd uses `threads` worker threads where libzstd has them.
 * *f is NULL when no target is compressed.  Returns 0 or an errno value
 * (nothing left open). */
int outflow_start(struct cli_outflow **f, int *fds, const enum cli_codec *codecs, size_t n,
                  unsigned threads);
/* 0, or the errno value of a failure so far (the output is then lost:
 * stop writing). */
int outflow_failed(struct cli_outflow *f);
/* Close the pipes and wait until every target has its complete compressed
 * bytes (a target never written gets an empty stream: a valid compressed
 * file of nothing).  Returns 0, or the first failure's errno value with
 * *which its target.  NULL: 0. */
int outflow_finish(struct cli_outflow *f, size_t *which);
/* Stop (discarding what is not written), wait, free.  NULL is a no-op. */
void outflow_free(struct cli_outflow *f);

#endif

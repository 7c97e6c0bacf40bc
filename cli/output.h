/* output.h -- where the shuffled records go: standard output, -o FILE
 * (replaced atomically), or the consecutive parts of --split, each its own
 * file replaced atomically, all committed together at the end or none.
 *
 * Use (every engine, every mode):
 *
 *     struct cli_output out;
 *     if (output_open(&out, &spec) != 0) return CLI_FAIL;   // message printed
 *     output_set_header(&out, hdr, len);   // optional, before any record
 *     output_set_total(&out, n);           // records after the header; required
 *                                          // before writing when splitting
 *     output_records(&out, &r, offs, k);   // as often as needed, or by hand:
 *         rf_writer *w = output_writer(&out);
 *         k = min(count, output_room(&out)); ...write k records to w...;
 *         output_advance(&out, k);         // then output_writer() again: the
 *                                          // writer changes at part boundaries
 *     return output_close(&out);           // exit status; or output_abort(&out)
 *
 * Records are counted, never parsed: a "record" is whatever the caller writes
 * between two output_advance calls' worth (a line with its delimiter, a number
 * and its delimiter).  Writer errors stick in output_writer(o)->err; callers
 * may stop early when it is set, and output_close reports it.
 *
 * Splits: the records after the header (n of them, as given to
 * output_set_total) are cut into consecutive parts by the library's split
 * plan and written by its split sink (riffle_engine.h, "Splits": N equal
 * parts, percentages, counts with '*'); a count mismatch makes
 * output_set_total print an error naming both numbers.
 * Every part starts with the header (CSV headers in each file); an empty part
 * is a file holding just the header.  All part files are opened (as
 * temporaries, rf_atomic_open) by output_open, so a bad name or directory
 * fails before any work; they are fsynced, then renamed into place by
 * output_close only if everything was written without error.  Any error
 * removes every temporary and leaves every part name as it was (a failing
 * rename in the final loop -- after every fsync succeeded -- is the one case
 * that can leave earlier parts committed; it is reported).
 *
 * Compressed files (gzip, zstd) are written through compress.h: what the
 * writers write goes through a pipe to a thread that compresses it into the
 * file (or stdout), finished before the file is committed; a failure there
 * is the output's failure, and stops the writing early.
 *
 * The temporaries are unnamed where the file system allows (O_TMPFILE,
 * riffle_io.h): nothing to remove, even after kill -9.  Elsewhere (or with
 * RIFFLE_NAMED_TEMPS, cli_named_temps) their names are registered with
 * cleanup.h, so signals remove them too.
 * One thread at a time.
 */
#ifndef RIFFLE_OUTPUT_H
#define RIFFLE_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "riffle_engine.h"
#include "riffle_io.h"

struct cli_outflow;

/* ---- --split=SPEC and --output-pattern=PATTERN ---- */

/* The plan of --split (plan.parts == 0: no split) and the parts' names. */
struct cli_split {
    rf_split plan;
    char **names;
};

/* Parse SPEC into s (which must be zeroed).  Returns CLI_CONTINUE, or
 * CLI_FAIL after a usage message ("invalid split 'SPEC'..." + Try). */
int split_parse(struct cli_split *s, const char *spec);
/* Make the parts' names from PATTERN (rf_split_names).  Returns CLI_CONTINUE
 * or CLI_FAIL after a usage message ("invalid output pattern ..."). */
int split_set_pattern(struct cli_split *s, const char *pattern);
void split_free(struct cli_split *s);

/* ---- the output ---- */

struct cli_output_part {
    rf_atomic_file file;
    int guard;   /* cleanup.h slot of the temporary, or -1 */
};

struct cli_output {
    rf_writer w;              /* stdout or -o */
    unsigned char *buf;
    const char *name;         /* -o FILE, or NULL (stdout or split) */
    rf_atomic_file file;      /* -o */
    int guard;                /* cleanup.h slot of -o's temporary, or -1 */
    const struct cli_split *split; /* NULL unless splitting */
    struct cli_output_part *parts;
    rf_split_sink sink;       /* splits: writes the parts */
    int sink_ready;           /* sink initialised (to free) */
    int planned;              /* output_set_total succeeded */
    unsigned char *header;    /* a copy until output_set_total, for splits */
    size_t header_len;
    struct cli_outflow *flow; /* compressed targets (compress.h), or NULL */
    int err;                  /* -1: an error was reported */
};

/* What output_open opens: the part of a command's options it needs. */
struct cli_output_spec {
    const char *name;              /* -o FILE; NULL: standard output */
    const struct cli_split *split; /* the parts when split->plan.parts > 0; or NULL */
    enum cli_codec compress;       /* NONE, GZIP, ZSTD, or BY_NAME: each file's
                                      extension (.gz, .zst), stdout plain */
    unsigned threads;              /* zstd's worker threads (0 or 1: none) */
};

/* Open every split part (temporaries) when the spec splits, else -o FILE (a
 * temporary beside it) or standard output.  Allocates the 1 MiB buffer.
 * Returns 0, or -1 after a message. */
int output_open(struct cli_output *o, const struct cli_output_spec *spec);
/* Nonzero when writing split parts. */
int output_splitting(const struct cli_output *o);
/* The number of records that will follow the header.  Required, once, after
 * output_set_header and before writing records when splitting (it plans the
 * parts; a count mismatch is an error, printed); otherwise optional.  Returns
 * 0 or -1 after a message. */
int output_set_total(struct cli_output *o, uint64_t n);
/* The header: complete records, delimiters included.  Written at the start of
 * every part (copied), or once, at once, without a copy, when not splitting.
 * Call before any record.  Returns 0 or -1 (out of memory, printed). */
int output_set_header(struct cli_output *o, const void *bytes, size_t len);
/* The writer of the part that takes the next record. */
rf_writer *output_writer(struct cli_output *o);
/* Records the current part can still take (UINT64_MAX when not splitting;
 * 0 when all planned records are written). */
uint64_t output_room(struct cli_output *o);
/* `records` (<= output_room) were written to output_writer(o).  Moves to the
 * next part when the current one is full.  Returns 0, or an errno value
 * (write error, or EINVAL for more than the room). */
int output_advance(struct cli_output *o, uint64_t records);
/* o as an engine sink (riffle_engine.h): records through output_writer,
 * output_room and output_advance; `begin` (called with o as ctx) is the
 * caller's, which knows what to do with the engine's header and count. */
rf_engine_sink output_sink(struct cli_output *o,
                           int (*begin)(void *ctx, const void *header, size_t len,
                                        uint64_t records));
/* Write offs[0..count) of r through the parts: rf_records_write by pieces of
 * output_room.  Returns 0 or an errno value (also left in the writer). */
int output_records(struct cli_output *o, const rf_records *r, const uint64_t *offs,
                   size_t count);
/* Everything but the commit: flushed, and the staged files fsynced, so that
 * output_close has only renames left (several outputs committed together:
 * all finished before the first is committed).  Returns 0, or -1 after a
 * message (then output_abort). */
int output_finish(struct cli_output *o);
/* Flush, then commit everything or remove everything.  Returns the exit
 * status: CLI_OK, or CLI_FAIL after a message (a closed pipe on stdout --
 * EPIPE, SIGPIPE being ignored -- too: "write error: Broken pipe", as shuf).
 * Frees. */
int output_close(struct cli_output *o);
/* Remove every temporary, leaving every target as it was; free.  For error
 * paths (print the message yourself). */
void output_abort(struct cli_output *o);

#endif

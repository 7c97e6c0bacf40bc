/* reader.h -- the inputs as a stream of whole records, for the engines that
 * cannot hold the input: the head and the external engine.  Inputs are read in large blocks, or mapped a window at a time
 * (reader_map), so memory stays bounded; a pipe's buffer is grown to 256 KiB
 * (reader.c).  Records are cut at the delimiter exactly as rf_records cuts them
 * (riffle_io.h): every input's last record is a record even without its
 * delimiter, and it gets one. */
#ifndef RF_ENGINE_READER_H
#define RF_ENGINE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "riffle_engine.h"

/* A record kept out of line: its bytes, delimiter included, are at
 * [at, at + len) of the spill stream (see reader.giant). */
struct spilled {
    uint64_t at, len;
};

/* Append p[0..len) to the spill stream.  Returns 0, or 1 with the error
 * recorded. */
typedef int rfi_spill_fn(void *ctx, const unsigned char *p, size_t len);

struct reader {
    const rf_engine_input *inputs;
    size_t n_inputs, next_input;
    int fd;            /* current input, or -1 */
    int own_fd;        /* the reader opened fd, and closes it */
    const char *name;  /* its name, for error details */
    rf_engine_error *err; /* where a failure is recorded */
    rf_engine_op op;   /* what a failure of an input is: RF_ENGINE_OP_INPUT */
    struct watch *watch; /* where opened inputs are noted, or NULL */
    long slot;         /* the current input's entry there (its bytes are fed
                          to it as they are read), or -1 */
    int block_mapped;  /* the block handed out last is bytes of the current
                          input's mapping, not yet fed: the caller feeds them
                          (rfi_reader_feed) while they are in its cache */
    unsigned char delim;
    unsigned char *buf;
    size_t cap, start, end; /* unconsumed bytes buf[start..end) */
    const unsigned char *prefix; /* bytes already read from the first input */
    size_t prefix_len;
    uint64_t bytes;    /* input bytes consumed so far (progress) */
    size_t window;     /* map regular files this many bytes at a time; 0: read */
    int mapped;        /* the current input is read through windows */
    uint64_t fsize, fpos; /* its size, and the next byte to hand out */
    void *map;         /* the window handed out last, or NULL */
    size_t map_len;
    /* Out-of-line records (off while giant is 0): a record found to be
     * `giant` bytes long or more before its end is not buffered but passed
     * on to spill a read at a time, so that one record larger than memory
     * never is in memory; rfi_reader_next then hands out a one-byte proxy
     * (the delimiter) in its place and says where the bytes went. */
    size_t giant;
    rfi_spill_fn *spill;
    void *spill_ctx;
    uint64_t spilled;  /* bytes passed to spill so far */
    int in_giant;      /* a record is being spilled */
    struct spilled last; /* the record of the last proxy handed out */
    /* CSV records (rf_engine_options.csv): records end at line feeds
     * outside quotes; giant is then 0 (a record is held whole).  The
     * buffer's bytes buf[start .. start + csv_scanned) have been searched
     * for record ends (none found after the last handed out), and csv_quoted
     * says whether the byte after them lies inside quotes.  csv_lines: the
     * line feeds of the current input handed out so far (plus csv_line_base,
     * for a prefix that begins before the input does), for the line of a
     * record that leaves a quote open at the end of its input. */
    int csv;
    size_t csv_scanned;
    int csv_quoted;
    int64_t csv_lines;
};

/* Start reading inputs[0..n) (which must outlive rd); failures are
 * recorded in *err.  Returns 0, or 1 with the error recorded. */
int rfi_reader_open(struct reader *rd, const rf_engine_input *inputs, size_t n, unsigned char delim,
                rf_engine_error *err);

/* The mapping window for a memory budget: 64 MiB, or a quarter of the budget
 * if that is less (but 1 MiB at least). */
size_t rfi_reader_window(uint64_t budget);

/* The length from which a record still unfinished goes out of line, for a
 * memory budget (rd->giant): a quarter of the mapping window (a sixteenth
 * of the budget, 256 KiB at least and 16 MiB at most; riffle_engine.h,
 * "Memory"), so that the read buffer stays below half a window. */
size_t rfi_reader_giant(uint64_t budget);

/* Read regular files through read-only mappings of `window` bytes (rounded
 * to pages; 0 turns it off): no copy, and memory stays one window.  A record
 * longer than a window is read with read(2) instead. */
void rfi_reader_map(struct reader *rd, size_t window);

/* Before the first rfi_reader_next: the input starts with prefix[0..len), bytes
 * read earlier from the input `name`, which goes on as fd (positioned after
 * them; the reader closes it if own_fd), or ends there if fd < 0; the
 * inputs of rfi_reader_open follow.  prefix must stay valid until the next
 * rfi_reader_next.  The prefix is not fed to the watch (its reader fed it);
 * set rd->slot after this call to feed what follows on fd. */
void rfi_reader_prefix(struct reader *rd, const unsigned char *prefix, size_t len, int fd,
                   int own_fd, const char *name);

/* The next block of whole records, each ending with the delimiter: sets
 * *data and *len (len > 0) and returns 1; returns 2 for the proxy of an
 * out-of-line record (one record, *len == 1, its bytes at rd->last of the
 * spill stream); returns 0 at the end of the last input, or -1 with the
 * error recorded.  The block stays valid until the next call. */
int rfi_reader_next(struct reader *rd, const unsigned char **data, size_t *len);

/* Cut CSV records (see struct reader).  Before the first rfi_reader_next;
 * line_base is added to the line feeds counted in the first input (minus
 * those of a prefix's bytes that belong to earlier inputs). */
void rfi_reader_csv(struct reader *rd, int64_t line_base);

/* Feed p[0..n), bytes of the block handed out last when rd->block_mapped,
 * to the current input's watch entry (in order, each byte once). */
void rfi_reader_feed(struct reader *rd, const unsigned char *p, size_t n);

void rfi_reader_close(struct reader *rd);

#endif

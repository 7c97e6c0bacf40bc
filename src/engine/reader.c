/* reader.c -- the inputs as blocks of whole records (reader.h). */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bounds.h"
#include "engine_internal.h"
#include "records/csv_scan.h"

/* 1 MiB reads: the syscall cost disappears against the copy. */
#define READ_BLOCK ((size_t)1 << 20)

int rfi_reader_open(struct reader *rd, const rf_engine_input *inputs, size_t n, unsigned char delim,
                rf_engine_error *err)
{
    memset(rd, 0, sizeof *rd);
    rd->inputs = inputs;
    rd->n_inputs = n;
    rd->delim = delim;
    rd->fd = -1;
    rd->err = err;
    rd->op = RF_ENGINE_OP_INPUT;
    rd->slot = -1;
    rd->buf = malloc(READ_BLOCK);
    if (!rd->buf)
        return rfi_engine_nomem(err);
    rd->cap = READ_BLOCK;
    return 0;
}

void rfi_reader_csv(struct reader *rd, int64_t line_base)
{
    rd->csv = 1;
    rd->giant = 0;
    rd->csv_lines = line_base;
}

/* The end of the whole records at the front of p[0..len) (0: none). */
static size_t whole(const struct reader *rd, const unsigned char *p, size_t len)
{
    const struct bounds b = {rd->csv, rd->delim};
    return rfi_bounds_whole(b, p, len);
}

/* A block of the current input handed out: its lines counted (CSV). */
static void handed(struct reader *rd, const unsigned char *p, size_t len)
{
    if (rd->csv)
        rd->csv_lines += (int64_t)rf_delims_count(p, len, '\n');
}

/* The buffer's whole records (CSV), searched from where the last search
 * stopped, so that a long record read in small pieces is searched once. */
static size_t buffer_whole(struct reader *rd)
{
    const unsigned char *s = rd->buf + rd->start;
    const size_t len = rd->end - rd->start;
    if (!rd->csv)
        return whole(rd, s, len);
    struct rf_csv_state_ st = {rd->csv_quoted, 0, 0};
    (void)rf_csv_best_()(s + rd->csv_scanned, len - rd->csv_scanned, 0, NULL, SIZE_MAX, &st);
    const size_t w = st.last ? rd->csv_scanned + st.last : 0;
    rd->csv_scanned = len - w;
    rd->csv_quoted = st.quoted;
    return w;
}

size_t rfi_reader_window(uint64_t budget)
{
    uint64_t w = budget / 4;
    if (w > ((uint64_t)64 << 20))
        w = (uint64_t)64 << 20;
    if (w < ((uint64_t)1 << 20))
        w = (uint64_t)1 << 20;
    return (size_t)w;
}

size_t rfi_reader_giant(uint64_t budget)
{
    return rfi_reader_window(budget) / 4;
}

static int nomem(struct reader *rd)
{
    rfi_engine_nomem(rd->err);
    return -1;
}

/* An input that could not be opened (reading 0) or read. */
static int failed(struct reader *rd, int errnum, int reading)
{
    const int input = rd->op == RF_ENGINE_OP_INPUT;
    rfi_engine_fail(rd->err, RF_EIO, input && reading ? RF_ENGINE_OP_READ : rd->op, rd->name, errnum);
    return -1;
}

void rfi_reader_map(struct reader *rd, size_t window)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    rd->window = window ? (window + page - 1) / page * page : 0;
}

void rfi_reader_prefix(struct reader *rd, const unsigned char *prefix, size_t len, int fd,
                   int own_fd, const char *name)
{
    rd->prefix = len > 0 ? prefix : NULL;
    rd->prefix_len = len;
    rd->fd = fd;
    rd->own_fd = own_fd;
    rd->name = name;
    rd->bytes += len;
    rd->slot = -1;
}

/* Bytes just read from the current input, to its watch entry. */
static void feed(struct reader *rd, const unsigned char *p, size_t n)
{
    if (rd->watch)
        rfi_watch_feed(rd->watch, rd->slot, p, n);
}

void rfi_reader_feed(struct reader *rd, const unsigned char *p, size_t n)
{
    if (rd->block_mapped)
        feed(rd, p, n);
}

/* Room for `more` bytes after end, keeping buf[start..end). */
static int make_room(struct reader *rd, size_t more)
{
    if (rd->start > 0) {
        memmove(rd->buf, rd->buf + rd->start, rd->end - rd->start);
        rd->end -= rd->start;
        rd->start = 0;
    }
    if (rd->cap - rd->end >= more)
        return 0;
    size_t cap = rd->cap;
    while (cap - rd->end < more) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2; /* a record longer than the buffer: grow until it fits */
    }
    unsigned char *b = realloc(rd->buf, cap);
    if (!b)
        return -1;
    rd->buf = b;
    rd->cap = cap;
    return 0;
}

/* A pipe's buffer grown from Linux's default 64 KiB to PIPE_BUFFER, so that
 * the writer is not stopped in the middle of each of its writes (cat writes
 * 128 KiB at a time); 256 KiB was the best of 64 KiB, 256 KiB and 1 MiB
 * (docs/BENCHMARKS_CLI.md, "Engine"): a larger buffer only takes more
 * cache.  A failure (a system limit, not Linux) leaves the pipe as it was. */
#define PIPE_BUFFER ((size_t)256 << 10)

static void grow_pipe(int fd)
{
#ifdef F_SETPIPE_SZ
    const int cur = fcntl(fd, F_GETPIPE_SZ);
    if (cur >= 0 && (size_t)cur < PIPE_BUFFER)
        (void)fcntl(fd, F_SETPIPE_SZ, (int)PIPE_BUFFER);
#else
    (void)fd;
#endif
}

/* Bytes in memory are handed out as a prefix that ends its input. */
static int open_next(struct reader *rd)
{
    const rf_engine_input *in = &rd->inputs[rd->next_input++];
    rd->name = in->name ? in->name : "";
    rd->csv_lines = 0; /* everything before was handed out */
    if (in->data) {
        rfi_reader_prefix(rd, in->data, in->size, -1, 0, rd->name);
        return 0;
    }
    rd->own_fd = in->fd < 0;
    rd->fd = in->fd >= 0 ? in->fd : open(in->name, O_RDONLY | O_CLOEXEC);
    if (rd->fd < 0)
        return failed(rd, errno, 0);
    if (rd->watch &&
        rfi_watch_add(rd->watch, rd->fd, rd->own_fd, rd->name, &rd->slot, rd->err) != 0)
        return -1;
    struct stat st;
    if (fstat(rd->fd, &st) != 0)
        return 0; /* read(2) will say what is wrong */
    const off_t pos = rd->window && S_ISREG(st.st_mode) ? lseek(rd->fd, 0, SEEK_CUR) : -1;
    if (pos >= 0 && st.st_size > pos) {
        rd->mapped = 1;
        rd->fsize = (uint64_t)st.st_size;
        rd->fpos = (uint64_t)pos;
    } else if (S_ISFIFO(st.st_mode)) {
        grow_pipe(rd->fd);
    }
    return 0;
}

static void unmap(struct reader *rd)
{
    if (rd->map)
        munmap(rd->map, rd->map_len);
    rd->map = NULL;
}

/* The mapped path: the next window's whole records, straight from the page
 * cache.  Returns 1 with a block, or 0 when the caller should go on with the
 * buffer (the file ended in an unterminated record, now in the buffer; or a
 * record longer than a window: read(2) from here). */
static int next_window(struct reader *rd, const unsigned char **data, size_t *len)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const uint64_t off = rd->fpos;
    const uint64_t start = off / page * page;
    const size_t n = rd->fsize - start < rd->window ? (size_t)(rd->fsize - start) : rd->window;
    void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, rd->fd, (off_t)start);
    if (m == MAP_FAILED) {
        rd->mapped = 0; /* read(2) from here */
        lseek(rd->fd, (off_t)off, SEEK_SET);
        return 0;
    }
    rd->map = m;
    rd->map_len = n;
    const unsigned char *p = (const unsigned char *)m + (off - start);
    const size_t avail = (size_t)(start + n - off);
    const size_t w = whole(rd, p, avail);
    if (w) {
        *data = p;
        *len = w;
        rd->fpos += *len;
        rd->bytes += *len;
        handed(rd, p, w);
        rd->block_mapped = 1;
        return 1;
    }
    if (start + n == rd->fsize) { /* the file's unterminated last record */
        if (make_room(rd, avail) != 0)
            return -1;
        memcpy(rd->buf + rd->end, p, avail);
        feed(rd, p, avail);
        rd->end += avail;
        rd->bytes += avail;
        rd->fpos = rd->fsize;
    } else { /* a record longer than the window */
        rd->mapped = 0;
        lseek(rd->fd, (off_t)off, SEEK_SET);
    }
    unmap(rd);
    return 0;
}

/* A mapped input's offset is left after what was handed out, as read(2)
 * would have left it: a standard input named twice ("- -") then ends at
 * once the second time, and a program that goes on reading it after the
 * run starts where the run stopped. */
static void close_input(struct reader *rd)
{
    if (rd->mapped && rd->fd >= 0)
        (void)lseek(rd->fd, (off_t)rd->fpos, SEEK_SET);
    rd->mapped = 0;
    if (rd->fd >= 0 && rd->own_fd)
        close(rd->fd);
    rd->fd = -1;
    rd->own_fd = 0;
    rd->slot = -1;
}

/* Out-of-line records (reader.h).  spill_start begins one with its first
 * bytes, spill_rest reads it to its end, a buffer at a time. */
static int spill(struct reader *rd, const unsigned char *p, size_t len)
{
    if (rd->spill(rd->spill_ctx, p, len) != 0)
        return -1;
    rd->spilled += len;
    rd->last.len += len;
    return 0;
}

static int spill_start(struct reader *rd, const unsigned char *p, size_t len)
{
    rd->in_giant = 1;
    rd->last.at = rd->spilled;
    rd->last.len = 0;
    return spill(rd, p, len);
}

/* The record's proxy handed out. */
static int proxy(struct reader *rd, const unsigned char **data, size_t *len)
{
    rd->in_giant = 0;
    *data = &rd->delim;
    *len = 1;
    return 2;
}

/* The rest of the record being spilled, read straight from its input (the
 * buffer is empty): what follows its delimiter stays in the buffer.  At
 * the end of its input the record gets its delimiter, as every last record
 * does. */
static int spill_rest(struct reader *rd, const unsigned char **data, size_t *len)
{
    while (rd->fd >= 0) {
        const ssize_t got = read(rd->fd, rd->buf, rd->cap);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return failed(rd, errno, 1);
        if (got == 0) {
            close_input(rd);
            break;
        }
        rd->bytes += (uint64_t)got;
        feed(rd, rd->buf, (size_t)got);
        const unsigned char *q = memchr(rd->buf, rd->delim, (size_t)got);
        const size_t n = q ? (size_t)(q - rd->buf) + 1 : (size_t)got;
        if (spill(rd, rd->buf, n) != 0)
            return -1;
        if (q) {
            rd->start = n;
            rd->end = (size_t)got;
            return proxy(rd, data, len);
        }
    }
    if (spill(rd, &rd->delim, 1) != 0)
        return -1;
    return proxy(rd, data, len);
}

/* The prefix's whole records, straight from the caller's memory; its
 * unfinished last record is copied to the buffer to be completed, or,
 * already long enough to go out of line, spilled from where it is. */
static size_t whole_of(struct reader *rd, const unsigned char *p, size_t n)
{
    return whole(rd, p, n);
}

static int from_prefix(struct reader *rd, const unsigned char **data, size_t *len)
{
    const unsigned char *p = rd->prefix;
    const size_t n = rd->prefix_len;
    const size_t whole = whole_of(rd, p, n);
    rd->prefix = NULL;
    if (rd->giant && n - whole >= rd->giant) {
        if (spill_start(rd, p + whole, n - whole) != 0)
            return -1;
    } else {
        if (make_room(rd, n - whole) != 0)
            return nomem(rd);
        memcpy(rd->buf + rd->end, p + whole, n - whole);
        rd->end += n - whole;
    }
    *data = p;
    *len = whole;
    handed(rd, p, whole);
    return whole > 0;
}

/* A CSV input that ends inside quotes: the line where its last record
 * starts. */
static int open_quote(struct reader *rd)
{
    const uint64_t line =
        rf_csv_open_quote_line(rd->buf + rd->start, rd->end - rd->start);
    if (line == 0)
        return 0;
    const int64_t at = rd->csv_lines + (int64_t)line;
    rfi_engine_csv_open(rd->err, rd->name, at > 0 ? (uint64_t)at : 1);
    return -1;
}

/* End of the current input: its last record gets its delimiter. */
static int end_of_input(struct reader *rd)
{
    if (rd->csv && rd->end > rd->start && open_quote(rd) != 0)
        return -1;
    close_input(rd);
    if (rd->end > rd->start && rd->buf[rd->end - 1] != rd->delim) {
        if (make_room(rd, 1) != 0)
            return nomem(rd);
        rd->buf[rd->end++] = rd->delim;
    }
    if (rd->csv) { /* the next input's lines: its bytes still buffered do not count */
        rd->csv_lines = -(int64_t)rf_delims_count(rd->buf + rd->start, rd->end - rd->start, '\n');
        rd->csv_scanned = 0;
        rd->csv_quoted = 0;
    }
    return 0;
}

int rfi_reader_next(struct reader *rd, const unsigned char **data, size_t *len)
{
    unmap(rd); /* the caller is done with the last window */
    rd->block_mapped = 0;
    if (rd->prefix) {
        const int r = from_prefix(rd, data, len);
        if (r != 0)
            return r;
    }
    for (;;) {
        if (rd->in_giant) /* begun in the prefix */
            return spill_rest(rd, data, len);
        if (rd->end > rd->start) {
            const unsigned char *s = rd->buf + rd->start;
            const size_t w = buffer_whole(rd);
            if (w) {
                *data = s;
                *len = w;
                rd->start += *len;
                handed(rd, s, w);
                return 1;
            }
        }
        /* (CSV: whatever is left, even ending with a line feed, is unfinished) */
        if (rd->fd < 0 && rd->end > rd->start &&
            (rd->csv || rd->buf[rd->end - 1] != rd->delim)) {
            if (end_of_input(rd) != 0) /* a prefix that ended inside a record */
                return -1;
            continue;
        }
        if (rd->fd < 0) {
            if (rd->next_input >= rd->n_inputs)
                return 0; /* everything was handed out: inputs end with delimiters */
            if (open_next(rd) != 0)
                return -1;
            if (rd->fd < 0) { /* bytes in memory */
                const int r = rd->prefix ? from_prefix(rd, data, len) : 0;
                if (r != 0)
                    return r;
                continue;
            }
        }
        if (rd->mapped && rd->fpos < rd->fsize) {
            const int r = next_window(rd, data, len);
            if (r > 0)
                return 1;
            if (r < 0)
                return nomem(rd);
            continue;
        }
        if (rd->mapped) { /* every byte handed out */
            if (end_of_input(rd) != 0)
                return -1;
            continue;
        }
        if (rd->giant && rd->end - rd->start >= rd->giant) {
            /* no delimiter in the buffer: one record, too long to hold */
            if (spill_start(rd, rd->buf + rd->start, rd->end - rd->start) != 0)
                return -1;
            rd->start = rd->end = 0;
            return spill_rest(rd, data, len);
        }
        if (make_room(rd, READ_BLOCK / 2) != 0)
            return nomem(rd);
        const ssize_t got = read(rd->fd, rd->buf + rd->end, rd->cap - rd->end);
        if (got > 0) {
            feed(rd, rd->buf + rd->end, (size_t)got);
            rd->end += (size_t)got;
            rd->bytes += (uint64_t)got;
        } else if (got == 0) {
            if (end_of_input(rd) != 0)
                return -1;
        } else if (errno != EINTR) {
            return failed(rd, errno, 1);
        }
    }
}

void rfi_reader_close(struct reader *rd)
{
    unmap(rd);
    close_input(rd);
    free(rd->buf);
    rd->buf = NULL;
}

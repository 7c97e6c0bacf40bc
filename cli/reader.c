/* reader.c -- the inputs as blocks of whole records (reader.h). */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* 1 MiB reads: the syscall cost disappears against the copy. */
#define READ_BLOCK ((size_t)1 << 20)

int reader_open(struct reader *rd, char **names, int n, unsigned char delim)
{
    memset(rd, 0, sizeof *rd);
    rd->names = names;
    rd->n_names = n;
    rd->delim = delim;
    rd->fd = -1;
    rd->buf = malloc(READ_BLOCK);
    if (!rd->buf) {
        cli_error("memory exhausted");
        return 1;
    }
    rd->cap = READ_BLOCK;
    return 0;
}

void reader_map(struct reader *rd, size_t window)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    rd->window = window ? (window + page - 1) / page * page : 0;
}

void reader_prefix(struct reader *rd, const unsigned char *prefix, size_t len, int fd,
                   const char *name)
{
    rd->prefix = len > 0 ? prefix : NULL;
    rd->prefix_len = len;
    rd->fd = fd;
    rd->name = name;
    rd->bytes = len;
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
 * 128 KiB at a time).  cat | riffle -n 1000 on the 1 GB file (2-CPU VM,
 * shared; medians of 11 interleaved runs, CPU of the whole pipeline): 64 KiB
 * 0.44 s (0.43 s CPU), 256 KiB 0.42 s (0.42 s), 1 MiB 0.44 s (0.45 s) -- a
 * larger buffer only takes more cache.  A failure (a system limit, not
 * Linux) leaves the pipe as it was. */
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

static int open_next(struct reader *rd)
{
    const char *name = rd->names[rd->next_name++];
    rd->name = name;
    rd->fd = strcmp(name, "-") == 0 ? STDIN_FILENO : open(name, O_RDONLY | O_CLOEXEC);
    if (rd->fd < 0) {
        cli_error("%s: %s", name, strerror(errno));
        return -1;
    }
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
    const unsigned char *q = memrchr(p, rd->delim, avail);
    if (q) {
        *data = p;
        *len = (size_t)(q - p) + 1;
        rd->fpos += *len;
        rd->bytes += *len;
        return 1;
    }
    if (start + n == rd->fsize) { /* the file's unterminated last record */
        if (make_room(rd, avail) != 0)
            return -1;
        memcpy(rd->buf + rd->end, p, avail);
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

static void close_input(struct reader *rd)
{
    rd->mapped = 0;
    if (rd->fd > STDIN_FILENO)
        close(rd->fd);
    rd->fd = -1;
}

/* The prefix's whole records, straight from the caller's memory; its
 * unfinished last record is copied to the buffer to be completed. */
static int from_prefix(struct reader *rd, const unsigned char **data, size_t *len)
{
    const unsigned char *p = rd->prefix;
    const size_t n = rd->prefix_len;
    const unsigned char *q = memrchr(p, rd->delim, n);
    const size_t whole = q ? (size_t)(q - p) + 1 : 0;
    rd->prefix = NULL;
    if (make_room(rd, n - whole) != 0) {
        cli_error("memory exhausted");
        return -1;
    }
    memcpy(rd->buf + rd->end, p + whole, n - whole);
    rd->end += n - whole;
    *data = p;
    *len = whole;
    return whole > 0;
}

/* End of the current input: its last record gets its delimiter. */
static int end_of_input(struct reader *rd)
{
    close_input(rd);
    if (rd->end > rd->start && rd->buf[rd->end - 1] != rd->delim) {
        if (make_room(rd, 1) != 0) {
            cli_error("memory exhausted");
            return -1;
        }
        rd->buf[rd->end++] = rd->delim;
    }
    return 0;
}

int reader_next(struct reader *rd, const unsigned char **data, size_t *len)
{
    unmap(rd); /* the caller is done with the last window */
    if (rd->prefix) {
        const int r = from_prefix(rd, data, len);
        if (r != 0)
            return r;
    }
    for (;;) {
        if (rd->end > rd->start) {
            const unsigned char *s = rd->buf + rd->start;
            const unsigned char *q = memrchr(s, rd->delim, rd->end - rd->start);
            if (q) {
                *data = s;
                *len = (size_t)(q - s) + 1;
                rd->start += *len;
                return 1;
            }
        }
        if (rd->fd < 0 && rd->end > rd->start && rd->buf[rd->end - 1] != rd->delim) {
            if (end_of_input(rd) != 0) /* a prefix that ended inside a record */
                return -1;
            continue;
        }
        if (rd->fd < 0) {
            if (rd->next_name >= rd->n_names)
                return 0; /* everything was handed out: inputs end with delimiters */
            if (open_next(rd) != 0)
                return -1;
        }
        if (rd->mapped && rd->fpos < rd->fsize) {
            const int r = next_window(rd, data, len);
            if (r > 0)
                return 1;
            if (r < 0) {
                cli_error("memory exhausted");
                return -1;
            }
            continue;
        }
        if (rd->mapped) { /* every byte handed out */
            if (end_of_input(rd) != 0)
                return -1;
            continue;
        }
        if (make_room(rd, READ_BLOCK / 2) != 0) {
            cli_error("memory exhausted");
            return -1;
        }
        const ssize_t got = read(rd->fd, rd->buf + rd->end, rd->cap - rd->end);
        if (got > 0) {
            rd->end += (size_t)got;
            rd->bytes += (uint64_t)got;
        } else if (got == 0) {
            if (end_of_input(rd) != 0)
                return -1;
        } else if (errno != EINTR) {
            cli_error("%s: %s", rd->name, strerror(errno));
            return -1;
        }
    }
}

void reader_close(struct reader *rd)
{
    unmap(rd);
    close_input(rd);
    free(rd->buf);
    rd->buf = NULL;
}

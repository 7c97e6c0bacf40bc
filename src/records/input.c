/*
 * input.c -- reading an input into a record set: mmap(2) for a single
 * regular file (no copy; the page cache is the buffer), large read(2) calls
 * into a growing heap block for everything else.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "records_priv.h"

/* Read size for pipes and terminals: big enough that the syscall cost
 * disappears against the copy, small enough not to over-reserve. */
#define READ_CHUNK ((size_t)1 << 20)

static int map_file(rf_records *r, int fd, size_t len)
{
    /* No MAP_POPULATE: it maps every page on this one thread before anything
     * else runs, while faulting in place (16 pages a fault) spreads that
     * work over the threads that read the data -- the in-memory shuffle
     * counts records on every core (docs/BENCHMARKS_CLI.md). */
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return errno ? errno : ENOMEM;
    r->map_ = m;
    r->map_len_ = len;
    r->data = m;
    r->size = len;
    return 0;
}

/* A pipe's buffer is 64 KiB by default: each refill is a context switch
 * between writer and reader.  1 MiB (the usual pipe-max-size) cuts them 16
 * times; failure (not a pipe, a lower limit) changes nothing. */
static void widen_pipe(int fd)
{
#if defined(F_SETPIPE_SZ)
    (void)fcntl(fd, F_SETPIPE_SZ, (int)READ_CHUNK);
#else
    (void)fd;
#endif
}

/* Fault in the pages the next read will fill with one madvise call instead
 * of one page fault per 4 KiB inside read(2): less kernel time reading from
 * a pipe (docs/BENCHMARKS_CLI.md).  Advice only (Linux 5.14+); failure is
 * harmless. */
static void prefault(unsigned char *p, size_t len)
{
#if defined(MADV_POPULATE_WRITE)
    const uintptr_t page = 4096;
    const uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
    const uintptr_t e = ((uintptr_t)p + len) & ~(page - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)len;
#endif
}

/* Read in 1 MiB slices and search each for delimiters at once, while it is
 * still in cache: for a pipe this overlaps the indexing with the writer
 * (unless rf_records_defer_index: then nothing is searched).
 * Stops at end of file (*more = 0) or once the set holds `max` bytes or more
 * (*more = 1). */
static int read_all(rf_records *r, int fd, size_t hint, size_t max, int *more)
{
    const size_t start = r->size;
    int e = hint ? rf_records_reserve_(r, hint) : 0;
    *more = 0;
    for (; !e;) {
        if (r->size >= max) {
            *more = 1;
            return 0;
        }
        e = rf_records_reserve_(r, READ_CHUNK);
        if (e)
            break;
        prefault(r->buf_ + r->size, READ_CHUNK);
        const ssize_t got = read(fd, r->buf_ + r->size, READ_CHUNK);
        if (got == 0)
            return 0;
        if (got < 0) {
            if (errno != EINTR)
                e = errno;
            continue;
        }
        r->size += (size_t)got;
        if (!r->lazy_)
            e = rf_records_scan_(r);
    }
    /* Keep what was there before the call, and its scan. */
    r->size = start;
    if (r->scanned_ > start) {
        r->scanned_ = start;
        while (r->found_ > 0 && r->offs[r->found_ - 1] > start)
            r->found_--;
    }
    return e;
}

/* Map fd (fstat'ed into st) into r if r is empty and fd a regular, non-empty
 * file at its start: 1 when mapped, 0 when r and fd are left as they were. */
static int try_map(rf_records *r, int fd, const struct stat *st)
{
    if (!S_ISREG(st->st_mode) || st->st_size <= 0 || (uint64_t)st->st_size > SIZE_MAX ||
        r->size != 0 || r->map_)
        return 0;
    /* The file may have a current offset (stdin redirected after a partial
     * read): honour it by mapping only when at the start. */
    if (lseek(fd, 0, SEEK_CUR) != 0 || map_file(r, fd, (size_t)st->st_size) != 0)
        return 0;
    lseek(fd, 0, SEEK_END);
    return 1;
}

RF_API int rf_records_map_fd(rf_records *r, int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && try_map(r, fd, &st);
}

RF_API int rf_records_add_fd_max(rf_records *r, int fd, size_t max, int *more)
{
    struct stat st;
    *more = 0;
    if (fstat(fd, &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    const int regular = S_ISREG(st.st_mode) && st.st_size > 0;
    if (regular && (uint64_t)st.st_size <= max && try_map(r, fd, &st))
        return 0;
    const int e = rf_records_seal_(r);
    if (e)
        return e;
    if (S_ISFIFO(st.st_mode))
        widen_pipe(fd);
    const size_t hint = regular && (uint64_t)st.st_size < max ? (size_t)st.st_size + 1 : 0;
    return read_all(r, fd, hint, max, more);
}

RF_API int rf_records_add_fd(rf_records *r, int fd)
{
    int more;
    return rf_records_add_fd_max(r, fd, SIZE_MAX, &more);
}

RF_API int rf_records_add_bytes(rf_records *r, const void *bytes, size_t len)
{
    if (len == 0)
        return 0;
    int e = rf_records_seal_(r);
    if (!e)
        e = rf_records_reserve_(r, len);
    if (e)
        return e;
    memcpy(r->buf_ + r->size, bytes, len);
    r->size += len;
    return r->lazy_ ? 0 : rf_records_scan_(r);
}

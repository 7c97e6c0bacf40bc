/* stamp.c -- what an input file was when it was opened (riffle_io.h,
 * "Inputs that change while they are read"). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bytesum.h"
#include "riffle_io.h"

static void stamp_of(const struct stat *st, rf_file_stamp *s)
{
    *s = (rf_file_stamp){0};
    s->regular = S_ISREG(st->st_mode);
    s->dev = (uint64_t)st->st_dev;
    s->ino = (uint64_t)st->st_ino;
    s->size = (int64_t)st->st_size;
    s->mtime_sec = (int64_t)st->st_mtim.tv_sec;
    s->mtime_nsec = st->st_mtim.tv_nsec;
    s->ctime_sec = (int64_t)st->st_ctim.tv_sec;
    s->ctime_nsec = st->st_ctim.tv_nsec;
}

static int recent(const rf_file_stamp *s);

RF_API int rf_file_stamp_fd(int fd, rf_file_stamp *s)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    stamp_of(&st, s);
    s->fresh = s->regular && recent(s);
    return 0;
}

RF_API int rf_file_stamp_path(const char *path, rf_file_stamp *s)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    stamp_of(&st, s);
    return 0;
}

RF_API int rf_file_changed(const rf_file_stamp *then, const rf_file_stamp *now)
{
    if (!then->regular || !now->regular || then->dev != now->dev || then->ino != now->ino)
        return 0;
    return then->size != now->size || then->mtime_sec != now->mtime_sec ||
           then->mtime_nsec != now->mtime_nsec || then->ctime_sec != now->ctime_sec ||
           then->ctime_nsec != now->ctime_nsec;
}

#define SUM_BLOCK ((size_t)1 << 20)

/* The hash of the first len bytes of fd (bytesum.h), read with pread(2)
 * (the descriptor's offset is left alone): 0, ENOMEM, a read error, or
 * ENODATA when the file ends first. */
static int sum_fd(int fd, uint64_t len, uint64_t *out)
{
    unsigned char *buf = malloc(SUM_BLOCK);
    if (!buf)
        return ENOMEM;
    struct rfi_bytesum s;
    rfi_bytesum_init(&s);
    int e = 0;
    while (s.len < len) {
        const uint64_t left = len - s.len;
        const size_t want = left < SUM_BLOCK ? (size_t)left : SUM_BLOCK;
        const ssize_t got = pread(fd, buf, want, (off_t)s.len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            e = got < 0 ? errno : ENODATA;
            break;
        }
        rfi_bytesum_feed(&s, buf, (size_t)got);
    }
    if (!e)
        *out = rfi_bytesum_value(&s);
    free(buf);
    return e;
}

/* Whether s's modification time is within RF_FILE_FRESH_SECONDS of the
 * clock the kernel stamps files with (the coarse real-time clock,
 * current_time() in Linux), or after it (a clock set back).  Only a file
 * whose modification time is already the clock's can be rewritten without
 * moving it; its change time is at least as late, so it need not be
 * looked at (a file whose times were set back, touch -d, has a fresh change
 * time and an old modification time, which a rewrite moves). */
static int recent(const rf_file_stamp *s)
{
    struct timespec now;
#ifdef CLOCK_REALTIME_COARSE
    if (clock_gettime(CLOCK_REALTIME_COARSE, &now) != 0)
#endif
        if (clock_gettime(CLOCK_REALTIME, &now) != 0)
            return 1;
    return s->mtime_sec >= (int64_t)now.tv_sec - RF_FILE_FRESH_SECONDS;
}

RF_API int rf_file_stamp_sum_fd(int fd, rf_file_stamp *s)
{
    int e = rf_file_stamp_fd(fd, s);
    if (e || !s->regular)
        return e;
    e = sum_fd(fd, (uint64_t)s->size, &s->sum);
    s->summed = e == 0;
    return e == ENODATA ? 0 : e; /* shrunk at once: found by the check */
}

/* Whether the file open as fd still begins with the bytes then summed. */
static int prefix_differs(const rf_file_stamp *then, int fd)
{
    uint64_t now;
    return sum_fd(fd, (uint64_t)then->size, &now) != 0 || now != then->sum;
}

RF_API int rf_file_snapshot_changed(const rf_file_stamp *then, int fd, const char *path)
{
    rf_file_stamp now;
    const int own = fd < 0;
    if (own)
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* never wait on a FIFO */
    if (fd < 0 || rf_file_stamp_fd(fd, &now) != 0) {
        if (own && fd >= 0)
            close(fd);
        return 0; /* no file by that name now: not the one read */
    }
    int changed = rf_file_changed(then, &now);
    if (changed && now.size > then->size)
        changed = !then->summed || prefix_differs(then, fd);
    else if (!changed && then->summed && then->fresh && now.dev == then->dev &&
             now.ino == then->ino)
        changed = prefix_differs(then, fd);
    if (own)
        close(fd);
    return changed;
}

/* stamp.c -- what an input file was when it was opened (riffle_io.h,
 * "Inputs that change while they are read"). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

RF_API int rf_file_stamp_fd(int fd, rf_file_stamp *s)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    stamp_of(&st, s);
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

/* The hash: four lanes of the xxHash64 round (Yann Collet, xxHash,
 * https://github.com/Cyan4973/xxHash, XXH64 specification), which run in
 * parallel and keep up with the page cache; it finds accidents (an
 * application rewriting its own file), not an adversary, who may change
 * the file at will anyway.  Bytes are taken as little-endian words, so the
 * sum does not depend on alignment; it is kept only within one run. */
#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull

struct sum {
    uint64_t lane[4];
    uint64_t len;
};

static uint64_t rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

static uint64_t round64(uint64_t acc, uint64_t w)
{
    return rotl(acc + w * P2, 31) * P1;
}

static uint64_t word_le(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w); /* one unaligned load */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

static void sum_init(struct sum *s)
{
    s->lane[0] = P1 + P2;
    s->lane[1] = P2;
    s->lane[2] = 0;
    s->lane[3] = 0 - P1;
    s->len = 0;
}

/* Whole 32-byte stripes of p[0, n); returns the bytes consumed. */
static size_t sum_stripes(struct sum *s, const unsigned char *p, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 4; l++)
            s->lane[l] = round64(s->lane[l], word_le(p + i + 8 * l));
    s->len += i;
    return i;
}

/* The tail (under 32 bytes) and the length folded in. */
static uint64_t sum_final(const struct sum *s, const unsigned char *tail, size_t n)
{
    uint64_t h = rotl(s->lane[0], 1) + rotl(s->lane[1], 7) + rotl(s->lane[2], 12) +
                 rotl(s->lane[3], 18);
    h ^= (s->len + n) * P3;
    for (size_t i = 0; i < n; i++)
        h = rotl(h ^ (tail[i] * P1), 11) * P2;
    h ^= h >> 33;
    h *= P2;
    return h ^ (h >> 29);
}

#define SUM_BLOCK ((size_t)1 << 20)

/* The hash of the first len bytes of fd (pread, whole blocks until the
 * last): 0, ENOMEM, a read error, or ENODATA when the file ends first. */
static int sum_fd(int fd, uint64_t len, uint64_t *out)
{
    unsigned char *buf = malloc(SUM_BLOCK);
    if (!buf)
        return ENOMEM;
    struct sum s;
    sum_init(&s);
    uint64_t off = 0;
    size_t have = 0; /* bytes in buf, not yet consumed */
    int e = 0;
    while (off < len) {
        const uint64_t left = len - off;
        const size_t want = SUM_BLOCK - have < left ? SUM_BLOCK - have : (size_t)left;
        const ssize_t got = pread(fd, buf + have, want, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            e = got < 0 ? errno : ENODATA;
            break;
        }
        off += (uint64_t)got;
        have += (size_t)got;
        const size_t used = sum_stripes(&s, buf, have);
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    if (!e)
        *out = sum_final(&s, buf, have);
    free(buf);
    return e;
}

/* Whether s's modification or change time is within RF_FILE_FRESH_SECONDS
 * of the clock the kernel stamps files with (the coarse real-time clock,
 * current_time() in Linux), or after it (a clock set back). */
static int recent(const rf_file_stamp *s)
{
    struct timespec now;
#ifdef CLOCK_REALTIME_COARSE
    if (clock_gettime(CLOCK_REALTIME_COARSE, &now) != 0)
#endif
        if (clock_gettime(CLOCK_REALTIME, &now) != 0)
            return 1;
    const int64_t latest = s->mtime_sec > s->ctime_sec ? s->mtime_sec : s->ctime_sec;
    return latest >= (int64_t)now.tv_sec - RF_FILE_FRESH_SECONDS;
}

/* The hash of the first len bytes of fd through a mapping: no copy, and
 * the page cache's pages shared (the run maps them too), populated at once
 * rather than by a page fault per 16 pages.  ENOTSUP where the
 * file cannot be mapped, for sum_fd instead.  A file cut shorter while it
 * is hashed raises SIGBUS, as it would a moment later in the run's own
 * mapping. */
static int sum_mapped(int fd, uint64_t len, uint64_t *out)
{
    struct sum s;
    sum_init(&s);
    if (len == 0 || len > SIZE_MAX) {
        *out = sum_final(&s, NULL, 0);
        return len == 0 ? 0 : ENOTSUP;
    }
    void *m = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED)
        return ENOTSUP;
    const unsigned char *p = m;
    const size_t used = sum_stripes(&s, p, (size_t)len);
    *out = sum_final(&s, p + used, (size_t)len - used);
    munmap(m, (size_t)len);
    return 0;
}

RF_API int rf_file_stamp_sum_fd(int fd, rf_file_stamp *s)
{
    int e = rf_file_stamp_fd(fd, s);
    if (e || !s->regular)
        return e;
    e = sum_mapped(fd, (uint64_t)s->size, &s->sum);
    if (e == ENOTSUP)
        e = sum_fd(fd, (uint64_t)s->size, &s->sum);
    s->summed = e == 0;
    s->fresh = recent(s);
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

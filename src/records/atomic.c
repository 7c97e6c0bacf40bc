/*
 * atomic.c -- replace an output file atomically: write a temporary file in
 * the same directory, fsync it, rename(2) it over the target (rename within one
 * file system is atomic in POSIX), and remove it on every failure path.  A
 * program that wants it removed on a signal too does so itself, with the name
 * rf_atomic_temp_path gives: the library installs no signal handlers.  The
 * records layer, include/riffle_io.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "riffle_io.h"

#define TMP_NAME ".riffle-XXXXXX"

static void forget(rf_atomic_file *a)
{
    free(a->path);
    free(a->tmp);
    a->path = a->tmp = NULL;
    a->fd = -1;
}

static char *dup_str(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* dirname(path) + "/" + TMP_NAME, without touching path. */
static char *temp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    const size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
    char *t = malloc(dlen + sizeof TMP_NAME);
    if (t) {
        memcpy(t, path, dlen);
        memcpy(t + dlen, TMP_NAME, sizeof TMP_NAME);
    }
    return t;
}

/* Give the new file the old one's mode (and owner, where permitted), or the
 * mode open(2) would have given a new file. */
static int copy_mode(int fd, const struct stat *old, int existed)
{
    if (existed) {
        if (fchown(fd, old->st_uid, old->st_gid) != 0) {
            /* Not permitted for a non-root user: keep our own ownership. */
        }
        return fchmod(fd, old->st_mode & 07777) == 0 ? 0 : errno;
    }
    const mode_t mask = umask(0);
    umask(mask);
    return fchmod(fd, 0666 & ~mask) == 0 ? 0 : errno;
}

static int open_in_place(rf_atomic_file *a)
{
    a->fd = open(a->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (a->fd < 0) {
        const int e = errno;
        forget(a);
        return e;
    }
    return 0;
}

RF_API int rf_atomic_open(rf_atomic_file *a, const char *path)
{
    a->fd = -1;
    a->tmp = NULL;
    a->path = realpath(path, NULL); /* follows symlinks; NULL if missing */
    struct stat st;
    const int existed = a->path && stat(a->path, &st) == 0;
    if (!a->path)
        a->path = dup_str(path);
    if (!a->path)
        return ENOMEM;
    if (existed && !S_ISREG(st.st_mode))
        return open_in_place(a);
    a->tmp = temp_template(a->path);
    if (!a->tmp) {
        forget(a);
        return ENOMEM;
    }
    a->fd = mkostemp(a->tmp, O_CLOEXEC);
    if (a->fd < 0) {
        const int e = errno;
        forget(a);
        return e;
    }
    const int e = copy_mode(a->fd, &st, existed);
    if (e) {
        rf_atomic_abort(a);
        return e;
    }
    return 0;
}

RF_API void rf_atomic_abort(rf_atomic_file *a)
{
    if (a->fd >= 0)
        close(a->fd);
    if (a->tmp)
        unlink(a->tmp);
    forget(a);
}

RF_API int rf_atomic_commit(rf_atomic_file *a)
{
    if (!a->tmp) { /* written in place */
        const int e = close(a->fd) == 0 ? 0 : errno;
        a->fd = -1;
        forget(a);
        return e;
    }
    int e = 0;
    if (fsync(a->fd) != 0)
        e = errno;
    if (close(a->fd) != 0 && !e)
        e = errno;
    a->fd = -1;
    if (!e && rename(a->tmp, a->path) != 0)
        e = errno;
    if (e) {
        rf_atomic_abort(a);
        return e;
    }
    forget(a);
    return 0;
}

RF_API const char *rf_atomic_temp_path(const rf_atomic_file *a)
{
    return a->tmp;
}

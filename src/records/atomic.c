/*
 * atomic.c -- replace an output file atomically: write a temporary file in
 * the same directory, fsync it, rename(2) it over the target (rename within one
 * file system is atomic in POSIX), and remove it on every failure path.  A
 * program that wants it removed on a signal too does so itself, with the name
 * rf_atomic_temp_path gives: the library installs no signal handlers.  A path
 * that is not a regular file (a device, a FIFO, a socket, a descriptor such
 * as /dev/stdout) is written in place, and a dangling symbolic link gets its
 * target created.  The records layer, include/riffle_io.h.
 *
 * Where the file system takes it, the temporary file is unnamed (open(2)
 * with O_TMPFILE, Linux 3.11): nothing is left however the process ends,
 * kill -9 included.  At commit it gets a name by linkat(2) through
 * /proc/self/fd/N (allowed to any process, where AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH): the target's own name if there is none yet, else a
 * fresh ".riffle-XXXXXX" renamed over the target at once -- rename(2) is
 * what keeps a target that is also the input safe, and linkat(2) cannot
 * replace a name.  A kill -9 between that link and the rename leaves the
 * named temporary, as the named path does at any time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>
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
    a->unnamed = 0;
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

/* The process's file mode creation mask, read without changing it: the
 * "Umask:" line of /proc/self/status (Linux 4.7).  umask(2) can only read the
 * mask by setting it, and a file another thread creates between the two calls
 * would get the wrong mode; that dance is left for kernels without the line. */
static mode_t process_umask(void)
{
    char buf[4096];
    const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = -1;
    if (fd >= 0) {
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
    }
    if (n > 0) {
        buf[n] = '\0';
        const char *u = strstr(buf, "\nUmask:");
        if (u) {
            char *end;
            const unsigned long m = strtoul(u + 7, &end, 8);
            if (end != u + 7 && m <= 0777)
                return (mode_t)m;
        }
    }
    const mode_t mask = umask(0);
    umask(mask);
    return mask;
}

/* Give the new file the old one's mode and, as far as the caller may set
 * them, its owner and group, or the mode open(2) would have given a new
 * file.  Owner and group are tried together (root), then the group alone (a
 * user who belongs to it, chown(2)); what is refused stays the caller's.
 * fchmod comes last, as chown(2) may clear the set-user-ID and set-group-ID
 * bits. */
static int copy_mode(int fd, const struct stat *old, int existed)
{
    if (existed) {
        if (fchown(fd, old->st_uid, old->st_gid) != 0 && fchown(fd, (uid_t)-1, old->st_gid) != 0) {
            /* Neither permitted: the new file keeps the caller's. */
        }
        return fchmod(fd, old->st_mode & 07777) == 0 ? 0 : errno;
    }
    return fchmod(fd, 0666 & ~process_umask()) == 0 ? 0 : errno;
}

/* Whether the caller may replace the existing regular file `path` (links
 * resolved, st its stat): 0, or EACCES (EROFS, ...) where writing to it in
 * place, as GNU shuf does with freopen(3), would be refused.  A rename needs
 * only the directory's write permission, so without this check the
 * temporary-and-rename would let a user replace a file that is not theirs to
 * write.  faccessat(2) with AT_EACCESS asks the kernel with the effective
 * IDs, as open(2) would: root passes, and access control lists count.  In a
 * sticky directory (/tmp) rename(2) may not replace another user's file
 * unless the caller owns the directory or is privileged (CAP_FOWNER); that
 * is refused here too, before any output is written, rather than at the
 * commit. */
static int may_replace(const char *path, const struct stat *st)
{
    if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
        return errno;
    char *dir = temp_template(path);
    if (!dir)
        return ENOMEM;
    const size_t dlen = strlen(dir) - (sizeof TMP_NAME - 1);
    strcpy(dir + dlen, dlen ? "" : ".");
    struct stat ds;
    const int e = stat(dir, &ds) != 0 ? errno : 0;
    free(dir);
    if (e)
        return e;
    const uid_t me = geteuid();
    if ((ds.st_mode & S_ISVTX) && me != 0 && st->st_uid != me && ds.st_uid != me)
        return EACCES;
    return 0;
}

/* The descriptor a path names by itself: /dev/stdin, /dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N; -1 for any other name. */
static int descriptor_name(const char *p)
{
    static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    for (int i = 0; i < 3; i++)
        if (strcmp(p, std[i]) == 0)
            return i;
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/"};
    for (int i = 0; i < 2; i++) {
        const size_t n = strlen(dirs[i]);
        if (strncmp(p, dirs[i], n) != 0 || p[n] == '\0')
            continue;
        long fd = 0;
        for (p += n; *p; p++) {
            if (*p < '0' || *p > '9' || fd > 1000000)
                return -1;
            fd = fd * 10 + (*p - '0');
        }
        return (int)fd;
    }
    return -1;
}

/* Symbolic links followed at most, as the kernel's MAXSYMLINKS. */
#define MAX_HOPS 40

/* Where the chain of symbolic links starting at `path` ends: a malloc'ed name
 * that lstat(2) does not find (the name to create, for a dangling link), or
 * that is not a link; or, with *fd >= 0, the first name on the way that names
 * a descriptor by itself (descriptor_name).  NULL with errno set on failure
 * (ELOOP for a cycle). */
static char *follow_links(const char *path, int *fd)
{
    char *cur = dup_str(path);
    *fd = -1;
    for (int hop = 0; cur; hop++) {
        *fd = descriptor_name(cur);
        struct stat st;
        if (*fd >= 0 || lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur;
        if (hop == MAX_HOPS) {
            free(cur);
            errno = ELOOP;
            return NULL;
        }
        /* st_size is the target's length, or 0 for the kernel's own links
         * (procfs): then read with a page-sized buffer. */
        const size_t cap = (st.st_size > 0 ? (size_t)st.st_size : 4096) + 1;
        char *target = malloc(cap);
        const ssize_t n = target ? readlink(cur, target, cap) : -1;
        if (n < 0 || (size_t)n >= cap) {
            const int e = !target ? ENOMEM : n < 0 ? errno : ENAMETOOLONG;
            free(target);
            free(cur);
            errno = e;
            return NULL;
        }
        target[n] = '\0';
        if (target[0] == '/') {
            free(cur);
            cur = target;
            continue;
        }
        /* Relative: from the directory holding the link. */
        const char *slash = strrchr(cur, '/');
        const size_t dlen = slash ? (size_t)(slash - cur) + 1 : 0;
        char *next = malloc(dlen + (size_t)n + 1);
        if (next) {
            memcpy(next, cur, dlen);
            memcpy(next + dlen, target, (size_t)n + 1);
        }
        free(target);
        free(cur);
        cur = next;
    }
    errno = ENOMEM;
    return NULL;
}

/* Write to `path` itself: a device, a FIFO, a socket or a descriptor, where a
 * rename would replace the name instead of writing to what it names.  A
 * socket cannot be opened by name: when the path names a descriptor
 * (/dev/stdout, /dev/fd/N) that descriptor is duplicated instead. */
static int open_in_place(rf_atomic_file *a, const char *path)
{
    a->path = dup_str(path);
    if (!a->path)
        return ENOMEM;
    a->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (a->fd < 0 && errno == ENXIO) {
        int fd;
        char *end = follow_links(path, &fd);
        free(end);
        if (fd >= 0)
            a->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        else
            errno = ENXIO;
    }
    if (a->fd < 0) {
        const int e = errno;
        forget(a);
        return e;
    }
    return 0;
}

/* An unnamed temporary in the directory of template t (which ends in
 * TMP_NAME): a descriptor, or -1 with errno set.  Refused by the file
 * system or kernel (EOPNOTSUPP; EISDIR and EINVAL from kernels without
 * O_TMPFILE), or without /proc to link it through: -1 with errno 0, for a
 * named temporary instead. */
static int open_unnamed(const char *t)
{
#ifdef O_TMPFILE
    if (access("/proc/self/fd", X_OK) != 0) {
        errno = 0;
        return -1;
    }
    const size_t dlen = strlen(t) - (sizeof TMP_NAME - 1);
    char *dir = malloc(dlen + 2);
    if (!dir) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(dir, t, dlen);
    strcpy(dir + dlen, dlen ? "" : ".");
    const int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    const int e = errno;
    free(dir);
    if (fd < 0)
        errno = e == EOPNOTSUPP || e == EISDIR || e == EINVAL ? 0 : e;
    return fd;
#else
    (void)t;
    errno = 0;
    return -1;
#endif
}

static int open_staged(rf_atomic_file *a, const char *path, int named);

RF_API int rf_atomic_open(rf_atomic_file *a, const char *path)
{
    return open_staged(a, path, 0);
}

RF_API int rf_atomic_open_named(rf_atomic_file *a, const char *path)
{
    return open_staged(a, path, 1);
}

static int open_staged(rf_atomic_file *a, const char *path, int named)
{
    a->fd = -1;
    a->tmp = NULL;
    a->path = NULL;
    a->unnamed = 0;
    /* stat(2) follows every link, the kernel's own ones included: /dev/stdout
     * is a link to /proc/self/fd/1, whose "target" for a pipe is the name
     * "pipe:[1234]", which no path lookup finds -- realpath(3) fails there,
     * stat(2) does not. */
    struct stat st;
    const int existed = stat(path, &st) == 0;
    if (existed && !S_ISREG(st.st_mode))
        return open_in_place(a, path);
    if (existed) {
        /* The regular file at the end of the links is replaced, the links
         * kept. */
        a->path = realpath(path, NULL);
        if (!a->path && errno == ENOMEM)
            return ENOMEM;
        if (!a->path) /* one with no name left (/proc/self/fd/N of a deleted file) */
            return open_in_place(a, path);
        const int e = may_replace(a->path, &st);
        if (e) {
            forget(a);
            return e;
        }
    } else {
        if (errno != ENOENT)
            return errno;
        /* Missing, or a dangling link: the name at the end of the links is
         * created, the links kept, as open(2) with O_CREAT does. */
        int fd;
        a->path = follow_links(path, &fd);
        if (!a->path)
            return errno;
        if (fd >= 0) { /* a closed descriptor: nothing to create */
            forget(a);
            return ENOENT;
        }
    }
    a->tmp = temp_template(a->path);
    if (!a->tmp) {
        forget(a);
        return ENOMEM;
    }
    if (!named) {
        a->fd = open_unnamed(a->tmp);
        if (a->fd < 0 && errno != 0) {
            const int e = errno;
            forget(a);
            return e;
        }
        a->unnamed = a->fd >= 0;
    }
    if (a->fd < 0)
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
    if (a->tmp && !a->unnamed)
        unlink(a->tmp);
    forget(a);
}

/* Fill the XXXXXX at the end of t with random letters and digits. */
static void fill_name(char *t)
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char r[6];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        /* no entropy yet: the clock, different at each try */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t v = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)getpid();
        for (size_t i = 0; i < sizeof r; i++, v >>= 6)
            r[i] = (unsigned char)v;
    }
    char *x = t + strlen(t) - 6;
    for (size_t i = 0; i < 6; i++)
        x[i] = chars[r[i] % (sizeof chars - 1)];
}

/* The unnamed file a->fd gets the target's name: linked straight to it
 * when it does not exist, else linked as a->tmp (random, retried while
 * taken) and renamed over it.  Returns 0 or an errno value. */
static int link_unnamed(rf_atomic_file *a)
{
    char proc[40];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", a->fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, a->path, AT_SYMLINK_FOLLOW) == 0)
        return 0;
    if (errno != EEXIST)
        return errno;
    /* The name lives from the link to the rename: with this thread's
     * signals blocked, a program's handler (which knows no such name) never
     * runs in between. */
    sigset_t all, old;
    sigfillset(&all);
    const int masked = pthread_sigmask(SIG_BLOCK, &all, &old) == 0;
    int e = EEXIST;
    for (int tries = 0; tries < 100 && e == EEXIST; tries++) {
        fill_name(a->tmp);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, a->tmp, AT_SYMLINK_FOLLOW) != 0) {
            e = errno;
            continue;
        }
        e = rename(a->tmp, a->path) == 0 ? 0 : errno;
        if (e)
            unlink(a->tmp);
        break;
    }
    if (masked)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
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
    if (!e && a->unnamed)
        e = link_unnamed(a);
    if (close(a->fd) != 0 && !e)
        e = errno;
    a->fd = -1;
    if (!e && !a->unnamed && rename(a->tmp, a->path) != 0)
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
    return a->unnamed ? NULL : a->tmp;
}

RF_API int rf_atomic_staged(const rf_atomic_file *a)
{
    return a->tmp != NULL;
}

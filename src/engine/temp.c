/* temp.c -- the engines' temporary files and the spill file (temp.h). */
#include "temp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine_internal.h"
#include "reader.h"

void rfi_temps_name(const struct temps *t, unsigned long id, char *out)
{
    if (t->unnamed)
        snprintf(out, PATH_MAX, "%s", t->e->tmpdir);
    else
        snprintf(out, PATH_MAX, "%s/%lu", t->dir, id);
}

/* An unnamed file's error names the directory it is in. */
int rfi_temps_error(const struct temps *t, unsigned long id, int err)
{
    char name[PATH_MAX];
    rfi_temps_name(t, id, name);
    return rfi_engine_fail(t->e->err, RF_EIO, RF_ENGINE_OP_TEMP_FILE, name, err);
}

/* Tell the caller which files may exist: before each is created, so that
 * a signal handler never misses one.  Returns 0 or what the caller said. */
static int announce(const struct temps *t)
{
    const struct engine *e = t->e;
    return e->temp ? e->temp(e->temp_ctx, t->dir, t->files) : 0;
}

int rfi_temps_create(struct temps *t, unsigned long *id, int *fd)
{
    char name[PATH_MAX];
    *id = t->files++;
    if (t->unnamed) {
        *fd = open(t->e->tmpdir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        return *fd < 0 ? rfi_temps_error(t, *id, errno) : 0;
    }
    const int refused = announce(t);
    if (refused)
        return rfi_engine_fail(t->e->err, RF_EIO, RF_ENGINE_OP_TEMP_FILE, t->dir, refused);
    rfi_temps_name(t, *id, name);
    *fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    return *fd < 0 ? rfi_temps_error(t, *id, errno) : 0;
}

void rfi_temps_unlink(const struct temps *t, unsigned long id)
{
    char name[PATH_MAX];
    if (t->unnamed || !t->made)
        return; /* an unnamed file goes with its last descriptor */
    rfi_temps_name(t, id, name);
    unlink(name);
}

/* Whether the files can be unnamed (O_TMPFILE, Linux 3.11): the kernel then
 * frees them however the process ends, kill -9 included, and no directory
 * is needed.  A file system or kernel without them refuses with EOPNOTSUPP,
 * EISDIR (O_TMPFILE includes O_DIRECTORY, which an older kernel takes
 * alone) or EINVAL: then named files in a directory, as the options may
 * also ask.  Returns 1 (unnamed), 0 (named), or -1 with the error recorded
 * (the directory's own: as mkdtemp's would be). */
static int try_unnamed(struct temps *t)
{
#ifdef O_TMPFILE
    if (t->e->named_temps)
        return 0;
    const int fd = open(t->e->tmpdir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
        t->unnamed = 1;
        return 1;
    }
    if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
        return 0;
    return rfi_engine_fail(t->e->err, RF_EIO, RF_ENGINE_OP_TEMP_DIR, t->e->tmpdir, errno), -1;
#else
    (void)t;
    return 0;
#endif
}

int rfi_temps_open(struct temps *t, struct engine *e)
{
    memset(t, 0, sizeof *t);
    t->e = e;
    const char *base = e->tmpdir;
    const int unnamed = try_unnamed(t);
    if (unnamed != 0) {
        t->ready = unnamed > 0;
        return unnamed < 0;
    }
    if ((size_t)snprintf(t->dir, sizeof t->dir, "%s/riffle-XXXXXX", base) >= sizeof t->dir)
        return rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_TEMP_FILE, base, ENAMETOOLONG);
    /* Announced under its real name with this thread's asynchronous signals
     * blocked, so that no signal handler can run between its creation and
     * the caller's registering it. */
    sigset_t all, old;
    sigfillset(&all);
    const int masked = pthread_sigmask(SIG_BLOCK, &all, &old) == 0;
    const int made = mkdtemp(t->dir) != NULL;
    const int err = errno;
    const int refused = made ? announce(t) : 0;
    if (masked)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!made || refused) {
        if (made)
            rmdir(t->dir);
        return rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_TEMP_DIR, base, made ? refused : err);
    }
    t->made = 1;
    t->ready = 1;
    return 0;
}

/* Returns 0 once the directory is gone (a failed unlink of a file already
 * removed is no leftover), else the first errno value other than ENOENT
 * (the removal still goes on through every file). */
int rfi_temps_close(struct temps *t)
{
    t->ready = 0;
    if (!t->made)
        return 0;
    int first = 0;
    for (unsigned long id = 0; id < t->files; id++) {
        char name[PATH_MAX];
        rfi_temps_name(t, id, name);
        if (unlink(name) != 0 && errno != ENOENT && !first)
            first = errno;
    }
    if (rmdir(t->dir) == 0)
        first = 0;
    else if (errno != ENOENT && !first)
        first = errno;
    t->made = 0;
    if (t->e->temp)
        (void)t->e->temp(t->e->temp_ctx, NULL, 0);
    return first;
}

void rfi_raise_file_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int rfi_write_at(int fd, const void *p, size_t len, uint64_t at)
{
    const unsigned char *b = p;
    while (len > 0) {
        const ssize_t w = pwrite(fd, b, len, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        b += w;
        at += (uint64_t)w;
        len -= (size_t)w;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The spill file                                                           */

void rfi_spill_init(struct spill *s, struct temps *t)
{
    s->t = t;
    s->fd = -1;
    s->id = 0;
    s->size = 0;
}

int rfi_spill_write(void *ctx, const unsigned char *p, size_t len)
{
    struct spill *s = ctx;
    if (s->fd < 0) {
        if (!s->t->ready && rfi_temps_open(s->t, s->t->e) != 0)
            return 1;
        if (rfi_temps_create(s->t, &s->id, &s->fd) != 0)
            return 1;
    }
    const int err = rfi_write_at(s->fd, p, len, s->size);
    if (err)
        return rfi_temps_error(s->t, s->id, err);
    s->size += len;
    return 0;
}

/* Bytes copied from the spill file to the sink at a time. */
#define COPY_PIECE ((size_t)1 << 20)

int rfi_spill_emit(struct spill *s, const struct spilled *sp, int *stop)
{
    struct engine *e = s->t->e;
    const rf_engine_sink *k = e->sink;
    *stop = k->room(k->ctx) == 0;
    if (*stop)
        return 0;
    unsigned char *buf = malloc(COPY_PIECE);
    if (!buf)
        return rfi_engine_nomem(e->err);
    rf_writer *w = k->writer(k->ctx);
    int err = 0;
    for (uint64_t done = 0; done < sp->len && !err && !w->err;) {
        const size_t want = sp->len - done < COPY_PIECE ? (size_t)(sp->len - done) : COPY_PIECE;
        const ssize_t got = pread(s->fd, buf, want, (off_t)(sp->at + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            err = got < 0 ? errno : EIO;
        else if (rf_writer_put(w, buf, (size_t)got) == 0)
            done += (uint64_t)got;
    }
    free(buf);
    if (err)
        return rfi_temps_error(s->t, s->id, err);
    if (w->err)
        return rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_OUTPUT, NULL, w->err);
    const int advanced = k->advance(k->ctx, 1);
    return advanced ? rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_OUTPUT, NULL, advanced) : 0;
}

const struct outline *rfi_outline_find(const struct outline *outs, size_t n, uint64_t at)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (outs[mid].proxy < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && outs[lo].proxy == at ? &outs[lo] : NULL;
}

/* Runs of records in memory as usual, each out-of-line one from the spill
 * file. */
int rfi_spill_emit_mixed(struct spill *s, const rf_records *r, const uint64_t *offs, size_t k,
                         const struct outline *outs, size_t n)
{
    size_t i = 0;
    while (i < k) {
        size_t j = i;
        while (j < k && !rfi_outline_find(outs, n, offs[j]))
            j++;
        if (j > i && rfi_engine_emit(s->t->e, r, offs + i, j - i) != 0)
            return 1;
        if (j == k)
            break;
        int stop = 0;
        if (rfi_spill_emit(s, &rfi_outline_find(outs, n, offs[j])->sp, &stop) != 0)
            return 1;
        if (stop)
            break;
        i = j + 1;
    }
    return 0;
}

void rfi_spill_close(struct spill *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

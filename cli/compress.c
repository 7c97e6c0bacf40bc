/*
 * compress.c -- compressed output files through one thread (compress.h):
 * gzip with zlib's deflate (RFC 1952 wrapper, level 6 as gzip's default),
 * zstd with libzstd's streaming API at its default level, with a checksum
 * as the zstd program writes, and ZSTD_c_nbWorkers worker threads where
 * the library was built with them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "compress.h"

/* Bytes read from a pipe and written to a target at a time.  The pipes are
 * made as large as the writers' 1 MiB buffer where the system allows
 * (F_SETPIPE_SZ, up to /proc/sys/fs/pipe-max-size: 1 MiB by default), so a
 * buffer's flush crosses in one go. */
#define CHUNK ((size_t)256 << 10)
#define PIPE_SIZE (1 << 20)
#define GZIP_LEVEL 6

enum state { IDLE, OPEN, DONE };

struct target {
    enum cli_codec codec;
    int fd;     /* the target */
    int pipe_r; /* the thread's */
    int pipe_w; /* the writer's; -1 once closed */
    enum state state;
};

struct cli_outflow {
    struct target *t;
    size_t n;
    unsigned threads;
    pthread_t thread;
    int started;
    atomic_int err;      /* the first failure, or 0 */
    atomic_int cancel;   /* outflow_free before outflow_finish */
    size_t which;        /* err's target */
    unsigned char *in, *out;
    struct pollfd *pfd;
    size_t *pidx;
    z_stream z;
    ZSTD_CCtx *cc;
};

/* ---- one target's stream ---- */

static int failed(struct cli_outflow *f)
{
    return atomic_load(&f->err) != 0 || atomic_load(&f->cancel);
}

static void set_err(struct cli_outflow *f, size_t i, int e)
{
    int zero = 0;
    if (atomic_compare_exchange_strong(&f->err, &zero, e))
        f->which = i;
}

static int put(struct cli_outflow *f, size_t i, const unsigned char *b, size_t len)
{
    while (len > 0 && !failed(f)) {
        const ssize_t k = write(f->t[i].fd, b, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            set_err(f, i, errno);
            return -1;
        }
        b += k;
        len -= (size_t)k;
    }
    return failed(f) ? -1 : 0;
}

static int open_stream(struct cli_outflow *f, size_t i)
{
    if (f->t[i].codec == CLI_CODEC_GZIP) {
        memset(&f->z, 0, sizeof f->z);
        /* 15 + 16: a 32 KiB window in a gzip wrapper. */
        if (deflateInit2(&f->z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return ENOMEM;
    } else {
        f->cc = ZSTD_createCCtx();
        if (!f->cc)
            return ENOMEM;
        (void)ZSTD_CCtx_setParameter(f->cc, ZSTD_c_checksumFlag, 1);
        /* An error here is a library without threads: it compresses in
         * this thread instead. */
        if (f->threads > 1)
            (void)ZSTD_CCtx_setParameter(f->cc, ZSTD_c_nbWorkers, (int)f->threads);
    }
    f->t[i].state = OPEN;
    return 0;
}

static void close_stream(struct cli_outflow *f, size_t i)
{
    if (f->t[i].state == OPEN && f->t[i].codec == CLI_CODEC_GZIP)
        deflateEnd(&f->z);
    if (f->t[i].state == OPEN && f->t[i].codec == CLI_CODEC_ZSTD) {
        ZSTD_freeCCtx(f->cc);
        f->cc = NULL;
    }
    f->t[i].state = DONE;
}

/* Compress b[0..len) into target i; end its stream when `end`. */
static int deflate_some(struct cli_outflow *f, size_t i, const unsigned char *b, size_t len,
                        int end)
{
    z_stream *z = &f->z;
    z->next_in = (unsigned char *)(uintptr_t)b;
    z->avail_in = (uInt)len;
    int ret;
    do {
        z->next_out = f->out;
        z->avail_out = (uInt)CHUNK;
        ret = deflate(z, end ? Z_FINISH : Z_NO_FLUSH);
        if (ret == Z_STREAM_ERROR) {
            set_err(f, i, EINVAL);
            return -1;
        }
        if (put(f, i, f->out, CHUNK - z->avail_out) != 0)
            return -1;
    } while (end ? ret != Z_STREAM_END : z->avail_out == 0);
    return 0;
}

static int zstd_some(struct cli_outflow *f, size_t i, const unsigned char *b, size_t len, int end)
{
    ZSTD_inBuffer in = {b, len, 0};
    size_t left;
    do {
        ZSTD_outBuffer out = {f->out, CHUNK, 0};
        left = ZSTD_compressStream2(f->cc, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(left)) {
            set_err(f, i, EIO);
            return -1;
        }
        if (put(f, i, f->out, out.pos) != 0)
            return -1;
    } while (end ? left != 0 : in.pos < in.size);
    return 0;
}

static void feed(struct cli_outflow *f, size_t i, const unsigned char *b, size_t len, int end)
{
    if (failed(f)) {
        if (end)
            close_stream(f, i);
        return;
    }
    if (f->t[i].state == IDLE) {
        const int e = open_stream(f, i);
        if (e) {
            set_err(f, i, e);
            return;
        }
    }
    if (f->t[i].codec == CLI_CODEC_GZIP)
        (void)deflate_some(f, i, b, len, end);
    else
        (void)zstd_some(f, i, b, len, end);
    if (end)
        close_stream(f, i);
}

/* ---- the thread ---- */

/* Read what pipe i holds now (all of it when `all`, else one chunk) into
 * its stream; at the pipe's end, or when `all` (a later target has begun,
 * so this one is complete), end the stream. */
static void take(struct cli_outflow *f, size_t i, int all)
{
    for (;;) {
        const ssize_t k = read(f->t[i].pipe_r, f->in, CHUNK);
        if (k < 0 && errno == EINTR)
            continue;
        if (k > 0) {
            feed(f, i, f->in, (size_t)k, 0);
            if (all)
                continue;
            return;
        }
        if (k == 0 || all)
            feed(f, i, NULL, 0, 1);
        return; /* EAGAIN: nothing now */
    }
}

static void *run(void *arg)
{
    struct cli_outflow *f = arg;
    for (;;) {
        size_t m = 0;
        for (size_t i = 0; i < f->n; i++) {
            if (f->t[i].codec == CLI_CODEC_NONE || f->t[i].state == DONE)
                continue;
            f->pfd[m].fd = f->t[i].pipe_r;
            f->pfd[m].events = POLLIN;
            f->pfd[m].revents = 0;
            f->pidx[m++] = i;
        }
        if (m == 0)
            return NULL;
        if (poll(f->pfd, m, -1) < 0)
            continue; /* EINTR; signals are blocked here anyway */
        size_t r = 0;
        while (r < m && f->pfd[r].revents == 0)
            r++;
        if (r == m)
            continue;
        /* Bytes for this target: every earlier one is complete. */
        for (size_t q = 0; q < r; q++)
            take(f, f->pidx[q], 1);
        take(f, f->pidx[r], 0);
    }
}

/* ---- starting and finishing ---- */

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void free_flow(struct cli_outflow *f)
{
    for (size_t i = 0; i < f->n; i++) {
        close_fd(&f->t[i].pipe_r);
        close_fd(&f->t[i].pipe_w);
    }
    if (f->cc)
        ZSTD_freeCCtx(f->cc);
    free(f->t);
    free(f->in);
    free(f->out);
    free(f->pfd);
    free(f->pidx);
    free(f);
}

static int make_pipe(struct target *t)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return errno;
    (void)fcntl(p[0], F_SETPIPE_SZ, PIPE_SIZE);
    (void)fcntl(p[0], F_SETFL, O_NONBLOCK);
    t->pipe_r = p[0];
    t->pipe_w = p[1];
    return 0;
}

/* With every signal blocked: the program's handlers run on the main thread,
 * and a write to a closed pipe (stdout) fails with EPIPE. */
static int start_thread(struct cli_outflow *f)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const int e = pthread_create(&f->thread, NULL, run, f);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    f->started = e == 0;
    return e;
}

static int alloc_flow(struct cli_outflow *f, size_t n)
{
    f->t = calloc(n, sizeof *f->t);
    f->pfd = calloc(n, sizeof *f->pfd);
    f->pidx = calloc(n, sizeof *f->pidx);
    f->in = malloc(CHUNK);
    f->out = malloc(CHUNK);
    return f->t && f->pfd && f->pidx && f->in && f->out ? 0 : ENOMEM;
}

int outflow_start(struct cli_outflow **flow, int *fds, const enum cli_codec *codecs, size_t n,
                  unsigned threads)
{
    *flow = NULL;
    size_t compressed = 0;
    for (size_t i = 0; i < n; i++)
        compressed += codecs[i] != CLI_CODEC_NONE;
    if (compressed == 0)
        return 0;
    struct cli_outflow *f = calloc(1, sizeof *f);
    if (!f)
        return ENOMEM;
    f->n = n;
    f->threads = threads;
    atomic_init(&f->err, 0);
    atomic_init(&f->cancel, 0);
    int e = alloc_flow(f, n);
    for (size_t i = 0; i < n && f->t; i++)
        f->t[i].pipe_r = f->t[i].pipe_w = -1;
    for (size_t i = 0; i < n && !e; i++) {
        f->t[i].codec = codecs[i];
        f->t[i].fd = fds[i];
        if (codecs[i] != CLI_CODEC_NONE)
            e = make_pipe(&f->t[i]);
    }
    if (!e)
        e = start_thread(f);
    if (e) {
        free_flow(f);
        return e;
    }
    for (size_t i = 0; i < n; i++)
        if (codecs[i] != CLI_CODEC_NONE)
            fds[i] = f->t[i].pipe_w;
    *flow = f;
    return 0;
}

int outflow_failed(struct cli_outflow *f)
{
    return f ? atomic_load(&f->err) : 0;
}

static void stop(struct cli_outflow *f)
{
    for (size_t i = 0; i < f->n; i++)
        close_fd(&f->t[i].pipe_w);
    if (f->started)
        pthread_join(f->thread, NULL);
    f->started = 0;
}

int outflow_finish(struct cli_outflow *f, size_t *which)
{
    if (!f)
        return 0;
    stop(f);
    const int e = atomic_load(&f->err);
    *which = f->which;
    return e;
}

void outflow_free(struct cli_outflow *f)
{
    if (!f)
        return;
    atomic_store(&f->cancel, 1);
    stop(f);
    free_flow(f);
}

/*
 * decompress.c -- compressed inputs as pipes of their decompressed bytes
 * (decompress.h), with zlib (gzip members, RFC 1952) and libzstd (frames,
 * RFC 8878).  Concatenated gzip members and zstd frames are one stream, as
 * gzip -d and zstd -d read them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "cli.h"
#include "codec.h"
#include "decompress.h"

/* Compressed bytes read at a time, and decompressed bytes written to the
 * pipe at a time: libzstd's recommended stream sizes are 128 KiB each. */
#define IN_CAP ((size_t)128 << 10)
#define OUT_CAP ((size_t)256 << 10)
#define PIPE_SIZE (1 << 20)

/* A pipe being filled while we look at it may hold fewer bytes than a magic
 * number for a moment: look again this often, this many times. */
#define PEEK_WAIT_NS 1000000L
#define PEEK_TRIES 1000

struct source {
    const char *name;
    enum cli_codec codec;
    int fd;     /* the compressed bytes */
    int own;    /* fd is ours to close */
    int pipe_r; /* given to the engine */
    int pipe_w; /* the thread's; -1 once closed */
    rf_file_stamp stamp; /* when looked at: a change while read is an error */
};

/* Why an input failed. */
enum failure { OK = 0, READ_ERROR, BAD_DATA, TRUNCATED, NO_MEMORY, CHANGED };

struct cli_inflow {
    struct source *src;
    size_t n;
    pthread_t thread;
    int started;
    atomic_int stop;      /* inflow_end: the engine reads no more */
    unsigned char *in, *out;
    /* The first failure, written by the thread before it closes that
     * input's pipe; read after the engine saw the pipe's end (the close and
     * the read that returns 0 order them). */
    enum failure failure;
    size_t failed;        /* its input */
    uint64_t offset;      /* in the compressed bytes */
    int err;              /* READ_ERROR: the errno value */
    char reason[128];     /* BAD_DATA: the decoder's words */
    /* The decoder's state, here rather than on the thread's stack: freed
     * by free_flow also when inflow_end cancelled the thread in a read(2) of
     * a source that would not end (a pipe whose writer stalls). */
    z_stream z;
    int z_live;
    ZSTD_DCtx *d;
};

/* ---- the thread ---- */

/* Write bytes to the pipe.  Returns 0, or -1 when the reader is gone
 * (inflow_end closed it: SIGPIPE is blocked in this thread, write fails with
 * EPIPE). */
static int put(int fd, const unsigned char *b, size_t len)
{
    while (len > 0) {
        const ssize_t k = write(fd, b, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        b += k;
        len -= (size_t)k;
    }
    return 0;
}

static ssize_t get(int fd, unsigned char *b, size_t cap)
{
    ssize_t k;
    do
        k = read(fd, b, cap);
    while (k < 0 && errno == EINTR);
    return k;
}

static int fail(struct cli_inflow *f, size_t i, enum failure why, uint64_t offset, int err,
                const char *reason)
{
    f->failure = why;
    f->failed = i;
    f->offset = offset;
    f->err = err;
    snprintf(f->reason, sizeof f->reason, "%s", reason ? reason : "");
    /* Messages read as the rest of the program's: lowercase. */
    if (f->reason[0] >= 'A' && f->reason[0] <= 'Z')
        f->reason[0] = (char)(f->reason[0] - 'A' + 'a');
    return -1;
}

/* gzip members one after another; bytes after a member must begin another
 * (gzip -d reads trailing garbage as an error too, unless told). */
static int gunzip(struct cli_inflow *f, size_t i, size_t pre)
{
    const struct source *s = &f->src[i];
    z_stream *zp = &f->z;
    memset(zp, 0, sizeof *zp);
    if (inflateInit2(zp, 16 + MAX_WBITS) != Z_OK) /* 16: gzip wrapper only */
        return fail(f, i, NO_MEMORY, 0, ENOMEM, NULL);
    f->z_live = 1;
    zp->next_in = f->in;
    zp->avail_in = (uInt)pre;
    uint64_t total = pre;
    int member = 0, r = 0;
    for (;;) {
        if (zp->avail_in == 0) {
            const ssize_t k = get(s->fd, f->in, IN_CAP);
            if (k < 0) {
                r = fail(f, i, READ_ERROR, total, errno, NULL);
                break;
            }
            if (k == 0) {
                if (member)
                    r = fail(f, i, TRUNCATED, total, 0, NULL);
                break;
            }
            zp->next_in = f->in;
            zp->avail_in = (uInt)k;
            total += (uint64_t)k;
        }
        member = 1;
        zp->next_out = f->out;
        zp->avail_out = (uInt)OUT_CAP;
        const int ret = inflate(zp, Z_NO_FLUSH);
        if (put(s->pipe_w, f->out, OUT_CAP - zp->avail_out) != 0)
            break;
        if (ret == Z_STREAM_END) {
            member = 0;
            inflateReset(zp);
        } else if (ret == Z_MEM_ERROR) {
            r = fail(f, i, NO_MEMORY, 0, ENOMEM, NULL);
            break;
        } else if (ret != Z_OK && !(ret == Z_BUF_ERROR && zp->avail_in == 0)) {
            r = fail(f, i, BAD_DATA, total - zp->avail_in, 0, zp->msg ? zp->msg : "invalid data");
            break;
        }
    }
    inflateEnd(zp);
    f->z_live = 0;
    return r;
}

/* zstd frames (and skippable frames) one after another; ZSTD_decompressStream
 * returns 0 exactly when a frame is complete and flushed. */
static int unzstd(struct cli_inflow *f, size_t i, size_t pre)
{
    const struct source *s = &f->src[i];
    ZSTD_DCtx *d = f->d = ZSTD_createDCtx();
    if (!d)
        return fail(f, i, NO_MEMORY, 0, ENOMEM, NULL);
    ZSTD_inBuffer in = {f->in, pre, 0};
    uint64_t total = pre;
    size_t last = 0;
    int full = 0, r = 0;
    for (;;) {
        if (in.pos == in.size && !full) {
            const ssize_t k = get(s->fd, f->in, IN_CAP);
            if (k < 0) {
                r = fail(f, i, READ_ERROR, total, errno, NULL);
                break;
            }
            if (k == 0) {
                if (last != 0)
                    r = fail(f, i, TRUNCATED, total, 0, NULL);
                break;
            }
            in.size = (size_t)k;
            in.pos = 0;
            total += (uint64_t)k;
        }
        ZSTD_outBuffer out = {f->out, OUT_CAP, 0};
        last = ZSTD_decompressStream(d, &out, &in);
        if (ZSTD_isError(last)) {
            r = fail(f, i, BAD_DATA, total - (in.size - in.pos), 0, ZSTD_getErrorName(last));
            break;
        }
        if (put(s->pipe_w, f->out, out.pos) != 0)
            break;
        full = out.pos == out.size; /* more may wait inside the decoder */
    }
    ZSTD_freeDCtx(d);
    f->d = NULL;
    return r;
}

static int decode(struct cli_inflow *f, size_t i)
{
    return f->src[i].codec == CLI_CODEC_GZIP ? gunzip(f, i, 0) : unzstd(f, i, 0);
}

static void *run(void *arg)
{
    struct cli_inflow *f = arg;
    int failed = 0;
    for (size_t i = 0; i < f->n; i++) {
        struct source *s = &f->src[i];
        if (!failed && !atomic_load(&f->stop))
            failed = decode(f, i) != 0;
        /* After a failure the rest end at once: the run stops at the sink's
         * begin, which inflow_check makes fail. */
        close(s->pipe_w);
        s->pipe_w = -1;
    }
    return NULL;
}

/* ---- looking at the inputs ---- */

/* The format of what the regular file s->fd holds from its current offset,
 * which is left as it was.  Returns 0, or -1 after a message. */
static int sniff_file(struct source *s)
{
    unsigned char b[CLI_CODEC_MAGIC];
    ssize_t k = get(s->fd, b, sizeof b);
    if (k < 0) {
        cli_read_error(s->name, errno);
        return -1;
    }
    if (k > 0 && lseek(s->fd, -(off_t)k, SEEK_CUR) < 0) {
        cli_read_error(s->name, errno);
        return -1;
    }
    int partial;
    s->codec = codec_sniff(b, (size_t)k, &partial);
    return 0;
}

/* The format of the pipe s->fd from its first bytes, which stay in it: tee(2)
 * copies them into a pipe of our own.  Waits for the first bytes.  A writer
 * that stops after one to three bytes that begin a magic number is looked
 * at again for a while (PEEK_TRIES times PEEK_WAIT_NS): tee returns at once
 * when the pipe is not empty.  Returns 0, or -1 after a message. */
static int peek_pipe(struct source *s)
{
    unsigned char b[CLI_CODEC_MAGIC];
    int p[2], partial = 0, r = 0;
    if (pipe2(p, O_CLOEXEC) != 0)
        return 0; /* read as it is */
    for (int tries = 0; tries < PEEK_TRIES; tries++) {
        const ssize_t k = tee(s->fd, p[1], sizeof b, 0);
        if (k <= 0)
            break; /* the end, or no tee here: read as it is */
        const ssize_t got = get(p[0], b, (size_t)k);
        if (got != k) {
            cli_read_error(s->name, got < 0 ? errno : EIO);
            r = -1;
            break;
        }
        s->codec = codec_sniff(b, (size_t)k, &partial);
        if (!partial)
            break;
        const struct timespec wait = {0, PEEK_WAIT_NS};
        nanosleep(&wait, NULL);
    }
    close(p[0]);
    close(p[1]);
    return r;
}

/* Input in, opened and looked at: 1 when compressed (s then holds it, its fd
 * open), 0 when not, -1 after a message (a file that cannot be opened or
 * read).  A file that is not there, or not a regular file, is left to the
 * engine, which reports it in its turn: a named pipe is not even opened
 * (that would tell its writer its reader is there before the inputs ahead
 * of it are read).  A pipe on standard input is looked at when it is the
 * first input (the engine would wait for its bytes first anyway), and read
 * as it is otherwise: riffle never waits for a pipe before the inputs ahead
 * of it, and never copies a plain pipe. */
static int look(const rf_engine_input *in, struct source *s, int first)
{
    memset(s, 0, sizeof *s);
    s->pipe_r = s->pipe_w = -1;
    s->name = in->name;
    if (in->data)
        return 0;
    s->fd = in->fd;
    if (in->fd < 0) {
        struct stat st;
        if (stat(in->name, &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
        s->fd = open(in->name, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            cli_error("%s: %s", cli_quote_file(in->name), strerror(errno));
            return -1;
        }
        s->own = 1;
    }
    struct stat st;
    int r = 0;
    if (rf_file_stamp_fd(s->fd, &s->stamp) != 0 || fstat(s->fd, &st) != 0)
        s->codec = CLI_CODEC_NONE;
    else if (S_ISREG(st.st_mode))
        r = sniff_file(s);
    else if (S_ISFIFO(st.st_mode) && first)
        r = peek_pipe(s);
    if ((r != 0 || s->codec == CLI_CODEC_NONE) && s->own) {
        close(s->fd);
        s->own = 0;
    }
    return r != 0 ? -1 : s->codec != CLI_CODEC_NONE;
}

static void close_source(struct source *s)
{
    if (s->own)
        close(s->fd);
    if (s->pipe_r >= 0)
        close(s->pipe_r);
    if (s->pipe_w >= 0)
        close(s->pipe_w);
    s->own = 0;
    s->pipe_r = s->pipe_w = -1;
}

static void free_flow(struct cli_inflow *f)
{
    if (f->z_live)
        inflateEnd(&f->z);
    ZSTD_freeDCtx(f->d); /* NULL: nothing */
    for (size_t i = 0; i < f->n; i++)
        close_source(&f->src[i]);
    free(f->src);
    free(f->in);
    free(f->out);
    free(f);
}

/* The thread, with every signal blocked: the program's handlers run on the
 * main thread, and a write to a closed pipe fails with EPIPE. */
static int start_thread(struct cli_inflow *f)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const int e = pthread_create(&f->thread, NULL, run, f);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    f->started = e == 0;
    return e;
}

/* Keep the compressed sources among in[0..n) in f->src, each given a pipe,
 * its read end in place of in[i].  A descriptor given twice is read once
 * (riffle_engine.h): its later places read nothing. */
static int take_sources(struct cli_inflow *f, rf_engine_input *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < f->n && in[i].fd >= 0; j++)
            seen |= !f->src[j].own && f->src[j].fd == in[i].fd;
        if (seen) {
            in[i] = rf_engine_input_bytes("", 0, in[i].name);
            continue;
        }
        struct source *s = &f->src[f->n];
        const int c = look(&in[i], s, i == 0);
        if (c < 0)
            return -1;
        if (c == 0)
            continue;
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) {
            const int e = errno;
            close_source(s);
            cli_error("cannot decompress %s: %s", cli_quote_file(in[i].name), strerror(e));
            return -1;
        }
        /* As large as the system allows an unprivileged pipe by default
         * (/proc/sys/fs/pipe-max-size, 1 MiB): the thread and the engine
         * then trade a megabyte at a time rather than 64 KiB. */
        (void)fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE);
        s->pipe_r = p[0];
        s->pipe_w = p[1];
        in[i] = rf_engine_input_fd(p[0], in[i].name);
        f->n++;
    }
    return 0;
}

int inflow_start(struct cli_inflow **flow, rf_engine_input *in, size_t n)
{
    *flow = NULL;
    struct cli_inflow *f = calloc(1, sizeof *f);
    if (!f || !(f->src = calloc(n ? n : 1, sizeof *f->src))) {
        free(f);
        cli_error("memory exhausted");
        return -1;
    }
    atomic_init(&f->stop, 0);
    if (take_sources(f, in, n) != 0) {
        free_flow(f);
        return -1;
    }
    if (f->n == 0) {
        free_flow(f);
        return 0;
    }
    f->in = malloc(IN_CAP);
    f->out = malloc(OUT_CAP);
    int e = f->in && f->out ? start_thread(f) : ENOMEM;
    if (e) {
        cli_error("cannot decompress the input: %s", strerror(e));
        free_flow(f);
        return -1;
    }
    *flow = f;
    return 0;
}

/* The first input that changed since it was looked at (riffle_io.h,
 * "Inputs that change while they are read": the engine cannot see the file
 * behind a pipe), as a failure. */
static void find_change(struct cli_inflow *f)
{
    for (size_t i = 0; i < f->n && f->failure == OK; i++) {
        rf_file_stamp now;
        const struct source *s = &f->src[i];
        if (s->stamp.regular && rf_file_stamp_fd(s->fd, &now) == 0 &&
            rf_file_changed(&s->stamp, &now))
            fail(f, i, CHANGED, 0, 0, NULL);
    }
}

int inflow_check(struct cli_inflow *f)
{
    if (!f)
        return 0;
    /* Every pipe was read to its end, so the thread has closed them all and
     * is returning. */
    pthread_join(f->thread, NULL);
    f->started = 0;
    find_change(f);
    const struct source *s = &f->src[f->failed];
    const char *name = cli_quote_file(s->name);
    const char *codec = codec_name(s->codec);
    switch (f->failure) {
    case OK:
        return 0;
    case READ_ERROR:
        cli_read_error(s->name, f->err);
        break;
    case NO_MEMORY:
        cli_error("memory exhausted");
        break;
    case CHANGED:
        cli_error("%s: file changed as we read it", name);
        break;
    case TRUNCATED:
        cli_error("%s: truncated %s data at byte %llu", name, codec,
                  (unsigned long long)f->offset);
        break;
    case BAD_DATA:
        cli_error("%s: invalid %s data at byte %llu: %s", name, codec,
                  (unsigned long long)f->offset, f->reason);
        break;
    }
    return -1;
}

void inflow_end(struct cli_inflow *f)
{
    if (!f)
        return;
    atomic_store(&f->stop, 1);
    /* Readers gone: the thread's next write fails, and it ends. */
    for (size_t i = 0; i < f->n; i++) {
        if (f->src[i].pipe_r >= 0)
            close(f->src[i].pipe_r);
        f->src[i].pipe_r = -1;
    }
    if (f->started) {
        /* A thread waiting for bytes of a source that may never come is
         * cancelled there (read and write are cancellation points). */
        pthread_cancel(f->thread);
        pthread_join(f->thread, NULL);
    }
    free_flow(f);
}

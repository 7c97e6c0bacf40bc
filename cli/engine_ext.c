/* engine_ext.c -- inputs larger than memory (engine.h).
 *
 * Pass 1 (scatter): every record after the header gets its key (the keyed
 * order's stream, in input order) and goes, with its key, to the bucket named
 * by the top bits of the key: two temporary files per bucket, the records
 * (each with its delimiter) and their keys (8 bytes each, host order), in
 * input order.  Pass 2: bucket by bucket in key order, the records are mapped
 * and put in the keyed order by rf_keyed_index, which reads their keys back
 * from the key file, and written.  riffle.h ("Keyed order") shows why this is the
 * same output as sorting everything at once: a bucket holds exactly the keys
 * with its prefix, in input order, and ties never cross buckets.  A bucket
 * too large for --memory is scattered again by the next bits of its keys.
 *
 * Temporary files live in a fresh directory (DIR/riffle-XXXXXX) whose
 * numbered files cleanup.h removes on signals; every exit path removes them
 * too.  Memory: the scatter buffers (half of --memory, split between the
 * buckets, at least 8 KiB each) and, in pass 2, one bucket (its bytes + 16
 * bytes per record). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "engine.h"
#include "output.h"
#include "progress.h"
#include "reader.h"

/* Buckets per scatter, at most: 2 files each, well inside the usual limit of
 * 1024 open files. */
#define MAX_FANOUT 256
#define MIN_BUFFER ((size_t)8 << 10)
#define KEY_BATCH 512

/* A bucket: its two files and, while it is being filled, their buffers. */
struct bucket {
    unsigned long rec_id, key_id; /* file numbers in the directory */
    int rec_fd, key_fd;
    unsigned char *buf;           /* records waiting to be written */
    size_t len;
    uint64_t *keys;               /* keys waiting */
    size_t nkeys;
    uint64_t bytes, records;      /* in the files */
};

struct ext {
    struct engine *e;
    char dir[PATH_MAX - 32]; /* room for "/" and a number in PATH_MAX */
    unsigned long files;          /* numbered files created so far */
    size_t buf_cap, key_cap;      /* per bucket, for the scatter under way */
    uint64_t left;                /* records still to write (-n) */
    uint64_t scattered;           /* bytes in bucket files (progress) */
    uint64_t done;                /* of them, sorted and written */
};

static void file_name(const struct ext *x, unsigned long id, char *out)
{
    snprintf(out, PATH_MAX, "%s/%lu", x->dir, id);
}

static int io_error(const struct ext *x, unsigned long id, int err)
{
    char name[PATH_MAX];
    file_name(x, id, name);
    if (x->e->progress)
        progress_done(x->e->progress);
    cli_error("%s: %s", name, strerror(err));
    return 1;
}

static int create_file(struct ext *x, unsigned long *id, int *fd)
{
    char name[PATH_MAX];
    *id = x->files++;
    cleanup_dir_count(x->files); /* before the file exists: a signal never misses it */
    file_name(x, *id, name);
    *fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    return *fd < 0 ? io_error(x, *id, errno) : 0;
}

static void remove_file(const struct ext *x, unsigned long id)
{
    char name[PATH_MAX];
    file_name(x, id, name);
    unlink(name);
}

static int write_all(struct ext *x, unsigned long id, int fd, const void *p, size_t len)
{
    const unsigned char *b = p;
    while (len > 0) {
        const ssize_t w = write(fd, b, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return io_error(x, id, w < 0 ? errno : ENOSPC);
        b += w;
        len -= (size_t)w;
    }
    return 0;
}

static int flush_bucket(struct ext *x, struct bucket *b)
{
    if (write_all(x, b->rec_id, b->rec_fd, b->buf, b->len) != 0 ||
        write_all(x, b->key_id, b->key_fd, b->keys, b->nkeys * sizeof *b->keys) != 0)
        return 1;
    b->len = 0;
    b->nkeys = 0;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Scatter                                                                  */

/* Buckets for `bytes` of input under the budget: enough that each holds
 * about a third of the budget (a bucket needs its bytes plus 16 per record,
 * and buckets vary in size), a power of two; MAX_FANOUT when the size is
 * unknown (0). */
static unsigned fanout_bits(uint64_t bytes, uint64_t budget)
{
    unsigned bits = 1;
    if (bytes == 0)
        return 8;
    while (bits < 8 && ((uint64_t)1 << bits) * (budget / 3) < bytes)
        bits++;
    return bits;
}

struct scatter {
    struct bucket b[MAX_FANOUT];
    unsigned nb, shift; /* bucket = (key << shift) >> (64 - bits) */
    unsigned bits;
};

static void free_buffers(struct scatter *s)
{
    for (unsigned i = 0; i < s->nb; i++) {
        free(s->b[i].buf);
        free(s->b[i].keys);
        s->b[i].buf = NULL;
        s->b[i].keys = NULL;
        if (s->b[i].rec_fd >= 0)
            close(s->b[i].rec_fd);
        if (s->b[i].key_fd >= 0)
            close(s->b[i].key_fd);
        s->b[i].rec_fd = s->b[i].key_fd = -1;
    }
}

static int scatter_open(struct ext *x, struct scatter *s, unsigned shift, unsigned bits)
{
    memset(s, 0, sizeof *s);
    s->shift = shift;
    s->bits = bits;
    s->nb = 1u << bits;
    const uint64_t share = x->e->budget / 2 / s->nb;
    x->buf_cap = share > MIN_BUFFER ? (size_t)share : MIN_BUFFER;
    x->key_cap = x->buf_cap / 8 / sizeof(uint64_t); /* ~50-byte records: keys fill last */
    if (x->key_cap < 64)
        x->key_cap = 64;
    for (unsigned i = 0; i < s->nb; i++)
        s->b[i].rec_fd = s->b[i].key_fd = -1;
    for (unsigned i = 0; i < s->nb; i++) {
        struct bucket *b = &s->b[i];
        b->buf = malloc(x->buf_cap);
        b->keys = malloc(x->key_cap * sizeof *b->keys);
        if (!b->buf || !b->keys) {
            cli_error("memory exhausted");
            return 1;
        }
        if (create_file(x, &b->rec_id, &b->rec_fd) != 0 ||
            create_file(x, &b->key_id, &b->key_fd) != 0)
            return 1;
    }
    return 0;
}

static int add_record(struct ext *x, struct scatter *s, uint64_t key,
                      const unsigned char *rec, size_t len)
{
    struct bucket *b = &s->b[(key << s->shift) >> (64 - s->bits)];
    if ((b->len + len > x->buf_cap || b->nkeys == x->key_cap) && flush_bucket(x, b) != 0)
        return 1;
    if (len > x->buf_cap) { /* longer than the buffer: straight to the file */
        if (write_all(x, b->rec_id, b->rec_fd, rec, len) != 0)
            return 1;
    } else {
        memcpy(b->buf + b->len, rec, len);
        b->len += len;
    }
    b->keys[b->nkeys++] = key;
    b->bytes += len;
    b->records++;
    return 0;
}

/* Flush and close every bucket (the buffers go, success or not). */
static int scatter_close(struct ext *x, struct scatter *s)
{
    for (unsigned i = 0; i < s->nb; i++)
        if (flush_bucket(x, &s->b[i]) != 0) {
            free_buffers(s);
            return 1;
        }
    for (unsigned i = 0; i < s->nb; i++)
        x->scattered += s->b[i].bytes;
    free_buffers(s);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Pass 2                                                                   */

static int finish_bucket(struct ext *x, struct bucket *b, unsigned used_bits);

/* A bucket's keys, read back from its key file (keys for rf_keyed_index;
 * called from its threads on disjoint ranges: pread only). */
struct key_file {
    int fd;
    int err; /* errno of a failed read, 0 */
};

static rf_status file_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    struct key_file *kf = ctx;
    unsigned char *p = (unsigned char *)out;
    size_t want = n * sizeof *out;
    off_t at = (off_t)(first * sizeof *out);
    while (want > 0) {
        const ssize_t got = pread(kf->fd, p, want, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            kf->err = got < 0 ? errno : EIO;
            return RF_EINVAL;
        }
        p += got;
        at += got;
        want -= (size_t)got;
    }
    return RF_OK;
}

/* A bucket that fits: map its records, order them by their keys, write. */
static int sort_bucket(struct ext *x, struct bucket *b)
{
    char name[PATH_MAX];
    file_name(x, b->rec_id, name);
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return io_error(x, b->rec_id, errno);
    rf_records r;
    rf_records_init(&r, x->e->delim);
    int e = rf_records_add_fd(&r, fd);
    close(fd);
    if (!e)
        e = rf_records_index(&r);
    if (e) {
        rf_records_free(&r);
        return io_error(x, b->rec_id, e);
    }
    uint64_t *idx = NULL;
    int status = 1;
    file_name(x, b->key_id, name);
    struct key_file kf = {open(name, O_RDONLY | O_CLOEXEC), 0};
    if (kf.fd < 0) {
        io_error(x, b->key_id, errno);
    } else if (r.n != b->records) {
        io_error(x, b->rec_id, EIO); /* the file changed under us */
    } else if (!(idx = malloc((r.n ? r.n : 1) * sizeof *idx))) {
        cli_error("memory exhausted");
    } else {
        const rf_status st = rf_keyed_index(&x->e->order, r.n, file_keys, &kf, x->e->threads, idx);
        if (st != RF_OK && kf.err) {
            io_error(x, b->key_id, kf.err);
        } else if (st != RF_OK) {
            cli_error("cannot shuffle: %s", rf_strerror(st));
        } else {
            const size_t k = x->left < r.n ? (size_t)x->left : r.n;
            for (size_t j = 0; j < k; j++)
                idx[j] = r.offs[idx[j]];
            status = engine_emit(x->e, &r, idx, k);
            x->left -= k;
        }
    }
    if (kf.fd >= 0)
        close(kf.fd);
    free(idx);
    rf_records_free(&r);
    remove_file(x, b->rec_id);
    remove_file(x, b->key_id);
    return status;
}

/* Scatter a bucket's records again by the next bits of their keys. */
static int split_bucket(struct ext *x, struct bucket *b, unsigned used_bits)
{
    unsigned bits = fanout_bits(b->bytes + 16 * b->records, x->e->budget);
    if (bits > 64 - used_bits)
        bits = 64 - used_bits;
    struct scatter *s = malloc(sizeof *s);
    if (!s) {
        cli_error("memory exhausted");
        return 1;
    }
    int status = scatter_open(x, s, used_bits, bits);
    char rec_name[PATH_MAX], key_name[PATH_MAX];
    file_name(x, b->rec_id, rec_name);
    file_name(x, b->key_id, key_name);
    char *names[1] = {rec_name};
    struct reader rd;
    int key_fd = -1;
    if (status == 0 && reader_open(&rd, names, 1, x->e->delim) != 0)
        status = 1;
    else if (status == 0) {
        reader_map(&rd, shuf_window(x->e));
        key_fd = open(key_name, O_RDONLY | O_CLOEXEC);
        if (key_fd < 0)
            status = io_error(x, b->key_id, errno);
        const unsigned char *data;
        size_t len;
        int got = 0;
        uint64_t keys[KEY_BATCH];
        size_t nkeys = 0, used = 0;
        while (status == 0 && (got = reader_next(&rd, &data, &len)) > 0) {
            for (const unsigned char *p = data, *end = data + len; p < end && status == 0;) {
                const unsigned char *q = memchr(p, x->e->delim, (size_t)(end - p));
                if (used == nkeys) {
                    const ssize_t k = read(key_fd, keys, sizeof keys);
                    if (k <= 0 || k % (ssize_t)sizeof *keys != 0) {
                        status = io_error(x, b->key_id, k < 0 ? errno : EIO);
                        break;
                    }
                    nkeys = (size_t)k / sizeof *keys;
                    used = 0;
                }
                status = add_record(x, s, keys[used++], p, (size_t)(q - p) + 1);
                p = q + 1;
            }
        }
        if (got < 0)
            status = 1;
        reader_close(&rd);
        if (key_fd >= 0)
            close(key_fd);
    }
    remove_file(x, b->rec_id);
    remove_file(x, b->key_id);
    x->scattered -= b->bytes; /* counted again in the sub-buckets */
    if (status == 0)
        status = scatter_close(x, s);
    else
        free_buffers(s);
    for (unsigned i = 0; i < s->nb && status == 0; i++)
        status = finish_bucket(x, &s->b[i], used_bits + bits);
    free(s);
    return status;
}

static int finish_bucket(struct ext *x, struct bucket *b, unsigned used_bits)
{
    if (x->left == 0 || b->records == 0) {
        remove_file(x, b->rec_id);
        remove_file(x, b->key_id);
        return 0;
    }
    if (!engine_fits(x->e, b->bytes, b->records) && b->records > 1 && used_bits < 64)
        return split_bucket(x, b, used_bits);
    const int status = sort_bucket(x, b);
    x->done += b->bytes;
    if (x->e->progress)
        progress_update(x->e->progress, x->done);
    return status;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */

/* Two files per bucket at most 2 * 256 at a time, plus the inputs and the
 * outputs (--split parts): ask for the hard limit. */
static void raise_file_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int make_dir(struct ext *x)
{
    const char *base = x->e->tmpdir;
    if ((size_t)snprintf(x->dir, sizeof x->dir, "%s/riffle-XXXXXX", base) >= sizeof x->dir) {
        cli_error("%s: %s", base, strerror(ENAMETOOLONG));
        return 1;
    }
    /* Registered under its real name with the signals blocked, so that no
     * signal can come between its creation and its registration. */
    sigset_t old;
    cleanup_block_async(&old);
    const int made = mkdtemp(x->dir) != NULL;
    const int err = errno;
    const int reg = made ? cleanup_dir_set(x->dir) : 0;
    cleanup_restore(&old);
    if (!made || reg != 0) {
        if (made)
            rmdir(x->dir);
        cli_error("cannot create a temporary directory in %s: %s", base,
                  strerror(made ? ENAMETOOLONG : err));
        return 1;
    }
    return 0;
}

/* Pass 1 over the input: every record after the header to its bucket. */
struct walk {
    struct ext *x;
    struct scatter *s;
    uint64_t records;
};

static int scatter_one(void *ctx, uint64_t key, const unsigned char *rec, size_t len)
{
    struct walk *w = ctx;
    w->records++;
    return add_record(w->x, w->s, key, rec, len);
}

int engine_external(struct engine *e, struct reader *rd)
{
    struct ext x = {.e = e};
    struct scatter *s = malloc(sizeof *s);
    unsigned char *hbuf = NULL;
    size_t hlen = 0;
    int status = 1;
    if (!s) {
        cli_error("memory exhausted");
        return 1;
    }
    raise_file_limit();
    if (make_dir(&x) != 0) {
        free(s);
        return 1;
    }
    const unsigned bits = fanout_bits(e->size_hint, e->budget);
    if (e->progress)
        progress_phase(e->progress, "scatter", e->size_hint);
    struct walk w = {&x, s, 0};
    if (scatter_open(&x, s, 0, bits) != 0 || engine_walk(e, rd, scatter_one, &w, &hbuf, &hlen) != 0) {
        free_buffers(s);
        goto done;
    }
    if (scatter_close(&x, s) != 0)
        goto done;
    if (e->progress) {
        progress_done(e->progress);
        progress_phase(e->progress, "shuffle", x.scattered);
    }
    x.left = e->limited && e->count < w.records ? e->count : w.records;
    e->record_bytes = 0; /* pass 2 reports bucket bytes itself */
    if (output_set_header(e->out, hbuf, hlen) != 0 || output_set_total(e->out, x.left) != 0)
        goto done;
    status = 0;
    for (unsigned i = 0; i < s->nb && status == 0; i++)
        status = finish_bucket(&x, &s->b[i], bits);
    if (e->progress)
        progress_done(e->progress);
done:
    if (cleanup_dir_remove() != 0 && status == 0) {
        cli_error("cannot remove the temporary directory %s", x.dir);
        status = 1;
    }
    free(hbuf);
    free(s);
    return status;
}

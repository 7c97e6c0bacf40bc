/* dist_view.c -- the inputs of a distributed run as one stream with random
 * access (dist_internal.h), and the part cut of riffle_engine.h
 * ("Distributed runs").
 *
 * A part reads only its own run of records, so it needs the stream's bytes
 * where it likes: regular files are mapped whole (address space, not
 * memory: only the pages touched are read), other descriptors read into
 * memory.  Each input's unterminated last record gets a delimiter, as
 * rf_engine_shuffle gives it, so the stream is a logical one: the inputs'
 * bytes with those delimiters between them. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist_internal.h"
#include "engine/engine_internal.h"

rf_engine_error *rfi_dist_err(rf_engine_error *err, rf_engine_error *local)
{
    if (!err)
        err = local;
    memset(err, 0, sizeof *err);
    return err;
}

rf_status rfi_dist_check(const rf_keyed_order *o, uint64_t *check)
{
    return rf_keyed_keys(o, RFI_DIST_CHECK_NUMBER, check, 1);
}

int rfi_dist_usable(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                    rf_engine_error *err)
{
    int ok = o && (n == 0 || in);
    for (size_t i = 0; ok && i < n; i++)
        if (!in[i].data && in[i].fd < 0 && !in[i].name)
            ok = 0;
    return ok ? 0 : rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
}

/* Room for one more segment and one more mapping. */
static int grow(struct dist_view *v, size_t n)
{
    if (!v->seg) {
        v->seg = malloc((n ? n : 1) * sizeof *v->seg);
        v->maps = malloc((n ? n : 1) * sizeof *v->maps);
        v->map_len = malloc((n ? n : 1) * sizeof *v->map_len);
        if (!v->seg || !v->maps || !v->map_len)
            return rfi_engine_nomem(v->err);
    }
    return 0;
}

static void add_seg(struct dist_view *v, const void *p, uint64_t size)
{
    if (size == 0)
        return;
    const unsigned char *b = p;
    struct dist_seg *s = &v->seg[v->nseg++];
    *s = (struct dist_seg){b, size, v->total, b[size - 1] != v->delim, 0, 0};
    v->total += size + (uint64_t)s->extra;
}

/* A descriptor that is not a regular file, read to its end. */
static int read_all(struct dist_view *v, int fd, const char *name)
{
    size_t cap = (size_t)1 << 16, len = 0;
    unsigned char *b = malloc(cap);
    if (!b)
        return rfi_engine_nomem(v->err);
    for (;;) {
        if (len == cap) {
            unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return rfi_engine_nomem(v->err);
            }
            b = nb;
            cap *= 2;
        }
        const ssize_t got = read(fd, b + len, cap - len);
        if (got > 0) {
            len += (size_t)got;
        } else if (got == 0) {
            break;
        } else if (errno != EINTR) {
            const int e = errno;
            free(b);
            return rfi_engine_fail(v->err, RF_EIO, RF_ENGINE_OP_READ, name, e);
        }
    }
    v->maps[v->nmaps] = b;
    v->map_len[v->nmaps++] = 0;
    add_seg(v, b, len);
    return 0;
}

/* A regular file from `off` on, mapped whole. */
static int map_file(struct dist_view *v, int fd, const struct stat *st, uint64_t off,
                    const char *name)
{
    const uint64_t size = (uint64_t)st->st_size;
    if (off >= size)
        return 0;
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return rfi_engine_fail(v->err, errno == ENOMEM ? RF_ENOMEM : RF_EIO,
                               errno == ENOMEM ? RF_ENGINE_OP_NONE : RF_ENGINE_OP_READ, name,
                               errno);
    (void)madvise(m, (size_t)size, MADV_SEQUENTIAL);
    v->maps[v->nmaps] = m;
    v->map_len[v->nmaps++] = (size_t)size;
    add_seg(v, (unsigned char *)m + off, size - off);
    v->seg[v->nseg - 1].mapped = 1;
    v->seg[v->nseg - 1].released = (uintptr_t)m;
    return 0;
}

/* Whether in[i] is a descriptor given earlier: then it was read to its end
 * already, as rf_engine_shuffle reads `cat - -`. */
static int seen_before(const rf_engine_input *in, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (!in[j].data && in[j].fd >= 0 && in[j].fd == in[i].fd)
            return 1;
    return 0;
}

static int open_one(struct dist_view *v, const rf_engine_input *in, size_t i)
{
    const rf_engine_input *x = &in[i];
    const char *name = x->name ? x->name : "";
    if (x->data) {
        add_seg(v, x->data, x->size);
        return 0;
    }
    if (x->fd >= 0 && seen_before(in, i))
        return 0;
    const int own = x->fd < 0;
    const int fd = own ? open(x->name, O_RDONLY | O_CLOEXEC) : x->fd;
    if (fd < 0)
        return rfi_engine_fail(v->err, RF_EIO, RF_ENGINE_OP_INPUT, name, errno);
    struct stat st;
    int status;
    if (fstat(fd, &st) != 0) {
        status = rfi_engine_fail(v->err, RF_EIO, RF_ENGINE_OP_READ, name, errno);
    } else if (S_ISDIR(st.st_mode)) {
        status = rfi_engine_fail(v->err, RF_EIO, RF_ENGINE_OP_READ, name, EISDIR);
    } else if (S_ISREG(st.st_mode)) {
        const off_t pos = own ? 0 : lseek(fd, 0, SEEK_CUR);
        status = rfi_watch_add(&v->watch, fd, own, name, NULL, v->err) ||
                 map_file(v, fd, &st, pos > 0 ? (uint64_t)pos : 0, name);
    } else {
        status = read_all(v, fd, name);
    }
    if (own)
        close(fd);
    return status;
}

/* The header is looked for a piece at a time, so that a part reads only
 * the header's bytes, not the whole first input. */
#define HEADER_PIECE ((size_t)1 << 20)

/* The end of the first `header` records. */
static void find_header(struct dist_view *v, uint64_t header)
{
    uint64_t left = header;
    v->hend = 0;
    for (size_t i = 0; i < v->nseg && left > 0; i++) {
        const struct dist_seg *s = &v->seg[i];
        for (uint64_t at = 0; at < s->size; at += HEADER_PIECE) {
            const size_t len = s->size - at < HEADER_PIECE ? (size_t)(s->size - at) : HEADER_PIECE;
            const uint64_t c = rf_delims_count(s->p + at, len, v->delim);
            if (c >= left) {
                v->hend = s->at + at +
                          rf_delims_nth(s->p + at, len, v->delim, (size_t)(left - 1)) + 1;
                return;
            }
            left -= c;
        }
        v->hend = s->at + s->size + (uint64_t)s->extra;
        if (s->extra)
            left--;
    }
    if (left > 0)
        v->hend = v->total;
}

int rfi_dist_view_open(struct dist_view *v, const rf_engine_options *o,
                       const rf_engine_input *in, size_t n, rf_engine_error *err)
{
    memset(v, 0, sizeof *v);
    v->delim = o->delim;
    v->err = err;
    if (grow(v, n) != 0) {
        rfi_dist_view_close(v);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (open_one(v, in, i) != 0) {
            rfi_dist_view_close(v);
            return 1;
        }
    }
    find_header(v, o->header);
    return 0;
}

void rfi_dist_view_close(struct dist_view *v)
{
    for (size_t i = 0; i < v->nmaps; i++) {
        if (v->map_len[i])
            munmap(v->maps[i], v->map_len[i]);
        else
            free(v->maps[i]);
    }
    free(v->maps);
    free(v->map_len);
    free(v->seg);
    rfi_watch_free(&v->watch);
    v->maps = NULL;
    v->map_len = NULL;
    v->seg = NULL;
    v->nmaps = v->nseg = 0;
}

int rfi_dist_view_check(struct dist_view *v)
{
    return rfi_watch_check(&v->watch, v->err);
}

/* A 64-bit mix (the finaliser of MurmurHash3, Appleby 2011): every input
 * bit reaches every output bit. */
static uint64_t mix64(uint64_t h, uint64_t x)
{
    h ^= x;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

int rfi_dist_view_identity(const struct dist_view *v, uint32_t *id)
{
    for (size_t i = 0; i < v->nseg; i++)
        if (!v->seg[i].mapped)
            return 1;
    uint64_t h = mix64(0x7269666672656673ull, v->watch.n); /* "riffrefs" */
    /* no device number: the machines that share a file system number its
     * mount each their own way, and the inode, size and time are the file
     * system's */
    for (size_t i = 0; i < v->watch.n; i++) {
        const rf_file_stamp *s = &v->watch.w[i].then;
        h = mix64(h, s->ino);
        h = mix64(h, (uint64_t)s->size);
        h = mix64(h, (uint64_t)s->mtime_sec);
        h = mix64(h, (uint64_t)s->mtime_nsec);
    }
    h = mix64(h, v->total);
    h = mix64(h, v->hend);
    *id = (uint32_t)(h ^ h >> 32);
    return 0;
}

void rfi_dist_view_random(struct dist_view *v)
{
    for (size_t i = 0; i < v->nmaps; i++)
        if (v->map_len[i])
            (void)madvise(v->maps[i], v->map_len[i], MADV_NORMAL);
}

void rfi_dist_view_release(struct dist_view *v, uint64_t upto)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < v->nseg && v->seg[i].at < upto; i++) {
        struct dist_seg *s = &v->seg[i];
        if (!s->mapped)
            continue;
        const uint64_t in = upto - s->at < s->size ? upto - s->at : s->size;
        const uintptr_t end = ((uintptr_t)s->p + (uintptr_t)in) & ~(page - 1);
        if (end > s->released &&
            madvise((void *)s->released, (size_t)(end - s->released), MADV_DONTNEED) == 0)
            s->released = end;
    }
}

size_t rfi_dist_seg_of(const struct dist_view *v, uint64_t at)
{
    size_t lo = 0, hi = v->nseg; /* the last segment starting at or before `at` */
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (v->seg[mid].at <= at)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The first delimiter at logical position >= x (x < total); total if none. */
static uint64_t next_delim(const struct dist_view *v, uint64_t x)
{
    for (size_t i = rfi_dist_seg_of(v, x); i < v->nseg; i++) {
        const struct dist_seg *s = &v->seg[i];
        const uint64_t off = x > s->at ? x - s->at : 0;
        if (off < s->size) {
            const unsigned char *q = memchr(s->p + off, v->delim, (size_t)(s->size - off));
            if (q)
                return s->at + (uint64_t)(q - s->p);
        }
        if (s->extra)
            return s->at + s->size;
    }
    return v->total;
}

/* The first record start at or after logical position c of the records'
 * stream (hend <= c <= total). */
static uint64_t start_from(const struct dist_view *v, uint64_t c)
{
    if (c <= v->hend || c >= v->total)
        return c <= v->hend ? v->hend : v->total;
    const uint64_t d = next_delim(v, c - 1);
    return d < v->total ? d + 1 : v->total;
}

/* floor(b * r / p) without overflow. */
static uint64_t cut(uint64_t b, unsigned r, unsigned p)
{
    return (uint64_t)((unsigned __int128)b * r / p);
}

void rfi_dist_part_range(const struct dist_view *v, unsigned part, unsigned parts, uint64_t *lo,
                         uint64_t *hi)
{
    const uint64_t b = v->total - v->hend;
    *lo = start_from(v, v->hend + cut(b, part, parts));
    *hi = start_from(v, v->hend + cut(b, part + 1, parts));
}

uint64_t rfi_dist_count(const struct dist_view *v, uint64_t lo, uint64_t hi)
{
    uint64_t count = 0;
    if (lo >= hi)
        return 0;
    for (size_t i = rfi_dist_seg_of(v, lo); i < v->nseg && v->seg[i].at < hi; i++) {
        const struct dist_seg *s = &v->seg[i];
        const uint64_t a = lo > s->at ? lo : s->at;
        const uint64_t b = hi < s->at + s->size ? hi : s->at + s->size;
        if (a < b)
            count += rf_delims_count(s->p + (a - s->at), (size_t)(b - a), v->delim);
        if (s->extra && s->at + s->size >= lo && s->at + s->size < hi)
            count++;
    }
    return count;
}

/* ------------------------------------------------------------------------ */
/* The public calls that read the stream only                               */

rf_status rf_engine_part_count(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                               unsigned part, unsigned parts, uint64_t *records,
                               uint64_t *bytes, rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (rfi_dist_usable(o, in, n, err) != 0 || parts == 0 || part >= parts || !records) {
        rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
        return err->status;
    }
    struct dist_view v;
    if (rfi_dist_view_open(&v, o, in, n, err) != 0)
        return err->status;
    uint64_t lo, hi;
    rfi_dist_part_range(&v, part, parts, &lo, &hi);
    *records = rfi_dist_count(&v, lo, hi);
    if (bytes)
        *bytes = hi - lo;
    rfi_dist_view_check(&v);
    rfi_dist_view_close(&v);
    return err->status;
}

rf_status rf_engine_header(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                           void **bytes, size_t *len, rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (rfi_dist_usable(o, in, n, err) != 0 || !bytes || !len)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), err->status;
    *bytes = NULL;
    *len = 0;
    struct dist_view v;
    if (rfi_dist_view_open(&v, o, in, n, err) != 0)
        return err->status;
    unsigned char *b = v.hend ? malloc((size_t)v.hend) : NULL;
    if (v.hend && !b) {
        rfi_engine_nomem(err);
    } else {
        size_t at = 0;
        for (size_t i = 0; i < v.nseg && at < v.hend; i++) {
            const struct dist_seg *s = &v.seg[i];
            const size_t take = (size_t)(v.hend - at < s->size ? v.hend - at : s->size);
            memcpy(b + at, s->p, take);
            at += take;
            if (at < v.hend && s->extra)
                b[at++] = v.delim;
        }
        *bytes = b;
        *len = (size_t)v.hend;
    }
    if (rfi_dist_view_check(&v) != 0) {
        free(b);
        *bytes = NULL;
        *len = 0;
    }
    rfi_dist_view_close(&v);
    return err->status;
}

unsigned rf_engine_owner(uint64_t key, unsigned owners)
{
    return (unsigned)(((unsigned __int128)key * owners) >> 64);
}

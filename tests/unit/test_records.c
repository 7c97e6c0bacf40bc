/* The records layer (riffle_io.h): splitting into records, mapped and read
 * inputs, concatenation, buffered output and the gather (serial and on
 * threads), atomic output. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "records/bytesum.h"
#include "records/gather_internal.h"
#include "riffle_io.h"

static char tmpdir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/riffle-records-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void write_file(const char *name, const void *bytes, size_t len)
{
    char p[128];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static int open_file(const char *name)
{
    char p[128];
    path_of(p, sizeof p, name);
    const int fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    return fd;
}

/* Record i as a string (for comparisons). */
static void record(const rf_records *r, size_t i, char *buf, size_t len)
{
    const size_t n = rf_records_length(r, r->offs[i]);
    assert_true(n < len);
    memcpy(buf, r->data + r->offs[i], n);
    buf[n] = '\0';
}

static void expect_records(const rf_records *r, const char *const *want, size_t n)
{
    char buf[64];
    assert_int_equal(r->n, n);
    for (size_t i = 0; i < n; i++) {
        record(r, i, buf, sizeof buf);
        assert_string_equal(buf, want[i]);
    }
}

static void index_bytes(rf_records *r, const char *bytes, size_t len, unsigned char delim)
{
    rf_records_init(r, delim);
    write_file("in", bytes, len);
    const int fd = open_file("in");
    assert_int_equal(rf_records_add_fd(r, fd), 0);
    close(fd);
    assert_int_equal(rf_records_index(r), 0);
}

static void splitting(void **state)
{
    (void)state;
    rf_records r;
    static const char *const abc[] = {"a", "bb", "", "c"};
    index_bytes(&r, "a\nbb\n\nc\n", 8, '\n');
    expect_records(&r, abc, 4);
    rf_records_free(&r);
    index_bytes(&r, "a\nbb\n\nc", 7, '\n'); /* unterminated last line */
    expect_records(&r, abc, 4);
    rf_records_free(&r);
    index_bytes(&r, "", 0, '\n');
    assert_int_equal(r.n, 0);
    rf_records_free(&r);
    static const char *const empties[] = {"", ""};
    index_bytes(&r, "\n\n", 2, '\n');
    expect_records(&r, empties, 2);
    rf_records_free(&r);
    static const char *const z[] = {"x\ny", "", "w"};
    index_bytes(&r, "x\ny\0\0w", 6, '\0');
    expect_records(&r, z, 3);
    rf_records_free(&r);
}

/* A pipe goes through read(2); a regular file is mapped: same records. */
static void pipe_and_file_agree(void **state)
{
    (void)state;
    const char text[] = "one\ntwo\nthree";
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(p[1]);
    rf_records a, b;
    rf_records_init(&a, '\n');
    assert_int_equal(rf_records_add_fd(&a, p[0]), 0);
    close(p[0]);
    assert_int_equal(rf_records_index(&a), 0);
    index_bytes(&b, text, sizeof text - 1, '\n');
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.data, b.data, a.size);
    assert_int_equal(a.n, 3);
    assert_int_equal(b.n, 3);
    assert_memory_equal(a.offs, b.offs, 3 * sizeof *a.offs);
    rf_records_free(&a);
    rf_records_free(&b);
}

/* rf_records_defer_index: reading a pipe (three inputs, one unterminated in
 * the middle) searches nothing and writes no offsets; the bytes are those of
 * the default, and rf_records_index afterwards finds the same records.  The
 * mode survives rf_records_free. */
static void defer_index_skips_the_scan(void **state)
{
    (void)state;
    static const char *const parts[] = {"one\ntwo", "three\n", "\nfour"};
    rf_records lazy, eager;
    rf_records_init(&lazy, '\n');
    rf_records_defer_index(&lazy);
    rf_records_init(&eager, '\n');
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < 3; i++)
            for (int which = 0; which < 2; which++) {
                int p[2];
                assert_int_equal(pipe(p), 0);
                const size_t len = strlen(parts[i]);
                assert_int_equal(write(p[1], parts[i], len), (ssize_t)len);
                close(p[1]);
                assert_int_equal(rf_records_add_fd(which ? &eager : &lazy, p[0]), 0);
                close(p[0]);
            }
        assert_null(lazy.offs); /* nothing searched, nothing stored */
        assert_non_null(eager.offs);
        assert_int_equal(lazy.size, eager.size);
        assert_memory_equal(lazy.data, eager.data, lazy.size);
        assert_int_equal(rf_records_index(&lazy), 0);
        assert_int_equal(rf_records_index(&eager), 0);
        assert_int_equal(lazy.n, 5); /* one, two, three, "", four */
        assert_int_equal(eager.n, 5);
        assert_memory_equal(lazy.offs, eager.offs, 5 * sizeof *lazy.offs);
        rf_records_free(&lazy); /* still read-only for the second round */
        rf_records_free(&eager);
    }
}

/* Inputs concatenate; an unterminated last record stays separate. */
static void concatenation(void **state)
{
    (void)state;
    write_file("1", "a\nb", 3);
    write_file("2", "c\n", 2);
    write_file("3", "", 0);
    write_file("4", "d", 1);
    rf_records r;
    rf_records_init(&r, '\n');
    const char *names[] = {"1", "2", "3", "4"};
    for (size_t i = 0; i < 4; i++) {
        const int fd = open_file(names[i]);
        assert_int_equal(rf_records_add_fd(&r, fd), 0);
        close(fd);
    }
    assert_int_equal(rf_records_add_record(&r, "e", 1), 0);
    assert_int_equal(rf_records_index(&r), 0);
    static const char *const want[] = {"a", "b", "c", "d", "e"};
    expect_records(&r, want, 5);
    rf_records_free(&r);
}

static void directory_is_an_error(void **state)
{
    (void)state;
    rf_records r;
    rf_records_init(&r, '\n');
    const int fd = open(tmpdir, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(rf_records_add_fd(&r, fd), EISDIR);
    close(fd);
    assert_int_equal(rf_records_add_fd(&r, -1), EBADF);
    rf_records_free(&r);
}

/* rf_records_map_fd maps only what rf_records_add_fd would map, and leaves
 * everything else untouched for a bounded read: a file whose offset is not
 * 0 (stdin after a partial read), a pipe, a set that holds bytes already. */
static void map_only_what_can_be_mapped(void **state)
{
    (void)state;
    write_file("m", "a\nbb\n", 5);
    rf_records r;
    rf_records_init(&r, '\n');
    int fd = open_file("m");
    assert_int_equal(lseek(fd, 2, SEEK_SET), 2);
    assert_int_equal(rf_records_map_fd(&r, fd), 0);
    assert_int_equal(r.size, 0);
    assert_int_equal(lseek(fd, 0, SEEK_CUR), 2);
    assert_int_equal(rf_records_add_fd(&r, fd), 0); /* read from the offset */
    assert_int_equal(r.size, 3);
    assert_memory_equal(r.data, "bb\n", 3);
    rf_records_free(&r);

    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(rf_records_map_fd(&r, fd), 1);
    assert_int_equal(r.size, 5);
    assert_int_equal(lseek(fd, 0, SEEK_CUR), 5);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(rf_records_map_fd(&r, fd), 0); /* not an empty set */
    assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
    rf_records_free(&r);
    close(fd);

    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "x\n", 2), 2);
    close(p[1]);
    assert_int_equal(rf_records_map_fd(&r, p[0]), 0);
    assert_int_equal(rf_records_add_fd(&r, p[0]), 0);
    assert_int_equal(r.size, 2);
    close(p[0]);
    rf_records_free(&r);
    assert_int_equal(rf_records_map_fd(&r, -1), 0);
}

/* The gather writes records in the given order, each with its delimiter,
 * through buffers smaller and larger than the records. */
static void gather(void **state)
{
    (void)state;
    rf_records r;
    static const char in[] = "alpha\nb\n\ngamma-long-record";
    index_bytes(&r, in, sizeof in - 1, '\n');
    assert_int_equal(r.n, 4);
    const uint64_t order[] = {r.offs[3], r.offs[1], r.offs[2], r.offs[0], r.offs[3]};
    static const char want[] = "gamma-long-record\nb\n\nalpha\ngamma-long-record\n";
    const size_t caps[] = {1, 3, 7, 64};
    for (size_t c = 0; c < 4; c++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        unsigned char buf[64];
        rf_writer w;
        rf_writer_init(&w, p[1], buf, caps[c]);
        assert_int_equal(rf_records_write(&r, order, 5, &w), 0);
        assert_int_equal(rf_writer_put_u64(&w, 18446744073709551615u), 0);
        assert_int_equal(rf_writer_putc(&w, '|'), 0);
        assert_int_equal(rf_writer_put_u64(&w, 0), 0);
        assert_int_equal(rf_writer_flush(&w), 0);
        close(p[1]);
        char got[128];
        ssize_t n = 0, k;
        while ((k = read(p[0], got + n, sizeof got - (size_t)n)) > 0)
            n += k;
        close(p[0]);
        const char tail[] = "18446744073709551615|0";
        assert_int_equal((size_t)n, sizeof want - 1 + sizeof tail - 1);
        assert_memory_equal(got, want, sizeof want - 1);
        assert_memory_equal(got + sizeof want - 1, tail, sizeof tail - 1);
    }
    rf_records_free(&r);
}

static void write_error_sticks(void **state)
{
    (void)state;
    const int fd = open("/dev/full", O_WRONLY);
    if (fd < 0)
        skip();
    unsigned char buf[4];
    rf_writer w;
    rf_writer_init(&w, fd, buf, sizeof buf);
    assert_int_equal(rf_writer_put(&w, "ab", 2), 0); /* buffered */
    assert_int_equal(rf_writer_put(&w, "cdefgh", 6), ENOSPC);
    assert_int_equal(rf_writer_putc(&w, 'x'), ENOSPC);
    assert_int_equal(rf_writer_flush(&w), ENOSPC);
    close(fd);
}

/* ---- the threaded gather (rf_records_write_threads) ---- */

static uint64_t next_rand(uint64_t *s) /* SplitMix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* count record starts drawn from the first n of r (repeats allowed): what a
 * gather is asked to write.  Free the result. */
static uint64_t *random_starts(const rf_records *r, size_t n, size_t count, uint64_t *seed)
{
    uint64_t *offs = malloc(count * sizeof *offs);
    assert_non_null(offs);
    for (size_t i = 0; i < count; i++)
        offs[i] = r->offs[next_rand(seed) % n];
    return offs;
}

/* A random record set: empty, short, medium and (1 in 16) long records of
 * any byte but the delimiter, the last one maybe unterminated.  starts/lens
 * are the generator's own account of the records, for the expected output. */
struct recset {
    unsigned char *bytes;
    size_t len, n;
    size_t *starts, *lens;
};

static size_t random_length(uint64_t *s, size_t longest)
{
    const uint64_t x = next_rand(s);
    switch (x % 16) {
    case 0:
    case 1:
        return 0;
    case 2:
    case 3:
    case 4:
    case 5:
        return (size_t)(x >> 8) % 300;
    case 15:
        return (size_t)(x >> 8) % longest;
    default:
        return (size_t)(x >> 8) % 60;
    }
}

static void make_recset(struct recset *rs, uint64_t *s, size_t n, size_t longest,
                        unsigned char delim, int unterminated)
{
    rs->n = n;
    rs->starts = malloc((n + 1) * sizeof *rs->starts);
    rs->lens = malloc((n + 1) * sizeof *rs->lens);
    assert_non_null(rs->starts);
    assert_non_null(rs->lens);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        rs->lens[i] = random_length(s, longest);
        if (i + 1 == n && unterminated && rs->lens[i] == 0)
            rs->lens[i] = 1; /* an unterminated empty record is no record */
        rs->starts[i] = total;
        total += rs->lens[i] + 1;
    }
    rs->len = n && unterminated ? total - 1 : total;
    rs->bytes = malloc(total + 1);
    assert_non_null(rs->bytes);
    for (size_t i = 0; i < n; i++) {
        unsigned char *p = rs->bytes + rs->starts[i];
        for (size_t j = 0; j < rs->lens[i]; j++) {
            unsigned char c = (unsigned char)next_rand(s);
            p[j] = c == delim ? (unsigned char)(delim ^ 0x0a) : c; /* '\n' <-> '\0' */
        }
        p[rs->lens[i]] = delim;
    }
}

static void free_recset(struct recset *rs)
{
    free(rs->bytes);
    free(rs->starts);
    free(rs->lens);
}

/* Everything fd holds, from its start; *len its size.  Free the result. */
static unsigned char *slurp(int fd, size_t *len)
{
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    *len = (size_t)st.st_size;
    unsigned char *b = malloc(*len + 1);
    assert_non_null(b);
    size_t got = 0;
    while (got < *len) {
        const ssize_t k = pread(fd, b + got, *len - got, (off_t)got);
        assert_true(k > 0);
        got += (size_t)k;
    }
    return b;
}

/* A fresh empty output file. */
static int open_out(void)
{
    char p[128];
    path_of(p, sizeof p, "gather-out");
    const int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    return fd;
}

/* What the gather must write: "<", the chosen records with delimiters,
 * ">" (the markers check that w's own buffer is flushed around it). */
static unsigned char *expected(const struct recset *rs, const size_t *pick, size_t count,
                               unsigned char delim, size_t *len)
{
    size_t total = 2;
    for (size_t i = 0; i < count; i++)
        total += rs->lens[pick[i]] + 1;
    unsigned char *b = malloc(total), *p = b;
    assert_non_null(b);
    *p++ = '<';
    for (size_t i = 0; i < count; i++) {
        memcpy(p, rs->bytes + rs->starts[pick[i]], rs->lens[pick[i]]);
        p += rs->lens[pick[i]];
        *p++ = delim;
    }
    *p = '>';
    *len = total;
    return b;
}

struct progress_log {
    pthread_t caller;
    size_t calls, last, count;
    int bad; /* a call off the calling thread, or done not increasing */
};

static void log_progress(void *ctx, size_t done)
{
    struct progress_log *pl = ctx;
    if (!pthread_equal(pthread_self(), pl->caller) || done <= pl->last || done > pl->count)
        pl->bad = 1;
    pl->last = done;
    pl->calls++;
}

/* The threads of this process (entries of /proc/self/task). */
static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A sanitizer runtime (TSan) starts a helper thread of its own at the first
 * pthread_create: start one first, so that it is already counted. */
static void *no_op(void *arg)
{
    return arg;
}

static void warm_threads(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, no_op, NULL) == 0)
        pthread_join(t, NULL);
}

/* After pthread_join a thread leaves /proc a moment later (the kernel wakes
 * the joiner before it reaps the thread): wait up to a second for the
 * count to come back to `want`. */
static int threads_back_to(int want)
{
    const struct timespec ms1 = {0, 1000000};
    int n = count_threads();
    for (int i = 0; i < 1000 && n != want; i++) {
        nanosleep(&ms1, NULL);
        n = count_threads();
    }
    return n;
}

/* One gather of offs through a writer of capacity cap into a fresh file;
 * threads 0 means rf_records_write itself, else rfi_records_write_sized
 * (sz NULL: the public rf_records_write_threads).  Returns the bytes. */
static unsigned char *gather_run(const rf_records *r, const uint64_t *offs, size_t count,
                                 size_t cap, unsigned threads,
                                 const struct rfi_gather_sizes *sz, size_t *len)
{
    const int fd = open_out();
    unsigned char *buf = malloc(cap);
    assert_non_null(buf);
    rf_writer w;
    rf_writer_init(&w, fd, buf, cap);
    assert_int_equal(rf_writer_putc(&w, '<'), 0);
    struct progress_log pl = {pthread_self(), 0, 0, count, 0};
    const int before = count_threads();
    int e;
    if (threads == 0)
        e = rf_records_write(r, offs, count, &w);
    else if (!sz)
        e = rf_records_write_threads(r, offs, count, &w, threads, log_progress, &pl);
    else
        e = rfi_records_write_sized(r, offs, count, &w, threads, log_progress, &pl, sz);
    assert_int_equal(e, 0);
    assert_int_equal(threads_back_to(before), before); /* every worker ended */
    if (threads) {
        assert_false(pl.bad);
        assert_int_equal(pl.last, count); /* the last call reports them all */
    }
    assert_int_equal(rf_writer_putc(&w, '>'), 0);
    assert_int_equal(rf_writer_flush(&w), 0);
    unsigned char *got = slurp(fd, len);
    close(fd);
    free(buf);
    return got;
}

static void expect_gather(const unsigned char *want, size_t want_len, const unsigned char *got,
                          size_t got_len)
{
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len);
}

/* Tiny slice buffers (so records longer than a buffer are common), slices
 * aimed past the buffer (so workers stop early), and the threads from the
 * first byte (parallel = 0). */
static const struct rfi_gather_sizes tiny_sizes[] = {
    {16, 8, 0}, {64, 32, 0}, {64, 200, 0}, {1024, 512, 0}, {4096, 2048, 512},
};

/* Byte identity with rf_records_write (and with the generator's account) for
 * random record sets, random picks (repeats allowed), thread counts 1, 2, 3,
 * 4, 7, both delimiters, terminated or not, counts 0 and 1 included. */
static void gather_threads_identity(void **state)
{
    (void)state;
    static const unsigned threads[] = {1, 2, 3, 4, 7};
    static const size_t caps[] = {1, 7, 64, 4096};
    uint64_t seed = 20261121;
    for (int trial = 0; trial < 150; trial++) {
        const unsigned char delim = trial % 3 == 2 ? '\0' : '\n';
        const size_t n = 1 + (size_t)(next_rand(&seed) % 400);
        struct recset rs;
        make_recset(&rs, &seed, n, trial % 2 ? 3000 : 100, delim, (int)(next_rand(&seed) & 1));
        rf_records r;
        index_bytes(&r, (const char *)rs.bytes, rs.len, delim);
        assert_int_equal(r.n, n);
        const size_t count =
            trial < 10 ? (size_t)trial % 2 : (size_t)(next_rand(&seed) % (3 * n));
        size_t *pick = malloc((count + 1) * sizeof *pick);
        uint64_t *offs = malloc((count + 1) * sizeof *offs);
        assert_non_null(pick);
        assert_non_null(offs);
        for (size_t i = 0; i < count; i++) {
            pick[i] = (size_t)(next_rand(&seed) % n);
            offs[i] = r.offs[pick[i]];
            assert_int_equal(offs[i], rs.starts[pick[i]]);
        }
        size_t want_len, got_len;
        unsigned char *want = expected(&rs, pick, count, delim, &want_len);
        const size_t cap = caps[trial % 4];
        unsigned char *got = gather_run(&r, offs, count, cap, 0, NULL, &got_len);
        expect_gather(want, want_len, got, got_len); /* the serial reference */
        free(got);
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            const struct rfi_gather_sizes *sz = &tiny_sizes[(trial + t) % 5];
            got = gather_run(&r, offs, count, cap, threads[t], sz, &got_len);
            expect_gather(want, want_len, got, got_len);
            free(got);
        }
        free(want);
        free(pick);
        free(offs);
        rf_records_free(&r);
        free_recset(&rs);
    }
}

/* A record set of n records, record i being lens[i] copies of the letter
 * 'a' + i mod 26, each followed by delim except the last when !terminated. */
static void recset_of_lengths(struct recset *rs, const size_t *lens, size_t n,
                              unsigned char delim, int terminated)
{
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += lens[i] + 1;
    *rs = (struct recset){0};
    rs->n = n;
    rs->starts = malloc(n * sizeof *rs->starts);
    rs->lens = malloc(n * sizeof *rs->lens);
    rs->bytes = malloc(total);
    assert_non_null(rs->starts);
    assert_non_null(rs->lens);
    assert_non_null(rs->bytes);
    for (size_t i = 0; i < n; i++) {
        rs->starts[i] = rs->len;
        rs->lens[i] = lens[i];
        memset(rs->bytes + rs->len, 'a' + (int)(i % 26), lens[i]);
        rs->len += lens[i];
        if (i + 1 < n || terminated)
            rs->bytes[rs->len++] = delim;
    }
}

/* The threaded gather of the count picked records (at offs), with each of
 * the sizes and thread counts t_lo..t_hi, through a writer of capacity cap,
 * gives the expected bytes. */
static void expect_gathers(const struct recset *rs, const rf_records *r, const size_t *pick,
                           const uint64_t *offs, size_t count, size_t cap,
                           const struct rfi_gather_sizes *sizes, size_t nsizes, unsigned t_lo,
                           unsigned t_hi)
{
    size_t want_len, got_len;
    unsigned char *want = expected(rs, pick, count, r->delim, &want_len);
    for (size_t z = 0; z < nsizes; z++)
        for (unsigned t = t_lo; t <= t_hi; t++) {
            unsigned char *got = gather_run(r, offs, count, cap, t, &sizes[z], &got_len);
            expect_gather(want, want_len, got, got_len);
            free(got);
        }
    free(want);
}

/* Records that fill a 16-byte slice buffer exactly, or miss by one, the
 * unterminated last one included (it is searched to the end of the data,
 * not to a delimiter), one or several to a slice. */
static void gather_threads_exact_fit(void **state)
{
    (void)state;
    static const struct rfi_gather_sizes sizes[] = {{16, 1, 0}, {16, 8, 0}, {16, 16, 0}};
    for (size_t last = 13; last <= 17; last++) {
        const size_t lens[] = {15, 14, 16, 0, 1, last};
        struct recset rs;
        recset_of_lengths(&rs, lens, sizeof lens / sizeof lens[0], '\n', 0);
        rf_records r;
        index_bytes(&r, (const char *)rs.bytes, rs.len, '\n');
        assert_int_equal(r.n, rs.n);
        size_t pick[24];
        uint64_t offs[24];
        for (size_t i = 0; i < 24; i++) {
            pick[i] = (i * 7 + last) % rs.n;
            offs[i] = r.offs[pick[i]];
        }
        pick[23] = rs.n - 1; /* the last slice holds the unterminated record */
        offs[23] = r.offs[rs.n - 1];
        expect_gathers(&rs, &r, pick, offs, 24, 5, sizes, 3, 1, 4);
        rf_records_free(&r);
        free_recset(&rs);
    }
}

/* Record and buffer lengths at the edges of the 64-byte blocks the vector
 * fill copies (a record ending in the first or second block, one byte
 * either side; data ending within 64 bytes of a record's start; buffers
 * with less than 64 bytes left), both delimiters, against the serial
 * reference. */
static void gather_threads_block_edges(void **state)
{
    (void)state;
    static const size_t lens[] = {0, 1, 62, 63, 64, 65, 126, 127, 128, 129, 191, 192, 200, 5};
    static const struct rfi_gather_sizes sizes[] = {
        {64, 32, 0}, {65, 64, 0}, {127, 64, 0}, {128, 128, 0}, {129, 100, 0}, {300, 150, 0},
    };
    const size_t nl = sizeof lens / sizeof lens[0];
    for (int variant = 0; variant < 4; variant++) {
        const unsigned char delim = variant & 1 ? '\0' : '\n';
        const size_t n = 3 * nl + (size_t)variant; /* the data ends after various lengths */
        size_t lengths[3 * sizeof lens / sizeof lens[0] + 4];
        for (size_t i = 0; i < n; i++)
            lengths[i] = lens[(i * 5 + (size_t)variant) % nl];
        struct recset rs;
        recset_of_lengths(&rs, lengths, n, delim, variant < 2);
        rf_records r;
        index_bytes(&r, (const char *)rs.bytes, rs.len, delim);
        assert_int_equal(r.n, n);
        enum { COUNT = 400 };
        size_t pick[COUNT];
        uint64_t offs[COUNT];
        for (size_t i = 0; i < COUNT; i++) {
            pick[i] = (i * 11 + (size_t)variant) % n;
            if (i % 7 == 0)
                pick[i] = n - 1 - i % 3; /* the records nearest the end, often */
            offs[i] = r.offs[pick[i]];
        }
        expect_gathers(&rs, &r, pick, offs, COUNT, 97, sizes, sizeof sizes / sizeof sizes[0], 2,
                       3);
        rf_records_free(&r);
        free_recset(&rs);
    }
}

/* The public sizes: a few MiB of short records with some longer than a
 * slice buffer (1 MiB), through the writer size the CLI uses. */
static void gather_threads_default_sizes(void **state)
{
    (void)state;
    uint64_t seed = 77;
    const size_t n = 60000;
    struct recset rs;
    make_recset(&rs, &seed, n, 100, '\n', 1);
    /* Three records of 1.5 MiB: rebuild the bytes with them spliced in. */
    const size_t big = (size_t)3 << 19, at[] = {5, 30000, n - 1};
    size_t total = rs.len + 3 * big;
    unsigned char *bytes = malloc(total);
    assert_non_null(bytes);
    size_t pos = 0, from = 0;
    for (size_t k = 0; k < 3; k++) {
        const size_t upto = rs.starts[at[k]] + rs.lens[at[k]]; /* before its delimiter */
        memcpy(bytes + pos, rs.bytes + from, upto - from);
        pos += upto - from;
        memset(bytes + pos, 'x', big);
        pos += big;
        from = upto;
    }
    memcpy(bytes + pos, rs.bytes + from, rs.len - from);
    assert_int_equal(pos + rs.len - from, total);
    rf_records r;
    index_bytes(&r, (const char *)bytes, total, '\n');
    assert_int_equal(r.n, n);
    const size_t count = 2 * n;
    uint64_t *offs = random_starts(&r, n, count, &seed);
    offs[17] = r.offs[at[0]];
    offs[count / 2] = r.offs[at[1]];
    size_t want_len, got_len;
    unsigned char *want = gather_run(&r, offs, count, (size_t)1 << 20, 0, NULL, &want_len);
    assert_true(want_len > (size_t)8 << 20);
    for (unsigned t = 2; t <= 4; t++) {
        unsigned char *got = gather_run(&r, offs, count, (size_t)1 << 20, t, NULL, &got_len);
        expect_gather(want, want_len, got, got_len);
        free(got);
    }
    free(want);
    free(offs);
    free(bytes);
    rf_records_free(&r);
    free_recset(&rs);
}

/* A big gather whose writes fail: the error sticks, the call returns (an
 * alarm guards against a hang) and no worker is left. */
static void gather_error(int fd, int want, unsigned threads)
{
    uint64_t seed = 5;
    const size_t n = 5000;
    struct recset rs;
    make_recset(&rs, &seed, n, 100, '\n', 0);
    rf_records r;
    index_bytes(&r, (const char *)rs.bytes, rs.len, '\n');
    const size_t count = 200 * n;
    uint64_t *offs = random_starts(&r, n, count, &seed);
    unsigned char buf[4096];
    rf_writer w;
    rf_writer_init(&w, fd, buf, sizeof buf);
    struct progress_log pl = {pthread_self(), 0, 0, count, 0};
    const struct rfi_gather_sizes sz = {4096, 2048, 0};
    const int before = count_threads();
    alarm(60);
    const int e = rfi_records_write_sized(&r, offs, count, &w, threads, log_progress, &pl, &sz);
    assert_int_equal(e, want);
    alarm(0);
    assert_int_equal(w.err, want);
    assert_int_equal(threads_back_to(before), before);
    assert_true(pl.last < count); /* stopped early */
    assert_false(pl.bad);
    assert_int_equal(rf_records_write_threads(&r, offs, count, &w, threads, NULL, NULL), want);
    free(offs);
    rf_records_free(&r);
    free_recset(&rs);
}

static void gather_threads_write_errors(void **state)
{
    (void)state;
    const int full = open("/dev/full", O_WRONLY);
    if (full >= 0) {
        for (unsigned t = 1; t <= 4; t++)
            gather_error(full, ENOSPC, t);
        close(full);
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    assert_int_equal(sigaction(SIGPIPE, &ign, &old), 0);
    for (unsigned t = 1; t <= 4; t += 3) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        close(p[0]);
        gather_error(p[1], EPIPE, t);
        close(p[1]);
    }
    assert_int_equal(sigaction(SIGPIPE, &old, NULL), 0);
}

/* Workers block process-directed signals: with the calling thread blocking
 * SIGUSR1 too, a SIGUSR1 sent while workers run stays pending until the
 * calling thread unblocks it, and its handler then runs there. */
static volatile sig_atomic_t usr1_seen;
static pthread_t usr1_thread;

static void on_usr1(int sig)
{
    (void)sig;
    usr1_thread = pthread_self();
    usr1_seen = 1;
}

struct signal_probe {
    int done, early, late, elsewhere;
};

static void probe_signals(void *ctx, size_t done)
{
    struct signal_probe *sp = ctx;
    (void)done;
    if (sp->done++)
        return; /* first call only: workers are still gathering */
    sigset_t s, old;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &s, &old);
    kill(getpid(), SIGUSR1);
    const struct timespec ms20 = {0, 20000000};
    nanosleep(&ms20, NULL);
    sp->early = usr1_seen; /* a worker took it */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    sp->late = usr1_seen;
    sp->elsewhere = usr1_seen && !pthread_equal(usr1_thread, pthread_self());
}

static void gather_threads_signals(void **state)
{
    (void)state;
    uint64_t seed = 9;
    const size_t n = 2000;
    struct recset rs;
    make_recset(&rs, &seed, n, 100, '\n', 0);
    rf_records r;
    index_bytes(&r, (const char *)rs.bytes, rs.len, '\n');
    const size_t count = 100 * n;
    uint64_t *offs = random_starts(&r, n, count, &seed);
    struct sigaction sa = {.sa_handler = on_usr1}, old;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    const int fd = open("/dev/null", O_WRONLY);
    assert_true(fd >= 0);
    unsigned char buf[4096];
    rf_writer w;
    rf_writer_init(&w, fd, buf, sizeof buf);
    const struct rfi_gather_sizes sz = {4096, 2048, 0};
    struct signal_probe sp = {0, 0, 0, 0};
    usr1_seen = 0;
    const int e = rfi_records_write_sized(&r, offs, count, &w, 3, probe_signals, &sp, &sz);
    assert_int_equal(e, 0);
    close(fd);
    assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
    assert_true(sp.done > 1);
    assert_false(sp.early);
    assert_true(sp.late);
    assert_false(sp.elsewhere);
    free(offs);
    rf_records_free(&r);
    free_recset(&rs);
}

static int count_entries(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", tmpdir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int n = -1;
    assert_int_equal(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

static void atomic_commit_and_abort(void **state)
{
    (void)state;
    char p[128], got[16] = {0};
    path_of(p, sizeof p, "out");
    write_file("out", "old", 3);
    chmod(p, 0640);
    const int before = count_entries();
    rf_atomic_file a;
    assert_int_equal(rf_atomic_open_named(&a, p), 0);
    assert_int_equal(count_entries(), before + 1); /* the temporary file */
    assert_non_null(rf_atomic_temp_path(&a));
    assert_true(rf_atomic_staged(&a));
    assert_int_equal(write(a.fd, "new", 3), 3);
    rf_atomic_abort(&a);
    assert_int_equal(count_entries(), before);
    int fd = open_file("out");
    assert_int_equal(read(fd, got, sizeof got), 3);
    close(fd);
    assert_string_equal(got, "old");

    assert_int_equal(rf_atomic_open_named(&a, p), 0);
    assert_int_equal(write(a.fd, "new!", 4), 4);
    assert_int_equal(rf_atomic_commit(&a), 0);
    assert_int_equal(count_entries(), before);
    fd = open_file("out");
    assert_int_equal(read(fd, got, sizeof got), 4);
    close(fd);
    assert_string_equal(got, "new!");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    rf_atomic_abort(&a); /* after commit: a no-op */
}

/* The unnamed temporary (O_TMPFILE, where the file system has it): no name
 * while it is written, so nothing to leave behind; committed over an
 * existing file (its mode kept) and to a new name. */
static void atomic_unnamed(void **state)
{
    (void)state;
    char p[128], q[128], got[16] = {0};
    path_of(p, sizeof p, "uout");
    path_of(q, sizeof q, "unew");
    write_file("uout", "old", 3);
    chmod(p, 0640);
    const int before = count_entries();
    rf_atomic_file a;
    assert_int_equal(rf_atomic_open(&a, p), 0);
    if (count_entries() != before) { /* no O_TMPFILE here: the named path */
        rf_atomic_abort(&a);
        unlink(p);
        skip();
    }
    assert_null(rf_atomic_temp_path(&a));
    assert_true(rf_atomic_staged(&a));
    assert_int_equal(write(a.fd, "new", 3), 3);
    rf_atomic_abort(&a);
    assert_int_equal(count_entries(), before);
    assert_int_equal(rf_atomic_open(&a, p), 0);
    assert_int_equal(write(a.fd, "new!", 4), 4);
    assert_int_equal(count_entries(), before);
    assert_int_equal(rf_atomic_commit(&a), 0);
    assert_int_equal(count_entries(), before);
    int fd = open_file("uout");
    assert_int_equal(read(fd, got, sizeof got), 4);
    close(fd);
    assert_string_equal(got, "new!");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(rf_atomic_open(&a, q), 0);
    assert_int_equal(write(a.fd, "x", 1), 1);
    assert_int_equal(rf_atomic_commit(&a), 0);
    assert_int_equal(count_entries(), before + 1);
    assert_int_equal(stat(q, &st), 0);
    assert_int_equal(st.st_size, 1);
    unlink(p);
    unlink(q);
}

static void atomic_errors_and_devices(void **state)
{
    (void)state;
    rf_atomic_file a;
    char p[128];
    path_of(p, sizeof p, "missing/out");
    assert_int_equal(rf_atomic_open(&a, p), ENOENT);
    rf_atomic_abort(&a); /* after a failed open: a no-op */
    assert_int_equal(rf_atomic_open(&a, "/dev/null"), 0);
    assert_null(a.tmp);
    assert_int_equal(write(a.fd, "x", 1), 1);
    assert_int_equal(rf_atomic_commit(&a), 0);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

/* A descriptor path (/dev/fd/N) of a pipe is written in place, through the
 * pipe: realpath(3) fails there ("pipe:[...]" is no file), and a rename
 * would replace the name. */
static void atomic_descriptor_of_a_pipe(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    char name[64];
    snprintf(name, sizeof name, "/dev/fd/%d", fds[1]);
    rf_atomic_file a;
    assert_int_equal(rf_atomic_open(&a, name), 0);
    assert_null(rf_atomic_temp_path(&a));
    assert_int_equal(write(a.fd, "xyz", 3), 3);
    assert_int_equal(rf_atomic_commit(&a), 0);
    close(fds[1]);
    char got[8] = {0};
    assert_int_equal(read(fds[0], got, sizeof got), 3);
    assert_string_equal(got, "xyz");
    close(fds[0]);
}

/* A dangling symbolic link: its target is created, the link kept. */
static void atomic_dangling_link(void **state)
{
    (void)state;
    char link[128], target[128];
    path_of(link, sizeof link, "dangling");
    path_of(target, sizeof target, "made");
    assert_int_equal(symlink("made", link), 0);
    rf_atomic_file a;
    assert_int_equal(rf_atomic_open(&a, link), 0);
    assert_int_equal(write(a.fd, "abc", 3), 3);
    assert_int_equal(rf_atomic_commit(&a), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(target, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_size, 3);
    unlink(link);
    unlink(target);
}

/* Names of one file found whatever their spelling; distinct names pass. */
static void same_file_by_identity(void **state)
{
    (void)state;
    char a[128], dot[128], hard[128], soft[128], fresh[128], fresh_dot[128], other[128];
    path_of(a, sizeof a, "same-a");
    path_of(hard, sizeof hard, "same-hard");
    path_of(soft, sizeof soft, "same-soft");
    path_of(fresh, sizeof fresh, "same-new");
    path_of(other, sizeof other, "same-other");
    const int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(link(a, hard), 0);
    assert_int_equal(symlink(a, soft), 0);
    /* "DIR/./name": another spelling of an existing and of a new name */
    snprintf(dot, sizeof dot, "%.*s/./%s", (int)(strrchr(a, '/') - a), a, strrchr(a, '/') + 1);
    snprintf(fresh_dot, sizeof fresh_dot, "%.*s/./%s", (int)(strrchr(fresh, '/') - fresh),
             fresh, strrchr(fresh, '/') + 1);
    const struct {
        const char *x, *y;
        int same;
    } cases[] = {
        {a, dot, 1},   {a, hard, 1},        {a, soft, 1},
        {a, other, 0}, {fresh, fresh_dot, 1}, {fresh, other, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *names[3] = {other, cases[i].x, cases[i].y};
        size_t p = 99, q = 99;
        assert_int_equal(rf_same_file_pair(names + 1, 2, &p, &q), cases[i].same);
        if (cases[i].same) {
            assert_int_equal(p, 0);
            assert_int_equal(q, 1);
        }
        /* found after a distinct first name too, with its indices */
        if (cases[i].same && cases[i].y != other) {
            assert_int_equal(rf_same_file_pair(names, 3, &p, &q), 1);
            assert_int_equal(p, 1);
            assert_int_equal(q, 2);
        }
    }
    unlink(a);
    unlink(hard);
    unlink(soft);
}

/* rf_file_snapshot_changed: growth alone keeps the snapshot; any change to
 * the bytes stamped (anywhere: across the hash's 1 MiB reads and its
 * 32-byte stripes, in the tail) or a shrink does not. */
static void snapshot_of_a_growing_file(void **state)
{
    (void)state;
    const size_t n = (3u << 20) + 13;
    unsigned char *bytes = malloc(n);
    assert_non_null(bytes);
    for (size_t i = 0; i < n; i++)
        bytes[i] = (unsigned char)(i * 131 + (i >> 9));
    write_file("grow", bytes, n);
    char p[128];
    path_of(p, sizeof p, "grow");
    const int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    rf_file_stamp s, plain;
    assert_int_equal(rf_file_stamp_sum_fd(fd, &s), 0);
    assert_int_equal(rf_file_stamp_fd(fd, &plain), 0);
    assert_int_equal(lseek(fd, 0, SEEK_CUR), 0); /* the offset is left alone */
    assert_int_equal(rf_file_snapshot_changed(&s, fd, p), 0);
    assert_int_equal(pwrite(fd, "appended\n", 9, (off_t)n), 9);
    assert_int_equal(rf_file_snapshot_changed(&s, fd, p), 0);
    assert_int_equal(rf_file_snapshot_changed(&s, -1, p), 0);
    assert_int_equal(rf_file_snapshot_changed(&plain, fd, p), 1); /* no hash: growth counts */
    const size_t at[] = {0, 31, 32, (1u << 20) - 1, (1u << 20) + 5, n - 13, n - 1};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        const unsigned char x = (unsigned char)(bytes[at[i]] ^ 0x20);
        assert_int_equal(pwrite(fd, &x, 1, (off_t)at[i]), 1);
        assert_int_equal(rf_file_snapshot_changed(&s, fd, p), 1);
        assert_int_equal(pwrite(fd, &bytes[at[i]], 1, (off_t)at[i]), 1);
        assert_int_equal(rf_file_snapshot_changed(&s, fd, p), 0);
    }
    /* a rewrite at the same size within the clock tick of the stamp: the
     * times are made to say nothing changed, the hash still does */
    assert_true(s.fresh); /* written just now */
    assert_int_equal(ftruncate(fd, (off_t)n), 0);
    const unsigned char x = (unsigned char)(bytes[77] ^ 1);
    assert_int_equal(pwrite(fd, &x, 1, 77), 1);
    rf_file_stamp same_times;
    assert_int_equal(rf_file_stamp_fd(fd, &same_times), 0);
    s.mtime_sec = same_times.mtime_sec;
    s.mtime_nsec = same_times.mtime_nsec;
    s.ctime_sec = same_times.ctime_sec;
    s.ctime_nsec = same_times.ctime_nsec;
    assert_int_equal(rf_file_snapshot_changed(&s, fd, p), 1);
    s.fresh = 0; /* an old file: its times would have moved, they are trusted */
    assert_int_equal(rf_file_snapshot_changed(&s, fd, p), 0);
    assert_int_equal(ftruncate(fd, (off_t)n - 1), 0);
    assert_int_equal(rf_file_snapshot_changed(&s, fd, p), 1);
    close(fd);
    free(bytes);
}

/* The hash of bytesum.h is one function however it is taken: in pieces
 * cut anywhere and added up (the threads that count a mapped file), fed as
 * a stream in pieces of any length (the streaming engines), by
 * rf_file_stamp_sum_fd, and by each variant; and it moves with any byte, a
 * shift of the bytes, and the length (a zero byte appended). */
static void bytesum_pieces_stream_and_file_agree(void **state)
{
    (void)state;
    const size_t n = (1u << 20) + 37;
    unsigned char *b = malloc(n + 1);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 131 + (i >> 9));
    const uint64_t whole = rfi_bytesum_finish(rfi_bytesum_range(b, n, 0, n), n);
    const size_t cuts[] = {1, 7, 8, 9, 31, 4095, 65536, 262144 + 3};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        uint64_t sum = 0;
        struct rfi_bytesum st;
        rfi_bytesum_init(&st);
        for (size_t at = 0; at < n; at += cuts[c]) {
            const size_t hi = at + cuts[c] < n ? at + cuts[c] : n;
            sum += rfi_bytesum_range(b, n, at, hi);
            rfi_bytesum_feed(&st, b + at, hi - at);
        }
        assert_true(rfi_bytesum_finish(sum, n) == whole);
        assert_true(rfi_bytesum_value(&st) == whole);
    }
#if defined(RFI_HAVE_BYTESUM_SSE2)
    /* the SSE2 words against the reference: every start and length mod 4 */
    for (uint64_t i0 = 0; i0 < 5; i0++)
        for (size_t nw = 0; nw < 40; nw++)
            assert_true(rfi_bytesum_words_sse2(b + 3 + 8 * i0, nw, i0 * 1000003) ==
                        rfi_bytesum_words_ref(b + 3 + 8 * i0, nw, i0 * 1000003));
    assert_true(rfi_bytesum_words_sse2(b, n / 8, 7) == rfi_bytesum_words_ref(b, n / 8, 7));
#endif
    write_file("summed", b, n);
    char p[128];
    path_of(p, sizeof p, "summed");
    const int fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    rf_file_stamp s;
    assert_int_equal(rf_file_stamp_sum_fd(fd, &s), 0);
    close(fd);
    assert_true(s.summed && s.sum == whole);
    const size_t at[] = {0, 3, 4, 7, 8, 31, 32, n / 2, n - 1};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        b[at[i]] ^= 0x01;
        assert_true(rfi_bytesum_finish(rfi_bytesum_range(b, n, 0, n), n) != whole);
        b[at[i]] ^= 0x81; /* a high bit too: the product's halves */
        assert_true(rfi_bytesum_finish(rfi_bytesum_range(b, n, 0, n), n) != whole);
        b[at[i]] ^= 0x80; /* restored */
    }
    assert_true(rfi_bytesum_finish(rfi_bytesum_range(b + 1, n - 1, 0, n - 1), n - 1) !=
                rfi_bytesum_finish(rfi_bytesum_range(b, n - 1, 0, n - 1), n - 1));
    b[n] = 0;
    assert_true(rfi_bytesum_finish(rfi_bytesum_range(b, n + 1, 0, n + 1), n + 1) != whole);
    free(b);
}

/* rf_compression_sniff: gzip and zstd (a frame, a skippable frame) by
 * their magic bytes, partial when too short to tell, NONE for text and for
 * bytes that only begin like one. */
static void compression_by_magic(void **state)
{
    (void)state;
    int partial = -1;
    assert_int_equal(rf_compression_sniff("\x1f\x8b\x08\x00", 4, &partial), RF_COMPRESSION_GZIP);
    assert_int_equal(partial, 0);
    assert_int_equal(rf_compression_sniff("\x1f", 1, &partial), RF_COMPRESSION_NONE);
    assert_int_equal(partial, 1);
    assert_int_equal(rf_compression_sniff("\x28\xb5\x2f\xfd", 4, &partial), RF_COMPRESSION_ZSTD);
    assert_int_equal(partial, 0);
    assert_int_equal(rf_compression_sniff("\x5a\x2a\x4d\x18", 4, NULL), RF_COMPRESSION_ZSTD);
    assert_int_equal(rf_compression_sniff("\x28\xb5\x2f", 3, &partial), RF_COMPRESSION_NONE);
    assert_int_equal(partial, 1);
    assert_int_equal(rf_compression_sniff("\x28\xb5\x2f\x00", 4, &partial), RF_COMPRESSION_NONE);
    assert_int_equal(partial, 0);
    assert_int_equal(rf_compression_sniff("\x1f\x8c", 2, &partial), RF_COMPRESSION_NONE);
    assert_int_equal(rf_compression_sniff("line\n", 5, &partial), RF_COMPRESSION_NONE);
    assert_int_equal(partial, 0);
    assert_int_equal(rf_compression_sniff("", 0, &partial), RF_COMPRESSION_NONE);
    assert_string_equal(rf_compression_name(RF_COMPRESSION_ZSTD), "zstd");
    /* from a file's first bytes; an empty file is NONE; a missing one ENOENT */
    char path[] = "/tmp/riffle-sniff-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    rf_compression c = RF_COMPRESSION_ZSTD;
    assert_int_equal(rf_compression_of_path(path, &c), 0);
    assert_int_equal(c, RF_COMPRESSION_NONE);
    assert_int_equal(write(fd, "\x1f\x8b\x08", 3), 3);
    assert_int_equal(rf_compression_of_path(path, &c), 0);
    assert_int_equal(c, RF_COMPRESSION_GZIP);
    close(fd);
    unlink(path);
    assert_int_equal(rf_compression_of_path(path, &c), ENOENT);
}

int main(void)
{
    warm_threads();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(splitting),
        cmocka_unit_test(compression_by_magic),
        cmocka_unit_test(snapshot_of_a_growing_file),
        cmocka_unit_test(bytesum_pieces_stream_and_file_agree),
        cmocka_unit_test(pipe_and_file_agree),
        cmocka_unit_test(defer_index_skips_the_scan),
        cmocka_unit_test(concatenation),
        cmocka_unit_test(directory_is_an_error),
        cmocka_unit_test(map_only_what_can_be_mapped),
        cmocka_unit_test(gather),
        cmocka_unit_test(write_error_sticks),
        cmocka_unit_test(gather_threads_identity),
        cmocka_unit_test(gather_threads_exact_fit),
        cmocka_unit_test(gather_threads_block_edges),
        cmocka_unit_test(gather_threads_default_sizes),
        cmocka_unit_test(gather_threads_write_errors),
        cmocka_unit_test(gather_threads_signals),
        cmocka_unit_test(atomic_commit_and_abort),
        cmocka_unit_test(atomic_unnamed),
        cmocka_unit_test(atomic_errors_and_devices),
        cmocka_unit_test(atomic_descriptor_of_a_pipe),
        cmocka_unit_test(atomic_dangling_link),
        cmocka_unit_test(same_file_by_identity),
    };
    return cmocka_run_group_tests_name("records", tests, make_dir, remove_dir);
}

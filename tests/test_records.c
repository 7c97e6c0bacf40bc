/* The records layer (riffle_io.h): splitting into records, mapped and read
 * inputs, concatenation, buffered output and the gather, atomic output. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

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
    assert_int_equal(rf_atomic_open(&a, p), 0);
    assert_int_equal(count_entries(), before + 1); /* the temporary file */
    assert_int_equal(write(a.fd, "new", 3), 3);
    rf_atomic_abort(&a);
    assert_int_equal(count_entries(), before);
    int fd = open_file("out");
    assert_int_equal(read(fd, got, sizeof got), 3);
    close(fd);
    assert_string_equal(got, "old");

    assert_int_equal(rf_atomic_open(&a, p), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(splitting),
        cmocka_unit_test(pipe_and_file_agree),
        cmocka_unit_test(concatenation),
        cmocka_unit_test(directory_is_an_error),
        cmocka_unit_test(gather),
        cmocka_unit_test(write_error_sticks),
        cmocka_unit_test(atomic_commit_and_abort),
        cmocka_unit_test(atomic_errors_and_devices),
    };
    return cmocka_run_group_tests_name("records", tests, make_dir, remove_dir);
}

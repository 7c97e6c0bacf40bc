/* libFuzzer target: CSV records on any bytes, through the engine.  The
 * first byte picks the cut into two inputs (bytes in memory), the budget
 * (tiny budgets take the external engine, whose bucket files hold CSV
 * records across line feeds) and a count.  Always-on checks: the public
 * scans agree with a byte-at-a-time split; when both inputs end outside
 * quotes, the run succeeds and its output is a permutation of the records
 * of that split (or the first K of the full order, itself such a
 * permutation), each followed by a line feed; when one ends inside quotes,
 * the run fails with RF_ENGINE_OP_CSV, naming that input and the line its
 * last record starts on. */
#define _GNU_SOURCE /* memfd_create, pread */
#include <riffle.h>
#include <riffle_engine.h>
#include <riffle_io.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct span {
    const unsigned char *p;
    size_t len;
};

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    const size_t m = x->len < y->len ? x->len : y->len;
    const int c = memcmp(x->p, y->p, m);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The byte-at-a-time split into CSV records; *open: the input ends inside
 * quotes, *line: then the line its last record starts on. */
static size_t split(const unsigned char *p, size_t len, struct span *out, int *open,
                    uint64_t *line)
{
    size_t n = 0, start = 0;
    uint64_t lines = 1, start_line = 1;
    int quoted = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '"')
            quoted = !quoted;
        if (p[i] == '\n')
            lines++;
        if (p[i] == '\n' && !quoted) {
            out[n++] = (struct span){p + start, i - start};
            start = i + 1;
            start_line = lines;
        }
    }
    if (start < len)
        out[n++] = (struct span){p + start, len - start};
    *open = quoted;
    *line = start_line;
    return n;
}

/* The public scans against the split. */
static void check_scans(const unsigned char *p, size_t len, const struct span *want, size_t n,
                        int open, uint64_t line)
{
    const size_t ends = n - (n > 0 && want[n - 1].p + want[n - 1].len == p + len);
    int q = 0;
    CHECK(rf_csv_count(p, len, &q) == ends && q == open);
    for (size_t k = 0; k < ends; k++)
        CHECK(rf_csv_nth(p, len, k) == (size_t)(want[k].p - p) + want[k].len);
    CHECK(rf_csv_nth(p, len, ends) == len);
    CHECK(rf_csv_open_quote_line(p, len) == (open ? line : 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 4096)
        return 0;
    const unsigned char *in = data + 1;
    const size_t len = size - 1, cut = data[0] % (len + 1);
    struct span *want = malloc((len + 2) * sizeof *want);
    struct span *got = malloc((len + 2) * sizeof *got);
    CHECK(want && got);
    int open1, open2;
    uint64_t line1, line2;
    const size_t n1 = split(in, cut, want, &open1, &line1);
    check_scans(in, cut, want, n1, open1, line1);
    const size_t n2 = split(in + cut, len - cut, want + n1, &open2, &line2);
    check_scans(in + cut, len - cut, want + n1, n2, open2, line2);

    rf_engine_options o;
    rf_engine_options_init(&o);
    o.csv = 1;
    o.key[0] = data[0];
    o.memory = data[0] & 0x40 ? 64 : (uint64_t)1 << 20;
    o.threads = 1 + (data[0] & 1);
    o.count = data[0] & 0x80 ? (uint64_t)(data[0] & 7) : RF_ENGINE_ALL;
    const rf_engine_input inputs[2] = {rf_engine_input_bytes(in, cut, "one"),
                                       rf_engine_input_bytes(in + cut, len - cut, "two")};
    const int fd = memfd_create("fuzz_csv", 0);
    CHECK(fd >= 0);
    unsigned char buf[64];
    rf_fd_sink sink;
    rf_fd_sink_init(&sink, fd, buf, sizeof buf);
    rf_engine_error err;
    const rf_status st = rf_engine_shuffle(&o, inputs, 2, &sink.sink, &err);
    if (open1 || open2) {
        CHECK(st == RF_EINVAL && err.op == RF_ENGINE_OP_CSV);
        CHECK(strcmp(err.path, open1 ? "one" : "two") == 0);
        CHECK(err.line == (open1 ? line1 : line2));
    } else {
        CHECK(st == RF_OK && rf_fd_sink_flush(&sink) == 0);
        const off_t olen = lseek(fd, 0, SEEK_END);
        CHECK(olen >= 0);
        unsigned char *outbuf = malloc((size_t)olen + 1);
        CHECK(outbuf && pread(fd, outbuf, (size_t)olen, 0) == olen);
        CHECK(olen == 0 || outbuf[olen - 1] == '\n');
        int open;
        uint64_t line;
        const size_t ngot = split(outbuf, (size_t)olen, got, &open, &line);
        const size_t nwant = n1 + n2;
        CHECK(!open && ngot == (o.count < nwant ? o.count : nwant));
        qsort(want, nwant, sizeof *want, cmp_span);
        qsort(got, ngot, sizeof *got, cmp_span);
        /* got is a sub-multiset of want. */
        size_t j = 0;
        for (size_t i = 0; i < ngot; i++) {
            while (j < nwant && cmp_span(&want[j], &got[i]) < 0)
                j++;
            CHECK(j < nwant && cmp_span(&want[j], &got[i]) == 0);
            j++;
        }
        free(outbuf);
    }
    close(fd);
    free(want);
    free(got);
    return 0;
}

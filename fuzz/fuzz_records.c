/* libFuzzer target: the records layer on any bytes.  The input is split into
 * two inputs read through pipes (so concatenation and the unterminated-last-
 * record rule are exercised), indexed, shuffled and written back through the
 * gather.  Always-on checks: the records found are exactly those of a naive
 * split of each input, and the output is a permutation of them, each record
 * followed by its delimiter. */
#include <riffle.h>
#include <riffle_io.h>

#include <stdlib.h>
#include <string.h>
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

/* Naive split of p[0..len) into records; returns how many were added. */
static size_t split(const unsigned char *p, size_t len, unsigned char d, struct span *out)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i < len; i++)
        if (p[i] == d) {
            out[n++] = (struct span){p + start, i - start};
            start = i + 1;
        }
    if (start < len)
        out[n++] = (struct span){p + start, len - start};
    return n;
}

static void add_through_pipe(rf_records *r, const unsigned char *p, size_t len)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    CHECK(write(fds[1], p, len) == (ssize_t)len); /* len <= 256 < pipe buffer */
    close(fds[1]);
    CHECK(rf_records_add_fd(r, fds[0]) == 0);
    close(fds[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 4096)
        return 0;
    const unsigned char delim = data[0] & 1 ? '\n' : '\0';
    const unsigned char *in = data + 1;
    const size_t len = size - 1, cut = data[0] % (len + 1);
    struct span *want = malloc((len + 2) * sizeof *want);
    struct span *got = malloc((len + 2) * sizeof *got);
    unsigned char *outbuf = malloc(2 * len + 2);
    CHECK(want && got && outbuf);
    size_t nwant = split(in, cut, delim, want);
    nwant += split(in + cut, len - cut, delim, want + nwant);

    rf_records r;
    rf_records_init(&r, delim);
    add_through_pipe(&r, in, cut);
    add_through_pipe(&r, in + cut, len - cut);
    CHECK(rf_records_index(&r) == 0);
    CHECK(r.n == nwant);

    rf_rng g;
    CHECK(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, size) == RF_OK);
    rf_shuffle_u64(&g, r.offs, r.n);
    int fds[2];
    CHECK(pipe(fds) == 0);
    unsigned char wbuf[7]; /* tiny, to cross buffer edges */
    rf_writer w;
    rf_writer_init(&w, fds[1], wbuf, sizeof wbuf);
    CHECK(rf_records_write(&r, r.offs, r.n, &w) == 0);
    CHECK(rf_writer_flush(&w) == 0);
    close(fds[1]);
    size_t olen = 0;
    ssize_t k;
    while ((k = read(fds[0], outbuf + olen, 2 * len + 2 - olen)) > 0)
        olen += (size_t)k;
    close(fds[0]);
    CHECK(olen == 0 || outbuf[olen - 1] == delim);
    const size_t ngot = split(outbuf, olen, delim, got);
    CHECK(ngot == nwant);
    qsort(want, nwant, sizeof *want, cmp_span);
    qsort(got, ngot, sizeof *got, cmp_span);
    for (size_t i = 0; i < nwant; i++)
        CHECK(cmp_span(&want[i], &got[i]) == 0);
    rf_records_free(&r);
    free(want);
    free(got);
    free(outbuf);
    return 0;
}

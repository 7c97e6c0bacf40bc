/* libFuzzer target: the gather of a distributed run (riffle_engine.h,
 * "Distributed runs") on packets from anywhere.  The first byte chooses:
 *   even: the rest, as they are, added as packets of part (second byte) % 2
 *     of 2 -- the gather must refuse them (RF_EINVAL) or take them, and then
 *     write them; never crash;
 *   odd: the rest cut at newlines into records, each made unique by its
 *     number ("<i>:..."), given keys from 4 values (ties on purpose), packed
 *     in well-formed version-1 frames by hand, half from part 0 and half
 *     from part 1, added part 1 first -- the output must hold every record
 *     once, by non-decreasing key. */
#define _GNU_SOURCE /* memfd_create */
#include <riffle.h>
#include <riffle_engine.h>
#include <riffle_io.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAX_RECORDS 300

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

struct out {
    unsigned char *p;
    size_t len, cap;
};

static void put(struct out *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2 + 64;
        o->p = realloc(o->p, o->cap);
        CHECK(o->p);
    }
    memcpy(o->p + o->len, p, n);
    o->len += n;
}

static void put_u(struct out *o, uint64_t v, int bytes)
{
    unsigned char b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    put(o, b, (size_t)bytes);
}

/* The gather's records through an fd sink into a memfd, read back. */
static void write_all(rf_engine_gather *g, struct out *o)
{
    const int fd = memfd_create("fuzz-packets", MFD_CLOEXEC);
    CHECK(fd >= 0);
    unsigned char wb[64];
    rf_fd_sink s;
    rf_fd_sink_init(&s, fd, wb, sizeof wb);
    rf_engine_error e;
    CHECK(rf_engine_gather_write(g, RF_ENGINE_ALL, &s.sink, &e) == RF_OK);
    CHECK(rf_fd_sink_flush(&s) == 0);
    const off_t end = lseek(fd, 0, SEEK_CUR);
    CHECK(end >= 0);
    o->len = 0;
    o->p = realloc(o->p, (size_t)end + 1);
    CHECK(o->p);
    CHECK(pread(fd, o->p, (size_t)end, 0) == end);
    o->p[end] = '\0'; /* numbers are parsed with strtoul */
    o->len = (size_t)end;
    close(fd);
}

static void raw(const rf_engine_options *o, const unsigned char *data, size_t size)
{
    if (size < 1)
        return;
    rf_engine_gather *g;
    rf_engine_error e;
    CHECK(rf_engine_gather_open(&g, o, 2, &e) == RF_OK);
    const rf_status st = rf_engine_gather_add(g, data[0] % 2, data + 1, size - 1, &e);
    CHECK(st == RF_OK || st == RF_EINVAL);
    if (st == RF_OK) {
        struct out out = {0};
        write_all(g, &out);
        uint64_t bytes;
        CHECK(rf_engine_gather_bytes(g, RF_ENGINE_ALL, &bytes, &e) == RF_OK);
        CHECK(bytes == out.len);
        free(out.p);
    }
    rf_engine_gather_close(g);
}

/* A frame of records [from, to) of part `part`. */
static void frame(struct out *f, unsigned part, char **rec, size_t *len, const uint64_t *key,
                  size_t from, size_t to)
{
    struct out payload = {0};
    for (size_t i = from; i < to; i++) {
        put_u(&payload, key[i], 8);
        put_u(&payload, i, 8);
        put_u(&payload, len[i], 8);
        put(&payload, rec[i], len[i]);
    }
    put(f, "RFPK", 4);
    put_u(f, 1, 4);
    put_u(f, part, 4);
    put_u(f, 2, 4);
    put_u(f, 0, 4);
    put_u(f, 1, 4);
    put_u(f, to - from, 8);
    put_u(f, payload.len, 8);
    if (payload.len)
        put(f, payload.p, payload.len);
    free(payload.p);
}

static void built(const rf_engine_options *o, const unsigned char *data, size_t size)
{
    char *rec[MAX_RECORDS];
    size_t len[MAX_RECORDS], n = 0, start = 0;
    uint64_t key[MAX_RECORDS];
    for (size_t i = 0; i <= size && n < MAX_RECORDS; i++) {
        if (i < size && data[i] != '\n')
            continue;
        if (i == size && start == size)
            break;
        const size_t body = i - start;
        rec[n] = malloc(body + 24);
        CHECK(rec[n]);
        const int head = snprintf(rec[n], 24, "%zu:", n);
        memcpy(rec[n] + head, data + start, body);
        rec[n][head + (int)body] = '\n';
        len[n] = (size_t)head + body + 1;
        key[n] = (uint64_t)(data[start < size ? start : 0] & 3) << 62 | (n % 3);
        n++;
        start = i + 1;
    }
    rf_engine_gather *g;
    rf_engine_error e;
    CHECK(rf_engine_gather_open(&g, o, 2, &e) == RF_OK);
    struct out f1 = {0}, f0 = {0};
    frame(&f1, 1, rec, len, key, n / 2, n);
    frame(&f0, 0, rec, len, key, 0, n / 2);
    CHECK(rf_engine_gather_add(g, 1, f1.p, f1.len, &e) == RF_OK);
    CHECK(rf_engine_gather_add(g, 0, f0.p, f0.len, &e) == RF_OK);
    CHECK(rf_engine_gather_records(g) == n);
    struct out out = {0};
    write_all(g, &out);
    /* every record once, keys non-decreasing */
    unsigned char seen[MAX_RECORDS] = {0};
    size_t at = 0, count = 0;
    uint64_t last = 0;
    while (at < out.len) {
        const size_t i = (size_t)strtoul((const char *)out.p + at, NULL, 10);
        CHECK(i < n && !seen[i]);
        seen[i] = 1;
        CHECK(out.len - at >= len[i] && memcmp(out.p + at, rec[i], len[i]) == 0);
        CHECK(count == 0 || key[i] >= last);
        last = key[i];
        at += len[i];
        count++;
    }
    CHECK(count == n);
    rf_engine_gather_close(g);
    for (size_t i = 0; i < n; i++)
        free(rec[i]);
    free(f0.p);
    free(f1.p);
    free(out.p);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    rf_engine_options o;
    rf_engine_options_init(&o);
    o.memory = 64 << 20;
    o.threads = 1;
    if (data[0] & 1)
        built(&o, data + 1, size - 1);
    else
        raw(&o, data + 1, size - 1);
    return 0;
}

/* libFuzzer target: the gather of a distributed run (riffle_engine.h,
 * "Distributed runs") on packets from anywhere.  The first byte chooses:
 *   even: the rest, as they are, added as packets of part (second byte) % 2
 *     of 2 -- the gather must refuse them (RF_EINVAL) or take them, and then
 *     write them; never crash;
 *   odd: the rest cut at newlines into records, each made unique by its
 *     number ("<i>:..."), keyed by the keyed order of a seed from the
 *     second byte; the records of owner 0 of 2 packed by hand in
 *     well-formed version-2 frames (record numbers as gaps), half from
 *     part 0 and half from part 1, added part 1 first, through the copying
 *     add or in place (a gather buffer) -- the output must hold each of
 *     those records once, by increasing key. */
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

static void put_varint(struct out *o, uint64_t v)
{
    while (v >= 0x80) {
        put_u(o, (v & 0x7f) | 0x80, 1);
        v >>= 7;
    }
    put_u(o, v, 1);
}

/* A frame of the records of [from, to) that `mine` marks, of part `part`. */
static void frame(struct out *f, unsigned part, char **rec, size_t *len, const uint8_t *mine,
                  size_t from, size_t to, uint64_t check)
{
    struct out payload = {0};
    uint64_t records = 0, first = 0, last = 0;
    for (size_t i = from; i < to; i++) {
        if (!mine[i])
            continue;
        if (records == 0)
            first = i;
        put_varint(&payload, records == 0 ? 0 : i - last - 1);
        put(&payload, rec[i], len[i]);
        last = i;
        records++;
    }
    if (records == 0)
        return; /* a scatter sends no empty frame */
    put(f, "RFPK", 4);
    put_u(f, 2, 4);
    put_u(f, part, 4);
    put_u(f, 2, 4);
    put_u(f, 0, 4);
    put_u(f, 2, 4);
    put_u(f, '\n', 4);
    put_u(f, 0, 4);
    put_u(f, records, 8);
    put_u(f, payload.len, 8);
    put_u(f, first, 8);
    put_u(f, check, 8);
    put(f, payload.p, payload.len);
    free(payload.p);
}

/* Packets of part `part` to g: copied, or received into a gather buffer. */
static void hand_over(rf_engine_gather *g, unsigned part, const struct out *f, int in_place)
{
    rf_engine_error e;
    if (!in_place) {
        CHECK(rf_engine_gather_add(g, part, f->p, f->len, &e) == RF_OK);
        return;
    }
    void *b;
    CHECK(rf_engine_gather_buffer(g, f->len, &b, &e) == RF_OK);
    if (f->len)
        memcpy(b, f->p, f->len);
    size_t lens[2] = {0, 0};
    lens[part] = f->len;
    CHECK(rf_engine_gather_recv(g, b, lens, &e) == RF_OK);
}

static void built(rf_engine_options *o, const unsigned char *data, size_t size)
{
    if (size < 1)
        return;
    CHECK(rf_seed_u64(o->key, data[0]) == RF_OK);
    const int in_place = data[0] & 1;
    data++, size--;
    char *rec[MAX_RECORDS];
    size_t len[MAX_RECORDS], n = 0, start = 0;
    uint64_t key[MAX_RECORDS], check;
    uint8_t mine[MAX_RECORDS];
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
        n++;
        start = i + 1;
    }
    rf_keyed_order ko;
    CHECK(rf_keyed_order_init(&ko, o->rng, o->key) == RF_OK);
    CHECK(n == 0 || rf_keyed_keys(&ko, 0, key, n) == RF_OK);
    CHECK(rf_keyed_keys(&ko, UINT64_MAX, &check, 1) == RF_OK);
    size_t ours = 0;
    for (size_t i = 0; i < n; i++)
        ours += mine[i] = rf_engine_owner(key[i], 2) == 0;
    rf_engine_gather *g;
    rf_engine_error e;
    CHECK(rf_engine_gather_open(&g, o, 2, &e) == RF_OK);
    struct out f1 = {0}, f0 = {0};
    frame(&f1, 1, rec, len, mine, n / 2, n, check);
    frame(&f0, 0, rec, len, mine, 0, n / 2, check);
    hand_over(g, 1, &f1, in_place);
    hand_over(g, 0, &f0, in_place);
    CHECK(rf_engine_gather_records(g) == ours);
    struct out out = {0};
    write_all(g, &out);
    /* each record of owner 0 once, keys increasing */
    unsigned char seen[MAX_RECORDS] = {0};
    size_t at = 0, count = 0;
    uint64_t last = 0;
    while (at < out.len) {
        const size_t i = (size_t)strtoul((const char *)out.p + at, NULL, 10);
        CHECK(i < n && mine[i] && !seen[i]);
        seen[i] = 1;
        CHECK(out.len - at >= len[i] && memcmp(out.p + at, rec[i], len[i]) == 0);
        CHECK(count == 0 || key[i] > last);
        last = key[i];
        at += len[i];
        count++;
    }
    CHECK(count == ours);
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

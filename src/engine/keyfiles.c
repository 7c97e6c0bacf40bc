/* keyfiles.c -- key-range bucket files (keyfiles.h). */
#include "keyfiles.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"

void rfi_keyfiles_init(struct rfi_keyfiles *k, struct engine *e)
{
    memset(k, 0, sizeof *k);
    k->t.e = e;
}

int rfi_keyfiles_open(struct rfi_keyfiles *k)
{
    if (k->t.ready)
        return 0;
    rfi_raise_file_limit();
    return rfi_temps_open(&k->t, k->t.e);
}

int rfi_keyfiles_close(struct rfi_keyfiles *k)
{
    return rfi_temps_close(&k->t);
}

unsigned rfi_keyfiles_fanout(uint64_t bytes, uint64_t budget)
{
    unsigned bits = 1;
    if (bytes == 0)
        return RFI_KEYFILES_MAX_BITS;
    while (bits < RFI_KEYFILES_MAX_BITS && ((uint64_t)1 << bits) * (budget / 3) < bytes)
        bits++;
    return bits;
}

uint64_t rfi_keyfiles_order_budget(uint64_t budget)
{
    return budget > RFI_KEYFILES_MIN_ORDER ? budget : RFI_KEYFILES_MIN_ORDER;
}

struct rfi_keyset *rfi_keyset_new(uint64_t lo, uint64_t hi, unsigned bits, unsigned per)
{
    assert(bits >= 1 && bits <= RFI_KEYFILES_MAX_BITS && lo <= hi);
    unsigned shift = 0;
    while (((hi - lo) >> shift) >> bits != 0)
        shift++;
    const unsigned n = (unsigned)((hi - lo) >> shift) + 1;
    struct rfi_keyset *s = calloc(1, sizeof *s + n * sizeof s->b[0]);
    if (!s)
        return NULL;
    s->lo = lo;
    s->hi = hi;
    s->shift = shift;
    s->n = n;
    s->per = per;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < RFI_KEYFILES_PER; j++)
            s->b[i].f[j].fd = -1;
    return s;
}

void rfi_keyset_free(struct rfi_keyfiles *k, struct rfi_keyset *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->n; i++) {
        rfi_keybucket_drop(k, &s->b[i]);
        rfi_keyset_free(k, s->b[i].child);
    }
    free(s);
}

uint64_t rfi_keyset_low(const struct rfi_keyset *s, unsigned i)
{
    return s->lo + ((uint64_t)i << s->shift);
}

uint64_t rfi_keyset_high(const struct rfi_keyset *s, unsigned i)
{
    return i + 1 == s->n ? s->hi : rfi_keyset_low(s, i + 1) - 1;
}

int rfi_keyset_fits(const struct rfi_keyset *s, unsigned i, uint64_t need, uint64_t records,
                    uint64_t budget)
{
    return need <= rfi_keyfiles_order_budget(budget) || records <= 1 ||
           rfi_keyset_low(s, i) == rfi_keyset_high(s, i);
}

int rfi_keyset_split(struct rfi_keyfiles *k, struct rfi_keyset *s, unsigned i, uint64_t need,
                     uint64_t budget)
{
    const unsigned bits = rfi_keyfiles_fanout(need, rfi_keyfiles_order_budget(budget));
    s->b[i].child = rfi_keyset_new(rfi_keyset_low(s, i), rfi_keyset_high(s, i), bits, s->per);
    return s->b[i].child ? 0 : rfi_engine_nomem(k->t.e->err);
}

int rfi_keyset_create(struct rfi_keyfiles *k, struct rfi_keyset *s)
{
    for (unsigned i = 0; i < s->n; i++)
        for (unsigned j = 0; j < s->per; j++)
            if (rfi_keyfile_open(k, &s->b[i].f[j]) != 0)
                return 1;
    return 0;
}

void rfi_keybucket_drop(const struct rfi_keyfiles *k, struct rfi_keybucket *b)
{
    for (unsigned j = 0; j < RFI_KEYFILES_PER; j++) {
        struct rfi_keyfile *f = &b->f[j];
        if (f->fd < 0)
            continue;
        close(f->fd);
        rfi_temps_unlink(&k->t, f->id);
        f->fd = -1;
    }
}

int rfi_keyfile_open(struct rfi_keyfiles *k, struct rfi_keyfile *f)
{
    if (f->fd >= 0)
        return 0;
    if (rfi_keyfiles_open(k) != 0)
        return 1;
    f->size = 0;
    return rfi_temps_create(&k->t, &f->id, &f->fd);
}

int rfi_keyfile_append(struct rfi_keyfiles *k, struct rfi_keyfile *f, const void *p, size_t len)
{
    if (rfi_keyfile_open(k, f) != 0)
        return 1;
    const int err = rfi_write_at(f->fd, p, len, f->size);
    if (err)
        return rfi_keyfile_error(k, f, err);
    f->size += len;
    return 0;
}

int rfi_keyfile_read(const struct rfi_keyfiles *k, const struct rfi_keyfile *f, void *p,
                     size_t len, uint64_t at)
{
    unsigned char *b = p;
    while (len > 0) {
        const ssize_t r = pread(f->fd, b, len, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return rfi_keyfile_error(k, f, r < 0 ? errno : EIO);
        b += r;
        at += (uint64_t)r;
        len -= (size_t)r;
    }
    return 0;
}

int rfi_keyfile_error(const struct rfi_keyfiles *k, const struct rfi_keyfile *f, int err)
{
    return rfi_temps_error(&k->t, f->id, err);
}

void rfi_keyfile_name(const struct rfi_keyfiles *k, const struct rfi_keyfile *f, char *out)
{
    rfi_temps_name(&k->t, f->id, out);
}

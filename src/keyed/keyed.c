/* The keyed order's random numbers (riffle.h, "Keyed order"): the derived
 * keys, the per-block key substreams, and the tie shuffles. */
#include "common/thread.h"
#include "keyed_internal.h"
#include "rng/rng_internal.h"
#include "common/sodium.h"

#include <pthread.h>
#include <sodium.h>
#include <string.h>

static const char PREFIX_ITEM[] = "riffle/keyed/key";
static const char PREFIX_TIE[] = "riffle/keyed/tie";

#define BLOCK ((uint64_t)1 << RFI_KEYED_BLOCK_BITS)

rf_status rf_keyed_order_init(rf_keyed_order *o, rf_rng_kind kind,
                              const uint8_t key[RF_KEY_BYTES])
{
    if (kind != RF_RNG_CHACHA20 && kind != RF_RNG_XOSHIRO256PP && kind != RF_RNG_PCG64)
        return RF_EINVAL;
    o->kind = kind;
    rf_status st = rfi_seed_prefixed(o->item_key, PREFIX_ITEM, key, RF_KEY_BYTES);
    if (st == RF_OK)
        st = rfi_seed_prefixed(o->tie_key, PREFIX_TIE, key, RF_KEY_BYTES);
    return st;
}

/* Position s->g at item s->next: the block's substream, then the words of
 * the items before it in the block (ChaCha20 seeks by whole 64-byte blocks
 * of 8 words). */
static rf_status enter_block(rf_keyed_stream *s)
{
    const rf_status st =
        rf_rng_init(&s->g, s->order.kind, s->order.item_key, s->next >> RFI_KEYED_BLOCK_BITS);
    if (st != RF_OK)
        return st;
    uint64_t skip = s->next & (BLOCK - 1);
    if (s->order.kind == RF_RNG_CHACHA20) {
        rf_chacha_seek(&s->g.u.chacha, skip / 8);
        skip %= 8;
    }
    while (skip--)
        (void)rf_rng_next64(&s->g);
    return RF_OK;
}

rf_status rf_keyed_stream_init(rf_keyed_stream *s, const rf_keyed_order *o, uint64_t first)
{
    s->order = *o;
    s->next = first;
    return enter_block(s);
}

uint64_t rf_keyed_stream_next(rf_keyed_stream *s)
{
    /* A block's substream is set up when its first item is reached; rf_rng_init
     * fails only if libsodium cannot start, which the init already ruled out. */
    if ((s->next & (BLOCK - 1)) == 0 && s->next != 0)
        (void)enter_block(s);
    s->next++;
    return rf_rng_next64(&s->g);
}

/* The words of one block's stretch into out[0], out[stride], ..., with the
 * generator's kind known once. */
static void fill_run(rf_rng *g, uint64_t *out, size_t stride, size_t count)
{
    switch (g->kind) {
    case RF_RNG_XOSHIRO256PP:
        for (size_t j = 0; j < count; j++)
            out[j * stride] = rf_xoshiro_next64(&g->u.xoshiro);
        break;
    case RF_RNG_PCG64:
        for (size_t j = 0; j < count; j++)
            out[j * stride] = rf_pcg64_next64(&g->u.pcg);
        break;
    default:
        if (stride == 1) { /* rf_keyed_keys: whole blocks in one call */
            rfi_chacha_fill64(&g->u.chacha, out, count);
            break;
        }
        for (size_t j = 0; j < count; j++)
            out[j * stride] = rf_chacha_next64(&g->u.chacha);
        break;
    }
}

static rf_status stream_fill(rf_keyed_stream *s, uint64_t *out, size_t stride, size_t count)
{
    while (count > 0) {
        if ((s->next & (BLOCK - 1)) == 0 && s->next != 0) {
            const rf_status st = enter_block(s);
            if (st != RF_OK)
                return st;
        }
        const uint64_t left = BLOCK - (s->next & (BLOCK - 1));
        const size_t k = count < left ? count : (size_t)left;
        fill_run(&s->g, out, stride, k);
        s->next += k;
        out += k * stride;
        count -= k;
    }
    return RF_OK;
}

rf_status rf_keyed_stream_fill(rf_keyed_stream *s, rf_keyed *a, size_t count)
{
    return stream_fill(s, &a->key, sizeof *a / sizeof a->key, count);
}

rf_status rf_keyed_keys(const rf_keyed_order *o, uint64_t first, uint64_t *out, size_t count)
{
    rf_keyed_stream s;
    rf_status st = rf_keyed_stream_init(&s, o, first);
    if (st == RF_OK)
        st = stream_fill(&s, out, 1, count);
    sodium_memzero(&s, sizeof s);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Filling on threads: each takes whole blocks, so no two share a substream. */

struct fill_job {
    const rf_keyed_order *o;
    uint64_t first;
    rf_keyed *a;
    size_t count;
    rf_status st;
};

static void *fill_main(void *arg)
{
    struct fill_job *j = arg;
    rf_keyed_stream s;
    j->st = rf_keyed_stream_init(&s, j->o, j->first);
    if (j->st == RF_OK)
        j->st = rf_keyed_stream_fill(&s, j->a, j->count);
    sodium_memzero(&s, sizeof s);
    return NULL;
}

/* Below this many items a thread costs more than it saves. */
#define FILL_PARALLEL_MIN ((size_t)1 << 18)

rf_status rf_keyed_fill(const rf_keyed_order *o, uint64_t first, rf_keyed *a, size_t count,
                        unsigned threads)
{
    if (threads == 0)
        threads = rfi_online_cpus();
    if (threads > RFI_THREADS_MAX)
        threads = RFI_THREADS_MAX;
    if (count < FILL_PARALLEL_MIN)
        threads = 1;
    struct fill_job jobs[RFI_THREADS_MAX];
    pthread_t tid[RFI_THREADS_MAX];
    int started[RFI_THREADS_MAX] = {0};
    /* Cut at block boundaries of the item numbers: share = whole blocks. */
    const uint64_t blocks = ((first + count + BLOCK - 1) >> RFI_KEYED_BLOCK_BITS) -
                            (first >> RFI_KEYED_BLOCK_BITS);
    const uint64_t per = (blocks + threads - 1) / threads;
    uint64_t at = first;
    const uint64_t end = first + count;
    unsigned used = 0;
    for (unsigned t = 0; t < threads && at < end; t++) {
        uint64_t stop = ((at >> RFI_KEYED_BLOCK_BITS) + per) << RFI_KEYED_BLOCK_BITS;
        if (stop > end || t == threads - 1)
            stop = end;
        jobs[t] = (struct fill_job){o, at, a + (at - first), (size_t)(stop - at), RF_OK};
        at = stop;
        used = t + 1;
    }
    for (unsigned t = 1; t < used; t++)
        started[t] = rfi_thread_start(&tid[t], fill_main, &jobs[t]);
    if (used > 0)
        fill_main(&jobs[0]);
    rf_status st = used > 0 ? jobs[0].st : RF_OK;
    for (unsigned t = 1; t < used; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            fill_main(&jobs[t]); /* no thread to be had: do it here */
        if (st == RF_OK)
            st = jobs[t].st;
    }
    return st;
}

/* ------------------------------------------------------------------------ */
/* Ties                                                                     */

static rf_status shuffle_tie(void *ctx, uint64_t key, rf_keyed *run, size_t m)
{
    const rf_keyed_order *o = ctx;
    rf_rng g;
    const rf_status st = rf_rng_init(&g, o->kind, o->tie_key, key);
    if (st != RF_OK)
        return st;
    rf_shuffle(&g, run, m, sizeof *run);
    sodium_memzero(&g, sizeof g);
    return RF_OK;
}

rf_status rf_keyed_sort(const rf_keyed_order *o, rf_keyed *a, size_t n, unsigned threads)
{
    /* The tie function only reads the order, shared by the sorting threads. */
    return rfi_keyed_sort_with(a, n, threads, shuffle_tie, (void *)(uintptr_t)o);
}

/* walk_keys.c -- the keyed stream's keys ahead of the record walk
 * (walk_keys.h). */
#include "walk_keys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common/thread.h"

/* The keyed order's blocks: items i with the same i / 2^16 share a substream
 * (riffle.h), so a block's keys are cheapest drawn whole. */
#define BLOCK_BITS 16
#define BLOCK ((size_t)1 << BLOCK_BITS)
/* Keys drawn in pieces (the first block, or all without a helper) are drawn
 * at most this many at a time. */
#define PIECE ((size_t)4096)
/* Blocks in the ring: the helper may run RING - 1 blocks ahead of the walk
 * (RING * 512 KiB of keys). */
#define RING 4

/* Blocks 1, 2, ... in slots[b % RING]: the helper claims the next block
 * while a slot is free, the walk takes block after block and draws a block
 * itself when the helper has not claimed it yet (so neither waits for the
 * other longer than one block). */
struct key_ring {
    const rf_keyed_order *order;
    uint64_t *slots;          /* RING blocks of keys */
    uint64_t held[RING];      /* the block in each slot once drawn */
    uint64_t claimed;         /* blocks below are drawn or being drawn */
    uint64_t in_use;          /* the walk's block: lower ones' slots are free */
    rf_status err;
    int stop, started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t tid;
};

static uint64_t *slot_of(struct key_ring *r, uint64_t b)
{
    return r->slots + (size_t)(b % RING) * BLOCK;
}

/* Draw block b into its slot; called with r->mu held, returns with it held. */
static void draw(struct key_ring *r, uint64_t b)
{
    pthread_mutex_unlock(&r->mu);
    const rf_status st = rf_keyed_keys(r->order, b << BLOCK_BITS, slot_of(r, b), BLOCK);
    pthread_mutex_lock(&r->mu);
    if (st != RF_OK)
        r->err = st;
    r->held[b % RING] = b;
    pthread_cond_broadcast(&r->cv);
}

static void *helper(void *arg)
{
    struct key_ring *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        if (r->claimed >= r->in_use + RING) {
            pthread_cond_wait(&r->cv, &r->mu);
            continue;
        }
        draw(r, r->claimed++);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void ring_free(struct key_ring *r)
{
    if (!r)
        return;
    if (r->started) {
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->tid, NULL);
    }
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r->slots);
    free(r);
}

/* The ring from block 1 on, and its helper (a library thread: the
 * program's signal handlers run on the walking thread).  Without a helper
 * (none to be had) the walk draws every block itself. */
static struct key_ring *ring_new(const rf_keyed_order *o)
{
    struct key_ring *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->order = o;
    r->slots = malloc(RING * BLOCK * sizeof *r->slots);
    if (!r->slots) {
        free(r);
        return NULL;
    }
    for (size_t i = 0; i < RING; i++)
        r->held[i] = UINT64_MAX;
    r->claimed = r->in_use = 1;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->started = rfi_thread_start(&r->tid, helper, r);
    return r;
}

/* Block b (the one after the walk's current block), once drawn. */
static rf_status ring_get(struct key_ring *r, uint64_t b, const uint64_t **keys)
{
    pthread_mutex_lock(&r->mu);
    r->in_use = b; /* the slot of b - 1 is free again */
    pthread_cond_broadcast(&r->cv);
    if (r->claimed <= b)
        draw(r, r->claimed++);
    while (r->held[b % RING] != b && r->err == RF_OK)
        pthread_cond_wait(&r->cv, &r->mu);
    const rf_status st = r->err;
    pthread_mutex_unlock(&r->mu);
    *keys = slot_of(r, b);
    return st;
}

rf_status rfi_walk_keys_init(struct walk_keys *w, const rf_keyed_order *o, int helper)
{
    memset(w, 0, sizeof *w);
    w->order = o;
    w->helper = helper;
    w->piece = malloc(PIECE * sizeof *w->piece);
    w->piece_keys = malloc(PIECE * sizeof *w->piece_keys);
    if (!w->piece || !w->piece_keys)
        return RF_ENOMEM;
    return rf_keyed_stream_init(&w->ks, o, 0);
}

rf_status rfi_walk_keys_more(struct walk_keys *w, size_t want)
{
    if (w->helper && w->next >= BLOCK) { /* whole blocks: w->next starts one */
        if (!w->ring && !(w->ring = ring_new(w->order)))
            return RF_ENOMEM;
        w->avail = BLOCK;
        return ring_get(w->ring, w->next >> BLOCK_BITS, &w->keys);
    }
    size_t n = want < 1 ? 1 : want < PIECE ? want : PIECE;
    if (w->helper && n > BLOCK - w->next)
        n = BLOCK - (size_t)w->next; /* the ring takes over at the next block */
    const rf_status st = rf_keyed_stream_fill(&w->ks, w->piece, n);
    for (size_t i = 0; i < n; i++)
        w->piece_keys[i] = w->piece[i].key;
    w->keys = w->piece_keys;
    w->avail = n;
    return st;
}

void rfi_walk_keys_free(struct walk_keys *w)
{
    ring_free(w->ring);
    free(w->piece);
    free(w->piece_keys);
    sodium_memzero(&w->ks, sizeof w->ks);
    memset(w, 0, sizeof *w);
}

/* walk.h -- the record walk of engine_internal.h in bulk: the records after
 * the header as chunks of whole records with their keys, for engines that
 * need only a few records' bytes (rfi_engine_head) and should not locate every
 * record one by one.  rfi_engine_walk (engine_internal.h) is this walk with
 * every record located. */
#ifndef RF_ENGINE_WALK_H
#define RF_ENGINE_WALK_H

#include <stddef.h>
#include <stdint.h>

struct engine;
struct reader;
struct spilled;

/* n >= 1 whole records, each ending with the delimiter, of about 64 KiB in
 * all (more for one record longer than that); keys[i] is the key of record
 * first + i (item numbers count from the first record after the header).
 * out: NULL, or the chunk is the one-byte proxy of an out-of-line record
 * whose bytes are there (reader.h). */
struct walk_chunk {
    uint64_t first;
    const unsigned char *data;
    size_t len, n;
    const uint64_t *keys;
    const struct spilled *out;
};

/* Returns 0, or nonzero with the error recorded (the walk stops). */
typedef int (*engine_chunk_fn)(void *ctx, const struct walk_chunk *c);

/* As rfi_engine_walk (engine_internal.h), a chunk at a time. */
int rfi_engine_walk_chunks(struct engine *e, struct reader *rd, engine_chunk_fn fn, void *ctx,
                       unsigned char **hbuf, size_t *hlen);

#endif

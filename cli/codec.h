/* codec.h -- the compressed formats the program reads and writes: gzip
 * (RFC 1952, through zlib) and zstd (RFC 8878, through libzstd), told by
 * their magic bytes on input and by the file name's extension or
 * --compress on output. */
#ifndef RIFFLE_CODEC_H
#define RIFFLE_CODEC_H

#include <stddef.h>

enum cli_codec {
    CLI_CODEC_NONE = 0,
    CLI_CODEC_GZIP = 1,
    CLI_CODEC_ZSTD = 2,
    CLI_CODEC_BY_NAME = 3 /* on output: from each file name's extension */
};

/* Bytes enough to tell the formats apart (zstd's frame magic). */
#define CLI_CODEC_MAGIC 4

/* The format whose magic number begins bytes[0..len) (the library's
 * rf_compression_sniff); NONE otherwise.  *partial is set when len is too
 * short to tell but bytes begin a magic number. */
enum cli_codec codec_sniff(const unsigned char *bytes, size_t len, int *partial);
/* The format of a file named `name` by its extension: .gz, .zst or .zstd;
 * NONE otherwise. */
enum cli_codec codec_by_name(const char *name);
/* --compress=NAME: "gzip", "zstd" or "none".  Returns 0 with *c set, or -1. */
int codec_parse(const char *text, enum cli_codec *c);
/* "gzip", "zstd" (for messages). */
const char *codec_name(enum cli_codec c);

#endif

/*
 * codec.c -- which compressed format, from magic bytes or a name (codec.h).
 */
#include <string.h>

#include "codec.h"
#include "riffle_io.h"

enum cli_codec codec_sniff(const unsigned char *bytes, size_t len, int *partial)
{
    switch (rf_compression_sniff(bytes, len, partial)) {
    case RF_COMPRESSION_GZIP:
        return CLI_CODEC_GZIP;
    case RF_COMPRESSION_ZSTD:
        return CLI_CODEC_ZSTD;
    default:
        return CLI_CODEC_NONE;
    }
}

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

enum cli_codec codec_by_name(const char *name)
{
    if (ends_with(name, ".gz"))
        return CLI_CODEC_GZIP;
    if (ends_with(name, ".zst") || ends_with(name, ".zstd"))
        return CLI_CODEC_ZSTD;
    return CLI_CODEC_NONE;
}

int codec_parse(const char *text, enum cli_codec *c)
{
    if (strcmp(text, "gzip") == 0)
        *c = CLI_CODEC_GZIP;
    else if (strcmp(text, "zstd") == 0)
        *c = CLI_CODEC_ZSTD;
    else if (strcmp(text, "none") == 0)
        *c = CLI_CODEC_NONE;
    else
        return -1;
    return 0;
}

const char *codec_name(enum cli_codec c)
{
    return c == CLI_CODEC_GZIP ? "gzip" : c == CLI_CODEC_ZSTD ? "zstd" : "none";
}

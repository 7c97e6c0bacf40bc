/*
 * codec.c -- which compressed format, from magic bytes or a name (codec.h).
 */
#include <string.h>

#include "codec.h"

/* RFC 1952 section 2.3.1 (ID1 ID2); RFC 8878 section 3.1.1 (Magic_Number,
 * little-endian 0xFD2FB528) and 3.1.2 (skippable frames, 0x184D2A5?). */
static const unsigned char gzip_magic[2] = {0x1f, 0x8b};
static const unsigned char zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
static const unsigned char skip_magic[3] = {0x2a, 0x4d, 0x18}; /* after 0x5? */

/* Whether bytes[0..len) match magic[0..n) as far as both go. */
static int begins(const unsigned char *bytes, size_t len, const unsigned char *magic, size_t n)
{
    return memcmp(bytes, magic, len < n ? len : n) == 0;
}

enum cli_codec codec_sniff(const unsigned char *bytes, size_t len, int *partial)
{
    *partial = 0;
    if (len == 0)
        return CLI_CODEC_NONE;
    if (begins(bytes, len, gzip_magic, sizeof gzip_magic)) {
        *partial = len < sizeof gzip_magic;
        return *partial ? CLI_CODEC_NONE : CLI_CODEC_GZIP;
    }
    int zstd = begins(bytes, len, zstd_magic, sizeof zstd_magic);
    if (!zstd && (bytes[0] & 0xf0) == 0x50)
        zstd = len == 1 || begins(bytes + 1, len - 1, skip_magic, sizeof skip_magic);
    if (!zstd)
        return CLI_CODEC_NONE;
    *partial = len < CLI_CODEC_MAGIC;
    return *partial ? CLI_CODEC_NONE : CLI_CODEC_ZSTD;
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

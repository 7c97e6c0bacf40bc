/*
 * sniff.c -- which compressed format a byte stream is, from its magic bytes
 * (riffle_io.h, "Compressed formats").  The library reads no compressed
 * format; front ends that read inputs in place ask this so that they never
 * shuffle a compressed file's bytes as if they were records.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "riffle_io.h"

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

rf_compression rf_compression_sniff(const void *data, size_t len, int *partial)
{
    const unsigned char *bytes = data;
    int part = 0;
    rf_compression c = RF_COMPRESSION_NONE;
    if (len > 0 && begins(bytes, len, gzip_magic, sizeof gzip_magic)) {
        part = len < sizeof gzip_magic;
        c = part ? RF_COMPRESSION_NONE : RF_COMPRESSION_GZIP;
    } else if (len > 0) {
        int zstd = begins(bytes, len, zstd_magic, sizeof zstd_magic);
        if (!zstd && (bytes[0] & 0xf0) == 0x50)
            zstd = len == 1 || begins(bytes + 1, len - 1, skip_magic, sizeof skip_magic);
        part = zstd && len < RF_COMPRESSION_MAGIC;
        c = zstd && !part ? RF_COMPRESSION_ZSTD : RF_COMPRESSION_NONE;
    }
    if (partial)
        *partial = part;
    return c;
}

const char *rf_compression_name(rf_compression c)
{
    return c == RF_COMPRESSION_GZIP ? "gzip" : c == RF_COMPRESSION_ZSTD ? "zstd" : "none";
}

int rf_compression_of_path(const char *path, rf_compression *c)
{
    *c = RF_COMPRESSION_NONE;
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno;
    unsigned char head[RF_COMPRESSION_MAGIC];
    size_t got = 0;
    while (got < sizeof head) {
        const ssize_t k = read(fd, head + got, sizeof head - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            const int e = errno;
            close(fd);
            /* a pipe or a device with nothing yet: not this call's to wait for */
            return e == EAGAIN ? 0 : e;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    *c = rf_compression_sniff(head, got, NULL);
    return 0;
}

/* Internal: writing one full 64-byte staging line to its (64-byte aligned)
 * place in the bucket scratch -- the portable reference and the SSE2 form.
 *
 * Why staging lines: the scatter writes to up to 4096 places at once.  Storing
 * each 8-byte element straight to its bucket costs a read-for-ownership of the
 * target line and leaves thousands of half-written lines competing for the
 * cache; collecting 64 bytes per bucket in a small L1/L2-resident buffer and
 * writing whole lines with non-temporal stores (which bypass the cache and need
 * no read-for-ownership) turns the scatter into full-line streaming writes.
 * This is the software write-combining of radix sorts (Satish et al., SIGMOD
 * 2010; Polychroniou & Ross, SIGMOD 2014).  Both forms write the same bytes:
 * tests/unit/test_bucket.c demands identical output from them. */
#ifndef RF_BUCKET_FLUSH_H
#define RF_BUCKET_FLUSH_H

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define RFI_HAVE_STREAM 1
#else
#define RFI_HAVE_STREAM 0
#endif

/* Portable: a 64-byte copy (ordinary stores through the cache). */
static inline void rfi_flush_line_plain(unsigned char *dst, const unsigned char *line)
{
    memcpy(dst, line, 64);
}

#if RFI_HAVE_STREAM
/* SSE2: four aligned 16-byte loads from the staging line and four
 * non-temporal 16-byte stores (MOVNTDQ).  dst and line are 64-byte aligned.
 * The stores are weakly ordered: the scatter ends with rfi_flush_fence(). */
static inline void rfi_flush_line_stream(unsigned char *dst, const unsigned char *line)
{
    const __m128i *s = (const __m128i *)(const void *)line;
    __m128i *d = (__m128i *)(void *)dst;
    const __m128i a = _mm_load_si128(s), b = _mm_load_si128(s + 1);
    const __m128i c = _mm_load_si128(s + 2), e = _mm_load_si128(s + 3);
    _mm_stream_si128(d, a);
    _mm_stream_si128(d + 1, b);
    _mm_stream_si128(d + 2, c);
    _mm_stream_si128(d + 3, e);
}

static inline void rfi_flush_fence(void)
{
    _mm_sfence();
}

/* Copy `bytes` from src (any alignment) to dst: the lines wholly inside
 * [dst, dst + bytes) with non-temporal stores, the partial lines at either end
 * -- which may belong to a neighbour -- byte-exactly with memcpy. */
static inline void rfi_copy_stream(unsigned char *dst, const unsigned char *src, size_t bytes)
{
    const size_t head = (size_t)(-(uintptr_t)dst & 63);
    if (bytes < head + 64) {
        memcpy(dst, src, bytes);
        return;
    }
    memcpy(dst, src, head);
    dst += head;
    src += head;
    bytes -= head;
    for (; bytes >= 64; bytes -= 64, dst += 64, src += 64) {
        const __m128i *s = (const __m128i *)(const void *)src;
        __m128i *d = (__m128i *)(void *)dst;
        const __m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
        const __m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);
        _mm_stream_si128(d, a);
        _mm_stream_si128(d + 1, b);
        _mm_stream_si128(d + 2, c);
        _mm_stream_si128(d + 3, e);
    }
    memcpy(dst, src, bytes);
}
#else
static inline void rfi_flush_line_stream(unsigned char *dst, const unsigned char *line)
{
    rfi_flush_line_plain(dst, line);
}

static inline void rfi_flush_fence(void)
{
}

static inline void rfi_copy_stream(unsigned char *dst, const unsigned char *src, size_t bytes)
{
    memcpy(dst, src, bytes);
}
#endif

#endif

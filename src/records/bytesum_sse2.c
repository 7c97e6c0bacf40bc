/* bytesum_sse2.c -- the words of bytesum.h two at a time with SSE2 (the
 * x86-64 baseline): the 32x32->64-bit multiply of the halves of each word
 * (pmuludq) is the one the hash's contribution uses, so a vector takes two
 * words; four words a loop, in two sums. */
#include "bytesum.h"

#if defined(RFI_HAVE_BYTESUM_SSE2)
#include <emmintrin.h>

/* The contributions of the two words in v against their keys k. */
static __m128i two(__m128i v, __m128i k)
{
    const __m128i x = _mm_xor_si128(v, k);
    return _mm_add_epi64(v, _mm_mul_epu32(x, _mm_srli_epi64(x, 32)));
}

uint64_t rfi_bytesum_words_sse2(const unsigned char *p, size_t nw, uint64_t i0)
{
    const uint64_t k = RFI_BYTESUM_K0 + i0 * RFI_BYTESUM_K1;
    __m128i k0 = _mm_set_epi64x((long long)(k + RFI_BYTESUM_K1), (long long)k);
    __m128i k1 = _mm_add_epi64(k0, _mm_set1_epi64x((long long)(2 * RFI_BYTESUM_K1)));
    const __m128i step = _mm_set1_epi64x((long long)(4 * RFI_BYTESUM_K1));
    __m128i s0 = _mm_setzero_si128(), s1 = _mm_setzero_si128();
    size_t i = 0;
    for (; i + 4 <= nw; i += 4, p += 32) {
        s0 = _mm_add_epi64(s0, two(_mm_loadu_si128((const __m128i *)(const void *)p), k0));
        s1 = _mm_add_epi64(s1, two(_mm_loadu_si128((const __m128i *)(const void *)(p + 16)), k1));
        k0 = _mm_add_epi64(k0, step);
        k1 = _mm_add_epi64(k1, step);
    }
    uint64_t lanes[2];
    _mm_storeu_si128((__m128i *)(void *)lanes, _mm_add_epi64(s0, s1));
    return lanes[0] + lanes[1] + rfi_bytesum_words_ref(p, nw - i, i0 + i);
}
#endif

/* The SipHash-mode Feistel network (feistel.c) in 8 lanes with AVX2:
 * two ymm vectors of four 64-bit lanes, one network per lane -- the kernel
 * for x86-64 CPUs without AVX-512.
 *
 * As perm_sip_avx512.c, except that AVX2 has no 64-bit rotate: rotations by
 * 32 and 16 are byte shuffles (vpshufd, vpshufb), the others two shifts and
 * an or.  Compiled for AVX2 by a target attribute, called only when
 * rfi_cpu_avx2(); tests/unit/test_perm.c compares it with rf_perm_at. */
#include "perm_internal.h"

#ifdef RFI_HAVE_SIP_X86
#include <immintrin.h>

#define TARGET_AVX2 __attribute__((target("avx2")))
enum { V = RFI_SIP_AVX2_LANES / 4 };

#define ADD _mm256_add_epi64
#define XOR _mm256_xor_si256
#define ROL(x, k) _mm256_or_si256(_mm256_slli_epi64(x, k), _mm256_srli_epi64(x, 64 - (k)))
#define ROL32(x) _mm256_shuffle_epi32(x, 0xb1) /* swap the 32-bit halves */
#define ROL16(x) _mm256_shuffle_epi8(x, rol16)

#define SIPHALF1(v0, v1)                                                           \
    do {                                                                           \
        v0 = ADD(v0, v1);                                                          \
        v1 = ROL(v1, 13);                                                          \
        v1 = XOR(v1, v0);                                                          \
        v0 = ROL32(v0);                                                            \
    } while (0)
#define SIPHALF2(v0, v1, v2, v3)                                                   \
    do {                                                                           \
        v2 = ADD(v2, v3);                                                          \
        v3 = ROL16(v3);                                                            \
        v3 = XOR(v3, v2);                                                          \
        v0 = ADD(v0, v3);                                                          \
        v3 = ROL(v3, 21);                                                          \
        v3 = XOR(v3, v0);                                                          \
        v2 = ADD(v2, v1);                                                          \
        v1 = ROL(v1, 17);                                                          \
        v1 = XOR(v1, v2);                                                          \
        v2 = ROL32(v2);                                                            \
    } while (0)

/* As perm_sip_avx512.c's feistel_round. */
static inline TARGET_AVX2 void feistel_round(const uint64_t s[4], __m256i mask,
                                             __m256i a[V], __m256i b[V])
{
    /* byte j of a rotated-by-16 little-endian word is byte j - 2 (mod 8) */
    const __m256i rol16 = _mm256_setr_epi8(6, 7, 0, 1, 2, 3, 4, 5, 14, 15, 8, 9, 10, 11,
                                           12, 13, 6, 7, 0, 1, 2, 3, 4, 5, 14, 15, 8, 9,
                                           10, 11, 12, 13);
    const __m256i s0 = _mm256_set1_epi64x((long long)s[0]);
    const __m256i s1 = _mm256_set1_epi64x((long long)s[1]);
    const __m256i s2 = _mm256_set1_epi64x((long long)s[2]);
    const __m256i s3 = _mm256_set1_epi64x((long long)s[3]);
    const __m256i ff = _mm256_set1_epi64x(0xff);
    __m256i v0[V], v1[V], v2[V], v3[V];
    for (int q = 0; q < V; q++) {
        v0[q] = s0;
        v1[q] = s1;
        v2[q] = s2;
        v3[q] = XOR(s3, b[q]);
        SIPHALF2(v0[q], v1[q], v2[q], v3[q]);
        v0[q] = XOR(v0[q], b[q]);
        v2[q] = XOR(v2[q], ff);
    }
    for (int i = 0; i < 3; i++) {
        for (int q = 0; q < V; q++) {
            SIPHALF1(v0[q], v1[q]);
            SIPHALF2(v0[q], v1[q], v2[q], v3[q]);
        }
    }
    for (int q = 0; q < V; q++) {
        const __m256i f = XOR(XOR(v0[q], v1[q]), XOR(v2[q], v3[q]));
        const __m256i c = _mm256_and_si256(XOR(a[q], f), mask);
        a[q] = b[q];
        b[q] = c;
    }
}

TARGET_AVX2 void rfi_sip_pass_avx2(const rfi_sip_pre *pre, uint64_t *x)
{
    const __m256i mask_hi = _mm256_set1_epi64x((long long)pre->mask_hi);
    const __m256i mask_lo = _mm256_set1_epi64x((long long)pre->mask_lo);
    const __m128i v = _mm_cvtsi32_si128((int)pre->lo_bits);
    __m256i a[V], b[V];
    for (int q = 0; q < V; q++) {
        const __m256i xq = _mm256_loadu_si256((const __m256i *)(x + 4 * q));
        a[q] = _mm256_srl_epi64(xq, v);
        b[q] = _mm256_and_si256(xq, mask_lo);
    }
    for (unsigned r = 0; r < RFI_SIP_ROUNDS; r += 2) {
        feistel_round(pre->s[r], mask_hi, a, b);
        feistel_round(pre->s[r + 1], mask_lo, a, b);
    }
    for (int q = 0; q < V; q++)
        _mm256_storeu_si256((__m256i *)(x + 4 * q),
                            _mm256_or_si256(_mm256_sll_epi64(a[q], v), b[q]));
}

#else
typedef int rfi_perm_sip_avx2_unused; /* ISO C: no empty translation unit */
#endif

/* The SipHash-mode Feistel network (feistel.c) in 16 lanes with
 * AVX-512F: two zmm vectors of eight 64-bit lanes, one network per lane.
 *
 * The SipHash core is four 64-bit words updated by add, xor and rotate, all of
 * which AVX-512F has per 64-bit lane (vpaddq, vpxorq, vprolq), so a lane
 * computes exactly what round_sip computes (tests/unit/test_perm.c compares
 * every kernel with rf_perm_at).  The network is sequential within a lane
 * (round r needs round r - 1), so the speed comes only from running
 * independent indices side by side: two vectors keep both 512-bit ports busy
 * while one waits on its dependency chain (16 lanes measured faster than 8, 24
 * or 32: docs/BENCHMARKS_PERM.md).  The function is compiled for AVX-512F by a
 * target attribute and called only when rfi_cpu_avx512f() (CPU and OS support,
 * as the compiler's runtime reports it). */
#include "perm_internal.h"

#ifdef RFI_HAVE_SIP_X86
#include <immintrin.h>

#define TARGET_AVX512 __attribute__((target("avx512f")))
enum { V = RFI_SIP_AVX512_LANES / 8 };

#define ADD _mm512_add_epi64
#define XOR _mm512_xor_si512
#define ROL _mm512_rol_epi64

/* The SipRound of feistel.c's SIPROUND, split at the point before
 * which round_sip_pre has it precomputed. */
#define SIPHALF1(v0, v1)                                                           \
    do {                                                                           \
        v0 = ADD(v0, v1);                                                          \
        v1 = ROL(v1, 13);                                                          \
        v1 = XOR(v1, v0);                                                          \
        v0 = ROL(v0, 32);                                                          \
    } while (0)
#define SIPHALF2(v0, v1, v2, v3)                                                   \
    do {                                                                           \
        v2 = ADD(v2, v3);                                                          \
        v3 = ROL(v3, 16);                                                          \
        v3 = XOR(v3, v2);                                                          \
        v0 = ADD(v0, v3);                                                          \
        v3 = ROL(v3, 21);                                                          \
        v3 = XOR(v3, v0);                                                          \
        v2 = ADD(v2, v1);                                                          \
        v1 = ROL(v1, 17);                                                          \
        v1 = XOR(v1, v2);                                                          \
        v2 = ROL(v2, 32);                                                          \
    } while (0)

/* (a, b) -> (b, (a ^ F(b)) & mask) in every lane of the V vectors, F the
 * SipHash-1-3 round function with prepared state s. */
static inline TARGET_AVX512 void feistel_round(const uint64_t s[4], __m512i mask,
                                               __m512i a[V], __m512i b[V])
{
    const __m512i s0 = _mm512_set1_epi64((long long)s[0]);
    const __m512i s1 = _mm512_set1_epi64((long long)s[1]);
    const __m512i s2 = _mm512_set1_epi64((long long)s[2]);
    const __m512i s3 = _mm512_set1_epi64((long long)s[3]);
    const __m512i ff = _mm512_set1_epi64(0xff);
    __m512i v0[V], v1[V], v2[V], v3[V];
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
        /* 0x96 is the truth table of x ^ y ^ z */
        const __m512i f = _mm512_ternarylogic_epi64(v0[q], v1[q], v2[q], 0x96);
        const __m512i c = _mm512_and_si512(_mm512_ternarylogic_epi64(a[q], f, v3[q], 0x96),
                                           mask);
        a[q] = b[q];
        b[q] = c;
    }
}

TARGET_AVX512 void rfi_sip_pass_avx512(const rfi_sip_pre *pre, uint64_t *x)
{
    const __m512i mask_hi = _mm512_set1_epi64((long long)pre->mask_hi);
    const __m512i mask_lo = _mm512_set1_epi64((long long)pre->mask_lo);
    const __m128i v = _mm_cvtsi32_si128((int)pre->lo_bits);
    __m512i a[V], b[V];
    for (int q = 0; q < V; q++) {
        const __m512i xq = _mm512_loadu_si512(x + 8 * q);
        a[q] = _mm512_srl_epi64(xq, v);
        b[q] = _mm512_and_si512(xq, mask_lo);
    }
    for (unsigned r = 0; r < RFI_SIP_ROUNDS; r += 2) {
        feistel_round(pre->s[r], mask_hi, a, b);
        feistel_round(pre->s[r + 1], mask_lo, a, b);
    }
    for (int q = 0; q < V; q++)
        _mm512_storeu_si512(x + 8 * q, _mm512_or_si512(_mm512_sll_epi64(a[q], v), b[q]));
}

#else
typedef int rfi_perm_sip_avx512_unused; /* ISO C: no empty translation unit */
#endif

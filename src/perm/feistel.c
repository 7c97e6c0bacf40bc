/* The Feistel network of rf_perm's cipher modes, with cycle walking.
 *
 * Network: the alternating unbalanced Feistel of NIST SP 800-38G (FF1, Alg. 7)
 * on bit strings, XOR instead of modular addition: x = A || B with |A| = u =
 * floor(b/2), |B| = v = b - u, and round r maps (A, B) to (B, A ^ F_r(B)) cut
 * to m_r = (r even ? u : v) bits, so the halves keep alternating widths and an
 * even number of rounds returns to |A| = u, |B| = v.  Every round is a
 * bijection whatever F_r is (it is undone by A = C ^ F_r(B)).
 *
 * Cycle walking (Black & Rogaway, CT-RSA 2002, sec. 2): E permutes [0, 2^b)
 * with 2^(b-1) <= max < 2^b, so iterating E from x in [0, N) until the value
 * falls in [0, N) again gives a permutation of [0, N); the expected number of
 * steps is 2^b / N < 2.  The inverse walks with E^-1. */
#include "common/cpu.h"
#include "perm_internal.h"

#include <assert.h>
#include <sodium.h>
#include <stdint.h>
#include <string.h>

/* SipHash initialisation constants ("somepseudorandomlygeneratedbytes"),
 * Aumasson & Bernstein, "SipHash: a fast short-input PRF", INDOCRYPT 2012. */
#define SIP_C0 0x736f6d6570736575ULL
#define SIP_C1 0x646f72616e646f6dULL
#define SIP_C2 0x6c7967656e657261ULL
#define SIP_C3 0x7465646279746573ULL

#define SIPROUND(v0, v1, v2, v3)                                                    \
    do {                                                                           \
        v0 += v1;                                                                  \
        v1 = rf_rotl64_(v1, 13);                                                   \
        v1 ^= v0;                                                                  \
        v0 = rf_rotl64_(v0, 32);                                                   \
        v2 += v3;                                                                  \
        v3 = rf_rotl64_(v3, 16);                                                   \
        v3 ^= v2;                                                                  \
        v0 += v3;                                                                  \
        v3 = rf_rotl64_(v3, 21);                                                   \
        v3 ^= v0;                                                                  \
        v2 += v1;                                                                  \
        v1 = rf_rotl64_(v1, 17);                                                   \
        v1 ^= v2;                                                                  \
        v2 = rf_rotl64_(v2, 32);                                                   \
    } while (0)

/* SipHash-1-3 of the single block m under key (k0, k1): the length block is
 * omitted because every input of the network has the same length. */
static inline uint64_t round_sip(const uint64_t k[2], uint64_t m)
{
    uint64_t v0 = k[0] ^ SIP_C0, v1 = k[1] ^ SIP_C1;
    uint64_t v2 = k[0] ^ SIP_C2, v3 = k[1] ^ SIP_C3;
    v3 ^= m;
    SIPROUND(v0, v1, v2, v3);
    v0 ^= m;
    v2 ^= 0xff;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

/* lo ^ hi of the 128-bit product a * b (the "mum" of wyhash, Philox's
 * mulhi/mullo pair folded). */
static inline uint64_t mul_fold(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
    const unsigned __int128 p = (unsigned __int128)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
#else
    const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
    const uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    const uint64_t lo = (mid << 32) | (p00 & 0xffffffffu);
    const uint64_t hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return lo ^ hi;
#endif
}

/* k[1] is stored odd (rfi_feistel_keys), so the product keeps every bit of
 * the input in the low word. */
static inline uint64_t round_mul(const uint64_t k[2], uint64_t m)
{
    return mul_fold(m ^ k[0], k[1]);
}

static inline uint64_t mask_bits(unsigned m)
{
    assert(m < 64);
    return ((uint64_t)1 << m) - 1;
}

/* Round counts (riffle_perm.h): compile-time constants, so that the round
 * loops unroll completely. */
#define SIP_ROUNDS 8
#define MUL_ROUNDS 10

/* One pass of the network in each direction, for round function ROUND, two
 * rounds per iteration: (a, b) -> (b, c) -> (c, d) with
 * c = (a ^ F_r(b)) mod 2^u and d = (b ^ F_{r+1}(c)) mod 2^v.  These are the
 * single-index paths (rf_perm_at, rf_perm_inverse); rf_perm_at_range runs
 * the SipHash network in lanes (rfi_sip_lanes below). */
#define FEISTEL_PAIR(NAME, ROUND, ROUNDS)                                          \
    static inline uint64_t NAME##_enc(const rf_perm *p, uint64_t x)                \
    {                                                                              \
        const unsigned v = p->lo_bits;                                             \
        const uint64_t mu = mask_bits(p->hi_bits), mv = mask_bits(v);              \
        uint64_t a = x >> v, b = x & mv;                                           \
        for (unsigned r = 0; r < ROUNDS; r += 2) {                                 \
            const uint64_t c = (a ^ ROUND(p->rk[r], b)) & mu;                      \
            const uint64_t d = (b ^ ROUND(p->rk[r + 1], c)) & mv;                  \
            a = c;                                                                 \
            b = d;                                                                 \
        }                                                                          \
        return (a << v) | b;                                                       \
    }                                                                              \
    static inline uint64_t NAME##_dec(const rf_perm *p, uint64_t y)                \
    {                                                                              \
        const unsigned v = p->lo_bits;                                             \
        const uint64_t mu = mask_bits(p->hi_bits), mv = mask_bits(v);              \
        uint64_t c = y >> v, d = y & mv;                                           \
        for (unsigned r = ROUNDS; r > 0; r -= 2) {                                 \
            const uint64_t b = (d ^ ROUND(p->rk[r - 1], c)) & mv;                  \
            const uint64_t a = (c ^ ROUND(p->rk[r - 2], b)) & mu;                  \
            c = a;                                                                 \
            d = b;                                                                 \
        }                                                                          \
        return (c << v) | d;                                                       \
    }

FEISTEL_PAIR(sip, round_sip, SIP_ROUNDS)
FEISTEL_PAIR(mul, round_mul, MUL_ROUNDS)

uint64_t rfi_feistel_at(const rf_perm *p, uint64_t x)
{
    assert(x <= p->max);
    if (p->mode == RF_PERM_SIPHASH) {
        do
            x = sip_enc(p, x);
        while (x > p->max);
    } else {
        do
            x = mul_enc(p, x);
        while (x > p->max);
    }
    return x;
}

uint64_t rfi_feistel_inverse(const rf_perm *p, uint64_t y)
{
    assert(y <= p->max);
    if (p->mode == RF_PERM_SIPHASH) {
        do
            y = sip_dec(p, y);
        while (y > p->max);
    } else {
        do
            y = mul_dec(p, y);
        while (y > p->max);
    }
    return y;
}

/* ---- the SipHash network in lanes (rf_perm_at_range) ---- */

/* The input-free first half of the first SipRound of round_sip, and the
 * initial v2, v3, for each round key (perm_internal.h). */
static void sip_prepare(const rf_perm *p, rfi_sip_pre *pre)
{
    static_assert(SIP_ROUNDS == RFI_SIP_ROUNDS, "one round count");
    for (unsigned r = 0; r < SIP_ROUNDS; r++) {
        uint64_t v0 = p->rk[r][0] ^ SIP_C0, v1 = p->rk[r][1] ^ SIP_C1;
        v0 += v1;
        v1 = rf_rotl64_(v1, 13);
        v1 ^= v0;
        v0 = rf_rotl64_(v0, 32);
        pre->s[r][0] = v0;
        pre->s[r][1] = v1;
        pre->s[r][2] = p->rk[r][0] ^ SIP_C2;
        pre->s[r][3] = p->rk[r][1] ^ SIP_C3;
    }
    pre->mask_hi = mask_bits(p->hi_bits);
    pre->mask_lo = mask_bits(p->lo_bits);
    pre->lo_bits = p->lo_bits;
}

/* round_sip(k, m) from the prepared state s of k: the rest of the first
 * SipRound, then as round_sip. */
static inline uint64_t round_sip_pre(const uint64_t s[4], uint64_t m)
{
    uint64_t v0 = s[0], v1 = s[1], v2 = s[2], v3 = s[3] ^ m;
    v2 += v3;
    v3 = rf_rotl64_(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rf_rotl64_(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rf_rotl64_(v1, 17);
    v1 ^= v2;
    v2 = rf_rotl64_(v2, 32);
    v0 ^= m;
    v2 ^= 0xff;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

/* Four independent networks in lock step: the CPU overlaps their dependency
 * chains (the kernel for CPUs without the x86 vector units). */
void rfi_sip_pass_portable(const rfi_sip_pre *pre, uint64_t *x)
{
    enum { L = RFI_SIP_PORTABLE_LANES };
    const unsigned v = pre->lo_bits;
    uint64_t a[L], b[L];
    for (int l = 0; l < L; l++) {
        a[l] = x[l] >> v;
        b[l] = x[l] & pre->mask_lo;
    }
    for (unsigned r = 0; r < RFI_SIP_ROUNDS; r += 2) {
        for (int l = 0; l < L; l++) {
            const uint64_t c = (a[l] ^ round_sip_pre(pre->s[r], b[l])) & pre->mask_hi;
            const uint64_t d = (b[l] ^ round_sip_pre(pre->s[r + 1], c)) & pre->mask_lo;
            a[l] = c;
            b[l] = d;
        }
    }
    for (int l = 0; l < L; l++)
        x[l] = (a[l] << v) | b[l];
}

/* Lane l holds x[l], the value being walked for output position pos[l]
 * (SIZE_MAX: idle).  After each pass, a lane whose value landed in [0, N)
 * delivers it and takes the next index; one that did not walks on in the
 * next pass.  When the indices run out and at most a quarter of the lanes
 * are still busy, those start again one at a time on the single-index path
 * (sip_enc), so a long walk at the end does not cost whole passes (and a
 * kernel that computed a wrong E fails the tests instead of hanging them: a
 * cycle of E through a wrong value need not come back into [0, N)). */
void rfi_sip_lanes(const rf_perm *p, uint64_t first, size_t count, uint64_t *out,
                   unsigned lanes, rfi_sip_pass_fn pass)
{
    assert(lanes > 0 && lanes <= RFI_SIP_MAX_LANES);
    rfi_sip_pre pre;
    uint64_t x[RFI_SIP_MAX_LANES];
    size_t pos[RFI_SIP_MAX_LANES];
    size_t next = 0, busy = 0;
    sip_prepare(p, &pre);
    for (unsigned l = 0; l < lanes; l++) {
        pos[l] = next < count ? next++ : SIZE_MAX;
        x[l] = pos[l] != SIZE_MAX ? first + pos[l] : 0;
        busy += pos[l] != SIZE_MAX;
    }
    while (next < count || busy > lanes / 4) {
        pass(&pre, x);
        for (unsigned l = 0; l < lanes; l++) {
            if (pos[l] == SIZE_MAX || x[l] > p->max)
                continue;
            out[pos[l]] = x[l];
            if (next < count) {
                pos[l] = next++;
                x[l] = first + pos[l];
            } else {
                pos[l] = SIZE_MAX;
                busy--;
            }
        }
    }
    for (unsigned l = 0; l < lanes; l++) {
        if (pos[l] == SIZE_MAX)
            continue;
        uint64_t y = first + pos[l];
        do
            y = sip_enc(p, y);
        while (y > p->max);
        out[pos[l]] = y;
    }
    sodium_memzero(&pre, sizeof pre);
}

/* The widest kernel this CPU runs (measured: docs/BENCHMARKS_PERM.md); a
 * range shorter than its lanes goes one index at a time.  The multiply
 * rounds are short enough that the plain loop was as fast as four lanes. */
void rfi_feistel_range(const rf_perm *p, uint64_t first, size_t count, uint64_t *out)
{
    if (p->mode == RF_PERM_SIPHASH) {
#ifdef RFI_HAVE_SIP_X86
        if (count >= RFI_SIP_AVX512_LANES && rfi_cpu_avx512f()) {
            rfi_sip_lanes(p, first, count, out, RFI_SIP_AVX512_LANES, rfi_sip_pass_avx512);
            return;
        }
        if (count >= RFI_SIP_AVX2_LANES && rfi_cpu_avx2()) {
            rfi_sip_lanes(p, first, count, out, RFI_SIP_AVX2_LANES, rfi_sip_pass_avx2);
            return;
        }
#endif
        if (count >= RFI_SIP_PORTABLE_LANES) {
            rfi_sip_lanes(p, first, count, out, RFI_SIP_PORTABLE_LANES,
                          rfi_sip_pass_portable);
            return;
        }
        for (size_t j = 0; j < count; j++)
            out[j] = rfi_feistel_at(p, first + j);
        return;
    }
    for (size_t j = 0; j < count; j++) {
        uint64_t x = first + j;
        do
            x = mul_enc(p, x);
        while (x > p->max);
        out[j] = x;
    }
}

/* K_r = BLAKE2b-128 keyed with key, of "riffle/perm/v1\0" || mode || le64(max)
 * || r (riffle_perm.h).  The multiply rounds need an odd multiplier. */
rf_status rfi_feistel_keys(rf_perm *p, const uint8_t key[RF_KEY_BYTES])
{
    static const char domain[] = "riffle/perm/v1"; /* sizeof includes the NUL */
    uint8_t msg[sizeof domain + 1 + 8 + 1];
    uint8_t out[16];
    memcpy(msg, domain, sizeof domain);
    msg[sizeof domain] = (uint8_t)p->mode;
    for (int i = 0; i < 8; i++)
        msg[sizeof domain + 1 + i] = (uint8_t)(p->max >> (8 * i));
    for (unsigned r = 0; r < p->rounds; r++) {
        msg[sizeof msg - 1] = (uint8_t)r;
        if (crypto_generichash(out, sizeof out, msg, sizeof msg, key, RF_KEY_BYTES) != 0)
            return RF_ECRYPTO;
        p->rk[r][0] = rf_load_le64_(out);
        p->rk[r][1] = rf_load_le64_(out + 8);
        if (p->mode == RF_PERM_MULTIPLY)
            p->rk[r][1] |= 1;
    }
    sodium_memzero(out, sizeof out);
    return RF_OK;
}

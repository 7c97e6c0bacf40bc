/* Internal: the Feistel network behind rf_perm's cipher modes (not installed). */
#ifndef RF_PERM_INTERNAL_H
#define RF_PERM_INTERNAL_H

#include "riffle_perm.h"

/* Derive the round keys of p (p->mode, p->max, p->rounds set) from key.
 * RF_OK or RF_ECRYPTO. */
rf_status rfi_feistel_keys(rf_perm *p, const uint8_t key[RF_KEY_BYTES]);

/* The network E (and its inverse) on [0, 2^b), b = hi_bits + lo_bits, with
 * cycle walking into [0, max]. */
uint64_t rfi_feistel_at(const rf_perm *p, uint64_t x);
uint64_t rfi_feistel_inverse(const rf_perm *p, uint64_t y);
/* out[j] = rfi_feistel_at(p, first + j), several lanes at a time (for the
 * SipHash mode, the fastest lane kernel this CPU runs: sip_*.c). */
void rfi_feistel_range(const rf_perm *p, uint64_t first, size_t count, uint64_t *out);

/* ---- lane-parallel SipHash-mode network (feistel.c, sip_*.c) ---- */

/* The network of a SipHash-mode p with everything that does not depend on the
 * data computed once: per round r, the SipHash state after the input-free
 * first half of the first SipRound (s[r][0], s[r][1]: v0 and v1) and the
 * initial v2 and v3 (s[r][2], s[r][3]), so that a kernel goes straight from
 * "v3 ^= m" to the second half of that SipRound.  Key material: wiped after
 * use. */
#define RFI_SIP_ROUNDS 8
typedef struct rfi_sip_pre {
    uint64_t s[RFI_SIP_ROUNDS][4];
    uint64_t mask_hi, mask_lo; /* 2^u - 1, 2^v - 1 */
    unsigned lo_bits;          /* v */
} rfi_sip_pre;

/* One pass of the network, x[l] = E(x[l]) for every lane l of a kernel's
 * fixed width (no cycle walking: x[l] < 2^b in, E(x[l]) < 2^b out). */
typedef void (*rfi_sip_pass_fn)(const rfi_sip_pre *pre, uint64_t *x);

/* rfi_feistel_range for a SipHash-mode p with a given kernel of `lanes`
 * lanes (lanes <= RFI_SIP_MAX_LANES): lanes whose value must walk again stay
 * in the kernel while the others take the next index, so the rare walks cost
 * one more lane-pass each instead of a serial network evaluation.  Exposed
 * so that tests/unit/test_perm.c can run every kernel the CPU has against
 * rf_perm_at. */
#define RFI_SIP_MAX_LANES 32
void rfi_sip_lanes(const rf_perm *p, uint64_t first, size_t count, uint64_t *out,
                   unsigned lanes, rfi_sip_pass_fn pass);

/* The portable kernel (4 lanes), always built. */
#define RFI_SIP_PORTABLE_LANES 4
void rfi_sip_pass_portable(const rfi_sip_pre *pre, uint64_t *x);

/* x86-64 kernels, compiled with per-function target attributes (no global
 * -m flags) and chosen at run time by rfi_sip_best, on what common/cpu.h says
 * this CPU runs. */
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define RFI_HAVE_SIP_X86 1
#define RFI_SIP_AVX2_LANES 8
#define RFI_SIP_AVX512_LANES 16
void rfi_sip_pass_avx2(const rfi_sip_pre *pre, uint64_t *x);
void rfi_sip_pass_avx512(const rfi_sip_pre *pre, uint64_t *x);
#endif

#endif

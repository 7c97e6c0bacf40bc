/* Internal: the CPU features the SIMD variants need, asked of the CPU once
 * per call site's dispatcher.  On other architectures every answer is 0 and
 * the portable reference runs. */
#ifndef RF_COMMON_CPU_H
#define RF_COMMON_CPU_H

int rfi_cpu_avx2(void);
int rfi_cpu_avx512f(void);
/* AVX-512 BW and VBMI2 (VPCOMPRESSB). */
int rfi_cpu_avx512_vbmi2(void);

#endif

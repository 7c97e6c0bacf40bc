/* CPU feature checks through the compiler's cpuid cache (__builtin_cpu_supports
 * reads what libgcc's constructor found; no cpuid per call). */
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
int rfi_cpu_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}

int rfi_cpu_avx512f(void)
{
    return __builtin_cpu_supports("avx512f");
}

int rfi_cpu_avx512_vbmi2(void)
{
    return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi2");
}
#else
int rfi_cpu_avx2(void)
{
    return 0;
}

int rfi_cpu_avx512f(void)
{
    return 0;
}

int rfi_cpu_avx512_vbmi2(void)
{
    return 0;
}
#endif

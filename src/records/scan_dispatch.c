/*
 * scan_dispatch.c -- the delimiter loops for this CPU (records_scan.h),
 * picked at run time: AVX-512 (VBMI2), then AVX2, then the SSE2 baseline or
 * the portable reference, as far as each was built.
 */
#include "common/cpu.h"
#include "csv_scan.h"
#include "records_scan.h"

rf_scan_fn_ rf_scan_best_(void)
{
#if defined(RF_HAVE_DELIMS_AVX2)
    if (rfi_cpu_avx512_vbmi2())
        return rf_scan_avx512_;
    if (rfi_cpu_avx2())
        return rf_scan_avx2_;
#endif
#if defined(RF_HAVE_SCAN_SSE2)
    return rf_scan_sse2_;
#else
    return rf_scan_ref_;
#endif
}

rf_count_fn_ rf_count_best_(void)
{
#if defined(RF_HAVE_DELIMS_AVX2)
    if (rfi_cpu_avx2())
        return rf_count_avx2_;
#endif
    return rf_count_ref_;
}

rf_nth_fn_ rf_nth_best_(void)
{
#if defined(RF_HAVE_DELIMS_AVX2)
    if (rfi_cpu_avx2())
        return rf_nth_avx2_;
#endif
    return rf_nth_ref_;
}

rf_csv_fn_ rf_csv_best_(void)
{
#if defined(RF_HAVE_CSV_AVX2)
    if (rfi_cpu_avx2())
        return rf_csv_scan_avx2_;
#endif
    return rf_csv_scan_ref_;
}

/* Internal: memory advised as transparent huge pages. */
#ifndef RF_COMMON_HUGE_H
#define RF_COMMON_HUGE_H

#include <stddef.h>

/* 2 MiB: the huge page of x86-64 and of arm64 with 4 KiB pages. */
#define RFI_HUGE_PAGE ((size_t)2 << 20)

/* A mapping made by rfi_huge_map. */
struct rfi_huge {
    void *addr;
    size_t len;
};

/* `bytes` of zeroed memory at a 2 MiB boundary, advised MADV_HUGEPAGE
 * (advice only: where the kernel gives no huge pages, these are ordinary
 * ones).  For large buffers read in random order or touched once: one page
 * fault and one TLB entry per 2 MiB rather than per 4 KiB.  Returns it and
 * fills *m, or NULL (*m empty) when the mapping fails. */
void *rfi_huge_map(struct rfi_huge *m, size_t bytes);

/* The mapping of *m removed (nothing for an empty one); *m emptied. */
void rfi_huge_unmap(struct rfi_huge *m);

#endif

/* Memory advised as transparent huge pages (huge.h). */
#include <stdint.h>
#include <sys/mman.h>

#include "huge.h"

void *rfi_huge_map(struct rfi_huge *m, size_t bytes)
{
    m->addr = NULL;
    m->len = 0;
    if (bytes == 0 || bytes > SIZE_MAX - RFI_HUGE_PAGE)
        return NULL;
    /* one huge page more than asked, so that an aligned start fits */
    void *p = mmap(NULL, bytes + RFI_HUGE_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    m->addr = p;
    m->len = bytes + RFI_HUGE_PAGE;
    const uintptr_t a = ((uintptr_t)p + RFI_HUGE_PAGE - 1) & ~(uintptr_t)(RFI_HUGE_PAGE - 1);
#ifdef MADV_HUGEPAGE
    (void)madvise((void *)a, bytes, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
    return (void *)a;
}

void rfi_huge_unmap(struct rfi_huge *m)
{
    if (m->addr)
        (void)munmap(m->addr, m->len);
    m->addr = NULL;
    m->len = 0;
}

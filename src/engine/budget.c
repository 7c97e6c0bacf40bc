/* budget.c -- the default memory budget: half of the memory this process
 * may really use, which in a container, a Kubernetes pod or a Slurm job is
 * its cgroup's limit, not the machine's (the JVM's container awareness is
 * the precedent), and under `ulimit -v` or `-d` the resource limit; and
 * budgets written as sizes or percentages of that memory. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine_internal.h"

static uint64_t smaller(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint64_t physical_memory(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0 || (uint64_t)pages > UINT64_MAX / (uint64_t)page)
        return 0;
    return (uint64_t)pages * (uint64_t)page;
}

/* The number in the file (cgroup v2's "max" and anything unreadable:
 * UINT64_MAX, no limit). */
static uint64_t read_limit(const char *path)
{
    FILE *f = fopen(path, "re");
    unsigned long long v = 0;
    const int got = f ? fscanf(f, "%llu", &v) : 0;
    if (f)
        fclose(f);
    return got == 1 ? (uint64_t)v : UINT64_MAX;
}

/* The smallest limit named `file` in the cgroup directory `root``dir` and
 * its parents up to root: a parent's limit binds its children too. */
static uint64_t cgroup_limit(const char *root, const char *dir, const char *file)
{
    char path[4096];
    char cur[3072];
    snprintf(cur, sizeof cur, "%s", dir);
    uint64_t limit = UINT64_MAX;
    for (;;) {
        const size_t len = strlen(cur);
        if (len > 0 && cur[len - 1] == '/')
            cur[len - 1] = '\0';
        snprintf(path, sizeof path, "%s%s/%s", root, cur, file);
        limit = smaller(limit, read_limit(path));
        char *slash = strrchr(cur, '/');
        if (!slash || cur[0] == '\0')
            return limit;
        *slash = '\0';
    }
}

/* The memory limit of this process's cgroup, v2 or v1 (/proc/self/cgroup
 * names its directory under each hierarchy), or UINT64_MAX. */
static uint64_t cgroup_memory(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return UINT64_MAX;
    uint64_t limit = UINT64_MAX;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *controllers = c1 + 1, *dir = c2 + 1;
        if (strcmp(line, "0") == 0 && *controllers == '\0') { /* v2 (or hybrid) */
            limit = smaller(limit, cgroup_limit("/sys/fs/cgroup", dir, "memory.max"));
            limit = smaller(limit, cgroup_limit("/sys/fs/cgroup/unified", dir, "memory.max"));
        } else if (strstr(controllers, "memory")) { /* v1 */
            limit = smaller(limit, cgroup_limit("/sys/fs/cgroup/memory", dir,
                                                "memory.limit_in_bytes"));
        }
    }
    fclose(f);
    return limit;
}

static uint64_t resource_limit(int resource)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    return (uint64_t)rl.rlim_cur;
}

uint64_t rf_engine_usable_memory(void)
{
    const uint64_t phys = physical_memory();
    uint64_t m = smaller(phys ? phys : UINT64_MAX, cgroup_memory());
    m = smaller(m, resource_limit(RLIMIT_AS));
    m = smaller(m, resource_limit(RLIMIT_DATA));
    return m == UINT64_MAX ? 0 : m;
}

uint64_t rf_engine_default_memory(void)
{
    const uint64_t m = rf_engine_usable_memory();
    if (m == 0)
        return (uint64_t)1 << 30;
    return m / 2 > 0 ? m / 2 : 1;
}

/* N% of the usable memory, 1 <= N <= 100, without overflow: mem / 100 * n
 * plus the remainder's share. */
static rf_status memory_percent(uint64_t n, uint64_t *bytes)
{
    if (n == 0 || n > 100)
        return RF_EINVAL;
    const uint64_t mem = rf_engine_usable_memory();
    if (!mem)
        return RF_ERANGE;
    const uint64_t v = mem / 100 * n + mem % 100 * n / 100;
    if (!v)
        return RF_EINVAL;
    *bytes = v;
    return RF_OK;
}

/* Unlike sort -S, no suffix means bytes: a budget is a size, and a bare
 * number that meant KiB would surprise everyone else. */
rf_status rf_engine_memory_parse(const char *text, uint64_t *bytes)
{
    if (!text || !bytes)
        return RF_EINVAL;
    const char *p = text;
    uint64_t n = 0;
    if (*p < '0' || *p > '9')
        return RF_EINVAL;
    for (; *p >= '0' && *p <= '9'; p++) {
        const unsigned d = (unsigned)(*p - '0');
        if (n > (UINT64_MAX - d) / 10)
            return RF_EINVAL;
        n = n * 10 + d;
    }
    if (*p == '%')
        return p[1] ? RF_EINVAL : memory_percent(n, bytes);
    /* The suffix in either case; a space would fold to NUL, which strchr
     * finds at the end of units (it once made "1 " a petabyte). */
    static const char units[] = "KMGT";
    const char c = (char)(*p & ~0x20);
    const char *u = c ? strchr(units, c) : NULL;
    const unsigned shift = u ? 10 * (unsigned)(u - units + 1) : 0;
    p += u != NULL;
    p += *p == 'B' || *p == 'b';
    if (*p || n == 0 || n > UINT64_MAX >> shift)
        return RF_EINVAL;
    *bytes = n << shift;
    return RF_OK;
}

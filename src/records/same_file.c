/* same_file.c -- output names compared by the file they mean, not by their
 * spelling: "a.txt", "./a.txt", "d/../a.txt", an absolute path, a hard link
 * and a symbolic link can all name one file, and two parts of a split
 * written to one file would lose one of them.  The records layer,
 * include/riffle_io.h ("Atomic output files"). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "riffle_io.h"

/* Symbolic links followed at most, as the kernel's own limit. */
#define MAX_LINKS 40

struct ident {
    dev_t dev;
    ino_t ino;
    char *last; /* NULL: (dev, ino) is the file; else the directory's, and this name in it */
};

/* The target of the dangling link chain at `path`, or a copy of path when
 * it is no link.  NULL when out of memory. */
static char *final_target(const char *path)
{
    char *cur = strdup(path);
    for (int i = 0; cur && i < MAX_LINKS; i++) {
        char buf[PATH_MAX];
        const ssize_t n = readlink(cur, buf, sizeof buf - 1);
        if (n < 0)
            break;
        buf[n] = '\0';
        char *next;
        const char *slash = strrchr(cur, '/');
        if (buf[0] == '/' || !slash) {
            next = strdup(buf);
        } else { /* relative to the link's directory */
            const size_t dir = (size_t)(slash - cur) + 1;
            next = malloc(dir + (size_t)n + 1);
            if (next) {
                memcpy(next, cur, dir);
                memcpy(next + dir, buf, (size_t)n + 1);
            }
        }
        free(cur);
        cur = next;
    }
    return cur;
}

/* 0, or -1 when the name cannot be judged (its directory is missing: the
 * open will say so). */
static int identify(const char *name, struct ident *id)
{
    struct stat st;
    id->last = NULL;
    if (stat(name, &st) == 0) {
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return 0;
    }
    char *path = final_target(name);
    if (!path)
        return -1;
    char *slash = strrchr(path, '/');
    const char *dir = slash ? (slash == path ? "/" : path) : ".";
    const char *last = slash ? slash + 1 : path;
    if (slash && slash != path)
        *slash = '\0';
    const int ok = stat(dir, &st) == 0 && (id->last = strdup(last)) != NULL;
    free(path);
    if (!ok)
        return -1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return 0;
}

static int same(const struct ident *x, const struct ident *y)
{
    if (x->dev != y->dev || x->ino != y->ino || !x->last != !y->last)
        return 0;
    return !x->last || strcmp(x->last, y->last) == 0;
}

RF_API int rf_same_file_pair(const char *const *names, size_t n, size_t *a, size_t *b)
{
    struct ident *ids = calloc(n ? n : 1, sizeof *ids);
    int *known = calloc(n ? n : 1, sizeof *known);
    int found = ids && known ? 0 : -1;
    for (size_t i = 0; found == 0 && i < n; i++) {
        known[i] = identify(names[i], &ids[i]) == 0;
        for (size_t j = 0; known[i] && j < i && !found; j++) {
            if (known[j] && same(&ids[j], &ids[i])) {
                *a = j;
                *b = i;
                found = 1;
            }
        }
    }
    for (size_t i = 0; ids && i < n; i++)
        free(ids[i].last);
    free(ids);
    free(known);
    return found;
}

/* same_file.h -- whether two output names are one file. */
#ifndef RIFFLE_SAME_FILE_H
#define RIFFLE_SAME_FILE_H

#include <stddef.h>

/* Among names[0..n), the first pair that would be the same file once
 * created: an existing name by device and inode (symbolic links followed),
 * a name still to be created by its directory's device and inode and its
 * last component (a dangling link by its target's).  Returns 1 and sets
 * *a < *b, or 0 when every name is a file of its own. */
int same_file_pair(char *const *names, size_t n, size_t *a, size_t *b);

#endif

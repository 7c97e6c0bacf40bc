/* temp_dir.c -- the temporary directory of every riffle program
 * (riffle_io.h, "Temporary files"): -T, else $TMPDIR, else /tmp, as GNU
 * sort and mktemp choose theirs. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "riffle_io.h"

const char *rf_temp_dir(const char *dir)
{
    if (dir)
        return dir;
    const char *env = getenv("TMPDIR");
    return env && *env ? env : "/tmp";
}

int rf_temp_dir_usable(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno;
    if (!S_ISDIR(st.st_mode))
        return ENOTDIR;
    return access(dir, W_OK | X_OK) != 0 ? errno : 0;
}

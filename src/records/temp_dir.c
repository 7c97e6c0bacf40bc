/* temp_dir.c -- the temporary directory of every riffle program
 * (riffle_io.h, "Temporary files"): -T, else $TMPDIR, else /tmp, as GNU
 * sort and mktemp choose theirs. */
#include <stdlib.h>

#include "riffle_io.h"

const char *rf_temp_dir(const char *dir)
{
    if (dir)
        return dir;
    const char *env = getenv("TMPDIR");
    return env && *env ? env : "/tmp";
}

/* stamp.c -- what an input file was when it was opened (riffle_io.h,
 * "Inputs that change while they are read"). */
#include <errno.h>
#include <sys/stat.h>

#include "riffle_io.h"

static void stamp_of(const struct stat *st, rf_file_stamp *s)
{
    *s = (rf_file_stamp){0};
    s->regular = S_ISREG(st->st_mode);
    s->dev = (uint64_t)st->st_dev;
    s->ino = (uint64_t)st->st_ino;
    s->size = (int64_t)st->st_size;
    s->mtime_sec = (int64_t)st->st_mtim.tv_sec;
    s->mtime_nsec = st->st_mtim.tv_nsec;
    s->ctime_sec = (int64_t)st->st_ctim.tv_sec;
    s->ctime_nsec = st->st_ctim.tv_nsec;
}

RF_API int rf_file_stamp_fd(int fd, rf_file_stamp *s)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    stamp_of(&st, s);
    return 0;
}

RF_API int rf_file_stamp_path(const char *path, rf_file_stamp *s)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    stamp_of(&st, s);
    return 0;
}

RF_API int rf_file_changed(const rf_file_stamp *then, const rf_file_stamp *now)
{
    if (!then->regular || !now->regular || then->dev != now->dev || then->ino != now->ino)
        return 0;
    return then->size != now->size || then->mtime_sec != now->mtime_sec ||
           then->mtime_nsec != now->mtime_nsec || then->ctime_sec != now->ctime_sec ||
           then->ctime_nsec != now->ctime_nsec;
}

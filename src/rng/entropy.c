/* OS entropy: getrandom(2), completed and retried, never silently ignored.
 * libsodium's randombytes_buf() would abort on failure, and a library must
 * report errors to its caller rather than end the process, so this is our own
 * small loop. */
#include "riffle.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

/* /dev/urandom for kernels older than 3.17 (getrandom answers ENOSYS). */
static rf_status urandom_fill(unsigned char *p, size_t len)
{
    int fd;
    do
        fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return RF_EENTROPY;
    while (len > 0) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            close(fd);
            return RF_EENTROPY;
        }
        p += r;
        len -= (size_t)r;
    }
    close(fd);
    return RF_OK;
}

rf_status rf_entropy(void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        /* getrandom returns at most 32 MiB per call; loop for the rest. */
        ssize_t r = getrandom(p, len, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOSYS)
                return urandom_fill(p, len);
            return RF_EENTROPY;
        }
        p += r;
        len -= (size_t)r;
    }
    return RF_OK;
}

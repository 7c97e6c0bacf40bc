/* OS entropy: getrandom(2), completed and retried, never silently ignored.
 * libsodium's randombytes_buf() would abort on failure, and a library must
 * report errors to its caller rather than end the process, so this is our own
 * small loop. */
#include "riffle.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* /dev/urandom, when getrandom(2) cannot answer: kernels older than 3.17
 * (ENOSYS), a sandbox that forbids it (EPERM), EAGAIN that does not pass. */
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

/* getrandom(2) without GRND_NONBLOCK waits until the kernel's pool is
 * initialised, so EAGAIN "should not" come; it does from a sandbox or a
 * seccomp filter that answers so, or an injected fault.  Retried this many
 * times, RETRY_NS apart (about a second in all), before /dev/urandom. */
#define EAGAIN_TRIES 100
#define RETRY_NS 10000000L

rf_status rf_entropy(void *buf, size_t len)
{
    unsigned char *p = buf;
    int tries = 0;
    while (len > 0) {
        /* getrandom returns at most 32 MiB per call; loop for the rest. */
        ssize_t r = getrandom(p, len, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN && ++tries < EAGAIN_TRIES) {
                const struct timespec pause = {0, RETRY_NS};
                nanosleep(&pause, NULL);
                continue;
            }
            if (errno == EFAULT || errno == EINVAL)
                return RF_EENTROPY; /* our bug, not the system's */
            /* ENOSYS (kernels older than 3.17), EPERM (a seccomp filter),
             * EAGAIN that lasted: the device may still answer. */
            return urandom_fill(p, len);
        }
        p += r;
        len -= (size_t)r;
    }
    return RF_OK;
}

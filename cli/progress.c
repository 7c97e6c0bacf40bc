/*
 * progress.c -- the progress line (progress.h).  Written with write(2) in one
 * call per line, so it never interleaves with stdio buffering of stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "progress.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static uint64_t initial_delay_ns(void)
{
    const char *s = getenv("RIFFLE_PROGRESS_DELAY_MS");
    uint64_t ms;
    int over;
    if (s && cli_parse_u64(s, &ms, &over) == 0 && !over && ms < UINT64_MAX / NS_PER_MS)
        return ms * NS_PER_MS;
    return 1000 * NS_PER_MS;
}

void progress_init(struct progress *p, int mode)
{
    memset(p, 0, sizeof *p);
    p->phase = "work"; /* until the first progress_phase */
    p->tty = isatty(STDERR_FILENO);
    p->on = mode == PROGRESS_FORCED || (mode == PROGRESS_AUTO && p->tty);
    if (!p->on)
        return;
    p->start_ns = p->phase_ns = now_ns();
    p->delay_ns = initial_delay_ns();
    /* A terminal line is cheap to rewrite; a log gets a line a second. */
    p->every_ns = p->tty ? NS_PER_S / 4 : NS_PER_S;
}

void progress_phase(struct progress *p, const char *phase, uint64_t total_bytes)
{
    p->phase = phase;
    p->total = total_bytes;
    p->done = 0;
    if (!p->on)
        return;
    p->phase_ns = now_ns();
    p->last_ns = 0; /* the new phase may show at once */
}

/* "1.2 GiB": one decimal from KiB up. */
static void human(char *buf, size_t size, double v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%.0f %s", v, units[u]);
    else
        snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* "9s", "4m05s", "2h07m". */
static void duration(char *buf, size_t size, double s)
{
    const unsigned long long t = s < 1e9 ? (unsigned long long)(s + 0.5) : 999999999ull;
    if (t < 60)
        snprintf(buf, size, "%llus", t);
    else if (t < 3600)
        snprintf(buf, size, "%llum%02llus", t / 60, t % 60);
    else
        snprintf(buf, size, "%lluh%02llum", t / 3600, t / 60 % 60);
}

static void put(const char *s, size_t n)
{
    while (n > 0) {
        const ssize_t w = write(STDERR_FILENO, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* progress is best effort: never an error of the run */
        s += w;
        n -= (size_t)w;
    }
}

static void show(struct progress *p, uint64_t now)
{
    const double secs = (double)(now - p->phase_ns) / NS_PER_S;
    const double rate = secs > 0 ? (double)p->done / secs : 0;
    char done[32], total[32], speed[32], eta[32], line[256];
    human(done, sizeof done, (double)p->done);
    human(speed, sizeof speed, rate);
    int n;
    if (p->total) {
        human(total, sizeof total, (double)p->total);
        const uint64_t left = p->total > p->done ? p->total - p->done : 0;
        if (rate > 0)
            duration(eta, sizeof eta, (double)left / rate);
        else
            snprintf(eta, sizeof eta, "?");
        const double pct = p->done >= p->total ? 100.0 : 100.0 * (double)p->done / (double)p->total;
        n = snprintf(line, sizeof line, "%s%s: %-7s  %s / %s  %.0f%%  %s/s  ETA %s%s",
                     p->tty ? "\r" : "", cli_prog, p->phase, done, total, pct, speed, eta,
                     p->tty ? "\033[K" : "\n");
    } else {
        n = snprintf(line, sizeof line, "%s%s: %-7s  %s  %s/s%s", p->tty ? "\r" : "",
                     cli_prog, p->phase, done, speed, p->tty ? "\033[K" : "\n");
    }
    if (n > 0)
        put(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    if (p->tty) {
        p->shown = 1;
        cleanup_progress_line(1);
    }
    p->last_ns = now;
}

void progress_update(struct progress *p, uint64_t done_bytes)
{
    p->done = done_bytes; /* kept even when off: callers may add to it */
    if (!p->on)
        return;
    const uint64_t now = now_ns();
    if (now - p->start_ns < p->delay_ns)
        return;
    if (p->last_ns && now - p->last_ns < p->every_ns)
        return;
    show(p, now);
}

void progress_done(struct progress *p)
{
    if (!p->on || !p->shown)
        return;
    cleanup_progress_line(0);
    put("\r\033[K", 4);
    p->shown = 0;
}

/* sink.c -- the file-descriptor sink (riffle_engine.h). */
#include "engine_internal.h"

static int fd_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    rf_fd_sink *s = ctx;
    (void)records;
    return rf_writer_put(&s->w, header, len);
}

static rf_writer *fd_writer(void *ctx)
{
    return &((rf_fd_sink *)ctx)->w;
}

static uint64_t fd_room(void *ctx)
{
    (void)ctx;
    return UINT64_MAX;
}

static int fd_advance(void *ctx, uint64_t records)
{
    (void)records;
    return ((rf_fd_sink *)ctx)->w.err;
}

void rf_fd_sink_init(rf_fd_sink *s, int fd, void *buf, size_t cap)
{
    rf_writer_init(&s->w, fd, buf, cap);
    s->sink = (rf_engine_sink){fd_begin, fd_writer, fd_room, fd_advance, s};
}

int rf_fd_sink_flush(rf_fd_sink *s)
{
    return rf_writer_flush(&s->w);
}

/* options.c -- the engine's options and inputs (riffle_engine.h). */
#include <string.h>

#include "engine_internal.h"

void rf_engine_options_init(rf_engine_options *o)
{
    memset(o, 0, sizeof *o);
    o->rng = RF_RNG_CHACHA20;
    o->delim = '\n';
    o->count = RF_ENGINE_ALL;
}

rf_engine_input rf_engine_input_path(const char *path)
{
    return (rf_engine_input){.name = path, .fd = -1};
}

rf_engine_input rf_engine_input_fd(int fd, const char *name)
{
    return (rf_engine_input){.name = name, .fd = fd};
}

rf_engine_input rf_engine_input_bytes(const void *data, size_t size, const char *name)
{
    /* NULL with size 0 is an empty input, not a path to open */
    return (rf_engine_input){.name = name, .fd = -1, .data = data ? data : "", .size = size};
}

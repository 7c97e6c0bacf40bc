/* Shuffle the lines of a file into another file, larger than memory or not,
 * with the library's engine (riffle_engine.h):
 *
 *     shuffle_file SEED INPUT OUTPUT MEMORY_BYTES
 *
 * writes exactly the bytes of
 *
 *     riffle --seed=SEED --memory=MEMORY_BYTES INPUT -o OUTPUT
 *
 * because the riffle program is a client of the same engine: the output is a
 * function of the key, the input and the options that shape it (delimiter,
 * header, count), never of the memory budget or the thread count.  INPUT may
 * be "-" for the standard input.  OUTPUT is replaced atomically: a reader never
 * sees a half-written file, and after an error it is left as it was. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <riffle.h>
#include <riffle_engine.h>
#include <riffle_io.h>

/* The key of --seed=SEED, by the riffle program's rule: a SEED of decimal
 * digits only whose value fits in 64 bits is the integer seed
 * (rf_seed_u64), so "007" is 7; anything else ("x7", "-1", "", a number
 * too large) is a string seed (rf_seed_string) over its bytes. */
static rf_status seed_key(uint8_t key[RF_KEY_BYTES], const char *seed)
{
    uint64_t v = 0;
    const char *p = seed;
    for (; *p >= '0' && *p <= '9'; p++) {
        const unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            break; /* too large: a string seed */
        v = v * 10 + d;
    }
    if (p != seed && *p == '\0')
        return rf_seed_u64(key, v);
    return rf_seed_string(key, seed, strlen(seed));
}

/* MEMORY_BYTES: a positive decimal number of bytes. */
static int parse_bytes(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        const unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return x ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: shuffle_file SEED INPUT OUTPUT MEMORY_BYTES\n");
        return 2;
    }
    const char *seed = argv[1], *input = argv[2], *output = argv[3];

    /* The options: everything at its default (lines, no header, every
     * record, one thread per CPU, $TMPDIR or /tmp for the temporary
     * files) but the key and the memory budget. */
    rf_engine_options o;
    rf_engine_options_init(&o);
    if (parse_bytes(argv[4], &o.memory) != 0) {
        fprintf(stderr, "shuffle_file: invalid memory size '%s'\n", argv[4]);
        return 2;
    }
    const rf_status ks = seed_key(o.key, seed);
    if (ks != RF_OK) {
        fprintf(stderr, "shuffle_file: cannot make the key: %s\n", rf_strerror(ks));
        return 1;
    }

    /* The input: a file to open, or the standard input, read to its end. */
    const rf_engine_input in = strcmp(input, "-") == 0 ? rf_engine_input_fd(STDIN_FILENO, "-")
                                                       : rf_engine_input_path(input);

    /* The output: a temporary file next to OUTPUT, renamed over it only once
     * everything is written. */
    rf_atomic_file out;
    int e = rf_atomic_open(&out, output);
    if (e != 0) {
        fprintf(stderr, "shuffle_file: %s: %s\n", output, strerror(e));
        return 1;
    }

    /* The sink: every record written to the file through one buffer. */
    static unsigned char buf[1 << 20];
    rf_fd_sink sink;
    rf_fd_sink_init(&sink, out.fd, buf, sizeof buf);

    /* The shuffle.  On failure, the error says what failed; temporary files
     * are already gone; the partial output is discarded. */
    rf_engine_error err;
    const rf_status st = rf_engine_shuffle(&o, &in, 1, &sink.sink, &err);
    if (st != RF_OK) {
        char msg[4200];
        rf_engine_error_message(&err, msg, sizeof msg);
        fprintf(stderr, "shuffle_file: %s\n", msg);
        rf_atomic_abort(&out);
        return 1;
    }

    /* The engine never flushes: write out the buffer, then put the file in
     * place (fsync and rename). */
    e = rf_fd_sink_flush(&sink);
    if (e != 0) {
        fprintf(stderr, "shuffle_file: %s: %s\n", output, strerror(e));
        rf_atomic_abort(&out);
        return 1;
    }
    e = rf_atomic_commit(&out);
    if (e != 0) {
        fprintf(stderr, "shuffle_file: %s: %s\n", output, strerror(e));
        return 1;
    }
    return 0;
}

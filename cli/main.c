/*
 * main.c -- the riffle program's dispatcher.  Invoked as `shuf` (a symlink),
 * it is exactly GNU shuf's interface; as `riffle`, a first argument naming a
 * subcommand selects it, and anything else is the shuf-compatible mode with
 * riffle's extensions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "cli.h"
#include "commands.h"
#include "riffle.h"

struct subcommand {
    const char *name;
    cli_command_fn *run;
    const char *summary; /* what it does, in one line */
};

/* Every subcommand: the one list of them. */
static const struct subcommand subcommands[] = {
    {"deal", cmd_deal, "deal a freshly shuffled deck of cards to hands"},
    {"sample", cmd_sample, "choose K lines uniformly at random, in one pass"},
    {"perm", cmd_perm, "evaluate a keyed random permutation of 0 .. N-1"},
    {"rank", cmd_rank, "print the lexicographic rank of a permutation"},
    {"unrank", cmd_unrank, "print the permutation of a lexicographic rank"},
    {"audit", cmd_audit, "measure how fair a shuffler is"},
    {"scatter", cmd_scatter, "cut a shuffle into tasks: count, then scatter a part"},
    {"gather", cmd_gather, "write one task's share of a scattered shuffle"},
    {"rng", cmd_rng, "write a generator's raw or scaled stream, for test batteries"},
    {"verify", cmd_verify, "check a provably fair deal against its commitment"},
};

static char *base_name(char *path)
{
    char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static const struct subcommand *find_subcommand(const char *name)
{
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (strcmp(name, subcommands[i].name) == 0)
            return &subcommands[i];
    return NULL;
}

/* Run `sub` on the arguments after its name, with argv[0] "riffle NAME" so
 * that getopt's own messages name the subcommand. */
static int run_subcommand(const struct subcommand *sub, int argc, char **argv)
{
    static char prog[64];
    snprintf(prog, sizeof prog, "%s %s", cli_prog, sub->name);
    argv[0] = prog;
    return sub->run(argc, argv);
}

/* libsodium's randomness (which its start-up, sodium_init, draws on) taken
 * from rf_entropy: libsodium's own retries getrandom(2) forever while it
 * answers EAGAIN (a sandbox, a seccomp filter), and aborts on other errors;
 * rf_entropy retries for a while, then reads /dev/urandom, and fails with an
 * error, which ends the program with a message.  Process-wide state, so the
 * program's to set, not the library's. */
static const char *os_random_name(void)
{
    return "riffle-os-entropy";
}

static void os_random_buf(void *const buf, const size_t size)
{
    const rf_status st = rf_entropy(buf, size);
    if (st != RF_OK) {
        cli_error("%s", rf_strerror(st));
        exit(CLI_FAIL);
    }
}

static uint32_t os_random_u32(void)
{
    uint32_t v;
    os_random_buf(&v, sizeof v);
    return v;
}

static randombytes_implementation os_random = {
    .implementation_name = os_random_name,
    .random = os_random_u32,
    .buf = os_random_buf,
};

/* A standard descriptor that is closed stays unusable: an O_PATH descriptor
 * on /dev/null takes its number (reads and writes on it fail with EBADF,
 * as on a closed one), so no file riffle opens later -- the -o temporary
 * above all -- can become standard input or output by accident. */
static void hold_standard_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        const int held = open("/dev/null", O_PATH | O_CLOEXEC);
        if (held >= 0 && held != fd)
            close(held);
    }
}

int main(int argc, char **argv)
{
    if (argc < 1 || !argv[0])
        return CLI_FAIL;
    hold_standard_fds();
    if (randombytes_set_implementation(&os_random) != 0)
        return CLI_FAIL;
    /* Messages name the program by its base name, whatever path ran it. */
    argv[0] = base_name(argv[0]);
    if (strcmp(argv[0], "shuf") == 0) {
        cli_prog = "shuf";
        return cli_shuf_main(argc, argv, 1);
    }
    const struct subcommand *sub = argc > 1 ? find_subcommand(argv[1]) : NULL;
    if (sub)
        return run_subcommand(sub, argc - 1, argv + 1);
    return cli_shuf_main(argc, argv, 0);
}

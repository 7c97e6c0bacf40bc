/*
 * main.c -- the riffle program's dispatcher.  Invoked as `shuf` (a symlink),
 * it is exactly GNU shuf's interface; as `riffle`, a first argument naming a
 * subcommand selects it, and anything else is the shuf-compatible mode with
 * riffle's extensions.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

const char *cli_prog = "riffle";

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

int main(int argc, char **argv)
{
    if (argc < 1 || !argv[0])
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

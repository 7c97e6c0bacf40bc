/*
 * main.c -- the riffle program's dispatcher.  Invoked as `shuf` (a symlink),
 * it is exactly GNU shuf's interface; as `riffle`, a first argument naming a
 * subcommand selects it, and anything else is the shuf-compatible mode with
 * riffle's extensions.
 */
#include <string.h>

#include "cli.h"
#include "cmd_audit.h"
#include "cmd_numbers.h"

const char *cli_prog = "riffle";

struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
};

static char *base_name(char *path)
{
    char *s = strrchr(path, '/');
    return s ? s + 1 : path;
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
    if (argc > 1 && strcmp(argv[1], "deal") == 0) {
        /* getopt's own messages then read "riffle deal: ...". */
        static char deal_name[] = "riffle deal";
        argv[1] = deal_name;
        return cli_deal_main(argc - 1, argv + 1);
    }
    const struct subcommand subs[] = {
        {"audit", cmd_audit},   {"perm", cmd_perm},     {"rank", cmd_rank},
        {"unrank", cmd_unrank}, {"sample", cmd_sample},
    };
    for (size_t i = 0; argc > 1 && i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(argv[1], subs[i].name) == 0)
            return subs[i].run(argc - 1, argv + 1);
    return cli_shuf_main(argc, argv, 0);
}

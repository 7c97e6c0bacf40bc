/*
 * gen_completions.c -- writes riffle's shell completion scripts (bash, zsh,
 * fish) from the getopt tables the commands parse with (cli_options.h), so
 * that the scripts offer exactly the options the program accepts.  Built and
 * run by the Makefile; not installed.
 *
 * Usage: gen_completions bash|zsh|fish|list
 *   list prints "COMMAND --OPTION" for every long option of every table that
 *   the scripts complete ("-" names the shuffle, riffle without a command),
 *   for the tests.
 *
 * The tables of the `shuf` name are left out: the scripts complete the
 * `riffle` name only (coreutils' shuf keeps its own completion), and riffle's
 * shuffle table starts with every shuf option.
 */
#include <stdio.h>
#include <string.h>

#include "cli_options.h"

/* The tables the `riffle` name parses with. */
static int completed(const struct cli_options *t)
{
    return !t->shuf_name;
}

static int is_command(const struct cli_options *t)
{
    return completed(t) && t->command[0] != '\0';
}

/* Names go into shell words unquoted: letters, digits and '-' only. */
static int plain_word(const char *s)
{
    return s[0] != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyz"
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == strlen(s);
}

static int check_tables(void)
{
    for (size_t i = 0; cli_all_options[i]; i++) {
        const struct cli_options *t = cli_all_options[i];
        if (t->command[0] != '\0' && !plain_word(t->command)) {
            fprintf(stderr, "gen_completions: command '%s': not a plain word\n", t->command);
            return 0;
        }
        for (const struct option *o = t->longopts; o->name; o++)
            if (!plain_word(o->name)) {
                fprintf(stderr, "gen_completions: option '%s': not a plain word\n", o->name);
                return 0;
            }
    }
    return 1;
}

/* The table of the shuffle, riffle's default command. */
static const struct cli_options *shuffle_table(void)
{
    for (size_t i = 0; cli_all_options[i]; i++)
        if (completed(cli_all_options[i]) && cli_all_options[i]->command[0] == '\0')
            return cli_all_options[i];
    return NULL;
}

/* The words "--NAME" of a table, separated by `sep`. */
static void print_longopts(const struct cli_options *t, const char *sep)
{
    for (const struct option *o = t->longopts; o->name; o++)
        printf("%s--%s", o == t->longopts ? "" : sep, o->name);
}

static void print_commands(const char *sep)
{
    int first = 1;
    for (size_t i = 0; cli_all_options[i]; i++)
        if (is_command(cli_all_options[i])) {
            printf("%s%s", first ? "" : sep, cli_all_options[i]->command);
            first = 0;
        }
}

static void emit_list(void)
{
    for (size_t i = 0; cli_all_options[i]; i++) {
        const struct cli_options *t = cli_all_options[i];
        if (!completed(t))
            continue;
        for (const struct option *o = t->longopts; o->name; o++)
            printf("%s --%s\n", t->command[0] ? t->command : "-", o->name);
    }
}

/* bash: the command is the first word when it names one; a word starting
 * with '-' (before any "--") completes the command's long options, any other
 * word a file name, and the first word a command name too. */
static void emit_bash(void)
{
    printf("# bash completion for riffle -- generated from riffle's option tables\n"
           "# by gen_completions; do not edit.\n"
           "_riffle()\n{\n"
           "    local cur=${COMP_WORDS[COMP_CWORD]} cmd= opts i\n"
           "    if ((COMP_CWORD > 1)); then cmd=${COMP_WORDS[1]}; fi\n"
           "    case $cmd in\n");
    for (size_t i = 0; cli_all_options[i]; i++) {
        const struct cli_options *t = cli_all_options[i];
        if (!is_command(t))
            continue;
        printf("    %s) opts='", t->command);
        print_longopts(t, " ");
        printf("' ;;\n");
    }
    printf("    *) opts='");
    print_longopts(shuffle_table(), " ");
    printf("' ;;\n    esac\n"
           "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
           "        [[ ${COMP_WORDS[i]} == -- ]] && opts=\n"
           "    done\n"
           "    COMPREPLY=()\n"
           "    # --opt=VALUE as one word (when '=' is not in COMP_WORDBREAKS):\n"
           "    # file names for the value, each after its --opt=\n"
           "    if [[ $cur == --*=* && -n $opts ]]; then\n"
           "        mapfile -t COMPREPLY < <(compgen -P \"${cur%%%%=*}=\" -f -- \"${cur#*=}\")\n"
           "        return 0\n"
           "    fi\n"
           "    if [[ $cur == -* && -n $opts ]]; then\n"
           "        mapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
           "        return 0\n"
           "    fi\n"
           "    if ((COMP_CWORD == 1)); then\n"
           "        mapfile -t COMPREPLY < <(compgen -W '");
    print_commands(" ");
    printf("' -- \"$cur\")\n"
           "    fi\n"
           "    mapfile -t -O ${#COMPREPLY[@]} COMPREPLY < <(compgen -f -- \"$cur\")\n"
           "    return 0\n"
           "}\n"
           "complete -o filenames -F _riffle riffle\n");
}

/* zsh: an autoloadable function file (its body is the function's). */
static void emit_zsh(void)
{
    printf("#compdef riffle\n"
           "# zsh completion for riffle -- generated from riffle's option tables\n"
           "# by gen_completions; do not edit.\n"
           "local cmd= i\n"
           "local -a opts\n"
           "(( CURRENT > 2 )) && cmd=${words[2]}\n"
           "case $cmd in\n");
    for (size_t i = 0; cli_all_options[i]; i++) {
        const struct cli_options *t = cli_all_options[i];
        if (!is_command(t))
            continue;
        printf("%s) opts=(", t->command);
        print_longopts(t, " ");
        printf(") ;;\n");
    }
    printf("*) opts=(");
    print_longopts(shuffle_table(), " ");
    printf(") ;;\nesac\n"
           "for (( i = 2; i < CURRENT; i++ )); do\n"
           "    [[ ${words[i]} == -- ]] && opts=()\n"
           "done\n"
           "if [[ $PREFIX == --*=* ]]; then\n"
           "    compset -P '*='\n"
           "    _files\n"
           "elif [[ $PREFIX == -* && ${#opts} -gt 0 ]]; then\n"
           "    compadd -- $opts\n"
           "else\n"
           "    (( CURRENT == 2 )) && compadd -- ");
    print_commands(" ");
    printf("\n    _files\nfi\n");
}

/* fish: commands while none is given; each command's long options after it,
 * the shuffle's without one; fish completes file names by itself. */
static void emit_fish(void)
{
    printf("# fish completion for riffle -- generated from riffle's option tables\n"
           "# by gen_completions; do not edit.\n"
           "complete -c riffle -n __fish_use_subcommand -a '");
    print_commands(" ");
    printf("'\n");
    for (size_t i = 0; cli_all_options[i]; i++) {
        const struct cli_options *t = cli_all_options[i];
        if (!completed(t))
            continue;
        for (const struct option *o = t->longopts; o->name; o++) {
            if (t->command[0]) {
                printf("complete -c riffle -n '__fish_seen_subcommand_from %s'", t->command);
            } else {
                printf("complete -c riffle -n 'not __fish_seen_subcommand_from ");
                print_commands(" ");
                printf("'");
            }
            printf(" -l %s%s\n", o->name, o->has_arg == required_argument ? " -r" : "");
        }
    }
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*emit)(void);
    } shells[] = {{"bash", emit_bash}, {"zsh", emit_zsh}, {"fish", emit_fish}, {"list", emit_list}};
    if (argc != 2) {
        fprintf(stderr, "usage: gen_completions bash|zsh|fish|list\n");
        return 2;
    }
    if (!check_tables() || !shuffle_table())
        return 1;
    for (size_t i = 0; i < sizeof shells / sizeof shells[0]; i++)
        if (strcmp(argv[1], shells[i].name) == 0) {
            shells[i].emit();
            return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
        }
    fprintf(stderr, "gen_completions: %s: unknown shell\n", argv[1]);
    return 2;
}

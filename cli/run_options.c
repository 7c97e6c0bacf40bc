/*
 * run_options.c -- --memory, --threads and -T as every command reads them
 * (run_options.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "riffle_engine.h"
#include "run_options.h"

int cli_parse_memory(const char *cmd, const char *arg, const char **given, uint64_t *v)
{
    if (cli_set_once(given, arg, "memory sizes") != CLI_CONTINUE)
        return CLI_FAIL;
    const rf_status st = rf_engine_memory_parse(arg, v);
    if (st == RF_ERANGE) {
        cli_error("cannot find the size of memory for --memory=%s", arg);
        return CLI_FAIL;
    }
    if (st != RF_OK)
        return cli_usage(cmd, "invalid memory size %s", cli_quote(arg));
    return CLI_CONTINUE;
}

int cli_parse_threads(const char *cmd, const char *arg, const char **given, unsigned *v)
{
    if (cli_set_once(given, arg, "thread counts") != CLI_CONTINUE)
        return CLI_FAIL;
    uint64_t n;
    int over;
    if (cli_parse_u64(arg, &n, &over) != 0 || n > CLI_MAX_THREADS)
        return cli_usage(cmd, "invalid thread count %s", cli_quote(arg));
    *v = (unsigned)n;
    return CLI_CONTINUE;
}

unsigned cli_threads_resolve(unsigned n)
{
    if (n != 0)
        return n;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (unsigned)(cores < CLI_MAX_THREADS ? cores : CLI_MAX_THREADS) : 1;
}

int cli_check_tmpdir(const char *dir)
{
    const int e = rf_temp_dir_usable(dir);
    if (e) {
        cli_error("cannot use temporary directory %s: %s", cli_quote(dir), strerror(e));
        return CLI_FAIL;
    }
    return CLI_CONTINUE;
}

/*
 * cli_seed.c -- choosing the generator from --seed, --rng and --random-source.
 *
 *   --seed=S           the key rf_seed_text(S), the rule of every front end:
 *                      S all decimal digits and at most UINT64_MAX is the
 *                      integer seed, anything else the string seed (so "007"
 *                      is the integer 7, and "x7" or "-1" are strings).
 *   --random-source=F  the first 32 bytes of F are the generator key.
 *   neither            OS entropy (rf_rng_new_os for ChaCha20, else a key from
 *                      rf_seed_os).
 *   --rng=NAME         the generator kind (rf_rng_kind_parse); ChaCha20 default.
 *   --production       refuse --seed and --random-source (cli_production_check,
 *                      for the commands that deal or draw for live play).
 *
 * cli_rng_option reads the four options for every command's getopt loop.
 *
 * cli_rng_key gives the 32-byte key by the same rules (rf_seed_text, the
 * file's bytes, rf_seed_os) for keyed objects that are not
 * generators: the rf_perm of `riffle -i LO-HI` over a huge range.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_rng_option(struct cli_rng_opts *r, int opt, const char *arg)
{
    const char **slot;
    const char *plural; /* for the message of a repeated option */
    switch (opt) {
    case CLI_OPT_PRODUCTION:
        r->production = 1;
        return CLI_CONTINUE;
    case CLI_OPT_SEED:
        slot = &r->seed, plural = "seeds";
        break;
    case CLI_OPT_RNG:
        slot = &r->rng_name, plural = "generators";
        break;
    case CLI_OPT_RANDOM_SOURCE:
        slot = &r->random_source, plural = "random sources";
        break;
    default:
        return CLI_NOT_RNG;
    }
    if (*slot && strcmp(*slot, arg) != 0) {
        cli_error("multiple %s specified", plural);
        return CLI_FAIL;
    }
    *slot = arg;
    return CLI_CONTINUE;
}

rf_rng_kind cli_rng_kind(const struct cli_rng_opts *o)
{
    rf_rng_kind k = RF_RNG_CHACHA20;
    if (o->rng_name && rf_rng_kind_parse(o->rng_name, &k) != RF_OK)
        k = RF_RNG_CHACHA20; /* rejected earlier by cli_rng_check */
    return k;
}

int cli_rng_check(const struct cli_rng_opts *o, const char *cmd)
{
    rf_rng_kind k;
    if (o->rng_name && rf_rng_kind_parse(o->rng_name, &k) != RF_OK)
        return cli_usage(cmd, "invalid generator %s (chacha20, xoshiro256++ or pcg64)",
                         cli_quote(o->rng_name));
    if (o->seed && o->random_source)
        return cli_usage(cmd, "--seed and --random-source cannot be combined");
    return CLI_OK;
}

/* 25 CFR 547.14(d) asks that a game's random stream never reproduce a prior
 * one: a live deal must not be reachable from a seed or a key file, which
 * are for tests and audits.  The environment variable lets an operator set
 * the mode once for every riffle a service runs, without trusting each
 * command line; any value but "" or "0" turns it on, so that a mistyped value
 * fails safe. */
int cli_production_check(const struct cli_rng_opts *o, const char *cmd)
{
    const char *env = getenv("RIFFLE_PRODUCTION");
    const int from_env = env && *env && strcmp(env, "0") != 0;
    if (!o->production && !from_env)
        return CLI_OK;
    const char *given = o->seed ? "--seed" : o->random_source ? "--random-source" : NULL;
    if (!given)
        return CLI_OK;
    return cli_usage(cmd, "%s is refused in production mode (%s): a live stream must never "
                          "repeat a prior one",
                     given, o->production ? "--production" : "RIFFLE_PRODUCTION");
}

/* Read exactly RF_KEY_BYTES from the file, with shuf's messages. */
static int read_key_file(const char *path, uint8_t key[RF_KEY_BYTES])
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("%s: %s", cli_quote_file(path), strerror(errno));
        return -1;
    }
    size_t got = 0;
    while (got < RF_KEY_BYTES) {
        const ssize_t k = read(fd, key + got, RF_KEY_BYTES - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            cli_error("%s: read error: %s", cli_quote(path), strerror(errno));
            close(fd);
            return -1;
        }
        if (k == 0) {
            cli_error("%s: end of file", cli_quote(path));
            close(fd);
            return -1;
        }
        got += (size_t)k;
    }
    close(fd);
    return 0;
}

static rf_rng *fail(rf_status s)
{
    cli_error("cannot start the random generator: %s", rf_strerror(s));
    return NULL;
}

/* The key for --seed or --random-source, or OS entropy; 0, or -1 after a
 * message from read_key_file.  The generator is rf_rng_init with this key,
 * so the generator and the keyed permutation of cli_rng_key share one key. */
static int make_key(const struct cli_rng_opts *o, uint8_t key[RF_KEY_BYTES], rf_status *s)
{
    if (o->seed)
        *s = rf_seed_text(key, o->seed);
    else if (o->random_source)
        return read_key_file(o->random_source, key);
    else
        *s = rf_seed_os(key);
    return 0;
}

int cli_rng_key(const struct cli_rng_opts *o, uint8_t key[RF_KEY_BYTES])
{
    rf_status s = RF_OK;
    if (make_key(o, key, &s) != 0)
        return -1;
    if (s != RF_OK) {
        cli_error("cannot make the random key: %s", rf_strerror(s));
        return -1;
    }
    return 0;
}

rf_rng *cli_rng_make(const struct cli_rng_opts *o, rf_rng *storage)
{
    const rf_rng_kind kind = cli_rng_kind(o);
    rf_status s = RF_OK;
    if (!o->seed && !o->random_source && kind == RF_RNG_CHACHA20) {
        rf_rng *g = rf_rng_new_os(&s);
        return g ? g : fail(s);
    }
    uint8_t key[RF_KEY_BYTES];
    if (make_key(o, key, &s) != 0)
        return NULL;
    if (s == RF_OK)
        s = rf_rng_init(storage, kind, key, 0);
    return s == RF_OK ? storage : fail(s);
}

void cli_rng_release(rf_rng *g, rf_rng *storage)
{
    if (g && g != storage)
        rf_rng_free(g);
}

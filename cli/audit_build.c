/*
 * audit_build.c -- what ties an audit report to one build (audit_cert.h):
 * the command line as typed, shell-quoted, and SHA-256 of the running
 * program (/proc/self/exe), of the object that holds libriffle (the program
 * itself when linked statically) and of the libsodium it loaded, found by
 * dladdr(3) on one of each one's functions.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "audit_build.h"

/* Quote a word for a POSIX shell when it needs it ('...', with ' as '\''). */
static size_t quote_word(char *out, const char *w)
{
    size_t k = 0;
    const int plain = *w != '\0' &&
                      strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789-_=+./:,@%") == strlen(w);
    if (plain) {
        k = strlen(w);
        if (out)
            memcpy(out, w, k);
        return k;
    }
    if (out)
        out[k] = '\'';
    k++;
    for (; *w; w++) {
        if (*w == '\'') {
            if (out)
                memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            if (out)
                out[k] = *w;
            k++;
        }
    }
    if (out)
        out[k] = '\'';
    return k + 1;
}

/* An option's value quoted apart from its name: --cmd='a b'. */
static size_t quote_arg(char *out, const char *w)
{
    const char *eq = strchr(w, '=');
    if (strncmp(w, "--", 2) != 0 || eq == NULL ||
        strspn(w + 2, "abcdefghijklmnopqrstuvwxyz-") != (size_t)(eq - w - 2))
        return quote_word(out, w);
    const size_t name = (size_t)(eq - w) + 1;
    if (out)
        memcpy(out, w, name);
    return name + quote_word(out ? out + name : NULL, eq + 1);
}

static char *command_line(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += quote_arg(NULL, argv[i]) + 1;
    char *s = malloc(len), *p = s;
    if (s == NULL)
        return NULL;
    for (int i = 0; i < argc; i++) {
        if (i)
            *p++ = ' ';
        /* argv[0] is "riffle audit" (main.c): the words as typed */
        p += i == 0 ? (size_t)(stpcpy(p, argv[0]) - p) : quote_arg(p, argv[i]);
    }
    *p = '\0';
    return s;
}

static void hash_file(audit_cert_file *f, const char *what, const char *path)
{
    char real[PATH_MAX];
    f->what = what;
    snprintf(f->path, sizeof f->path, "%s", realpath(path, real) ? real : path);
    if (audit_sha256_file(path, f->sha256) != 0) {
        f->sha256[0] = '\0';
        snprintf(f->note, sizeof f->note, "unreadable: %s", strerror(errno));
    }
}

/* The object holding the function at fn: its path, or NULL. */
static const char *object_of(const void *fn, const void **base)
{
    Dl_info info;
    if (dladdr(fn, &info) == 0 || info.dli_fname == NULL)
        return NULL;
    *base = info.dli_fbase;
    return info.dli_fname;
}

int audit_build_cert(audit_cert *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->command_line = command_line(argc, argv);
    c->sodium_version = sodium_version_string();
    char exe[PATH_MAX];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        hash_file(&c->files[c->nfiles++], "program", exe);
    }
    const void *prog_base = NULL, *lib_base = NULL, *sodium_base = NULL;
    (void)object_of((const void *)audit_build_cert, &prog_base);
    const char *lib = object_of((const void *)rf_version, &lib_base);
    audit_cert_file *f = &c->files[c->nfiles++];
    if (lib != NULL && lib_base != prog_base) {
        hash_file(f, "libriffle", lib);
    } else {
        f->what = "libriffle";
        snprintf(f->path, sizeof f->path, "%s", len > 0 ? exe : "");
        snprintf(f->note, sizeof f->note, "linked into the program: its hash above");
    }
    const char *sodium = object_of((const void *)crypto_hash_sha256, &sodium_base);
    if (sodium != NULL && sodium_base != prog_base)
        hash_file(&c->files[c->nfiles++], "libsodium", sodium);
    return c->command_line != NULL ? 0 : -1;
}

void audit_build_free(audit_cert *c)
{
    free(c->command_line);
    c->command_line = NULL;
}

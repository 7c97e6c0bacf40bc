#!/bin/sh
# Only rf_ names leave the library: the shared object exports rf_* alone, and
# every global symbol of the static archive starts with rf (rf_ public, rfi_
# internal) so static linking cannot clash with a user's names.  (ASan adds
# __odr_asan.* twins of global variables; they are the sanitizer's, not ours.)
# And the libraries leave processes, signals, messages and the terminal to the
# front ends (docs/ARCHITECTURE.md): libriffle.a and libriffle_audit.a call
# nothing that prints to stdout or stderr, ends the process, installs a signal
# handler, signals a process or looks at the terminal.  The audit's report
# writers may fprintf to a FILE * their caller gives; assert's __assert_fail
# and the sanitizers' own symbols are allowed.
# Usage: check_symbols.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
echo "1..4"
bad=$(nm -D --defined-only "$build/libriffle.so" 2>/dev/null | awk '$2 ~ /[A-Z]/ {print $3}' | grep -v '^rf_' | grep -v '^__odr_asan' || true)
if [ -f "$build/libriffle.so" ] && [ -z "$bad" ]; then
    echo "ok 1 - shared library exports only rf_ symbols"
else
    echo "not ok 1 - shared library exports non-rf_ symbols: $bad"
fi
bad=$(nm -g --defined-only "$build/libriffle.a" 2>/dev/null | awk 'NF == 3 {print $3}' | grep -v '^rf' | grep -v '^__odr_asan' || true)
if [ -f "$build/libriffle.a" ] && [ -z "$bad" ]; then
    echo "ok 2 - static archive defines only rf-prefixed globals"
else
    echo "not ok 2 - static archive defines non-rf globals: $bad"
fi

# Undefined symbols of archive $1 among the names that follow, as
# "member: symbol" (gcc may turn printf into puts or fprintf(stderr) into
# fwrite, and _FORTIFY_SOURCE into __printf_chk: stderr and stdout, the
# streams themselves, catch the rewritten calls).
forbidden() { # archive name...
    a=$1; shift
    nm -A -u "$a" 2>/dev/null | awk -v names="$*" '
        BEGIN { n = split(names, w, " "); for (i = 1; i <= n; i++) bad[w[i]] = 1 }
        $NF in bad { m = $1; sub(/:$/, "", m); sub(/^.*:/, "", m); print m ": " $NF }' |
        sort -u | tr '\n' ' '
}
front_end="stderr stdout printf __printf_chk puts putchar perror abort exit _exit signal
    sigaction raise kill prctl isatty"
bad=$(forbidden "$build/libriffle.a" $front_end fprintf __fprintf_chk vfprintf __vfprintf_chk)
if [ -f "$build/libriffle.a" ] && [ -z "$bad" ]; then
    echo "ok 3 - static archive neither prints, exits, signals nor looks at the terminal"
else
    echo "not ok 3 - static archive calls front-end functions: $bad"
fi
bad=$(forbidden "$build/libriffle_audit.a" $front_end)
if [ -f "$build/libriffle_audit.a" ] && [ -z "$bad" ]; then
    echo "ok 4 - audit archive neither prints to stdout or stderr, exits, signals nor looks at the terminal"
else
    echo "not ok 4 - audit archive calls front-end functions: $bad"
fi

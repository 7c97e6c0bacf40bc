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
echo "1..5"
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

# What a signal handler may call in the library: rf_removal_run and the
# functions it reaches in its own object call only async-signal-safe
# functions (POSIX.1-2017, XSH 2.4.3).  Read from the disassembly: direct
# calls and jumps to the object's own functions are followed, a call through
# a relocation must name an allowed function (or a sanitizer's check), and
# an indirect call is refused.
safe="unlink rmdir memcpy memmove memset strlen __errno_location"
obj=$(mktemp "${TMPDIR:-/tmp}/riffle-removal.XXXXXX") || exit 1
bad=$(ar p "$build/libriffle.a" removal.o > "$obj" 2>/dev/null &&
    objdump -dr --no-show-raw-insn "$obj" 2>/dev/null | awk -v safe="$safe" '
    BEGIN { n = split(safe, w, " "); for (i = 1; i <= n; i++) ok[w[i]] = 1 }
    /^[0-9a-f]+ <[^>]+>:$/ { f = $2; gsub(/[<>:]/, "", f); seen[f] = 1; branch = 0; next }
    /^ +[0-9a-f]+:\t/ {
        branch = $0 ~ /\t(call|jmp|bl|b)[a-z]* /
        if ($0 ~ /\t(call|jmp)[a-z]* +\*/) edge[f] = edge[f] " *indirect"
        else if (branch && match($0, /<[^>+]+>$/)) edge[f] = edge[f] " " substr($0, RSTART + 1, RLENGTH - 2)
        next
    }
    /R_[A-Z0-9_]+/ && branch {
        t = $NF; sub(/[-+]0x[0-9a-f]+$/, "", t); edge[f] = edge[f] " " t; branch = 0
    }
    END {
        if (!("rf_removal_run" in seen)) { print "no rf_removal_run"; exit }
        todo[1] = "rf_removal_run"; nt = 1; done["rf_removal_run"] = 1
        while (nt > 0) {
            g = todo[nt--]; m = split(edge[g], c, " ")
            for (i = 1; i <= m; i++) {
                if (c[i] in done) continue
                done[c[i]] = 1
                if (c[i] in seen) todo[++nt] = c[i]
                else if (!(c[i] in ok) && c[i] !~ /^__(asan|ubsan|sanitizer)_/) printf "%s ", c[i]
            }
        }
    }')
rm -f "$obj"
if [ -f "$build/libriffle.a" ] && [ -z "$bad" ]; then
    echo "ok 5 - rf_removal_run calls only async-signal-safe functions"
else
    echo "not ok 5 - rf_removal_run calls functions a signal handler may not: $bad"
fi

#!/bin/sh
# Only rf_ names leave the library: the shared object exports rf_* alone, and
# every global symbol of the static archive starts with rf (rf_ public, rfi_
# internal) so static linking cannot clash with a user's names.  (ASan adds
# __odr_asan.* twins of global variables; they are the sanitizer's, not ours.)
# Usage: check_symbols.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
echo "1..2"
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

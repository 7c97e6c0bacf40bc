#!/bin/sh
# Build checks that need no test binary, run once (for the first build dir):
#   - zero warnings under gcc and clang with the STYLE.md flags (-Werror)
#   - make install honours DESTDIR/PREFIX; the installed riffle.pc compiles
#     and links a program against the installed library.
# Usage: check_build.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
case $build in *asan*) echo "1..0 # skip: build checks run once, with the plain build"; exit 0 ;; esac
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/riffle-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
check() { # description command...
    desc=$1; shift
    n=$((n + 1))
    if "$@" > "$tmp/log" 2>&1; then
        echo "ok $n - $desc"
    else
        echo "not ok $n - $desc"
        sed 's/^/# /' "$tmp/log" | tail -20
    fi
}
echo "1..4"
check "gcc build with -Werror (zero warnings)" \
    make -s BUILD="$tmp/gcc" CC=gcc WERROR=1 all
if command -v clang >/dev/null 2>&1; then
    check "clang build with -Werror (zero warnings)" \
        make -s BUILD="$tmp/clang" CC=clang WERROR=1 all
else
    n=$((n + 1)); echo "ok $n # skip clang not installed"
fi
staged() {
    make -s BUILD="$build" DESTDIR="$tmp/stage" PREFIX=/opt/riffle install &&
    for f in lib/libriffle.a lib/libriffle.so include/riffle.h lib/pkgconfig/riffle.pc; do
        [ -e "$tmp/stage/opt/riffle/$f" ] || { echo "missing $f"; return 1; }
    done &&
    grep -q '^prefix=/opt/riffle$' "$tmp/stage/opt/riffle/lib/pkgconfig/riffle.pc"
}
check "make install honours DESTDIR and PREFIX" staged
cat > "$tmp/use.c" <<'C'
#include <riffle.h>
#include <stdio.h>
int main(void)
{
    rf_rng g;
    int a[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    if (rf_rng_seed_u64(&g, RF_RNG_CHACHA20, 1) != RF_OK)
        return 1;
    rf_shuffle(&g, a, 10, sizeof a[0]);
    printf("%s\n", rf_version());
    return 0;
}
C
installed() {
    make -s BUILD="$build" PREFIX="$tmp/prefix" install &&
    export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" &&
    cc -o "$tmp/use" "$tmp/use.c" $(pkg-config --cflags --libs riffle) &&
    LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/use" &&
    cc -o "$tmp/use-static" "$tmp/use.c" $(pkg-config --cflags riffle) \
        "$tmp/prefix/lib/libriffle.a" $(pkg-config --libs-only-other --libs-only-l --static riffle | sed 's/-lriffle//') &&
    "$tmp/use-static"
}
check "installed riffle.pc builds and links a program (shared and static)" installed

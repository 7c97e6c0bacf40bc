#!/bin/sh
# Build checks that need no test binary, run once (for the first build dir):
#   - zero warnings under gcc and clang with the STYLE.md flags (-Werror)
#   - make install honours DESTDIR/PREFIX; the installed riffle.pc compiles
#     and links a program against the installed library; riffle-mpi and its
#     man page are installed when riffle-mpi was built (make mpi), and
#     uninstalled.
#   - make install puts a `shuf` link to riffle in LIBEXECDIR/riffle only, and
#     in BINDIR only with INSTALL_SHUF_LINK=1 (never over another file); the
#     installed link behaves as GNU shuf; make uninstall removes the links.
# Usage: check_build.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
case $build in *asan*) echo "1..0 # skip: build checks run once, with the plain build"; exit 0 ;; esac
top=$(cd "$(dirname "$0")/../.." && pwd)
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
echo "1..7"
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
    for f in lib/libriffle.a lib/libriffle.so include/riffle.h lib/pkgconfig/riffle.pc \
        lib/cmake/riffle/riffleConfig.cmake lib/cmake/riffle/riffleConfigVersion.cmake; do
        [ -e "$tmp/stage/opt/riffle/$f" ] || { echo "missing $f"; return 1; }
    done &&
    grep -q '^prefix=/opt/riffle$' "$tmp/stage/opt/riffle/lib/pkgconfig/riffle.pc" &&
    staged_completions &&
    staged_mpi
}
# The completions, as the build generated them, where bash-completion, zsh
# (its site-functions) and fish (its vendor directory) look under PREFIX.
staged_completions() {
    share=$tmp/stage/opt/riffle/share
    cmp "$build/completions/riffle.bash" "$share/bash-completion/completions/riffle" &&
    cmp "$build/completions/_riffle" "$share/zsh/site-functions/_riffle" &&
    cmp "$build/completions/riffle.fish" "$share/fish/vendor_completions.d/riffle.fish"
}
# riffle-mpi is built by `make mpi` only (an MPI compiler is needed): when it
# is in the build, make install puts it and its man page in the tree as built.
staged_mpi() {
    [ -x "$build/riffle-mpi" ] || return 0
    cmp "$build/riffle-mpi" "$tmp/stage/opt/riffle/bin/riffle-mpi" &&
    [ -x "$tmp/stage/opt/riffle/bin/riffle-mpi" ] &&
    cmp docs/riffle-mpi.1 "$tmp/stage/opt/riffle/share/man/man1/riffle-mpi.1"
}
check "make install honours DESTDIR and PREFIX" staged
# In the staging tree the libexec link dangles: it names the final path.
shuf_link_staged() {
    link=$tmp/stage/opt/riffle/libexec/riffle/shuf
    [ -L "$link" ] || { echo "missing libexec/riffle/shuf"; return 1; }
    target=$(readlink "$link")
    [ "$target" = /opt/riffle/bin/riffle ] || { echo "shuf -> $target"; return 1; }
    if [ -e "$tmp/stage/opt/riffle/bin/shuf" ] || [ -L "$tmp/stage/opt/riffle/bin/shuf" ]; then
        echo "bin/shuf installed without INSTALL_SHUF_LINK=1"; return 1
    fi
}
check "make install links libexec/riffle/shuf to riffle, not bin/shuf" shuf_link_staged
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
# Run after `installed`: the link in $tmp/prefix resolves.  First in PATH, it
# is shuf: shuf's --version line and messages, riffle's options refused.
expect() { # description expected actual
    [ "$2" = "$3" ] || { printf '%s: expected [%s], got [%s]\n' "$1" "$2" "$3"; return 1; }
}
installed_shuf() {
    dir=$tmp/prefix/libexec/riffle
    [ "$(readlink "$dir/shuf")" = "$tmp/prefix/bin/riffle" ] || { echo "bad link"; return 1; }
    [ "$(PATH="$dir:$PATH" command -v shuf)" = "$dir/shuf" ] || { echo "not found in PATH"; return 1; }
    expect "--version" "shuf (riffle)" \
        "$(PATH="$dir:$PATH" shuf --version | head -n 1 | cut -d' ' -f1-2)" &&
    expect "multiset" "$(printf 'a\nb\nc\n')" \
        "$(PATH="$dir:$PATH" shuf -e c a b | sort)" &&
    if PATH="$dir:$PATH" shuf --seed=1 -e a > "$tmp/out" 2> "$tmp/err"; then
        echo "shuf --seed=1 accepted"; return 1
    fi &&
    expect "--seed message" "shuf: unrecognized option '--seed=1'" "$(head -n 1 "$tmp/err")" &&
    expect "--seed stdout" "" "$(cat "$tmp/out")"
}
check "installed libexec/riffle/shuf, first in PATH, is shuf and refuses --seed" installed_shuf
# INSTALL_SHUF_LINK=1: bin/shuf -> riffle, refused over a foreign shuf;
# uninstall removes riffle's links and only those.
opt_in() {
    s=$tmp/opt-in
    make -s BUILD="$build" DESTDIR="$s" PREFIX=/usr INSTALL_SHUF_LINK=1 install &&
    expect "bin/shuf" riffle "$(readlink "$s/usr/bin/shuf")" &&
    { [ ! -x "$build/riffle-mpi" ] || [ -x "$s/usr/bin/riffle-mpi" ]; } &&
    make -s BUILD="$build" DESTDIR="$s" PREFIX=/usr uninstall &&
    for f in bin/shuf libexec/riffle/shuf libexec/riffle bin/riffle bin/riffle-mpi \
        share/man/man1/riffle-mpi.1 share/bash-completion/completions/riffle \
        share/zsh/site-functions/_riffle share/fish/vendor_completions.d/riffle.fish \
        lib/cmake/riffle; do
        if [ -e "$s/usr/$f" ] || [ -L "$s/usr/$f" ]; then echo "$f left"; return 1; fi
    done &&
    echo coreutils > "$s/usr/bin/shuf" &&
    if make -s BUILD="$build" DESTDIR="$s" PREFIX=/usr INSTALL_SHUF_LINK=1 install 2> "$tmp/err"; then
        echo "install replaced a foreign bin/shuf"; return 1
    fi &&
    grep -q 'not a link to riffle' "$tmp/err" &&
    expect "foreign shuf after install" coreutils "$(cat "$s/usr/bin/shuf")" &&
    make -s BUILD="$build" DESTDIR="$s" PREFIX=/usr uninstall &&
    expect "foreign shuf after uninstall" coreutils "$(cat "$s/usr/bin/shuf")"
}
check "INSTALL_SHUF_LINK=1 links bin/shuf, never over a foreign one; uninstall" opt_in

#!/bin/sh
# The CMake package files: a tiny CMake project finds libriffle with
# find_package(riffle) in a staged `make install DESTDIR=...` (through
# CMAKE_PREFIX_PATH), links riffle::riffle -- the shared library, then the
# static one -- and runs, as it does from a tree installed with PREFIX alone;
# a version request of another major number is refused.  Run once, with the plain build (like check_build.sh).
# Usage: check_cmake.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
case $build in *asan*) echo "1..0 # skip: the CMake check runs once, with the plain build"; exit 0 ;; esac
command -v cmake > /dev/null 2>&1 || { echo "1..0 # skip: cmake not installed (sh scripts/deps.sh)"; exit 0; }
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/riffle-cmake.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
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
stage=$tmp/stage
prefix=/opt/riffle
mkdir -p "$tmp/proj"
cat > "$tmp/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(use_riffle C)
find_package(riffle 0.1 REQUIRED)
add_executable(use_riffle use.c)
target_link_libraries(use_riffle PRIVATE riffle::riffle)
get_target_property(kind riffle::riffle TYPE)
message(STATUS "riffle::riffle is ${kind}")
CMAKE
cat > "$tmp/proj/use.c" <<'C'
#include <riffle.h>
#include <stdio.h>
int main(void)
{
    rf_rng g;
    int a[5] = {1, 2, 3, 4, 5}, sum = 0;
    if (rf_rng_seed_u64(&g, RF_RNG_CHACHA20, 7) != RF_OK)
        return 1;
    rf_shuffle(&g, a, 5, sizeof a[0]);
    for (int i = 0; i < 5; i++)
        sum += a[i];
    printf("%s %d\n", rf_version(), sum);
    return 0;
}
C
version=$(sed -n 's/^#define RF_VERSION_STRING "\(.*\)"/\1/p' include/riffle.h)

echo "1..6"
installed() {
    make -s BUILD="$build" DESTDIR="$stage" PREFIX="$prefix" install &&
    for f in riffleConfig.cmake riffleConfigVersion.cmake; do
        [ -f "$stage$prefix/lib/cmake/riffle/$f" ] || { echo "missing lib/cmake/riffle/$f"; return 1; }
    done
}
check "make install puts riffleConfig.cmake and its version file in LIBDIR/cmake/riffle" installed

# Configure and build the project in $1 with extra cmake arguments; run it.
project() { # build-dir cmake-args...
    b=$1; shift
    cmake -S "$tmp/proj" -B "$b" -DCMAKE_PREFIX_PATH="$stage$prefix" "$@" &&
    cmake --build "$b"
}
shared() {
    project "$tmp/b-shared" > "$tmp/cfg" 2>&1 || { cat "$tmp/cfg"; return 1; }
    grep -q 'riffle::riffle is SHARED_LIBRARY' "$tmp/cfg" || { cat "$tmp/cfg"; return 1; }
    out=$(LD_LIBRARY_PATH="$stage$prefix/lib" "$tmp/b-shared/use_riffle") &&
    [ "$out" = "$version 15" ] || { echo "output [$out]"; return 1; }
    # it is the staged libriffle the program loads
    LD_LIBRARY_PATH="$stage$prefix/lib" ldd "$tmp/b-shared/use_riffle" | grep -q "$stage$prefix/lib/libriffle.so"
}
check "find_package(riffle) in the staged tree: riffle::riffle shared links and runs" shared
static() {
    project "$tmp/b-static" -Driffle_STATIC=ON > "$tmp/cfg" 2>&1 || { cat "$tmp/cfg"; return 1; }
    grep -q 'riffle::riffle is STATIC_LIBRARY' "$tmp/cfg" || { cat "$tmp/cfg"; return 1; }
    if ldd "$tmp/b-static/use_riffle" | grep -q libriffle; then echo "libriffle linked shared"; return 1; fi
    out=$("$tmp/b-static/use_riffle") &&
    [ "$out" = "$version 15" ] || { echo "output [$out]"; return 1; }
}
check "riffle_STATIC=ON: riffle::riffle static, with its link interface, links and runs" static
# Installed in place (no DESTDIR): the recorded directories are used as they are.
in_place() {
    make -s BUILD="$build" PREFIX="$tmp/prefix" install > /dev/null &&
    cmake -S "$tmp/proj" -B "$tmp/b-prefix" -DCMAKE_PREFIX_PATH="$tmp/prefix" &&
    cmake --build "$tmp/b-prefix" &&
    out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/b-prefix/use_riffle") &&
    [ "$out" = "$version 15" ] || { echo "output [$out]"; return 1; }
}
check "find_package(riffle) in a tree installed with PREFIX alone links and runs" in_place
# A request for another major version is refused by the version file.
refused() {
    mkdir -p "$tmp/proj99" && cp "$tmp/proj/use.c" "$tmp/proj99/" &&
    sed 's/find_package(riffle 0.1 REQUIRED)/find_package(riffle 99 REQUIRED)/' \
        "$tmp/proj/CMakeLists.txt" > "$tmp/proj99/CMakeLists.txt" &&
    if cmake -S "$tmp/proj99" -B "$tmp/b-99" -DCMAKE_PREFIX_PATH="$stage$prefix" > "$tmp/cfg" 2>&1; then
        echo "find_package(riffle 99) accepted version $version"; return 1
    fi &&
    grep -q "riffleConfig.cmake, version: $version" "$tmp/cfg" || { cat "$tmp/cfg"; return 1; }
}
check "find_package(riffle 99) is refused by riffleConfigVersion.cmake" refused
uninstalled() {
    make -s BUILD="$build" DESTDIR="$stage" PREFIX="$prefix" uninstall &&
    if [ -e "$stage$prefix/lib/cmake/riffle" ]; then echo "lib/cmake/riffle left"; return 1; fi
}
check "make uninstall removes the CMake package files and their directory" uninstalled

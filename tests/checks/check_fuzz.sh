#!/bin/sh
# Build the libFuzzer targets in fuzz/ with clang (ASan+UBSan) and run each
# for a fixed number of inputs from a fixed seed: their checks are always on.
# Runs once (with the plain build dir); skips when clang's fuzzer runtime is
# missing.  Usage: check_fuzz.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
case $build in *asan*) echo "1..0 # skip: fuzzers run once, with the plain build"; exit 0 ;; esac
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
targets=$(ls fuzz/fuzz_*.c 2>/dev/null)
count=$(echo "$targets" | wc -w)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/riffle-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
if ! echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
        > "$tmp/probe.c" || ! clang -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" 2>/dev/null; then
    echo "1..0 # skip no clang with libFuzzer"
    exit 0
fi
echo "1..$count"
make -s BUILD="$tmp/lib" CC=clang SANITIZE=1 lib >/dev/null 2>&1 || { echo "not ok 1 - fuzz library build"; exit 0; }
i=0
for t in $targets; do
    i=$((i + 1)); name=$(basename "$t" .c)
    if clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude \
            "$t" "$tmp/lib/libriffle.a" $(pkg-config --libs libsodium) -lgmp -lpthread -lm \
            -o "$tmp/$name" 2> "$tmp/$name.log" &&
        "$tmp/$name" -seed=1 -runs="${FUZZ_RUNS:-20000}" -max_len=256 >> "$tmp/$name.log" 2>&1; then
        echo "ok $i - $name: ${FUZZ_RUNS:-20000} inputs, all checks held"
    else
        echo "not ok $i - $name"
        tail -20 "$tmp/$name.log" | sed 's/^/# /'
    fi
done

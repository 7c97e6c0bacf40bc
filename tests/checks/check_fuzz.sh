#!/bin/sh
# Build the libFuzzer targets in fuzz/ with clang (ASan+UBSan) and run each
# for a fixed number of inputs from a fixed seed, then once on every input of
# its kept corpus fuzz/corpus/TARGET/ (grown by `make fuzz-long`): their
# checks are always on, and a crash on any input is a failure.  The build and
# the libFuzzer options are those of scripts/fuzz.sh, shared with
# `make fuzz-long`.  Runs once (with the plain build dir); skips when clang's
# fuzzer runtime is missing.  Usage: check_fuzz.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
case $build in *asan*) echo "1..0 # skip: fuzzers run once, with the plain build"; exit 0 ;; esac
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
fuzz="sh scripts/fuzz.sh"
targets=$(ls fuzz/fuzz_*.c 2>/dev/null)
count=$(echo "$targets" | wc -w)
runs=${FUZZ_RUNS:-20000}
if ! $fuzz probe; then
    echo "1..0 # skip no clang with libFuzzer"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/riffle-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "1..$count"
$fuzz build "$tmp" 2> "$tmp/build.err"
if [ ! -f "$tmp/lib/libriffle.a" ]; then
    echo "not ok 1 - fuzz library build"
    sed 's/^/# /' "$tmp/build.err"
    tail -20 "$tmp/lib.log" | sed 's/^/# /'
    exit 0
fi
i=0
for t in $targets; do
    i=$((i + 1)); name=$(basename "$t" .c)
    if [ ! -x "$tmp/$name" ] || [ -s "$tmp/$name.log" ]; then
        echo "not ok $i - $name: does not build without warnings"
        tail -20 "$tmp/$name.log" | sed 's/^/# /'
        continue
    fi
    if ! $fuzz run "$tmp" "$name" -seed=1 -runs="$runs" > "$tmp/$name.run.log" 2>&1; then
        echo "not ok $i - $name: a check failed in $runs inputs from seed 1"
        tail -20 "$tmp/$name.run.log" | sed 's/^/# /'
    elif ! replayed=$($fuzz replay "$tmp" "$name"); then
        echo "not ok $i - $name: a check failed replaying fuzz/corpus/$name (after $replayed inputs)"
        tail -20 "$tmp/$name.replay.log" | sed 's/^/# /'
    else
        echo "ok $i - $name: $runs inputs from seed 1 and $replayed corpus inputs replayed, all checks held"
    fi
done

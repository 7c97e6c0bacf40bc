#!/bin/sh
# The one place that builds and runs the libFuzzer targets in fuzz/: used by
# tests/checks/check_fuzz.sh (make check) and by `make fuzz-long`.
#
#   fuzz.sh probe                 exit 0 if clang can link a libFuzzer program
#   fuzz.sh build DIR             ASan+UBSan libriffle.a in DIR/lib (with
#                                 coverage instrumentation), then every
#                                 target as DIR/fuzz_NAME (its compiler output
#                                 in DIR/fuzz_NAME.log); exit 1 if any failed
#   fuzz.sh run DIR TARGET [ARG...]
#                                 run DIR/TARGET with its -max_len and ARGs
#   fuzz.sh replay DIR TARGET     run DIR/TARGET once on every file of
#                                 fuzz/corpus/TARGET; prints the count of
#                                 files run on stdout, exit 1 on a crash
#   fuzz.sh long DIR SECONDS [TARGET...]
#                                 fuzz each TARGET (default: all) for SECONDS,
#                                 one after the other, growing
#                                 fuzz/corpus/TARGET, then minimise it
#
# Crash inputs of `long` are written to fuzz/crashes/TARGET-crash-SHA1.
# Every libFuzzer run here is one process (no -jobs, no -workers).
# Paths are relative to the top of the tree; DIR may be absolute.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

usage() {
    echo "usage: fuzz.sh probe | build DIR | run DIR TARGET [ARG...] |" \
         "replay DIR TARGET | long DIR SECONDS [TARGET...]" >&2
    exit 2
}

targets() { for t in fuzz/fuzz_*.c; do [ -f "$t" ] && basename "$t" .c; done; }

# The longest input worth trying, per target.  fuzz_shuffle reads at most 14
# bytes (seed 8, generator 1, element size 1, n 2, k 2) and ignores the rest,
# so longer inputs only dilute the mutations and the corpus.  The others read
# up to 256 bytes: fuzz_perm a 32-byte key plus 8 indices (107 bytes) or a
# rank string of up to 255 characters; fuzz_deck one operation a byte;
# fuzz_records writes its input through a pipe in one write(2); fuzz_split
# reads a mode, a total and then a text.
max_len() {
    case $1 in
    fuzz_shuffle) echo 16 ;;
    *) echo 256 ;;
    esac
}

cmd_probe() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/riffle-fuzz-probe.XXXXXX") || return 1
    echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);
int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
        > "$tmp/probe.c" &&
        clang -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" 2>/dev/null
    st=$?
    rm -rf "$tmp"
    return $st
}

cmd_build() {
    dir=$1
    mkdir -p "$dir" || return 1
    # The library carries libFuzzer's coverage instrumentation too
    # (-fsanitize=fuzzer-no-link), so that inputs reaching new code in it
    # count as new coverage, not only new paths through the targets.  -B:
    # make does not see flags change, and DIR/lib may hold another build.
    if ! ${MAKE:-make} -s -B BUILD="$dir/lib" CC=clang SANITIZE=1 \
            CPPFLAGS=-fsanitize=fuzzer-no-link "$dir/lib/libriffle.a" > "$dir/lib.log" 2>&1; then
        echo "fuzz.sh: the sanitizer build of libriffle.a failed (see $dir/lib.log)" >&2
        return 1
    fi
    failed=0
    for name in $(targets); do
        # shellcheck disable=SC2046 # pkg-config's output is word-split on purpose
        if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                -std=c11 -Wall -Wextra -Iinclude "fuzz/$name.c" "$dir/lib/libriffle.a" \
                $(pkg-config --libs libsodium) -lgmp -lpthread -lm \
                -o "$dir/$name" > "$dir/$name.log" 2>&1; then
            rm -f "$dir/$name"
            echo "fuzz.sh: $name did not build (see $dir/$name.log)" >&2
            failed=1
        elif [ -s "$dir/$name.log" ]; then
            echo "fuzz.sh: $name built with warnings (see $dir/$name.log)" >&2
            failed=1
        fi
    done
    return $failed
}

cmd_run() {
    dir=$1 name=$2
    shift 2
    "$dir/$name" -max_len="$(max_len "$name")" "$@"
}

# Given files (no directory), libFuzzer runs each file once and does not
# fuzz: it prints "Executed FILE in N ms" for every file it ran, and a crash
# stops it with a non-zero status.  (Given the directory with -runs=0 it would
# also run every file once, plus an empty input first; with -runs=N > 0 it
# would go on to fuzz.)  The files are passed in batches by xargs: its status
# is non-zero if any batch failed.
cmd_replay() {
    dir=$1 name=$2 corpus=fuzz/corpus/$2
    log=$dir/$name.replay.log
    : > "$log"
    files=0 st=0
    if [ -d "$corpus" ]; then
        files=$(find "$corpus" -type f | wc -l)
    fi
    if [ "$files" -gt 0 ]; then
        find "$corpus" -type f -print | sort |
            xargs "$dir/$name" -max_len="$(max_len "$name")" >> "$log" 2>&1
        st=$?
    fi
    ran=$(grep -c '^Executed ' "$log")
    echo "$ran"
    # every file run, each exactly once
    [ "$st" -eq 0 ] && [ "$ran" -eq "$files" ]
}

cmd_long() {
    dir=$1 seconds=$2
    shift 2
    # shellcheck disable=SC2046 # target names have no spaces
    [ $# -gt 0 ] || set -- $(targets)
    mkdir -p fuzz/crashes || return 1
    status=0
    for name in "$@"; do
        corpus=fuzz/corpus/$name
        new=$dir/$name.new min=$dir/$name.min log=$dir/$name.long.log
        rm -rf "$new" "$min"
        mkdir -p "$corpus" "$new" "$min" || return 1
        before=$(find "$corpus" -type f | wc -l)
        echo "== $name: fuzzing for $seconds s from $before corpus inputs (log: $log)"
        # New inputs go to the first directory; the kept corpus seeds the run.
        if cmd_run "$dir" "$name" -max_total_time="$seconds" -timeout=25 \
                -print_final_stats=1 -artifact_prefix="fuzz/crashes/$name-" \
                "$new" "$corpus" > "$log" 2>&1; then
            :
        else
            echo "== $name: CRASH; the input is in fuzz/crashes/ (log: $log)" >&2
            grep -E '^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' "$log" >&2
            status=1
        fi
        grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$log"
        grep -E '^#[0-9]+[[:space:]]+(DONE|INITED)' "$log" | tail -1
        # Keep only the inputs that add coverage: merge everything into a
        # fresh directory, then make it the corpus.
        if cmd_run "$dir" "$name" -merge=1 "$min" "$corpus" "$new" \
                > "$log.merge" 2>&1; then
            rm -rf "$corpus" && mv "$min" "$corpus" || return 1
            rm -rf "$new"
            echo "== $name: corpus $before -> $(find "$corpus" -type f | wc -l) inputs," \
                 "$(du -sk "$corpus" | cut -f1) KiB"
        else
            echo "== $name: merge failed; corpus left as it was (log: $log.merge)" >&2
            status=1
        fi
    done
    rmdir fuzz/crashes 2>/dev/null
    return $status
}

[ $# -gt 0 ] || usage
cmd=$1
shift
case $cmd in
probe) [ $# -eq 0 ] || usage; cmd_probe ;;
build) [ $# -eq 1 ] || usage; cmd_build "$1" ;;
run) [ $# -ge 2 ] || usage; cmd_run "$@" ;;
replay) [ $# -eq 2 ] || usage; cmd_replay "$@" ;;
long) [ $# -ge 2 ] || usage; cmd_long "$@" ;;
*) usage ;;
esac

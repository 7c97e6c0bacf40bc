#!/bin/sh
# bench_cli.sh -- the riffle program against GNU shuf and sort -R, in one run.
#
# Usage: bench/bench_cli.sh [BUILD_DIR]        (default: build)
#   BIG=1      also the ~1 GB file (the size the targets are set for)
#   REPS=N     runs per measurement, the median is reported (default 3)
#   SORT_R=0   skip sort -R (slow: tens of seconds on the 1 GB file)
#   KEEP=1     keep the generated files in $TMPDIR (default /tmp)
#   OLD=PATH   also time another riffle binary (an older build) beside this
#              one, case by case: a refactor shows here that it costs nothing
#
# Generates files of varied-length lines (2-81 random letters after a line
# number, ~50 bytes per line on average), then times, for each file:
#   full shuffle of a path (riffle, shuf, sort -R),
#   -n 1000 from a path, from stdin redirected from the file, and from a pipe.
# Prints wall time (median of REPS), throughput (file MB / s), peak RSS
# (/usr/bin/time -v's "Maximum resident set size") and ratios against riffle.
# Output goes to /dev/null, so the figures include no disk writes.  A
# benchmark, not a test: nothing here fails on a missed target.
set -eu
build=${1:-build}
riffle=$build/riffle
reps=${REPS:-3}
tmp=${TMPDIR:-/tmp}
[ -x "$riffle" ] || { echo "bench_cli: $riffle: not built (run make)" >&2; exit 1; }
. "$(dirname "$0")/bench_lib.sh"
bench_require bench_cli

# measure LABEL SHELL-COMMAND: median wall seconds and peak RSS (KiB) of REPS
# runs; sets $wall and $rss.
measure() {
    : > "$tmp/riffle-bench.times"
    r=0
    while [ $r -lt "$reps" ]; do
        /usr/bin/time -f '%e %M' -o "$tmp/riffle-bench.one" sh -c "$2" > /dev/null
        cat "$tmp/riffle-bench.one" >> "$tmp/riffle-bench.times"
        r=$((r + 1))
    done
    wall=$(sort -n "$tmp/riffle-bench.times" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
    rss=$(sort -n -k2 "$tmp/riffle-bench.times" | awk '{a[NR] = $2} END {print a[int((NR + 1) / 2)]}')
}

row() { # case tool command
    measure "$2" "$3"
    mbs=$(awk -v b="$bytes" -v t="$wall" 'BEGIN { printf "%.0f", (t > 0) ? b / 1e6 / t : 0 }')
    rssmb=$(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')
    case $2 in riffle) base=$wall ;; esac
    ratio=$(awk -v t="$wall" -v b="$base" 'BEGIN { printf "%.1f", (b > 0) ? t / b : 0 }')
    printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$wall" "$mbs" "$rssmb" "${ratio}x"
}

# riffle_rows CASE COMMAND: this riffle, and OLD's when given; @R@ in
# COMMAND stands for the binary.
riffle_rows() {
    row "$1" "riffle" "$(printf '%s' "$2" | sed "s|@R@|$riffle|g")"
    if [ -n "${OLD:-}" ]; then
        row "$1" "riffle OLD" "$(printf '%s' "$2" | sed "s|@R@|$OLD|g")"
    fi
}

run_file() { # FILE
    f=$1
    bytes=$(wc -c < "$f")
    lines=$(wc -l < "$f")
    target=$(awk -v b="$bytes" -v n="$lines" 'BEGIN { printf "%.0f", (b + 16 * n) / 1048576 }')
    cat "$f" > /dev/null # warm the page cache for every tool alike
    echo
    echo "### $(awk -v b="$bytes" 'BEGIN { printf "%.0f MB", b / 1e6 }'), $lines lines" \
         "(RSS target: file + 16 B/line = $target MiB)"
    echo
    echo "| case | tool | wall s (median of $reps) | MB/s | peak RSS MiB | time vs riffle |"
    echo "|---|---|---|---|---|---|"
    riffle_rows "full shuffle, path" "@R@ '$f'"
    row "full shuffle, path" "shuf" "shuf '$f'"
    [ "${SORT_R:-1}" = 1 ] && row "full shuffle, path" "sort -R" "sort -R '$f'"
    riffle_rows "-n 1000, path" "@R@ -n 1000 '$f'"
    row "-n 1000, path" "shuf" "shuf -n 1000 '$f'"
    riffle_rows "-n 1000, stdin < file" "@R@ -n 1000 < '$f'"
    row "-n 1000, stdin < file" "shuf" "shuf -n 1000 < '$f'"
    riffle_rows "-n 1000, pipe from cat" "cat '$f' | @R@ -n 1000"
    row "-n 1000, pipe from cat" "shuf" "cat '$f' | shuf -n 1000"
    riffle_rows "full shuffle, pipe from cat" "cat '$f' | @R@"
    row "full shuffle, pipe from cat" "shuf" "cat '$f' | shuf"
    # the external engine: a budget of a quarter of the file
    riffle_rows "external, --memory=bytes/4" "@R@ --memory=$((bytes / 4)) -T '$tmp' '$f'"
}

echo "## riffle CLI benchmark"
echo
bench_machine
echo "tools: $("$riffle" --version | head -n 1); $(shuf --version | head -n 1);" \
     "$(sort --version | head -n 1)"
echo "command: BIG=${BIG:-0} REPS=$reps${OLD:+ OLD=$OLD} bench/bench_cli.sh $build"

small=$tmp/riffle-bench-100M.txt
big=$tmp/riffle-bench-1G.txt
bench_gen 100000000 "$small"
run_file "$small"
if [ "${BIG:-0}" = 1 ]; then
    bench_gen 1000000000 "$big"
    run_file "$big"
fi
echo
echo "load average after: $(bench_load)"
rm -f "$tmp/riffle-bench.times" "$tmp/riffle-bench.one"
[ "${KEEP:-0}" = 1 ] || rm -f "$small" "$big"

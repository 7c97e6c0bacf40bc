#!/bin/sh
# bench_compress.sh -- compressed input, in one run: `riffle F.zst` (the
# program decompresses on a thread of its own into the engine's pipe path)
# against `zstdcat F.zst | riffle` and `zstdcat F.zst | shuf`, with the
# ratios.  Optionally the same for gzip (GZIP_ROWS=1) and a compressed
# output row (`riffle F.zst -o OUT.zst`).
#
# Usage: bench/bench_compress.sh [BUILD_DIR]        (default: build)
#   SIZE_MB=N      the plain data in MB (default 200; the issue's figure is
#                  SIZE_MB=1000); its .zst (zstd -3) is made once and reused
#   BENCH_DIR=DIR  inputs (kept and reused) and outputs (default
#                  /tmp/riffle-bench)
#   REPS=N         runs per row (default 3), rows alternating within each
#                  round so that a change of load hits them alike; the median
#                  is reported
#   RIFFLE_OPTS=.. more options for every riffle run (e.g. --threads=2)
#   GZIP_ROWS=1    also F.gz: riffle F.gz against zcat F.gz | riffle
#
# Per row: the median CPU time (user + sys of every process of the row,
# pipeline included: /usr/bin/time on `sh -c`, whose children's times it
# counts) and wall time.  On a shared machine the CPU time is the figure to
# trust; wall time depends on the other jobs.  The two riffle rows must write
# the same bytes (checked every run: the seed contract); shuf's output is
# checked to have as many lines.  A benchmark, not a test: a slow row never
# fails the script, a wrong output does.
set -eu
build=${1:-build}
riffle=$(cd "$(dirname "$build/riffle")" && pwd)/riffle
[ -x "$riffle" ] || { echo "bench_compress: $build/riffle: not built (run make)" >&2; exit 1; }
. "$(dirname "$0")/bench_lib.sh"
bench_require bench_compress
for t in zstd zstdcat shuf; do
    command -v $t > /dev/null || { echo "bench_compress: $t is needed" >&2; exit 1; }
done
dir=${BENCH_DIR:-/tmp/riffle-bench}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
size_mb=${SIZE_MB:-200}
reps=${REPS:-3}
ropts="--seed=1${RIFFLE_OPTS:+ $RIFFLE_OPTS}"
plain=$dir/compress_${size_mb}mb.txt
bench_gen $((size_mb * 1000000)) "$plain"
[ -f "$plain.zst" ] || zstd -q -3 -T0 -c "$plain" > "$plain.zst"
if [ "${GZIP_ROWS:-0}" = 1 ] && [ ! -f "$plain.gz" ]; then
    gzip -6 -c "$plain" > "$plain.gz"
fi
lines=$(wc -l < "$plain")

bench_machine
echo "input: $plain.zst ($(wc -c < "$plain.zst") bytes compressed, $(wc -c < "$plain") plain," \
     "$lines lines); riffle options: $ropts; $reps runs per row"
echo

# row NAME COMMAND: one run of COMMAND (sh -c) into $dir/out.NAME; appends
# "cpu wall" to $dir/times.NAME.
row() {
    /usr/bin/time -f '%U %S %e' -o "$dir/time.tmp" sh -c "$2" > "$dir/out.$1"
    awk '{ printf "%.2f %.2f\n", $1 + $2, $3 }' "$dir/time.tmp" >> "$dir/times.$1"
}

names="riffle_zst zstdcat_riffle zstdcat_shuf riffle_zst_to_zst"
[ "${GZIP_ROWS:-0}" = 1 ] && names="$names riffle_gz zcat_riffle"
for n in $names; do : > "$dir/times.$n"; done
i=0
while [ "$i" -lt "$reps" ]; do
    row riffle_zst "'$riffle' $ropts '$plain.zst'"
    row zstdcat_riffle "zstdcat '$plain.zst' | '$riffle' $ropts"
    cmp -s "$dir/out.riffle_zst" "$dir/out.zstdcat_riffle" ||
        { echo "bench_compress: riffle F.zst and zstdcat F.zst | riffle differ" >&2; exit 1; }
    row zstdcat_shuf "zstdcat '$plain.zst' | shuf"
    [ "$(wc -l < "$dir/out.zstdcat_shuf")" -eq "$lines" ] ||
        { echo "bench_compress: shuf lost lines" >&2; exit 1; }
    row riffle_zst_to_zst "'$riffle' $ropts '$plain.zst' -o '$dir/out.zst'; zstdcat '$dir/out.zst'"
    cmp -s "$dir/out.riffle_zst" "$dir/out.riffle_zst_to_zst" ||
        { echo "bench_compress: riffle -o F.zst wrote other records" >&2; exit 1; }
    if [ "${GZIP_ROWS:-0}" = 1 ]; then
        row riffle_gz "'$riffle' $ropts '$plain.gz'"
        row zcat_riffle "zcat '$plain.gz' | '$riffle' $ropts"
        cmp -s "$dir/out.riffle_gz" "$dir/out.zcat_riffle" ||
            { echo "bench_compress: riffle F.gz and zcat F.gz | riffle differ" >&2; exit 1; }
    fi
    i=$((i + 1))
done

median() { # column of $dir/times.$1
    sort -n -k"$2" "$dir/times.$1" | awk -v c="$2" '{ v[NR] = $c } END {
        printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf '%-46s %10s %10s\n' "row" "CPU s" "wall s"
label() {
    case $1 in
    riffle_zst) echo "riffle F.zst" ;;
    zstdcat_riffle) echo "zstdcat F.zst | riffle" ;;
    zstdcat_shuf) echo "zstdcat F.zst | shuf" ;;
    riffle_zst_to_zst) echo "riffle F.zst -o OUT.zst (+ zstdcat OUT.zst)" ;;
    riffle_gz) echo "riffle F.gz" ;;
    zcat_riffle) echo "zcat F.gz | riffle" ;;
    esac
}
for n in $names; do
    printf '%-46s %10s %10s\n' "$(label $n)" "$(median $n 1)" "$(median $n 2)"
done
echo
ratio() { awk -v a="$(median "$1" "$3")" -v b="$(median "$2" "$3")" 'BEGIN {
    printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo "ratios (CPU; wall in parentheses):"
echo "  riffle F.zst / zstdcat F.zst | riffle: $(ratio riffle_zst zstdcat_riffle 1) ($(ratio riffle_zst zstdcat_riffle 2))"
echo "  riffle F.zst / zstdcat F.zst | shuf:   $(ratio riffle_zst zstdcat_shuf 1) ($(ratio riffle_zst zstdcat_shuf 2))"
[ "${GZIP_ROWS:-0}" = 1 ] &&
    echo "  riffle F.gz / zcat F.gz | riffle:      $(ratio riffle_gz zcat_riffle 1) ($(ratio riffle_gz zcat_riffle 2))"
echo "load average after: $(bench_load)"
rm -f "$dir"/out.* "$dir"/times.* "$dir/time.tmp"

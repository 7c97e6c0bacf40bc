#!/bin/sh
# bench_csv.sh -- CSV records: `riffle --csv --header=1 F` against plain
# `riffle --header=1 F` (lines: what --csv costs over the line path, though
# lines cut the quoted records in half) and Miller's `mlr --csv shuffle F`,
# on a CSV file whose quoted fields hold commas, doubled quotes and line
# feeds.  Miller is optional: without `mlr` its row is skipped, said so.
#
# Usage: bench/bench_csv.sh [BUILD_DIR]        (default: build)
#   SIZE_MB=N      the CSV file in MB (default 100); made once and reused
#   BENCH_DIR=DIR  input (kept) and outputs (default /tmp/riffle-bench)
#   REPS=N         runs per row (default 3), rows alternating within each
#                  round; the median is reported
#   RIFFLE_OPTS=.. more options for every riffle run (e.g. --threads=1)
#
# Per row: the median CPU time (user + sys, /usr/bin/time) and wall time;
# on a shared machine the CPU time is the figure to trust.  Every run's
# output is checked to hold the input's number of CSV records (riffle
# --csv's and Miller's; plain riffle's is counted in lines).  A benchmark,
# not a test: a slow row never fails the script, a wrong output does.
set -eu
build=${1:-build}
riffle=$(cd "$(dirname "$build/riffle")" && pwd)/riffle
[ -x "$riffle" ] || { echo "bench_csv: $build/riffle: not built (run make)" >&2; exit 1; }
. "$(dirname "$0")/bench_lib.sh"
bench_require bench_csv
dir=${BENCH_DIR:-/tmp/riffle-bench}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
size_mb=${SIZE_MB:-100}
reps=${REPS:-3}
ropts="--seed=1${RIFFLE_OPTS:+ $RIFFLE_OPTS}"
csv=$dir/csv_${size_mb}mb.csv
mlr=${MLR-$(command -v mlr || true)} # MLR= (empty): as if Miller were absent

# A header and records "id,user,amount,comment": one comment in four is
# quoted and holds a comma, a doubled quote or a line feed.
if ! { [ -f "$csv" ] && [ "$(wc -c < "$csv")" -ge $((size_mb * 1000000)) ]; }; then
    perl -e '
        srand(2);
        my @w = qw(alpha beta gamma delta epsilon zeta eta theta iota kappa);
        my ($n, $i, $size) = (0, 0, $ARGV[0]);
        my $h = "id,user,amount,comment\n";
        print $h; $n += length($h);
        while ($n < $size) {
            my $c = join(" ", map { $w[int(rand(@w))] } 1 .. 1 + int(rand(8)));
            my $k = int(rand(4));
            $c = $k == 0 ? "\"$c, $c\"" : $k == 1 ? "\"$c \"\"quoted\"\"\"" :
                 $k == 2 ? "\"$c\n$c\"" : $c if rand() < 0.25;
            my $r = sprintf("%d,u%d,%.2f,%s\n", $i++, int(rand(100000)), rand(1000), $c);
            print $r; $n += length($r);
        }' $((size_mb * 1000000)) > "$csv.part" && mv "$csv.part" "$csv"
fi

# CSV records of a file (line feeds outside double quotes, RFC 4180).
records() {
    perl -ne '$q ^= 1 for /"/g; $n++ unless $q; END { print $n + 0, "\n" }' "$1"
}
want=$(records "$csv")

bench_machine
echo "input: $csv ($(wc -c < "$csv") bytes, $want CSV records incl. header," \
     "$(wc -l < "$csv") lines); riffle options: $ropts; $reps runs per row"
[ -n "$mlr" ] && echo "miller: $("$mlr" --version 2>&1 | head -n 1)"
echo

row() { # NAME COMMAND: one run into $dir/out.NAME; "cpu wall" to $dir/times.NAME
    /usr/bin/time -f '%U %S %e' -o "$dir/time.tmp" sh -c "$2" > "$dir/out.$1"
    awk '{ printf "%.2f %.2f\n", $1 + $2, $3 }' "$dir/time.tmp" >> "$dir/times.$1"
}

names="riffle_csv riffle_lines"
[ -n "$mlr" ] && names="$names mlr"
for n in $names; do : > "$dir/times.$n"; done
i=0
while [ "$i" -lt "$reps" ]; do
    row riffle_csv "'$riffle' $ropts --csv --header=1 '$csv'"
    [ "$(records "$dir/out.riffle_csv")" -eq "$want" ] ||
        { echo "bench_csv: riffle --csv changed the record count" >&2; exit 1; }
    row riffle_lines "'$riffle' $ropts --header=1 '$csv'"
    [ "$(wc -l < "$dir/out.riffle_lines")" -eq "$(wc -l < "$csv")" ] ||
        { echo "bench_csv: riffle lost lines" >&2; exit 1; }
    if [ -n "$mlr" ]; then
        row mlr "'$mlr' --csv shuffle '$csv'"
        [ "$(records "$dir/out.mlr")" -eq "$want" ] ||
            { echo "bench_csv: mlr changed the record count" >&2; exit 1; }
    fi
    i=$((i + 1))
done

median() { # NAME COLUMN
    sort -n -k"$2" "$dir/times.$1" | awk -v c="$2" '{ v[NR] = $c } END {
        printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
label() {
    case $1 in
    riffle_csv) echo "riffle --csv --header=1 F" ;;
    riffle_lines) echo "riffle --header=1 F (lines)" ;;
    mlr) echo "mlr --csv shuffle F" ;;
    esac
}
printf '%-36s %10s %10s\n' "row" "CPU s" "wall s"
for n in $names; do
    printf '%-36s %10s %10s\n' "$(label $n)" "$(median $n 1)" "$(median $n 2)"
done
[ -n "$mlr" ] || printf '%-36s %10s\n' "mlr --csv shuffle F" "skipped: mlr is not installed"
echo
ratio() { awk -v a="$(median "$1" 1)" -v b="$(median "$2" 1)" 'BEGIN {
    printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo "CPU ratios: riffle --csv / riffle (lines): $(ratio riffle_csv riffle_lines)"
[ -n "$mlr" ] && echo "            mlr / riffle --csv:          $(ratio mlr riffle_csv)"
echo "load average after: $(bench_load)"
rm -f "$dir"/out.* "$dir"/times.* "$dir/time.tmp"

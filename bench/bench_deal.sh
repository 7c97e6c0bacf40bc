#!/bin/sh
# bench_deal.sh -- riffle deal --count: whole 52-card decks dealt a second,
# against the target of 1,000,000 decks a second with ChaCha20 on one core,
# for the text, --csv and --json forms, output to /dev/null.
#
# Usage: bench/bench_deal.sh [BUILD_DIR]        (default: build)
#   COUNT=N    decks a run (default 1000000)
#   REPS=N     runs a form; the fastest is reported (default 3)
#   RNG=NAME   the generator (default chacha20, the default of riffle deal)
#
# The rate is decks / CPU seconds (user + sys from /usr/bin/time), not wall
# time: the program is single threaded, and CPU time is the figure that
# stays meaningful on a machine other jobs share.  The fastest of REPS runs
# is the one least disturbed by them.  Wall time is printed beside it.  A
# benchmark, not a test: nothing here fails on a missed target.
set -eu
build=${1:-build}
riffle=$build/riffle
count=${COUNT:-1000000}
reps=${REPS:-3}
rng=${RNG:-chacha20}
target=1000000
tmp=${TMPDIR:-/tmp}
[ -x "$riffle" ] || { echo "bench_deal: $riffle: not built (run make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench_deal: /usr/bin/time is missing (Debian package 'time')" >&2; exit 1; }
one=$(mktemp "$tmp/riffle-bench-deal.XXXXXX")
trap 'rm -f "$one"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/^[^:]*: //'), $(uname -sr)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "riffle deal --count=$count --rng=$rng FORM > /dev/null; fastest of $reps runs"
echo
printf '%-8s %10s %10s %12s %12s  %s\n' form "cpu s" "wall s" decks/s target verdict
for form in text --csv --json; do
    opt=$form
    [ "$form" = text ] && opt=
    best=
    r=0
    while [ $r -lt "$reps" ]; do
        # shellcheck disable=SC2086 # $opt is empty or one word
        /usr/bin/time -f '%U %S %e' -o "$one" "$riffle" deal --count="$count" --rng="$rng" $opt > /dev/null
        line=$(awk '{ printf "%.2f %.2f\n", $1 + $2, $3 }' "$one")
        cpu=${line% *}
        if [ -z "$best" ] || awk -v a="$cpu" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then
            best=$line
        fi
        r=$((r + 1))
    done
    awk -v form="$form" -v cpu="${best% *}" -v wall="${best#* }" -v n="$count" -v t="$target" 'BEGIN {
        rate = cpu > 0 ? n / cpu : 0
        printf "%-8s %10.2f %10.2f %12.0f %12.0f  %s\n", form, cpu, wall, rate, t,
               (rate >= t ? "met" : "below")
    }'
done

#!/bin/sh
# bench_scale.sh -- the program at large n: one `riffle audit` trial, and
# `riffle rank` / `riffle unrank` of a random permutation, timed as CPU
# seconds (user + system, from /usr/bin/time) and wall seconds.  Targets: one
# audit trial at n = 10^6 under 2 s; rank and unrank of 10^6 items under 5 s
# each on one core.
#
# Usage: bench/bench_scale.sh [BUILD_DIR]     (default build: BUILD_DIR/riffle)
# Environment:
#   OLD=path/to/riffle   a previous build, timed side by side (old/new ratio)
#                        at the sizes where it is quick enough:
#   AUDIT_OLD_MAX=N      largest audit n for OLD (default 30000; it grows as
#                        n^2 there: docs/BENCHMARKS_AUDIT.md)
#   RANK_OLD_MAX=N       largest rank n for OLD (default 100000; it grows as
#                        n^2: docs/BENCHMARKS_PERM.md)
# A benchmark, not a test: it fails only if a run fails or a round trip
# (unrank of the rank) does not give the permutation back.
set -eu
build=${1:-build}
new=$build/riffle
old=${OLD:-}
audit_old_max=${AUDIT_OLD_MAX:-30000}
rank_old_max=${RANK_OLD_MAX:-100000}
if [ ! -x "$new" ]; then
    echo "bench_scale.sh: $new: not built" >&2
    exit 1
fi
if [ ! -x /usr/bin/time ]; then
    echo "bench_scale.sh: needs /usr/bin/time (Debian package time); not run" >&2
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# run LABEL OUT CMD...: time CMD (stdout to OUT); sets $cpu and $wall.
run() {
    out=$1
    shift
    /usr/bin/time -f '%U %S %e' -o "$tmp/time" "$@" >"$out"
    cpu=$(awk '{ printf "%.2f", $1 + $2 }' "$tmp/time")
    wall=$(awk '{ printf "%.2f", $3 }' "$tmp/time")
}

# row WHAT NEW_CPU NEW_WALL [OLD_CPU OLD_WALL]
row() {
    if [ $# -ge 5 ]; then
        ratio=$(awk -v o="$4" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", o / n; else printf ">%.0f", o / 0.01 }')
        printf '  %-34s new %7s s cpu (%6s wall)   old %8s s cpu (%8s wall)   old/new %s\n' \
            "$1" "$2" "$3" "$4" "$5" "$ratio"
    else
        printf '  %-34s new %7s s cpu (%6s wall)\n' "$1" "$2" "$3"
    fi
}

echo "bench_scale.sh: $new${old:+ against $old}"
echo "audit: one trial of fisher-yates, one thread"
for n in 30000 100000 1000000; do
    run "$tmp/a" "$new" audit fisher-yates --n=$n --trials=1 --seed=1 --threads=1
    nc=$cpu nw=$wall
    if [ -n "$old" ] && [ "$n" -le "$audit_old_max" ]; then
        run "$tmp/b" "$old" audit fisher-yates --n=$n --trials=1 --seed=1 --threads=1
        row "n = $n" "$nc" "$nw" "$cpu" "$wall"
    else
        row "n = $n" "$nc" "$nw"
    fi
    [ "$n" = 1000000 ] && audit_1m=$nc
done
echo "rank / unrank: a permutation of 0..n-1 (riffle -i 0-(n-1) --seed=1)"
for n in 100000 300000 1000000; do
    "$new" -i "0-$((n - 1))" --seed=1 >"$tmp/p"
    run "$tmp/r" "$new" rank <"$tmp/p"
    rc=$cpu rw=$wall
    run "$tmp/u" "$new" unrank --size=$n <"$tmp/r"
    uc=$cpu uw=$wall
    if ! tr ' ' '\n' <"$tmp/u" | cmp -s - "$tmp/p"; then
        echo "bench_scale.sh: unrank of the rank is not the permutation (n = $n)" >&2
        exit 1
    fi
    if [ -n "$old" ] && [ "$n" -le "$rank_old_max" ]; then
        run "$tmp/r2" "$old" rank <"$tmp/p"
        cmp -s "$tmp/r" "$tmp/r2" || { echo "bench_scale.sh: ranks differ" >&2; exit 1; }
        row "rank, n = $n" "$rc" "$rw" "$cpu" "$wall"
        run "$tmp/u2" "$old" unrank --size=$n <"$tmp/r"
        row "unrank, n = $n" "$uc" "$uw" "$cpu" "$wall"
    else
        row "rank, n = $n" "$rc" "$rw"
        row "unrank, n = $n" "$uc" "$uw"
    fi
    if [ "$n" = 1000000 ]; then rank_1m=$rc unrank_1m=$uc; fi
done
met() { awk -v t="$1" -v lim="$2" 'BEGIN { print (t < lim ? "met" : "NOT met") }'; }
echo "targets: audit trial at 10^6 under 2 s: $(met "$audit_1m" 2) ($audit_1m s);" \
    "rank under 5 s: $(met "$rank_1m" 5) ($rank_1m s);" \
    "unrank under 5 s: $(met "$unrank_1m" 5) ($unrank_1m s)"

#!/bin/sh
# The statistical batteries a test lab runs on a generator's raw and scaled
# output, on riffle's own streams (riffle rng), as TAP:
#   - dieharder (-g 200: raw words from standard input) on the raw stream of
#     each generator: one TAP result per dieharder test and generator, "not
#     ok" when any of its p-values is marked FAILED; WEAK is reported as a
#     note under an "ok" line, never a failure.
#   - ent on the scaled stream (--below=256 and --below=52, one byte a draw):
#     entropy, chi-square, mean and serial correlation inside fixed bands.
#
# Deterministic by construction: every stream comes from a fixed --seed, and
# dieharder reading standard input takes nothing from its own seed, so each
# p-value is a fixed function of the seed and riffle's stream contract (which
# only a major version changes) -- a rerun gives the same verdicts, and a
# FAILED is a real change, not a bad draw.  With about 20 p-values per
# generator, a WEAK (p < 0.005 or p > 0.995) somewhere is expected; dieharder
# marks FAILED only below 1e-6 or above 1 - 1e-6.  The seeds are the stream
# contract's golden seed (2026); a new seed would need its results reviewed.
#
# Time: the tests below are dieharder's quick "Good" ones, each at its own
# default -t (tsamples) and -p (psamples, 100 for most), so that each
# generator takes about 30 s of one core and the whole check under 3 minutes
# on 2 shared cores (97-123 s measured at a load of 9-12); together they read
# about 2.7 GB of each generator's stream (counted with tee and wc -c).  Left out for time: diehard_rank_32x32 (18 s), the
# Marsaglia-Tsang GCD test (150 s), sts_runs and sts_serial (10 s each),
# diehard_squeeze, diehard_craps and diehard_operm5 (5-7 s each); left out as
# dieharder rates them "Suspect" or "Do Not Use": OPSO, OQSO, DNA, sums.
#
# The sanitizer build skips (the streams are the same; the time is not).
# Usage: check_dieharder.sh BUILD_DIR
build=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
case $build in /*) ;; *) build=$top/$build ;; esac
riffle=$build/riffle
if nm "$build/libriffle.a" 2>/dev/null | grep -q '__asan_'; then
    echo "1..0 # skip the statistical batteries run with the plain build only"
    exit 0
fi
for tool in dieharder ent; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "1..0 # skip $tool is not installed (sh scripts/deps.sh)"
        exit 0
    fi
done
SEED=2026
GENERATORS="chacha20 xoshiro256++ pcg64"
TESTS="0 3 4 10 11 12 15 100 202 205 206 207 208 209"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/riffle-dieharder.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM

n_gen=$(echo $GENERATORS | wc -w)
n_tests=$(echo $TESTS | wc -w)
echo "1..$((n_gen * n_tests + 2))"
i=0

# One dieharder test on one generator's raw stream.  dieharder's result
# lines are "name | ntup | tsamples | psamples | p-value | assessment".
dieharder_one() { # generator test
    i=$((i + 1))
    "$riffle" rng --rng="$1" --seed=$SEED 2>"$tmp/rng.err" |
        timeout 600 dieharder -g 200 -d "$2" -S 1 > "$tmp/out" 2>&1
    awk -F'|' 'NF >= 6 && $5 ~ /[0-9]/ {
        gsub(/ /, "", $1); gsub(/ /, "", $2); gsub(/ /, "", $5); gsub(/ /, "", $6)
        print $1, $2, $5, $6 }' "$tmp/out" > "$tmp/res"
    name=$(awk 'NR == 1 { print $1 }' "$tmp/res")
    count=$(wc -l < "$tmp/res")
    if [ "$count" -eq 0 ] || [ -s "$tmp/rng.err" ]; then
        echo "not ok $i - $1: dieharder -d $2 gave no result"
        sed 's/^/# /' "$tmp/out" "$tmp/rng.err"
    elif grep -q ' FAILED$' "$tmp/res"; then
        echo "not ok $i - $1: dieharder $name failed"
        sed 's/^/# /' "$tmp/res"
    else
        echo "ok $i - $1: dieharder $name, $count p-values, none FAILED"
        awk '$4 == "WEAK" { print "# note: WEAK (expected now and then): " $0 }' "$tmp/res"
    fi
}

for g in $GENERATORS; do
    for d in $TESTS; do
        dieharder_one "$g" "$d"
    done
done

# ent's terse line: index, bytes, entropy, chi-square, mean, Monte Carlo pi,
# serial correlation.  Bands: a million draws; chi-square with 255 degrees of
# freedom between its 0.1 % and 99.9 % points (191 .. 330, Wilson-Hilferty);
# the mean within about 6 standard errors; serial correlation within 5 (its
# standard error is 1/sqrt(10^6) = 0.001).
ent_check() { # bound description awk-condition
    i=$((i + 1))
    "$riffle" rng --seed=$SEED --below="$1" --format=u8 --bytes=1000000 | ent -t > "$tmp/ent"
    line=$(sed -n 2p "$tmp/ent")
    if echo "$line" | awk -F, "{ exit !($3) }"; then
        echo "ok $i - ent on --below=$1: $2 ($line)"
    else
        echo "not ok $i - ent on --below=$1: $2"
        sed 's/^/# /' "$tmp/ent"
    fi
}
ent_check 256 "entropy >= 7.9998 bits, chi-square in 191..330, mean 127.5 +- 0.5, |serial| < 0.005" \
    '$2 == 1000000 && $3 >= 7.9998 && $4 >= 191 && $4 <= 330 && $5 > 127 && $5 < 128 && $7 > -0.005 && $7 < 0.005'
# 52 values: entropy close to log2(52) = 5.7004, mean (52 - 1) / 2 = 25.5
# (standard deviation of a draw 15.0, of the mean 0.015).
ent_check 52 "entropy >= 5.7000 bits (log2 52 = 5.7004), mean 25.5 +- 0.1, |serial| < 0.005" \
    '$2 == 1000000 && $3 >= 5.7000 && $5 > 25.4 && $5 < 25.6 && $7 > -0.005 && $7 < 0.005'

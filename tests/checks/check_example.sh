#!/bin/sh
# examples/shuffle_file (the engine through the installed headers only)
# writes exactly the bytes of `riffle --seed=S --memory=M INPUT -o OUTPUT`:
# integer and string seeds, a budget below the input's size (the external
# engine) and above it (in memory); a missing input fails with a message and
# leaves no output.  Usage: check_example.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
riffle=$build/riffle
example=$build/examples/shuffle_file
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# About 300 KB: lines of 0 to ~300 bytes, some empty, some with tabs and
# spaces, and a last line without its newline.
awk 'BEGIN {
    srand(2026)
    for (i = 0; i < 4000; i++) {
        r = rand()
        n = r < 0.05 ? 0 : int(rand() * rand() * 300)
        s = ""
        for (j = 0; j < n; j++)
            s = s sprintf("%c", 32 + int(rand() * 95))
        if (i % 97 == 0)
            s = s "\t" i
        print s
    }
    printf "the last line, unterminated"
}' > "$tmp/in"
size=$(wc -c < "$tmp/in")

seeds="1 42 007 18446744073709551615 18446744073709551616 x7 -1 hello"
budgets="65536 67108864"
n=0
for s in $seeds; do for m in $budgets; do n=$((n + 1)); done; done
echo "1..$((n + 4))"

i=0
for s in $seeds; do
    for m in $budgets; do
        i=$((i + 1))
        kind=external
        [ "$m" -gt "$size" ] && kind="in memory"
        rm -f "$tmp/want" "$tmp/got"
        "$riffle" --seed="$s" --memory="$m" "$tmp/in" -o "$tmp/want" 2> "$tmp/err1"
        r1=$?
        "$example" "$s" "$tmp/in" "$tmp/got" "$m" 2> "$tmp/err2"
        r2=$?
        if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"; then
            echo "ok $i - shuffle_file equals riffle --seed=$s --memory=$m ($kind)"
        else
            echo "not ok $i - shuffle_file and riffle --seed=$s --memory=$m ($kind): exit $r2 and $r1, or different bytes; $(cat "$tmp/err2" "$tmp/err1")"
        fi
    done
done

# The comparisons above are not between two trivial outputs: the output is
# a permutation of the lines (the last one given its newline), and seeds
# give different orders.
i=$((i + 1))
"$example" 1 "$tmp/in" "$tmp/a" 65536 && "$example" 2 "$tmp/in" "$tmp/b" 65536
{ cat "$tmp/in"; echo; } | LC_ALL=C sort > "$tmp/sorted_in"
LC_ALL=C sort "$tmp/a" > "$tmp/sorted_a"
if cmp -s "$tmp/sorted_in" "$tmp/sorted_a" && ! cmp -s "$tmp/in" "$tmp/a" && ! cmp -s "$tmp/a" "$tmp/b"; then
    echo "ok $i - shuffle_file output is a permutation of the lines, and seeds differ"
else
    echo "not ok $i - shuffle_file output is not a permutation of the lines, or seeds agree"
fi

# Standard input as INPUT.
i=$((i + 1))
"$example" 9 - "$tmp/got" 65536 < "$tmp/in"
"$riffle" --seed=9 --memory=65536 "$tmp/in" -o "$tmp/want"
if cmp -s "$tmp/want" "$tmp/got"; then
    echo "ok $i - shuffle_file reads - as the standard input"
else
    echo "not ok $i - shuffle_file with - as input differs from riffle"
fi

# A missing input: exit 1, a message naming it, no OUTPUT, no temporary file.
i=$((i + 1))
mkdir "$tmp/out"
"$example" 1 "$tmp/missing" "$tmp/out/result" 65536 2> "$tmp/err"
r=$?
if [ $r -eq 1 ] && grep -q "^shuffle_file: $tmp/missing: No such file or directory\$" "$tmp/err" &&
    [ ! -e "$tmp/out/result" ] && [ -z "$(ls -A "$tmp/out")" ]; then
    echo "ok $i - a missing input: exit 1, a message, no output left"
else
    echo "not ok $i - a missing input: status $r, message '$(cat "$tmp/err")', left: $(ls -A "$tmp/out")"
fi

# A failed run leaves an existing OUTPUT as it was.
i=$((i + 1))
echo "old contents" > "$tmp/out/result"
"$example" 1 "$tmp/missing" "$tmp/out/result" 67108864 2> /dev/null
r=$?
if [ $r -eq 1 ] && [ "$(cat "$tmp/out/result")" = "old contents" ] && [ "$(ls -A "$tmp/out")" = result ]; then
    echo "ok $i - a failed run leaves the existing output untouched"
else
    echo "not ok $i - a failed run changed the existing output (status $r)"
fi
